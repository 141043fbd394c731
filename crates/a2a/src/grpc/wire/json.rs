//! `google.protobuf.Struct`, `Value` and `ListValue`, which the generated types hold as
//! JSON text ([`RawObject`], [`RawJson`]): written from the text in one pass over it
//! (lengths computed bottom-up without building anything; nested lengths set once
//! known), read back into compact JSON text.

use std::borrow::Cow;
use std::fmt::Write as _;

use agentproto_codec::{DecodeError, DecodeErrorKind, RawJson, RawObject};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{
    len_field, put_bool, put_bytes, put_len_prefix, put_tag, put_varint, tag_len, utf8, varint_len, At, Parts, Reader,
    FIXED64, LEN, VARINT,
};

/// The length of the `google.protobuf.Value` a JSON value is.
pub fn value_len(json: &RawJson) -> usize {
    let mut de = serde_json::Deserializer::from_str(json.get());
    ValueLen.deserialize(&mut de).unwrap_or(0)
}

/// The length of the `google.protobuf.Struct` a JSON object is.
pub fn struct_len(json: &RawObject) -> usize {
    let mut de = serde_json::Deserializer::from_str(json.get());
    (&mut de).deserialize_map(StructLen).unwrap_or(0)
}

/// Appends the `google.protobuf.Value` a JSON value is (its fields, no prefix).
pub fn put_value(buf: &mut Vec<u8>, json: &RawJson) {
    let mut de = serde_json::Deserializer::from_str(json.get());
    // The text was checked when the value was made; a failure leaves what was written,
    // which `value_len` then does not match, so it cannot go unnoticed in a test.
    let _ = ValueOut(buf).deserialize(&mut de);
}

/// Appends the `google.protobuf.Struct` a JSON object is (its fields, no prefix).
pub fn put_struct(buf: &mut Vec<u8>, json: &RawObject) {
    let mut de = serde_json::Deserializer::from_str(json.get());
    let _ = (&mut de).deserialize_map(StructOut(buf));
}

/// A `google.protobuf.Value` field whose value is `json`.
pub fn value_field(field: u32, json: &RawJson) -> usize {
    len_field(field, value_len(json))
}

/// A `google.protobuf.Struct` field whose value is `json`.
pub fn struct_field(field: u32, json: &RawObject) -> usize {
    len_field(field, struct_len(json))
}

/// Appends a `google.protobuf.Value` field.
pub fn put_value_field(buf: &mut Vec<u8>, field: u32, json: &RawJson) {
    put_len_prefix(buf, field, value_len(json));
    put_value(buf, json);
}

/// Appends a `google.protobuf.Struct` field.
pub fn put_struct_field(buf: &mut Vec<u8>, field: u32, json: &RawObject) {
    put_len_prefix(buf, field, struct_len(json));
    put_struct(buf, json);
}

const NUMBER_LEN: usize = 9; // key + 8 bytes

/// Computes a `Value`'s length from its JSON, bottom-up, without building it.
struct ValueLen;

