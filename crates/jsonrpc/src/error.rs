//! Errors, in two planes that never mix.
//!
//! * Wire errors: [`ErrorCode`] and [`ErrorObject`], the `error` member of a
//!   JSON-RPC response. They cross the wire.
//! * Local errors: [`CallError`], [`ConnectionError`], [`DecodeError`]. They
//!   describe what happened on this side (closed, timed out, undecodable) and
//!   never cross the wire. Each `Display` describes its own level only; the cause
//!   is in [`std::error::Error::source`].

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::message::{write_json_string, EnvelopeError};

/// A JSON-RPC error code: an open set of `i32` values with named constants (the
/// codes ACP names, generated into `codes.rs` from the pinned schemas).
///
/// Unknown codes round-trip unchanged.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "ErrorCode({} {name})", self.0),
            None => write!(f, "ErrorCode({})", self.0),
        }
    }
}

impl From<i32> for ErrorCode {
    fn from(code: i32) -> ErrorCode {
        ErrorCode(code)
    }
}

// serde's derive names no failure inside: a bad error object is refused as a whole.
agentproto_codec::wants!(ErrorObject, Phrase("an error object (an integer code, a string message, optional data)"));

/// The wire error: the `error` member of a JSON-RPC response.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short, lowercase description.
    pub message: String,
    /// Structured detail, kept as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<RawValue>>,
}

impl PartialEq for ErrorObject {
    fn eq(&self, other: &ErrorObject) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|data| data.get()) == other.data.as_ref().map(|data| data.get())
    }
}

impl ErrorObject {
    /// An error without data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorObject {
        ErrorObject { code, message: message.into(), data: None }
    }

    /// Replaces the data with raw JSON.
    pub fn with_data(mut self, data: Box<RawValue>) -> ErrorObject {
        self.data = Some(data);
        self
    }

    /// A `-32601` error naming the method.
    pub fn method_not_found(method: &str) -> ErrorObject {
        let mut data = Vec::with_capacity(method.len() + 16);
        data.extend_from_slice(b"{\"method\":");
        write_json_string(&mut data, method);
        data.push(b'}');
        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: `{method}`"))
            .with_data(raw_from_vec(data))
    }

    /// A `-32603` error.
    pub fn internal_error(message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// The `-32800` error sent when a cancelled request is dropped.
    pub fn request_cancelled() -> ErrorObject {
        ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "request cancelled")
    }

    /// A validation error (`-32602` by default) saying what was expected, what was
    /// found and where.
    ///
    /// The message reads `invalid params: expected a string, found null at $.params.sessionId`
    /// and `data` is `{"path": "$.params.sessionId", "expected": "a string", "found": "null"}`.
    pub fn invalid_params(path: &str, expected: &str, found: &str) -> ErrorObject {
        ErrorObject::validation(ErrorCode::INVALID_PARAMS, "invalid params", path, expected, found)
    }

    /// A validation error with any code and message prefix (for example `-32600`
    /// with `"invalid request"`); see [`ErrorObject::invalid_params`].
    pub fn validation(code: ErrorCode, prefix: &str, path: &str, expected: &str, found: &str) -> ErrorObject {
        let mut data = Vec::with_capacity(path.len() + expected.len() + found.len() + 40);
        data.extend_from_slice(b"{\"path\":");
        write_json_string(&mut data, path);
        data.extend_from_slice(b",\"expected\":");
        write_json_string(&mut data, expected);
        data.extend_from_slice(b",\"found\":");
        write_json_string(&mut data, found);
        data.push(b'}');
        ErrorObject::new(code, format!("{prefix}: expected {expected}, found {found} at {path}"))
            .with_data(raw_from_vec(data))
    }

    /// The `-32602` error for a decode failure: as [`ErrorObject::invalid_params`], with
    /// the failure's kind in `data` (`{"path", "kind", "expected", "found"}`).
    pub fn invalid_params_decoded(e: &agentproto_codec::DecodeError) -> ErrorObject {
        let kind = e.kind.as_str();
        let mut data = Vec::with_capacity(e.path.len() + kind.len() + e.expected.len() + e.found.len() + 48);
        data.extend_from_slice(b"{\"path\":");
        write_json_string(&mut data, &e.path);
        data.extend_from_slice(b",\"kind\":");
        write_json_string(&mut data, kind);
        data.extend_from_slice(b",\"expected\":");
        write_json_string(&mut data, &e.expected);
        data.extend_from_slice(b",\"found\":");
        write_json_string(&mut data, &e.found);
        data.push(b'}');
        ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("invalid params: {} at {}", e.message, e.path))
            .with_data(raw_from_vec(data))
    }

    /// A `{"path": ..., "line": ..., "column": ...}` data object, used for parse errors.
    pub(crate) fn with_position(self, path: &str, line: u32, column: u32) -> ErrorObject {
        let mut data = Vec::with_capacity(path.len() + 40);
        data.extend_from_slice(b"{\"path\":");
        write_json_string(&mut data, path);
        data.extend_from_slice(format!(",\"line\":{line},\"column\":{column}}}").as_bytes());
        self.with_data(raw_from_vec(data))
    }

    /// A `{"path": ...}` data object, used for envelope errors.
    pub(crate) fn with_path(self, path: &str) -> ErrorObject {
        let mut data = Vec::with_capacity(path.len() + 12);
        data.extend_from_slice(b"{\"path\":");
        write_json_string(&mut data, path);
        data.push(b'}');
        self.with_data(raw_from_vec(data))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

/// Turns JSON text this crate produced itself into a raw value.
pub(crate) fn raw_from_vec(json: Vec<u8>) -> Box<RawValue> {
    let text = String::from_utf8(json).expect("crate-produced JSON is UTF-8");
    RawValue::from_string(text).expect("crate-produced JSON is valid")
}

/// A value could not be encoded or decoded with serde (typed convenience calls).
#[derive(Debug, thiserror::Error)]
#[error("could not {action} `{what}`")]
pub struct DecodeError {
    action: &'static str,
    what: String,
    #[source]
    source: serde_json::Error,
}

impl DecodeError {
    pub(crate) fn decode(what: &str, source: serde_json::Error) -> DecodeError {
        DecodeError { action: "decode the result of", what: what.to_owned(), source }
    }

    pub(crate) fn encode(what: &str, source: serde_json::Error) -> DecodeError {
        DecodeError { action: "encode the params of", what: what.to_owned(), source }
    }
}

/// Why an outgoing call (or notification) did not produce a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The peer answered with an error object.
    #[error("peer returned error {}", .0.code)]
    Rpc(ErrorObject),
    /// The connection is closed (input reached end of file, the transport failed,
    /// or the connection was dropped); no answer can arrive.
    #[error("connection closed")]
    Closed,
    /// No answer arrived in time; a cancel notification was sent.
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// The peer sent a malformed response for this call (for example with both
    /// `result` and `error`).
    #[error("peer sent an invalid response")]
    InvalidResponse(#[source] EnvelopeError),
    /// The peer's response was larger than the maximum message size and was discarded.
    #[error("response of {0} bytes exceeds the maximum message size")]
    ResponseTooLarge(u64),
    /// The typed params could not be encoded or the typed result decoded.
    #[error("could not convert a typed value")]
    Decode(#[source] DecodeError),
}

impl CallError {
    /// Whether the connection was closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, CallError::Closed)
    }

    /// Whether the call timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, CallError::Timeout(_))
    }

    /// The peer's error object, if the peer answered with one.
    pub fn as_rpc(&self) -> Option<&ErrorObject> {
        match self {
            CallError::Rpc(error) => Some(error),
            _ => None,
        }
    }
}

