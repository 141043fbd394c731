//! A2A errors and their wire forms on each binding, as one table.
//!
//! The HTTP (and gRPC) status of some errors changed between A2A 1.0.0 and 1.0.1; the
//! [`ErrorTable`] switch picks one (the official TCK still checks parts of 1.0.0).

use serde_json::{json, Value};

/// Which revision's status mapping to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorTable {
    /// A2A 1.0.1 (the default).
    #[default]
    V1_0_1,
    /// A2A 1.0.0: TaskNotCancelable 409, ContentTypeNotSupported 415, InvalidAgentResponse 502.
    V1_0_0,
}

/// The kinds of error a server answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A2A -32001: no such task (or not visible to this caller).
    TaskNotFound,
    /// A2A -32002: the task is in a state that cannot be canceled.
    TaskNotCancelable,
    /// A2A -32003: the agent does not declare push notifications.
    PushNotificationNotSupported,
    /// A2A -32004: the operation is not available (e.g. subscribing to a finished task).
    UnsupportedOperation,
    /// A2A -32005: a part's media type is not one the agent accepts.
    ContentTypeNotSupported,
    /// A2A -32006: the agent produced something the protocol does not allow.
    InvalidAgentResponse,
    /// A2A -32007: the agent has no extended card.
    ExtendedAgentCardNotConfigured,
    /// A2A -32008: the agent requires an extension the client did not activate.
    ExtensionSupportRequired,
    /// A2A -32009: the requested A2A version is not served.
    VersionNotSupported,
    /// JSON-RPC -32700: the body is not JSON.
    Parse,
    /// JSON-RPC -32600: not a valid request object.
    InvalidRequest,
    /// JSON-RPC -32601: no such method (or REST route).
    MethodNotFound,
    /// JSON-RPC -32602: the params do not match the operation's request message.
    InvalidParams,
    /// JSON-RPC -32603.
    Internal,
    /// No or bad credentials (HTTP 401).
    Unauthenticated,
    /// Credentials valid but not allowed (HTTP 403).
    PermissionDenied,
    /// The request body is over the configured limit (HTTP 413).
    PayloadTooLarge,
    /// An HTTP+JSON path exists, but not with this verb (HTTP 405).
    MethodNotAllowed,
    /// The request did not arrive in time (HTTP 408): a body sent too slowly.
    RequestTimeout,
    /// The HTTP body could not be read: broken chunked framing, or a connection that
    /// ended before the body did (HTTP 400, on both bindings).
    MalformedBody,
    /// The caller sent more requests than the server's rate limit allows (HTTP 429 with
    /// `Retry-After` on both bindings). A2A names no code for it and lists "rate limit
    /// exceeded" among the system errors, so on JSON-RPC it is `-32603` with the
    /// `ErrorInfo` reason `RATE_LIMIT_EXCEEDED`.
    RateLimited,
}

struct Row {
    kind: ErrorKind,
    code: i64,
    http: u16,
    http_1_0_0: u16,
    grpc: &'static str,
    grpc_1_0_0: &'static str,
    reason: &'static str,
    message: &'static str,
}

