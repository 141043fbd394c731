//! The words of a decode failure: the phrases for what was expected and what was
//! found, the same in the Python and TypeScript SDKs (`vectors/README.md`, "Error
//! texts").
//!
//! A phrase never quotes another phrase and never names a Rust type: names and string
//! values are written as JSON strings (`the field "prompt"`, `the string "x"`),
//! integer types as their range (`an integer from 0 to 65535`).
//!
//! The codec's own checks build their errors from these phrases. Values that serde's
//! primitive impls reject inside serde_json (an integer or a string where the schema
//! wants something else, an integer out of its range) only reach us as serde's text;
//! [`from_serde`] is the one place that translates serde's `Unexpected`/`Expected`
//! pieces into the phrases.

use serde_json::value::RawValue;

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

/// A double as serde writes it in its messages: Rust's `{}`, plus `.0` when that has
/// no point.
fn float(x: f64) -> String {
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

/// The `expected` phrase for the name serde's primitive impls give a type.
fn expected(serde: &str) -> String {
    let range = |low: i128, high: i128| integer_range(low, high);
    match serde {
        "u8" => range(0, u8::MAX.into()),
        "u16" => range(0, u16::MAX.into()),
        "u32" => range(0, u32::MAX.into()),
        "u64" => range(0, u64::MAX.into()),
        "i8" => range(i8::MIN.into(), i8::MAX.into()),
        "i16" => range(i16::MIN.into(), i16::MAX.into()),
        "i32" => range(i32::MIN.into(), i32::MAX.into()),
        "i64" => range(i64::MIN.into(), i64::MAX.into()),
        "f32" | "f64" => "a number".to_owned(),
        "a borrowed string" => "a string".to_owned(),
        "a sequence" => "an array".to_owned(),
        "a map" => "an object".to_owned(),
        "unit" => "null".to_owned(),
        other => backticks_to_quotes(other),
    }
}

/// The `found` phrase for serde's `Unexpected` text.
fn found(serde: &str) -> String {
    if let Some(v) = inside(serde, "integer `") {
        return format!("the integer {v}");
    }
    if let Some(v) = inside(serde, "floating point `") {
        // serde's spelling of a double varies between its versions; ours does not.
        return match v.parse::<f64>() {
            Ok(x) => format!("the number {}", float(x)),
            Err(_) => format!("the number {v}"),
        };
    }
    if let Some(v) = inside(serde, "boolean `") {
        return format!("the boolean {v}");
    }
    if let Some(v) = inside(serde, "char `") {
        return string(v);
    }
    if let Some(debug) = serde.strip_prefix("string ") {
        return match unescape_debug(debug) {
            Some(s) => string(&s),
            None => "a string".to_owned(),
        };
    }
    match serde {
        "null" | "unit" | "unit value" | "Option value" => "null".to_owned(),
        "sequence" => "an array".to_owned(),
        "map" => "an object".to_owned(),
        other => backticks_to_quotes(other),
    }
}

fn inside<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix)?.strip_suffix('`')
}

fn backticks_to_quotes(text: &str) -> String {
    text.replace('`', "\"")
}

/// The string a Rust `{:?}` rendering stands for (serde writes strings that way).
fn unescape_debug(debug: &str) -> Option<String> {
    let body = debug.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            '0' => out.push('\0'),
            'u' => {
                if chars.next()? != '{' {
                    return None;
                }
                let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// What a failure is, for choosing its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parts {
    pub(crate) expected: String,
    pub(crate) found: String,
}

impl Parts {
    pub(crate) fn new(expected: impl Into<String>, found: impl Into<String>) -> Self {
        Self { expected: expected.into(), found: found.into() }
    }
}

/// The parts of a failure serde_json reported as text; `None` for a text that is not
/// one of serde's "expected X, found Y" forms (the caller keeps the text as the message).
pub(crate) fn from_serde(message: &str) -> Option<Parts> {
    let message = strip_position(message);
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            let (unexpected, wanted) = rest.split_once(", expected ")?;
            return Some(Parts::new(expected(wanted), found(unexpected)));
        }
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let (value, wanted) = rest.split_once(", expected ")?;
        let value = value.strip_prefix('`')?.strip_suffix('`')?;
        return Some(Parts::new(backticks_to_quotes(wanted), string(value)));
    }
    if let Some(name) = message.strip_prefix("missing field `").and_then(|r| r.strip_suffix('`')) {
        return Some(missing_field(name));
    }
    if let Some(name) = message.strip_prefix("duplicate field `").and_then(|r| r.strip_suffix('`')) {
        return Some(repeated_key(name));
    }
    match message {
        "number out of range" => Some(number_out_of_range()),
        "lone leading surrogate in hex escape" | "unexpected end of hex escape" | "invalid escape" => {
            Some(Parts::new("a string of valid Unicode", "an invalid escape"))
        }
        _ => None,
    }
}

/// A required member is absent.
pub(crate) fn missing_field(name: &str) -> Parts {
    Parts::new(format!("the field {}", quote(name)), "an object without it")
}

/// A member appears twice.
pub(crate) fn repeated_key(name: &str) -> Parts {
    Parts::new("each key once", format!("the key {} twice", quote(name)))
}

/// A number too large for a double.
pub(crate) fn number_out_of_range() -> Parts {
    Parts::new("a number within the range of a double", "a number beyond it")
}

/// serde_json appends " at line L column C" to the errors it raises itself.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) if message[i..].contains(" column ") => &message[..i],
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(message: &str) -> (String, String) {
        let p = from_serde(message).expect(message);
        (p.expected, p.found)
    }

    #[test]
    fn serde_texts_become_phrases() {
        assert_eq!(
            parts("invalid type: null, expected a string at line 1 column 9"),
            ("a string".into(), "null".into())
        );
        assert_eq!(
            parts("invalid value: integer `70000`, expected u16"),
            ("an integer from 0 to 65535".into(), "the integer 70000".into())
        );
        assert_eq!(
            parts("invalid type: string \"a\\\"b\\u{7f}\\n\", expected i64"),
            (
                "an integer from -9223372036854775808 to 9223372036854775807".into(),
                "the string \"a\\\"b\u{7f}\\n\"".into()
            )
        );
        assert_eq!(
            parts("invalid type: floating point `1.5`, expected u64"),
            ("an integer from 0 to 18446744073709551615".into(), "the number 1.5".into())
        );
        assert_eq!(
            parts("invalid type: floating point `1.8446744073709552e+19`, expected u64"),
            ("an integer from 0 to 18446744073709551615".into(), "the number 18446744073709552000.0".into())
        );
        assert_eq!(parts("invalid type: boolean `true`, expected f64"), ("a number".into(), "the boolean true".into()));
        assert_eq!(parts("invalid type: sequence, expected a map"), ("an object".into(), "an array".into()));
        assert_eq!(parts("missing field `prompt`"), ("the field \"prompt\"".into(), "an object without it".into()));
        assert_eq!(parts("duplicate field `a b`"), ("each key once".into(), "the key \"a b\" twice".into()));
        assert_eq!(
            parts("unknown variant `x`, expected `a` or `b`"),
            ("\"a\" or \"b\"".into(), "the string \"x\"".into())
        );
        assert!(from_serde("something else").is_none());
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
