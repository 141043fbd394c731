//! The JSON-RPC envelope: decode one line into a [`Message`] in one pass, encode
//! a message compactly.
//!
//! Params and results stay raw ([`RawValue`]); the protocol layer decodes them by
//! method later.

use std::borrow::Cow;
use std::fmt;
use std::io;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{ErrorCode, ErrorObject};
use crate::id::RequestId;

/// Nesting deeper than this many arrays/objects (counting the message object
/// itself) is a parse error.
pub const MAX_NESTING_DEPTH: usize = 128;

/// One JSON-RPC 2.0 message.
///
/// Equality compares raw params and results by their JSON text.
#[derive(Debug, Clone)]
pub enum Message {
    /// A call that expects a response.
    Request {
        /// The id the response must carry.
        id: RequestId,
        /// The method name, verbatim.
        method: String,
        /// The params, raw; `None` when absent or `null`.
        params: Option<Box<RawValue>>,
    },
    /// A one-way message.
    Notification {
        /// The method name, verbatim.
        method: String,
        /// The params, raw; `None` when absent or `null`.
        params: Option<Box<RawValue>>,
    },
    /// The answer to a request.
    Response {
        /// The id of the request (`null` when the peer could not read it).
        id: RequestId,
        /// The result, raw, or the error object.
        result: Result<Box<RawValue>, ErrorObject>,
    },
}

impl PartialEq for Message {
    fn eq(&self, other: &Message) -> bool {
        fn raw(value: &Option<Box<RawValue>>) -> Option<&str> {
            value.as_deref().map(RawValue::get)
        }
        match (self, other) {
            (
                Message::Request { id, method, params },
                Message::Request { id: other_id, method: other_method, params: other_params },
            ) => id == other_id && method == other_method && raw(params) == raw(other_params),
            (
                Message::Notification { method, params },
                Message::Notification { method: other_method, params: other_params },
            ) => method == other_method && raw(params) == raw(other_params),
            (Message::Response { id, result }, Message::Response { id: other_id, result: other_result }) => {
                id == other_id
                    && match (result, other_result) {
                        (Ok(value), Ok(other_value)) => value.get() == other_value.get(),
                        (Err(error), Err(other_error)) => error == other_error,
                        _ => false,
                    }
            }
            _ => false,
        }
    }
}

/// Options of [`Message::decode_with`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// Whether a request may carry `"id": null` (ACP v1 allows it; ACP v2 and
    /// plain JSON-RPC practice do not). Default `false`. Responses with a `null`
    /// id are always accepted: they answer unreadable requests.
    pub allow_null_id: bool,
}

impl DecodeOptions {
    /// Sets [`DecodeOptions::allow_null_id`].
    pub fn allow_null_id(mut self, allow: bool) -> DecodeOptions {
        self.allow_null_id = allow;
        self
    }
}

impl Message {
    /// Builds a request.
    pub fn request(id: impl Into<RequestId>, method: impl Into<String>, params: Option<Box<RawValue>>) -> Message {
        Message::Request { id: id.into(), method: method.into(), params }
    }

    /// Builds a notification.
    pub fn notification(method: impl Into<String>, params: Option<Box<RawValue>>) -> Message {
        Message::Notification { method: method.into(), params }
    }

    /// Builds a response.
    pub fn response(id: RequestId, result: Result<Box<RawValue>, ErrorObject>) -> Message {
        Message::Response { id, result }
    }

    /// The id of a request or response.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Message::Request { id, .. } | Message::Response { id, .. } => Some(id),
            Message::Notification { .. } => None,
        }
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request { method, .. } | Message::Notification { method, .. } => Some(method),
            Message::Response { .. } => None,
        }
    }

    /// Decodes one line (without its terminator) with default options.
    pub fn decode(line: &[u8]) -> Result<Message, EnvelopeError> {
        Message::decode_with(line, &DecodeOptions::default())
    }

    /// Decodes one line (without its terminator) in one pass.
    ///
    /// See [`EnvelopeErrorKind`] for how failures are classified.
    pub fn decode_with(line: &[u8], options: &DecodeOptions) -> Result<Message, EnvelopeError> {
        crate::decode::decode(line, options)
    }

    /// Appends the message as compact JSON (no newline) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            Message::Request { id, method, params } => encode_request(out, id, method, params.as_deref()),
            Message::Notification { method, params } => encode_notification(out, method, params.as_deref()),
            Message::Response { id, result } => encode_response(
                out,
                id,
                match result {
                    Ok(value) => Ok(value),
                    Err(error) => Err(error),
                },
            ),
        }
    }

    /// The message as compact JSON, without a newline.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        self.encode_into(&mut out);
        out
    }

    /// Writes the message as compact JSON (no newline) to `writer`.
    pub fn write_to<W: io::Write>(&self, mut writer: W) -> io::Result<()> {
        writer.write_all(&self.to_vec())
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.to_vec()))
    }
}

