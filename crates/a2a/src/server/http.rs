//! The HTTP face of the server: the agent card, the JSON-RPC binding and the HTTP+JSON
//! binding, both with SSE streams, on one axum router.
//!
//! REST routes are not written per operation: a path is matched against the
//! `google.api.http` rules of the generated operation table, its variables and query
//! parameters become request fields, and the request is decoded by the same generated
//! codec the JSON-RPC binding uses. Both bindings then call the same [`Core`].

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agentproto_jsonrpc::{DecodeOptions, EnvelopeErrorKind, Message as RpcMessage, RequestId};
use axum::body::{Body, Bytes};
use axum::extract::{Request as HttpRequest, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures::{Stream, StreamExt};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::errors::{A2aError, ErrorKind, ErrorTable};
use crate::executor::AgentExecutor;
use crate::protojson::lower_camel;
use crate::server::auth::percent_decode;
use crate::server::core::{Answer, CallContext, Core, EventStream, StreamOut};
use crate::server::layers::Authentication;
use crate::v1::{Operation, QueryKind, Request, QUERY_FALSE, QUERY_TRUE};

/// The media type of A2A 1.0.1 bodies; `application/json` is accepted as well.
pub const A2A_JSON: &str = "application/a2a+json";

/// What a request without an `A2A-Version` is taken to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingVersion {
    /// A2A 0.3, as the specification requires (answered `-32009` when 0.3 is not served).
    #[default]
    V0_3,
    /// A2A 1.0: a lenient mode for peers and test kits that omit the header.
    V1_0,
}

/// Options of the HTTP layer.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where the JSON-RPC binding is served (`/`).
    pub jsonrpc_path: String,
    /// The prefix of the HTTP+JSON routes (`/a2a/rest`; `""` for the root).
    pub rest_prefix: String,
    /// Which A2A revision's HTTP statuses errors use (1.0.1 unless set).
    pub error_table: ErrorTable,
    /// Largest request body, in bytes; larger ones get 413 (a `Content-Length` over it
    /// before the body is read).
    pub max_body_bytes: usize,
    /// A request's whole body must arrive within this, once its handler reads it;
    /// otherwise 408 and the connection is closed.
    pub body_timeout: Duration,
    /// A request's head (request line and headers) must arrive within this from its
    /// first byte; otherwise the connection is closed. Applies under [`crate::server::A2aServer::serve`].
    pub header_timeout: Duration,
    /// A connection with no request in progress is closed after this long without a new
    /// one (before the first request too). Applies under [`crate::server::A2aServer::serve`].
    pub idle_timeout: Duration,
    /// The most connections served at once; one more is answered 503 and closed.
    /// Applies under [`crate::server::A2aServer::serve`].
    pub max_connections: usize,
    /// How long a shutdown waits for requests in progress before it closes their
    /// connections. Applies under [`crate::server::A2aServer::serve`].
    pub shutdown_timeout: Duration,
    /// What a request without `A2A-Version` is taken to be.
    pub missing_version: MissingVersion,
    /// A header that names the tenant (for deployments that route tenants by header).
    pub tenant_header: Option<String>,
    /// How often an idle SSE stream gets a `: keep-alive` comment.
    pub keep_alive: Duration,
    /// `Cache-Control: max-age` of the agent card, in seconds.
    pub card_max_age: u32,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            jsonrpc_path: "/".into(),
            rest_prefix: "/a2a/rest".into(),
            error_table: ErrorTable::V1_0_1,
            max_body_bytes: 4 << 20,
            body_timeout: Duration::from_secs(60),
            header_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
            shutdown_timeout: Duration::from_secs(10),
            missing_version: MissingVersion::V0_3,
            tenant_header: None,
            keep_alive: Duration::from_secs(15),
            card_max_age: 300,
        }
    }
}

pub(crate) struct App<E> {
    pub(crate) core: Arc<Core<E>>,
    pub(crate) options: HttpOptions,
    card: Bytes,
    etag: String,
    /// When this card began to be served (Unix seconds), and as an HTTP date.
    modified: i64,
    last_modified: String,
}

impl<E: AgentExecutor> App<E> {
    pub(crate) fn new(core: Arc<Core<E>>, options: HttpOptions) -> Arc<Self> {
        let card = Bytes::from(serde_json::to_vec(&core.options.card).unwrap_or_default());
        let digest = Sha256::digest(&card);
        let etag = format!("\"{}\"", digest.iter().take(12).map(|b| format!("{b:02x}")).collect::<String>());
        // The card is fixed for the life of the server: it was last modified when the
        // server was built.
        let modified = crate::Timestamp::now().secs;
        let last_modified = crate::protojson::http_date(modified);
        Arc::new(App { core, options, card, etag, modified, last_modified })
    }
}

