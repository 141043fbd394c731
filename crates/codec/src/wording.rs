//! The words of a decode failure: its kind and the phrases for what was expected and
//! what was found, the same in the Python and TypeScript SDKs (`vectors/README.md`,
//! "Error texts"; the kinds are `rules/decode.toml`).
//!
//! A phrase never quotes another phrase and never names a Rust type: names and string
//! values are written as JSON strings (`the field "prompt"`, `the string "x"`),
//! integer types as their range (`an integer from 0 to 65535`).
//!
//! Every failure is built here from what the decoder knows where it happens: the
//! codec's own checks name their kind, and a value that serde's primitive impls
//! refuse is classified by [`failure`] from the type that wanted it ([`Want`]) and
//! the value's raw text. serde's error texts are never read.

use serde_json::value::RawValue;

use crate::kind::DecodeErrorKind;
use crate::want::Want;

/// The `found` phrase of a JSON value, from its raw text.
pub(crate) fn found_raw(raw: &RawValue) -> String {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'{') => "an object".to_owned(),
        Some(b'[') => "an array".to_owned(),
        Some(b'"') => match serde_json::from_str::<String>(text) {
            Ok(s) => string(&s),
            Err(_) => "a string".to_owned(),
        },
        Some(b't') => "the boolean true".to_owned(),
        Some(b'f') => "the boolean false".to_owned(),
        Some(b'n') => "null".to_owned(),
        _ => number(text),
    }
}

/// `the string "…"`, the value written as a JSON string.
pub(crate) fn string(s: &str) -> String {
    format!("the string {}", quote(s))
}

/// A name or a value written as a JSON string.
pub(crate) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// `the integer N` for an integer that fits 64 bits (signed or not), else
/// `the number X`, X written as Rust writes the nearest double.
fn number(text: &str) -> String {
    if let Ok(n) = text.parse::<i64>() {
        return format!("the integer {n}");
    }
    if let Ok(n) = text.parse::<u64>() {
        return format!("the integer {n}");
    }
    match text.parse::<f64>() {
        Ok(x) => format!("the number {}", float(x)),
        Err(_) => "a number".to_owned(),
    }
}

/// A double as the phrases write it: Rust's `{}`, plus `.0` when that has no point.
pub(crate) fn float(x: f64) -> String {
    let text = x.to_string();
    if x.is_finite() && !text.contains('.') {
        format!("{text}.0")
    } else {
        text
    }
}

/// The `expected` phrase of a closed set of string values: `one of "a", "b"`, or the
/// one value, `"a"`.
pub(crate) fn one_of(values: &[&str]) -> String {
    let list = values.iter().map(|v| quote(v)).collect::<Vec<_>>().join(", ");
    if values.len() == 1 {
        list
    } else {
        format!("one of {list}")
    }
}

/// `an integer from LOW to HIGH`, the phrase for an integer type (by its schema format).
pub(crate) fn integer_range(low: i128, high: i128) -> String {
    format!("an integer from {low} to {high}")
}

/// The parts of a failure: its kind and the two phrases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parts {
    pub(crate) kind: DecodeErrorKind,
    pub(crate) expected: String,
    pub(crate) found: String,
}

impl Parts {
    pub(crate) fn new(kind: DecodeErrorKind, expected: impl Into<String>, found: impl Into<String>) -> Self {
        Self { kind, expected: expected.into(), found: found.into() }
    }
}

/// The failure of a value of type `want` whose raw text is `raw`, when nothing inside
/// the value recorded a more precise one. The syntax of the whole text was checked
/// before, so what is left is a value of another JSON type, a number its type cannot
/// hold, or a string whose escapes are not Unicode.
pub(crate) fn failure(want: Want, raw: &RawValue) -> Parts {
    let text = raw.get();
    let first = text.as_bytes().first().copied().unwrap_or(b' ');
    let number = first == b'-' || first.is_ascii_digit();
    if number && text.parse::<f64>().is_ok_and(f64::is_infinite) {
        return number_out_of_range();
    }
    match want {
        Want::String if first == b'"' => invalid_escape(),
        Want::Integer { low, high } if number => {
            Parts::new(DecodeErrorKind::OutOfRange, integer_range(low, high), found_raw(raw))
        }
        _ => {
            // A value of the JSON type `want` reads fails only inside, where the failure
            // is recorded first; getting here with one means a path that records nothing
            // (tests run every vector with this check on).
            debug_assert!(
                !(crate::path::careful() && fits(want, first)),
                "a failure inside {text:.80} was not recorded where it happened"
            );
            Parts::new(DecodeErrorKind::WrongType, want.phrase(), found_raw(raw))
        }
    }
}

