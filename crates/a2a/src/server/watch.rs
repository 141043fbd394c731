//! What a connection is doing, and the one timer that closes it when that takes too
//! long: shared by the HTTP/1.1 accept loop (`listen.rs`) and the gRPC one
//! (`grpc/listen.rs`).
//!
//! A connection is in one phase at a time: a head arriving (a fresh connection's first
//! one counts from the accept), idle between requests, or busy with requests whose
//! responses are not finished. The deadline of the current phase comes from
//! [`ConnLimits`]; a busy connection has none.
//!
//! The two protocols differ in what a byte means. On HTTP/1.1 a byte on an idle
//! connection begins the next request's head. On HTTP/2 bytes flow between requests
//! too (pings, window updates, settings), so a byte only ends the first phase (a
//! connection that never sent one); after that the connection is idle until a request
//! arrives, whatever frames it sends meanwhile.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use axum::body::Bytes;
use http_body::{Frame, SizeHint};
use tokio::time::Instant;

use super::listen::ConnLimits;

/// The protocol a connection speaks, which decides what its bytes mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    Http1,
    // Only the gRPC listener reads HTTP/2.
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    Http2,
}

/// Where a connection is between requests.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Phase {
    /// No request in progress since this instant.
    Idle(Instant),
    /// A request's head has been arriving since this instant (on HTTP/2: the connection
    /// was accepted then and has not sent a byte yet).
    Head(Instant),
    /// This many requests handed to the service whose responses are not finished.
    Busy(usize),
}

/// A connection's phase, shared by its socket, its service and its watchdog.
///
/// On HTTP/1.1 nothing is signalled when the phase changes: every change happens while
/// the connection's own task polls hyper (bytes read, a request routed, a response
/// finished), and the watchdog reads the phase after each such poll. On HTTP/2 a
/// response finishes in a task of its own, so its end wakes the connection's reader,
/// whose poll re-arms the timer for the idle phase.
pub(crate) struct Watch {
    phase: Mutex<Phase>,
    protocol: Protocol,
    /// The task reading the socket (HTTP/2 only).
    reader: Mutex<Option<Waker>>,
    /// Request bodies handed to the service that have not all arrived yet.
    bodies_arriving: AtomicUsize,
}

impl Watch {
    /// The watch of a connection accepted now: its first head is due from this instant
    /// (a fresh connection is not given the idle timeout).
    pub(crate) fn new(protocol: Protocol) -> Arc<Self> {
        Arc::new(Watch {
            phase: Mutex::new(Phase::Head(Instant::now())),
            protocol,
            reader: Mutex::new(None),
            bodies_arriving: AtomicUsize::new(0),
        })
    }

    fn update(&self, f: impl FnOnce(Phase) -> Phase) {
        let mut phase = self.phase.lock().unwrap_or_else(|p| p.into_inner());
        *phase = f(*phase);
    }

    pub(crate) fn phase(&self) -> Phase {
        *self.phase.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn is_busy(&self) -> bool {
        matches!(self.phase(), Phase::Busy(_))
    }

    /// Bytes arrived: on HTTP/1.1 a request's head starts, unless one is in progress; on
    /// HTTP/2 the connection has spoken, and is idle until its first request.
    pub(crate) fn read_some(&self) {
        let mut phase = self.phase.lock().unwrap_or_else(|p| p.into_inner());
        match (self.protocol, *phase) {
            (Protocol::Http1, Phase::Idle(_)) => *phase = Phase::Head(Instant::now()),
            (Protocol::Http2, Phase::Head(_)) => *phase = Phase::Idle(Instant::now()),
            _ => {}
        }
    }

    /// Remembers the task that reads the socket, to wake when a response ends (HTTP/2).
    // Only the gRPC listener reads HTTP/2.
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) fn park_reader(&self, cx: &Context<'_>) {
        if self.protocol == Protocol::Http2 {
            let mut reader = self.reader.lock().unwrap_or_else(|p| p.into_inner());
            match &mut *reader {
                Some(waker) => waker.clone_from(cx.waker()),
                None => *reader = Some(cx.waker().clone()),
            }
        }
    }

