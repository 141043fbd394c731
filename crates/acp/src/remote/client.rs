//! The client side of ACP over the network: [`connect`] reaches an agent served at
//! `http://HOST:PORT/acp` over Streamable HTTP (POST + SSE, on reqwest) or WebSocket.
//!
//! The connection runtime is the one stdio uses; the transports only frame its lines:
//!
//! * WebSocket: one text message per line, both ways.
//! * Streamable HTTP: every line is POSTed, one after the other (so the agent receives
//!   them in the order they were written). The first must be `initialize`: its answer
//!   comes in the POST's response with the `Acp-Connection-Id`, after which the
//!   connection-scoped SSE stream is opened, and a session's stream as soon as the
//!   session is known (an answer's `result.sessionId`, or a message of the agent about
//!   it). A message about a known session carries its `Acp-Session-Id`, so its answer
//!   comes on that session's stream after the updates that precede it. A message the
//!   server refuses (413, 501, …) fails the call it carried with -32600, as an
//!   oversize line does on stdio; a lost connection (404, the connection stream
//!   ending) ends the client connection.
//!
//! Cookies the server sets are kept and sent back on every request of the connection
//! (the RFD asks it, for sticky routing).

use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::framing::{FeedHandle, LineSink, MessageFeed, Outlet};
use super::routing::{scan, CONNECTION_ID_HEADER, SESSION_ID_HEADER};
use super::sse::SseParser;
use crate::{AcpOptions, AgentConnection, Dispatch, Protocol};

/// Bytes queued each way before the connection waits.
const QUEUED_BYTES: usize = 4 * 1024 * 1024;
/// How long closing waits for each step (the last sends, the DELETE).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// How to reach the agent.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// WebSocket instead of Streamable HTTP.
    pub websocket: bool,
    /// Headers sent on every request (e.g. `authorization`).
    pub headers: Vec<(String, String)>,
    /// The largest message accepted from the server.
    pub max_message_size: usize,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions { websocket: false, headers: Vec::new(), max_message_size: 64 * 1024 * 1024 }
    }
}

impl RemoteOptions {
    /// Streamable HTTP, no extra headers.
    pub fn new() -> Self {
        RemoteOptions::default()
    }

    /// WebSocket (`true`) or Streamable HTTP.
    pub fn websocket(mut self, websocket: bool) -> Self {
        self.websocket = websocket;
        self
    }

    /// One more header on every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// Why a remote connection could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The URL is not `http://` or `https://` (`ws://` for WebSocket is derived).
    #[error("invalid URL {url:?}: {reason}")]
    Url {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The server refused the WebSocket upgrade, or the socket failed.
    #[error("WebSocket: {0}")]
    WebSocket(String),
    /// The TCP connection failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A connection to a remote agent: the tasks of its transport. Close it with
/// [`close`](Self::close) (the input ends, then the server is told: DELETE, or the
/// WebSocket close); dropping it stops everything at once.
pub struct RemoteAgent {
    shared: Arc<ClientShared>,
    run: Option<JoinHandle<()>>,
    transport: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteAgent").field("connection_id", &self.connection_id()).finish_non_exhaustive()
    }
}

impl RemoteAgent {
    /// The server's `Acp-Connection-Id` (over Streamable HTTP, once `initialize` was
    /// answered).
    pub fn connection_id(&self) -> Option<String> {
        self.shared.state().connection_id.clone()
    }

