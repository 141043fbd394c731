//! The accept loop of [`RemoteServer::serve`]: HTTP/1.1 with upgrades, at most
//! [`ServerLimits::max_sockets`](super::ServerLimits::max_sockets) TCP connections
//! (one more is closed at once), a request head due within
//! [`header_timeout`](super::ServerLimits::header_timeout).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::server::{AcpBody, AcpService, RemoteServer};

/// How long connections get to finish after a shutdown (then they are dropped).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

impl RemoteServer {
    /// Serves on `listener` until `shutdown` fires; then every ACP connection is
    /// ended and the sockets closed (within a few seconds).
    pub async fn serve(&self, listener: TcpListener, shutdown: CancellationToken) -> std::io::Result<()> {
        self.serve_with(listener, tower_layer::Identity::new(), shutdown).await
    }

    /// [`serve`](Self::serve) with `layer` around the service: the point for
    /// authentication ([`BearerAuth`](super::BearerAuth)), CORS (off unless a layer
    /// adds it), logging.
    pub async fn serve_with<L>(
        &self,
        listener: TcpListener,
        layer: L,
        shutdown: CancellationToken,
    ) -> std::io::Result<()>
    where
        L: tower_layer::Layer<AcpService>,
        L::Service: tower_service::Service<Request<Incoming>, Response = Response<AcpBody>, Error = Infallible>
            + Clone
            + Send
            + 'static,
        <L::Service as tower_service::Service<Request<Incoming>>>::Future: Send + 'static,
    {
        let service = layer.layer(self.service());
        let sockets = Arc::new(Semaphore::new(self.limits().max_sockets.max(1)));
        let header_timeout = self.limits().header_timeout;
        let mut connections = JoinSet::new();
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => break,
                accepted = listener.accept() => accepted,
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            };
            let (stream, _) = match accepted {
                Ok(accepted) => accepted,
                // Out of descriptors and the like: give it a moment rather than a spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(slot) = sockets.clone().try_acquire_owned() else {
                drop(stream);
                continue;
            };
            let _ = stream.set_nodelay(true);
            let service = TowerToHyperService::new(service.clone());
            let stop = shutdown.clone();
            connections.spawn(async move {
                let _slot = slot;
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades();
                tokio::pin!(connection);
                tokio::select! {
                    _ = &mut connection => {}
                    () = stop.cancelled() => {
                        connection.as_mut().graceful_shutdown();
                        let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
                    }
                }
            });
        }
        drop(listener);
        self.close_all();
        let drained = async { while connections.join_next().await.is_some() {} };
        if tokio::time::timeout(SHUTDOWN_GRACE, drained).await.is_err() {
            connections.abort_all();
            while connections.join_next().await.is_some() {}
        }
        Ok(())
    }
}
