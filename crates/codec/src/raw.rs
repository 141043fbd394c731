//! [`RawJson`]: a JSON value kept as its original text.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::fmt;

/// A JSON value kept verbatim, never parsed into a tree.
///
/// Used for free-form members (`_meta`, `rawInput`, extension payloads) and for
/// unknown variants of unions, so that a message can be forwarded or stored without
/// losing anything. Two values are equal when their texts are equal.
#[derive(Clone)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// Parses `text` as JSON and keeps it verbatim.
    pub fn from_text(text: &str) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text.to_owned()).map(Self)
    }

    /// Encodes `value` and keeps the result.
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(Self)
    }

    /// Copies a borrowed raw value.
    pub fn from_raw(raw: &RawValue) -> Self {
        Self(raw.to_owned())
    }

    /// The boxed raw value, for handing to a JSON-RPC connection.
    pub fn into_raw(self) -> Box<RawValue> {
        self.0
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The underlying raw value.
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// Parses the text into `T`.
    pub fn parse<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    /// True when the value is a JSON object.
    pub fn is_object(&self) -> bool {
        self.0.get().starts_with('{')
    }

    /// The string member `key` of a kept object (the tag of a variant this SDK does
    /// not know, for a message about it); `None` when there is no such string.
    pub fn string_member(&self, key: &str) -> Option<String> {
        let members: std::collections::HashMap<std::borrow::Cow<'_, str>, &RawValue> =
            serde_json::from_str(self.0.get()).ok()?;
        members.get(key).and_then(|value| serde_json::from_str::<String>(value.get()).ok())
    }
}

impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        Self(raw)
    }
}

impl From<RawJson> for Box<RawValue> {
    fn from(raw: RawJson) -> Self {
        raw.0
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        Ok(Self::from_raw(raw))
    }
}

impl crate::SerializeFields for RawJson {
    /// Writes the members of a raw object, except those in `skip`.
    fn serialize_fields<M: serde::ser::SerializeMap>(&self, map: &mut M, skip: &[&str]) -> Result<(), M::Error> {
        use serde::ser::Error;
        let members: Vec<(std::borrow::Cow<'_, str>, &RawValue)> =
            crate::de::object_members(&self.0).map_err(|e| M::Error::custom(e.to_string()))?;
        for (k, v) in members {
            if !skip.contains(&k.as_ref()) {
                map.serialize_entry(k.as_ref(), v)?;
            }
        }
        Ok(())
    }
}

/// A JSON object kept verbatim ([`RawJson`] that must be an object, like `_meta`).
#[derive(Clone, PartialEq)]
pub struct RawObject(RawJson);

impl RawObject {
    /// Wraps raw JSON, which must be an object.
    pub fn new(raw: RawJson) -> Option<Self> {
        raw.is_object().then_some(Self(raw))
    }

    /// Encodes `value` (which must encode as an object).
    pub fn from_value<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        let raw = RawJson::from_value(value)?;
        Self::new(raw).ok_or_else(|| serde::ser::Error::custom("not an object"))
    }
}

impl std::ops::Deref for RawObject {
    type Target = RawJson;
    fn deref(&self) -> &RawJson {
        &self.0
    }
}

impl fmt::Debug for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        if raw.get().starts_with('{') {
            Ok(Self(RawJson::from_raw(raw)))
        } else {
            Err(crate::de::wrong_type("an object", raw))
        }
    }
}