    /// The cookies the server set, as `name=value`.
    pub fn cookies(&self) -> Vec<String> {
        self.shared.state().cookies.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    /// Ends the connection: its input ends, what it still writes is sent, then the
    /// server is told.
    pub async fn close(mut self) {
        self.shared.feed.close();
        if let Some(run) = self.run.take() {
            let abort = run.abort_handle();
            if tokio::time::timeout(CLOSE_TIMEOUT * 2, run).await.is_err() {
                abort.abort();
            }
        }
        self.shared.finish();
        if let Some(transport) = self.transport.take() {
            let abort = transport.abort_handle();
            if tokio::time::timeout(CLOSE_TIMEOUT * 2, transport).await.is_err() {
                abort.abort();
            }
        }
    }
}

impl Drop for RemoteAgent {
    fn drop(&mut self) {
        for task in [self.run.take(), self.transport.take()].into_iter().flatten() {
            task.abort();
        }
    }
}

/// Connects `client` to the agent at `url` (`http://HOST:PORT/acp`): the agent's
/// handle, as from a spawned agent, and the transport. The WebSocket handshake happens
/// here; over Streamable HTTP nothing is sent before the first call.
pub async fn connect<S, C>(
    url: &str,
    client: C,
    options: AcpOptions,
    remote: RemoteOptions,
) -> Result<(AgentConnection<S>, RemoteAgent), RemoteError>
where
    S: Protocol,
    C: Dispatch<S::AgentRequest, S::AgentNotification, AgentConnection<S>>,
{
    let endpoint = Endpoint::parse(url)?;
    let (reader, feed) = MessageFeed::new(QUEUED_BYTES);
    let shared = Arc::new(ClientShared::new(feed, remote));
    let transport = if shared.options.websocket {
        let socket = websocket_open(&endpoint, &shared).await?;
        tokio::spawn(websocket_run(socket, shared.clone()))
    } else {
        tokio::spawn(http_run(endpoint, shared.clone()))
    };
    let sink = LineSink::new(shared.clone());
    let (connection, agent) = crate::client::connect::<S, C>(client, reader, sink, options);
    let run = tokio::spawn(async move {
        let _ = connection.run().await;
    });
    Ok((agent, RemoteAgent { shared, run: Some(run), transport: Some(transport) }))
}

// -- what both transports share ----------------------------------------------------

struct ClientState {
    lines: VecDeque<Bytes>,
    queued: usize,
    waker: Option<Waker>,
    /// The connection wrote its last line.
    done: bool,
    /// The transport failed: writes fail.
    gone: bool,
    connection_id: Option<String>,
    cookies: Vec<(String, String)>,
    sessions: HashSet<String>,
}

struct ClientShared {
    state: Mutex<ClientState>,
    wake: Notify,
    feed: FeedHandle,
    options: RemoteOptions,
}

impl ClientShared {
    fn new(feed: FeedHandle, options: RemoteOptions) -> ClientShared {
        let state = ClientState {
            lines: VecDeque::new(),
            queued: 0,
            waker: None,
            done: false,
            gone: false,
            connection_id: None,
            cookies: Vec::new(),
            sessions: HashSet::new(),
        };
        ClientShared { state: Mutex::new(state), wake: Notify::new(), feed, options }
    }

    fn state(&self) -> MutexGuard<'_, ClientState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The next line to send; `None` once the connection wrote its last.
    async fn next_line(&self) -> Option<Bytes> {
        loop {
            let notified = self.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.state();
                if let Some(line) = state.lines.pop_front() {
                    state.queued -= line.len();
                    if let Some(waker) = state.waker.take() {
                        waker.wake();
                    }
                    return Some(line);
                }
                if state.done || state.gone {
                    return None;
                }
            }
            notified.await;
        }
    }

    /// Nothing more will be sent.
    fn finish(&self) {
        self.state().done = true;
        self.wake.notify_waiters();
    }

    /// The transport failed: the connection ends.
    fn fail(&self) {
        let mut state = self.state();
        state.gone = true;
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
        drop(state);
        self.wake.notify_waiters();
        self.feed.close();
    }

    fn store_cookies(&self, headers: &http::HeaderMap) {
        let mut state = self.state();
        for value in headers.get_all(http::header::SET_COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            let pair = text.split(';').next().unwrap_or("");
            let Some((name, value)) = pair.split_once('=') else { continue };
            let name = name.trim().to_owned();
            state.cookies.retain(|(n, _)| *n != name);
            state.cookies.push((name, value.trim().to_owned()));
        }
    }

    /// The headers of every request: the configured ones, cookies, the connection id.
    fn headers(&self) -> Vec<(String, String)> {
        let mut headers = self.options.headers.clone();
        let state = self.state();
        if !state.cookies.is_empty() {
            let cookie: Vec<String> = state.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
            headers.push(("cookie".to_owned(), cookie.join("; ")));
        }
        if let Some(id) = &state.connection_id {
            headers.push((CONNECTION_ID_HEADER.to_owned(), id.clone()));
        }
        headers
    }
}

impl Outlet for ClientShared {
    fn deliver(&self, line: Bytes) {
        let mut state = self.state();
        state.queued += line.len();
        state.lines.push_back(line);
        drop(state);
        self.wake.notify_waiters();
    }

