"""Write the A2A 0.3 <-> 1.0 tables (`a2a_v03.Tables`) as the Rust crate's
`generated/v03.rs`, the tables `crates/a2a/src/compat/v03/engine.rs` walks."""

from __future__ import annotations

from .a2a_v03 import Rule, Shape, Tables
from .emit import rust_str, table_header
from .names import snake, upper_camel

RUST_OUT = "crates/a2a/src/generated/v03.rs"


def static_name(name: str) -> str:
    return snake(name).upper()


def rust_rule(r: Rule) -> str:
    names = ", ".join(rust_str(n) for n in r.names)
    if r.op in ("Copy", "CopyRequired", "Rename", "Const", "Not"):
        return f"Rule::{r.op}({names})"
    if r.op == "Field" and r.value:
        return f"Rule::Field({names}, &Shape::Value(ValueFn::{upper_camel(r.value)}))"
    if r.op in ("Field", "List", "Map", "Flatten"):
        return f"Rule::{r.op}({names}, &{static_name(r.shape or '')})"
    if r.op == "Enum":
        return f"Rule::Enum({names}, {static_name(r.enum or '')})"
    if r.op == "Members":
        return f"Rule::Members(MembersFn::{upper_camel(r.fn or '')})"
    raise AssertionError(r.op)


def rust_shape(s: Shape) -> str:
    if s.kind == "object":
        return "Shape::Object(&[" + ", ".join(rust_rule(r) for r in s.rules) + "])"
    if s.kind == "union":
        variants = ", ".join(
            f"({rust_str(v.v1_member)}, {rust_str(v.tag)}, &{static_name(v.shape)})" for v in s.variants
        )
        return f"Shape::Union {{ tag: {rust_str(s.tag)}, variants: &[{variants}] }}"
    if s.kind == "wrapped":
        return f"Shape::Wrapped({rust_str(s.wrapped)}, &{static_name(s.item)})"
    if s.kind == "empty":
        return "Shape::Empty"
    if s.kind == "no_params":
        return "Shape::NoParams"
    return f"Shape::Value(ValueFn::{upper_camel(s.custom)})"


PREAMBLE = """\
//! The A2A 0.3 <-> 1.0 shapes and the 0.3 JSON-RPC methods, as tables walked by
//! `crate::compat::v03` (its `engine.rs`). The hand-written conversions they name
//! (`ValueFn`, `MembersFn`) are functions in `compat/v03/custom.rs`.

use crate::generated::v1::Operation;

/// One row of an enum table: the 0.3 string, the 1.0 name, the 1.0 number.
#[derive(Debug)]
pub(crate) struct EnumRow(pub &'static str, pub &'static str, pub i64);

/// How one member of an object maps. Names are given as `(0.3 name, 1.0 name)`.
#[derive(Debug)]
pub(crate) enum Rule {
    /// The same name and value in both versions.
    Copy(&'static str),
    /// Like `Copy`, but 0.3 requires the member: `""` is written when 1.0 leaves it out.
    CopyRequired(&'static str),
    /// Renamed, value unchanged.
    Rename(&'static str, &'static str),
    /// A value converted by a shape.
    Field(&'static str, &'static str, &'static Shape),
    /// An array whose items are converted by a shape.
    List(&'static str, &'static str, &'static Shape),
    /// An object whose values are converted by a shape (keys kept).
    Map(&'static str, &'static str, &'static Shape),
    /// An enum string mapped through a table.
    Enum(&'static str, &'static str, &'static [EnumRow]),
    /// A 0.3 discriminator (`kind`, `type`) with this value; 1.0 has none.
    Const(&'static str, &'static str),
    /// A boolean whose meaning is negated (`blocking` <-> `returnImmediately`).
    Not(&'static str, &'static str),
    /// A 0.3 member holding an object whose members sit directly in the 1.0 object.
    Flatten(&'static str, &'static Shape),
    /// A hand-written conversion reading the source object and adding to the target.
    Members(MembersFn),
}

/// How one value maps.
#[derive(Debug)]
pub(crate) enum Shape {
    /// An object, member by member; members no rule names are dropped.
    Object(&'static [Rule]),
    /// A 1.0 `oneof` written as `{member: value}` that 0.3 writes as the bare value with a
    /// tag member. Variants are `(1.0 member, 0.3 tag value, shape)`.
    Union { tag: &'static str, variants: &'static [(&'static str, &'static str, &'static Shape)] },
    /// A 1.0 object `{field: [items]}` that 0.3 writes as the bare array.
    Wrapped(&'static str, &'static Shape),
    /// A 1.0 empty message (`{}`) that 0.3 writes as `null`.
    Empty,
    /// A 1.0 request (`{}` here) for which 0.3 sends no params.
    NoParams,
    /// A hand-written conversion of the whole value.
    Value(ValueFn),
}

/// A 0.3 JSON-RPC method: its name, the 1.0 operation it is, and how its params and
/// results map.
pub struct Method {
    /// The 0.3 method name (`message/send`).
    pub name: &'static str,
    /// The 1.0 operation.
    pub operation: Operation,
    pub(crate) params: &'static Shape,
    pub(crate) result: &'static Shape,
}
"""


def rust(t: Tables) -> str:
    lines = [
        *table_header(t.sources[0], "//"),
        *(f"// and {f} sha256 {h}." for f, h in t.sources[1:]),
        PREAMBLE,
        "/// The hand-written conversions of whole values (`value`/`custom` in the rules).",
        "#[derive(Debug, Clone, Copy, PartialEq, Eq)]",
        "pub(crate) enum ValueFn {",
        *(f"    {upper_camel(f)}," for f in t.value_fns),
        "}",
        "",
        "/// The hand-written conversions that add members (`members` in the rules).",
        "#[derive(Debug, Clone, Copy, PartialEq, Eq)]",
        "pub(crate) enum MembersFn {",
        *(f"    {upper_camel(f)}," for f in t.members_fns),
        "}",
        "",
    ]
    for e in t.enums.values():
        lines.append(f"/// 0.3 <-> 1.0 `{e.name}`.")
        rows = ", ".join(f"EnumRow({rust_str(a)}, {rust_str(b)}, {n})" for a, b, n in e.rows)
        lines += [f"pub(crate) static {static_name(e.name)}: &[EnumRow] = &[{rows}];", ""]
    for s in t.shapes.values():
        what = "no params" if s.v03 == "" else f"`{s.v03}`"
        lines.append(f"/// 0.3 {what} <-> 1.0 `{s.v1}`.")
        lines += [f"pub(crate) static {static_name(s.name)}: Shape = {rust_shape(s)};", ""]
    lines.append("/// Every 0.3 JSON-RPC method (1.0's operations without one, such as ListTasks, are absent).")
    lines.append("pub static METHODS: &[Method] = &[")
    for m in t.methods:
        lines.append(
            f"    Method {{ name: {rust_str(m.name)}, operation: Operation::{m.operation}, "
            f"params: &{static_name(m.params)}, result: &{static_name(m.result)} }},"
        )
    lines += ["];", ""]
    return "\n".join(lines)
