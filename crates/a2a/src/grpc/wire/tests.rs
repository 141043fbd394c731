//! The wire primitives on their own, and malformed input: every failure is an error
//! with a path and a kind, never a panic.

use super::*;
use crate::Timestamp;
use agentproto_codec::{RawJson, RawObject};

fn varint(v: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    put_varint(&mut buf, v);
    buf
}

#[test]
fn varints_round_trip_and_know_their_length() {
    for v in [0, 1, 127, 128, 300, 16_383, 16_384, u64::from(u32::MAX), i64::MAX as u64, u64::MAX] {
        let bytes = varint(v);
        assert_eq!(bytes.len(), varint_len(v), "{v}");
        assert_eq!(Reader::new(&bytes).varint(&At::root("$")).unwrap(), v);
    }
    assert_eq!(varint(300), [0xac, 0x02]);
    // A negative int32 is sign-extended to ten bytes.
    let mut buf = Vec::new();
    put_int32(&mut buf, 1, -1);
    assert_eq!(buf.len(), 11);
    assert_eq!(int32_field(1, -1), 11);
    let mut r = Reader::new(&buf);
    let (field, wt) = r.tag(&At::root("$")).unwrap().unwrap();
    assert_eq!((field, wt), (1, VARINT));
    assert_eq!(r.int32(wt, &At::root("$")).unwrap(), -1);
}

#[test]
fn malformed_input_is_refused_with_path_and_kind() {
    let root = At::root("$");
    let at = root.key("message");
    // A varint cut short.
    let e = Reader::new(&[0x80, 0x80]).varint(&at).unwrap_err();
    assert_eq!((e.path.as_str(), e.kind), ("$.message", DecodeErrorKind::NotJson));
    // Eleven continuation bytes: longer than 64 bits.
    let e = Reader::new(&[0xff; 11]).varint(&at).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::NotJson);
    // A length beyond the buffer.
    let mut buf = Vec::new();
    put_len_prefix(&mut buf, 1, 10);
    buf.extend_from_slice(b"abc");
    let mut r = Reader::new(&buf);
    let (_, wt) = r.tag(&at).unwrap().unwrap();
    let e = r.len(wt, &at.key("text")).unwrap_err();
    assert_eq!((e.path.as_str(), e.kind), ("$.message.text", DecodeErrorKind::NotJson), "{e}");
    // A varint where a string is expected.
    let mut buf = Vec::new();
    put_int32(&mut buf, 1, 5);
    let mut r = Reader::new(&buf);
    let (_, wt) = r.tag(&at).unwrap().unwrap();
    let e = r.string(wt, &at).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::WrongType);
    assert_eq!(e.expected, "a length-delimited value (wire type 2)");
    // Field number 0, and a wire type that does not exist.
    assert!(Reader::new(&[0x02, 0x00]).tag(&at).is_err());
    let mut r = Reader::new(&[0x0e]);
    let (field, wt) = r.tag(&at).unwrap().unwrap();
    assert_eq!(r.skip(field, wt, &at).unwrap_err().kind, DecodeErrorKind::NotJson);
    // Text that is not UTF-8.
    let mut buf = Vec::new();
    put_bytes(&mut buf, 1, &[0x66, 0xff]);
    let mut r = Reader::new(&buf);
    let (_, wt) = r.tag(&at).unwrap().unwrap();
    assert_eq!(r.str(wt, &at).unwrap_err().kind, DecodeErrorKind::InvalidUnicode);
}