impl<'de> DeserializeSeed<'de> for ValueLen {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueLen {
    type Value = usize;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<usize, E> {
        Ok(2)
    }
    fn visit_bool<E>(self, _: bool) -> Result<usize, E> {
        Ok(2)
    }
    fn visit_i64<E>(self, _: i64) -> Result<usize, E> {
        Ok(NUMBER_LEN)
    }
    fn visit_u64<E>(self, _: u64) -> Result<usize, E> {
        Ok(NUMBER_LEN)
    }
    fn visit_f64<E>(self, _: f64) -> Result<usize, E> {
        Ok(NUMBER_LEN)
    }
    fn visit_str<E>(self, v: &str) -> Result<usize, E> {
        Ok(len_field(3, v.len()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<usize, A::Error> {
        StructLen.visit_map(map).map(|n| len_field(5, n))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(item) = seq.next_element_seed(ValueLen)? {
            n += len_field(1, item);
        }
        Ok(len_field(6, n))
    }
}

/// Computes a `Struct`'s length from a JSON object.
struct StructLen;

impl<'de> Visitor<'de> for StructLen {
    type Value = usize;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let value = map.next_value_seed(ValueLen)?;
            n += len_field(1, len_field(1, key.len()) + len_field(2, value));
        }
        Ok(n)
    }
}

/// Writes a `Value`'s fields from its JSON.
struct ValueOut<'o>(&'o mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for ValueOut<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl ValueOut<'_> {
    fn number(self, v: f64) {
        put_tag(self.0, 2, FIXED64);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
}

impl<'de> Visitor<'de> for ValueOut<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        put_tag(self.0, 1, VARINT);
        self.0.push(0);
        Ok(())
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        put_bool(self.0, 4, v);
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.number(v as f64);
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.number(v as f64);
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.number(v);
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        put_bytes(self.0, 3, v.as_bytes());
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let mark = open(self.0, 5);
        StructOut(self.0).visit_map(map)?;
        close(self.0, mark);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let list = open(self.0, 6);
        loop {
            let item = open(self.0, 1);
            if seq.next_element_seed(ValueOut(self.0))?.is_none() {
                self.0.truncate(item - 1 - tag_len(1));
                break;
            }
            close(self.0, item);
        }
        close(self.0, list);
        Ok(())
    }
}

/// Writes a `Struct`'s fields from a JSON object.
struct StructOut<'o>(&'o mut Vec<u8>);

impl<'de> Visitor<'de> for StructOut<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let entry = open(self.0, 1);
            put_bytes(self.0, 1, key.as_bytes());
            let value = open(self.0, 2);
            map.next_value_seed(ValueOut(self.0))?;
            close(self.0, value);
            close(self.0, entry);
        }
        Ok(())
    }
}

/// Writes the key of length-delimited field `field` and a one-byte length to be set by
/// [`close`]; returns where the content starts. (JSON values are written in one pass
/// over their text, so their lengths are known only afterwards.)
fn open(buf: &mut Vec<u8>, field: u32) -> usize {
    put_tag(buf, field, LEN);
    buf.push(0);
    buf.len()
}

/// Sets the length of the field [`open`] started, widening its prefix if it needs
/// more than one byte.
fn close(buf: &mut Vec<u8>, start: usize) {
    let n = buf.len() - start;
    let width = varint_len(n as u64);
    if width > 1 {
        let pad = [0u8; 9];
        buf.splice(start..start, pad[..width - 1].iter().copied());
    }
    let mut prefix = Vec::with_capacity(width);
    put_varint(&mut prefix, n as u64);
    buf[start - 1..start - 1 + width].copy_from_slice(&prefix);
}

/// Reads a `google.protobuf.Value` as JSON text.
pub fn value_from(buf: &[u8], at: &At<'_>) -> Result<RawJson, DecodeError> {
    let mut out = String::with_capacity(buf.len() + 8);
    write_value(buf, at, &mut out)?;
    RawJson::from_text(&out).map_err(|e| at.error(DecodeErrorKind::NotJson, "a JSON value", e.to_string()))
}

/// Reads a `google.protobuf.Struct` as JSON text.
pub fn struct_from(buf: &[u8], at: &At<'_>) -> Result<RawObject, DecodeError> {
    let mut out = String::with_capacity(buf.len() + 8);
    write_struct(buf, at, &mut out)?;
    RawJson::from_text(&out)
        .ok()
        .and_then(RawObject::new)
        .ok_or_else(|| at.error(DecodeErrorKind::NotJson, "a JSON object", "text that is not one"))
}

