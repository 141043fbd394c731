//! The gRPC listener of [`A2aServer::serve`](crate::server::A2aServer::serve): tonic's
//! HTTP/2 server over connections this accept loop admits and watches, with the limits
//! the HTTP/1.1 listener has (`server/listen.rs`).
//!
//! - **Connections.** At most `max_connections` at once; one more is closed at once
//!   (HTTP/2 has no answer to give before its preface, and a client takes a closed
//!   connection as a refusal).
//! - **First byte.** A connection that sends nothing within the header timeout of its
//!   accept is closed. Its preface ends that clock: a gRPC client may open its
//!   connection well before its first call.
//! - **Idle.** A connection with no call in progress is closed after the idle timeout,
//!   whatever frames (pings, settings) it sends meanwhile.
//! - **Shutdown.** tonic stops accepting and sends `GOAWAY`; a connection with no call
//!   in progress, or one whose request is still arriving, is closed at once, the others
//!   when their calls end or at the shutdown timeout, whichever comes first.
//!
//! The phase of a connection (`server/watch.rs`) is kept by its socket, which sees the
//! bytes, and by the service ([`crate::grpc::GrpcService`]), which sees calls begin and
//! end: it finds the connection's watch among the request's extensions, where tonic
//! puts what [`Connected::connect_info`] gives. A read of the socket is where the
//! watchdog is checked: the HTTP/2 connection always has one pending.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tonic::transport::server::Connected;

use super::server::GrpcService;
use crate::executor::AgentExecutor;
use crate::server::listen::{accept, Admit, ConnLimits, Gate};
use crate::server::watch::{Protocol, Watch, Watchdog};

/// What the service learns of the connection a call came on (a request extension).
#[derive(Clone)]
pub(crate) struct GrpcConn {
    pub(crate) watch: Arc<Watch>,
    /// Closes the connection: for the stream budget, which frees the frames h2 holds for
    /// a subscriber cut off while its client does not read (see `grpc/server.rs`).
    pub(crate) close: CancellationToken,
}

/// Serves `service` on `listener` (HTTP/2 without TLS) within `limits` until `shutdown`
/// fires; calls in progress then finish (their streams end with the core's shutdown),
/// within the shutdown timeout.
pub(crate) async fn serve<E: AgentExecutor>(
    listener: TcpListener,
    service: GrpcService<E>,
    limits: ConnLimits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let gate = Gate::new(limits.max_connections);
    let stop = shutdown.clone();
    let incoming = futures::stream::unfold((listener, gate), move |(listener, gate)| {
        let stop = stop.clone();
        async move {
            loop {
                let (stream, _peer) = accept(&listener).await;
                match gate.admit() {
                    Admit::Serve(slot) => {
                        let io = GrpcIo::new(stream, limits, stop, slot);
                        return Some((Ok::<_, std::io::Error>(io), (listener, gate)));
                    }
                    Admit::Refuse(_) | Admit::Close => drop(stream),
                }
            }
        }
    });
    // A stream may send a whole message of the largest size accepted (plus gRPC's 5-byte
    // prefix) without waiting for window updates, which would otherwise cost a round trip
    // per window's worth (1 MiB by default) of a large message; two such streams fit in
    // the connection's window.
    let window = u32::try_from(service.max_message_bytes().saturating_add(5)).unwrap_or(i32::MAX as u32);
    let window = window.clamp(1 << 20, i32::MAX as u32);
    tonic::transport::Server::builder()
        .initial_stream_window_size(Some(window))
        .initial_connection_window_size(Some(window.saturating_mul(2).min(i32::MAX as u32)))
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, shutdown.cancelled_owned())
        .await
        .map_err(std::io::Error::other)
}

/// An admitted connection: the socket under its watchdog, holding its slot.
struct GrpcIo {
    stream: TcpStream,
    conn: GrpcConn,
    dog: Watchdog,
    limits: ConnLimits,
    shutdown: Pin<Box<WaitForCancellationFutureOwned>>,
    /// Fires when a subscriber of this connection was cut off holding frames.
    closed: Pin<Box<WaitForCancellationFutureOwned>>,
    /// When the connection must be closed, once the shutdown has begun.
    close_by: Option<Instant>,
    _slot: OwnedSemaphorePermit,
}

impl GrpcIo {
    fn new(stream: TcpStream, limits: ConnLimits, shutdown: CancellationToken, slot: OwnedSemaphorePermit) -> Self {
        let watch = Watch::new(Protocol::Http2);
        let close = CancellationToken::new();
        GrpcIo {
            stream,
            closed: Box::pin(close.clone().cancelled_owned()),
            conn: GrpcConn { watch: Arc::clone(&watch), close },
            dog: Watchdog::new(watch, limits),
            limits,
            shutdown: Box::pin(shutdown.cancelled_owned()),
            close_by: None,
            _slot: slot,
        }
    }

    /// Whether the connection must close now: its phase ran out, the shutdown's
    /// deadline for it has come, or the stream budget closed it. Otherwise the timer is
    /// set for the next deadline.
    fn ran_out(&mut self, cx: &mut Context<'_>) -> bool {
        self.conn.watch.park_reader(cx);
        if self.closed.as_mut().poll(cx).is_ready() {
            return true;
        }
        if self.close_by.is_none() && self.shutdown.as_mut().poll(cx).is_ready() {
            let watch = &self.conn.watch;
            let now = Instant::now();
            // Calls under way get the shutdown timeout; nothing else is waited for.
            let busy = watch.is_busy() && !watch.body_arriving();
            self.close_by = Some(if busy { now + self.limits.shutdown_timeout } else { now });
        }
        self.dog.ran_out_by(self.close_by, cx)
    }
}

impl Connected for GrpcIo {
    type ConnectInfo = GrpcConn;

    fn connect_info(&self) -> GrpcConn {
        self.conn.clone()
    }
}

impl AsyncRead for GrpcIo {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        if self.ran_out(cx) {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the connection's time without a call ran out",
            )));
        }
        let before = buf.filled().len();
        let result = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.watch.read_some();
        }
        result
    }
}

impl AsyncWrite for GrpcIo {
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
