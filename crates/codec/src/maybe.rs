//! [`MaybeUndefined`]: a field that may be absent, `null`, or hold a value.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The three states of an optional, nullable field.
///
/// ACP gives them different meanings in update messages: absent leaves a value
/// unchanged, `null` clears it, a value replaces it. `Option<T>` cannot tell the
/// first two apart, so nullable optional fields use this type everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MaybeUndefined<T> {
    /// The key was not present.
    #[default]
    Undefined,
    /// The key was present with the value `null`.
    Null,
    /// The key was present with a value.
    Value(T),
}

impl<T> MaybeUndefined<T> {
    /// True when the key was absent.
    pub fn is_undefined(&self) -> bool {
        matches!(self, Self::Undefined)
    }

    /// True when the key held `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// The value, if there is one (absent and `null` both give `None`).
    pub fn value(&self) -> Option<&T> {
        match self {
            Self::Value(v) => Some(v),
            _ => None,
        }
    }

    /// Converts into an `Option`, forgetting the difference between absent and `null`.
    pub fn into_option(self) -> Option<T> {
        match self {
            Self::Value(v) => Some(v),
            _ => None,
        }
    }

    /// Borrows the contents.
    pub fn as_ref(&self) -> MaybeUndefined<&T> {
        match self {
            Self::Undefined => MaybeUndefined::Undefined,
            Self::Null => MaybeUndefined::Null,
            Self::Value(v) => MaybeUndefined::Value(v),
        }
    }

    /// Builds from the decoded shape "present?" / "null?".
    pub fn from_present(present: Option<Option<T>>) -> Self {
        match present {
            None => Self::Undefined,
            Some(None) => Self::Null,
            Some(Some(v)) => Self::Value(v),
        }
    }
}

impl<T> From<T> for MaybeUndefined<T> {
    fn from(v: T) -> Self {
        Self::Value(v)
    }
}

impl<T> From<Option<T>> for MaybeUndefined<T> {
    /// `None` becomes absent, not `null`.
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Undefined, Self::Value)
    }
}

impl<T: Serialize> Serialize for MaybeUndefined<T> {
    /// Absent values are skipped by the generated code; this writes `null` for both
    /// absent and null when used on its own.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(v) => v.serialize(s),
            _ => s.serialize_unit(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MaybeUndefined<T> {
    /// A present key: `null` or a value. Absence is decided by the enclosing object.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(d)?.map_or(Self::Null, Self::Value))
    }
}