    /// Whether a request's body is still arriving: the client has not finished sending
    /// it, and a shutdown need not wait for it.
    pub(crate) fn body_arriving(&self) -> bool {
        self.bodies_arriving.load(Ordering::Relaxed) > 0
    }

    /// `body`, counted as arriving until its end is read or it is dropped.
    pub(crate) fn arriving<B: http_body::Body>(self: &Arc<Self>, body: B) -> Arriving<B> {
        let open = (!body.is_end_stream()).then(|| {
            self.bodies_arriving.fetch_add(1, Ordering::Relaxed);
            BodyOpen(Arc::clone(self))
        });
        Arriving { inner: body, open }
    }

    /// A request reached the service; the returned guard ends it when dropped.
    pub(crate) fn begin(self: &Arc<Self>) -> InFlight {
        self.update(|p| match p {
            Phase::Busy(n) => Phase::Busy(n + 1),
            _ => Phase::Busy(1),
        });
        InFlight(Arc::clone(self))
    }

    /// When the current phase runs out (`None`: it does not).
    pub(crate) fn deadline(&self, limits: &ConnLimits) -> Option<Instant> {
        match self.phase() {
            Phase::Idle(since) => Some(since + limits.idle_timeout),
            Phase::Head(since) => Some(since + limits.header_timeout),
            Phase::Busy(_) => None,
        }
    }
}

/// One request in progress, until its response body is finished or dropped.
pub(crate) struct InFlight(Arc<Watch>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.update(|p| match p {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Idle(Instant::now()),
        });
        if self.0.protocol == Protocol::Http2 && !self.0.is_busy() {
            if let Some(reader) = self.0.reader.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                reader.wake_by_ref();
            }
        }
    }
}

/// A response body that ends its request's [`InFlight`] when it is finished or dropped.
pub(crate) struct Tracked<B> {
    pub(crate) inner: B,
    pub(crate) in_flight: Option<InFlight>,
}

impl<B: http_body::Body<Data = Bytes> + Unpin> http_body::Body for Tracked<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.in_flight = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A request body still arriving, until its end or its drop.
struct BodyOpen(Arc<Watch>);

impl Drop for BodyOpen {
    fn drop(&mut self) {
        self.0.bodies_arriving.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A request body that tells its connection's watch when it has all arrived.
pub(crate) struct Arriving<B> {
    inner: B,
    open: Option<BodyOpen>,
}

impl<B: http_body::Body + Unpin> http_body::Body for Arriving<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) || self.inner.is_end_stream() {
            self.open = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The timer that closes a connection whose phase ran out.
pub(crate) struct Watchdog {
    pub(crate) watch: Arc<Watch>,
    limits: ConnLimits,
    sleep: Pin<Box<tokio::time::Sleep>>,
    /// When the timer fires, if it is set.
    armed: Option<Instant>,
}

impl Watchdog {
    pub(crate) fn new(watch: Arc<Watch>, limits: ConnLimits) -> Self {
        let sleep = Box::pin(tokio::time::sleep_until(Instant::now()));
        Watchdog { watch, limits, sleep, armed: None }
    }

    /// Whether the current phase ran out; otherwise the timer is set for when it will
    /// (or for an earlier instant, when it fires once more for nothing and is set again).
    /// Moving the timer later at every request would cost a timer-wheel update each time.
    pub(crate) fn ran_out(&mut self, cx: &mut Context<'_>) -> bool {
        self.ran_out_by(None, cx)
    }

