//! The conversion engine: a shape describes how one JSON value looks in 0.3 and in 1.0,
//! and the same description is walked in either direction.
//!
//! The shapes are generated tables (`crate::generated::v03`, from the pinned 0.3 schema,
//! the 1.0 proto and `rules/a2a.toml [v03]`): [`Rule`]s over the members of an object,
//! unions keyed by a tag, wrapped lists. The few places where 0.3 and 1.0 differ in
//! structure (parts, push authentication schemes, the card's interfaces, ...) are the
//! hand-written functions of `custom.rs` that the tables name.

use serde_json::{Map, Value};

use super::custom;
use crate::errors::{A2aError, ErrorKind};
use crate::generated::v03::{EnumRow, Rule, Shape};

/// Which way a conversion goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the A2A 0.3 JSON shapes to 1.0 ProtoJSON.
    ToV1,
    /// From 1.0 ProtoJSON to the A2A 0.3 JSON shapes.
    ToV03,
}

/// An InvalidParams error at `path`.
pub(crate) fn bad(path: &str, expected: &str, found: &Value) -> A2aError {
    let found = describe(found);
    A2aError::new(ErrorKind::InvalidParams)
        .with_message(format!("Invalid parameters at {path}: expected {expected}, found {found}"))
        .with("path", path)
        .with("expected", expected)
        .with("found", found)
}

/// A short description of a value for error messages.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() <= 40 => format!("{s:?}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

pub(crate) fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, A2aError> {
    v.as_object().ok_or_else(|| bad(path, "an object", v))
}

pub(crate) fn string<'a>(v: &'a Value, path: &str) -> Result<&'a str, A2aError> {
    v.as_str().ok_or_else(|| bad(path, "a string", v))
}

pub(crate) fn member(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

/// A member that is present and not `null`.
pub(crate) fn get<'a>(m: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    m.get(name).filter(|v| !v.is_null())
}

/// Converts `value` (found at `path`) by `shape`.
pub(crate) fn convert(shape: &Shape, dir: Direction, value: &Value, path: &str) -> Result<Value, A2aError> {
    match shape {
        Shape::Object(rules) => {
            let src = object(value, path)?;
            let mut out = Map::new();
            for rule in rules.iter() {
                apply(rule, dir, src, &mut out, path)?;
            }
            Ok(Value::Object(out))
        }
        Shape::Union { tag, variants } => union(tag, variants, dir, value, path),
        Shape::Wrapped(field, item) => match dir {
            Direction::ToV1 => {
                let items = value.as_array().ok_or_else(|| bad(path, "an array", value))?;
                let out = list(item, dir, items, path)?;
                Ok(Value::Object(Map::from_iter([((*field).to_owned(), Value::Array(out))])))
            }
            Direction::ToV03 => {
                let src = object(value, path)?;
                let p = member(path, field);
                match get(src, field) {
                    None => Ok(Value::Array(Vec::new())),
                    Some(v) => {
                        Ok(Value::Array(list(item, dir, v.as_array().ok_or_else(|| bad(&p, "an array", v))?, &p)?))
                    }
                }
            }
        },
        Shape::Empty => match dir {
            Direction::ToV1 => Ok(Value::Object(Map::new())),
            Direction::ToV03 => Ok(Value::Null),
        },
        // 0.3 sends no params (whatever is there is ignored); the 1.0 request is empty.
        Shape::NoParams => Ok(Value::Object(Map::new())),
        Shape::Value(f) => custom::value(*f, dir, value, path),
    }
}

fn list(shape: &Shape, dir: Direction, items: &[Value], path: &str) -> Result<Vec<Value>, A2aError> {
    items.iter().enumerate().map(|(i, v)| convert(shape, dir, v, &format!("{path}[{i}]"))).collect()
}

