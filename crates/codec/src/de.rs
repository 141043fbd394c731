//! Helpers called by generated `Deserialize` impls. Not meant for hand-written code.
//!
//! Every helper keeps the per-thread path stack in step: it pushes the key or index
//! it is about to decode and pops it only on success, so that when an error unwinds
//! the stack still says where it happened.

use crate::decode::{keep_first, record_failure, record_parts, WarningKind};
use crate::path::{self, Seg};
use crate::wording::{self, Parts};
use crate::{DecodeError, DecodeErrorKind, RawJson, Wants, Warning};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// A string that borrows from the input when it has no escapes.
#[derive(Debug)]
pub struct Str<'de>(pub Cow<'de, str>);

impl Str<'_> {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Records a failure from its parts at the current path and makes the serde error
/// that unwinds the decode.
fn err<E: de::Error>(parts: Parts) -> E {
    E::custom(record_parts(parts))
}

/// The error for a raw value of the wrong type (`expected` is a phrase such as
/// `an object`).
pub fn wrong_type<E: de::Error>(expected: &str, raw: &RawValue) -> E {
    err(Parts::new(DecodeErrorKind::WrongType, expected, wording::found_raw(raw)))
}

/// The error for a value a type's own reader refuses (a ProtoJSON integer in a string,
/// base64 text): recorded at the current path with its kind and phrases.
pub fn invalid<E: de::Error>(kind: DecodeErrorKind, expected: impl Into<String>, found: impl Into<String>) -> E {
    err(Parts::new(kind, expected, found))
}

/// `the string "…"`: a string value as a decode error's `found` names it.
pub fn found_string(value: &str) -> String {
    wording::string(value)
}

/// `the number …`: a double as a decode error's `found` names it.
pub fn found_number(value: f64) -> String {
    format!("the number {}", wording::float(value))
}

/// What a raw value is, as a decode error's `found` names it: `null`,
/// `the integer 5`, `the string "x"`, `an object`.
pub fn found(raw: &RawValue) -> String {
    wording::found_raw(raw)
}

/// Decodes the value of the member `key` that `map` is positioned at.
///
/// The careful attempt reads the value's raw text first, so that a failure nothing
/// inside records (a value serde's own impls refuse) is named from `T` and that text.
pub fn field<'de, A: MapAccess<'de>, T: Deserialize<'de> + Wants>(
    map: &mut A,
    key: &'static str,
) -> Result<T, A::Error> {
    path::push(Seg::Key(key));
    let value = if path::careful() {
        from_raw::<T, A::Error>(map.next_value::<&'de RawValue>()?)?
    } else {
        map.next_value::<T>()?
    };
    path::pop();
    Ok(value)
}

/// Reads the next key of `map`. A key whose escapes are not Unicode is a failure at
/// the object's path (after the syntax check, nothing else can fail there).
pub fn key<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Str<'de>>, A::Error> {
    map.next_key::<Str<'de>>().inspect_err(|_| {
        if path::careful() {
            keep_first(|| DecodeError::from_parts(path::current(), wording::invalid_escape()));
        }
    })
}

/// Skips the value of an unknown member.
pub fn skip<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<IgnoredAny>().map(|_| ())
}

/// Marks member number `bit` as seen, failing on a repeated key.
pub fn seen<E: de::Error>(seen: &mut u64, bit: u32, key: &'static str) -> Result<(), E> {
    let mask = 1u64 << bit;
    if *seen & mask != 0 {
        path::push(Seg::Key(key));
        return Err(err(wording::repeated_key(key)));
    }
    *seen |= mask;
    Ok(())
}

/// The error for a required member that is absent (the path is the object's).
pub fn missing<E: de::Error>(key: &'static str) -> E {
    err(wording::missing_field(key))
}

/// The error for a second member of a protobuf `oneof` (the path is the second key).
pub fn one_of_twice<E: de::Error>(first: &str, second: &'static str) -> E {
    path::push(Seg::Key(second));
    err(Parts::new(
        DecodeErrorKind::OneOfTwice,
        format!("at most one of the fields {} and {}", wording::quote(first), wording::quote(second)),
        "both",
    ))
}

/// The error for an object that holds none of a required `oneof`'s members (`keys`
/// lists them as JSON strings: `"a", "b"`).
pub fn missing_one_of<E: de::Error>(keys: &'static str) -> E {
    err(Parts::new(DecodeErrorKind::MissingOneOf, format!("one of the fields {keys}"), "an object without any of them"))
}

