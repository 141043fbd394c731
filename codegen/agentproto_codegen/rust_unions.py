"""Rust for the model's unions: the enum, and its codec by strategy.

* tagged: one pass over the object; members before the tag are kept as raw slices,
  then the variant the tag names reads them and the rest of the stream.  An unknown
  tag is kept as ``Unknown(RawJson)`` and re-encodes unchanged.
* keyed: a protobuf oneof on its own; the member key that is present decides.
* untagged: only where the spec gives no tag; the variants are tried in order on the
  value's own bytes.

Functions take the ``rust.Emitter`` (for type helpers and the writer) rather than
being its methods, to keep each file to one concern.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .emit import DocStyle, given, rust_str as rstr
from .model import Alias, NamedRef, PrimRef, ArrayRef, Struct, TypeRef, prim_phrase, Union, Variant

if TYPE_CHECKING:
    from .rust import Emitter

# The catch-all variant of tagged unions and open enums.
UNKNOWN = "Unknown"


def variant_ident(name: str) -> str:
    """A variant's Rust name; a variant the spec itself calls `Unknown` steps aside."""
    return name + "Variant" if name == UNKNOWN else name


def emit_union(e: Emitter, u: Union) -> None:
    out = e.out
    out.doc(u.doc, DocStyle.RUST)
    out.line("#[derive(Debug, Clone, PartialEq)]")
    with out.block(f"pub enum {u.name} {{"):
        for v in u.variants:
            out.doc(v.doc, DocStyle.RUST)
            ident = variant_ident(v.name)
            out.line(f"{ident}," if v.payload is None else f"{ident}({e.rtype(v.payload)}),")
        if u.strategy == "tagged":
            kind = "a future or extension variant" if u.open else "a variant this schema does not list"
            out.line(f"/// {kind}, kept as its raw JSON.")
            out.line(f"{UNKNOWN}(RawJson),")
    out.line()
    if u.strategy == "tagged":
        emit_tagged(e, u)
        emit_variant_conversions(e, u)
    elif u.strategy == "keyed":
        emit_keyed(e, u)
    else:
        emit_untagged(e, u)


def emit_variant_conversions(e: Emitter, u: Union) -> None:
    """`From` each variant's object into the union (`ToolCall` into `SessionUpdate`),
    where no other variant carries the same type: building a union value is then
    `value.into()`, generated for every union rather than written for a few."""
    payloads = [e.rtype(v.payload) for v in u.variants if isinstance(v.payload, NamedRef)]
    for v in u.variants:
        if not isinstance(v.payload, NamedRef) or not isinstance(e.resolve(v.payload), Struct):
            continue
        t = e.rtype(v.payload)
        if payloads.count(t) == 1:
            ident = variant_ident(v.name)
            out = e.out
            out.line(f"impl From<{t}> for {u.name} {{ fn from(v: {t}) -> Self {{ Self::{ident}(v) }} }}")
    e.out.line()


def emit_keyed(e: Emitter, u: Union) -> None:
    """A protobuf oneof: an object with exactly one of the member keys."""
    out = e.out
    n = u.name
    keys = {v.name: rstr(given(v.tag, f"{n}.{v.name}: member key")) for v in u.variants}
    with out.block(f"impl {n} {{"):
        out.line("/// The member key this choice is written under.")
        with out.block("pub fn key(&self) -> &'static str {"), out.block("match self {"):
            for v in u.variants:
                out.line(f"Self::{v.name}(_) => {keys[v.name]},")
    out.line()
    with out.block(f"impl SerializeFields for {n} {{"):
        with out.block("fn serialize_fields<M: SerializeMap>(&self, m: &mut M, _skip: &[&str]) -> Result<(), M::Error> {"):
            with out.block("match self {"):
                for v in u.variants:
                    out.line(f"Self::{v.name}(v) => m.serialize_entry({keys[v.name]}, v),")
    out.line()
    e.emit_serialize_via_fields(n, size="Some(1)")
    e.emit_map_visitor(n)
    with e.visit_fields_fn(n):
        out.line(f"let mut choice: Option<{n}> = None;")
        with out.block("while let Some(key) = de::key(&mut map)? {"), out.block("match key.as_str() {"):
            e.emit_oneof_arms(n, e.keyed_members(n), "choice")
            out.line("_ => de::skip(&mut map)?,")
        expected = rstr(", ".join(json.dumps(v.tag) for v in u.variants))
        out.line(f"match choice {{ Some(v) => Ok(v), None => Err(de::missing_one_of::<A::Error>({expected})) }}")


