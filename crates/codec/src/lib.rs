//! Runtime support for the codecs that `codegen/` generates.
//!
//! Generated types implement serde's `Deserialize`/`Serialize` by hand (the generator
//! writes the visitors), and lean on this crate for what serde does not give:
//!
//! * **JSON paths.** Decoding keeps a per-thread stack of the keys and indices it is
//!   inside; when something fails, the error names where (`$.params.prompt[0].type`),
//!   what was expected and what was found ([`DecodeError`]).
//! * **Leniency.** Fields annotated `x-deserialize-default-on-error` and arrays
//!   annotated `x-deserialize-skip-invalid-items` drop a bad value, record a
//!   [`Warning`] at its path, and let the message through ([`de::lenient`]).
//! * **Three states.** [`MaybeUndefined`] keeps "absent", `null` and a value apart.
//! * **Raw JSON.** [`RawJson`] holds free-form values (`_meta`, `rawInput`, unknown
//!   union variants) as their original bytes, never as a parsed tree.
//!
//! Entry points are [`decode`] and [`encode_into`]. Decoding requires serde_json's
//! deserializer over a `&str`/`&[u8]` (values are borrowed as raw JSON while
//! decoding); reading from an `io::Read` means reading the frame into a buffer first,
//! which every framed transport does anyway.

pub mod de;
mod decode;
mod kind;
mod maybe;
mod nesting;
mod path;
mod raw;
mod want;
mod wording;

pub use decode::{
    decode, decode_in, decode_slice, encode_into, encode_to_writer, DecodeError, Decoded, Warning, WarningKind,
};
pub use kind::DecodeErrorKind;
pub use maybe::MaybeUndefined;
pub use nesting::nesting_exceeds;
#[doc(hidden)]
pub use path::{push_key, set_careful_only};
pub use raw::{RawJson, RawObject};
pub use want::{Want, Wants};

/// Writes the members of an object into a map that is being serialised.
///
/// Generated structs and unions implement it so that a tagged union can write its
/// tag and then the fields of its variant into one JSON object. Keys listed in `skip`
/// were already written by an enclosing object and must not be written again (only
/// raw unknown variants have to look at it).
pub trait SerializeFields {
    /// Writes this value's members into `map`.
    fn serialize_fields<M: serde::ser::SerializeMap>(&self, map: &mut M, skip: &[&str]) -> Result<(), M::Error>;
}

/// `Serialize` for a generated type as one JSON object of its [`SerializeFields`]
/// (`size`: the number of members when known; `unknown`: the variant that keeps an
/// unknown value raw and writes it as it came). Used by generated code only.
#[doc(hidden)]
#[macro_export]
macro_rules! serialize_via_fields {
    ($t:ty) => {
        $crate::serialize_via_fields!($t, size = None);
    };
    ($t:ty, size = $size:expr) => {
        impl ::serde::Serialize for $t {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap as _;
                let mut m = s.serialize_map($size)?;
                $crate::SerializeFields::serialize_fields(self, &mut m, &[])?;
                m.end()
            }
        }
    };
    ($t:ty, unknown = $unknown:ident) => {
        impl ::serde::Serialize for $t {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap as _;
                if let Self::$unknown(raw) = self {
                    return ::serde::Serialize::serialize(raw, s);
                }
                let mut m = s.serialize_map(None)?;
                $crate::SerializeFields::serialize_fields(self, &mut m, &[])?;
                m.end()
            }
        }
    };
}

/// `Serialize` for a generated string enum (its wire value, `as_str`) and what it reads
/// (a string, [`Wants`]). Used by generated code only.
#[doc(hidden)]
#[macro_export]
macro_rules! string_enum {
    ($t:ty) => {
        impl ::serde::Serialize for $t {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
        $crate::wants!($t, String);
    };
}

/// `Deserialize` for a generated type that reads an object's members with its
/// `visit_fields` (the name is what a wrong type is reported to expect: `an object
/// (name)`). Used by generated code only.
#[doc(hidden)]
#[macro_export]
macro_rules! deserialize_via_fields {
    ($t:ident) => {
        impl<'de> ::serde::Deserialize<'de> for $t {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                struct V;
                impl<'de> ::serde::de::Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("an object (", stringify!($t), ")"))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, map: A) -> ::std::result::Result<$t, A::Error> {
                        $t::visit_fields(map)
                    }
                }
                d.deserialize_map(V)
            }
        }
        impl $crate::Wants for $t {
            const WANT: $crate::Want = $crate::Want::Named(stringify!($t));
        }
    };
}