/// Decodes a member annotated `x-deserialize-default-on-null`: `null` gives `None`
/// and a warning; the caller substitutes the empty value or absence.
pub fn field_default_on_null<'de, A: MapAccess<'de>, T: Deserialize<'de> + Wants>(
    map: &mut A,
    key: &'static str,
) -> Result<Option<T>, A::Error> {
    let value = field::<A, Option<T>>(map, key)?;
    if value.is_none() {
        path::push(Seg::Key(key));
        let here = path::current();
        let error = DecodeError::new(here.clone(), DecodeErrorKind::WrongType, T::WANT.phrase(), "null");
        push_warning(Warning {
            path: here,
            message: "null read as the default value".to_owned(),
            kind: WarningKind::Salvaged,
            error,
        });
        path::pop();
    }
    Ok(value)
}

/// Decodes a member whose bad values are dropped with a warning
/// (`x-deserialize-default-on-error`). `None` means absent or dropped.
pub fn field_lenient<'de, A: MapAccess<'de>, T: Deserialize<'de> + Wants>(
    map: &mut A,
    key: &'static str,
) -> Result<Option<T>, A::Error> {
    path::push(Seg::Key(key));
    if path::optimistic() {
        // A bad value fails the whole attempt, and the careful one salvages it.
        let value = map.next_value::<T>()?;
        path::pop();
        return Ok(Some(value));
    }
    let raw = map.next_value::<&'de RawValue>()?;
    let out = lenient::<T>(raw);
    path::pop();
    Ok(out)
}

/// Decodes `raw` as `T`, or records a warning at the current path and gives `None`.
pub fn lenient<'de, T: Deserialize<'de> + Wants>(raw: &'de RawValue) -> Option<T> {
    let mark = path::mark();
    match from_raw::<T, serde_json::Error>(raw) {
        Ok(v) => Some(v),
        Err(_) => {
            let error = path::STATE.with(|s| s.borrow_mut().error.take());
            path::rollback(mark);
            salvaged(error.expect("from_raw records the failure it returns"));
            None
        }
    }
}

/// Records at the current path that a value was dropped because of `error`.
fn salvaged(error: DecodeError) {
    let message = format!("dropped invalid value: {error}");
    push_warning(Warning { path: path::current(), message, kind: WarningKind::Salvaged, error });
}

fn push_warning(warning: Warning) {
    path::STATE.with(|s| s.borrow_mut().warnings.push(warning));
}

/// An array member whose invalid items are dropped with a warning each
/// (`x-deserialize-skip-invalid-items`).
///
/// The result is `None` when the member was dropped as a whole (only when `lenient`:
/// the value was not an array at all), `Some(None)` for `null` (only when `nullable`),
/// else the kept items.
pub fn field_items<'de, A: MapAccess<'de>, T: Deserialize<'de> + Wants>(
    map: &mut A,
    key: &'static str,
    nullable: bool,
    lenient_whole: bool,
) -> Result<Option<Option<Vec<T>>>, A::Error> {
    path::push(Seg::Key(key));
    if path::optimistic() {
        // Every item must decode; the careful attempt drops the bad ones.
        let items = if nullable {
            map.next_value::<Option<List<T>>>()?.map(|items| items.0)
        } else {
            Some(map.next_value::<List<T>>()?.0)
        };
        path::pop();
        return Ok(Some(items));
    }
    let raw = map.next_value::<&'de RawValue>()?;
    if raw.get() == "null" && nullable {
        path::pop();
        return Ok(Some(None));
    }
    let items = match serde_json::from_str::<Vec<&'de RawValue>>(raw.get()) {
        Ok(items) => items,
        Err(_) if lenient_whole => {
            let error =
                DecodeError::new(path::current(), DecodeErrorKind::WrongType, "an array", wording::found_raw(raw));
            salvaged(error);
            path::pop();
            return Ok(None);
        }
        Err(_) => return Err(wrong_type("an array", raw)),
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        path::push(Seg::Index(i));
        if let Some(v) = lenient::<T>(item) {
            out.push(v);
        }
        path::pop();
    }
    path::pop();
    Ok(Some(Some(out)))
}

/// Decodes a raw value as `T` in the current position (union variants, members read
/// raw); a failure that nothing inside recorded is named from `T` and the raw text.
pub fn from_raw<'de, T: Deserialize<'de> + Wants, E: de::Error>(raw: &'de RawValue) -> Result<T, E> {
    serde_json::from_str::<T>(raw.get()).map_err(|_| E::custom(record_failure(T::WANT, raw)))
}

