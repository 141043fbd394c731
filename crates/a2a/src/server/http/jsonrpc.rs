//! The JSON-RPC binding: the envelope (through `agentproto-jsonrpc`), ids written back as
//! they came, the version and method checks, then the same generated decoder and core
//! as the other bindings.

use super::*;

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

pub(super) fn rpc_error_body(id: Option<&RpcId>, error: Value) -> Vec<u8> {
    let mut out = br#"{"jsonrpc":"2.0","id":"#.to_vec();
    out.extend(id.map_or(&b"null"[..], RpcId::json));
    out.extend(br#","error":"#);
    out.extend(serde_json::to_vec(&error).unwrap_or_default());
    out.push(b'}');
    out
}

pub(super) fn rpc_result_body(id: &RpcId, result: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(result.len() + 40);
    out.extend(br#"{"jsonrpc":"2.0","id":"#);
    out.extend(id.json());
    out.extend(br#","result":"#);
    out.extend(result);
    out.push(b'}');
    out
}

/// Results from this size on are answered without copying them into the envelope.
const LARGE_RESULT: usize = 64 << 10;

/// The answer to a call. A large result (a task holding megabytes of text) is sent as it
/// is, between the envelope's two ends, instead of being copied into a new buffer.
fn rpc_result_response(id: &RpcId, result: Vec<u8>) -> Response {
    if result.len() < LARGE_RESULT {
        return json_response(StatusCode::OK, "application/json", rpc_result_body(id, &result));
    }
    let head = [br#"{"jsonrpc":"2.0","id":"#, id.json(), br#","result":"#].concat();
    let body = Pieces([Bytes::from(head), Bytes::from(result), Bytes::from_static(b"}")], 0);
    (StatusCode::OK, [(http::header::CONTENT_TYPE, "application/json")], axum::body::Body::new(body)).into_response()
}

/// A body sent as a few buffers, one frame each, with its exact length announced.
struct Pieces<const N: usize>([Bytes; N], usize);

impl<const N: usize> http_body::Body for Pieces<N> {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        while this.1 < N {
            let next = std::mem::take(&mut this.0[this.1]);
            this.1 += 1;
            if !next.is_empty() {
                return std::task::Poll::Ready(Some(Ok(http_body::Frame::data(next))));
            }
        }
        std::task::Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.0[self.1..].iter().all(Bytes::is_empty)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.0[self.1..].iter().map(|b| b.len() as u64).sum())
    }
}

pub(super) fn json_response(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
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
pub(super) struct RpcCall {
    id: Option<RpcId>,
    method: String,
    params: Option<Box<serde_json::value::RawValue>>,
}

/// Reads the envelope. A request's `id` may be any JSON-RPC 2.0 id: a string, `null`,
/// or any number (the envelope decoder keeps only 64-bit integers, so other numbers are
/// taken aside here and echoed as they were written).
pub(super) fn read_envelope(body: &[u8]) -> Result<RpcCall, (A2aError, Option<RpcId>)> {
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
pub(super) fn numeric_id(body: &[u8]) -> Option<(RpcId, Vec<u8>)> {
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

pub(super) async fn jsonrpc<E: AgentExecutor>(State(app): State<Arc<App<E>>>, req: HttpRequest) -> Response {
    let (parts, body) = req.into_parts();
    let body = match read_body(&app, &parts.headers, body).await {
        Ok(b) => b,
        Err(e) => return rpc_error_response(&e, None),
    };
    // The params within `MAX_REQUEST_DEPTH`, the envelope one level above them.
    if let Err(e) = check_depth(&body, 1) {
        return rpc_error_response(&e, None);
    }
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

pub(super) async fn rpc_call<E: AgentExecutor>(
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
        Ok(Answer::Value(reply)) => match reply.to_json_spliced() {
            Ok(result) => match result.into_plain() {
                Ok(bytes) => rpc_result_response(&id, bytes),
                Err(spliced) => {
                    let head = [br#"{"jsonrpc":"2.0","id":"#, id.json(), br#","result":"#].concat();
                    let body = axum::body::Body::new(spliced.wrapped(head, b"}"));
                    (StatusCode::OK, [(http::header::CONTENT_TYPE, "application/json")], body).into_response()
                }
            },
            Err(e) => rpc_error_response(&e, Some(&id)),
        },
        Ok(Answer::Stream(events)) => {
            let id2 = id.clone();
            sse(app, parts, events, move |item| match item {
                StreamOut::Event { seq, body, .. } => Some(match body.bytes() {
                    Ok(body) => frame(seq, None, &rpc_result_body(&id2, &body)),
                    Err(e) => frame(None, None, &rpc_error_body(Some(&id2), A2aError::from(e).jsonrpc_error())),
                }),
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
pub(super) async fn decode_call<E: AgentExecutor>(
    app: &Arc<App<E>>,
    parts: &http::request::Parts,
    id: &RpcId,
    method: &str,
    raw: &[u8],
) -> Result<Request, Response> {
    let query = parts.uri.query();
    match version(&app.calls, &parts.headers, query, Binding::JsonRpc) {
        Ok(Version::V1) => {}
        Ok(Version::V03) => match crate::compat::v03::method(method) {
            // A 0.3 method name: answered in 0.3 by the compat layer.
            Some(m) => return Err(Box::pin(super::v03::serve_v03(app, parts, id.clone(), m, raw)).await),
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
    // No nesting check of its own: the body was checked against `MAX_REQUEST_DEPTH` (with
    // the envelope's level) before the envelope was read.
    Request::decode(op, raw, "$.params")
        .map(|d| d.value)
        .map_err(|e| rpc_error_response(&A2aError::invalid_params(&e), Some(id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;

    async fn sent(id: &RpcId, result: Vec<u8>) -> (Option<u64>, Vec<u8>) {
        let response = rpc_result_response(id, result);
        let exact = response.body().size_hint().exact();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (exact, bytes.to_vec())
    }

    #[tokio::test]
    async fn a_large_result_is_sent_whole_with_its_exact_length() {
        let id = RpcId::from_id(&RequestId::number(7));
        let result = serde_json::to_vec(&json!({"task": {"id": "t", "text": "x".repeat(LARGE_RESULT)}})).unwrap();
        let (exact, bytes) = sent(&id, result.clone()).await;
        assert_eq!(bytes, rpc_result_body(&id, &result));
        assert_eq!(exact, Some(bytes.len() as u64));
        let small = br#"{"task":{}}"#.to_vec();
        let (exact, bytes) = sent(&id, small.clone()).await;
        assert_eq!((exact, bytes.clone()), (Some(bytes.len() as u64), rpc_result_body(&id, &small)));
    }
}