/// What a `Value` holds: the last of its `kind` members.
enum Kind<'b> {
    Null,
    Number(f64),
    String(&'b [u8]),
    Bool(bool),
    Struct(Parts<'b>),
    List(Parts<'b>),
}

fn write_value(buf: &[u8], at: &At<'_>, out: &mut String) -> Result<(), DecodeError> {
    at.enter()?;
    let mut kind = Kind::Null;
    let mut r = Reader::new(buf);
    while let Some((field, wt)) = r.tag(at)? {
        kind = match (field, kind) {
            (1, _) => {
                r.int32(wt, at)?;
                Kind::Null
            }
            (2, _) => Kind::Number(r.double(wt, at)?),
            (3, _) => Kind::String(r.len(wt, at)?),
            (4, _) => Kind::Bool(r.bool(wt, at)?),
            (5, prev) => {
                let mut parts = if let Kind::Struct(p) = prev { p } else { Parts::Absent };
                parts.push(r.len(wt, at)?);
                Kind::Struct(parts)
            }
            (6, prev) => {
                let mut parts = if let Kind::List(p) = prev { p } else { Parts::Absent };
                parts.push(r.len(wt, at)?);
                Kind::List(parts)
            }
            (_, prev) => {
                r.skip(field, wt, at)?;
                prev
            }
        };
    }
    match kind {
        Kind::Null => out.push_str("null"),
        Kind::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Kind::Number(v) => write_number(v, at, out)?,
        Kind::String(bytes) => write_json_string(utf8(bytes, at)?, out),
        Kind::Struct(parts) => write_struct(parts.bytes().unwrap_or_default(), at, out)?,
        Kind::List(parts) => {
            let mut r = Reader::new(parts.bytes().unwrap_or_default());
            out.push('[');
            let mut i = 0;
            while let Some((field, wt)) = r.tag(at)? {
                if field != 1 {
                    r.skip(field, wt, at)?;
                    continue;
                }
                let item = at.index(i);
                if i > 0 {
                    out.push(',');
                }
                write_value(r.len(wt, &item)?, &item, out)?;
                i += 1;
            }
            out.push(']');
        }
    }
    Ok(())
}

fn write_struct(buf: &[u8], at: &At<'_>, out: &mut String) -> Result<(), DecodeError> {
    at.enter()?;
    // Entries in wire order; a key given again replaces its value (the last one wins).
    let mut entries: Vec<(&str, Parts<'_>)> = Vec::new();
    let mut r = Reader::new(buf);
    while let Some((field, wt)) = r.tag(at)? {
        if field != 1 {
            r.skip(field, wt, at)?;
            continue;
        }
        let mut e = Reader::new(r.len(wt, at)?);
        let (mut key, mut value) = ("", Parts::Absent);
        while let Some((field, wt)) = e.tag(at)? {
            match field {
                1 => key = e.str(wt, at)?,
                2 => value.push(e.len(wt, &at.entry(key))?),
                _ => e.skip(field, wt, at)?,
            }
        }
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => entries.push((key, value)),
        }
    }
    out.push('{');
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_string(key, out);
        out.push(':');
        write_value(value.bytes().unwrap_or_default(), &at.entry(key), out)?;
    }
    out.push('}');
    Ok(())
}

/// A double as JSON: without a fraction when it holds an integer exactly (below
/// 2^53), as a JSON sender would have written it; NaN and the infinities have no JSON
/// form and are refused.
fn write_number(v: f64, at: &At<'_>, out: &mut String) -> Result<(), DecodeError> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if !v.is_finite() {
        return Err(at.error(DecodeErrorKind::WrongFormat, "a finite number", format!("the number {v}")));
    }
    if v.fract() == 0.0 && v.abs() < EXACT && !(v == 0.0 && v.is_sign_negative()) {
        let _ = write!(out, "{}", v as i64);
    } else {
        out.push_str(&serde_json::Number::from_f64(v).map_or_else(|| "0".to_owned(), |n| n.to_string()));
    }
    Ok(())
}

fn write_json_string(s: &str, out: &mut String) {
    // serde_json writes the escapes JSON requires; writing into a String cannot fail.
    if let Ok(text) = serde_json::to_string(s) {
        out.push_str(&text);
    }
}
