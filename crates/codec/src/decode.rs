//! Entry points: decode with paths and warnings, encode into reusable buffers.

use crate::path::{self, Attempt, Seg, STATE};
use crate::wording::{self, Parts};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a value could not be decoded, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// JSON path of the offending value, from the root given to [`decode`].
    pub path: String,
    /// What the schema wants there, as a phrase: `a string`, `the field "sessionId"`,
    /// `an integer from 0 to 65535` (wording in `vectors/README.md`, "Error texts").
    pub expected: String,
    /// What the input holds there, as a phrase: `null`, `the integer 5`, `the string "x"`.
    pub found: String,
    /// The whole explanation in one line, rendered from the parts
    /// (`expected X, found Y`); only a failure without parts has a message of its own.
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
    pub fn new(path: impl Into<String>, expected: impl Into<String>, found: impl Into<String>) -> Self {
        let (expected, found) = (expected.into(), found.into());
        let message = format!("expected {expected}, found {found}");
        Self { path: path.into(), expected, found, message }
    }

    fn from_parts(path: String, parts: Parts) -> Self {
        Self::new(path, parts.expected, parts.found)
    }

    /// An error from a text serde_json produced at `path`: its "expected X, found Y"
    /// forms become parts ([`crate::wording`]); any other text is kept as the message.
    pub(crate) fn from_serde(path: String, message: &str) -> Self {
        match wording::from_serde(message) {
            Some(parts) => Self::from_parts(path, parts),
            None => Self { path, expected: String::new(), found: String::new(), message: message.to_owned() },
        }
    }
}

/// A value that lenient decoding dropped or replaced, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// JSON path of the value.
    pub path: String,
    /// What was wrong with it.
    pub message: String,
    /// What happened to the value.
    pub kind: WarningKind,
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
pub fn decode<'a, T: Deserialize<'a>>(json: &'a str, root: &'static str) -> Result<Decoded<T>, DecodeError> {
    attempts(root, || serde_json::from_str::<T>(json))
}

/// [`decode`] over bytes; invalid UTF-8 is reported like any other syntax error.
pub fn decode_slice<'a, T: Deserialize<'a>>(json: &'a [u8], root: &'static str) -> Result<Decoded<T>, DecodeError> {
    attempts(root, || serde_json::from_slice::<T>(json))
}

/// Runs `parse` optimistically, and again carefully when that fails (see
/// `path::Attempt`): the careful attempt's answer is the one returned then.
fn attempts<T>(
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
    finish(parse())
}

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

fn finish<T>(result: Result<T, serde_json::Error>) -> Result<Decoded<T>, DecodeError> {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let warnings = std::mem::take(&mut s.warnings);
        match result {
            Ok(value) => Ok(Decoded { value, warnings }),
            Err(e) => {
                Err(s.error.take().unwrap_or_else(|| DecodeError::from_serde(path::render(&s.path), &e.to_string())))
            }
        }
    })
}

/// Records the first, innermost failure with the current path, from a text serde_json
/// produced. Later failures on the way out are wrappers of this one and are ignored.
pub(crate) fn record_error(message: &str) {
    let here = path::current();
    keep_first(|| DecodeError::from_serde(here, message));
}

/// Records the first, innermost failure with the current path, from its parts, and
/// returns its message (for the serde error that unwinds the decode).
pub(crate) fn record_parts(parts: Parts) -> String {
    let error = DecodeError::from_parts(path::current(), parts);
    let message = error.message.clone();
    keep_first(|| error);
    message
}

fn keep_first(error: impl FnOnce() -> DecodeError) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.error.is_none() {
            s.error = Some(error());
        }
    });
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
        let e = DecodeError::from_serde("$.x".into(), "invalid type: null, expected a string at line 1 column 9");
        assert_eq!((e.expected.as_str(), e.found.as_str()), ("a string", "null"));
        assert_eq!(e.message, "expected a string, found null");
        assert_eq!(e.to_string(), "expected a string, found null at $.x");
        let e = DecodeError::from_serde("$".into(), "missing field `sessionId`");
        assert_eq!(e.expected, "the field \"sessionId\"");
        let e = DecodeError::from_serde("$".into(), "recursion limit exceeded");
        assert_eq!((e.expected.as_str(), e.message.as_str()), ("", "recursion limit exceeded"));
    }
}
