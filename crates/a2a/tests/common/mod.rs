//! Shared helpers of the server tests (`server_ops`, `server_streams`, `server_security`):
//! a server on loopback, one call helper that runs an operation on either binding and
//! returns the wire answer, the expected error forms, an SSE reader (over reqwest or a
//! raw socket with a tiny receive buffer), and a gated executor the tests drive.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use agentproto_a2a::errors::A2aError;
use agentproto_a2a::executor::{AgentExecutor, RequestContext, TaskUpdater};
use agentproto_a2a::server::{A2aServer, Builder};
use agentproto_a2a::v1::{AgentCard, Artifact, Part, PartContent};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

/// Every wait in these tests is bounded by this.
pub const WAIT: Duration = Duration::from_secs(20);

/// `f`, or a panic naming `what` once [`WAIT`] has passed.
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(WAIT, f).await.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

// ---------------------------------------------------------------------------
// Servers

/// A server on 127.0.0.1; shut down when dropped.
pub struct Server {
    pub base: String,
    pub addr: std::net::SocketAddr,
    pub http: reqwest::Client,
    token: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

/// Binds a port, builds the server with `build(base)` and serves it.
pub async fn start<E: AgentExecutor>(build: impl FnOnce(&str) -> Builder<E>) -> Server {
    start_with(build, |_| {}).await
}

/// [`start`], showing the built server to `inspect` before it serves.
pub async fn start_with<E: AgentExecutor>(
    build: impl FnOnce(&str) -> Builder<E>,
    inspect: impl FnOnce(&A2aServer<E>),
) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");
    let server: A2aServer<E> = build(&base).build();
    inspect(&server);
    let token = server.shutdown_token();
    tokio::spawn(server.serve(listener));
    Server { base, addr, http: reqwest::Client::new(), token }
}

/// [`start`], also handing back the server's sweeper and leases (built with the
/// background work off, a test drives them itself).
pub async fn start_driven<E: AgentExecutor>(
    build: impl FnOnce(&str) -> Builder<E>,
) -> (Server, agentproto_a2a::recovery::Sweeper, Arc<agentproto_a2a::recovery::Leases>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}");
    let server: A2aServer<E> = build(&base).build();
    let (sweeper, leases) = (server.sweeper(), Arc::clone(server.leases()));
    let token = server.shutdown_token();
    tokio::spawn(server.serve(listener));
    (Server { base, addr, http: reqwest::Client::new(), token }, sweeper, leases)
}

impl Server {
    /// Shuts the server down (as dropping it does), keeping the value.
    pub fn shut_down(&self) {
        self.token.cancel();
    }
}

/// The demo agent's card with `edit` applied to its JSON form.
pub fn card_with(base: &str, edit: impl FnOnce(&mut Value)) -> AgentCard {
    let mut v = serde_json::to_value(agentproto_a2a::demo::card(base)).unwrap();
    edit(&mut v);
    serde_json::from_value(v).unwrap()
}

/// The demo agent with a short delay for `tck-delayed-complete`.
pub fn demo(delay_ms: u64) -> agentproto_a2a::demo::DemoAgent {
    agentproto_a2a::demo::DemoAgent { delay: Some(Duration::from_millis(delay_ms)), ..Default::default() }
}

