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
//!   request in progress (idle, or in the middle of a head) or whose request's body is
//!   still arriving are closed at once, the others finish their response and close;
//!   whatever is still open after [`ConnLimits::shutdown_timeout`] is closed.
//!
//! Each connection has one watchdog: a timer for the deadline of the connection's current
//! phase, checked again after every poll of the connection, which is where the phase
//! changes (a first byte read, a request handed to the router, a response body finished).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::watch::{Phase, Protocol, Tracked, Watch, Watchdog};

/// The connection limits of [`serve`] (from `HttpOptions`), the same on every listener.
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

/// How many connections over the limit one listener answers at once (each holds its
/// descriptor for up to a second while it is answered); past that, one is closed
/// without an answer, so that a flood cannot turn refusals into descriptor exhaustion.
pub(crate) const REFUSING: usize = 64;

/// Which connections a listener serves: at most `max_connections`, and at most
/// [`REFUSING`] being refused.
pub(crate) struct Gate {
    slots: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
}

/// What to do with a connection just accepted.
pub(crate) enum Admit {
    /// Serve it, holding this slot until it closes.
    Serve(OwnedSemaphorePermit),
    /// Over the limit: answer that (holding this permit meanwhile) and close it.
    Refuse(OwnedSemaphorePermit),
    /// Over the limit, and too many refusals under way: close it now.
    Close,
}

impl Gate {
    pub(crate) fn new(max_connections: usize) -> Self {
        Gate { slots: Arc::new(Semaphore::new(max_connections.max(1))), refusing: Arc::new(Semaphore::new(REFUSING)) }
    }

    pub(crate) fn admit(&self) -> Admit {
        if let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() {
            return Admit::Serve(slot);
        }
        match Arc::clone(&self.refusing).try_acquire_owned() {
            Ok(permit) => Admit::Refuse(permit),
            Err(_) => Admit::Close,
        }
    }
}

/// The next connection `listener` accepts, with `TCP_NODELAY` set. Failures to accept
/// are waited out: out of file descriptors and the like outlast a retry made at once,
/// so those get a moment rather than a spin; a connection that failed before it was
/// accepted is nothing to do.
pub(crate) async fn accept(listener: &TcpListener) -> (TcpStream, std::net::SocketAddr) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let _ = stream.set_nodelay(true);
                return (stream, peer);
            }
            Err(e) if is_resource_error(&e) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(_) => {}
        }
    }
}

/// Serves `router` on `listener` until `shutdown` fires, then closes every connection
/// within the shutdown timeout.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let gate = Gate::new(limits.max_connections);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            (stream, peer) = accept(&listener) => match gate.admit() {
                Admit::Serve(slot) => {
                    connections.spawn(connection(stream, peer, router.clone(), limits, shutdown.clone(), slot));
                }
                Admit::Refuse(permit) => {
                    connections.spawn(refuse(stream, permit));
                }
                Admit::Close => drop(stream),
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
async fn refuse(mut stream: TcpStream, _permit: OwnedSemaphorePermit) {
    let work = async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<_, std::io::Error>(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), work).await;
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

/// Closes the connection a request came on (in its extensions): for the stream budget,
/// which frees the frames of a subscriber cut off while its client does not read.
#[derive(Debug, Clone)]
pub(crate) struct ConnectionCloser(pub(crate) CancellationToken);

/// Serves one connection under its watchdog.
async fn connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    router: Router,
    limits: ConnLimits,
    shutdown: CancellationToken,
    _slot: OwnedSemaphorePermit,
) {
    let watch = Watch::new(Protocol::Http1);
    let io = TokioIo::new(Watched { stream, watch: Arc::clone(&watch) });
    let service_watch = Arc::clone(&watch);
    let close = CancellationToken::new();
    let closer = ConnectionCloser(close.clone());
    let service = hyper::service::service_fn(move |mut req: http::Request<Incoming>| {
        // The client's address, where axum handlers and the rate limit look for it.
        req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
        req.extensions_mut().insert(closer.clone());
        let req = req.map(|body| service_watch.arriving(body));
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
    let closed = close.cancelled();
    tokio::pin!(closed);
    let mut dog = Watchdog::new(watch, limits);
    let mut closing = false;
    std::future::poll_fn(|cx| loop {
        if closing && !dog.watch.is_busy() {
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
        // A subscriber of this connection was cut off holding frames (the stream budget).
        if closed.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        if !closing && cancelled.as_mut().poll(cx).is_ready() {
            closing = true;
            match dog.watch.phase() {
                // Half a body: the client is still sending a request that cannot be
                // served now (its handler is waiting for the rest); close now.
                Phase::Busy(_) if dog.watch.body_arriving() => return Poll::Ready(()),
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
