//! What can go wrong on the client side, kept apart from what the server answered.

use agentproto_codec::DecodeError;
use serde::Deserialize;

/// The kind of an error a server answered, whichever binding carried it: the server's
/// own table (`crate::errors`), so both sides read codes and reasons the same way.
pub use crate::errors::ErrorKind as A2aErrorKind;

/// How a transport failure happened, which decides whether a retry is safe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// The connection could not be made: the request never reached the server.
    Connect,
    /// The connect, idle or total timeout expired.
    Timeout,
    /// Anything else (reset mid-request, a broken body, …).
    Other,
}

/// A failed client call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error object.
    #[error("JSON-RPC error {code}: {message}")]
    Rpc {
        /// The error code (A2A's are `-32001..=-32009`, see [`ClientError::kind`]).
        code: i64,
        /// The server's message.
        message: String,
        /// The `data` member, verbatim (in 1.0 an array of `Any` objects).
        data: Option<serde_json::Value>,
    },
    /// The server answered with a `google.rpc.Status` (the HTTP+JSON binding's
    /// AIP-193 error body, or an `event: error` inside a stream), or with an HTTP error
    /// status whose body is not such an object.
    #[error("{}server error{}: {message}", http_status.map(|s| format!("HTTP {s}: ")).unwrap_or_default(), status.as_deref().map(|s| format!(" {s}")).unwrap_or_default())]
    Status {
        /// The HTTP status of the response; `None` for an error sent inside a stream.
        http_status: Option<u16>,
        /// The `code` member of the status object, when present.
        code: Option<i64>,
        /// The `status` member (`NOT_FOUND`, `FAILED_PRECONDITION`, …).
        status: Option<String>,
        /// The message (or the start of the body when it was not a status object).
        message: String,
        /// `reason` of the first `google.rpc.ErrorInfo` in `details`.
        reason: Option<String>,
        /// The `details` array, verbatim.
        details: Option<serde_json::Value>,
    },
    /// The HTTP request failed before an answer was read completely.
    #[error("request to {url} failed ({kind:?}): {source}")]
    Transport {
        /// Why it failed.
        kind: TransportKind,
        /// The URL called.
        url: String,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },
    /// The server's answer did not decode as the type the operation returns.
    #[error("malformed {what} from the server: {error}")]
    Decode {
        /// What was being decoded (`SendMessage result`, `agent card`, …).
        what: String,
        /// Where and why, as a JSON path from the decoded value's root.
        error: Box<DecodeError>,
    },
    /// The server broke the protocol in a way that is not a decoding error (a wrong
    /// content type, a JSON-RPC response with neither result nor error, an SSE event
    /// larger than the limit, …).
    #[error("protocol violation by the server: {0}")]
    Protocol(String),
    /// The agent card lists no interface this client can use.
    #[error("no usable interface in the agent card: {0}")]
    NoSupportedInterface(String),
    /// The request cannot be sent as given (an empty path variable, a bad URL, …).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// A stream broke and resuming it failed, was disabled, or was impossible.
    #[error("stream interrupted: {reason}")]
    StreamInterrupted {
        /// What happened.
        reason: String,
        /// The last SSE `id:` delivered, to resume by hand with
        /// [`A2aClient::subscribe_to_task_from`](super::A2aClient::subscribe_to_task_from).
        last_event_id: Option<String>,
        /// The task the stream was about, when known.
        task_id: Option<String>,
    },
}

impl ClientError {
    /// The A2A error this is, when the server sent one: by JSON-RPC code, by
    /// `ErrorInfo.reason`, or (REST only, as a last resort) by HTTP status.
    pub fn kind(&self) -> Option<A2aErrorKind> {
        match self {
            ClientError::Rpc { code, data, .. } => A2aErrorKind::from_code(*code)
                .or_else(|| data.as_ref().and_then(error_info_reason).and_then(|r| A2aErrorKind::from_reason(&r))),
            ClientError::Status { http_status, reason, .. } => reason
                .as_deref()
                .and_then(A2aErrorKind::from_reason)
                .or_else(|| http_status.and_then(A2aErrorKind::from_http_status)),
            _ => None,
        }
    }

    /// Whether the request certainly never reached the server.
    pub fn is_connect(&self) -> bool {
        matches!(self, ClientError::Transport { kind: TransportKind::Connect, .. })
    }

    /// Whether a timeout expired (on gRPC: a call that ended `DEADLINE_EXCEEDED`).
    pub fn is_timeout(&self) -> bool {
        match self {
            ClientError::Transport { kind, .. } => *kind == TransportKind::Timeout,
            ClientError::Status { http_status: None, status: Some(s), .. } => s == "DEADLINE_EXCEEDED",
            _ => false,
        }
    }

