//! Request ids: an integer, a string, or (only where a protocol allows it) `null`.

use std::fmt;

use agentproto_codec::DecodeErrorKind;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};

/// The id of a JSON-RPC request: a 64-bit signed integer, a string, or `null`.
///
/// `null` is a valid value of this type because ACP v1 allows it in requests and
/// every JSON-RPC response to an unreadable request carries it; whether an incoming
/// request may use it is decided by [`DecodeOptions::allow_null_id`](crate::DecodeOptions::allow_null_id).
/// Fractional numbers, numbers outside the `i64` range, booleans, arrays and objects
/// are never ids.
///
/// `Display` shows strings quoted, so `"92"` and `92` are told apart.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(IdRepr);

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum IdRepr {
    Null,
    Number(i64),
    String(String),
}

impl RequestId {
    /// The `null` id.
    pub const NULL: RequestId = RequestId(IdRepr::Null);

    /// An integer id.
    pub fn number(value: i64) -> RequestId {
        RequestId(IdRepr::Number(value))
    }

    /// A string id.
    pub fn string(value: impl Into<String>) -> RequestId {
        RequestId(IdRepr::String(value.into()))
    }

    /// The integer, when this is an integer id.
    pub fn as_number(&self) -> Option<i64> {
        match &self.0 {
            IdRepr::Number(number) => Some(*number),
            _ => None,
        }
    }

    /// The string, when this is a string id.
    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            IdRepr::String(string) => Some(string),
            _ => None,
        }
    }

    /// Whether this is the `null` id.
    pub fn is_null(&self) -> bool {
        matches!(self.0, IdRepr::Null)
    }

    /// Appends the id as compact JSON to `out`.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        match &self.0 {
            IdRepr::Null => out.extend_from_slice(b"null"),
            IdRepr::Number(number) => {
                use std::io::Write as _;
                // Writing into a Vec cannot fail.
                let _ = write!(out, "{number}");
            }
            IdRepr::String(string) => crate::message::write_json_string(out, string),
        }
    }
}

impl From<i64> for RequestId {
    fn from(value: i64) -> RequestId {
        RequestId::number(value)
    }
}

impl From<String> for RequestId {
    fn from(value: String) -> RequestId {
        RequestId::string(value)
    }
}

impl From<&str> for RequestId {
    fn from(value: &str) -> RequestId {
        RequestId::string(value)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdRepr::Null => f.write_str("null"),
            IdRepr::Number(number) => write!(f, "{number}"),
            IdRepr::String(_) => {
                let mut json = Vec::new();
                self.write_json(&mut json);
                f.write_str(&String::from_utf8_lossy(&json))
            }
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequestId({self})")
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            IdRepr::Null => serializer.serialize_unit(),
            IdRepr::Number(number) => serializer.serialize_i64(*number),
            IdRepr::String(string) => serializer.serialize_str(string),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RequestId, D::Error> {
        deserializer.deserialize_any(RequestIdVisitor)
    }
}

agentproto_codec::wants!(RequestId, Phrase("an integer, a string or null"));

struct RequestIdVisitor;

impl<'de> Visitor<'de> for RequestIdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer, a string or null")
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<RequestId, E> {
        Ok(RequestId::number(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<RequestId, E> {
        i64::try_from(value).map(RequestId::number).map_err(|_| {
            let (low, high) = (i64::MIN, i64::MAX);
            let expected = format!("an integer from {low} to {high}, a string or null");
            agentproto_codec::de::invalid(DecodeErrorKind::OutOfRange, expected, format!("the integer {value}"))
        })
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<RequestId, E> {
        Ok(RequestId::string(value))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<RequestId, E> {
        Ok(RequestId::string(value))
    }

    fn visit_unit<E: de::Error>(self) -> Result<RequestId, E> {
        Ok(RequestId::NULL)
    }

    fn visit_none<E: de::Error>(self) -> Result<RequestId, E> {
        Ok(RequestId::NULL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_quotes_strings_only() {
        assert_eq!(RequestId::number(92).to_string(), "92");
        assert_eq!(RequestId::string("92").to_string(), "\"92\"");
        assert_eq!(RequestId::string("a\"b").to_string(), r#""a\"b""#);
        assert_eq!(RequestId::NULL.to_string(), "null");
    }

    #[test]
    fn serde_round_trip() {
        for (json, id) in [
            ("7", RequestId::number(7)),
            ("-3", RequestId::number(-3)),
            ("\"x\"", RequestId::string("x")),
            ("null", RequestId::NULL),
            ("9223372036854775807", RequestId::number(i64::MAX)),
        ] {
            let decoded: RequestId = serde_json::from_str(json).unwrap();
            assert_eq!(decoded, id);
            assert_eq!(serde_json::to_string(&id).unwrap(), json);
        }
    }

    #[test]
    fn rejects_non_ids() {
        for json in ["1.5", "1.0", "9223372036854775808", "true", "[]", "{}", "1e3"] {
            assert!(serde_json::from_str::<RequestId>(json).is_err(), "{json} accepted");
        }
    }
}