    fn poll_room(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = self.state();
        if state.gone {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the remote connection ended")));
        }
        if state.queued <= QUEUED_BYTES {
            return Poll::Ready(Ok(()));
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    fn closed(&self) {
        self.finish();
    }
}

/// Where the agent is.
#[derive(Debug, Clone)]
struct Endpoint {
    url: String,
    /// `host:port`.
    authority: String,
    /// Path and query.
    path: String,
    tls: bool,
}

impl Endpoint {
    fn parse(url: &str) -> Result<Endpoint, RemoteError> {
        let wrong = |reason| RemoteError::Url { url: url.to_owned(), reason };
        let (tls, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else {
            return Err(wrong("expected http:// or https://"));
        };
        let (host, path) = rest.find('/').map_or((rest, "/"), |at| (&rest[..at], &rest[at..]));
        if host.is_empty() {
            return Err(wrong("no host"));
        }
        let authority = if host.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
            host.to_owned()
        } else {
            format!("{host}:{}", if tls { 443 } else { 80 })
        };
        Ok(Endpoint { url: url.to_owned(), authority, path: path.to_owned(), tls })
    }
}

// -- WebSocket -----------------------------------------------------------------------

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

async fn websocket_open(endpoint: &Endpoint, shared: &ClientShared) -> Result<Socket, RemoteError> {
    use tokio_tungstenite::tungstenite::client::ClientRequestBuilder;
    if endpoint.tls {
        return Err(RemoteError::Url { url: endpoint.url.clone(), reason: "WebSocket is supported over ws:// only" });
    }
    let uri: http::Uri = format!("ws://{}{}", endpoint.authority, endpoint.path)
        .parse()
        .map_err(|_| RemoteError::Url { url: endpoint.url.clone(), reason: "not a valid URI" })?;
    let mut request = ClientRequestBuilder::new(uri);
    for (name, value) in shared.headers() {
        request = request.with_header(name, value);
    }
    let stream = tokio::net::TcpStream::connect(&endpoint.authority).await?;
    let _ = stream.set_nodelay(true);
    let config = super::ws_config(shared.options.max_message_size);
    let (socket, response) = tokio_tungstenite::client_async_with_config(request, stream, Some(config))
        .await
        .map_err(|e| RemoteError::WebSocket(e.to_string()))?;
    shared.store_cookies(response.headers());
    let id = response.headers().get(CONNECTION_ID_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    shared.state().connection_id = id;
    Ok(socket)
}

async fn websocket_run(socket: Socket, shared: Arc<ClientShared>) {
    use tokio_tungstenite::tungstenite::Message;
    let (mut write, mut read) = socket.split();
    let reader = shared.clone();
    let reading = async move {
        while let Some(Ok(message)) = read.next().await {
            let text = match message {
                Message::Text(text) => text,
                Message::Close(_) => break,
                _ => continue,
            };
            if !reader.feed.put(text.as_bytes()).await {
                break;
            }
        }
    };
    let writing = async {
        while let Some(line) = shared.next_line().await {
            let text = String::from_utf8_lossy(&line).into_owned();
            if write.send(Message::text(text)).await.is_err() {
                return;
            }
        }
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, write.close()).await;
    };
    tokio::pin!(reading);
    tokio::pin!(writing);
    tokio::select! {
        () = &mut reading => {}
        () = &mut writing => {
            // Our close is sent: the server's close ends the reading, briefly awaited.
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, &mut reading).await;
        }
    }
    shared.fail();
}

// -- Streamable HTTP -----------------------------------------------------------------

struct Http {
    endpoint: Endpoint,
    client: reqwest::Client,
    shared: Arc<ClientShared>,
    streams: Mutex<HashMap<Option<String>, JoinHandle<()>>>,
}

async fn http_run(endpoint: Endpoint, shared: Arc<ClientShared>) {
    let client = reqwest::Client::builder().pool_max_idle_per_host(4).build().unwrap_or_default();
    let http = Arc::new(Http { endpoint, client, shared: shared.clone(), streams: Mutex::new(HashMap::new()) });
    while let Some(line) = shared.next_line().await {
        if http.send(&line).await.is_err() {
            shared.fail();
            break;
        }
    }
    let connected = shared.state().connection_id.is_some();
    if connected {
        let delete = http.request(reqwest::Method::DELETE).send();
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, delete).await;
    }
    let streams: Vec<JoinHandle<()>> = http.streams().drain().map(|(_, task)| task).collect();
    for task in streams {
        task.abort();
    }
    shared.fail();
}

/// The POST of a line failed so that the connection cannot go on.
struct Lost;

impl Http {
    fn streams(&self) -> MutexGuard<'_, HashMap<Option<String>, JoinHandle<()>>> {
        self.streams.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut request = self.client.request(method, &self.endpoint.url);
        for (name, value) in self.shared.headers() {
            request = request.header(name, value);
        }
        request
    }

