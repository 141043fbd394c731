//! The A2A 0.3 JSON-RPC binding: a 0.3 request answered by the 1.0 core, through the
//! conversions of [`crate::compat::v03`].
//!
//! The params are converted to 1.0 and decoded by the generated codec, the core handles
//! the request as any other, and its answer is converted back: unary results in the 0.3
//! shape, each stream event as a JSON-RPC response carrying a 0.3 event, and errors in the
//! 0.3 form (`data` a plain object).

use std::sync::Arc;

use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::Value;

use super::{call_context, decorate_error, frame, rpc_http_status, sse, App, RpcId};
use crate::compat::v03::Method;
use crate::errors::{A2aError, ErrorKind};
use crate::executor::AgentExecutor;
use crate::server::core::{Answer, StreamOut};
use crate::store::EventBody;
use crate::v1::Request;

fn envelope(id: &RpcId, member: &str, value: &Value) -> Vec<u8> {
    let mut out = br#"{"jsonrpc":"2.0","id":"#.to_vec();
    out.extend(id.json());
    out.extend(format!(",{}:", Value::String(member.to_owned())).as_bytes());
    out.extend(serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec()));
    out.push(b'}');
    out
}

fn error_response(e: &A2aError, id: &RpcId) -> Response {
    let body = envelope(id, "error", &e.jsonrpc_error_v03());
    let mut resp = (rpc_http_status(e.kind), [(http::header::CONTENT_TYPE, "application/json")], body).into_response();
    decorate_error(&mut resp, e);
    resp
}

/// A failure to convert what the core produced is the server's fault, not the client's.
fn internal(e: A2aError) -> A2aError {
    A2aError::new(ErrorKind::Internal).with_message(format!("could not express the answer in A2A 0.3: {}", e.message))
}

/// An answer's ProtoJSON as a JSON tree, for the 0.3 conversion.
fn json_value(bytes: &[u8]) -> Result<Value, A2aError> {
    serde_json::from_slice(bytes)
        .map_err(|e| A2aError::new(ErrorKind::Internal).with_message(format!("bad answer from the core: {e}")))
}

/// One 1.0 `StreamResponse` as a 0.3 event.
fn event_to_v03(method: &Method, body: &EventBody) -> Result<Value, A2aError> {
    let v = json_value(&body.bytes()?)?;
    method.result_to_v03(&v).map_err(internal)
}

/// Answers one 0.3 JSON-RPC request (`params` are the raw params, `{}` when absent).
pub(crate) async fn serve_v03<E: AgentExecutor>(
    app: &Arc<App<E>>,
    parts: &http::request::Parts,
    id: RpcId,
    method: &'static Method,
    params: &[u8],
) -> Response {
    let params: Value = match serde_json::from_slice(params) {
        Ok(v) => v,
        Err(e) => {
            return error_response(
                &A2aError::new(ErrorKind::Parse).with_message(format!("the params are not JSON: {e}")),
                &id,
            )
        }
    };
    let converted = match method.params_to_v1(&params) {
        Ok(v) => v,
        Err(e) => return error_response(&e, &id),
    };
    let bytes = serde_json::to_vec(&converted).unwrap_or_default();
    let request = match Request::decode(method.operation, &bytes, "$.params") {
        Ok(d) => d.value,
        Err(e) => return error_response(&A2aError::invalid_params(&e), &id),
    };
    let cx = match call_context(app, parts, None, request.tenant()) {
        Ok(cx) => cx,
        Err(e) => return error_response(&e, &id),
    };
    match app.core.handle(cx, request).await {
        Ok(Answer::Value(reply)) => {
            let result = reply
                .to_json()
                .and_then(|bytes| json_value(&bytes))
                .and_then(|v| method.result_to_v03(&v).map_err(internal));
            match result {
                Ok(r) => {
                    (StatusCode::OK, [(http::header::CONTENT_TYPE, "application/json")], envelope(&id, "result", &r))
                        .into_response()
                }
                Err(e) => error_response(&e, &id),
            }
        }
        Ok(Answer::Stream(events)) => {
            let id2 = id.clone();
            let render = move |item: StreamOut| -> Option<Bytes> {
                match item {
                    StreamOut::Event { seq, body, .. } => Some(match event_to_v03(method, &body) {
                        Ok(ev) => frame(seq, None, &envelope(&id2, "result", &ev)),
                        Err(e) => frame(seq, None, &envelope(&id2, "error", &e.jsonrpc_error_v03())),
                    }),
                    // Gaps and lag markers are agentproto's resumption extension, which 0.3
                    // clients do not know: leave them out.
                    StreamOut::Gap { .. } | StreamOut::Lagged => None,
                    StreamOut::Error(e) => Some(frame(None, None, &envelope(&id2, "error", &e.jsonrpc_error_v03()))),
                }
            };
            sse(app, parts, events, render).await.unwrap_or_else(|e| error_response(&e, &id))
        }
        Err(e) => error_response(&e, &id),
    }
}