/// Why a [`Connection`](crate::Connection) stopped with a transport failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// Reading the input failed.
    #[error("could not read from the peer")]
    Read(#[source] std::io::Error),
    /// Writing the output failed.
    #[error("could not write to the peer")]
    Write(#[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_error_wire_form() {
        let error = ErrorObject::invalid_params("$.params.sessionId", "a string", "null");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(error.message, "invalid params: expected a string, found null at $.params.sessionId");
        assert_eq!(
            serde_json::to_string(&error).unwrap(),
            r#"{"code":-32602,"message":"invalid params: expected a string, found null at $.params.sessionId","data":{"path":"$.params.sessionId","expected":"a string","found":"null"}}"#
        );
    }

    #[test]
    fn unknown_codes_round_trip() {
        let error: ErrorObject = serde_json::from_str(r#"{"code":-31999,"message":"x"}"#).unwrap();
        assert_eq!(error.code, ErrorCode(-31999));
        assert_eq!(error.code.name(), None);
        assert_eq!(serde_json::to_string(&error).unwrap(), r#"{"code":-31999,"message":"x"}"#);
    }

    #[test]
    fn named_codes() {
        assert_eq!(ErrorCode::PARSE_ERROR.0, -32700);
        assert_eq!(ErrorCode::INVALID_REQUEST.0, -32600);
        assert_eq!(ErrorCode::METHOD_NOT_FOUND.0, -32601);
        assert_eq!(ErrorCode::INVALID_PARAMS.0, -32602);
        assert_eq!(ErrorCode::INTERNAL_ERROR.0, -32603);
        assert_eq!(ErrorCode::REQUEST_CANCELLED.0, -32800);
        assert_eq!(ErrorCode::AUTH_REQUIRED.0, -32000);
        assert_eq!(ErrorCode::RESOURCE_NOT_FOUND.0, -32002);
        assert_eq!(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0, -32022);
    }

    #[test]
    fn method_not_found_names_the_method() {
        let error = ErrorObject::method_not_found("x/\"y");
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(error.data.unwrap().get(), r#"{"method":"x/\"y"}"#);
    }

    #[test]
    fn call_error_display_is_one_level() {
        let error = CallError::Rpc(ErrorObject::request_cancelled());
        assert_eq!(error.to_string(), "peer returned error -32800");
        assert!(CallError::Closed.is_closed());
    }
}