fn union(
    tag: &str,
    variants: &[(&'static str, &'static str, &'static Shape)],
    dir: Direction,
    value: &Value,
    path: &str,
) -> Result<Value, A2aError> {
    let src = object(value, path)?;
    match dir {
        Direction::ToV1 => {
            let p = member(path, tag);
            let t = get(src, tag).ok_or_else(|| bad(&p, &expected_tags(variants), &Value::Null))?;
            let t = string(t, &p)?;
            let (m, _, shape) = variants
                .iter()
                .find(|(_, k, _)| *k == t)
                .ok_or_else(|| bad(&p, &expected_tags(variants), &Value::String(t.to_owned())))?;
            let inner = convert(shape, dir, value, path)?;
            Ok(Value::Object(Map::from_iter([((*m).to_owned(), inner)])))
        }
        Direction::ToV03 => {
            let mut present = variants.iter().filter(|(m, _, _)| get(src, m).is_some());
            let (Some((m, t, shape)), None) = (present.next(), present.next()) else {
                let names: Vec<&str> = variants.iter().map(|(m, _, _)| *m).collect();
                return Err(bad(path, &format!("exactly one of {}", names.join(", ")), value));
            };
            let p = member(path, m);
            let mut inner = convert(shape, dir, &src[*m], &p)?;
            match inner.as_object_mut() {
                Some(o) => {
                    o.insert(tag.to_owned(), Value::String((*t).to_owned()));
                }
                None => return Err(bad(&p, "an object", &inner)),
            }
            Ok(inner)
        }
    }
}

fn expected_tags(variants: &[(&'static str, &'static str, &'static Shape)]) -> String {
    let tags: Vec<String> = variants.iter().map(|(_, t, _)| format!("{t:?}")).collect();
    format!("one of {}", tags.join(", "))
}

/// Looks a value up in an enum table, in the direction's source column. 1.0 values may
/// also be numbers, as ProtoJSON allows.
pub(crate) fn enum_value(table: &[EnumRow], dir: Direction, v: &Value, path: &str) -> Result<Value, A2aError> {
    let row = match (dir, v) {
        (Direction::ToV1, Value::String(s)) => table.iter().find(|r| r.0 == s),
        (Direction::ToV03, Value::String(s)) => table.iter().find(|r| r.1 == s),
        (Direction::ToV03, Value::Number(n)) => table.iter().find(|r| n.as_i64() == Some(r.2)),
        _ => None,
    };
    match row {
        Some(r) => Ok(Value::String(
            match dir {
                Direction::ToV1 => r.1,
                Direction::ToV03 => r.0,
            }
            .to_owned(),
        )),
        None => {
            let names: Vec<String> = table
                .iter()
                .map(|r| match dir {
                    Direction::ToV1 => format!("{:?}", r.0),
                    Direction::ToV03 => format!("{:?}", r.1),
                })
                .collect();
            Err(bad(path, &format!("one of {}", names.join(", ")), v))
        }
    }
}

fn names(dir: Direction, v03: &'static str, v1: &'static str) -> (&'static str, &'static str) {
    match dir {
        Direction::ToV1 => (v03, v1),
        Direction::ToV03 => (v1, v03),
    }
}

fn apply(
    rule: &Rule,
    dir: Direction,
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    path: &str,
) -> Result<(), A2aError> {
    match rule {
        Rule::Copy(name) => {
            if let Some(v) = get(src, name) {
                out.insert((*name).to_owned(), v.clone());
            }
        }
        Rule::CopyRequired(name) => match get(src, name) {
            Some(v) => {
                out.insert((*name).to_owned(), v.clone());
            }
            None if dir == Direction::ToV03 => {
                out.insert((*name).to_owned(), Value::String(String::new()));
            }
            None => {}
        },
        Rule::Rename(a, b) => {
            let (from, to) = names(dir, a, b);
            if let Some(v) = get(src, from) {
                out.insert(to.to_owned(), v.clone());
            }
        }
        Rule::Field(a, b, shape) => {
            let (from, to) = names(dir, a, b);
            if let Some(v) = get(src, from) {
                out.insert(to.to_owned(), convert(shape, dir, v, &member(path, from))?);
            }
        }
        Rule::List(a, b, shape) => {
            let (from, to) = names(dir, a, b);
            if let Some(v) = get(src, from) {
                let p = member(path, from);
                let items = v.as_array().ok_or_else(|| bad(&p, "an array", v))?;
                out.insert(to.to_owned(), Value::Array(list(shape, dir, items, &p)?));
            }
        }
        Rule::Map(a, b, shape) => {
            let (from, to) = names(dir, a, b);
            if let Some(v) = get(src, from) {
                let p = member(path, from);
                let mut m = Map::new();
                for (k, item) in object(v, &p)? {
                    m.insert(k.clone(), convert(shape, dir, item, &member(&p, k))?);
                }
                out.insert(to.to_owned(), Value::Object(m));
            }
        }
        Rule::Enum(a, b, table) => {
            let (from, to) = names(dir, a, b);
            if let Some(v) = get(src, from) {
                out.insert(to.to_owned(), enum_value(table, dir, v, &member(path, from))?);
            }
        }
        Rule::Const(name, value) => match dir {
            Direction::ToV1 => {
                if let Some(v) = get(src, name) {
                    if v.as_str() != Some(value) {
                        return Err(bad(&member(path, name), &format!("{value:?}"), v));
                    }
                }
            }
            Direction::ToV03 => {
                out.insert((*name).to_owned(), Value::String((*value).to_owned()));
            }
        },
        Rule::Not(a, b) => {
            let (from, to) = names(dir, a, b);
            if let Some(v) = get(src, from) {
                let b = v.as_bool().ok_or_else(|| bad(&member(path, from), "a boolean", v))?;
                out.insert(to.to_owned(), Value::Bool(!b));
            }
        }
        Rule::Flatten(name, shape) => match dir {
            Direction::ToV1 => {
                if let Some(v) = get(src, name) {
                    if let Value::Object(inner) = convert(shape, dir, v, &member(path, name))? {
                        out.extend(inner);
                    }
                }
            }
            Direction::ToV03 => {
                let inner = convert(shape, dir, &Value::Object(src.clone()), path)?;
                out.insert((*name).to_owned(), inner);
            }
        },
        Rule::Members(f) => custom::members(*f, dir, src, out, path)?,
    }
    Ok(())
}
