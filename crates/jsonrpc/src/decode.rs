//! The one-pass envelope decoder behind [`Message::decode_with`].
//!
//! A hand-written visitor walks the top-level object once, classifying each known
//! key's value without ever failing on a wrong type (so the id can still be
//! recovered), keeping `params`, `result` and `error.data` as raw JSON, and
//! skipping unknown keys. Only a syntax error stops it, and that is a parse error.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

pub use agentproto_codec::nesting_exceeds;

use crate::error::{ErrorCode, ErrorObject};
use crate::id::RequestId;
use crate::message::{DecodeOptions, EnvelopeError, EnvelopeErrorKind, Message, Probe, MAX_NESTING_DEPTH};

pub(crate) fn decode(line: &[u8], options: &DecodeOptions) -> Result<Message, EnvelopeError> {
    match parse(line, None::<&mut NoEager>)? {
        TopLevel::Array => Err(EnvelopeError::new(
            EnvelopeErrorKind::InvalidRequest,
            None,
            "invalid request: batches are not supported",
            "$",
        )),
        TopLevel::Scalar(found) => Err(EnvelopeError::new(
            EnvelopeErrorKind::InvalidRequest,
            None,
            format!("invalid request: expected an object, found {found}"),
            "$",
        )),
        TopLevel::Object(fields) => classify(fields, options),
    }
}

/// Checks and parses one line: UTF-8, the nesting bound, then the one-pass visitor,
/// which hands `params` to `eager` when it wants them.
fn parse<'de, E: EagerParams<'de>>(line: &'de [u8], eager: Option<&mut E>) -> Result<TopLevel<'de>, EnvelopeError> {
    let parse_error = |message: &'static str| EnvelopeError::new(EnvelopeErrorKind::Parse, None, message, "$");
    let text = std::str::from_utf8(line).map_err(|e| utf8_error(line, e.valid_up_to()))?;
    if nesting_exceeds(line, MAX_NESTING_DEPTH) {
        return Err(parse_error("parse error: nesting too deep"));
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer
        .deserialize_any(TopVisitor { eager })
        .and_then(|top| deserializer.end().map(|()| top))
        .map_err(|error| syntax_error(text, error.is_eof()))
}

/// The parse error for a line that is not UTF-8: the position is that of the first byte
/// that does not begin a valid UTF-8 sequence, counted in the characters before it.
fn utf8_error(line: &[u8], valid_up_to: usize) -> EnvelopeError {
    let before = std::str::from_utf8(&line[..valid_up_to]).unwrap_or_default();
    let at = crate::syntax::position_at(before);
    let message = format!("parse error: invalid utf-8 at line {}, column {}", at.line, at.column);
    EnvelopeError::new(EnvelopeErrorKind::Parse, None, message, "$").at(at.line, at.column)
}

/// The parse error for a line the parser refused, with the position every SDK
/// reports ([`crate::syntax`]); a line that is JSON by the grammar but refused all the
/// same (a lone surrogate escape, a number beyond a double) has none.
fn syntax_error(text: &str, eof: bool) -> EnvelopeError {
    match crate::syntax::first_invalid(text) {
        Some(at) => {
            let what = if at.eof { "unexpected end of input" } else { "invalid JSON" };
            let message = format!("parse error: {what} at line {}, column {}", at.line, at.column);
            EnvelopeError::new(EnvelopeErrorKind::Parse, None, message, "$").at(at.line, at.column)
        }
        None if eof => EnvelopeError::new(EnvelopeErrorKind::Parse, None, "parse error: unexpected end of input", "$"),
        None => EnvelopeError::new(EnvelopeErrorKind::Parse, None, "parse error: invalid JSON", "$"),
    }
}

/// A decoder for the params of the methods a receiver knows, run while the envelope is
/// read (see [`decode_call_eager`]). It keeps what it decodes itself: a decoded payload
/// can be large, and handing it back through the parser would copy it at every level.
pub trait EagerParams<'de> {
    /// Whether this decoder takes the params of `method` (the others are kept raw).
    fn wants(&self, method: &str) -> bool;
    /// Decodes and keeps the params of `method`, from the deserializer positioned at them.
    fn decode<D: Deserializer<'de>>(&mut self, method: &str, params: D) -> Result<(), D::Error>;
}

/// The envelope of a request or notification whose params an [`EagerParams`] decoded
/// and kept.
#[derive(Debug)]
pub struct EagerCall {
    /// The request's id; `None` for a notification.
    pub id: Option<RequestId>,
    /// The method.
    pub method: String,
}

/// Decodes a request or notification and its params in one pass over the line, when
/// `method` comes before `params` and `eager` wants that method.
///
/// This is a fast path with no verdict of its own: it gives `Some` only for a line that
/// [`Message::decode_with`] accepts as a request or notification whose params `eager`
/// decodes without error, and then the params are exactly what decoding the raw params
/// afterwards would give (the same deserializer over the same bytes). For everything
/// else — any envelope problem, params before `method`, params the decoder refuses or
/// does not want, responses — it gives `None`, and the caller takes the two-pass path,
/// which is the one that explains failures.
pub fn decode_call_eager<'de, E: EagerParams<'de>>(
    line: &'de [u8],
    options: &DecodeOptions,
    eager: &mut E,
) -> Option<EagerCall> {
    let TopLevel::Object(fields) = parse(line, Some(eager)).ok()? else {
        return None;
    };
    if !fields.eager {
        return None;
    }
    match classify(fields, options).ok()? {
        Message::Request { id, method, params: None } => Some(EagerCall { id: Some(id), method }),
        Message::Notification { method, params: None } => Some(EagerCall { id: None, method }),
        _ => None,
    }
}

/// The decoder of a plain envelope: it wants nothing.
enum NoEager {}

impl<'de> EagerParams<'de> for NoEager {
    fn wants(&self, _: &str) -> bool {
        match *self {}
    }
    fn decode<D: Deserializer<'de>>(&mut self, _: &str, _: D) -> Result<(), D::Error> {
        match *self {}
    }
}