/// A row; each status pair is (A2A 1.0.1, A2A 1.0.0).
const fn row(
    kind: ErrorKind,
    code: i64,
    http: [u16; 2],
    grpc: [&'static str; 2],
    reason: &'static str,
    message: &'static str,
) -> Row {
    Row { kind, code, http: http[0], http_1_0_0: http[1], grpc: grpc[0], grpc_1_0_0: grpc[1], reason, message }
}

use ErrorKind::*;

/// One row per kind: JSON-RPC code, HTTP status (1.0.1, then 1.0.0), gRPC status (1.0.1,
/// then 1.0.0), the `ErrorInfo.reason`, and the default message.
static TABLE: &[Row] = &[
    row(TaskNotFound, -32001, [404, 404], ["NOT_FOUND", "NOT_FOUND"], "TASK_NOT_FOUND", "Task not found"),
    row(
        TaskNotCancelable,
        -32002,
        [400, 409],
        ["FAILED_PRECONDITION", "FAILED_PRECONDITION"],
        "TASK_NOT_CANCELABLE",
        "Task cannot be canceled",
    ),
    row(
        PushNotificationNotSupported,
        -32003,
        [400, 400],
        ["FAILED_PRECONDITION", "UNIMPLEMENTED"],
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        "Push notifications are not supported",
    ),
    row(
        UnsupportedOperation,
        -32004,
        [400, 400],
        ["FAILED_PRECONDITION", "UNIMPLEMENTED"],
        "UNSUPPORTED_OPERATION",
        "This operation is not supported",
    ),
    row(
        ContentTypeNotSupported,
        -32005,
        [400, 415],
        ["INVALID_ARGUMENT", "INVALID_ARGUMENT"],
        "CONTENT_TYPE_NOT_SUPPORTED",
        "Incompatible content types",
    ),
    row(
        InvalidAgentResponse,
        -32006,
        [500, 502],
        ["INTERNAL", "INTERNAL"],
        "INVALID_AGENT_RESPONSE",
        "Invalid agent response",
    ),
    row(
        ExtendedAgentCardNotConfigured,
        -32007,
        [400, 400],
        ["FAILED_PRECONDITION", "FAILED_PRECONDITION"],
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        "Extended agent card is not configured",
    ),
    row(
        ExtensionSupportRequired,
        -32008,
        [400, 400],
        ["FAILED_PRECONDITION", "FAILED_PRECONDITION"],
        "EXTENSION_SUPPORT_REQUIRED",
        "A required extension was not activated",
    ),
    row(
        VersionNotSupported,
        -32009,
        [400, 400],
        ["FAILED_PRECONDITION", "UNIMPLEMENTED"],
        "VERSION_NOT_SUPPORTED",
        "This A2A version is not supported",
    ),
    row(Parse, -32700, [400, 400], ["INVALID_ARGUMENT", "INVALID_ARGUMENT"], "PARSE_ERROR", "Invalid JSON payload"),
    row(
        InvalidRequest,
        -32600,
        [400, 400],
        ["INVALID_ARGUMENT", "INVALID_ARGUMENT"],
        "INVALID_REQUEST",
        "Request payload validation error",
    ),
    row(MethodNotFound, -32601, [404, 404], ["UNIMPLEMENTED", "UNIMPLEMENTED"], "METHOD_NOT_FOUND", "Method not found"),
    row(
        InvalidParams,
        -32602,
        [400, 400],
        ["INVALID_ARGUMENT", "INVALID_ARGUMENT"],
        "INVALID_PARAMS",
        "Invalid parameters",
    ),
    row(Internal, -32603, [500, 500], ["INTERNAL", "INTERNAL"], "INTERNAL_ERROR", "Internal error"),
    row(
        Unauthenticated,
        -31401,
        [401, 401],
        ["UNAUTHENTICATED", "UNAUTHENTICATED"],
        "UNAUTHENTICATED",
        "Authentication required",
    ),
    row(
        PermissionDenied,
        -31403,
        [403, 403],
        ["PERMISSION_DENIED", "PERMISSION_DENIED"],
        "PERMISSION_DENIED",
        "Permission denied",
    ),
    row(
        PayloadTooLarge,
        -32600,
        [413, 413],
        ["RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED"],
        "PAYLOAD_TOO_LARGE",
        "Request body too large",
    ),
    row(
        MethodNotAllowed,
        -32601,
        [405, 405],
        ["UNIMPLEMENTED", "UNIMPLEMENTED"],
        "METHOD_NOT_ALLOWED",
        "Method not allowed",
    ),
    row(
        RequestTimeout,
        -32600,
        [408, 408],
        ["DEADLINE_EXCEEDED", "DEADLINE_EXCEEDED"],
        "REQUEST_TIMEOUT",
        "The request was not received in time",
    ),
    row(
        MalformedBody,
        -32600,
        [400, 400],
        ["INVALID_ARGUMENT", "INVALID_ARGUMENT"],
        "MALFORMED_BODY",
        "The request body could not be read",
    ),
    row(
        RateLimited,
        -32603,
        [429, 429],
        ["RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED"],
        "RATE_LIMIT_EXCEEDED",
        "Too many requests",
    ),
];

impl ErrorKind {
    /// The kind a JSON-RPC error code stands for.
    pub fn from_code(code: i64) -> Option<Self> {
        TABLE.iter().find(|r| r.code == code).map(|r| r.kind)
    }

    /// The kind a `google.rpc.ErrorInfo.reason` names.
    pub fn from_reason(reason: &str) -> Option<Self> {
        TABLE.iter().find(|r| r.reason == reason).map(|r| r.kind)
    }

    /// A guess from an HTTP status alone, for REST errors without an `ErrorInfo`: 404,
    /// and the 1.0.0 statuses 409 and 415 that only one kind used.
    pub fn from_http_status(status: u16) -> Option<Self> {
        match status {
            404 => Some(TaskNotFound),
            409 => Some(TaskNotCancelable),
            415 => Some(ContentTypeNotSupported),
            _ => None,
        }
    }

    /// The JSON-RPC code.
    pub fn code(self) -> i64 {
        lookup(self).code
    }

    /// The `ErrorInfo.reason`.
    pub fn reason(self) -> &'static str {
        lookup(self).reason
    }
}

fn lookup(kind: ErrorKind) -> &'static Row {
    TABLE.iter().find(|r| r.kind == kind).unwrap_or(&TABLE[13])
}

/// The ErrorInfo domain A2A defines.
pub const DOMAIN: &str = "a2a-protocol.org";

/// An error a server answers with: a kind, a message, and details for `ErrorInfo.metadata`
/// (and, for invalid params, the JSON path, what was expected and what was found).
#[derive(Debug, Clone, PartialEq)]
pub struct A2aError {
    /// What went wrong; decides the code and status on every binding.
    pub kind: ErrorKind,
    /// The human-readable message (the kind's default unless set).
    pub message: String,
    /// String pairs for `ErrorInfo.metadata` (`taskId`, `path`, …).
    pub metadata: Vec<(String, String)>,
}