/// A user message in ProtoJSON.
pub fn msg(message_id: &str, text: &str) -> Value {
    json!({"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// `SendMessage` params for a new message.
pub fn send(message_id: &str, text: &str) -> Value {
    json!({"message": msg(message_id, text)})
}

/// A unique message id with a TCK prefix.
pub fn mid(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

// ---------------------------------------------------------------------------
// Calls on either binding

/// The two bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum B {
    Rpc,
    Rest,
}

pub const BOTH: [B; 2] = [B::Rpc, B::Rest];

/// One request: the operation, its params (the proto request in ProtoJSON), and extras.
#[derive(Debug, Clone)]
pub struct Call {
    pub op: &'static str,
    pub params: Value,
    pub tenant: Option<String>,
    pub headers: Vec<(String, String)>,
    /// REST `SubscribeToTask` with GET instead of POST.
    pub get_subscribe: bool,
}

impl Call {
    pub fn new(op: &'static str, params: Value) -> Self {
        Call { op, params, tenant: None, headers: vec![("A2A-Version".into(), "1.0".into())], get_subscribe: false }
    }

    pub fn tenant(mut self, t: &str) -> Self {
        self.tenant = Some(t.to_owned());
        self
    }

    /// Adds a header (replacing one of the same name).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn without_header(mut self, name: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }
}

fn s(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn query_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The REST method, path (after the prefix, tenant included) and body of a call.
pub fn rest_route(call: &Call) -> (reqwest::Method, String, Option<Value>) {
    use reqwest::Method;
    let p = &call.params;
    let without = |keys: &[&str]| {
        let mut o = p.as_object().cloned().unwrap_or_default();
        for k in keys {
            o.remove(*k);
        }
        Value::Object(o)
    };
    let query = |skip: &[&str]| {
        let pairs: Vec<String> = p
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={}", query_value(v)))
            .collect();
        if pairs.is_empty() {
            String::new()
        } else {
            format!("?{}", pairs.join("&"))
        }
    };
    let (m, path, body) = match call.op {
        "SendMessage" => (Method::POST, "/message:send".to_owned(), Some(p.clone())),
        "SendStreamingMessage" => (Method::POST, "/message:stream".to_owned(), Some(p.clone())),
        "GetTask" => (Method::GET, format!("/tasks/{}{}", s(p, "id"), query(&["id"])), None),
        "ListTasks" => (Method::GET, format!("/tasks{}", query(&[])), None),
        "CancelTask" => (Method::POST, format!("/tasks/{}:cancel", s(p, "id")), Some(without(&["id"]))),
        "SubscribeToTask" if call.get_subscribe => (Method::GET, format!("/tasks/{}:subscribe", s(p, "id")), None),
        "SubscribeToTask" => (Method::POST, format!("/tasks/{}:subscribe", s(p, "id")), Some(without(&["id"]))),
        "CreateTaskPushNotificationConfig" => {
            (Method::POST, format!("/tasks/{}/pushNotificationConfigs", s(p, "taskId")), Some(without(&["taskId"])))
        }
        "GetTaskPushNotificationConfig" => {
            (Method::GET, format!("/tasks/{}/pushNotificationConfigs/{}", s(p, "taskId"), s(p, "id")), None)
        }
        "ListTaskPushNotificationConfigs" => {
            (Method::GET, format!("/tasks/{}/pushNotificationConfigs{}", s(p, "taskId"), query(&["taskId"])), None)
        }
        "DeleteTaskPushNotificationConfig" => {
            (Method::DELETE, format!("/tasks/{}/pushNotificationConfigs/{}", s(p, "taskId"), s(p, "id")), None)
        }
        "GetExtendedAgentCard" => (Method::GET, "/extendedAgentCard".to_owned(), None),
        other => panic!("no REST route for {other}"),
    };
    let path = match &call.tenant {
        Some(t) => format!("/{t}{path}"),
        None => path,
    };
    (m, path, body)
}

impl Server {
    /// The HTTP request of `call` on binding `b`.
    pub fn request(&self, b: B, call: &Call) -> reqwest::RequestBuilder {
        let rb = match b {
            B::Rpc => {
                let mut params = call.params.clone();
                if let Some(t) = &call.tenant {
                    params["tenant"] = json!(t);
                }
                let body = json!({"jsonrpc": "2.0", "id": 7, "method": call.op, "params": params});
                self.http
                    .post(format!("{}/", self.base))
                    .header("Content-Type", "application/json")
                    .body(serde_json::to_vec(&body).unwrap())
            }
            B::Rest => {
                let (m, path, body) = rest_route(call);
                let rb = self.http.request(m, format!("{}/a2a/rest{path}", self.base));
                match body {
                    Some(b) => rb.header("Content-Type", "application/a2a+json").body(serde_json::to_vec(&b).unwrap()),
                    None => rb,
                }
            }
        };
        // Replaces the defaults above (Content-Type) rather than adding to them.
        let mut map = reqwest::header::HeaderMap::new();
        for (n, v) in &call.headers {
            map.insert(reqwest::header::HeaderName::from_bytes(n.as_bytes()).unwrap(), v.parse().unwrap());
        }
        rb.headers(map)
    }

    /// Runs a unary call and reads the whole answer.
    pub async fn run(&self, b: B, call: Call) -> Reply {
        let resp = within(call.op, self.request(b, &call).send()).await.unwrap();
        Reply::read(b, resp).await
    }

    /// Shorthand: `op` with `params` and no extras.
    pub async fn call(&self, b: B, op: &'static str, params: Value) -> Reply {
        self.run(b, Call::new(op, params)).await
    }

    /// Opens a stream (`SendStreamingMessage` or `SubscribeToTask`); panics unless the
    /// answer is an SSE stream.
    pub async fn stream(&self, b: B, call: Call) -> Sse {
        let resp = within(call.op, self.request(b, &call).header("Accept", "text/event-stream").send()).await.unwrap();
        let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        if !ct.starts_with("text/event-stream") {
            let status = resp.status();
            let body = resp.text().await.unwrap_or_default();
            panic!("expected an SSE stream for {} on {b:?}, got {status} {ct}: {body}", call.op);
        }
        Sse::new(b, Src::Http(resp))
    }

    /// Creates a task with the demo agent (`SendMessage`, blocking) and returns it.
    pub async fn task(&self, b: B, message_id: &str) -> Value {
        let r = self.call(b, "SendMessage", send(message_id, "hi")).await;
        r.ok()["task"].clone()
    }
}

/// The answer of a unary call.
#[derive(Debug)]
pub struct Reply {
    pub binding: B,
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

/// How one error looks on the wire.
#[derive(Debug, Clone, Copy)]
pub struct E {
    pub code: i64,
    /// HTTP status of the REST answer.
    pub http: u16,
    /// HTTP status of the JSON-RPC answer.
    pub rpc_http: u16,
    /// `google.rpc.Status` name.
    pub status: &'static str,
    pub reason: &'static str,
}

const fn e(code: i64, http: u16, status: &'static str, reason: &'static str) -> E {
    E { code, http, rpc_http: 200, status, reason }
}

pub const TASK_NOT_FOUND: E = e(-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND");
pub const TASK_NOT_CANCELABLE: E = e(-32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE");
pub const PUSH_NOT_SUPPORTED: E = e(-32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED");
pub const UNSUPPORTED: E = e(-32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION");
pub const CONTENT_TYPE: E = e(-32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED");
pub const CARD_NOT_CONFIGURED: E = e(-32007, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED");
pub const VERSION: E = e(-32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED");
pub const PARSE: E = e(-32700, 400, "INVALID_ARGUMENT", "PARSE_ERROR");
pub const INVALID_REQUEST: E = e(-32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST");
// An HTTP+JSON body says NOT_FOUND with its 404 (gRPC answers an unknown method UNIMPLEMENTED).
pub const METHOD_NOT_FOUND: E = e(-32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND");
pub const INVALID_PARAMS: E = e(-32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
pub const UNAUTHENTICATED: E =
    E { code: -31401, http: 401, rpc_http: 401, status: "UNAUTHENTICATED", reason: "UNAUTHENTICATED" };
pub const PERMISSION_DENIED: E =
    E { code: -31403, http: 403, rpc_http: 403, status: "PERMISSION_DENIED", reason: "PERMISSION_DENIED" };
pub const TOO_LARGE: E =
    E { code: -32600, http: 413, rpc_http: 413, status: "RESOURCE_EXHAUSTED", reason: "PAYLOAD_TOO_LARGE" };

impl Reply {
    pub async fn read(binding: B, resp: reqwest::Response) -> Reply {
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = within("response body", resp.bytes()).await.unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply { binding, status, headers, body, text }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The result of a successful call (JSON-RPC `result`, or the REST body).
    pub fn ok(&self) -> &Value {
        match self.binding {
            B::Rpc => {
                assert_eq!(self.status, 200, "{}", self.text);
                assert_eq!(self.body["jsonrpc"], "2.0", "{}", self.text);
                assert_eq!(self.body["id"], 7, "{}", self.text);
                assert!(self.body.get("error").is_none(), "unexpected error: {}", self.text);
                &self.body["result"]
            }
            B::Rest => {
                assert_eq!(self.status, 200, "{}", self.text);
                assert!(self.body.get("error").is_none(), "unexpected error: {}", self.text);
                &self.body
            }
        }
    }

    /// The `ErrorInfo` of an error answer, after checking its form against `want`.
    pub fn err(&self, want: E) -> Value {
        let info = match self.binding {
            B::Rpc => {
                assert_eq!(self.status, want.rpc_http, "HTTP status of {}", self.text);
                assert_eq!(self.body["jsonrpc"], "2.0", "{}", self.text);
                let e = &self.body["error"];
                assert_eq!(e["code"], want.code, "JSON-RPC code of {}", self.text);
                assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{}", self.text);
                e["data"][0].clone()
            }
            B::Rest => {
                assert_eq!(self.status, want.http, "HTTP status of {}", self.text);
                let e = &self.body["error"];
                assert_eq!(e["code"], want.http, "{}", self.text);
                assert_eq!(e["status"], want.status, "{}", self.text);
                assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{}", self.text);
                e["details"][0].clone()
            }
        };
        assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo", "{}", self.text);
        assert_eq!(info["reason"], want.reason, "{}", self.text);
        assert_eq!(info["domain"], "a2a-protocol.org", "{}", self.text);
        info
    }
}

// ---------------------------------------------------------------------------
// SSE

/// One SSE event (or a comment block).
#[derive(Debug, Clone, PartialEq)]
pub struct Ev {
    pub id: Option<u64>,
    pub event: Option<String>,
    pub data: String,
    /// A block with only comment lines (keep-alive).
    pub comment: bool,
    binding: B,
}

impl Ev {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("event data is not JSON ({e}): {}", self.data))
    }

    /// The `StreamResponse` (unwrapped from the JSON-RPC envelope on that binding).
    pub fn payload(&self) -> Value {
        let v = self.json();
        match self.binding {
            B::Rpc => {
                assert_eq!(v["jsonrpc"], "2.0", "{}", self.data);
                assert!(v.get("error").is_none(), "error event: {}", self.data);
                v["result"].clone()
            }
            B::Rest => v,
        }
    }

    /// `task`, `message`, `statusUpdate` or `artifactUpdate`.
    pub fn kind(&self) -> String {
        let p = self.payload();
        let keys: Vec<&String> = p.as_object().map(|o| o.keys().collect()).unwrap_or_default();
        assert_eq!(keys.len(), 1, "one member per StreamResponse: {}", self.data);
        keys[0].clone()
    }

    /// The task state this event carries (a Task or a status update), if any.
    pub fn state(&self) -> Option<String> {
        let p = self.payload();
        p["task"]["status"]["state"]
            .as_str()
            .or_else(|| p["statusUpdate"]["status"]["state"].as_str())
            .map(str::to_owned)
    }
}

/// Where the bytes of a stream come from.
pub enum Src {
    Http(reqwest::Response),
    /// A raw HTTP/1.1 connection after the response head: a chunked body.
    Raw {
        conn: tokio::net::TcpStream,
        raw: Vec<u8>,
        done: bool,
    },
}

/// Reads SSE events from a response body.
pub struct Sse {
    pub binding: B,
    src: Src,
    buf: Vec<u8>,
    ended: bool,
}

impl Sse {
    pub fn new(binding: B, src: Src) -> Self {
        Sse { binding, src, buf: Vec::new(), ended: false }
    }

    /// More body bytes into `buf`; false at the end of the body.
    async fn fill(&mut self) -> bool {
        match &mut self.src {
            Src::Http(resp) => match within("stream bytes", resp.chunk()).await {
                Ok(Some(c)) => {
                    self.buf.extend_from_slice(&c);
                    true
                }
                Ok(None) => false,
                Err(e) => panic!("stream broke: {e}"),
            },
            Src::Raw { conn, raw, done } => loop {
                if *done {
                    return false;
                }
                // Decode whatever complete chunks are buffered.
                if let Some(pos) = find(raw, b"\r\n") {
                    let size = usize::from_str_radix(std::str::from_utf8(&raw[..pos]).unwrap().trim(), 16).unwrap();
                    if size == 0 {
                        *done = true;
                        return false;
                    }
                    if raw.len() >= pos + 2 + size + 2 {
                        self.buf.extend_from_slice(&raw[pos + 2..pos + 2 + size]);
                        raw.drain(..pos + 2 + size + 2);
                        return true;
                    }
                }
                let mut tmp = [0u8; 16 * 1024];
                let n = within("raw stream bytes", conn.read(&mut tmp)).await.unwrap();
                if n == 0 {
                    *done = true;
                    return false;
                }
                raw.extend_from_slice(&tmp[..n]);
            },
        }
    }

    /// The next event or comment block; `None` at the end of the stream.
    pub async fn next_any(&mut self) -> Option<Ev> {
        loop {
            if let Some(pos) = find(&self.buf, b"\n\n") {
                let block = String::from_utf8(self.buf[..pos].to_vec()).unwrap();
                self.buf.drain(..pos + 2);
                let mut ev = Ev { id: None, event: None, data: String::new(), comment: true, binding: self.binding };
                for line in block.lines() {
                    if line.starts_with(':') {
                        continue;
                    }
                    ev.comment = false;
                    let (k, v) = line.split_once(':').unwrap_or((line, ""));
                    let v = v.strip_prefix(' ').unwrap_or(v);
                    match k {
                        "id" => ev.id = Some(v.parse().unwrap_or_else(|_| panic!("id is not a number: {line}"))),
                        "event" => ev.event = Some(v.to_owned()),
                        "data" => {
                            if !ev.data.is_empty() {
                                ev.data.push('\n');
                            }
                            ev.data.push_str(v)
                        }
                        other => panic!("unexpected SSE field {other:?} in {block:?}"),
                    }
                }
                return Some(ev);
            }
            if self.ended || !self.fill().await {
                self.ended = true;
                assert!(self.buf.iter().all(|b| b.is_ascii_whitespace()), "trailing bytes: {:?}", self.buf);
                return None;
            }
        }
    }

    /// The next event, skipping keep-alive comments.
    pub async fn next(&mut self) -> Option<Ev> {
        loop {
            match self.next_any().await {
                Some(ev) if ev.comment => continue,
                other => return other,
            }
        }
    }

    /// The next event; panics at the end of the stream.
    pub async fn expect(&mut self) -> Ev {
        self.next().await.expect("the stream ended early")
    }

    /// Every remaining event, to the end of the stream (which must come within [`WAIT`]:
    /// keep-alives do not keep this waiting).
    pub async fn rest(&mut self) -> Vec<Ev> {
        let mut out = Vec::new();
        let read = async {
            while let Some(ev) = self.next().await {
                out.push(ev);
            }
        };
        if tokio::time::timeout(WAIT, read).await.is_err() {
            panic!("the stream did not end; events so far: {out:#?}");
        }
        out
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Opens a stream on a raw socket with a small receive buffer, reads the response head
/// (so the server has started the stream) and returns the unread body: a subscriber
/// that can be left stalled without client-side buffering hiding it.
pub async fn raw_stream(srv: &Server, b: B, call: &Call) -> Sse {
    let req = srv.request(b, call).header("Accept", "text/event-stream").build().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut conn = within("connect", socket.connect(srv.addr)).await.unwrap();
    let url = req.url();
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let body = req.body().and_then(|b| b.as_bytes()).map(<[u8]>::to_vec).unwrap_or_default();
    let mut head =
        format!("{} {target} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", req.method(), srv.addr, body.len());
    for (n, v) in req.headers() {
        head.push_str(&format!("{n}: {}\r\n", v.to_str().unwrap()));
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.write_all(&body).await.unwrap();
    let mut raw = Vec::new();
    let end = loop {
        if let Some(p) = find(&raw, b"\r\n\r\n") {
            break p;
        }
        let mut tmp = [0u8; 4096];
        let n = within("response head", conn.read(&mut tmp)).await.unwrap();
        assert!(n > 0, "connection closed before the response head");
        raw.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    raw.drain(..end + 4);
    Sse::new(b, Src::Raw { conn, raw, done: false })
}

// ---------------------------------------------------------------------------
// An executor the test drives

/// Moves the task to WORKING, then emits `n` artifact events (`n` is the message text;
/// event `i`'s text starts with `i` in six digits),
/// each after taking one permit of `gate`, and reports each on `progress`; then
/// completes. Each artifact holds `payload` bytes of text. A message whose text is
/// `input` asks for input instead.
pub struct Gated {
    pub gate: Arc<Semaphore>,
    pub progress: mpsc::UnboundedSender<usize>,
    pub payload: usize,
}

/// A [`Gated`] executor with its gate (no permits) and its progress receiver.
pub fn gated(payload: usize) -> (Gated, Arc<Semaphore>, mpsc::UnboundedReceiver<usize>) {
    let gate = Arc::new(Semaphore::new(0));
    let (tx, rx) = mpsc::unbounded_channel();
    (Gated { gate: gate.clone(), progress: tx, payload }, gate, rx)
}

impl AgentExecutor for Gated {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        let text = cx.text();
        if text == "input" {
            return task.input_required(Some(task.text("more please"))).await;
        }
        let n: usize = text.parse().unwrap_or(0);
        task.working(None).await?;
        for i in 0..n {
            tokio::select! {
                permit = self.gate.acquire() => permit.expect("gate closed").forget(),
                _ = cx.cancelled.cancelled() => return Ok(()),
            }
            let body = format!("{i:06}:{}", "x".repeat(self.payload));
            // One artifact id, replaced each time: the task stays small while every
            // event carries the payload.
            let art = Artifact::new("gated", vec![Part::new(PartContent::Text(body.into()))]);
            task.artifact(art).await?;
            let _ = self.progress.send(i + 1);
        }
        task.complete(None).await?;
        // `n + 1`: the turn is over, COMPLETED committed.
        let _ = self.progress.send(n + 1);
        Ok(())
    }
}

/// Waits until the executor reports `n` events emitted (`payload count + 1`: completed).
pub async fn emitted(progress: &mut mpsc::UnboundedReceiver<usize>, n: usize) {
    within(&format!("the executor to emit {n} events"), async {
        loop {
            match progress.recv().await {
                Some(k) if k >= n => return,
                Some(_) => continue,
                None => panic!("executor gone"),
            }
        }
    })
    .await
}