/// Hands the `params` value to an [`EagerParams`].
struct EagerSeed<'a, 'm, E> {
    eager: &'a mut E,
    method: &'m str,
}

impl<'de, E: EagerParams<'de>> DeserializeSeed<'de> for EagerSeed<'_, '_, E> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.eager.decode(self.method, deserializer)
    }
}

/// The known envelope keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl Field {
    fn path(self) -> &'static str {
        match self {
            Field::Jsonrpc => "$.jsonrpc",
            Field::Id => "$.id",
            Field::Method => "$.method",
            Field::Params => "$.params",
            Field::Result => "$.result",
            Field::Error => "$.error",
            Field::Other => "$",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Field::Jsonrpc => "jsonrpc",
            Field::Id => "id",
            Field::Method => "method",
            Field::Params => "params",
            Field::Result => "result",
            Field::Error => "error",
            Field::Other => "?",
        }
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

struct FieldVisitor;

impl Visitor<'_> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Field, E> {
        Ok(match key {
            "jsonrpc" => Field::Jsonrpc,
            "id" => Field::Id,
            "method" => Field::Method,
            "params" => Field::Params,
            "result" => Field::Result,
            "error" => Field::Error,
            _ => Field::Other,
        })
    }
}

enum TopLevel<'de> {
    Object(Fields<'de>),
    Array,
    Scalar(&'static str),
}

#[derive(Default)]
struct Fields<'de> {
    jsonrpc: Option<Probe<'de>>,
    id: Option<Probe<'de>>,
    method: Option<Probe<'de>>,
    params: Option<Box<RawValue>>,
    result: Option<Box<RawValue>>,
    error: Option<ErrorProbe<'de>>,
    duplicate: Option<Field>,
    /// Whether `params` went to an [`EagerParams`] (then `params` stays `None`).
    eager: bool,
}

struct TopVisitor<'a, E> {
    eager: Option<&'a mut E>,
}

impl<'de, E: EagerParams<'de>> Visitor<'de> for TopVisitor<'_, E> {
    type Value = TopLevel<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_unit<X: de::Error>(self) -> Result<Self::Value, X> {
        Ok(TopLevel::Scalar("null"))
    }

    fn visit_bool<X: de::Error>(self, _: bool) -> Result<Self::Value, X> {
        Ok(TopLevel::Scalar("a boolean"))
    }

    fn visit_i64<X: de::Error>(self, _: i64) -> Result<Self::Value, X> {
        Ok(TopLevel::Scalar("a number"))
    }

