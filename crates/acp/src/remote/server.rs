//! [`RemoteServer`]: an ACP agent served at one endpoint over Streamable HTTP and
//! WebSocket, as the ACP transports RFD describes them.
//!
//! ```text
//! POST   /acp  one client→agent message (application/json). `initialize` without an
//!              Acp-Connection-Id creates a connection and is answered 200 with the
//!              agent's answer and the header; anything else 202, its answer coming on
//!              a stream. A batch (a JSON array) 501; a body over the limit 413.
//! GET    /acp  Accept: text/event-stream: the connection-scoped stream
//!              (Acp-Connection-Id), or a session's (also Acp-Session-Id).
//! GET    /acp  Upgrade: websocket: a new connection, one message per text frame both
//!              ways; binary frames are ignored.
//! DELETE /acp  ends the connection (202).
//! ```
//!
//! A missing `Acp-Connection-Id` is 400, one this server does not hold 404, and so is an
//! `Acp-Session-Id` the connection does not have (another connection's included). A
//! second reader of a stream already open is 409. Every ACP connection gets a fresh
//! agent from the factory ([`Attach`]) and its own connection runtime over the framing
//! of [`framing`](super::framing). The limits are [`ServerLimits`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};

use super::limits::ServerLimits;
use super::routing::{is_batch, scan, CONNECTION_ID_HEADER, SESSION_ID_HEADER};
use super::served::{start, Attach, Served, StreamKey};
use crate::{AcpOptions, ClientConnection, Dispatch, Protocol};

/// The body of every answer of the server.
pub type AcpBody = UnsyncBoxBody<Bytes, Infallible>;

/// A comment line: ignored by readers, it keeps proxies from closing an idle stream.
const KEEPALIVE: &[u8] = b": keepalive\n\n";

/// An ACP agent served over the network (see the [module documentation](super)).
/// Cheap to clone: every clone is the same server.
#[derive(Clone)]
pub struct RemoteServer {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    attach: Attach,
    pub(crate) limits: Arc<ServerLimits>,
    connections: Mutex<HashMap<String, Arc<Served>>>,
    path: String,
    reaper: std::sync::Once,
}

impl std::fmt::Debug for RemoteServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteServer").field("path", &self.inner.path).field("limits", &self.inner.limits).finish()
    }
}

impl RemoteServer {
    /// A server whose ACP connections are each attached by `attach` (any byte-level
    /// agent: one of this SDK, or a process's stdio as `agentproto bridge` does).
    pub fn new(attach: Attach, limits: ServerLimits) -> RemoteServer {
        let inner = Inner {
            attach,
            limits: Arc::new(limits),
            connections: Mutex::new(HashMap::new()),
            path: "/acp".to_owned(),
            reaper: std::sync::Once::new(),
        };
        RemoteServer { inner: Arc::new(inner) }
    }

    /// A server of agents of surface `S`: `factory()` makes the agent of each new ACP
    /// connection, connected with `options`.
    pub fn agent<S, A, F>(factory: F, options: AcpOptions, limits: ServerLimits) -> RemoteServer
    where
        S: Protocol,
        A: Dispatch<S::ClientRequest, S::ClientNotification, ClientConnection<S>>,
        F: Fn() -> A + Send + Sync + 'static,
    {
        let attach: Attach = Arc::new(move |input, output| {
            let (connection, client) = crate::agent::connect::<S, A>(factory(), input, output, options.clone());
            Box::pin(async move {
                let _ = connection.run().await;
                drop(client);
            })
        });
        RemoteServer::new(attach, limits)
    }

    /// Serves at `path` instead of `/acp`.
    pub fn path(self, path: &str) -> RemoteServer {
        let inner = Inner {
            attach: self.inner.attach.clone(),
            limits: self.inner.limits.clone(),
            connections: Mutex::new(HashMap::new()),
            path: path.to_owned(),
            reaper: std::sync::Once::new(),
        };
        RemoteServer { inner: Arc::new(inner) }
    }

    /// The limits.
    pub fn limits(&self) -> &ServerLimits {
        &self.inner.limits
    }

    /// How many ACP connections are open.
    pub fn connection_count(&self) -> usize {
        self.inner.connections().len()
    }

    /// The server as a `tower` service (wrap it in layers, e.g.
    /// [`BearerAuth`](super::BearerAuth), then hand it to
    /// [`serve_with`](Self::serve_with) or to any hyper 1 server with upgrades on).
    pub fn service(&self) -> AcpService {
        AcpService { server: self.clone() }
    }

    /// Ends every ACP connection (each gets its connection's grace to finish).
    pub fn close_all(&self) {
        let served: Vec<Arc<Served>> = self.inner.connections().values().cloned().collect();
        for connection in served {
            connection.close();
        }
    }