/// Tries to decode a raw value as `T`, leaving no trace when it fails
/// (for unions without a tag, which try their variants in order).
pub fn try_variant<'de, T: Deserialize<'de>>(raw: &'de RawValue) -> Option<T> {
    let mark = path::mark();
    match serde_json::from_str::<T>(raw.get()) {
        Ok(v) => Some(v),
        Err(_) => {
            path::rollback(mark);
            None
        }
    }
}

/// The error for a value that matched none of a union's variants.
pub fn no_variant<E: de::Error>(expected: &str, raw: &RawValue) -> E {
    err(Parts::new(DecodeErrorKind::NoVariant, expected, wording::found_raw(raw)))
}

/// Records the warning for an unknown variant of a closed union, kept as raw JSON.
pub fn warn_unknown(union: &str, tag: &str) {
    let here = path::current();
    let message = format!("unknown {union} variant {} kept as raw JSON", wording::quote(tag));
    let expected = format!("a known variant of {union}");
    let error = DecodeError::new(here.clone(), DecodeErrorKind::UnknownVariant, expected, wording::string(tag));
    push_warning(Warning { path: here, message, kind: WarningKind::UnknownVariant, error });
}

/// The members of a raw object, borrowed.
pub fn object_members(raw: &RawValue) -> Result<Vec<(Cow<'_, str>, &RawValue)>, serde_json::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<(Cow<'de, str>, &'de RawValue)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(k) = key(&mut map)? {
                out.push((k.0, map.next_value::<&'de RawValue>()?));
            }
            Ok(out)
        }
    }
    serde_json::Deserializer::from_str(raw.get()).deserialize_map(V)
}

/// An array whose items are decoded with their index on the path.
#[derive(Debug)]
pub struct List<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de> + Wants> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Wants> Visitor<'de> for V<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
                let careful = path::careful();
                loop {
                    path::push(Seg::Index(out.len()));
                    let item = if careful {
                        match seq.next_element::<&'de RawValue>()? {
                            Some(raw) => Some(from_raw::<T, S::Error>(raw)?),
                            None => None,
                        }
                    } else {
                        seq.next_element::<T>()?
                    };
                    path::pop();
                    match item {
                        Some(v) => out.push(v),
                        None => return Ok(List(out)),
                    }
                }
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

/// A JSON object with arbitrary keys, in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderedMap<T>(pub Vec<(String, T)>);