    fn visit_u64<X: de::Error>(self, _: u64) -> Result<Self::Value, X> {
        Ok(TopLevel::Scalar("a number"))
    }

    fn visit_f64<X: de::Error>(self, _: f64) -> Result<Self::Value, X> {
        Ok(TopLevel::Scalar("a number"))
    }

    fn visit_str<X: de::Error>(self, _: &str) -> Result<Self::Value, X> {
        Ok(TopLevel::Scalar("a string"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(TopLevel::Array)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key::<Field>()? {
            let seen = match key {
                Field::Jsonrpc => fields.jsonrpc.is_some(),
                Field::Id => fields.id.is_some(),
                Field::Method => fields.method.is_some(),
                Field::Params => fields.params.is_some() || fields.eager,
                Field::Result => fields.result.is_some(),
                Field::Error => fields.error.is_some(),
                Field::Other => false,
            };
            if seen {
                fields.duplicate.get_or_insert(key);
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            match key {
                Field::Jsonrpc => fields.jsonrpc = Some(map.next_value()?),
                Field::Id => fields.id = Some(map.next_value()?),
                Field::Method => fields.method = Some(map.next_value()?),
                Field::Params => match (&mut self.eager, &fields.method) {
                    (Some(eager), Some(Probe::Str(method))) if eager.wants(method) => {
                        map.next_value_seed(EagerSeed { eager: &mut **eager, method })?;
                        fields.eager = true;
                    }
                    _ => fields.params = Some(map.next_value()?),
                },
                Field::Result => fields.result = Some(map.next_value()?),
                Field::Error => fields.error = Some(map.next_value()?),
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(TopLevel::Object(fields))
    }
}

/// The known keys of an error object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorField {
    Code,
    Message,
    Data,
    Other,
}

impl<'de> Deserialize<'de> for ErrorField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ErrorField, D::Error> {
        deserializer.deserialize_identifier(ErrorFieldVisitor)
    }
}

struct ErrorFieldVisitor;

impl Visitor<'_> for ErrorFieldVisitor {
    type Value = ErrorField;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<ErrorField, E> {
        Ok(match key {
            "code" => ErrorField::Code,
            "message" => ErrorField::Message,
            "data" => ErrorField::Data,
            _ => ErrorField::Other,
        })
    }
}

/// The `error` member, classified without failing.
enum ErrorProbe<'de> {
    NotObject(&'static str),
    Object {
        code: Option<Probe<'de>>,
        message: Option<Probe<'de>>,
        data: Option<Box<RawValue>>,
        duplicate: Option<&'static str>,
    },
}

impl<'de> Deserialize<'de> for ErrorProbe<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ErrorProbe<'de>, D::Error> {
        deserializer.deserialize_any(ErrorProbeVisitor)
    }
}

struct ErrorProbeVisitor;

