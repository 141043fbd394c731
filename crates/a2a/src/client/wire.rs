//! What the two bindings put on the wire: JSON-RPC envelopes, REST paths and query
//! strings, and the tenant every request carries.

use agentproto_codec::decode_slice;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::error::ClientError;
use crate::protojson::lower_camel;
use crate::v1::{self, Operation};

/// A request message with a `tenant` field.
pub trait TenantRequest: Serialize {
    /// Sets the tenant (the empty string omits it).
    fn set_tenant(&mut self, tenant: &str);
}

macro_rules! tenant_requests {
    ($($t:ty),* $(,)?) => {$(
        impl TenantRequest for $t {
            fn set_tenant(&mut self, tenant: &str) {
                tenant.clone_into(&mut self.tenant);
            }
        }
    )*};
}

tenant_requests!(
    v1::SendMessageRequest,
    v1::GetTaskRequest,
    v1::ListTasksRequest,
    v1::CancelTaskRequest,
    v1::SubscribeToTaskRequest,
    v1::TaskPushNotificationConfig,
    v1::GetTaskPushNotificationConfigRequest,
    v1::ListTaskPushNotificationConfigsRequest,
    v1::DeleteTaskPushNotificationConfigRequest,
    v1::GetExtendedAgentCardRequest,
);

#[derive(Serialize)]
struct RpcRequest<'a, P: Serialize> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: &'a P,
}

/// The body of a JSON-RPC request.
pub(crate) fn rpc_request<P: Serialize>(id: u64, op: Operation, params: &P) -> Result<Vec<u8>, ClientError> {
    serde_json::to_vec(&RpcRequest { jsonrpc: "2.0", id, method: op.name(), params })
        .map_err(|e| ClientError::InvalidRequest(format!("{} params do not encode: {e}", op.name())))
}

#[derive(Deserialize)]
struct RpcError {
    code: i64,
    #[serde(default)]
    message: String,
    data: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RpcResponse<'a> {
    jsonrpc: Option<&'a str>,
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    error: Option<RpcError>,
}

// serde's derive names no failure inside: the envelope is refused as a whole.
agentproto_codec::wants!(RpcResponse<'_>, Phrase("a JSON-RPC response object"));

/// Decodes a JSON-RPC response and its `result` as `T`. `empty_ok`: an absent or
/// `null` result reads as `{}` (for `Empty` results).
pub(crate) fn rpc_result<T: DeserializeOwned + agentproto_codec::Wants>(
    body: &[u8],
    expect_id: u64,
    what: &str,
    empty_ok: bool,
) -> Result<T, ClientError> {
    let envelope = decode_slice::<RpcResponse<'_>>(body, "$")
        .map_err(|e| ClientError::decode(format!("JSON-RPC response to {what}"), e))?
        .value;
    if envelope.jsonrpc != Some("2.0") {
        return Err(ClientError::Protocol(format!(
            "the response to {what} is not JSON-RPC 2.0 (`jsonrpc` is not \"2.0\")"
        )));
    }
    if envelope.result.is_some() && envelope.error.is_some() {
        return Err(both(what));
    }
    if let Some(e) = envelope.error {
        return Err(ClientError::Rpc { code: e.code, message: e.message, data: e.data });
    }
    // The id of the request, as the same JSON value (JSON-RPC 2.0 §5): `"1"` is not `1`.
    match &envelope.id {
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(expect_id) => {}
        other => {
            return Err(ClientError::Protocol(format!(
                "the response to {what} carries id {} instead of {expect_id}",
                other.as_ref().map_or("(none)".to_owned(), |v| v.to_string())
            )))
        }
    }
    let raw = match envelope.result {
        Some(raw) => raw.get().as_bytes(),
        None if empty_ok => b"{}",
        None => return Err(ClientError::Protocol(format!("the response to {what} has neither `result` nor `error`"))),
    };
    decode_slice::<T>(raw, "$.result").map(|d| d.value).map_err(|e| ClientError::decode(what, e))
}

/// A response holding both `result` and `error`, which JSON-RPC 2.0 §5 forbids.
fn both(what: &str) -> ClientError {
    ClientError::Protocol(format!("the response to {what} holds both `result` and `error`"))
}

/// What a JSON-RPC stream event holds.
pub(crate) enum RpcStreamItem<'a> {
    Result(&'a [u8]),
    Error(ClientError),
}

/// Reads one JSON-RPC response carried by an SSE `data:` field.
pub(crate) fn rpc_stream_item<'a>(data: &'a [u8], what: &str) -> Result<RpcStreamItem<'a>, ClientError> {
    let envelope = decode_slice::<RpcResponse<'a>>(data, "$")
        .map_err(|e| ClientError::decode(format!("JSON-RPC stream event of {what}"), e))?
        .value;
    if envelope.result.is_some() && envelope.error.is_some() {
        return Err(both(what));
    }
    if let Some(e) = envelope.error {
        return Ok(RpcStreamItem::Error(ClientError::Rpc { code: e.code, message: e.message, data: e.data }));
    }
    match envelope.result {
        Some(raw) => Ok(RpcStreamItem::Result(raw.get().as_bytes())),
        None => {
            Err(ClientError::Protocol(format!("a JSON-RPC stream event of {what} has neither `result` nor `error`")))
        }
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub(crate) fn encode_component(s: &str, out: &mut String) {
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        }
    }
}

