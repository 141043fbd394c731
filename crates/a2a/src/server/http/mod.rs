//! The HTTP face of the server: the agent card, the JSON-RPC binding and the HTTP+JSON
//! binding, both with SSE streams, on one axum router.
//!
//! REST routes are not written per operation: a path is matched against the
//! `google.api.http` rules of the generated operation table, its variables and query
//! parameters become request fields, and the request is decoded by the same generated
//! codec the JSON-RPC binding uses. Both bindings then call the same [`Core`].
//!
//! Here: the options, the card, versions and the call context; the bindings in
//! `jsonrpc.rs` and `rest.rs`, their streams in `sse.rs`.

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

mod jsonrpc;
mod rest;
mod sse;

pub(crate) use jsonrpc::*;
pub(crate) use rest::*;
pub(crate) use sse::*;

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
pub(crate) enum Version {
    V1,
    V03,
}

/// The bindings the server serves; they do not serve the same versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// 1.0, and 0.3 through its own method names (`message/send`, …).
    JsonRpc,
    /// 1.0 only (0.3's REST paths were different: `/v1/message:send`).
    Rest,
    /// 1.0 only, and a call without `a2a-version` is 1.0: 0.3's gRPC service was
    /// another one (`a2a.v1`), so nothing reaching this one can be 0.3.
    #[cfg(feature = "grpc")]
    Grpc,
}

impl Binding {
    fn supported_versions(self) -> &'static str {
        match self {
            Binding::JsonRpc => "1.0, 0.3",
            _ => "1.0",
        }
    }

    /// Whether every call is 1.0, with or without the header (gRPC).
    fn always_v1(self) -> bool {
        #[cfg(feature = "grpc")]
        return self == Binding::Grpc;
        #[cfg(not(feature = "grpc"))]
        false
    }
}

/// The version a request asks for (`A2A-Version`, or the query parameter of that name),
/// or the error naming what `binding` serves.
pub(crate) fn version<E>(
    app: &App<E>,
    headers: &HeaderMap,
    query: Option<&str>,
    binding: Binding,
) -> Result<Version, A2aError> {
    let header = headers.get("a2a-version").and_then(|v| v.to_str().ok()).map(str::trim).map(str::to_owned);
    let param = query.and_then(|q| {
        q.split('&').find_map(|p| {
            p.split_once('=').filter(|(k, _)| k.eq_ignore_ascii_case("A2A-Version")).map(|(_, v)| percent_decode(v))
        })
    });
    let v = header.or(param).unwrap_or_default();
    let mut parts = v.split('.');
    match (parts.next(), parts.next()) {
        (Some(""), None) if binding.always_v1() => Ok(Version::V1),
        (Some(""), None) => Ok(match app.options.missing_version {
            MissingVersion::V0_3 => Version::V03,
            MissingVersion::V1_0 => Version::V1,
        }),
        (Some("1"), Some("0")) => Ok(Version::V1),
        (Some("0"), Some("3")) if !binding.always_v1() => Ok(Version::V03),
        _ => {
            let served = match binding {
                Binding::JsonRpc => "1.0 (with A2A-Version: 1.0) and 0.3 (without the header)",
                _ => "1.0",
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
        _ => "a request without an A2A-Version header is A2A 0.3, which the HTTP+JSON interface does not serve (it \
              serves 1.0); send A2A-Version: 1.0"
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