    /// [`Watchdog::ran_out`], with the phase's deadline brought forward to `cap` if that
    /// is earlier (a shutdown's), busy phases included.
    pub(crate) fn ran_out_by(&mut self, cap: Option<Instant>, cx: &mut Context<'_>) -> bool {
        loop {
            let deadline = match (self.watch.deadline(&self.limits), cap) {
                (Some(d), Some(c)) => Some(d.min(c)),
                (d, c) => d.or(c),
            };
            let Some(deadline) = deadline else { return false };
            if deadline <= Instant::now() {
                return true;
            }
            if self.armed.is_none_or(|armed| deadline < armed) {
                self.sleep.as_mut().reset(deadline);
                self.armed = Some(deadline);
            }
            match self.sleep.as_mut().poll(cx) {
                Poll::Pending => return false,
                // Fired for an earlier deadline: set it again for the current one.
                Poll::Ready(()) => self.armed = None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn limits() -> ConnLimits {
        ConnLimits {
            header_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(10),
            max_connections: 1,
            shutdown_timeout: Duration::from_secs(1),
        }
    }

    async fn ran_out(dog: &mut Watchdog) -> bool {
        std::future::poll_fn(|cx| Poll::Ready(dog.ran_out(cx))).await
    }

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_fires_when_the_current_phase_runs_out_and_never_while_busy() {
        // A fresh connection has the header timeout, not the idle one.
        let watch = Watch::new(Protocol::Http1);
        let mut dog = Watchdog::new(Arc::clone(&watch), limits());
        assert!(!ran_out(&mut dog).await);
        watch.read_some(); // its first bytes do not restart the clock
        tokio::time::advance(Duration::from_millis(1_001)).await;
        assert!(ran_out(&mut dog).await, "a first head not in within 1 s of the accept");

        let watch = Watch::new(Protocol::Http1);
        let mut dog = Watchdog::new(Arc::clone(&watch), limits());
        assert!(!ran_out(&mut dog).await);
        let request = watch.begin();
        tokio::time::advance(Duration::from_secs(100)).await;
        assert!(!ran_out(&mut dog).await, "a request in progress has no deadline");
        // The timer set for the first head fired meanwhile; the idle phase counts from
        // the end of the request.
        drop(request);
        tokio::time::advance(Duration::from_secs(9)).await;
        assert!(!ran_out(&mut dog).await, "idle for 9 s of 10");
        // The next head starts: its deadline is earlier than the idle one, and it is the
        // one that counts.
        watch.read_some();
        assert!(!ran_out(&mut dog).await);
        tokio::time::advance(Duration::from_millis(1_001)).await;
        assert!(ran_out(&mut dog).await, "a head that took more than 1 s");

        let watch = Watch::new(Protocol::Http1);
        let mut dog = Watchdog::new(Arc::clone(&watch), limits());
        drop(watch.begin());
        tokio::time::advance(Duration::from_millis(9_999)).await;
        assert!(!ran_out(&mut dog).await);
        tokio::time::advance(Duration::from_millis(2)).await;
        assert!(ran_out(&mut dog).await, "idle for more than 10 s between requests");
    }

    #[tokio::test(start_paused = true)]
    async fn on_http2_a_first_byte_ends_the_header_clock_and_later_bytes_keep_it_idle() {
        let watch = Watch::new(Protocol::Http2);
        let mut dog = Watchdog::new(Arc::clone(&watch), limits());
        tokio::time::advance(Duration::from_millis(1_001)).await;
        assert!(ran_out(&mut dog).await, "never a byte");

        let watch = Watch::new(Protocol::Http2);
        let mut dog = Watchdog::new(Arc::clone(&watch), limits());
        watch.read_some(); // the preface
        tokio::time::advance(Duration::from_secs(5)).await;
        watch.read_some(); // a ping's answer: still idle since the preface
        assert!(!ran_out(&mut dog).await);
        tokio::time::advance(Duration::from_millis(5_001)).await;
        assert!(ran_out(&mut dog).await, "no request for the idle timeout");

        // A shutdown's deadline applies to a busy connection too.
        let watch = Watch::new(Protocol::Http2);
        let mut dog = Watchdog::new(Arc::clone(&watch), limits());
        let _request = watch.begin();
        let cap = Instant::now() + Duration::from_secs(2);
        assert!(!std::future::poll_fn(|cx| Poll::Ready(dog.ran_out_by(Some(cap), cx))).await);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(std::future::poll_fn(|cx| Poll::Ready(dog.ran_out_by(Some(cap), cx))).await);
    }
}