/// Whether a value whose text starts with `first` is of the JSON type `want` reads.
fn fits(want: Want, first: u8) -> bool {
    match want {
        Want::Any => true,
        Want::String => first == b'"',
        Want::Boolean => first == b't' || first == b'f',
        Want::Number | Want::Integer { .. } => first == b'-' || first.is_ascii_digit(),
        Want::Array => first == b'[',
        Want::Object | Want::Named(_) => first == b'{',
        Want::Phrase(_) => false,
    }
}

/// A string whose escapes do not spell Unicode text.
pub(crate) fn invalid_escape() -> Parts {
    Parts::new(DecodeErrorKind::InvalidUnicode, "a string of valid Unicode", "an invalid escape")
}

/// A required member is absent.
pub(crate) fn missing_field(name: &str) -> Parts {
    Parts::new(DecodeErrorKind::MissingField, format!("the field {}", quote(name)), "an object without it")
}

/// A member appears twice.
pub(crate) fn repeated_key(name: &str) -> Parts {
    Parts::new(DecodeErrorKind::RepeatedKey, "each key once", format!("the key {} twice", quote(name)))
}

/// A number too large for a double.
pub(crate) fn number_out_of_range() -> Parts {
    Parts::new(DecodeErrorKind::NumberTooLarge, "a number within the range of a double", "a number beyond it")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(want: Want, text: &str) -> (DecodeErrorKind, String, String) {
        let p = failure(want, serde_json::from_str::<&RawValue>(text).unwrap());
        (p.kind, p.expected, p.found)
    }

    #[test]
    fn failures_are_classified_from_the_want_and_the_value() {
        use DecodeErrorKind::*;
        let u16 = Want::Integer { low: 0, high: 65535 };
        assert_eq!(parts(Want::String, "null"), (WrongType, "a string".into(), "null".into()));
        assert_eq!(parts(u16, "70000"), (OutOfRange, "an integer from 0 to 65535".into(), "the integer 70000".into()));
        assert_eq!(parts(u16, "1.5"), (OutOfRange, "an integer from 0 to 65535".into(), "the number 1.5".into()));
        assert_eq!(parts(u16, r#""7""#), (WrongType, "an integer from 0 to 65535".into(), r#"the string "7""#.into()));
        assert_eq!(
            parts(Want::Number, "1e400"),
            (NumberTooLarge, "a number within the range of a double".into(), "a number beyond it".into())
        );
        assert_eq!(
            parts(Want::String, r#""\ud800""#),
            (InvalidUnicode, "a string of valid Unicode".into(), "an invalid escape".into())
        );
        assert_eq!(
            parts(Want::Named("PromptRequest"), "[]"),
            (WrongType, "an object (PromptRequest)".into(), "an array".into())
        );
        assert_eq!(parts(Want::Boolean, "{}"), (WrongType, "a boolean".into(), "an object".into()));
    }

    #[test]
    fn raw_values_are_described() {
        let d = |t: &str| found_raw(serde_json::from_str::<&RawValue>(t).unwrap());
        assert_eq!(d("null"), "null");
        assert_eq!(d("false"), "the boolean false");
        assert_eq!(d("-5"), "the integer -5");
        assert_eq!(d("18446744073709551615"), "the integer 18446744073709551615");
        assert_eq!(d("1e2"), "the number 100.0");
        assert_eq!(d("2.5"), "the number 2.5");
        assert_eq!(d(r#""x\n""#), r#"the string "x\n""#);
        assert_eq!(d("[1]"), "an array");
        assert_eq!(d("{}"), "an object");
    }
}