def emit_tagged(e: Emitter, u: Union) -> None:
    out = e.out
    n = u.name
    tag = rstr(u.tag_field or "")
    with out.block(f"impl SerializeFields for {n} {{"):
        with out.block("fn serialize_fields<M: SerializeMap>(&self, m: &mut M, skip: &[&str]) -> Result<(), M::Error> {"):
            with out.block("match self {"):
                for v in u.variants:
                    ident = variant_ident(v.name)
                    entry = f"m.serialize_entry({tag}, {rstr(v.tag)})?; " if v.tag is not None else ""
                    if v.payload is None:
                        out.line(f"Self::{ident} => {{ {entry}}}")
                    elif e.is_fields_type(v.payload):
                        out.line(f"Self::{ident}(v) => {{ {entry}v.serialize_fields(m, skip)?; }}")
                    else:
                        raise ValueError(f"{n}.{v.name}: payload cannot be flattened")
                out.line(f"Self::{UNKNOWN}(raw) => raw.serialize_fields(m, skip)?,")
            out.line("Ok(())")
    out.line()
    e.emit_serialize_via_fields(n, unknown=UNKNOWN)
    # Deserialisation: one pass; members before the tag are buffered as raw slices.
    e.emit_map_visitor(n)
    with e.visit_fields_fn(n):
        out.line(f"let (tag, mut buffered) = de::read_until_tag(&mut map, {tag})?;")
        out.line("let live = if tag.is_some() { Some(map) } else { None };")
        with out.block("Ok(match tag.as_ref().map(|t| t.as_str()) {", "})"):
            default: Variant | None = None
            for v in u.variants:
                if v.tag is None:
                    default = v
                    continue
                out.line(f"Some({rstr(v.tag)}) => {variant_visit(e, v, tag)},")
            if default is not None:
                out.line(f"None => {variant_visit(e, default, tag)},")
            else:
                out.line(f"None => return Err(de::missing::<A::Error>({tag})),")
            with out.block("Some(other) => {"):
                out.line("let at = buffered.len();")
                out.line("if let Some(live) = live { de::drain(live, &mut buffered)?; }")
                out.line(f"let raw = de::rebuild(Some((at, {tag}, other)), &buffered);")
                if default is not None and default.payload is not None and u.unknown_to_default:
                    dt, conv = e.dtype(default.payload)
                    ident = variant_ident(default.name)
                    out.line(f"if let Some(v) = de::try_variant::<{dt}>(raw.as_raw()) {{ return Ok(Self::{ident}(v{conv})); }}")
                if u.on_unknown == "keep-warn":
                    out.line(f"de::warn_unknown({rstr(n)}, other);")
                out.line(f"Self::{UNKNOWN}(raw)")


def visit_fields_type(e: Emitter, t: TypeRef | None) -> str | None:
    """The type whose `visit_fields` can decode a variant body, if it has one."""
    if not isinstance(t, NamedRef):
        return None
    name = t.name
    while isinstance(alias := e.decls.get(name), Alias):
        if not isinstance(alias.target, NamedRef):
            return None
        name = alias.target.name
    d = e.decls.get(name)
    if isinstance(d, Struct) and d.flatten is None:
        return name
    if isinstance(d, Union) and d.strategy == "tagged":
        return name
    return None


def variant_visit(e: Emitter, v: Variant, tag: str) -> str:
    """The expression that decodes the variant `v` once its tag (or its absence) is known."""
    ident = variant_ident(v.name)
    rest = "de::Replay::new(buffered, live)"
    if v.payload is None:
        return f"{{ de::drain({rest}, &mut Vec::new())?; Self::{ident} }}"
    direct = visit_fields_type(e, v.payload)
    if direct is not None:
        return f"Self::{ident}({direct}::visit_fields({rest})?)"
    # Bodies that need their raw bytes (flattened or untagged): rebuild them.
    dt, conv = e.dtype(v.payload)
    tag_arg = f"Some((at, {tag}, {rstr(v.tag)}))" if v.tag is not None else "None"
    return (
        f"{{ let at = buffered.len(); if let Some(live) = live {{ de::drain(live, &mut buffered)?; }} "
        f"let raw = de::rebuild({tag_arg}, &buffered); "
        f"Self::{ident}(de::from_raw::<{dt}, A::Error>(raw.as_raw())?{conv}) }}"
    )


def emit_untagged(e: Emitter, u: Union) -> None:
    out = e.out
    if all(e.is_fields_type(v.payload) for v in u.variants):
        with out.block(f"impl SerializeFields for {u.name} {{"):
            with out.block("fn serialize_fields<M: SerializeMap>(&self, m: &mut M, skip: &[&str]) -> Result<(), M::Error> {"):
                with out.block("match self {"):
                    for v in u.variants:
                        out.line(f"Self::{variant_ident(v.name)}(v) => v.serialize_fields(m, skip),")
        out.line()
    with out.block(f"impl Serialize for {u.name} {{"):
        with out.block("fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {"), out.block("match self {"):
            for v in u.variants:
                out.line(f"Self::{variant_ident(v.name)}(v) => v.serialize(s),")
    out.line()
    with out.block(f"impl<'de> Deserialize<'de> for {u.name} {{"):
        with out.block("fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {"):
            out.line("let raw = <&'de RawValue>::deserialize(d)?;")
            described = []
            for v in u.variants:
                if v.payload is None:
                    raise ValueError(f"{u.name}.{v.name}: an untagged variant needs a payload")
                dt, conv = e.dtype(v.payload)
                described.append(describe(v.payload))
                out.line(f"if let Some(v) = de::try_variant::<{dt}>(raw) {{ return Ok(Self::{variant_ident(v.name)}(v{conv})); }}")
            expected = "one of " + ", ".join(described) if len(described) > 1 else described[0]
            out.line(f"Err(de::no_variant::<D::Error>({rstr(expected)}, raw))")
    out.line()
    # A union without a tag records its own failure (`no_variant`): it reads any value.
    out.line(f"agentproto_codec::wants!({u.name}, Any);")


def describe(t: TypeRef) -> str:
    """A type as a decode error's `expected` names it."""
    if isinstance(t, NamedRef):
        return t.name
    if isinstance(t, ArrayRef):
        return f"an array of {describe(t.item)}"
    if isinstance(t, PrimRef):
        return prim_phrase(t.prim)
    return "a JSON value"
