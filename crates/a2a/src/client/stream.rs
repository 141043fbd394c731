//! Streams of `StreamResponse` over SSE, on both bindings, resumed after a drop.

use std::pin::Pin;
use std::task::{Context, Poll};

use agentproto_codec::decode_slice;
use futures::{Stream, StreamExt};
use http::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use http::StatusCode;

use super::error::{parse_error_payload, A2aErrorKind, ClientError};
use super::sse::{SseEvent, SseParser};
use super::wire::{self, RpcStreamItem, TenantRequest};
use super::{repeat, send_retrying, A2aClient, Binding, CallOptions, A2A_JSON};
use crate::v1::{GetTaskRequest, Operation, StreamResponse, SubscribeToTaskRequest, TaskState};

/// One item of a stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StreamEvent {
    /// The SSE `id:` of this event, when the server gave one. agentproto servers send
    /// the task's event sequence number; other servers may send anything (or nothing).
    pub id: Option<String>,
    /// What the event holds.
    pub kind: StreamEventKind,
}

/// What a [`StreamEvent`] holds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)] // the large variant is the common one; gaps are rare
pub enum StreamEventKind {
    /// A task snapshot, a direct message, a status or an artifact update.
    Response(StreamResponse),
    /// An SSE event named `gap`: the server could not replay everything after the
    /// `Last-Event-ID` it was sent (its log no longer holds those events). A `GetTask`
    /// gives the current state.
    Gap {
        /// The last sequence number before the hole (`after` in the data), if given.
        after: Option<u64>,
        /// The first sequence number the server still had (`resumedAt`), if given.
        resumed_at: Option<u64>,
        /// The event's data, verbatim.
        data: String,
    },
}

impl StreamEvent {
    /// The response, unless this is a gap marker.
    pub fn response(&self) -> Option<&StreamResponse> {
        match &self.kind {
            StreamEventKind::Response(r) => Some(r),
            StreamEventKind::Gap { .. } => None,
        }
    }

    /// Whether this is a gap marker.
    pub fn is_gap(&self) -> bool {
        matches!(self.kind, StreamEventKind::Gap { .. })
    }

    /// The response by value, unless this is a gap marker.
    pub fn into_response(self) -> Option<StreamResponse> {
        match self.kind {
            StreamEventKind::Response(r) => Some(r),
            StreamEventKind::Gap { .. } => None,
        }
    }

    /// The `id:` read as a sequence number, when it is one.
    pub fn seq(&self) -> Option<u64> {
        self.id.as_deref().and_then(|id| id.parse().ok())
    }
}

/// The events of `SendStreamingMessage` or `SubscribeToTask`.
///
/// The stream ends after the server closes it following a direct `Message` or a task
/// in a terminal or interrupted state (`INPUT_REQUIRED`, `AUTH_REQUIRED`). If the
/// connection ends before that (closed, reset, or silent longer than the idle
/// timeout), the client reconnects with `SubscribeToTask` for the task, sending
/// `Last-Event-ID` with the last `id:` it saw, as [`ResumePolicy`](super::ResumePolicy)
/// allows. After a reconnection:
/// - the server's first event is normally the current Task (the specification asks for
///   it), delivered like any other event;
/// - events whose numeric `id:` is not above the last one seen are skipped;
/// - a server without agentproto's replay extension ignores `Last-Event-ID`: events
///   sent while disconnected are then lost (the Task snapshot shows the current state),
///   and a server whose ids are not increasing numbers may deliver duplicates;
/// - if the task ended meanwhile (the server refuses the subscription with
///   `UnsupportedOperation`), the final Task fetched with `GetTask` is the last event.
///
/// A server error (`event: error`, a JSON-RPC error) or an undecodable event is the
/// last item. A stream that cannot be resumed ends with
/// [`ClientError::StreamInterrupted`].
pub struct EventStream {
    inner: Pin<Box<dyn Stream<Item = Result<StreamEvent, ClientError>> + Send>>,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream").finish_non_exhaustive()
    }
}

