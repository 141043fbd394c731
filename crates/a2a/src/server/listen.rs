//! The accept loop behind [`A2aServer::serve`](super::A2aServer::serve): HTTP/1.1
//! connections with the limits a server on an open network needs.
//!
//! - **Connections.** At most [`ConnLimits::max_connections`] are served at once; one
//!   more is answered `503 Service Unavailable` (`Retry-After: 1`) and closed, so that a
//!   flood of idle sockets cannot hold every client out without an answer.
//! - **Header.** A fresh connection must send its first request's head (request line
//!   and headers) within [`ConnLimits::header_timeout`] of being accepted, so that one
//!   that never sends a byte holds its slot no longer than that. On a kept-alive
//!   connection the clock starts again at the next request's first byte; either way the
//!   head must be complete in time, however slowly its bytes keep coming, or the
//!   connection is closed.
//! - **Idle.** A kept-alive connection with no request in progress (between requests)
//!   is closed after [`ConnLimits::idle_timeout`] without a byte.
//!
//! hyper's own `header_read_timeout` is not used (the builder is given no timer): it
//! knows nothing of the idle phase between requests, and one watchdog per connection
//! (below) serves all the clocks.
//! - **Body.** The body is read by the handler, which bounds it (`HttpOptions::body_timeout`,
//!   answered 408); a request whose body is not read goes back to the header clock
//!   while hyper drains it.
//! - **In progress.** While a request is being handled and its response sent (an SSE
//!   stream included), none of the clocks above runs.
//! - **Shutdown.** When the token fires, the listener closes, connections without a
//!   request in progress (idle, or in the middle of a head) are closed at once, the
//!   others finish their response and close; whatever is still open after
//!   [`ConnLimits::shutdown_timeout`] is closed.
//!
//! Each connection has one watchdog: a timer for the deadline of the connection's current
//! phase, checked again after every poll of the connection, which is where the phase
//! changes (a first byte read, a request handed to the router, a response body finished).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::Router;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The connection limits of [`serve`] (from `HttpOptions`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnLimits {
    pub(crate) header_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) shutdown_timeout: Duration,
}

impl From<&super::HttpOptions> for ConnLimits {
    fn from(o: &super::HttpOptions) -> Self {
        ConnLimits {
            header_timeout: o.header_timeout,
            idle_timeout: o.idle_timeout,
            max_connections: o.max_connections.max(1),
            shutdown_timeout: o.shutdown_timeout,
        }
    }
}

/// The answer to a connection over the limit.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 41\r\n\
retry-after: 1\r\nconnection: close\r\n\r\ntoo many connections; retry in a moment\r\n";

/// Serves `router` on `listener` until `shutdown` fires, then closes every connection
/// within the shutdown timeout.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    match slots.clone().try_acquire_owned() {
                        Ok(slot) => {
                            let conn = connection(stream, peer, router.clone(), limits, shutdown.clone(), slot);
                            connections.spawn(conn);
                        }
                        Err(_) => {
                            connections.spawn(refuse(stream));
                        }
                    }
                }
                // Out of file descriptors and the like: the condition outlasts a retry
                // made at once, so give it a moment rather than spin.
                Err(e) if is_resource_error(&e) => tokio::time::sleep(Duration::from_millis(50)).await,
                // A connection that failed before it was accepted: nothing to do.
                Err(_) => {}
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    // Connections see the token themselves; wait for them, up to the deadline.
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.shutdown_timeout, drained).await.is_err() {
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
    Ok(())
}

fn is_resource_error(e: &std::io::Error) -> bool {
    // EMFILE, ENFILE, ENOBUFS, ENOMEM
    matches!(e.raw_os_error(), Some(23 | 24 | 105 | 12))
}

/// Answers a connection over the limit with 503 and closes it, reading what the
/// client sent meanwhile (briefly) so that the close does not reset the answer away.
async fn refuse(mut stream: TcpStream) {
    let work = async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), work).await;
}

/// Where a connection is between requests.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// No request in progress since this instant.
    Idle(Instant),
    /// A request's head has been arriving since this instant.
    Head(Instant),
    /// This many requests handed to the router whose responses are not finished.
    Busy(usize),
}

/// A connection's phase, shared by its socket, its service and its watchdog.
///
/// Nothing is signalled when the phase changes: every change happens while the
/// connection's own task polls hyper (bytes read, a request routed, a response finished),
/// and the watchdog reads the phase after each such poll. A wake-up per change would only
/// make the task poll itself again.
struct Watch {
    phase: Mutex<Phase>,
}

impl Watch {
    /// The watch of a connection accepted now: its first head is due from this instant
    /// (a fresh connection is not given the idle timeout).
    fn new() -> Arc<Self> {
        Arc::new(Watch { phase: Mutex::new(Phase::Head(Instant::now())) })
    }

    fn update(&self, f: impl FnOnce(Phase) -> Phase) {
        let mut phase = self.phase.lock().unwrap_or_else(|p| p.into_inner());
        *phase = f(*phase);
    }