#[test]
fn unknown_fields_groups_included_are_skipped() {
    let mut buf = Vec::new();
    put_int32(&mut buf, 9, 5);
    buf.extend_from_slice(&[(10 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8]); // fixed64
    buf.extend_from_slice(&[(11 << 3) | 5, 1, 2, 3, 4]); // fixed32
    buf.extend_from_slice(&[(12 << 3) | 3, (13 << 3), 1, (12 << 3) | 4]); // a group holding a varint
    put_bytes(&mut buf, 1, b"ts");
    let root = At::root("$");
    let mut r = Reader::new(&buf);
    let mut seen = None;
    while let Some((field, wt)) = r.tag(&root).unwrap() {
        match field {
            1 => seen = Some(r.string(wt, &root).unwrap()),
            _ => r.skip(field, wt, &root).unwrap(),
        }
    }
    assert_eq!(seen.as_deref(), Some("ts"));
    // A group that never ends.
    let mut r = Reader::new(&[(12 << 3) | 3, (13 << 3), 1]);
    let (field, wt) = r.tag(&root).unwrap().unwrap();
    assert!(r.skip(field, wt, &root).is_err());
}

#[test]
fn packed_and_unpacked_repeated_varints_both_read() {
    let root = At::root("$");
    let mut buf = Vec::new();
    put_len_prefix(&mut buf, 1, 3);
    buf.extend_from_slice(&[1, 2, 3]);
    put_int32(&mut buf, 1, 4);
    let mut r = Reader::new(&buf);
    let mut out = Vec::new();
    while let Some((_, wt)) = r.tag(&root).unwrap() {
        r.int32s(wt, &root, &mut out).unwrap();
    }
    assert_eq!(out, [1, 2, 3, 4]);
}

#[test]
fn a_message_given_twice_is_merged_and_a_oneof_keeps_the_last_member() {
    let mut parts = Parts::default();
    parts.push(b"ab");
    parts.push(b"cd");
    assert_eq!(parts.bytes(), Some(&b"abcd"[..]));
    let mut choice = Choice::default();
    choice.set(1, b"x", false);
    choice.set(1, b"y", false);
    assert_eq!(choice.get(), Some((1, &b"y"[..])));
    choice.set(4, b"p", true);
    choice.set(4, b"q", true);
    assert_eq!(choice.get(), Some((4, &b"pq"[..])));
    choice.set(2, b"z", false);
    assert_eq!(choice.get(), Some((2, &b"z"[..])));
}

#[test]
fn json_values_and_structs_round_trip() {
    for text in
        [r#"null"#, r#"true"#, r#"-12"#, r#"1.5"#, r#""a\"bé""#, r#"[]"#, r#"{}"#, r#"{"a":[1,{"b":null}],"c":"d"}"#]
    {
        let json = RawJson::from_text(text).unwrap();
        let mut buf = Vec::new();
        put_value(&mut buf, &json);
        assert_eq!(buf.len(), value_len(&json), "{text}");
        let back = value_from(&buf, &At::root("$")).unwrap();
        assert_eq!(back.get(), text);
    }
    // A long object needs a two-byte length inside: the prefix is widened in place.
    let long = format!(r#"{{"k":"{}","n":[{}]}}"#, "x".repeat(300), vec!["1"; 100].join(","));
    let obj = RawObject::new(RawJson::from_text(&long).unwrap()).unwrap();
    let mut buf = Vec::new();
    put_struct(&mut buf, &obj);
    assert_eq!(buf.len(), struct_len(&obj));
    assert_eq!(struct_from(&buf, &At::root("$")).unwrap().get(), long);
}

#[test]
fn a_struct_key_given_twice_keeps_the_last_value() {
    let one = RawObject::new(RawJson::from_text(r#"{"a":1,"b":2}"#).unwrap()).unwrap();
    let two = RawObject::new(RawJson::from_text(r#"{"a":3}"#).unwrap()).unwrap();
    let mut buf = Vec::new();
    put_struct(&mut buf, &one);
    put_struct(&mut buf, &two);
    assert_eq!(struct_from(&buf, &At::root("$")).unwrap().get(), r#"{"a":3,"b":2}"#);
}

#[test]
fn values_nested_deeper_than_the_limit_are_refused() {
    // [[[…[null]…]]], built from the inside out as Value { list_value { values } }.
    let mut buf = Vec::new();
    put_tag(&mut buf, 1, VARINT);
    buf.push(0);
    for _ in 0..MAX_DEPTH + 5 {
        let mut list = Vec::new();
        put_bytes(&mut list, 1, &buf);
        let mut value = Vec::new();
        put_bytes(&mut value, 6, &list);
        buf = value;
    }
    let e = value_from(&buf, &At::root("$")).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::NotJson);
    assert!(e.path.starts_with("$[0][0]"), "{}", e.path);
    // NaN has no JSON form.
    let mut buf = Vec::new();
    put_tag(&mut buf, 2, FIXED64);
    buf.extend_from_slice(&f64::NAN.to_le_bytes());
    assert_eq!(value_from(&buf, &At::root("$")).unwrap_err().kind, DecodeErrorKind::WrongFormat);
}

#[test]
fn timestamps_round_trip_and_out_of_range_is_refused() {
    for t in
        [Timestamp { secs: 0, nanos: 0 }, Timestamp { secs: -5, nanos: 7 }, Timestamp::from_millis(1_764_000_000_123)]
    {
        let bytes = t.encode_to_vec();
        assert_eq!(bytes.len(), t.encoded_len());
        assert_eq!(Timestamp::decode(&bytes, "$").unwrap(), t);
    }
    let mut bytes = Vec::new();
    put_tag(&mut bytes, 1, VARINT);
    put_varint(&mut bytes, (timestamp::MAX_SECS + 1) as u64);
    assert_eq!(Timestamp::decode(&bytes, "$").unwrap_err().kind, DecodeErrorKind::WrongFormat);
}