/// A REST call: verb, URL (interface URL + path + query) and whether the request is
/// the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RestCall {
    pub(crate) method: http::Method,
    pub(crate) url: String,
    pub(crate) body: bool,
}

fn scalar_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Builds the REST call of `op` for `req` (whose tenant is already set) against the
/// interface URL `base`, from the operation's `google.api.http` rule: the tenant-less
/// rule when `tenant` is empty, the `/{tenant}/…` rule otherwise.
pub(crate) fn rest_call<R: Serialize>(
    base: &str,
    op: Operation,
    tenant: &str,
    req: &R,
) -> Result<RestCall, ClientError> {
    let rules = op.http();
    let rule = if tenant.is_empty() { rules[0] } else { *rules.get(1).unwrap_or(&rules[0]) };
    let value = serde_json::to_value(req)
        .map_err(|e| ClientError::InvalidRequest(format!("{} request does not encode: {e}", op.name())))?;
    let empty = serde_json::Map::new();
    let fields = value.as_object().unwrap_or(&empty);
    let mut url = base.trim_end_matches('/').to_owned();
    let mut rest = rule.path;
    while let Some(open) = rest.find('{') {
        url.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        let var = &rest[open + 1..close];
        let text =
            if var == "tenant" { Some(tenant.to_owned()) } else { fields.get(&lower_camel(var)).and_then(scalar_text) };
        match text {
            Some(t) if !t.is_empty() => encode_component(&t, &mut url),
            _ => {
                return Err(ClientError::InvalidRequest(format!(
                    "{} needs `{}` (it is part of the REST path)",
                    op.name(),
                    lower_camel(var)
                )))
            }
        }
        rest = rest.get(close + 1..).unwrap_or("");
    }
    url.push_str(rest);
    if !rule.body {
        let mut first = true;
        for (name, _) in op.query_fields() {
            let values: Vec<String> = match fields.get(*name) {
                Some(serde_json::Value::Array(items)) => items.iter().filter_map(scalar_text).collect(),
                Some(v) => scalar_text(v).into_iter().collect(),
                None => Vec::new(),
            };
            for v in values {
                url.push(if first { '?' } else { '&' });
                first = false;
                encode_component(name, &mut url);
                url.push('=');
                encode_component(&v, &mut url);
            }
        }
    }
    let method = match rule.method {
        "get" => http::Method::GET,
        "delete" => http::Method::DELETE,
        "put" => http::Method::PUT,
        "patch" => http::Method::PATCH,
        _ => http::Method::POST,
    };
    Ok(RestCall { method, url, body: rule.body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_tenants_and_queries() {
        let mut req = v1::GetTaskRequest::new("t/1 x");
        req.history_length = Some(3);
        let call = rest_call("http://h/a2a/", Operation::GetTask, "", &req).unwrap();
        assert_eq!(call.url, "http://h/a2a/tasks/t%2F1%20x?historyLength=3");
        assert_eq!(call.method, http::Method::GET);
        req.tenant = "acme co".into();
        let call = rest_call("http://h", Operation::GetTask, "acme co", &req).unwrap();
        assert_eq!(call.url, "http://h/acme%20co/tasks/t%2F1%20x?historyLength=3");

        let req = v1::DeleteTaskPushNotificationConfigRequest::new("t1", "c1");
        let call = rest_call("http://h", Operation::DeleteTaskPushNotificationConfig, "", &req).unwrap();
        assert_eq!(call.url, "http://h/tasks/t1/pushNotificationConfigs/c1");
        assert_eq!(call.method, http::Method::DELETE);

        let req = v1::GetTaskRequest::new("");
        assert!(matches!(rest_call("http://h", Operation::GetTask, "", &req), Err(ClientError::InvalidRequest(_))));
    }

    #[test]
    fn rpc_envelopes() {
        let ok: v1::Task = rpc_result(
            br#"{"jsonrpc":"2.0","id":4,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}"#,
            4,
            "GetTask result",
            false,
        )
        .unwrap();
        assert_eq!(ok.id, "t");
        let bad = rpc_result::<v1::Task>(br#"{"jsonrpc":"2.0","id":4,"result":{"id":5}}"#, 4, "GetTask result", false);
        match bad {
            Err(ClientError::Decode { error, .. }) => assert!(error.path.starts_with("$.result"), "{}", error.path),
            other => panic!("{other:?}"),
        }
        let wrong_id = rpc_result::<v1::Empty>(br#"{"jsonrpc":"2.0","id":5,"result":{}}"#, 4, "x", true);
        assert!(matches!(wrong_id, Err(ClientError::Protocol(_))));
        let empty: v1::Empty = rpc_result(br#"{"jsonrpc":"2.0","id":4,"result":null}"#, 4, "x", true).unwrap();
        assert_eq!(empty, v1::Empty {});
    }
}