    fn phase(&self) -> Phase {
        *self.phase.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes arrived: a request's head starts, unless one is in progress.
    fn read_some(&self) {
        let mut phase = self.phase.lock().unwrap_or_else(|p| p.into_inner());
        if let Phase::Idle(_) = *phase {
            *phase = Phase::Head(Instant::now());
        }
    }

    /// A request reached the router; the returned guard ends it when dropped.
    fn begin(self: &Arc<Self>) -> InFlight {
        self.update(|p| match p {
            Phase::Busy(n) => Phase::Busy(n + 1),
            _ => Phase::Busy(1),
        });
        InFlight(Arc::clone(self))
    }

    /// When the current phase runs out (`None`: it does not).
    fn deadline(&self, limits: &ConnLimits) -> Option<Instant> {
        match self.phase() {
            Phase::Idle(since) => Some(since + limits.idle_timeout),
            Phase::Head(since) => Some(since + limits.header_timeout),
            Phase::Busy(_) => None,
        }
    }
}

/// One request in progress, until its response body is finished or dropped.
struct InFlight(Arc<Watch>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.update(|p| match p {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Idle(Instant::now()),
        });
    }
}

/// The socket, telling the watch when bytes arrive.
struct Watched {
    stream: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.watch.read_some();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// A response body that ends its request's [`InFlight`] when it is finished or dropped.
struct Tracked {
    inner: Body,
    in_flight: Option<InFlight>,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
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

/// Serves one connection under its watchdog.
async fn connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    router: Router,
    limits: ConnLimits,
    shutdown: CancellationToken,
    _slot: OwnedSemaphorePermit,
) {
    let watch = Watch::new();
    let io = TokioIo::new(Watched { stream, watch: Arc::clone(&watch) });
    let service_watch = Arc::clone(&watch);
    let service = hyper::service::service_fn(move |mut req: http::Request<Incoming>| {
        // The client's address, where axum handlers and the rate limit look for it.
        req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
        let in_flight = service_watch.begin();
        let router = TowerToHyperService::new(router.clone());
        async move {
            let response = hyper::service::Service::call(&router, req).await?;
            Ok::<_, std::convert::Infallible>(response.map(|inner| Tracked { inner, in_flight: Some(in_flight) }))
        }
    });
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
    tokio::pin!(conn);
    let cancelled = shutdown.cancelled();
    tokio::pin!(cancelled);
    let mut dog = Watchdog::new(watch, limits);
    let mut closing = false;
    std::future::poll_fn(|cx| loop {
        if closing && !matches!(dog.watch.phase(), Phase::Busy(_)) {
            return Poll::Ready(()); // shutting down, and the response in progress is done
        }
        if conn.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        // Closed (dropped) if its phase ran out: an idle connection or a head that took
        // too long.
        if dog.ran_out(cx) {
            return Poll::Ready(());
        }
        if !closing && cancelled.as_mut().poll(cx).is_ready() {
            closing = true;
            match dog.watch.phase() {
                // A response under way finishes; then hyper closes.
                Phase::Busy(_) => {
                    conn.as_mut().graceful_shutdown();
                    continue;
                }
                // Nothing in progress, or half a head: close now.
                Phase::Idle(_) | Phase::Head(_) => return Poll::Ready(()),
            }
        }
        return Poll::Pending;
    })
    .await
}

/// The timer that closes a connection whose phase ran out.
struct Watchdog {
    watch: Arc<Watch>,
    limits: ConnLimits,
    sleep: Pin<Box<tokio::time::Sleep>>,
    /// When the timer fires, if it is set.
    armed: Option<Instant>,
}

impl Watchdog {
    fn new(watch: Arc<Watch>, limits: ConnLimits) -> Self {
        let sleep = Box::pin(tokio::time::sleep_until(Instant::now()));
        Watchdog { watch, limits, sleep, armed: None }
    }

    /// Whether the current phase ran out; otherwise the timer is set for when it will
    /// (or for an earlier instant, when it fires once more for nothing and is set again).
    /// Moving the timer later at every request would cost a timer-wheel update each time.
    fn ran_out(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            let Some(deadline) = self.watch.deadline(&self.limits) else { return false };
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
        let watch = Watch::new();
        let mut dog = Watchdog::new(Arc::clone(&watch), limits());
        assert!(!ran_out(&mut dog).await);
        watch.read_some(); // its first bytes do not restart the clock
        tokio::time::advance(Duration::from_millis(1_001)).await;
        assert!(ran_out(&mut dog).await, "a first head not in within 1 s of the accept");

        let watch = Watch::new();
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

        let watch = Watch::new();
        let mut dog = Watchdog::new(Arc::clone(&watch), limits());
        drop(watch.begin());
        tokio::time::advance(Duration::from_millis(9_999)).await;
        assert!(!ran_out(&mut dog).await);
        tokio::time::advance(Duration::from_millis(2)).await;
        assert!(ran_out(&mut dog).await, "idle for more than 10 s between requests");
    }
}