    async fn handle(&self, request: Request<Incoming>) -> Response<AcpBody> {
        if request.uri().path() != self.inner.path {
            return reply(StatusCode::NOT_FOUND, "not found");
        }
        match *request.method() {
            Method::POST => self.post(request).await,
            Method::GET if is_upgrade(request.headers()) => self.websocket(request),
            Method::GET => self.get(request.headers()),
            Method::DELETE => self.delete(request.headers()),
            _ => {
                let mut response = reply(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
                response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
                response
            }
        }
    }

    // -- connections ------------------------------------------------------------------

    fn open(&self, websocket: bool) -> Option<Arc<Served>> {
        let mut connections = self.inner.connections();
        if connections.len() >= self.inner.limits.max_connections {
            return None;
        }
        let registry = Arc::downgrade(&self.inner);
        let served = start(self.inner.limits.clone(), websocket, &self.inner.attach, move |id| {
            if let Some(inner) = registry.upgrade() {
                inner.connections().remove(id);
            }
        });
        connections.insert(served.id.clone(), served.clone());
        drop(connections);
        if !websocket {
            self.inner.reaper.call_once(|| {
                tokio::spawn(reap(Arc::downgrade(&self.inner)));
            });
        }
        Some(served)
    }

    /// The connection and session a request names, or the answer refusing it.
    #[allow(clippy::result_large_err)]
    fn lookup(&self, headers: &HeaderMap) -> Result<(Arc<Served>, Option<String>), Response<AcpBody>> {
        let Some(id) = header_text(headers, CONNECTION_ID_HEADER) else {
            return Err(reply(StatusCode::BAD_REQUEST, "missing Acp-Connection-Id"));
        };
        let served = self.inner.connections().get(id).cloned();
        let Some(served) = served.filter(|s| !s.is_ended()) else {
            return Err(reply(StatusCode::NOT_FOUND, "unknown Acp-Connection-Id"));
        };
        let session = header_text(headers, SESSION_ID_HEADER).map(str::to_owned);
        if let Some(session) = &session {
            if !served.knows_session(session) {
                return Err(reply(StatusCode::NOT_FOUND, "unknown Acp-Session-Id for this connection"));
            }
        }
        Ok((served, session))
    }

    // -- POST -------------------------------------------------------------------------

    async fn post(&self, request: Request<Incoming>) -> Response<AcpBody> {
        let content_type = header_text(request.headers(), "content-type").unwrap_or("");
        let media = content_type.split(';').next().unwrap_or("").trim();
        if !media.eq_ignore_ascii_case("application/json") {
            return reply(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json");
        }
        let limits = &self.inner.limits;
        let declared = header_text(request.headers(), "content-length").and_then(|n| n.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
            return too_large();
        }
        let (parts, body) = request.into_parts();
        let collect = Limited::new(body, limits.max_body_bytes).collect();
        let body = match tokio::time::timeout(limits.stall_timeout, collect).await {
            Ok(Ok(body)) => body.to_bytes(),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
            Ok(Err(_)) => return reply(StatusCode::BAD_REQUEST, "the body could not be read"),
            Err(_) => return reply(StatusCode::REQUEST_TIMEOUT, "the body did not arrive in time"),
        };
        if is_batch(&body) {
            return reply(StatusCode::NOT_IMPLEMENTED, "batch requests are not supported");
        }
        if header_text(&parts.headers, CONNECTION_ID_HEADER).is_none() {
            return self.initialize(body).await;
        }
        let (served, session) = match self.lookup(&parts.headers) {
            Ok(found) => found,
            Err(refused) => return refused,
        };
        served.touch();
        served.incoming(&body, session.as_deref());
        if !served.feed.put(&body).await {
            return reply(StatusCode::NOT_FOUND, "the connection ended");
        }
        served.touch();
        empty(StatusCode::ACCEPTED)
    }

    async fn initialize(&self, body: Bytes) -> Response<AcpBody> {
        let head = scan(&body).unwrap_or_default();
        let (true, Some("initialize"), Some(id)) = (head.is_request(), head.method.as_deref(), head.id) else {
            return reply(
                StatusCode::BAD_REQUEST,
                "missing Acp-Connection-Id (only an initialize request may omit it)",
            );
        };
        let Some(served) = self.open(false) else {
            let mut response = reply(StatusCode::SERVICE_UNAVAILABLE, "too many connections");
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        };
        let answer = served.expect_answer(id);
        served.feed.put(&body).await;
        match tokio::time::timeout(self.inner.limits.initialize_timeout, answer).await {
            Ok(Ok(line)) => {
                served.touch();
                let mut response = Response::new(full(line));
                let headers = response.headers_mut();
                headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                if let Ok(id) = HeaderValue::from_str(&served.id) {
                    headers.insert(CONNECTION_ID_HEADER, id);
                }
                response
            }
            Ok(Err(_)) => {
                reply(StatusCode::INTERNAL_SERVER_ERROR, "the connection ended before initialize was answered")
            }
            Err(_) => {
                served.close();
                reply(StatusCode::GATEWAY_TIMEOUT, "the agent did not answer initialize in time")
            }
        }
    }

    // -- GET: SSE ---------------------------------------------------------------------

    fn get(&self, headers: &HeaderMap) -> Response<AcpBody> {
        let accept = header_text(headers, "accept").unwrap_or("").to_ascii_lowercase();
        if !accept.contains("text/event-stream") && !accept.contains("*/*") {
            return reply(StatusCode::NOT_ACCEPTABLE, "Accept must include text/event-stream");
        }
        let (served, session) = match self.lookup(headers) {
            Ok(found) => found,
            Err(refused) => return refused,
        };
        if served.websocket {
            return reply(StatusCode::CONFLICT, "this connection is a WebSocket");
        }
        let key = session.map_or(StreamKey::Main, StreamKey::Session);
        if !served.attach(&key) {
            return reply(StatusCode::CONFLICT, "this stream is already open");
        }
        let interval = self.inner.limits.keepalive_interval;
        let reading = Reading { served, key };
        let events = futures::stream::unfold(Some(reading), move |state| async move {
            let reading = state?;
            let lines = reading.served.next(&reading.key, Some(interval)).await;
            let chunk = if !lines.is_empty() {
                let mut chunk = Vec::with_capacity(lines.iter().map(|l| l.len() + 8).sum());
                for line in &lines {
                    chunk.extend_from_slice(b"data: ");
                    chunk.extend_from_slice(line);
                    chunk.extend_from_slice(b"\n\n");
                }
                Bytes::from(chunk)
            } else if reading.served.is_ended() {
                return None;
            } else {
                Bytes::from_static(KEEPALIVE)
            };
            Some((Ok::<_, Infallible>(Frame::data(chunk)), Some(reading)))
        });
        let mut response = Response::new(UnsyncBoxBody::new(StreamBody::new(events)));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    // -- DELETE -----------------------------------------------------------------------

    fn delete(&self, headers: &HeaderMap) -> Response<AcpBody> {
        let (served, _) = match self.lookup(headers) {
            Ok(found) => found,
            Err(refused) => return refused,
        };
        self.inner.connections().remove(&served.id);
        served.close();
        empty(StatusCode::ACCEPTED)
    }

    // -- WebSocket --------------------------------------------------------------------

    fn websocket(&self, request: Request<Incoming>) -> Response<AcpBody> {
        let headers = request.headers();
        let key = header_text(headers, "sec-websocket-key");
        let version = header_text(headers, "sec-websocket-version");
        let Some(key) = key.filter(|_| version == Some("13")) else {
            return reply(StatusCode::BAD_REQUEST, "a WebSocket upgrade needs Sec-WebSocket-Key and version 13");
        };
        let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
        let Some(served) = self.open(true) else {
            let mut response = reply(StatusCode::SERVICE_UNAVAILABLE, "too many connections");
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        };
        let limits = self.inner.limits.clone();
        let upgrade = hyper::upgrade::on(request);
        let socket_of = served.clone();
        tokio::spawn(async move {
            match upgrade.await {
                Ok(upgraded) => super::ws_server::run(socket_of, upgraded, &limits).await,
                Err(_) => socket_of.close(),
            }
        });
        let mut response = empty(StatusCode::SWITCHING_PROTOCOLS);
        let headers = response.headers_mut();
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        if let Ok(accept) = HeaderValue::from_str(&accept) {
            headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
        }
        if let Ok(id) = HeaderValue::from_str(&served.id) {
            headers.insert(CONNECTION_ID_HEADER, id);
        }
        response
    }
}

impl Inner {
    fn connections(&self) -> MutexGuard<'_, HashMap<String, Arc<Served>>> {
        self.connections.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// An SSE stream being read: its reader is gone when this is dropped.
struct Reading {
    served: Arc<Served>,
    key: StreamKey,
}

impl Drop for Reading {
    fn drop(&mut self) {
        self.served.detach(&self.key);
    }
}

/// Ends Streamable HTTP connections idle for longer than the idle timeout, while the
/// server lives.
async fn reap(inner: Weak<Inner>) {
    let Some(timeout) = inner.upgrade().map(|i| i.limits.idle_timeout) else { return };
    let period = (timeout / 4).clamp(std::time::Duration::from_millis(10), std::time::Duration::from_secs(5));
    loop {
        tokio::time::sleep(period).await;
        let Some(inner) = inner.upgrade() else { return };
        let now = Instant::now();
        let idle: Vec<Arc<Served>> =
            inner.connections().values().filter(|c| !c.websocket && c.idle_for(now) > timeout).cloned().collect();
        for connection in idle {
            connection.close();
        }
    }
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    header_text(headers, "upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket"))
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn full(body: Bytes) -> AcpBody {
    UnsyncBoxBody::new(Full::new(body))
}

fn empty(status: StatusCode) -> Response<AcpBody> {
    let mut response = Response::new(full(Bytes::new()));
    *response.status_mut() = status;
    response
}

pub(crate) fn reply(status: StatusCode, text: &'static str) -> Response<AcpBody> {
    let mut response = Response::new(full(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

fn too_large() -> Response<AcpBody> {
    let mut response = reply(StatusCode::PAYLOAD_TOO_LARGE, "body too large");
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// [`RemoteServer`] as a `tower` service.
#[derive(Clone, Debug)]
pub struct AcpService {
    server: RemoteServer,
}

impl tower_service::Service<Request<Incoming>> for AcpService {
    type Response = Response<AcpBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<AcpBody>, Infallible>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        let server = self.server.clone();
        Box::pin(async move { Ok(server.handle(request).await) })
    }
}