/// Appends a request as compact JSON to `out`, around already-encoded params.
pub fn encode_request(out: &mut Vec<u8>, id: &RequestId, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write_json(out);
    out.extend_from_slice(b",\"method\":");
    write_json_string(out, method);
    if let Some(params) = params {
        out.extend_from_slice(b",\"params\":");
        write_raw(out, params);
    }
    out.push(b'}');
}

/// Appends a notification as compact JSON to `out`, around already-encoded params.
pub fn encode_notification(out: &mut Vec<u8>, method: &str, params: Option<&RawValue>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    write_json_string(out, method);
    if let Some(params) = params {
        out.extend_from_slice(b",\"params\":");
        write_raw(out, params);
    }
    out.push(b'}');
}

/// Appends a response as compact JSON to `out`, around an already-encoded result.
pub fn encode_response(out: &mut Vec<u8>, id: &RequestId, result: Result<&RawValue, &ErrorObject>) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write_json(out);
    match result {
        Ok(result) => {
            out.extend_from_slice(b",\"result\":");
            write_raw(out, result);
        }
        Err(error) => {
            out.extend_from_slice(b",\"error\":{\"code\":");
            use std::io::Write as _;
            // Writing into a Vec cannot fail.
            let _ = write!(out, "{}", error.code.0);
            out.extend_from_slice(b",\"message\":");
            write_json_string(out, &error.message);
            if let Some(data) = &error.data {
                out.extend_from_slice(b",\"data\":");
                write_raw(out, data);
            }
            out.push(b'}');
        }
    }
    out.push(b'}');
}

/// Appends `value` as a JSON string literal.
pub(crate) fn write_json_string(out: &mut Vec<u8>, value: &str) {
    // Serialising a str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// Appends raw JSON, dropping line breaks: in valid JSON they can only be
/// whitespace between tokens, and a framed message must not contain one.
fn write_raw(out: &mut Vec<u8>, raw: &RawValue) {
    let bytes = raw.get().as_bytes();
    if bytes.iter().any(|&byte| byte == b'\n' || byte == b'\r') {
        out.extend(bytes.iter().copied().filter(|&byte| byte != b'\n' && byte != b'\r'));
    } else {
        out.extend_from_slice(bytes);
    }
}

/// How an incoming line failed to be a message, and how it must be treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EnvelopeErrorKind {
    /// Not JSON: invalid UTF-8, a syntax error, trailing data after the value, or
    /// nesting deeper than [`MAX_NESTING_DEPTH`]. Answered with `-32700`, `id: null`.
    Parse,
    /// JSON that is not a valid request: a batch (any array), a scalar, a wrong or
    /// missing `jsonrpc`, a bad `id`, a non-string `method`, neither `method` nor
    /// `result`/`error`, a duplicate envelope key. Answered with `-32600`.
    InvalidRequest,
    /// A request whose `params` is neither an object, an array nor `null`.
    /// Answered with `-32602` at `$.params`.
    InvalidParams,
    /// A notification whose `params` is neither an object, an array nor `null`.
    /// Never answered (notifications are not answered).
    InvalidNotification,
    /// A response (no `method`, with `result` or `error`) that is malformed:
    /// both `result` and `error`, a bad error object, a bad or missing id, a
    /// wrong `jsonrpc`, a duplicate key. Never answered; the connection reports it
    /// and fails the matching pending call.
    InvalidResponse,
}

/// A line that is not a valid message: what to answer, to which id, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeError {
    kind: EnvelopeErrorKind,
    id: Option<RequestId>,
    message: Cow<'static, str>,
    path: Cow<'static, str>,
    /// Line and column (from 1) where a parse error found the line stop being JSON.
    position: Option<(u32, u32)>,
    /// What `params` held when it was neither an object, an array nor `null`.
    found: Option<&'static str>,
}

impl EnvelopeError {
    pub(crate) fn new(
        kind: EnvelopeErrorKind,
        id: Option<RequestId>,
        message: impl Into<Cow<'static, str>>,
        path: impl Into<Cow<'static, str>>,
    ) -> EnvelopeError {
        EnvelopeError { kind, id, message: message.into(), path: path.into(), position: None, found: None }
    }