impl Stream for EventStream {
    type Item = Result<StreamEvent, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// Where a connection's events come from.
enum Body {
    /// An SSE body, parsed into events.
    Sse(Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>),
    /// A gRPC stream, one `StreamResponse` per message.
    #[cfg(feature = "grpc")]
    Grpc(Box<crate::grpc::client::Events>),
}

/// An open response: an SSE body or a gRPC stream, or a single JSON answer where a
/// stream was expected.
struct Conn {
    binding: Binding,
    body: Option<Body>,
    single: Option<Vec<u8>>,
    url: String,
}

/// Sends the streaming request and checks the answer's status and content type.
async fn connect<R: TenantRequest>(
    client: &A2aClient,
    op: Operation,
    req: &mut R,
    last_event_id: Option<&str>,
    call: &CallOptions,
) -> Result<Conn, ClientError> {
    let iface = client.interface();
    req.set_tenant(&iface.tenant);
    let mut headers = client.common_headers(call)?;
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    if let Some(id) = last_event_id {
        let v = HeaderValue::from_str(id)
            .map_err(|_| ClientError::InvalidRequest("Last-Event-ID is not a valid header value".into()))?;
        headers.insert(HeaderName::from_static("last-event-id"), v);
    }
    let repeat = repeat(op, call);
    let policy = &client.options().retry;
    let http = &client.inner.http;
    let (resp, url) = match iface.binding {
        Binding::JsonRpc => {
            let id = client.inner.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let body = wire::rpc_request(id, op, req)?;
            let resp = send_retrying(policy, repeat, &iface.url, || {
                http.post(&iface.url)
                    .headers(headers.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.clone())
            })
            .await?;
            (resp, iface.url.clone())
        }
        Binding::HttpJson => {
            let rc = wire::rest_call(&iface.url, op, &iface.tenant, req)?;
            let body = serde_json::to_vec(req).map_err(|e| ClientError::InvalidRequest(e.to_string()))?;
            let get = op == Operation::SubscribeToTask
                && client.inner.subscribe_with_get.load(std::sync::atomic::Ordering::Relaxed);
            let url = rc.url;
            let build = |use_get: bool| {
                let method = if use_get { http::Method::GET } else { http::Method::POST };
                let b = http.request(method, &url).headers(headers.clone());
                if use_get {
                    b
                } else {
                    b.header(CONTENT_TYPE, A2A_JSON).body(body.clone())
                }
            };
            let mut resp = send_retrying(policy, repeat, &url, || build(get)).await?;
            if op == Operation::SubscribeToTask && !get && resp.status() == StatusCode::METHOD_NOT_ALLOWED {
                // The proto says GET, the prose POST (a2a notes §4.4): try the other one.
                client.inner.subscribe_with_get.store(true, std::sync::atomic::Ordering::Relaxed);
                resp = send_retrying(policy, repeat, &url, || build(true)).await?;
            }
            (resp, url)
        }
        // No HTTP answer to read: the gRPC stream is the connection.
        #[cfg(feature = "grpc")]
        Binding::Grpc => {
            let json = serde_json::to_vec(req).map_err(|e| ClientError::InvalidRequest(e.to_string()))?;
            let channel = client.grpc_channel(&iface.url)?;
            let events = crate::grpc::client::streaming(channel, op, json, headers).await?;
            let body = Some(Body::Grpc(Box::new(events)));
            return Ok(Conn { binding: iface.binding, body, single: None, url: iface.url });
        }
    };
    let status = resp.status();
    let is_sse = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
    if !status.is_success() {
        let bytes = resp.bytes().await.map_err(|e| ClientError::transport(&url, e))?;
        return Err(parse_error_payload(&bytes, Some(status.as_u16())));
    }
    if is_sse {
        return Ok(Conn {
            binding: iface.binding,
            body: Some(Body::Sse(Box::pin(resp.bytes_stream()))),
            single: None,
            url,
        });
    }
    let bytes = resp.bytes().await.map_err(|e| ClientError::transport(&url, e))?;
    if iface.binding == Binding::JsonRpc {
        // A JSON-RPC error answered without opening a stream.
        if let RpcStreamItem::Error(e) = wire::rpc_stream_item(&bytes, op.name())? {
            return Err(e);
        }
    }
    Ok(Conn { binding: iface.binding, body: None, single: Some(bytes.to_vec()), url })
}

/// Opens a stream for `op`.
pub(crate) async fn open<R: TenantRequest + Send + 'static>(
    client: A2aClient,
    op: Operation,
    mut req: R,
    last_event_id: Option<String>,
    call: CallOptions,
    initial_task: Option<String>,
) -> Result<EventStream, ClientError> {
    let conn = connect(&client, op, &mut req, last_event_id.as_deref(), &call).await?;
    let max = client.options().max_event_bytes;
    let mut state = State {
        client,
        call: CallOptions { idempotency_key: None, headers: call.headers },
        op_name: op.name(),
        binding: conn.binding,
        body: None,
        pending: None,
        single_shot: false,
        parser: SseParser::new(max),
        task_id: initial_task.filter(|t| !t.is_empty()),
        last_id: last_event_id.clone(),
        last_seq: last_event_id.as_deref().and_then(|id| id.parse().ok()),
        ended_normally: false,
        resumed: last_event_id.is_some(),
        events_this_conn: 0,
        failures: 0,
        done: false,
        url: String::new(),
    };
    state.install(conn);
    let inner = futures::stream::unfold(state, |mut st| async move { st.next().await.map(|item| (item, st)) });
    Ok(EventStream { inner: Box::pin(inner) })
}