    async fn send(self: &Arc<Self>, line: &Bytes) -> Result<(), Lost> {
        let head = scan(line).unwrap_or_default();
        let connected = self.shared.state().connection_id.is_some();
        let mut request = self
            .request(reqwest::Method::POST)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = head.session.as_ref().filter(|s| connected && self.shared.state().sessions.contains(*s))
        {
            request = request.header(SESSION_ID_HEADER, session.as_str());
            self.open_stream(Some(session.clone()));
        }
        let response = request.body(line.clone()).send().await.map_err(|_| Lost)?;
        self.shared.store_cookies(response.headers());
        let status = response.status().as_u16();
        let id = response.headers().get(CONNECTION_ID_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let answer = read_limited(response, self.shared.options.max_message_size).await.map_err(|_| Lost)?;
        match status {
            200 if !connected && id.is_some() => {
                self.shared.state().connection_id = id;
                self.open_stream(None);
                self.opened_by(&answer);
                self.shared.feed.put(&answer).await;
            }
            200 if !answer.is_empty() => {
                self.opened_by(&answer);
                self.shared.feed.put(&answer).await;
            }
            200 | 202 => {}
            404 => return Err(Lost),
            _ if !connected => return Err(Lost),
            _ => {
                if let (true, Some(id)) = (head.is_request(), head.id) {
                    let message = format!("invalid request: the server refused the message with HTTP {status}");
                    let error = serde_json::json!({"code": -32600, "message": message});
                    let reply = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#);
                    self.shared.feed.put(reply.as_bytes()).await;
                }
            }
        }
        Ok(())
    }

    /// A session an incoming message makes known: its stream is opened.
    fn opened_by(self: &Arc<Self>, message: &[u8]) {
        let Some(head) = scan(message) else { return };
        if let Some(session) = head.result_session.or(head.session) {
            self.open_stream(Some(session));
        }
    }

    fn open_stream(self: &Arc<Self>, session: Option<String>) {
        if let Some(session) = &session {
            self.shared.state().sessions.insert(session.clone());
        }
        let mut streams = self.streams();
        if streams.contains_key(&session) {
            return;
        }
        let http = self.clone();
        let key = session.clone();
        streams.insert(key, tokio::spawn(async move { http.read_stream(session).await }));
    }

    async fn read_stream(self: Arc<Self>, session: Option<String>) {
        let mut request = self.request(reqwest::Method::GET).header("accept", "text/event-stream");
        if let Some(session) = &session {
            request = request.header(SESSION_ID_HEADER, session.as_str());
        }
        if let Ok(response) = request.send().await {
            self.shared.store_cookies(response.headers());
            if response.status().as_u16() == 200 {
                let mut parser = SseParser::new(self.shared.options.max_message_size);
                let mut body = response.bytes_stream();
                let mut events = Vec::new();
                'read: while let Some(Ok(chunk)) = body.next().await {
                    parser.feed(&chunk, &mut events);
                    for data in events.drain(..) {
                        if session.is_none() {
                            self.opened_by(&data);
                        }
                        if !self.shared.feed.put(&data).await {
                            break 'read;
                        }
                    }
                }
            }
        }
        if session.is_none() {
            self.shared.fail(); // the connection stream is gone: so is the connection
        } else {
            self.streams().remove(&session);
        }
    }
}

async fn read_limited(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, ()> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|_| ())? {
        if body.len() + chunk.len() > limit {
            return Err(());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