impl A2aError {
    /// An error with the kind's default message.
    pub fn new(kind: ErrorKind) -> Self {
        A2aError { kind, message: lookup(kind).message.to_owned(), metadata: Vec::new() }
    }

    /// Replaces the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// Adds an `ErrorInfo.metadata` entry.
    pub fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.metadata.push((key.to_owned(), value.into()));
        self
    }

    /// `TaskNotFound` naming the task in its metadata (`taskId`).
    pub fn task_not_found(id: &str) -> Self {
        Self::new(TaskNotFound).with("taskId", id)
    }

    /// Invalid params from a decode error: the message names the path, what was
    /// expected and what was found.
    pub fn invalid_params(e: &agentproto_codec::DecodeError) -> Self {
        Self::new(InvalidParams)
            .with_message(format!("Invalid parameters at {}: {}", e.path, e.message))
            .with("path", e.path.clone())
            .with("kind", e.kind.as_str())
            .with("expected", e.expected.clone())
            .with("found", e.found.clone())
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        lookup(self.kind).code
    }

    /// The HTTP status on the HTTP+JSON binding under `table`.
    pub fn http_status(&self, table: ErrorTable) -> u16 {
        let r = lookup(self.kind);
        match table {
            ErrorTable::V1_0_1 => r.http,
            ErrorTable::V1_0_0 => r.http_1_0_0,
        }
    }

    /// The gRPC status name (`NOT_FOUND`, …) under A2A 1.0.1, also the `status` of an
    /// AIP-193 body.
    pub fn grpc_status(&self) -> &'static str {
        lookup(self.kind).grpc
    }

    /// The gRPC status name on the gRPC binding under `table` (A2A 1.0.0 answered
    /// some errors `UNIMPLEMENTED` where 1.0.1 says `FAILED_PRECONDITION`).
    pub fn grpc_status_in(&self, table: ErrorTable) -> &'static str {
        let r = lookup(self.kind);
        match table {
            ErrorTable::V1_0_1 => r.grpc,
            ErrorTable::V1_0_0 => r.grpc_1_0_0,
        }
    }

    /// The `google.rpc.ErrorInfo.reason`.
    pub fn reason(&self) -> &'static str {
        lookup(self.kind).reason
    }

    /// The `google.rpc.ErrorInfo` detail, in ProtoJSON `Any` form.
    pub fn error_info(&self) -> Value {
        let metadata: serde_json::Map<String, Value> =
            self.metadata.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        let mut info =
            json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": self.reason(), "domain": DOMAIN});
        if !metadata.is_empty() {
            info["metadata"] = Value::Object(metadata);
        }
        info
    }

    /// The JSON-RPC error object (`data` is a list of `Any` details).
    pub fn jsonrpc_error(&self) -> Value {
        json!({"code": self.code(), "message": self.message, "data": [self.error_info()]})
    }

    /// The AIP-193 body of the HTTP+JSON binding.
    pub fn rest_body(&self, table: ErrorTable) -> Value {
        json!({"error": {
            "code": self.http_status(table),
            "status": self.grpc_status(),
            "message": self.message,
            "details": [self.error_info()],
        }})
    }

    /// The A2A 0.3 JSON-RPC error object (`data` was a free-form object then).
    pub fn jsonrpc_error_v03(&self) -> Value {
        let code = match self.kind {
            ExtendedAgentCardNotConfigured => -32007,
            ExtensionSupportRequired | VersionNotSupported => -32600,
            _ => self.code(),
        };
        let data: serde_json::Map<String, Value> =
            self.metadata.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        if data.is_empty() {
            json!({"code": code, "message": self.message})
        } else {
            json!({"code": code, "message": self.message, "data": data})
        }
    }
}

impl std::fmt::Display for A2aError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.reason(), self.code(), self.message)
    }
}

impl std::error::Error for A2aError {}

#[cfg(feature = "server")]
impl From<crate::store::StoreError> for A2aError {
    fn from(e: crate::store::StoreError) -> Self {
        match e {
            crate::store::StoreError::NotFound(k) => A2aError::task_not_found(&k.id),
            other => A2aError::new(Internal).with_message(format!("store: {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_tables_differ_where_1_0_1_changed_them() {
        let e = A2aError::new(TaskNotCancelable);
        assert_eq!((e.http_status(ErrorTable::V1_0_1), e.http_status(ErrorTable::V1_0_0)), (400, 409));
        let e = A2aError::new(ContentTypeNotSupported);
        assert_eq!((e.http_status(ErrorTable::V1_0_1), e.http_status(ErrorTable::V1_0_0)), (400, 415));
        assert_eq!(A2aError::new(VersionNotSupported).code(), -32009);
    }

    #[test]
    fn error_info_is_in_every_wire_form() {
        let e = A2aError::task_not_found("t-404");
        let rpc = e.jsonrpc_error();
        assert_eq!(rpc["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(rpc["data"][0]["metadata"]["taskId"], "t-404");
        let rest = e.rest_body(ErrorTable::V1_0_1);
        assert_eq!(rest["error"]["status"], "NOT_FOUND");
        assert_eq!(rest["error"]["details"][0]["domain"], DOMAIN);
    }
}