struct State {
    client: A2aClient,
    call: CallOptions,
    op_name: &'static str,
    binding: Binding,
    body: Option<Body>,
    /// The one event of a non-SSE answer.
    pending: Option<SseEvent>,
    /// The connection was a single JSON answer: its end is the stream's end.
    single_shot: bool,
    parser: SseParser,
    task_id: Option<String>,
    last_id: Option<String>,
    last_seq: Option<u64>,
    /// The last event leaves nothing more to wait for (a Message, or a task state
    /// that is terminal or interrupted).
    ended_normally: bool,
    resumed: bool,
    events_this_conn: u32,
    /// Reconnections in a row without anything new.
    failures: u32,
    done: bool,
    url: String,
}

#[allow(clippy::large_enum_variant)] // one per reconnection, never stored
enum Resume {
    Reconnected,
    Final(StreamEvent),
    Failed(ClientError),
}

fn ends_stream(state: TaskState) -> bool {
    !matches!(state, TaskState::Submitted | TaskState::Working)
}

impl State {
    fn install(&mut self, conn: Conn) {
        self.binding = conn.binding;
        self.url = conn.url;
        self.parser = SseParser::new(self.client.options().max_event_bytes);
        self.events_this_conn = 0;
        self.body = conn.body;
        self.single_shot = conn.single.is_some();
        self.pending = conn.single.map(|data| SseEvent { event: "message".to_owned(), data, id: None });
    }

