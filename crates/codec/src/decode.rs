//! Entry points: decode with paths and warnings, encode into reusable buffers.

use crate::kind::DecodeErrorKind;
use crate::path::{self, Attempt, Seg, STATE};
use crate::want::{Want, Wants};
use crate::wording::{self, Parts};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::fmt;

/// Why a value could not be decoded, and where: a value made where the failure
/// happened, whose message is rendered from its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// JSON path of the offending value, from the root given to [`decode`].
    pub path: String,
    /// What kind of failure it is (the same names in every SDK).
    pub kind: DecodeErrorKind,
    /// What the schema wants there, as a phrase: `a string`, `the field "sessionId"`,
    /// `an integer from 0 to 65535` (wording in `vectors/README.md`, "Error texts").
    pub expected: String,
    /// What the input holds there, as a phrase: `null`, `the integer 5`, `the string "x"`.
    pub found: String,
    /// `expected <expected>, found <found>`, rendered from the parts.
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.message, self.path)
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    /// An error from its parts; the message is rendered from them.
    pub fn new(
        path: impl Into<String>,
        kind: DecodeErrorKind,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        let (expected, found) = (expected.into(), found.into());
        let message = format!("expected {expected}, found {found}");
        Self { path: path.into(), kind, expected, found, message }
    }

    pub(crate) fn from_parts(path: String, parts: Parts) -> Self {
        Self::new(path, parts.kind, parts.expected, parts.found)
    }
}

/// A value that lenient decoding dropped or kept raw, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// JSON path of the value.
    pub path: String,
    /// What happened, in one line (written where it happened, from the same parts).
    pub message: String,
    /// What happened to the value.
    pub kind: WarningKind,
    /// What was wrong with it: the failure that made a salvaged value be dropped, or
    /// (for an unknown variant) a failure of kind `unknown-variant` naming the tag.
    pub error: DecodeError,
}

/// What lenient decoding did with a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WarningKind {
    /// An invalid optional value was dropped (or an invalid array item skipped),
    /// as the schema's lenient annotation allows.
    Salvaged,
    /// A union variant the schema does not list was kept as raw JSON (forward
    /// compatibility; nothing was lost).
    UnknownVariant,
}

/// A decoded value with the warnings lenient decoding produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded<T> {
    /// The value.
    pub value: T,
    /// Salvaged values, in the order met; empty for a clean message.
    pub warnings: Vec<Warning>,
}

impl<T> Decoded<T> {
    /// Maps the value, keeping the warnings.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Decoded<U> {
        Decoded { value: f(self.value), warnings: self.warnings }
    }
}

/// Decodes `json` as `T`. `root` is the path of the value inside its message
/// (`"$.params"`, `"$.result"`, or `"$"`), used as the prefix of every path.
pub fn decode<'a, T: Deserialize<'a> + Wants>(json: &'a str, root: &'static str) -> Result<Decoded<T>, DecodeError> {
    attempts(json.as_bytes(), T::WANT, root, || serde_json::from_str::<T>(json))
}

/// [`decode`] over bytes; invalid UTF-8 is reported like any other syntax error.
pub fn decode_slice<'a, T: Deserialize<'a> + Wants>(
    json: &'a [u8],
    root: &'static str,
) -> Result<Decoded<T>, DecodeError> {
    attempts(json, T::WANT, root, || serde_json::from_slice::<T>(json))
}

/// Runs `parse` optimistically, and again carefully when that fails (see
/// `path::Attempt`): the careful attempt's answer is the one returned then. The
/// careful attempt first checks that `json` is one JSON value (so that what fails
/// after is a value, never the syntax); a failure of the root value itself is
/// classified from `want`.
fn attempts<T>(
    json: &[u8],
    want: Want,
    root: &'static str,
    parse: impl Fn() -> Result<T, serde_json::Error>,
) -> Result<Decoded<T>, DecodeError> {
    if !path::careful_only() {
        let _optimistic = Attempt::new(true);
        reset(root);
        if let Ok(value) = parse() {
            let warnings = STATE.with(|s| std::mem::take(&mut s.borrow_mut().warnings));
            return Ok(Decoded { value, warnings });
        }
    }
    let _careful = Attempt::new(false);
    reset(root);
    let raw = match serde_json::from_slice::<&RawValue>(json) {
        Ok(_) if crate::nesting_exceeds(json, MAX_DEPTH) => return Err(not_json(root, None)),
        Ok(raw) => raw,
        Err(e) => return Err(not_json(root, Some(&e))),
    };
    let result = parse();
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let warnings = std::mem::take(&mut s.warnings);
        match result {
            Ok(value) => Ok(Decoded { value, warnings }),
            // Nothing inside the value recorded a failure: the root value itself failed.
            Err(_) => Err(s
                .error
                .take()
                .unwrap_or_else(|| DecodeError::from_parts(root.to_owned(), wording::failure(want, raw)))),
        }
    })
}