/// The router of an application.
pub(crate) fn router<E: AgentExecutor>(app: Arc<App<E>>) -> Router {
    let jsonrpc_path = app.options.jsonrpc_path.clone();
    Router::new()
        .route("/.well-known/agent-card.json", get(card::<E>))
        .route("/.well-known/agent.json", get(card::<E>))
        .route(&jsonrpc_path, post(jsonrpc::<E>))
        .fallback(rest::<E>)
        .with_state(app)
}

async fn card<E: AgentExecutor>(State(app): State<Arc<App<E>>>, headers: HeaderMap) -> Response {
    // RFC 9110 §13.2.2: If-None-Match decides when present; If-Modified-Since otherwise.
    let fresh = match headers.get(http::header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) {
        Some(v) => v.split(',').any(|t| t.trim() == app.etag || t.trim() == "*"),
        None => headers
            .get(http::header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(crate::protojson::parse_http_date)
            .is_some_and(|since| since >= app.modified),
    };
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(http::header::CONTENT_TYPE, "application/json")], app.card.clone()).into_response()
    };
    let h = resp.headers_mut();
    h.insert(http::header::ETAG, HeaderValue::from_str(&app.etag).unwrap_or(HeaderValue::from_static("\"0\"")));
    if let Ok(v) = HeaderValue::from_str(&app.last_modified) {
        h.insert(http::header::LAST_MODIFIED, v);
    }
    h.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_str(&format!("public, max-age={}", app.options.card_max_age))
            .unwrap_or(HeaderValue::from_static("no-cache")),
    );
    resp
}

/// The protocol version a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V03,
}

/// The two bindings this layer serves; they do not serve the same versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// 1.0, and 0.3 through its own method names (`message/send`, …).
    JsonRpc,
    /// 1.0 only (0.3's REST paths were different: `/v1/message:send`).
    Rest,
}

impl Binding {
    fn supported_versions(self) -> &'static str {
        match self {
            Binding::JsonRpc => "1.0, 0.3",
            Binding::Rest => "1.0",
        }
    }
}

fn version<E>(app: &App<E>, headers: &HeaderMap, query: Option<&str>, binding: Binding) -> Result<Version, A2aError> {
    let header = headers.get("a2a-version").and_then(|v| v.to_str().ok()).map(str::trim).map(str::to_owned);
    let param = query.and_then(|q| {
        q.split('&').find_map(|p| {
            p.split_once('=').filter(|(k, _)| k.eq_ignore_ascii_case("A2A-Version")).map(|(_, v)| percent_decode(v))
        })
    });
    let v = header.or(param).unwrap_or_default();
    let mut parts = v.split('.');
    match (parts.next(), parts.next()) {
        (Some(""), None) => Ok(match app.options.missing_version {
            MissingVersion::V0_3 => Version::V03,
            MissingVersion::V1_0 => Version::V1,
        }),
        (Some("1"), Some("0")) => Ok(Version::V1),
        (Some("0"), Some("3")) => Ok(Version::V03),
        _ => {
            let served = match binding {
                Binding::JsonRpc => "1.0 (with A2A-Version: 1.0) and 0.3 (without the header)",
                Binding::Rest => "1.0",
            };
            Err(A2aError::new(ErrorKind::VersionNotSupported)
                .with_message(format!("A2A version {v:?} is not supported; this interface serves {served}"))
                .with("version", v)
                .with("supportedVersions", binding.supported_versions()))
        }
    }
}

/// A request taken as 0.3 (no `A2A-Version`) that 0.3 cannot answer.
fn v03_refused(binding: Binding, method: &str) -> A2aError {
    let message = match binding {
        Binding::JsonRpc => format!(
            "a request without an A2A-Version header is A2A 0.3, and {method:?} is not a 0.3 method; this interface \
             serves 0.3 under its own method names (message/send, message/stream, tasks/get, tasks/cancel, \
             tasks/resubscribe, tasks/pushNotificationConfig/*, agent/getAuthenticatedExtendedCard) and 1.0 with \
             A2A-Version: 1.0"
        ),
        Binding::Rest => "a request without an A2A-Version header is A2A 0.3, which the HTTP+JSON interface does not \
                          serve (it serves 1.0); send A2A-Version: 1.0"
            .to_owned(),
    };
    A2aError::new(ErrorKind::VersionNotSupported)
        .with_message(message)
        .with("version", "0.3")
        .with("supportedVersions", binding.supported_versions())
}

/// The verdict of the authentication layer (anonymous without one), then the tenant:
/// from the path, the request, a header, or the credential.
pub(crate) fn call_context<E>(
    app: &App<E>,
    parts: &http::request::Parts,
    path_tenant: Option<&str>,
    request_tenant: &str,
) -> Result<CallContext, A2aError> {
    call_context_of(app, &parts.headers, parts.extensions.get::<Authentication>(), path_tenant, request_tenant)
}

