//! The A2A 1.0 client: agent-card discovery and interface selection, the eleven
//! operations over the JSON-RPC and HTTP+JSON bindings behind one API, safe retries,
//! and streams that resume after a dropped connection.
//!
//! ```no_run
//! # async fn demo() -> Result<(), agentproto_a2a::client::ClientError> {
//! use agentproto_a2a::client::{A2aClient, ClientOptions};
//! use agentproto_a2a::v1::{Message, Part, PartContent, Role, SendMessageRequest};
//! use futures::StreamExt;
//!
//! let client = A2aClient::discover("http://127.0.0.1:8080", ClientOptions::default()).await?;
//! let msg = Message::new("m-1", Role::User, vec![Part::new(PartContent::Text("hi".into()))]);
//! let mut events = client.send_streaming_message(SendMessageRequest::new(msg)).await?;
//! while let Some(event) = events.next().await {
//!     println!("{:?}", event?);
//! }
//! # Ok(()) }
//! ```
//!
//! **Tenants.** The tenant of the selected interface is written into every request
//! (JSON-RPC `params.tenant`, REST `/{tenant}` prefix), replacing whatever the caller put
//! there; with no tenant on the interface it is left out.
//!
//! **Timeouts.** `connect_timeout` bounds connecting; `idle_timeout` bounds every wait
//! for bytes (response headers included), so a blocking `SendMessage` that stays silent
//! longer than it fails — raise it, or send with `returnImmediately` and subscribe;
//! `request_timeout` (off by default) bounds a whole unary call and never applies to
//! streams.
//!
//! **Retries.** Read-only and idempotent operations (`GetTask`, `ListTasks`,
//! `CancelTask`, push-config get/list/delete, `GetExtendedAgentCard`, `SubscribeToTask`,
//! card discovery) are retried on connect errors and on 502/503/504. `SendMessage` and
//! `SendStreamingMessage` are retried on connect errors only (the request never left),
//! or like the others when the caller gave an idempotency key ([`CallOptions`]), sent
//! as the `Idempotency-Key` header (agentproto's extension; other servers ignore it).
//!
//! **Resuming streams.** See [`EventStream`].

mod card;
mod error;
mod sse;
mod stream;
mod wire;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use agentproto_codec::decode_slice;
use http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde::de::DeserializeOwned;

pub use card::{CARD_PATH, LEGACY_CARD_PATH};
pub use error::{A2aErrorKind, ClientError, TransportKind};
pub use stream::{EventStream, StreamEvent, StreamEventKind};
pub use wire::TenantRequest;

pub use crate::retry::RetryPolicy;
use crate::retry::{retry_after_seconds, Failure, Repeat};

use crate::v1::{self, AgentCard, Operation};

/// The protocol version this client speaks and sends in `A2A-Version`.
pub const PROTOCOL_VERSION: &str = "1.0";
/// The REST media type (A2A 1.0.1).
pub const A2A_JSON: &str = "application/a2a+json";

/// A protocol binding the client can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP (`JSONRPC`).
    JsonRpc,
    /// HTTP+JSON, the REST binding (`HTTP+JSON`).
    HttpJson,
    /// gRPC (`GRPC`), with the `grpc` feature.
    #[cfg(feature = "grpc")]
    Grpc,
}

impl Binding {
    /// Every binding this build of the client speaks.
    pub const ALL: &'static [Binding] = &[
        Binding::JsonRpc,
        Binding::HttpJson,
        #[cfg(feature = "grpc")]
        Binding::Grpc,
    ];

    /// The name agent cards use in `protocolBinding`.
    pub fn as_str(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::HttpJson => "HTTP+JSON",
            #[cfg(feature = "grpc")]
            Binding::Grpc => "GRPC",
        }
    }

    /// The binding a card's `protocolBinding` names (case-insensitively).
    pub fn from_card_name(name: &str) -> Option<Binding> {
        let name = name.trim();
        Binding::ALL.iter().copied().find(|b| b.as_str().eq_ignore_ascii_case(name))
    }
}

/// Credentials sent with every request.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// An API key in a header of the caller's choosing (e.g. `X-API-Key`).
    ApiKey {
        /// The header name.
        header: HeaderName,
        /// The key.
        value: String,
    },
}

