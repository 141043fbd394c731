//! What a decodable type reads, so that a value of another kind is named where it is
//! met (the `expected` of a wrong-type or out-of-range failure) without asking serde
//! what went wrong.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::de::{List, OrderedMap, Str};
use crate::{MaybeUndefined, RawJson, RawObject};

/// The JSON a type reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Any JSON value (raw JSON, skipped values).
    Any,
    /// A string (also a string enum: its values are checked by the enum itself).
    String,
    /// `true` or `false`.
    Boolean,
    /// Any number a double holds.
    Number,
    /// An integer from `low` to `high`.
    Integer {
        /// The smallest value.
        low: i128,
        /// The largest value.
        high: i128,
    },
    /// An array.
    Array,
    /// An object of free-form members.
    Object,
    /// An object of a generated type (its name is part of the phrase).
    Named(&'static str),
    /// What a type with its own reader takes, as the phrase to say so (`an integer, a
    /// string or null`); such a reader names its own failures of values it takes.
    Phrase(&'static str),
}

impl Want {
    /// The `expected` phrase of a value of another kind.
    pub fn phrase(self) -> String {
        match self {
            Want::Any => "a JSON value".to_owned(),
            Want::String => "a string".to_owned(),
            Want::Boolean => "a boolean".to_owned(),
            Want::Number => "a number".to_owned(),
            Want::Integer { low, high } => crate::wording::integer_range(low, high),
            Want::Array => "an array".to_owned(),
            Want::Object => "an object".to_owned(),
            Want::Named(name) => format!("an object ({name})"),
            Want::Phrase(phrase) => phrase.to_owned(),
        }
    }
}

/// A type the codec decodes, with the JSON it reads. Generated types implement it
/// through [`deserialize_via_fields!`](crate::deserialize_via_fields) or
/// [`wants!`](crate::wants).
pub trait Wants {
    /// What this type reads.
    const WANT: Want;
}

/// `impl Wants for $t` reading what `$want` (a [`Want`] variant without fields, or
/// `Named` for an object of the type `$t`) names, or what another type reads (`wants!(SessionId => String)`). Used by generated
/// code.
#[doc(hidden)]
#[macro_export]
macro_rules! wants {
    ($t:ty, Phrase($phrase:expr)) => {
        impl $crate::Wants for $t {
            const WANT: $crate::Want = $crate::Want::Phrase($phrase);
        }
    };
    ($t:ident, Named) => {
        impl $crate::Wants for $t {
            const WANT: $crate::Want = $crate::Want::Named(stringify!($t));
        }
    };
    ($t:ty, $want:ident) => {
        impl $crate::Wants for $t {
            const WANT: $crate::Want = $crate::Want::$want;
        }
    };
    ($t:ty => $like:ty) => {
        impl $crate::Wants for $t {
            const WANT: $crate::Want = <$like as $crate::Wants>::WANT;
        }
    };
}

macro_rules! integers {
    ($($t:ty),*) => {
        $(impl Wants for $t {
            const WANT: Want = Want::Integer { low: <$t>::MIN as i128, high: <$t>::MAX as i128 };
        })*
    };
}

integers!(u8, u16, u32, u64, i8, i16, i32, i64);

wants!(String, String);
wants!(Str<'_>, String);
wants!(Cow<'_, str>, String);
wants!(bool, Boolean);
wants!(f32, Number);
wants!(f64, Number);
wants!(RawJson, Any);
wants!(&RawValue, Any);
wants!(Box<RawValue>, Any);
wants!(serde_json::Value, Any);
wants!(serde::de::IgnoredAny, Any);
wants!(RawObject, Object);

impl<T: Wants> Wants for Option<T> {
    const WANT: Want = T::WANT;
}

impl<T: Wants> Wants for MaybeUndefined<T> {
    const WANT: Want = T::WANT;
}

impl<T: Wants> Wants for Box<T> {
    const WANT: Want = T::WANT;
}

impl<T> Wants for List<T> {
    const WANT: Want = Want::Array;
}

impl<T> Wants for OrderedMap<T> {
    const WANT: Want = Want::Object;
}