    /// The same error for `params` that held `found` (`a string`, `a boolean`, `a number`).
    pub(crate) fn found(mut self, found: &'static str) -> EnvelopeError {
        self.found = Some(found);
        self
    }

    /// For params that were neither an object, an array nor `null`: what they were
    /// (`a string`, `a boolean`, `a number`).
    pub fn params_found(&self) -> Option<&'static str> {
        self.found
    }

    /// The same error at a line and column of the input (parse errors).
    pub(crate) fn at(mut self, line: u32, column: u32) -> EnvelopeError {
        self.position = Some((line, column));
        self
    }

    /// For a parse error, the line and column (from 1, the column in characters) of the
    /// first character that cannot continue a JSON text, or the end of the input
    /// ([`crate::syntax`]).
    pub fn position(&self) -> Option<(u32, u32)> {
        self.position
    }

    /// The kind of failure.
    pub fn kind(&self) -> EnvelopeErrorKind {
        self.kind
    }

    /// The JSON-RPC code that describes the failure (the one the reply carries).
    pub fn code(&self) -> ErrorCode {
        match self.kind {
            EnvelopeErrorKind::Parse => ErrorCode::PARSE_ERROR,
            EnvelopeErrorKind::InvalidRequest | EnvelopeErrorKind::InvalidResponse => ErrorCode::INVALID_REQUEST,
            EnvelopeErrorKind::InvalidParams | EnvelopeErrorKind::InvalidNotification => ErrorCode::INVALID_PARAMS,
        }
    }

    /// The id that could be recovered from the line, if any. A reply carries it,
    /// or `null` when this is `None`.
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// A lowercase description of the failure.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON path of the offending value, e.g. `$.id` (`$` for the whole line).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Whether the failure is answered with an error response.
    pub fn is_answered(&self) -> bool {
        matches!(
            self.kind,
            EnvelopeErrorKind::Parse | EnvelopeErrorKind::InvalidRequest | EnvelopeErrorKind::InvalidParams
        )
    }

    /// The error object of the reply: code, message, and `{"path": ...}` as data, with
    /// `"line"` and `"column"` for a parse error.
    pub fn to_error_object(&self) -> ErrorObject {
        let object = ErrorObject::new(self.code(), self.message.clone().into_owned());
        match self.position {
            Some((line, column)) => object.with_position(&self.path, line, column),
            None => object.with_path(&self.path),
        }
    }

    /// The error response to send, or `None` when the failure is not answered.
    pub fn reply(&self) -> Option<Message> {
        self.is_answered()
            .then(|| Message::response(self.id.clone().unwrap_or(RequestId::NULL), Err(self.to_error_object())))
    }
}

impl fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at `{}`", self.message, self.path)
    }
}

impl std::error::Error for EnvelopeError {}

// ---------------------------------------------------------------------------
// Building blocks shared with the decoder.

/// A scalar-or-container value classified without failing, so that decoding can
/// go on and recover the id after a bad value.
#[derive(Debug)]
pub(crate) enum Probe<'de> {
    Null,
    Bool,
    Int(i64),
    IntOutOfRange,
    Fraction,
    Str(Cow<'de, str>),
    Array,
    Object,
}

impl Probe<'_> {
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Probe::Null => "null",
            Probe::Bool => "boolean",
            Probe::Int(_) => "integer",
            Probe::IntOutOfRange => "integer out of range",
            Probe::Fraction => "fractional number",
            Probe::Str(_) => "string",
            Probe::Array => "array",
            Probe::Object => "object",
        }
    }
}

impl<'de> Deserialize<'de> for Probe<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Probe<'de>, D::Error> {
        deserializer.deserialize_any(ProbeVisitor)
    }
}

struct ProbeVisitor;

impl<'de> Visitor<'de> for ProbeVisitor {
    type Value = Probe<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Probe<'de>, E> {
        Ok(Probe::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Probe<'de>, E> {
        Ok(Probe::Bool)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Probe<'de>, E> {
        Ok(Probe::Int(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Probe<'de>, E> {
        Ok(i64::try_from(value).map_or(Probe::IntOutOfRange, Probe::Int))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Probe<'de>, E> {
        Ok(Probe::Fraction)
    }

    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Probe<'de>, E> {
        Ok(Probe::Str(Cow::Borrowed(value)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Probe<'de>, E> {
        Ok(Probe::Str(Cow::Owned(value.to_owned())))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Probe<'de>, E> {
        Ok(Probe::Str(Cow::Owned(value)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Probe<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Probe::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Probe::Object)
    }
}