/// How a broken stream is resumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePolicy {
    /// Resume at all (when false, a dropped stream ends with
    /// [`ClientError::StreamInterrupted`]).
    pub enabled: bool,
    /// The reconnections: `max_attempts` is how many in a row may fail (or bring
    /// nothing new) before giving up; the first is immediate, the others wait as the
    /// policy's backoff says.
    pub reconnect: RetryPolicy,
}

impl Default for ResumePolicy {
    /// Resuming on, five reconnections in a row, waits growing from up to 250 ms to at
    /// most 5 s.
    fn default() -> Self {
        ResumePolicy {
            enabled: true,
            reconnect: RetryPolicy {
                max_attempts: 5,
                initial_backoff: Duration::from_millis(250),
                max_backoff: Duration::from_secs(5),
            },
        }
    }
}

/// How the client connects and behaves.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Use this binding only (the first interface of the card with it); `None` takes the
    /// first interface whose binding and version the client supports.
    pub binding: Option<Binding>,
    /// Bound on establishing a connection.
    pub connect_timeout: Duration,
    /// Bound on any wait for the next bytes (headers or body), streams included.
    pub idle_timeout: Duration,
    /// Bound on a whole unary call; never applied to streams.
    pub request_timeout: Option<Duration>,
    /// Credentials for every request.
    pub auth: Option<Auth>,
    /// Extra headers for every request.
    pub headers: HeaderMap,
    /// Extension URIs to activate (sent in `A2A-Extensions`).
    pub extensions: Vec<String>,
    /// Retries of single requests.
    pub retry: RetryPolicy,
    /// Resumption of broken streams.
    pub resume: ResumePolicy,
    /// The largest SSE event (and line) accepted.
    pub max_event_bytes: usize,
    /// A preconfigured `reqwest` client (its own timeouts then apply instead of ours).
    pub http_client: Option<reqwest::Client>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            binding: None,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            request_timeout: None,
            auth: None,
            headers: HeaderMap::new(),
            extensions: Vec::new(),
            retry: RetryPolicy::default(),
            resume: ResumePolicy::default(),
            max_event_bytes: 16 << 20,
            http_client: None,
        }
    }
}

/// Per-call additions.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// Sent as `Idempotency-Key`; makes a `SendMessage` safe to retry.
    pub idempotency_key: Option<String>,
    /// Extra headers for this call only.
    pub headers: HeaderMap,
}

impl CallOptions {
    /// Options carrying an idempotency key.
    pub fn idempotent(key: impl Into<String>) -> Self {
        CallOptions { idempotency_key: Some(key.into()), headers: HeaderMap::new() }
    }
}

/// The interface the client talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SelectedInterface {
    /// Its absolute URL.
    pub url: String,
    /// Its binding.
    pub binding: Binding,
    /// The tenant copied into every request (empty: none).
    pub tenant: String,
    /// The protocol version it declares.
    pub protocol_version: String,
}

fn version_supported(v: &str) -> bool {
    let v = v.trim();
    v == PROTOCOL_VERSION || v.strip_prefix("1.0.").is_some_and(|patch| patch.chars().all(|c| c.is_ascii_digit()))
}

