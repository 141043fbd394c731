//! The protobuf wire form's primitives, which the generated codec
//! (`generated/v1_proto.rs`) is written against: varints, tags, length prefixes, a
//! reader that refuses malformed input with a [`DecodeError`] naming the path, and the
//! well-known types A2A uses (`Timestamp`, and `Struct`/`Value`, which the generated
//! types hold as JSON text).
//!
//! Encoding follows the protobuf encoding spec: fields in number order, implicit-
//! presence scalars left out at their zero value, nested messages length-prefixed with
//! their exact length (from [`Proto::encoded_len`]). Decoding accepts what the spec
//! allows: fields in any order, unknown fields skipped, the last value of a scalar
//! kept, a message given twice merged (decoding the concatenation of its parts is what
//! merging means on the wire).

use std::fmt::Write as _;

use agentproto_codec::de::OrderedMap;
use agentproto_codec::{DecodeError, DecodeErrorKind};

/// How many steps below the root (a member, an item, an entry) a message may nest — a
/// `Value` inside a `Struct` inside a `Value` … — before the input is refused. Above the
/// JSON bindings' bound (`MAX_REQUEST_DEPTH` levels of a request), so that what a server accepted there
/// can travel and be read here too; a JSON value nested that deep is one step a level.
pub const MAX_DEPTH: u32 = 160;