impl<'de> Visitor<'de> for ErrorProbeVisitor {
    type Value = ErrorProbe<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an error object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<ErrorProbe<'de>, E> {
        Ok(ErrorProbe::NotObject("null"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<ErrorProbe<'de>, E> {
        Ok(ErrorProbe::NotObject("boolean"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<ErrorProbe<'de>, E> {
        Ok(ErrorProbe::NotObject("number"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<ErrorProbe<'de>, E> {
        Ok(ErrorProbe::NotObject("number"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<ErrorProbe<'de>, E> {
        Ok(ErrorProbe::NotObject("number"))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<ErrorProbe<'de>, E> {
        Ok(ErrorProbe::NotObject("string"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ErrorProbe<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ErrorProbe::NotObject("array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ErrorProbe<'de>, A::Error> {
        let mut code = None;
        let mut message = None;
        let mut data = None;
        let mut duplicate = None;
        while let Some(key) = map.next_key::<ErrorField>()? {
            match key {
                ErrorField::Code if code.is_none() => code = Some(map.next_value()?),
                ErrorField::Message if message.is_none() => message = Some(map.next_value()?),
                ErrorField::Data if data.is_none() => data = Some(map.next_value()?),
                ErrorField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
                repeated => {
                    duplicate.get_or_insert(match repeated {
                        ErrorField::Code => "$.error.code",
                        ErrorField::Message => "$.error.message",
                        _ => "$.error.data",
                    });
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(ErrorProbe::Object { code, message, data, duplicate })
    }
}

/// The state of the `id` member.
enum IdState {
    Missing,
    Valid(RequestId),
    Null,
    Invalid(&'static str),
}

impl IdState {
    fn from_probe(probe: Option<Probe<'_>>) -> IdState {
        match probe {
            None => IdState::Missing,
            Some(Probe::Int(number)) => IdState::Valid(RequestId::number(number)),
            Some(Probe::Str(string)) => IdState::Valid(RequestId::string(string.into_owned())),
            Some(Probe::Null) => IdState::Null,
            Some(other) => IdState::Invalid(other.describe()),
        }
    }
}

fn classify(fields: Fields<'_>, options: &DecodeOptions) -> Result<Message, EnvelopeError> {
    let Fields { jsonrpc, id, method, params, result, error, duplicate, eager: _ } = fields;
    let id = IdState::from_probe(id);
    if let Some(method) = method {
        return classify_call(jsonrpc, id, method, params, result.is_some(), error.is_some(), duplicate, options);
    }
    if result.is_some() || error.is_some() {
        return classify_response(jsonrpc, id, result, error, duplicate);
    }
    let id = match id {
        IdState::Valid(id) => Some(id),
        _ => None,
    };
    if let Some(field) = duplicate {
        return Err(duplicate_error(EnvelopeErrorKind::InvalidRequest, id, field));
    }
    Err(EnvelopeError::new(EnvelopeErrorKind::InvalidRequest, id, "invalid request: missing `method`", "$"))
}

fn duplicate_error(kind: EnvelopeErrorKind, id: Option<RequestId>, field: Field) -> EnvelopeError {
    // A repeated `id` leaves the id ambiguous: answer with `null`.
    let id = if field == Field::Id { None } else { id };
    let prefix = if kind == EnvelopeErrorKind::InvalidResponse { "invalid response" } else { "invalid request" };
    EnvelopeError::new(kind, id, format!("{prefix}: duplicate key `{}`", field.name()), field.path())
}

/// What is wrong with the `jsonrpc` member, and where. A missing member is
/// reported at the path of the object that lacks it.
fn jsonrpc_problem(jsonrpc: Option<&Probe<'_>>) -> Option<(String, &'static str)> {
    match jsonrpc {
        None => Some(("missing `jsonrpc`".to_owned(), "$")),
        Some(Probe::Str(version)) if version == "2.0" => None,
        Some(Probe::Str(version)) => Some((
            format!("`jsonrpc` must be \"2.0\", found {}", serde_json::to_string(version).unwrap_or_default()),
            "$.jsonrpc",
        )),
        Some(other) => Some((format!("`jsonrpc` must be \"2.0\", found {}", other.describe()), "$.jsonrpc")),
    }
}

#[allow(clippy::too_many_arguments)] // One call site; the pieces are the decoded envelope.
fn classify_call(
    jsonrpc: Option<Probe<'_>>,
    id: IdState,
    method: Probe<'_>,
    params: Option<Box<RawValue>>,
    has_result: bool,
    has_error: bool,
    duplicate: Option<Field>,
    options: &DecodeOptions,
) -> Result<Message, EnvelopeError> {
    let invalid = |id: Option<RequestId>, message: String, path: &'static str| {
        EnvelopeError::new(EnvelopeErrorKind::InvalidRequest, id, message, path)
    };
    let echo = match &id {
        IdState::Valid(id) => Some(id.clone()),
        IdState::Null if options.allow_null_id => Some(RequestId::NULL),
        _ => None,
    };
    if let Some(field) = duplicate {
        return Err(duplicate_error(EnvelopeErrorKind::InvalidRequest, echo, field));
    }
    if let Some((problem, path)) = jsonrpc_problem(jsonrpc.as_ref()) {
        return Err(invalid(echo, format!("invalid request: {problem}"), path));
    }
    match &id {
        IdState::Invalid(found) => {
            return Err(invalid(
                None,
                format!("invalid request: expected an integer or a string id, found {found}"),
                "$.id",
            ));
        }
        IdState::Null if !options.allow_null_id => {
            return Err(invalid(None, "invalid request: `id` must not be null".to_owned(), "$.id"));
        }
        _ => {}
    }
    let method = match method {
        Probe::Str(method) => method.into_owned(),
        other => {
            return Err(invalid(
                echo,
                format!("invalid request: expected a string method, found {}", other.describe()),
                "$.method",
            ));
        }
    };
    if has_result || has_error {
        let path = if has_result { "$.result" } else { "$.error" };
        return Err(invalid(echo, "invalid request: a request cannot carry `result` or `error`".to_owned(), path));
    }
    let params = match params {
        None => None,
        Some(params) => match params.get().as_bytes().first() {
            Some(b'{') | Some(b'[') => Some(params),
            Some(b'n') => None,
            first => {
                let (found, phrase) = match first {
                    Some(b'"') => ("string", "a string"),
                    Some(b't') | Some(b'f') => ("boolean", "a boolean"),
                    _ => ("number", "a number"),
                };
                let (kind, prefix) = match echo {
                    Some(_) => (EnvelopeErrorKind::InvalidParams, "invalid params"),
                    None => (EnvelopeErrorKind::InvalidNotification, "invalid notification params"),
                };
                return Err(EnvelopeError::new(
                    kind,
                    echo,
                    format!("{prefix}: expected an object or an array, found {found}"),
                    "$.params",
                )
                .found(phrase));
            }
        },
    };
    Ok(match echo {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

fn classify_response(
    jsonrpc: Option<Probe<'_>>,
    id: IdState,
    result: Option<Box<RawValue>>,
    error: Option<ErrorProbe<'_>>,
    duplicate: Option<Field>,
) -> Result<Message, EnvelopeError> {
    let recovered = match &id {
        IdState::Valid(id) => Some(id.clone()),
        IdState::Null => Some(RequestId::NULL),
        _ => None,
    };
    let invalid = |id: Option<RequestId>, message: String, path: &'static str| {
        EnvelopeError::new(EnvelopeErrorKind::InvalidResponse, id, format!("invalid response: {message}"), path)
    };
    if let Some(field) = duplicate {
        return Err(duplicate_error(EnvelopeErrorKind::InvalidResponse, recovered, field));
    }
    if let Some((problem, path)) = jsonrpc_problem(jsonrpc.as_ref()) {
        return Err(invalid(recovered, problem, path));
    }
    let id = match id {
        IdState::Valid(id) => id,
        IdState::Null => RequestId::NULL,
        IdState::Missing => return Err(invalid(None, "missing `id`".to_owned(), "$")),
        IdState::Invalid(found) => {
            return Err(invalid(None, format!("expected an integer, a string or null id, found {found}"), "$.id"));
        }
    };
    let error = match (result, error) {
        (Some(_), Some(_)) => {
            return Err(invalid(Some(id), "both `result` and `error`".to_owned(), "$"));
        }
        (Some(result), None) => return Ok(Message::Response { id, result: Ok(result) }),
        (None, Some(error)) => error,
        (None, None) => unreachable!("classify_response needs `result` or `error`"),
    };
    let (code, message, data, duplicate) = match error {
        ErrorProbe::NotObject(found) => {
            return Err(invalid(Some(id), format!("expected an error object, found {found}"), "$.error"));
        }
        ErrorProbe::Object { code, message, data, duplicate } => (code, message, data, duplicate),
    };
    if let Some(path) = duplicate {
        return Err(invalid(Some(id), "duplicate key in the error object".to_owned(), path));
    }
    let code = match code {
        Some(Probe::Int(code)) => match i32::try_from(code) {
            Ok(code) => ErrorCode(code),
            Err(_) => {
                return Err(invalid(Some(id), "error code out of the i32 range".to_owned(), "$.error.code"));
            }
        },
        Some(other) => {
            return Err(invalid(
                Some(id),
                format!("expected an integer error code, found {}", other.describe()),
                "$.error.code",
            ));
        }
        None => return Err(invalid(Some(id), "missing error code".to_owned(), "$.error")),
    };
    let message = match message {
        Some(Probe::Str(message)) => message.into_owned(),
        Some(other) => {
            return Err(invalid(
                Some(id),
                format!("expected a string error message, found {}", other.describe()),
                "$.error.message",
            ));
        }
        None => {
            return Err(invalid(Some(id), "missing error message".to_owned(), "$.error"));
        }
    };
    Ok(Message::Response { id, result: Err(ErrorObject { code, message, data }) })
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
