//! The HTTP face of the server: the agent card, the JSON-RPC binding and the HTTP+JSON
//! binding, both with SSE streams, on one axum router.
//!
//! REST routes are not written per operation: a path is matched against the
//! `google.api.http` rules of the generated operation table, its variables and query
//! parameters become request fields, and the request is decoded by the same generated
//! codec the JSON-RPC binding uses. Both bindings then call the same [`Core`].
//!
//! Here: the options, the card, versions and the call context; the bindings in
//! `jsonrpc.rs` and `rest.rs`, their streams in `sse.rs`, and in `codings.rs` the
//! refusal of requests in transfer or content codings the server does not decode.

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
pub use crate::server::call::MissingVersion;
use crate::server::call::{call_context_of, v03_refused, version, Binding, CallRules, Version};
use crate::server::core::{Answer, CallContext, Core, EventStream, StreamOut};
use crate::server::layers::Authentication;
use crate::v1::{Operation, QueryKind, Request, QUERY_FALSE, QUERY_TRUE};

mod codings;
mod jsonrpc;
mod rest;
mod sse;
mod v03;

pub(crate) use jsonrpc::*;
pub(crate) use rest::*;
pub(crate) use sse::*;

/// The media type of A2A 1.0.1 bodies; `application/json` is accepted as well.
pub const A2A_JSON: &str = "application/a2a+json";

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
    /// A request's head (request line and headers) must arrive within this: the first
    /// one from the connection's accept (so a connection that never sends a byte is
    /// closed after this), later ones on a kept-alive connection from their first byte;
    /// otherwise the connection is closed. Applies under [`crate::server::A2aServer::serve`].
    pub header_timeout: Duration,
    /// A kept-alive connection with no request in progress is closed after this long
    /// without a new one (a fresh connection has the header timeout instead). Applies
    /// under [`crate::server::A2aServer::serve`].
    pub idle_timeout: Duration,
    /// The most connections served at once on each listener; one more is answered 503
    /// and closed (on gRPC, closed). Applies under [`crate::server::A2aServer::serve`],
    /// lowered to what the open-files limit allows ([`crate::server::A2aServer::max_connections`]).
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

impl HttpOptions {
    /// The part of these options every binding reads calls by.
    pub(crate) fn call_rules(&self) -> CallRules {
        CallRules { missing_version: self.missing_version, tenant_header: self.tenant_header.clone() }
    }
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
    /// How calls are read (from `options`).
    pub(crate) calls: CallRules,
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
        let calls = options.call_rules();
        Arc::new(App { core, options, calls, card, etag, modified, last_modified })
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
        .layer(axum::middleware::from_fn(codings::check_codings))
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

/// The verdict of the authentication layer (anonymous without one), then the tenant:
/// from the path, the request, a header, or the credential.
pub(crate) fn call_context<E>(
    app: &App<E>,
    parts: &http::request::Parts,
    path_tenant: Option<&str>,
    request_tenant: &str,
) -> Result<CallContext, A2aError> {
    call_context_of(&app.calls, &parts.headers, parts.extensions.get::<Authentication>(), path_tenant, request_tenant)
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

/// How many levels the deepest answer puts above a value a client sent, beyond those
/// above it in the request: JSON-RPC `ListTasks` answers a message at
/// `$.result.tasks[i].history[j]` (level 6 of the answer) that came at `$.params.message`
/// (level 3 of the request), and the same holds for the message's metadata and parts.
/// The other answers (`GetTask`, stream events, push payloads, A2A 0.3) wrap less.
pub const ANSWER_WRAPPING: usize = 3;

/// How deep a request object may nest (itself at level 1), on both bindings.
///
/// A request is bounded so that every answer that carries what it sent back stays
/// within [`agentproto_jsonrpc::message::MAX_NESTING_DEPTH`] levels, the limit every JSON
/// reader here applies to a whole message (a client reading the answer included): one
/// level for the JSON-RPC envelope, then [`ANSWER_WRAPPING`] for the deepest answer.
/// Refusing a request that is too deep for its answers, rather than an answer that is
/// too deep to read, means nothing the server accepted becomes unreadable later.
pub const MAX_REQUEST_DEPTH: usize = agentproto_jsonrpc::message::MAX_NESTING_DEPTH - 1 - ANSWER_WRAPPING;

/// Refuses a request object nested deeper than [`MAX_REQUEST_DEPTH`] below `wrapping`
/// levels of envelope (a parse error, as the JSON-RPC envelope reports it).
fn check_depth(json: &[u8], wrapping: usize) -> Result<(), A2aError> {
    if agentproto_jsonrpc::nesting_exceeds(json, MAX_REQUEST_DEPTH + wrapping) {
        return Err(A2aError::new(ErrorKind::Parse).with_message(format!(
            "parse error: the request nests arrays and objects deeper than {MAX_REQUEST_DEPTH} levels"
        )));
    }
    Ok(())
}