/// A message type of the generated codec.
pub trait Proto: Sized {
    /// The length of [`Proto::encode_raw`]'s output.
    fn encoded_len(&self) -> usize;
    /// Appends the message's fields (without a length prefix) to `buf`.
    fn encode_raw(&self, buf: &mut Vec<u8>);
    /// Reads a message from its fields; errors are located under `at`.
    fn decode_at(buf: &[u8], at: &At<'_>) -> Result<Self, DecodeError>;

    /// The message's wire form.
    fn encode_to_vec(&self) -> Vec<u8> {
        let mut buf = Vec::with_capacity(self.encoded_len());
        self.encode_raw(&mut buf);
        buf
    }

    /// Reads a message; paths in errors start at `root` (`$`).
    fn decode(buf: &[u8], root: &'static str) -> Result<Self, DecodeError> {
        Self::decode_at(buf, &At::root(root))
    }
}

// ---------------------------------------------------------------------------
// Encoding

/// Wire type 0: varint.
pub const VARINT: u8 = 0;
/// Wire type 1: 8 bytes, little-endian.
pub const FIXED64: u8 = 1;
/// Wire type 2: length-delimited.
pub const LEN: u8 = 2;
/// Wire type 5: 4 bytes, little-endian.
pub const FIXED32: u8 = 5;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;

/// Appends `v` as a varint.
#[inline]
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// How many bytes the varint of `v` takes.
#[inline]
pub fn varint_len(v: u64) -> usize {
    // Seven bits a byte, with 0 taking one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends the key of field `field` with wire type `wire_type`.
#[inline]
pub fn put_tag(buf: &mut Vec<u8>, field: u32, wire_type: u8) {
    put_varint(buf, (u64::from(field) << 3) | u64::from(wire_type));
}

/// How many bytes the key of field `field` takes.
#[inline]
pub fn tag_len(field: u32) -> usize {
    varint_len(u64::from(field) << 3)
}

/// A length-delimited field of `n` bytes of content, key and prefix included.
#[inline]
pub fn len_field(field: u32, n: usize) -> usize {
    tag_len(field) + varint_len(n as u64) + n
}

/// Appends the key and length prefix of a length-delimited field of `n` bytes.
#[inline]
pub fn put_len_prefix(buf: &mut Vec<u8>, field: u32, n: usize) {
    put_tag(buf, field, LEN);
    put_varint(buf, n as u64);
}

/// Appends a `string` or `bytes` field.
#[inline]
pub fn put_bytes(buf: &mut Vec<u8>, field: u32, v: &[u8]) {
    put_len_prefix(buf, field, v.len());
    buf.extend_from_slice(v);
}

/// Appends a `bool` field.
#[inline]
pub fn put_bool(buf: &mut Vec<u8>, field: u32, v: bool) {
    put_tag(buf, field, VARINT);
    buf.push(u8::from(v));
}

/// The varint an `int32` (or an enum number) is written as: negative values are
/// sign-extended to 64 bits, as the spec says.
#[inline]
pub fn int32_bits(v: i32) -> u64 {
    i64::from(v) as u64
}

/// Appends an `int32` or enum field.
#[inline]
pub fn put_int32(buf: &mut Vec<u8>, field: u32, v: i32) {
    put_tag(buf, field, VARINT);
    put_varint(buf, int32_bits(v));
}

/// An `int32` or enum field's length, key included.
#[inline]
pub fn int32_field(field: u32, v: i32) -> usize {
    tag_len(field) + varint_len(int32_bits(v))
}

/// Appends an embedded message field.
#[inline]
pub fn put_message<T: Proto>(buf: &mut Vec<u8>, field: u32, v: &T) {
    put_len_prefix(buf, field, v.encoded_len());
    v.encode_raw(buf);
}

/// An embedded message field's length, key and prefix included.
#[inline]
pub fn message_field<T: Proto>(field: u32, v: &T) -> usize {
    len_field(field, v.encoded_len())
}

// ---------------------------------------------------------------------------
// Paths and errors

/// Where in the decoded value a reader is: a chain of steps on the stack, rendered as
/// a JSON path (`$.message.parts[0]`) only when an error needs it.
pub struct At<'a> {
    up: Option<&'a At<'a>>,
    step: Step<'a>,
    depth: u32,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Root(&'static str),
    Key(&'static str),
    Index(usize),
    Entry(&'a str),
}

impl<'a> At<'a> {
    /// The root of a decode (`$`).
    pub fn root(root: &'static str) -> At<'static> {
        At { up: None, step: Step::Root(root), depth: 0 }
    }

    /// The member `key` (its JSON name) of the message here.
    pub fn key(&'a self, key: &'static str) -> At<'a> {
        At { up: Some(self), step: Step::Key(key), depth: self.depth + 1 }
    }

    /// Item `i` of the list here.
    pub fn index(&'a self, i: usize) -> At<'a> {
        At { up: Some(self), step: Step::Index(i), depth: self.depth + 1 }
    }

    /// The entry `key` of the map (or `Struct`) here.
    pub fn entry(&'a self, key: &'a str) -> At<'a> {
        At { up: Some(self), step: Step::Entry(key), depth: self.depth + 1 }
    }

    /// The JSON path of this place.
    pub fn path(&self) -> String {
        let mut steps = Vec::new();
        let mut here = Some(self);
        while let Some(at) = here {
            steps.push(at.step);
            here = at.up;
        }
        let mut out = String::new();
        for step in steps.iter().rev() {
            match step {
                Step::Root(r) => out.push_str(r),
                Step::Index(i) => {
                    let _ = write!(out, "[{i}]");
                }
                Step::Key(k) => agentproto_codec::push_key(&mut out, k),
                Step::Entry(k) => agentproto_codec::push_key(&mut out, k),
            }
        }
        out
    }

    /// An error located here.
    pub fn error(&self, kind: DecodeErrorKind, expected: impl Into<String>, found: impl Into<String>) -> DecodeError {
        DecodeError::new(self.path(), kind, expected, found)
    }

    /// The error for malformed wire bytes here (`not-json` is the table's kind for input
    /// that is not one well-formed value of the encoding read).
    pub fn malformed(&self, what: impl Into<String>) -> DecodeError {
        self.error(DecodeErrorKind::NotJson, "a well-formed protobuf message", what)
    }

    /// Refuses a message nested deeper than [`MAX_DEPTH`] steps below the root.
    pub fn enter(&self) -> Result<(), DecodeError> {
        if self.depth > MAX_DEPTH {
            return Err(self.error(
                DecodeErrorKind::NotJson,
                format!("messages nested at most {MAX_DEPTH} deep"),
                "deeper nesting",
            ));
        }
        Ok(())
    }

    /// The error for a required member that is absent (the path is the message's).
    pub fn missing(&self, key: &str) -> DecodeError {
        self.error(DecodeErrorKind::MissingField, format!("the field \"{key}\""), "a message without it")
    }

    /// The error for a required `oneof` none of whose members is present; `keys` lists
    /// them as JSON strings (`"text", "raw"`).
    pub fn missing_one_of(&self, keys: &str) -> DecodeError {
        self.error(DecodeErrorKind::MissingOneOf, format!("one of the fields {keys}"), "a message without any of them")
    }

    /// Checks a required list's length against its minimum (the path is the list's).
    pub fn min_items<T>(&self, items: &[T], min: usize) -> Result<(), DecodeError> {
        if items.len() < min {
            return Err(self.error(
                DecodeErrorKind::TooShort,
                format!("an array of at least {min} items"),
                format!("an array of {} items", items.len()),
            ));
        }
        Ok(())
    }

    /// The error for an enum number the closed enum does not list.
    pub fn not_listed(&self, number: i32, names: &[&str]) -> DecodeError {
        let listed: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        self.error(DecodeErrorKind::NotListed, format!("one of {}", listed.join(", ")), format!("the integer {number}"))
    }
}

fn wire_type_name(wire_type: u8) -> &'static str {
    match wire_type {
        VARINT => "a varint (wire type 0)",
        FIXED64 => "a 64-bit value (wire type 1)",
        LEN => "a length-delimited value (wire type 2)",
        FIXED32 => "a 32-bit value (wire type 5)",
        START_GROUP | END_GROUP => "a group (wire types 3 and 4)",
        _ => "an unknown wire type",
    }
}

// ---------------------------------------------------------------------------
// Decoding

/// Reads the fields of one message.
pub struct Reader<'b> {
    buf: &'b [u8],
    pos: usize,
}

impl<'b> Reader<'b> {
    /// A reader of the message whose fields are `buf`.
    pub fn new(buf: &'b [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// The next field's number and wire type, or `None` at the end.
    #[inline]
    pub fn tag(&mut self, at: &At<'_>) -> Result<Option<(u32, u8)>, DecodeError> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let key = self.varint(at)?;
        let field = key >> 3;
        let wire_type = (key & 7) as u8;
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            return Err(at.malformed(format!("the field number {field}")));
        }
        Ok(Some((field as u32, wire_type)))
    }

    /// A varint.
    #[inline]
    pub fn varint(&mut self, at: &At<'_>) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(at.malformed("a varint cut short by the end of the message"));
            };
            self.pos += 1;
            if i == 9 && byte > 1 {
                return Err(at.malformed("a varint longer than 64 bits"));
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(at.malformed("a varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize, at: &At<'_>) -> Result<&'b [u8], DecodeError> {
        let end =
            self.pos.checked_add(n).filter(|end| *end <= self.buf.len()).ok_or_else(|| {
                at.malformed(format!("a length of {n} bytes where {} remain", self.buf.len() - self.pos))
            })?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn expect(wire_type: u8, want: u8, at: &At<'_>) -> Result<(), DecodeError> {
        if wire_type != want {
            return Err(at.error(DecodeErrorKind::WrongType, wire_type_name(want), wire_type_name(wire_type)));
        }
        Ok(())
    }

    /// The content of a length-delimited field.
    #[inline]
    pub fn len(&mut self, wire_type: u8, at: &At<'_>) -> Result<&'b [u8], DecodeError> {
        Self::expect(wire_type, LEN, at)?;
        let n = self.varint(at)?;
        self.take(usize::try_from(n).unwrap_or(usize::MAX), at)
    }

    /// A `string` field.
    #[inline]
    pub fn str(&mut self, wire_type: u8, at: &At<'_>) -> Result<&'b str, DecodeError> {
        let bytes = self.len(wire_type, at)?;
        std::str::from_utf8(bytes).map_err(|e| {
            at.error(
                DecodeErrorKind::InvalidUnicode,
                "a string of UTF-8 text",
                format!("bytes that are not UTF-8 at offset {}", e.valid_up_to()),
            )
        })
    }

    /// A `string` field as an owned string.
    #[inline]
    pub fn string(&mut self, wire_type: u8, at: &At<'_>) -> Result<String, DecodeError> {
        self.str(wire_type, at).map(str::to_owned)
    }

    /// A `bool` field (any non-zero varint is `true`).
    #[inline]
    pub fn bool(&mut self, wire_type: u8, at: &At<'_>) -> Result<bool, DecodeError> {
        Self::expect(wire_type, VARINT, at)?;
        self.varint(at).map(|v| v != 0)
    }

    /// An `int32` or enum field (the low 32 bits of the varint, as the spec says).
    #[inline]
    pub fn int32(&mut self, wire_type: u8, at: &At<'_>) -> Result<i32, DecodeError> {
        Self::expect(wire_type, VARINT, at)?;
        self.varint(at).map(|v| v as i32)
    }

    /// An `int64` field.
    #[inline]
    pub fn int64(&mut self, wire_type: u8, at: &At<'_>) -> Result<i64, DecodeError> {
        Self::expect(wire_type, VARINT, at)?;
        self.varint(at).map(|v| v as i64)
    }

    /// A `double` field.
    #[inline]
    pub fn double(&mut self, wire_type: u8, at: &At<'_>) -> Result<f64, DecodeError> {
        Self::expect(wire_type, FIXED64, at)?;
        let bytes = self.take(8, at)?;
        Ok(f64::from_le_bytes(bytes.try_into().expect("8 bytes were taken")))
    }

    /// The values of a repeated `int32` or enum field: packed (one length-delimited
    /// run of varints) or not (one varint), both of which a reader must accept.
    pub fn int32s(&mut self, wire_type: u8, at: &At<'_>, out: &mut Vec<i32>) -> Result<(), DecodeError> {
        if wire_type == LEN {
            let mut packed = Reader::new(self.len(wire_type, at)?);
            while packed.pos < packed.buf.len() {
                out.push(packed.varint(at)? as i32);
            }
            return Ok(());
        }
        out.push(self.int32(wire_type, at)?);
        Ok(())
    }

    /// Skips a field this message does not know (groups included, nested at most
    /// [`MAX_DEPTH`] deep).
    pub fn skip(&mut self, field: u32, wire_type: u8, at: &At<'_>) -> Result<(), DecodeError> {
        self.skip_nested(field, wire_type, at, 0)
    }

    fn skip_nested(&mut self, field: u32, wire_type: u8, at: &At<'_>, depth: u32) -> Result<(), DecodeError> {
        match wire_type {
            VARINT => self.varint(at).map(drop),
            FIXED64 => self.take(8, at).map(drop),
            FIXED32 => self.take(4, at).map(drop),
            LEN => self.len(LEN, at).map(drop),
            START_GROUP => {
                if depth >= MAX_DEPTH {
                    return Err(at.malformed("groups nested deeper than the limit"));
                }
                loop {
                    match self.tag(at)? {
                        None => return Err(at.malformed(format!("group {field} without its end"))),
                        Some((f, END_GROUP)) if f == field => return Ok(()),
                        Some((_, END_GROUP)) => return Err(at.malformed("the end of a group that is not open")),
                        Some((f, wt)) => self.skip_nested(f, wt, at, depth + 1)?,
                    }
                }
            }
            END_GROUP => Err(at.malformed("the end of a group that is not open")),
            other => Err(at.malformed(format!("the wire type {other}"))),
        }
    }
}

/// A singular message field as it came: one slice, or the parts of one given several
/// times joined (so that decoding them merges them, as the spec says).
#[derive(Default)]
pub enum Parts<'b> {
    /// Not given.
    #[default]
    Absent,
    /// Given once.
    One(&'b [u8]),
    /// Given several times.
    Joined(Vec<u8>),
}

impl<'b> Parts<'b> {
    /// Adds one occurrence.
    #[inline]
    pub fn push(&mut self, bytes: &'b [u8]) {
        *self = match std::mem::take(self) {
            Parts::Absent => Parts::One(bytes),
            Parts::One(first) => Parts::Joined([first, bytes].concat()),
            Parts::Joined(mut all) => {
                all.extend_from_slice(bytes);
                Parts::Joined(all)
            }
        };
    }

    /// The bytes to decode, if the field was given.
    #[inline]
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Parts::Absent => None,
            Parts::One(b) => Some(b),
            Parts::Joined(v) => Some(v),
        }
    }

    /// Decodes the field, if it was given.
    #[inline]
    pub fn decode<T: Proto>(&self, at: &At<'_>) -> Result<Option<T>, DecodeError> {
        self.bytes().map(|b| T::decode_at(b, at)).transpose()
    }
}

/// The last member given of a `oneof` whose members are all length-delimited: its
/// field number and its bytes (a message member given several times is merged).
#[derive(Default)]
pub struct Choice<'b> {
    field: u32,
    parts: Parts<'b>,
}

impl<'b> Choice<'b> {
    /// Records member `field` (`merge`: a message member, merged with an earlier
    /// occurrence of itself; any other member given again replaces the earlier one).
    #[inline]
    pub fn set(&mut self, field: u32, bytes: &'b [u8], merge: bool) {
        if self.field != field || !merge {
            self.parts = Parts::Absent;
        }
        self.field = field;
        self.parts.push(bytes);
    }

    /// The member given last and its bytes, if any was.
    #[inline]
    pub fn get(&self) -> Option<(u32, &[u8])> {
        self.parts.bytes().map(|b| (self.field, b))
    }
}

/// `bytes` as UTF-8 text, or the error for a string that is not.
pub fn utf8<'b>(bytes: &'b [u8], at: &At<'_>) -> Result<&'b str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|e| {
        at.error(
            DecodeErrorKind::InvalidUnicode,
            "a string of UTF-8 text",
            format!("bytes that are not UTF-8 at offset {}", e.valid_up_to()),
        )
    })
}

/// A closed enum of the generated types as its proto numbers.
pub trait ProtoEnum: Sized {
    /// The names of the values, for errors.
    const NAMES: &'static [&'static str];
    /// The value's number.
    fn number(&self) -> i32;
    /// The value a number stands for, if the enum lists it (0, unset, is not a value).
    fn from_number(n: i32) -> Option<Self>;
}

/// The enum value number `n` stands for, or the error naming the listed values.
#[inline]
pub fn enum_of<E: ProtoEnum>(n: i32, at: &At<'_>) -> Result<E, DecodeError> {
    E::from_number(n).ok_or_else(|| at.not_listed(n, E::NAMES))
}

/// The key and value of one map entry (`key = 1`, `value = 2`; the value must be
/// length-delimited). `merge`: the value is a message, merged when given twice; any
/// other value given twice keeps the last.
pub fn map_entry<'b>(buf: &'b [u8], at: &At<'_>, merge: bool) -> Result<(&'b str, Parts<'b>), DecodeError> {
    let mut r = Reader::new(buf);
    let (mut key, mut value) = ("", Parts::Absent);
    while let Some((field, wt)) = r.tag(at)? {
        match field {
            1 => key = r.str(wt, at)?,
            2 => {
                let bytes = r.len(wt, &at.entry(key))?;
                if !merge {
                    value = Parts::Absent;
                }
                value.push(bytes);
            }
            _ => r.skip(field, wt, at)?,
        }
    }
    Ok((key, value))
}

/// Adds a map entry; a key given again replaces its value (the last one wins).
pub fn insert<T>(map: &mut OrderedMap<T>, key: &str, value: T) {
    match map.0.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => map.0.push((key.to_owned(), value)),
    }
}

mod json;
mod timestamp;

pub use json::{
    put_struct, put_struct_field, put_value, put_value_field, struct_field, struct_from, struct_len, value_field,
    value_from, value_len,
};

#[cfg(test)]
mod tests;