    async fn next(&mut self) -> Option<Result<StreamEvent, ClientError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(ev) = self.pending.take() {
                if let Some(item) = self.handle(ev) {
                    return Some(item);
                }
                continue;
            }
            match self.parser.next_event() {
                Err(msg) => {
                    self.done = true;
                    return Some(Err(ClientError::Protocol(format!("{} stream: {msg}", self.op_name))));
                }
                Ok(Some(ev)) => {
                    if let Some(item) = self.handle(ev) {
                        return Some(item);
                    }
                    continue;
                }
                Ok(None) => {}
            }
            let reason = match self.body.as_mut() {
                #[cfg(feature = "grpc")]
                Some(Body::Grpc(events)) => match events.next().await {
                    Some(Ok(data)) => {
                        if let Some(item) = self.handle(SseEvent { event: "message".to_owned(), data, id: None }) {
                            return Some(item);
                        }
                        continue;
                    }
                    Some(Err(status)) if crate::grpc::client::interrupted(&status) => {
                        format!("the gRPC stream from {} ended: {status}", self.url)
                    }
                    Some(Err(status)) => {
                        self.done = true;
                        return Some(Err(crate::grpc::client::error(&status)));
                    }
                    None => format!("{} closed the stream before the task ended", self.url),
                },
                Some(Body::Sse(body)) => match body.next().await {
                    Some(Ok(chunk)) => {
                        self.parser.push(&chunk);
                        continue;
                    }
                    Some(Err(e)) => {
                        format!("the connection to {} failed: {}", self.url, ClientError::transport(&self.url, e))
                    }
                    None => format!("{} closed the stream before the task ended", self.url),
                },
                None => format!("{} closed the stream before the task ended", self.url),
            };
            self.body = None;
            if self.ended_normally || self.single_shot {
                self.done = true;
                return None;
            }
            match self.resume(reason).await {
                Resume::Reconnected => continue,
                Resume::Final(ev) => {
                    self.done = true;
                    return Some(Ok(ev));
                }
                Resume::Failed(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }

    /// Turns one SSE event into a stream item; `None` skips it.
    fn handle(&mut self, ev: SseEvent) -> Option<Result<StreamEvent, ClientError>> {
        if ev.event == "error" {
            self.done = true;
            return Some(Err(parse_error_payload(&ev.data, None)));
        }
        if let Some(id) = &ev.id {
            let seq = id.parse::<u64>().ok();
            if let (true, Some(n), Some(last)) = (self.resumed, seq, self.last_seq) {
                if n <= last {
                    return None; // replayed twice: already delivered
                }
            }
            self.last_id = Some(id.clone());
            if seq.is_some() {
                self.last_seq = seq;
            }
        }
        self.events_this_conn += 1;
        match ev.event.as_str() {
            "gap" => {
                self.failures = 0;
                let (after, resumed_at) = gap_bounds(&ev.data);
                let data = String::from_utf8_lossy(&ev.data).into_owned();
                return Some(Ok(StreamEvent { id: ev.id, kind: StreamEventKind::Gap { after, resumed_at, data } }));
            }
            // The server cut a slow reader off; the close that follows is resumed.
            "lagged" => return None,
            // `message` and any other name: the data is an event (some servers name
            // their events by type).
            _ => {}
        }
        let what = format!("{} event", self.op_name);
        let decoded = match self.binding {
            Binding::JsonRpc => match wire::rpc_stream_item(&ev.data, self.op_name) {
                Ok(RpcStreamItem::Result(raw)) => decode_slice::<StreamResponse>(raw, "$.result"),
                Ok(RpcStreamItem::Error(e)) | Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            },
            Binding::HttpJson => decode_slice::<StreamResponse>(&ev.data, "$"),
            #[cfg(feature = "grpc")]
            Binding::Grpc => decode_slice::<StreamResponse>(&ev.data, "$"),
        };
        let resp = match decoded {
            Ok(d) => d.value,
            Err(e) => {
                self.done = true;
                return Some(Err(ClientError::decode(what, e)));
            }
        };
        let (task_id, ends) = match &resp {
            StreamResponse::Task(t) => (Some(&t.id), ends_stream(t.status.state)),
            StreamResponse::Message(_) => (None, true),
            StreamResponse::StatusUpdate(u) => (Some(&u.task_id), ends_stream(u.status.state)),
            StreamResponse::ArtifactUpdate(u) => (Some(&u.task_id), self.ended_normally),
        };
        if let Some(t) = task_id.filter(|t| !t.is_empty()) {
            if self.task_id.as_deref() != Some(t.as_str()) {
                self.task_id = Some(t.clone());
            }
        }
        self.ended_normally = ends;
        let snapshot_after_resume =
            self.resumed && self.events_this_conn == 1 && matches!(resp, StreamResponse::Task(_));
        if !snapshot_after_resume {
            self.failures = 0;
        }
        Some(Ok(StreamEvent { id: ev.id, kind: StreamEventKind::Response(resp) }))
    }

    async fn resume(&mut self, reason: String) -> Resume {
        let policy = self.client.options().resume.clone();
        let interrupted = |st: &State, reason: String| ClientError::StreamInterrupted {
            reason,
            last_event_id: st.last_id.clone(),
            task_id: st.task_id.clone(),
        };
        if !policy.enabled {
            return Resume::Failed(interrupted(self, format!("{reason} (resuming is disabled)")));
        }
        let Some(task_id) = self.task_id.clone() else {
            return Resume::Failed(interrupted(self, format!("{reason}, before the task id was known")));
        };
        let mut reason = reason;
        loop {
            if self.failures >= policy.reconnect.max_attempts {
                return Resume::Failed(interrupted(
                    self,
                    format!("{reason}; gave up after {} reconnection attempts", self.failures),
                ));
            }
            if self.failures > 0 {
                let delay = policy.reconnect.backoff(self.failures, &mut rand::rng());
                tokio::time::sleep(delay).await;
            }
            self.failures += 1;
            let mut req = SubscribeToTaskRequest::new(task_id.clone());
            let result =
                connect(&self.client, Operation::SubscribeToTask, &mut req, self.last_id.as_deref(), &self.call).await;
            match result {
                Ok(conn) => {
                    self.install(conn);
                    self.resumed = true;
                    return Resume::Reconnected;
                }
                Err(e) if e.kind() == Some(A2aErrorKind::UnsupportedOperation) => {
                    // The task reached a terminal state while we were away.
                    return match self.client.get_task(GetTaskRequest::new(task_id)).await {
                        Ok(task) => Resume::Final(StreamEvent {
                            id: None,
                            kind: StreamEventKind::Response(StreamResponse::Task(task)),
                        }),
                        Err(_) => Resume::Failed(e),
                    };
                }
                Err(e) if retryable(&e) => reason = e.to_string(),
                Err(e) => return Resume::Failed(e),
            }
        }
    }
}

/// The `after` and `resumedAt` numbers of a gap marker, when present.
fn gap_bounds(data: &[u8]) -> (Option<u64>, Option<u64>) {
    #[derive(serde::Deserialize)]
    struct Gap {
        after: Option<u64>,
        #[serde(rename = "resumedAt")]
        resumed_at: Option<u64>,
    }
    match serde_json::from_slice::<Gap>(data) {
        Ok(g) => (g.after, g.resumed_at),
        Err(_) => (None, None),
    }
}

/// Whether a failed reconnection is worth another try: a subscription is harmless to
/// repeat, so every transient failure of [`RetryPolicy`](crate::retry::RetryPolicy) is.
fn retryable(e: &ClientError) -> bool {
    use crate::retry::{Failure, Repeat, RetryPolicy};
    let failure = match e {
        ClientError::Transport { kind: super::TransportKind::Connect, .. } => Failure::NotSent,
        ClientError::Transport { .. } => Failure::Lost,
        ClientError::Status { http_status: Some(s), .. } => Failure::Status(*s),
        // A gRPC channel that could not reach the server.
        ClientError::Status { http_status: None, status: Some(s), .. } if s == "UNAVAILABLE" => Failure::Lost,
        _ => return false,
    };
    RetryPolicy::is_transient(failure, Repeat::Harmless)
}
