//! A2A errors and their wire forms on each binding. The table of kinds, codes and
//! statuses is generated from `rules/a2a.toml` (`crate::generated::errors`).
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

impl ErrorTable {
    /// The column of the generated rows' status pairs.
    fn column(self) -> usize {
        match self {
            ErrorTable::V1_0_1 => 0,
            ErrorTable::V1_0_0 => 1,
        }
    }
}

pub use crate::generated::errors::ErrorKind;
use ErrorKind::*;

impl ErrorKind {
    /// The JSON-RPC code.
    pub fn code(self) -> i64 {
        self.row().code
    }

    /// The `ErrorInfo.reason`.
    pub fn reason(self) -> &'static str {
        self.row().reason
    }
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
        A2aError { kind, message: kind.row().message.to_owned(), metadata: Vec::new() }
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
        self.kind.code()
    }

    /// The HTTP status on the HTTP+JSON binding under `table`.
    pub fn http_status(&self, table: ErrorTable) -> u16 {
        self.kind.row().http[table.column()]
    }

    /// The gRPC status name (`NOT_FOUND`, …) under A2A 1.0.1.
    pub fn grpc_status(&self) -> &'static str {
        self.kind.row().grpc[0]
    }

    /// The `status` of the HTTP+JSON binding's AIP-193 body: the gRPC status, except
    /// where that does not go with the HTTP status (an unknown route is 404 `NOT_FOUND`).
    pub fn rest_status(&self) -> &'static str {
        self.kind.row().status
    }

    /// The gRPC status name on the gRPC binding under `table` (A2A 1.0.0 answered
    /// some errors `UNIMPLEMENTED` where 1.0.1 says `FAILED_PRECONDITION`).
    pub fn grpc_status_in(&self, table: ErrorTable) -> &'static str {
        self.kind.row().grpc[table.column()]
    }

    /// The `google.rpc.ErrorInfo.reason`.
    pub fn reason(&self) -> &'static str {
        self.kind.reason()
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
            "status": self.rest_status(),
            "message": self.message,
            "details": [self.error_info()],
        }})
    }

    /// The A2A 0.3 JSON-RPC error object (`data` was a free-form object then).
    pub fn jsonrpc_error_v03(&self) -> Value {
        let code = self.kind.row().code_v03;
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