/// Picks the interface: the first entry of `supportedInterfaces` with a supported
/// binding (or the pinned one) and version 1.0. Relative URLs resolve against `base`.
pub fn select_interface(
    card: &AgentCard,
    pin: Option<Binding>,
    base: Option<&reqwest::Url>,
) -> Result<SelectedInterface, ClientError> {
    for iface in &card.supported_interfaces {
        let Some(binding) = Binding::from_card_name(&iface.protocol_binding) else { continue };
        if pin.is_some_and(|p| p != binding) || !version_supported(&iface.protocol_version) {
            continue;
        }
        // gRPC interfaces are usually given as a bare `host:port`.
        #[cfg(feature = "grpc")]
        if binding == Binding::Grpc {
            let url = if iface.url.contains("://") { iface.url.clone() } else { format!("http://{}", iface.url) };
            if let Err(e) = reqwest::Url::parse(&url) {
                return Err(ClientError::NoSupportedInterface(format!("gRPC interface URL `{}`: {e}", iface.url)));
            }
            return Ok(SelectedInterface {
                url,
                binding,
                tenant: iface.tenant.clone(),
                protocol_version: iface.protocol_version.clone(),
            });
        }
        let url = match reqwest::Url::parse(&iface.url) {
            Ok(u) => u,
            Err(_) => match base.map(|b| b.join(&iface.url)) {
                Some(Ok(u)) => u,
                _ => {
                    return Err(ClientError::NoSupportedInterface(format!(
                        "interface URL `{}` is not valid",
                        iface.url
                    )))
                }
            },
        };
        return Ok(SelectedInterface {
            url: url.to_string(),
            binding,
            tenant: iface.tenant.clone(),
            protocol_version: iface.protocol_version.clone(),
        });
    }
    let seen: Vec<String> = card
        .supported_interfaces
        .iter()
        .map(|i| format!("{} {} (version {:?})", i.protocol_binding, i.url, i.protocol_version))
        .collect();
    let wanted = match pin {
        Some(b) => b.as_str().to_owned(),
        None => Binding::ALL.iter().map(|b| b.as_str()).collect::<Vec<_>>().join(" or "),
    };
    Err(ClientError::NoSupportedInterface(format!(
        "wanted {wanted} with version {PROTOCOL_VERSION}; the card lists [{}]",
        seen.join(", ")
    )))
}

struct CardState {
    card: AgentCard,
    etag: Option<String>,
    iface: SelectedInterface,
}

struct Inner {
    http: reqwest::Client,
    opts: ClientOptions,
    card_url: Option<reqwest::Url>,
    state: RwLock<CardState>,
    next_id: AtomicU64,
    /// The server answered 405 to `POST …:subscribe`: use GET from now on.
    subscribe_with_get: AtomicBool,
    /// The gRPC channel and the URL it goes to, made at the first gRPC call.
    #[cfg(feature = "grpc")]
    grpc: std::sync::Mutex<Option<(String, tonic::transport::Channel)>>,
}

/// An A2A client bound to one agent. Cheap to clone; clones share the card and the
/// connection pool.
#[derive(Clone)]
pub struct A2aClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for A2aClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aClient").field("interface", &self.interface()).finish_non_exhaustive()
    }
}

fn header_value(v: &str, what: &str) -> Result<HeaderValue, ClientError> {
    HeaderValue::from_str(v).map_err(|_| ClientError::InvalidRequest(format!("{what} is not a valid header value")))
}

/// Whether an operation may be repeated when the first attempt's fate is unknown.
fn repeat(op: Operation, call: &CallOptions) -> Repeat {
    let harmless = match op {
        Operation::SendMessage | Operation::SendStreamingMessage => call.idempotency_key.is_some(),
        Operation::CreateTaskPushNotificationConfig => false,
        _ => true,
    };
    if harmless {
        Repeat::Harmless
    } else {
        Repeat::Unsafe
    }
}

/// Headers every request carries: version, extensions, auth, the configured extras
/// and the call's own.
fn common_headers(opts: &ClientOptions, call: &CallOptions) -> Result<HeaderMap, ClientError> {
    let mut h = opts.headers.clone();
    h.insert(HeaderName::from_static("a2a-version"), HeaderValue::from_static(PROTOCOL_VERSION));
    if !opts.extensions.is_empty() {
        h.insert(
            HeaderName::from_static("a2a-extensions"),
            header_value(&opts.extensions.join(", "), "A2A-Extensions")?,
        );
    }
    match &opts.auth {
        Some(Auth::Bearer(token)) => {
            let mut v = header_value(&format!("Bearer {token}"), "the bearer token")?;
            v.set_sensitive(true);
            h.insert(AUTHORIZATION, v);
        }
        Some(Auth::ApiKey { header, value }) => {
            let mut v = header_value(value, "the API key")?;
            v.set_sensitive(true);
            h.insert(header.clone(), v);
        }
        None => {}
    }
    if let Some(key) = &call.idempotency_key {
        h.insert(HeaderName::from_static("idempotency-key"), header_value(key, "the idempotency key")?);
    }
    for (name, value) in &call.headers {
        h.insert(name.clone(), value.clone());
    }
    Ok(h)
}