/// [`call_context`] from a request's headers and the authentication layer's verdict.
pub(crate) fn call_context_of<E>(
    app: &App<E>,
    headers: &HeaderMap,
    authentication: Option<&Authentication>,
    path_tenant: Option<&str>,
    request_tenant: &str,
) -> Result<CallContext, A2aError> {
    let principal = match authentication.map(Authentication::outcome) {
        Some(Ok(principal)) => principal.cloned(),
        Some(Err(e)) => return Err(e.clone()),
        None => None,
    };
    let header_tenant = app
        .options
        .tenant_header
        .as_deref()
        .and_then(|h| headers.get(h))
        .and_then(|v| v.to_str().ok())
        .filter(|s| !s.is_empty());
    let mut asked: Option<&str> = None;
    for t in [path_tenant, (!request_tenant.is_empty()).then_some(request_tenant), header_tenant].into_iter().flatten()
    {
        match asked {
            Some(prev) if prev != t => {
                return Err(A2aError::new(ErrorKind::InvalidParams)
                    .with_message(format!("the request names two tenants, {prev:?} and {t:?}"))
                    .with("path", "$.params.tenant"));
            }
            _ => asked = Some(t),
        }
    }
    let bound = principal.as_ref().and_then(|p| p.tenant.as_deref());
    let tenant = match (asked, bound) {
        (Some(a), Some(b)) if a != b => {
            return Err(A2aError::new(ErrorKind::PermissionDenied)
                .with_message(format!("these credentials do not give access to tenant {a:?}")))
        }
        (Some(a), _) => a.to_owned(),
        (None, Some(b)) => b.to_owned(),
        (None, None) => String::new(),
    };
    let last_event_id = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok());
    let idempotency_key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty() && s.len() <= 255);
    let extensions = headers
        .get_all("a2a-extensions")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    Ok(CallContext { tenant, principal, last_event_id, idempotency_key, extensions })
}

fn content_type_ok(headers: &HeaderMap) -> bool {
    match headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
        None => true,
        Some(ct) => {
            let base = ct.split(';').next().unwrap_or("").trim();
            base.eq_ignore_ascii_case("application/json") || base.eq_ignore_ascii_case(A2A_JSON)
        }
    }
}

/// Reads a request body within the limits: refused at once (before anything is read,
/// so no `100 Continue` goes out) when its `Content-Length` is over the size limit;
/// 413 as soon as more arrives than the limit, 408 when the whole body does not arrive
/// within the body timeout, 400 when its framing is broken.
async fn read_body<E>(app: &App<E>, headers: &HeaderMap, body: Body) -> Result<Bytes, A2aError> {
    let max = app.options.max_body_bytes;
    let too_large = || {
        A2aError::new(ErrorKind::PayloadTooLarge).with_message(format!("the request body is larger than {max} bytes"))
    };
    let declared = headers.get(http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    if declared.is_some_and(|n: u64| n > max as u64) {
        return Err(too_large());
    }
    let read = async {
        let mut stream = body.into_data_stream();
        // Sized once from the declared length (already checked against the limit), so a
        // large body is not copied from buffer to doubled buffer as it arrives.
        let mut out = bytes::BytesMut::with_capacity(declared.map_or(0, |n| n as usize));
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| {
                A2aError::new(ErrorKind::MalformedBody).with_message(format!("the request body could not be read: {e}"))
            })?;
            if out.len() + chunk.len() > max {
                return Err(too_large());
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out.freeze())
    };
    let timeout = app.options.body_timeout;
    tokio::time::timeout(timeout, read).await.unwrap_or_else(|_| {
        Err(A2aError::new(ErrorKind::RequestTimeout)
            .with_message(format!("the request body did not arrive within {} ms", timeout.as_millis())))
    })
}

/// How deep a request object may nest (itself at level 1), on both bindings: the
/// JSON-RPC envelope allows [`agentproto_jsonrpc::message::MAX_NESTING_DEPTH`] levels with
/// itself at level 1, which leaves one less for its `params`.
pub const MAX_REQUEST_DEPTH: usize = agentproto_jsonrpc::message::MAX_NESTING_DEPTH - 1;

