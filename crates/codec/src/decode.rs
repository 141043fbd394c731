//! Entry points: decode with paths and warnings, encode into reusable buffers.

use crate::path::{self, Attempt, Seg, STATE};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a value could not be decoded, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// JSON path of the offending value, from the root given to [`decode`].
    pub path: String,
    /// What the schema wants there, e.g. "a string" or "field `sessionId`".
    pub expected: String,
    /// What the input holds there, e.g. "null" or "integer `5`".
    pub found: String,
    /// The whole explanation in one line.
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at `{}`", self.message, self.path)
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    /// Builds an error from a serde message at `path`, splitting serde's
    /// "invalid type: X, expected Y" forms into their parts.
    pub(crate) fn from_message(path: String, message: &str) -> Self {
        let message = strip_position(message);
        let (expected, found) = split_message(message);
        Self { path, expected, found, message: message.to_owned() }
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
                Err(s.error.take().unwrap_or_else(|| DecodeError::from_message(path::render(&s.path), &e.to_string())))
            }
        }
    })
}

/// Records the first, innermost failure with the current path. Later failures on
/// the way out are wrappers of this one and are ignored.
pub(crate) fn record_error(message: &str) {
    let here = path::current();
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.error.is_none() {
            s.error = Some(DecodeError::from_message(here, message));
        }
    });
}

fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) if message[i..].contains(" column ") => &message[..i],
        _ => message,
    }
}

fn split_message(message: &str) -> (String, String) {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some((found, expected)) = rest.split_once(", expected ") {
                return (expected.to_owned(), found.to_owned());
            }
        }
    }
    if let Some(rest) = message.strip_prefix("missing field ") {
        return (format!("field {rest}"), "an object without it".to_owned());
    }
    if let Some(rest) = message.strip_prefix("duplicate field ") {
        return ("each key once".to_owned(), format!("{rest} twice"));
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return (expected.to_owned(), found.to_owned());
        }
    }
    (String::new(), String::new())
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
    fn splits_serde_messages() {
        let e = DecodeError::from_message("$.x".into(), "invalid type: null, expected a string at line 1 column 9");
        assert_eq!((e.expected.as_str(), e.found.as_str()), ("a string", "null"));
        assert_eq!(e.message, "invalid type: null, expected a string");
        let e = DecodeError::from_message("$".into(), "missing field `sessionId`");
        assert_eq!(e.expected, "field `sessionId`");
    }
}