    pub(crate) fn transport(url: &str, source: reqwest::Error) -> Self {
        let kind = if source.is_connect() {
            TransportKind::Connect
        } else if source.is_timeout() {
            TransportKind::Timeout
        } else {
            TransportKind::Other
        };
        ClientError::Transport { kind, url: url.to_owned(), source }
    }

    pub(crate) fn decode(what: impl Into<String>, error: DecodeError) -> Self {
        ClientError::Decode { what: what.into(), error: Box::new(error) }
    }
}

/// The `reason` of the first `google.rpc.ErrorInfo` in a `details`/`data` array.
fn error_info_reason(details: &serde_json::Value) -> Option<String> {
    details.as_array()?.iter().find_map(|d| {
        let ty = d.get("@type")?.as_str()?;
        if ty.ends_with("google.rpc.ErrorInfo") {
            d.get("reason")?.as_str().map(str::to_owned)
        } else {
            None
        }
    })
}

#[derive(Deserialize)]
struct StatusBody {
    code: Option<serde_json::Value>,
    status: Option<String>,
    message: Option<String>,
    details: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RpcErrorBody {
    code: i64,
    #[serde(default)]
    message: String,
    data: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ErrorDocument {
    jsonrpc: Option<serde_json::Value>,
    error: Option<serde_json::Value>,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

/// The text a server sent, shortened for an error message.
pub(crate) fn snippet(body: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        text.to_owned()
    }
}

/// Reads an error body: AIP-193 `{"error":{code,status,message,details}}`, a bare
/// `google.rpc.Status`, or a JSON-RPC error response. Anything else becomes a
/// [`ClientError::Status`] holding the HTTP status and the start of the body.
pub(crate) fn parse_error_payload(body: &[u8], http_status: Option<u16>) -> ClientError {
    let fallback = |message: String| ClientError::Status {
        http_status,
        code: None,
        status: None,
        message,
        reason: None,
        details: None,
    };
    let Ok(doc) = serde_json::from_slice::<ErrorDocument>(body) else {
        return fallback(snippet(body));
    };
    if doc.jsonrpc.is_some() {
        return match doc.error.map(serde_json::from_value::<RpcErrorBody>) {
            Some(Ok(e)) => ClientError::Rpc { code: e.code, message: e.message, data: e.data },
            _ => fallback(snippet(body)),
        };
    }
    let status = match doc.error {
        Some(inner) => serde_json::from_value::<StatusBody>(inner).ok(),
        None => serde_json::from_value::<StatusBody>(serde_json::Value::Object(doc.rest)).ok(),
    };
    match status {
        Some(s) if s.message.is_some() || s.status.is_some() || s.code.is_some() || s.details.is_some() => {
            let reason = s.details.as_ref().and_then(error_info_reason);
            ClientError::Status {
                http_status,
                code: s.code.as_ref().and_then(serde_json::Value::as_i64),
                status: s.status,
                message: s.message.unwrap_or_default(),
                reason,
                details: s.details,
            }
        }
        _ => fallback(snippet(body)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_a2a_codes_and_reasons_round_trip() {
        for code in -32009..=-32001 {
            let kind = A2aErrorKind::from_code(code).expect("every A2A code has a kind");
            assert_eq!(kind.code(), code);
            assert_eq!(A2aErrorKind::from_reason(kind.reason()), Some(kind));
        }
        assert_eq!(A2aErrorKind::from_code(-32600), Some(A2aErrorKind::InvalidRequest));
        assert_eq!(A2aErrorKind::from_code(-1), None);
    }

    #[test]
    fn aip193_body() {
        let body = br#"{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org"}]}}"#;
        let e = parse_error_payload(body, Some(404));
        assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotCancelable));
        assert!(matches!(e, ClientError::Status { code: Some(404), .. }));
    }

    #[test]
    fn status_fallback_and_garbage() {
        assert_eq!(parse_error_payload(b"nope", Some(404)).kind(), Some(A2aErrorKind::TaskNotFound));
        assert_eq!(parse_error_payload(b"[1,2]", Some(500)).kind(), None);
        let bare = br#"{"code":9,"status":"FAILED_PRECONDITION","message":"m"}"#;
        assert!(matches!(parse_error_payload(bare, None), ClientError::Status { code: Some(9), .. }));
        let rpc = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32009,"message":"v"}}"#;
        assert_eq!(parse_error_payload(rpc, Some(200)).kind(), Some(A2aErrorKind::VersionNotSupported));
    }
}