/// The failure of a text that is not one JSON value: the position where serde_json
/// stopped, or (`None`) nesting beyond the limit.
fn not_json(root: &str, syntax: Option<&serde_json::Error>) -> DecodeError {
    match syntax {
        Some(e) => {
            let found = format!("text that is not JSON (line {}, column {})", e.line(), e.column());
            DecodeError::new(root, DecodeErrorKind::NotJson, "JSON text", found)
        }
        None => {
            let expected = format!("JSON text nested at most {MAX_DEPTH} deep");
            DecodeError::new(root, DecodeErrorKind::NotJson, expected, "text nested deeper")
        }
    }
}

/// The deepest nesting the careful attempt reads (the limit JSON-RPC lines have too;
/// the careful attempt reads each member from its own text, so serde_json's own limit
/// would not hold it).
const MAX_DEPTH: usize = 128;

/// Decodes a `T` from a deserializer already positioned at it — a value inside a larger
/// document read in one pass, such as a message's params read with its envelope — with
/// paths under `root` and warnings as [`decode`] gives them. This is only the
/// optimistic attempt (a deserializer cannot be rewound for a careful one): any bad
/// value fails it, even one that [`decode`] would salvage with a warning, and the error
/// is the deserializer's own. A caller that gets an error decodes the value's text with
/// [`decode`], whose answer (value and warnings, or the error with its path) is the one
/// that counts.
pub fn decode_in<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    deserializer: D,
    root: &'static str,
) -> Result<Decoded<T>, D::Error> {
    if path::careful_only() {
        return Err(serde::de::Error::custom("one-pass decoding is turned off on this thread"));
    }
    let _optimistic = Attempt::new(true);
    reset(root);
    let value = T::deserialize(deserializer)?;
    let warnings = STATE.with(|s| std::mem::take(&mut s.borrow_mut().warnings));
    Ok(Decoded { value, warnings })
}

fn reset(root: &'static str) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.path.clear();
        s.path.push(Seg::Root(root));
        s.warnings.clear();
        s.error = None;
    });
}

/// Records the first, innermost failure with the current path, from its parts, and
/// returns its message (for the serde error that unwinds the decode).
pub(crate) fn record_parts(parts: Parts) -> String {
    let error = DecodeError::from_parts(path::current(), parts);
    let message = error.message.clone();
    keep_first(|| error);
    message
}

/// Records the failure of a value of type `want` whose raw text is `raw` at the
/// current path, unless something inside it recorded one already.
pub(crate) fn record_failure(want: Want, raw: &RawValue) -> String {
    keep_first(|| DecodeError::from_parts(path::current(), wording::failure(want, raw)));
    STATE.with(|s| s.borrow().error.as_ref().map(|e| e.message.clone()).unwrap_or_default())
}

/// Records the failure `error` makes, unless one is recorded already (the first is the
/// innermost; the ones after it are the same failure on its way out).
pub(crate) fn keep_first(error: impl FnOnce() -> DecodeError) {
    if STATE.with(|s| s.borrow().error.is_some()) {
        return;
    }
    let error = error();
    STATE.with(|s| s.borrow_mut().error = Some(error));
}

/// Encodes `value` as compact JSON, appending to `buf` (which callers reuse).
pub fn encode_into<T: Serialize + ?Sized>(value: &T, buf: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    serde_json::to_writer(buf, value)
}

/// Encodes `value` as compact JSON into any writer.
pub fn encode_to_writer<T: Serialize + ?Sized, W: std::io::Write>(
    value: &T,
    writer: W,
) -> Result<(), serde_json::Error> {
    serde_json::to_writer(writer, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_render_their_parts() {
        let e = DecodeError::new("$.x", DecodeErrorKind::WrongType, "a string", "null");
        assert_eq!(e.message, "expected a string, found null");
        assert_eq!(e.to_string(), "expected a string, found null at $.x");
    }

    /// A type whose members serde's derive reads: a failure inside it is recorded
    /// nowhere, which the careful attempt must notice (the vectors run with the check).
    #[derive(Debug, serde::Deserialize)]
    struct Unrecorded {
        #[allow(dead_code)]
        n: u8,
    }
    crate::wants!(Unrecorded, Named);

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "was not recorded where it happened")]
    fn a_failure_inside_a_value_that_nothing_records_is_caught() {
        let _ = decode::<Unrecorded>(r#"{"n":"x"}"#, "$");
    }

    #[test]
    fn a_failure_of_the_value_itself_is_named_from_its_type() {
        let e = decode::<Unrecorded>("true", "$.params").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::WrongType);
        assert_eq!(e.to_string(), "expected an object (Unrecorded), found the boolean true at $.params");
        let e = decode::<u16>("70000", "$.params").unwrap_err();
        assert_eq!((e.kind, e.expected.as_str()), (DecodeErrorKind::OutOfRange, "an integer from 0 to 65535"));
    }

    #[test]
    fn text_that_is_not_json_is_named_with_its_position() {
        let e = decode::<String>("[1,", "$").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::NotJson);
        assert_eq!((e.expected.as_str(), e.found.as_str()), ("JSON text", "text that is not JSON (line 1, column 3)"));
        let deep = "[".repeat(200) + &"]".repeat(200);
        let e = decode::<String>(&deep, "$").unwrap_err();
        assert_eq!((e.kind, e.found.as_str()), (DecodeErrorKind::NotJson, "text nested deeper"));
    }
}