impl<T> Default for OrderedMap<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> OrderedMap<T> {
    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value under `key`, if any.
    pub fn get(&self, key: &str) -> Option<&T> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<'de, T: Deserialize<'de> + Wants> Deserialize<'de> for OrderedMap<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Wants> Visitor<'de> for V<T> {
            type Value = OrderedMap<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, T)> = Vec::new();
                let careful = path::careful();
                while let Some(k) = key(&mut map)? {
                    if out.iter().any(|(seen, _)| seen == k.as_str()) {
                        path::push(Seg::OwnedKey(k.as_str().into()));
                        return Err(err(wording::repeated_key(k.as_str())));
                    }
                    path::push(Seg::OwnedKey(k.as_str().into()));
                    let value = if careful {
                        from_raw::<T, A::Error>(map.next_value::<&'de RawValue>()?)?
                    } else {
                        map.next_value::<T>()?
                    };
                    out.push((k.0.into_owned(), value));
                    path::pop();
                }
                Ok(OrderedMap(out))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

impl<T: Serialize> Serialize for OrderedMap<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The error for a value a closed enum does not list.
pub fn unknown_value<E: de::Error>(value: &str, expected: &'static [&'static str]) -> E {
    err(Parts::new(DecodeErrorKind::NotListed, wording::one_of(expected), wording::string(value)))
}

/// Checks a decoded string against the schema's `minLength` (counted in characters).
pub fn min_length<E: de::Error>(value: &str, min: usize, key: &'static str) -> Result<(), E> {
    let len = value.chars().count();
    if len < min {
        path::push(Seg::Key(key));
        return Err(err(Parts::new(
            DecodeErrorKind::TooShort,
            format!("a string of at least {min} characters"),
            format!("a string of {len} characters"),
        )));
    }
    Ok(())
}

/// Checks a decoded array against the schema's `minItems`.
pub fn min_items<T, E: de::Error>(value: &[T], min: usize, key: &'static str) -> Result<(), E> {
    if value.len() < min {
        path::push(Seg::Key(key));
        return Err(err(Parts::new(
            DecodeErrorKind::TooShort,
            format!("an array of at least {min} items"),
            format!("an array of {} items", value.len()),
        )));
    }
    Ok(())
}

/// The members of an object read before its tag, kept as raw slices.
pub type Buffered<'de> = Vec<(Str<'de>, &'de RawValue)>;

/// Reads members of `map` until the member `tag`, buffering the ones before it.
///
/// Returns the tag's string value (or `None` when the object has no such member)
/// and the buffered members. After a `Some`, `map` is positioned after the tag and
/// the rest of the object can be read by [`Replay`] without a second pass.
pub fn read_until_tag<'de, A: MapAccess<'de>>(
    map: &mut A,
    tag: &'static str,
) -> Result<(Option<Str<'de>>, Buffered<'de>), A::Error> {
    let mut buffered = Vec::new();
    while let Some(key) = key(map)? {
        if key.as_str() == tag {
            return Ok((Some(field::<A, Str<'de>>(map, tag)?), buffered));
        }
        buffered.push((key, map.next_value::<&'de RawValue>()?));
    }
    Ok((None, buffered))
}

/// Reads whatever is left of `map` into `buffered` (for unknown variants).
pub fn drain<'de, A: MapAccess<'de>>(mut map: A, buffered: &mut Buffered<'de>) -> Result<(), A::Error> {
    while let Some(key) = key(&mut map)? {
        buffered.push((key, map.next_value::<&'de RawValue>()?));
    }
    Ok(())
}

/// Rebuilds a raw JSON object from its members, the tag (if any) put back where it
/// was read: `(index, key, value)`, `index` being the number of members before it.
/// Member values keep their received text; keys and the tag value are re-spelled.
pub fn rebuild(tag: Option<(usize, &str, &str)>, members: &Buffered<'_>) -> RawJson {
    let mut text =
        String::with_capacity(64 + members.iter().map(|(k, v)| k.as_str().len() + v.get().len() + 4).sum::<usize>());
    text.push('{');
    let mut first = true;
    let mut push = |text: &mut String, key: &str, value: &str| {
        if !std::mem::take(&mut first) {
            text.push(',');
        }
        text.push_str(&serde_json::to_string(key).unwrap_or_default());
        text.push(':');
        text.push_str(value);
    };
    let at = tag.map_or(usize::MAX, |(index, _, _)| index.min(members.len()));
    for (index, (key, value)) in members.iter().enumerate() {
        if index == at {
            if let Some((_, key, value)) = tag {
                push(&mut text, key, &serde_json::to_string(value).unwrap_or_default());
            }
        }
        push(&mut text, key.as_str(), value.get());
    }
    if at == members.len() {
        if let Some((_, key, value)) = tag {
            push(&mut text, key, &serde_json::to_string(value).unwrap_or_default());
        }
    }
    text.push('}');
    RawJson::from_text(&text).expect("members of a valid object rebuild into a valid object")
}

/// A map that yields buffered members first, then the rest of a live map.
///
/// This is how a tagged union hands an object to its variant in one pass: members
/// before the tag were kept as raw slices and are decoded from them; members after
/// it are decoded straight from the input.
pub struct Replay<'de, A> {
    buffered: std::vec::IntoIter<(Str<'de>, &'de RawValue)>,
    value: Option<&'de RawValue>,
    live: Option<A>,
}

impl<'de, A> Replay<'de, A> {
    /// Buffered members, then `live` (or nothing more when `live` is `None`).
    pub fn new(buffered: Buffered<'de>, live: Option<A>) -> Self {
        Self { buffered: buffered.into_iter(), value: None, live }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Replay<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        if let Some((key, value)) = self.buffered.next() {
            self.value = Some(value);
            return match key.0 {
                Cow::Borrowed(k) => seed.deserialize(de::value::BorrowedStrDeserializer::<A::Error>::new(k)).map(Some),
                Cow::Owned(k) => seed.deserialize(de::value::StringDeserializer::<A::Error>::new(k)).map(Some),
            };
        }
        match &mut self.live {
            Some(live) => live.next_key_seed(seed),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        if let Some(raw) = self.value.take() {
            // Members are read raw in the careful attempt (see `field`), so a failure here
            // is only the optimistic attempt's, and that one is not reported.
            let mut d = serde_json::Deserializer::from_str(raw.get());
            return seed.deserialize(&mut d).map_err(<A::Error as de::Error>::custom);
        }
        match &mut self.live {
            Some(live) => live.next_value_seed(seed),
            None => Err(<A::Error as de::Error>::custom("value requested before key")),
        }
    }
}