/// Refuses a request object nested deeper than [`MAX_REQUEST_DEPTH`] (a parse error,
/// as the JSON-RPC envelope reports it).
fn check_depth(json: &[u8]) -> Result<(), A2aError> {
    if agentproto_jsonrpc::nesting_exceeds(json, MAX_REQUEST_DEPTH) {
        return Err(A2aError::new(ErrorKind::Parse).with_message(format!(
            "parse error: the request nests arrays and objects deeper than {MAX_REQUEST_DEPTH} levels"
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// JSON-RPC

/// A request id as it is written back: the JSON text the request gave (a string, an
/// integer of any size, any other number, or `null`), so that the answer carries
/// exactly that value, as JSON-RPC 2.0 requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RpcId(String);

impl RpcId {
    /// `null`: the id of an answer to a request whose id could not be read.
    pub(crate) fn null() -> Self {
        RpcId("null".to_owned())
    }

    fn from_id(id: &RequestId) -> Self {
        RpcId(serde_json::to_string(id).unwrap_or_else(|_| "null".to_owned()))
    }

    /// The id's JSON text.
    pub(crate) fn json(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

fn rpc_error_body(id: Option<&RpcId>, error: Value) -> Vec<u8> {
    let mut out = br#"{"jsonrpc":"2.0","id":"#.to_vec();
    out.extend(id.map_or(&b"null"[..], RpcId::json));
    out.extend(br#","error":"#);
    out.extend(serde_json::to_vec(&error).unwrap_or_default());
    out.push(b'}');
    out
}

fn rpc_result_body(id: &RpcId, result: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(result.len() + 40);
    out.extend(br#"{"jsonrpc":"2.0","id":"#);
    out.extend(id.json());
    out.extend(br#","result":"#);
    out.extend(result);
    out.push(b'}');
    out
}

fn json_response(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
    (status, [(http::header::CONTENT_TYPE, content_type)], body).into_response()
}

/// The HTTP status a JSON-RPC error travels with: 200, except where the HTTP meaning
/// matters to proxies and clients (authentication, size, time).
pub(crate) fn rpc_http_status(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorKind::PermissionDenied => StatusCode::FORBIDDEN,
        ErrorKind::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorKind::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
        ErrorKind::MalformedBody => StatusCode::BAD_REQUEST,
        ErrorKind::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::OK,
    }
}

pub(crate) fn rpc_error_response(e: &A2aError, id: Option<&RpcId>) -> Response {
    let mut resp = json_response(rpc_http_status(e.kind), "application/json", rpc_error_body(id, e.jsonrpc_error()));
    decorate_error(&mut resp, e);
    resp
}

/// Headers some errors carry whatever the binding: a challenge with 401, and
/// `Connection: close` when the request could not be read to its end.
pub(crate) fn decorate_error(resp: &mut Response, e: &A2aError) {
    match e.kind {
        ErrorKind::Unauthenticated => {
            resp.headers_mut().insert(http::header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        ErrorKind::PayloadTooLarge | ErrorKind::RequestTimeout | ErrorKind::MalformedBody => {
            resp.headers_mut().insert(http::header::CONNECTION, HeaderValue::from_static("close"));
        }
        _ => {}
    }
}

/// A call read from a JSON-RPC body: its id (`None` for a notification), method and params.
struct RpcCall {
    id: Option<RpcId>,
    method: String,
    params: Option<Box<serde_json::value::RawValue>>,
}

/// Reads the envelope. A request's `id` may be any JSON-RPC 2.0 id: a string, `null`,
/// or any number (the envelope decoder keeps only 64-bit integers, so other numbers are
/// taken aside here and echoed as they were written).
fn read_envelope(body: &[u8]) -> Result<RpcCall, (A2aError, Option<RpcId>)> {
    let options = DecodeOptions::default().allow_null_id(true);
    let (decoded, raw_id) = match RpcMessage::decode_with(body, &options) {
        Err(e) if e.kind() == EnvelopeErrorKind::InvalidRequest && e.path() == "$.id" => match numeric_id(body) {
            Some((raw, rebuilt)) => (RpcMessage::decode_with(&rebuilt, &options), Some(raw)),
            None => (Err(e), None),
        },
        other => (other, None),
    };
    let echo = |id: Option<&RequestId>| match (&raw_id, id) {
        (Some(raw), Some(_)) => Some(raw.clone()),
        (_, id) => id.map(RpcId::from_id),
    };
    match decoded {
        Ok(RpcMessage::Request { id, method, params }) => Ok(RpcCall { id: echo(Some(&id)), method, params }),
        Ok(RpcMessage::Notification { method, params }) => Ok(RpcCall { id: None, method, params }),
        Ok(RpcMessage::Response { .. }) => Err((
            A2aError::new(ErrorKind::InvalidRequest).with_message("a JSON-RPC request is expected, not a response"),
            None,
        )),
        Err(e) => {
            let err = match e.code().0 {
                -32700 => A2aError::new(ErrorKind::Parse),
                -32602 => A2aError::new(ErrorKind::InvalidParams),
                _ => A2aError::new(ErrorKind::InvalidRequest),
            }
            .with_message(e.message().to_owned());
            Err((err, echo(e.id())))
        }
    }
}

/// When the body is an object whose one `id` member is a number: that number's text,
/// and the body with the id replaced by `0` (for the envelope decoder).
fn numeric_id(body: &[u8]) -> Option<(RpcId, Vec<u8>)> {
    let raw: &serde_json::value::RawValue = serde_json::from_slice(body).ok()?;
    let members = agentproto_codec::de::object_members(raw).ok()?;
    let mut ids = members.iter().filter(|(k, _)| k == "id");
    let (_, id) = ids.next()?;
    if ids.next().is_some() || !id.get().starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return None;
    }
    let mut out = Vec::with_capacity(body.len());
    out.push(b'{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend(serde_json::to_vec(key.as_ref()).ok()?);
        out.push(b':');
        out.extend(if key == "id" { "0" } else { value.get() }.as_bytes());
    }
    out.push(b'}');
    Some((RpcId(id.get().to_owned()), out))
}

async fn jsonrpc<E: AgentExecutor>(State(app): State<Arc<App<E>>>, req: HttpRequest) -> Response {
    let (parts, body) = req.into_parts();
    let body = match read_body(&app, &parts.headers, body).await {
        Ok(b) => b,
        Err(e) => return rpc_error_response(&e, None),
    };
    let call = read_envelope(&body);
    // The envelope holds its own copy of the params: the body can go before the call runs.
    drop(body);
    let call = match call {
        Ok(call) => call,
        Err((e, id)) => return rpc_error_response(&e, id.as_ref()),
    };
    match call.id.clone() {
        Some(id) => rpc_call(&app, &parts, id, call).await,
        None => {
            // A notification (JSON-RPC 2.0 §4.1): processed like a request, never
            // answered, whatever its outcome; the HTTP exchange ends with 204.
            drop(rpc_call(&app, &parts, RpcId::null(), call).await);
            StatusCode::NO_CONTENT.into_response()
        }
    }
}

async fn rpc_call<E: AgentExecutor>(
    app: &Arc<App<E>>,
    parts: &http::request::Parts,
    id: RpcId,
    call: RpcCall,
) -> Response {
    let RpcCall { method, params, .. } = call;
    if !content_type_ok(&parts.headers) {
        return rpc_error_response(
            &A2aError::new(ErrorKind::InvalidRequest)
                .with_message("Content-Type must be application/json or application/a2a+json"),
            Some(&id),
        );
    }
    let raw = params.as_ref().map(|p| p.get().as_bytes()).unwrap_or(b"{}");
    let request = match decode_call(app, parts, &id, &method, raw).await {
        Ok(request) => request,
        Err(response) => return response,
    };
    // The decoded request owns what it needs; the params text goes before the call runs.
    drop(params);
    let cx = match call_context(app, parts, None, request.tenant()) {
        Ok(cx) => cx,
        Err(e) => return rpc_error_response(&e, Some(&id)),
    };
    match app.core.handle(cx, request).await {
        Ok(Answer::Value(bytes)) => json_response(StatusCode::OK, "application/json", rpc_result_body(&id, &bytes)),
        Ok(Answer::Stream(events)) => {
            let id2 = id.clone();
            sse(app, events, move |item| match item {
                StreamOut::Event { seq, body } => Some(frame(seq, None, &rpc_result_body(&id2, &body))),
                StreamOut::Gap { after, resumed_at } => Some(frame(
                    None,
                    Some("gap"),
                    json!({"after": after, "resumedAt": resumed_at}).to_string().as_bytes(),
                )),
                StreamOut::Lagged => Some(frame(None, Some("lagged"), b"{}")),
                StreamOut::Error(e) => Some(frame(None, None, &rpc_error_body(Some(&id2), e.jsonrpc_error()))),
            })
            .await
            .unwrap_or_else(|e| rpc_error_response(&e, Some(&id)))
        }
        Err(e) => rpc_error_response(&e, Some(&id)),
    }
}

/// The JSON-RPC call's version, method and params checked and decoded; an `Err` is the
/// whole answer (an error, or a 0.3 call answered by the compat layer).
async fn decode_call<E: AgentExecutor>(
    app: &Arc<App<E>>,
    parts: &http::request::Parts,
    id: &RpcId,
    method: &str,
    raw: &[u8],
) -> Result<Request, Response> {
    let query = parts.uri.query();
    match version(app, &parts.headers, query, Binding::JsonRpc) {
        Ok(Version::V1) => {}
        Ok(Version::V03) => match crate::compat::v03::method(method) {
            // A 0.3 method name: answered in 0.3 by the compat layer.
            Some(m) => return Err(crate::compat::serve_v03(app, parts, id.clone(), m, raw).await),
            None => return Err(rpc_error_response(&v03_refused(Binding::JsonRpc, method), Some(id))),
        },
        Err(e) => return Err(rpc_error_response(&e, Some(id))),
    }
    let Some(op) = Operation::from_name(method) else {
        return Err(rpc_error_response(
            &A2aError::new(ErrorKind::MethodNotFound)
                .with_message(format!("method {method:?} does not exist"))
                .with("method", method.to_owned()),
            Some(id),
        ));
    };
    check_depth(raw).map_err(|e| rpc_error_response(&e, Some(id)))?;
    Request::decode(op, raw, "$.params")
        .map(|d| d.value)
        .map_err(|e| rpc_error_response(&A2aError::invalid_params(&e), Some(id)))
}

// ---------------------------------------------------------------------------
// SSE

/// One SSE event: an optional `id:` and `event:` line, then the data (one JSON text, so
/// one `data:` line), then a blank line.
pub(crate) fn frame(seq: Option<u64>, event: Option<&str>, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 32);
    if let Some(seq) = seq {
        out.extend(format!("id: {seq}\n").as_bytes());
    }
    if let Some(ev) = event {
        out.extend(format!("event: {ev}\n").as_bytes());
    }
    out.extend(b"data: ");
    out.extend(data);
    out.extend(b"\n\n");
    Bytes::from(out)
}

/// Answers with an SSE stream. The first item is awaited before the headers are sent,
/// so a failure that happens at once is an ordinary HTTP error, not a stream.
pub(crate) async fn sse<E, F>(app: &App<E>, events: EventStream, render: F) -> Result<Response, A2aError>
where
    F: Fn(StreamOut) -> Option<Bytes> + Send + 'static,
{
    // Fused: an empty stream (a resume after the last event) must not be polled again.
    let mut events = events.fuse();
    let first = match events.next().await {
        Some(StreamOut::Error(e)) => return Err(e),
        other => other,
    };
    let keep_alive = app.options.keep_alive;
    let shutdown = app.core.shutdown.clone();
    let head = futures::stream::iter(first);
    let body = keep_alive_stream(head.chain(events), keep_alive)
        .take_until(async move { shutdown.cancelled().await })
        .filter_map(move |item| {
            let out = match item {
                Tick::Event(ev) => render(ev),
                Tick::KeepAlive => Some(Bytes::from_static(b": keep-alive\n\n")),
            };
            futures::future::ready(out.map(Ok::<_, Infallible>))
        });
    let mut resp = Response::new(Body::from_stream(body));
    let h = resp.headers_mut();
    h.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(http::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(resp)
}

enum Tick {
    Event(StreamOut),
    KeepAlive,
}

/// Interleaves keep-alive ticks into an event stream while it waits; ends with it.
fn keep_alive_stream(
    events: impl Stream<Item = StreamOut> + Send + 'static,
    every: Duration,
) -> impl Stream<Item = Tick> + Send {
    let events = Box::pin(events);
    futures::stream::unfold(Some(events), move |state| async move {
        let mut events = state?;
        tokio::select! {
            item = events.next() => item.map(|ev| (Tick::Event(ev), Some(events))),
            _ = tokio::time::sleep(every) => Some((Tick::KeepAlive, Some(events))),
        }
    })
}

// ---------------------------------------------------------------------------
// HTTP+JSON

pub(crate) fn rest_error(e: &A2aError, table: ErrorTable) -> Response {
    // The core names request fields as JSON-RPC sees them (`$.params.…`); on this
    // binding the request object is the body itself (`$.…`).
    let mut e = e.clone();
    e.message = e.message.replace("$.params", "$");
    for (_, v) in e.metadata.iter_mut() {
        if let Some(rest) = v.strip_prefix("$.params") {
            *v = format!("${rest}");
        }
    }
    let e = &e;
    let status = StatusCode::from_u16(e.http_status(table)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp =
        json_response(status, "application/json", serde_json::to_vec(&e.rest_body(table)).unwrap_or_default());
    decorate_error(&mut resp, e);
    resp
}

/// A path matched against an operation's rules: the operation and the path variables.
struct Route {
    op: Operation,
    vars: Vec<(String, String)>,
    body: bool,
    method_ok: bool,
    /// The verbs the path takes (for the `Allow` header of a 405).
    allowed: Vec<&'static str>,
}

fn match_template(template: &str, path: &str) -> Option<Vec<(String, String)>> {
    let t: Vec<&str> = template.trim_start_matches('/').split('/').collect();
    let p: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if t.len() != p.len() {
        return None;
    }
    let mut vars = Vec::new();
    for (ts, ps) in t.iter().zip(&p) {
        if let Some(rest) = ts.strip_prefix('{') {
            let (name, suffix) = rest.split_once('}')?;
            let value = ps.strip_suffix(suffix)?;
            if value.is_empty() || (suffix.is_empty() && value.contains(':')) {
                return None;
            }
            vars.push((name.to_owned(), percent_decode(value)));
        } else if ts != ps {
            return None;
        }
    }
    Some(vars)
}

fn find_route(method: &Method, path: &str) -> Option<Route> {
    let mut found: Option<Route> = None;
    let mut allowed: Vec<&'static str> = Vec::new();
    for op in Operation::ALL {
        for rule in op.http() {
            let Some(vars) = match_template(rule.path, path) else { continue };
            // The verbs come from the generated table (rules/a2a.toml adds POST to `:subscribe`).
            let m = rule.method.eq_ignore_ascii_case(method.as_str());
            let route = Route { op, vars, body: rule.body, method_ok: m, allowed: Vec::new() };
            if m {
                return Some(route);
            }
            let verb = match rule.method {
                "get" => "GET",
                "post" => "POST",
                "delete" => "DELETE",
                "put" => "PUT",
                "patch" => "PATCH",
                _ => continue,
            };
            if !allowed.contains(&verb) {
                allowed.push(verb);
            }
            found.get_or_insert(route);
        }
    }
    found.map(|mut r| {
        allowed.sort_unstable();
        r.allowed = allowed;
        r
    })
}

/// The request object of a call without a body: path variables and query parameters,
/// each typed by the request field it fills.
fn query_object(op: Operation, vars: &[(String, String)], query: Option<&str>) -> Result<Map<String, Value>, A2aError> {
    let mut obj = Map::new();
    for (k, v) in vars {
        if k != "tenant" {
            obj.insert(lower_camel(k), Value::String(v.clone()));
        }
    }
    let fields = op.query_fields();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (percent_decode(k), percent_decode(v));
        let key = lower_camel(&k);
        let Some((name, kind)) = fields.iter().find(|(n, _)| *n == key) else { continue };
        let bad = |what: &str| {
            A2aError::new(ErrorKind::InvalidParams)
                .with_message(format!("query parameter {name}: expected {what}, found {v:?}"))
                .with("path", format!("$.{name}"))
        };
        let value = match kind {
            QueryKind::Int => Value::from(v.parse::<i64>().map_err(|_| bad("an integer"))?),
            QueryKind::Bool if QUERY_TRUE.contains(&v.as_str()) => Value::Bool(true),
            QueryKind::Bool if QUERY_FALSE.contains(&v.as_str()) => Value::Bool(false),
            QueryKind::Bool => return Err(bad("true or false")),
            // An enum may be given by its proto number, as in a body (`status=2`).
            QueryKind::Enum => match v.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(v.clone()),
            },
            QueryKind::String | QueryKind::Timestamp => Value::String(v.clone()),
        };
        obj.insert((*name).to_owned(), value);
    }
    Ok(obj)
}

async fn rest<E: AgentExecutor>(State(app): State<Arc<App<E>>>, req: HttpRequest) -> Response {
    let table = app.options.error_table;
    let (parts, body) = req.into_parts();
    let path = parts.uri.path();
    let prefix = app.options.rest_prefix.trim_end_matches('/');
    let Some(rel) = path.strip_prefix(prefix).filter(|r| r.starts_with('/')) else {
        return rest_error(
            &A2aError::new(ErrorKind::MethodNotFound).with_message(format!("no route for {path}")),
            table,
        );
    };
    let Some(route) = find_route(&parts.method, rel) else {
        return rest_error(
            &A2aError::new(ErrorKind::MethodNotFound).with_message(format!("no A2A operation at {path}")),
            table,
        );
    };
    if !route.method_ok {
        let allow = route.allowed.join(", ");
        let mut r = rest_error(
            &A2aError::new(ErrorKind::MethodNotAllowed)
                .with_message(format!("{} is not allowed on {path} (allowed: {allow})", parts.method))
                .with("allow", allow.clone()),
            table,
        );
        if let Ok(v) = HeaderValue::from_str(&allow) {
            r.headers_mut().insert(http::header::ALLOW, v);
        }
        return r;
    }
    let query = parts.uri.query().map(str::to_owned);
    match version(&app, &parts.headers, query.as_deref(), Binding::Rest) {
        Ok(Version::V1) => {}
        Ok(Version::V03) => return rest_error(&v03_refused(Binding::Rest, ""), table),
        Err(e) => return rest_error(&e, table),
    }
    let body = match read_body(&app, &parts.headers, body).await {
        Ok(b) => b,
        Err(e) => return rest_error(&e, table),
    };
    if let Err(e) = check_depth(&body) {
        return rest_error(&e, table);
    }
    let op = route.op;
    let path_tenant = route.vars.iter().find(|(k, _)| k == "tenant").map(|(_, v)| v.clone());
    let bytes: Vec<u8> =
        if route.body && parts.method == Method::POST && !(op == Operation::SubscribeToTask && body.is_empty()) {
            if !content_type_ok(&parts.headers) {
                return rest_error(
                    &A2aError::new(ErrorKind::InvalidRequest)
                        .with_message("Content-Type must be application/a2a+json or application/json"),
                    table,
                );
            }
            let vars: Vec<_> = route.vars.iter().filter(|(k, _)| k != "tenant").collect();
            if vars.is_empty() {
                body.to_vec()
            } else {
                let mut obj = if body.is_empty() {
                    Map::new()
                } else {
                    match serde_json::from_slice::<Value>(&body) {
                        Ok(Value::Object(o)) => o,
                        Ok(_) => {
                            return rest_error(
                                &A2aError::new(ErrorKind::InvalidParams)
                                    .with_message("the request body must be a JSON object")
                                    .with("path", "$"),
                                table,
                            )
                        }
                        Err(e) => {
                            return rest_error(
                                &A2aError::new(ErrorKind::Parse)
                                    .with_message(format!("the request body is not JSON: {e}")),
                                table,
                            )
                        }
                    }
                };
                for (k, v) in vars {
                    obj.insert(lower_camel(k), Value::String(v.clone()));
                }
                serde_json::to_vec(&obj).unwrap_or_default()
            }
        } else {
            match query_object(op, &route.vars, query.as_deref()) {
                Ok(obj) => serde_json::to_vec(&obj).unwrap_or_default(),
                Err(e) => return rest_error(&e, table),
            }
        };
    let request = match Request::decode(op, &bytes, "$") {
        Ok(d) => d.value,
        Err(e) => {
            let err = if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err() {
                A2aError::new(ErrorKind::Parse).with_message(e.to_string())
            } else {
                A2aError::invalid_params(&e)
            };
            return rest_error(&err, table);
        }
    };
    let cx = match call_context(&app, &parts, path_tenant.as_deref(), request.tenant()) {
        Ok(cx) => cx,
        Err(e) => return rest_error(&e, table),
    };
    match app.core.handle(cx, request).await {
        Ok(Answer::Value(bytes)) => json_response(StatusCode::OK, A2A_JSON, bytes),
        Ok(Answer::Stream(events)) => sse(&app, events, move |item| match item {
            StreamOut::Event { seq, body } => Some(frame(seq, None, &body)),
            StreamOut::Gap { after, resumed_at } => {
                Some(frame(None, Some("gap"), json!({"after": after, "resumedAt": resumed_at}).to_string().as_bytes()))
            }
            StreamOut::Lagged => Some(frame(None, Some("lagged"), b"{}")),
            StreamOut::Error(e) => Some(frame(
                None,
                Some("error"),
                serde_json::to_string(&e.rest_body(table)).unwrap_or_default().as_bytes(),
            )),
        })
        .await
        .unwrap_or_else(|e| rest_error(&e, table)),
        Err(e) => rest_error(&e, table),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_the_generated_rules() {
        let r = find_route(&Method::POST, "/tasks/t-1:cancel").unwrap();
        assert_eq!(r.op, Operation::CancelTask);
        assert_eq!(r.vars, vec![("id".to_owned(), "t-1".to_owned())]);
        let r = find_route(&Method::GET, "/acme/tasks/t-1:subscribe").unwrap();
        assert_eq!(r.op, Operation::SubscribeToTask);
        assert_eq!(r.vars[0], ("tenant".to_owned(), "acme".to_owned()));
        assert!(find_route(&Method::POST, "/tasks/t-1:subscribe").unwrap().method_ok);
        assert_eq!(find_route(&Method::GET, "/tasks/t-1").unwrap().op, Operation::GetTask);
        assert_eq!(find_route(&Method::GET, "/tasks").unwrap().op, Operation::ListTasks);
        assert_eq!(
            find_route(&Method::DELETE, "/tasks/t/pushNotificationConfigs/c").unwrap().op,
            Operation::DeleteTaskPushNotificationConfig
        );
        let wrong = find_route(&Method::DELETE, "/message:send").unwrap();
        assert!(!wrong.method_ok);
        assert!(find_route(&Method::GET, "/nothing/here/at/all").is_none());
    }

    #[test]
    fn query_parameters_are_typed_by_their_field() {
        let obj = query_object(
            Operation::ListTasks,
            &[],
            Some("pageSize=5&includeArtifacts=true&status=TASK_STATE_WORKING&context_id=c%201"),
        )
        .unwrap();
        assert_eq!(
            Value::Object(obj),
            json!({"pageSize": 5, "includeArtifacts": true, "status": "TASK_STATE_WORKING", "contextId": "c 1"})
        );
        assert!(query_object(Operation::ListTasks, &[], Some("pageSize=x")).is_err());
        let obj = query_object(Operation::ListTasks, &[], Some("status=2")).unwrap();
        assert_eq!(Value::Object(obj), json!({"status": 2}));
    }
}