/// Sends a request, repeating it as the policy says for a request that `repeat`
/// describes (see [`crate::retry`]). The last answer is returned whatever its status;
/// the caller reads errors out of it.
async fn send_retrying(
    policy: &RetryPolicy,
    repeat: Repeat,
    url: &str,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, ClientError> {
    let mut attempt = 1;
    loop {
        let delay = match build().send().await {
            Ok(resp) if resp.status().is_success() => return Ok(resp),
            Ok(resp) => {
                let asked = retry_after_seconds(resp.headers());
                match policy.next_delay(attempt, Failure::Status(resp.status().as_u16()), repeat, asked) {
                    Some(delay) => delay,
                    None => return Ok(resp),
                }
            }
            Err(e) => {
                let failure = if e.is_connect() { Failure::NotSent } else { Failure::Lost };
                match policy.next_delay(attempt, failure, repeat, None) {
                    Some(delay) => delay,
                    None => return Err(ClientError::transport(url, e)),
                }
            }
        };
        tokio::time::sleep(delay).await;
        attempt += 1;
    }
}

impl A2aClient {
    fn build(
        opts: ClientOptions,
        card: AgentCard,
        etag: Option<String>,
        card_url: Option<reqwest::Url>,
    ) -> Result<Self, ClientError> {
        let iface = select_interface(&card, opts.binding, card_url.as_ref())?;
        let http = match &opts.http_client {
            Some(c) => c.clone(),
            None => Self::http_client(&opts)?,
        };
        Ok(A2aClient {
            inner: Arc::new(Inner {
                http,
                opts,
                card_url,
                state: RwLock::new(CardState { card, etag, iface }),
                next_id: AtomicU64::new(1),
                subscribe_with_get: AtomicBool::new(false),
                #[cfg(feature = "grpc")]
                grpc: std::sync::Mutex::new(None),
            }),
        })
    }

    fn http_client(opts: &ClientOptions) -> Result<reqwest::Client, ClientError> {
        reqwest::Client::builder()
            .connect_timeout(opts.connect_timeout)
            .read_timeout(opts.idle_timeout)
            .build()
            .map_err(|e| ClientError::InvalidRequest(format!("cannot build the HTTP client: {e}")))
    }

    /// A client for a card obtained elsewhere (configuration, a registry). Relative
    /// interface URLs are refused; [`A2aClient::refresh_card`] has nothing to revalidate.
    pub fn from_card(card: AgentCard, opts: ClientOptions) -> Result<Self, ClientError> {
        Self::build(opts, card, None, None)
    }

    /// The agent card in use.
    pub fn card(&self) -> AgentCard {
        self.read_state().card.clone()
    }

    /// The card's `ETag`, when discovery saw one.
    pub fn card_etag(&self) -> Option<String> {
        self.read_state().etag.clone()
    }

    /// The URL the card was fetched from, when discovered.
    pub fn card_url(&self) -> Option<&str> {
        self.inner.card_url.as_ref().map(reqwest::Url::as_str)
    }

    /// The interface in use.
    pub fn interface(&self) -> SelectedInterface {
        self.read_state().iface.clone()
    }

    fn read_state(&self) -> std::sync::RwLockReadGuard<'_, CardState> {
        self.inner.state.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn options(&self) -> &ClientOptions {
        &self.inner.opts
    }

    /// The gRPC channel to `url`, shared by every call (and remade if the selected
    /// interface moved).
    #[cfg(feature = "grpc")]
    fn grpc_channel(&self, url: &str) -> Result<tonic::transport::Channel, ClientError> {
        let mut slot = self.inner.grpc.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*slot {
            Some((u, channel)) if u == url => Ok(channel.clone()),
            _ => {
                let channel = crate::grpc::client::channel(url, self.options())?;
                *slot = Some((url.to_owned(), channel.clone()));
                Ok(channel)
            }
        }
    }

    fn common_headers(&self, call: &CallOptions) -> Result<HeaderMap, ClientError> {
        common_headers(self.options(), call)
    }

    async fn send_retrying(
        &self,
        repeat: Repeat,
        url: &str,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ClientError> {
        send_retrying(&self.options().retry, repeat, url, build).await
    }

    /// One unary call on the selected binding: `req` gets the tenant, the answer is
    /// decoded as `T`.
    async fn unary<R: TenantRequest, T: DeserializeOwned + agentproto_codec::Wants>(
        &self,
        op: Operation,
        mut req: R,
        call: &CallOptions,
    ) -> Result<T, ClientError> {
        let iface = self.interface();
        req.set_tenant(&iface.tenant);
        let headers = self.common_headers(call)?;
        let repeat = repeat(op, call);
        let what = format!("{} result", op.name());
        let empty_ok = op == Operation::DeleteTaskPushNotificationConfig;
        let timeout = self.options().request_timeout;
        let http = &self.inner.http;
        match iface.binding {
            Binding::JsonRpc => {
                let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
                let body = wire::rpc_request(id, op, &req)?;
                let resp = self
                    .send_retrying(repeat, &iface.url, || {
                        let mut b = http
                            .post(&iface.url)
                            .headers(headers.clone())
                            .header(CONTENT_TYPE, "application/json")
                            .header(ACCEPT, "application/json")
                            .body(body.clone());
                        if let Some(t) = timeout {
                            b = b.timeout(t);
                        }
                        b
                    })
                    .await?;
                let status = resp.status().as_u16();
                let bytes = resp.bytes().await.map_err(|e| ClientError::transport(&iface.url, e))?;
                match wire::rpc_result(&bytes, id, &what, empty_ok) {
                    Err(ClientError::Decode { .. } | ClientError::Protocol(_)) if !(200..300).contains(&status) => {
                        Err(error::parse_error_payload(&bytes, Some(status)))
                    }
                    other => other,
                }
            }
            Binding::HttpJson => {
                let rc = wire::rest_call(&iface.url, op, &iface.tenant, &req)?;
                let body = if rc.body {
                    Some(serde_json::to_vec(&req).map_err(|e| ClientError::InvalidRequest(e.to_string()))?)
                } else {
                    None
                };
                let resp = self
                    .send_retrying(repeat, &rc.url, || {
                        let mut b = http
                            .request(rc.method.clone(), &rc.url)
                            .headers(headers.clone())
                            .header(ACCEPT, format!("{A2A_JSON}, application/json"));
                        if let Some(body) = &body {
                            b = b.header(CONTENT_TYPE, A2A_JSON).body(body.clone());
                        }
                        if let Some(t) = timeout {
                            b = b.timeout(t);
                        }
                        b
                    })
                    .await?;
                let status = resp.status().as_u16();
                let bytes = resp.bytes().await.map_err(|e| ClientError::transport(&rc.url, e))?;
                if !(200..300).contains(&status) {
                    return Err(error::parse_error_payload(&bytes, Some(status)));
                }
                let bytes: &[u8] = if empty_ok && bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
                decode_slice::<T>(bytes, "$").map(|d| d.value).map_err(|e| ClientError::decode(what, e))
            }
            #[cfg(feature = "grpc")]
            Binding::Grpc => {
                let json = serde_json::to_vec(&req).map_err(|e| ClientError::InvalidRequest(e.to_string()))?;
                let channel = self.grpc_channel(&iface.url)?;
                let policy = &self.options().retry;
                let answer = crate::grpc::client::unary(policy, repeat, channel, op, json, headers, timeout).await?;
                decode_slice::<T>(&answer, "$").map(|d| d.value).map_err(|e| ClientError::decode(what, e))
            }
        }
    }

    /// `SendMessage`: the agent answers with a Task or a direct Message.
    pub async fn send_message(&self, req: v1::SendMessageRequest) -> Result<v1::SendMessageResponse, ClientError> {
        self.send_message_with(req, &CallOptions::default()).await
    }

    /// `SendMessage` with per-call options (an idempotency key makes it retryable).
    pub async fn send_message_with(
        &self,
        req: v1::SendMessageRequest,
        call: &CallOptions,
    ) -> Result<v1::SendMessageResponse, ClientError> {
        self.unary(Operation::SendMessage, req, call).await
    }

    /// `GetTask`.
    pub async fn get_task(&self, req: v1::GetTaskRequest) -> Result<v1::Task, ClientError> {
        self.unary(Operation::GetTask, req, &CallOptions::default()).await
    }

    /// `ListTasks`.
    pub async fn list_tasks(&self, req: v1::ListTasksRequest) -> Result<v1::ListTasksResponse, ClientError> {
        self.unary(Operation::ListTasks, req, &CallOptions::default()).await
    }

    /// `CancelTask` (idempotent, so retried like a read).
    pub async fn cancel_task(&self, req: v1::CancelTaskRequest) -> Result<v1::Task, ClientError> {
        self.unary(Operation::CancelTask, req, &CallOptions::default()).await
    }

    /// `CreateTaskPushNotificationConfig`: the config as stored, with its `id`.
    pub async fn create_task_push_notification_config(
        &self,
        req: v1::TaskPushNotificationConfig,
    ) -> Result<v1::TaskPushNotificationConfig, ClientError> {
        self.unary(Operation::CreateTaskPushNotificationConfig, req, &CallOptions::default()).await
    }

    /// `GetTaskPushNotificationConfig`.
    pub async fn get_task_push_notification_config(
        &self,
        req: v1::GetTaskPushNotificationConfigRequest,
    ) -> Result<v1::TaskPushNotificationConfig, ClientError> {
        self.unary(Operation::GetTaskPushNotificationConfig, req, &CallOptions::default()).await
    }

    /// `ListTaskPushNotificationConfigs`.
    pub async fn list_task_push_notification_configs(
        &self,
        req: v1::ListTaskPushNotificationConfigsRequest,
    ) -> Result<v1::ListTaskPushNotificationConfigsResponse, ClientError> {
        self.unary(Operation::ListTaskPushNotificationConfigs, req, &CallOptions::default()).await
    }

    /// `DeleteTaskPushNotificationConfig` (idempotent).
    pub async fn delete_task_push_notification_config(
        &self,
        req: v1::DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), ClientError> {
        self.unary::<_, v1::Empty>(Operation::DeleteTaskPushNotificationConfig, req, &CallOptions::default())
            .await
            .map(|_| ())
    }

    /// `GetExtendedAgentCard`. It needs the credentials the public card asks for; the
    /// answer is returned, not substituted for the card in use.
    pub async fn get_extended_agent_card(&self) -> Result<AgentCard, ClientError> {
        self.unary(Operation::GetExtendedAgentCard, v1::GetExtendedAgentCardRequest::default(), &CallOptions::default())
            .await
    }

    /// `SendStreamingMessage`: the events of the answer, resumed through
    /// `SubscribeToTask` if the connection drops (see [`EventStream`]). Errors before
    /// the first event (HTTP or JSON-RPC errors) are returned here.
    pub async fn send_streaming_message(&self, req: v1::SendMessageRequest) -> Result<EventStream, ClientError> {
        self.send_streaming_message_with(req, &CallOptions::default()).await
    }

    /// `SendStreamingMessage` with per-call options.
    pub async fn send_streaming_message_with(
        &self,
        req: v1::SendMessageRequest,
        call: &CallOptions,
    ) -> Result<EventStream, ClientError> {
        let task = req.message.task_id.clone();
        stream::open(self.clone(), Operation::SendStreamingMessage, req, None, call.clone(), Some(task)).await
    }

    /// `SubscribeToTask`: the task's events, the current Task first.
    pub async fn subscribe_to_task(&self, req: v1::SubscribeToTaskRequest) -> Result<EventStream, ClientError> {
        self.subscribe_to_task_from(req, None).await
    }

    /// `SubscribeToTask` sending `Last-Event-ID` (agentproto's resumable-stream
    /// extension): a server that keeps an event log replays what followed that id.
    pub async fn subscribe_to_task_from(
        &self,
        req: v1::SubscribeToTaskRequest,
        last_event_id: Option<String>,
    ) -> Result<EventStream, ClientError> {
        let task = req.id.clone();
        stream::open(self.clone(), Operation::SubscribeToTask, req, last_event_id, CallOptions::default(), Some(task))
            .await
    }
}
