"""Emit Rust from the model: types, hand-rolled serde impls, the method table.

The generated impls decode in one pass over the input with serde_json's streaming
deserializer.  Object fields are matched by key; unions capture their value as a
borrowed raw slice, read the tag, then decode the one variant it names (no trial
decoding of every variant).  Only unions without any tag try their few variants in
order.  All bookkeeping (JSON paths, warnings) goes through `agentproto_codec`.

This module holds the type helpers, aliases, structs and enums; ``rust_unions``
writes the unions and ``rust_roles`` the method table and the role glue.  rustfmt
formats the output afterwards; the writer's blocks indent it the way rustfmt would
anyway, so the raw output reads the same.

Doc comments keep the descriptions' own line breaks (no width): ACP's descriptions
come from Rust doc comments already broken under 100 columns, so re-flowing them would
only churn the generated files.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import names, rust_roles, rust_rules, rust_unions
from .emit import DocStyle, Writer, doc_comment, given, rust_str
from .model import Alias, ArrayRef, Decl, Enum, Field, JsonRef, MapRef, Method, NamedRef, PrimRef, Spec, Struct, TypeRef, Union
from .model import resolve
from .names import camel
from .rust_unions import UNKNOWN

# Definitions owned by the JSON-RPC layer (see acp.RUNTIME_TYPES).
RUNTIME = {
    "RequestId": "crate::RequestId",
    "Error": "agentproto_jsonrpc::ErrorObject",
    "ErrorCode": "agentproto_jsonrpc::ErrorCode",
}

PRIMS = {
    "string": "String",
    # A2A's shared content text (crate::Text, an `Arc<str>`).
    "text": "Text",
    "bool": "bool",
    "i16": "i16",
    "i32": "i32",
    "i64": "i64",
    "u16": "u16",
    "u32": "u32",
    "u64": "u64",
    "f64": "f64",
    # Runtime types of the protocol crate (A2A's ProtoJSON `bytes` and `Timestamp`).
    "bytes": "Bytes",
    "timestamp": "Timestamp",
}

# What every generated `visit_fields` is preceded by.
VISIT_FIELDS_DOC = "/// Decodes the members of an object whose opening brace was already read."


def rules_sha(s: Spec) -> str:
    """The sha256 of the rules file the model was built with."""
    for src in s.sources:
        if src["file"].startswith("rules/"):
            return src["sha256"]
    raise ValueError(f"{s.protocol} {s.version}: the model names no rules file among its sources")


def snake(name: str) -> str:
    """A field, oneof or handler name: ``sessionId`` -> ``session_id``, ``type`` ->
    ``r#type``, ``_meta`` -> ``meta``."""
    return names.rust_ident(names.snake(name.lstrip("_") or "meta"))


def doc_lines(doc: str, indent: str = "") -> list[str]:
    """The first paragraph of a description, as `///` lines (its own line breaks kept)."""
    return [indent + line for line in doc_comment(doc, DocStyle.RUST)]


def rstr(s: str) -> str:
    """A Rust string literal (``emit.rust_str``)."""
    return rust_str(s)


# The most fields a public generated constructor takes by position.
MAX_POSITIONAL = 4


class Emitter:
    """One generated Rust module: `emit()` writes the header, every declaration in
    the model's order, then the method table (`emit_methods`, which the A2A emitter
    replaces with its operation table)."""

    def __init__(self, spec: Spec, shared: dict[str, str] | None = None):
        self.spec = spec
        self.decls = spec.decls
        self.out = Writer()
        # Declarations written in another surface's module (name -> that module), which
        # this one re-exports instead of writing again (see `sharing.py`).
        self.shared = shared or {}

    # -- helpers ------------------------------------------------------------

    def w(self, line: str = "") -> None:
        """Appends one line as given (the A2A emitter writes its lines pre-indented)."""
        self.out.line(line)

    def resolve(self, t: TypeRef) -> Decl | None:
        """The declaration a reference ends at, following aliases."""
        return resolve(self.decls, t)

    def rtype(self, t: TypeRef) -> str:
        if isinstance(t, PrimRef):
            return PRIMS[t.prim]
        if isinstance(t, NamedRef):
            return RUNTIME.get(t.name, t.name)
        if isinstance(t, ArrayRef):
            return f"Vec<{self.rtype(t.item)}>"
        if isinstance(t, MapRef):
            return f"OrderedMap<{self.rtype(t.value)}>"
        if isinstance(t, JsonRef):
            return "RawObject" if t.object_only else "RawJson"
        raise TypeError(t)

    def dtype(self, t: TypeRef) -> tuple[str, str]:
        """The type to decode with and the conversion suffix to the field's type."""
        if isinstance(t, ArrayRef):
            return f"de::List<{self.rtype(t.item)}>", ".0"
        return self.rtype(t), ""

    @staticmethod
    def field_name(wire: str) -> str:
        """The Rust name of a field (``snake``)."""
        return snake(wire)

    def field_type(self, f: Field) -> str:
        t = self.rtype(f.type)
        if f.has_default or (f.required and not f.nullable):
            return t
        if f.required and f.nullable:
            return f"Option<{t}>"
        if f.nullable:
            return f"MaybeUndefined<{t}>"
        return f"Option<{t}>"

    def is_fields_type(self, t: TypeRef | None) -> bool:
        """Whether a variant payload can be flattened into an enclosing object."""
        if t is None:
            return True
        d = self.resolve(t)
        if isinstance(d, Struct):
            return True
        if isinstance(d, Union):
            return d.strategy == "tagged" or all(self.is_fields_type(v.payload) for v in d.variants)
        return isinstance(t, JsonRef)

    def default_expr(self, t: TypeRef, value: Any, where: str) -> str:
        if isinstance(t, PrimRef):
            if t.prim == "string":
                return f"String::from({rstr(value)})"
            if t.prim == "bool":
                return "true" if value else "false"
            if t.prim == "f64":
                return repr(float(value))
            return str(int(value))
        if isinstance(t, ArrayRef):
            if value != []:
                raise ValueError(f"{where}: non-empty array default")
            return "Vec::new()"
        if isinstance(t, MapRef):
            if value != {}:
                raise ValueError(f"{where}: non-empty map default")
            return "OrderedMap::default()"
        if isinstance(t, NamedRef):
            d = self.decls.get(t.name)
            if isinstance(d, Alias):
                if isinstance(d.target, PrimRef) and d.target.prim == "string":
                    return f"{t.name}(String::from({rstr(value)}))"
                return self.default_expr(d.target, value, where)
            if isinstance(d, Enum):
                if value not in d.values:
                    raise ValueError(f"{where}: default {value!r} not in {d.name}")
                return f"{d.name}::{self.enum_variant(d, value)}"
            if isinstance(d, Struct):
                self.check_struct_default(d, value, where)
                return f"{d.name}::default()"
        raise ValueError(f"{where}: unsupported default {value!r} for {t}")

    def check_struct_default(self, d: Struct, value: Any, where: str) -> None:
        """An object default must be exactly what `Default::default()` produces."""
        if not isinstance(value, dict):
            raise ValueError(f"{where}: object default expected")
        with_default = {f.wire: f for f in d.fields if f.has_default}
        if set(value) != set(with_default):
            raise ValueError(f"{where}: default keys {sorted(value)} != {sorted(with_default)}")
        for k, v in value.items():
            f = with_default[k]
            inner = self.resolve(f.type)
            if isinstance(inner, Struct):
                self.check_struct_default(inner, v, f"{where}.{k}")
            elif v != f.default:
                raise ValueError(f"{where}.{k}: default {v!r} != {f.default!r}")

    def defaultable(self, d: Struct) -> bool:
        return d.flatten is None and not d.oneofs and all(f.has_default or not f.required for f in d.fields)

    def initial_expr(self, f: Field, where: str) -> str:
        """What a field holds when nobody gave it a value: its default, or absent."""
        if f.has_default:
            return self.default_expr(f.type, f.default, where)
        return "MaybeUndefined::Undefined" if f.nullable else "None"

    def enum_variant(self, d: Enum, value: str) -> str:
        if d.strip_prefix and value.startswith(d.strip_prefix):
            value = value[len(d.strip_prefix) :].lower()
        name = camel(value)
        return name + "Value" if d.open and name == UNKNOWN else name

    def keyed_members(self, name: str) -> list[tuple[str, list[str], str, TypeRef | None]]:
        """(key, other accepted keys, variant, payload) of each member of a keyed union."""
        u = self.decls[name]
        assert isinstance(u, Union) and u.strategy == "keyed"
        return [(v.tag or "", [u.aliases[v.tag]] if v.tag in u.aliases else [], v.name, v.payload) for v in u.variants]

    # -- shared impl shapes ---------------------------------------------------

    @contextmanager
    def visit_fields_fn(self, n: str) -> Iterator[None]:
        """The body of `n::visit_fields`, which reads an object's members after its `{`."""
        out = self.out
        with out.block(f"impl {n} {{"):
            out.line(VISIT_FIELDS_DOC)
            out.line("#[doc(hidden)]")
            with out.block("pub fn visit_fields<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {"):
                yield

    def emit_map_visitor(self, n: str) -> None:
        """`Deserialize` for a type that has `visit_fields`: open the object, delegate."""
        self.out.line(f"agentproto_codec::deserialize_via_fields!({n});")
        self.out.line()

    def emit_serialize_via_fields(self, n: str, size: str | None = None, unknown: str | None = None) -> None:
        """`Serialize` as a map of the type's `serialize_fields` (an `unknown` variant
        written as it came)."""
        args = [n] + ([f"size = {size}"] if size else []) + ([f"unknown = {unknown}"] if unknown else [])
        self.out.line(f"agentproto_codec::serialize_via_fields!({', '.join(args)});")
        self.out.line()

    def emit_oneof_arms(self, type_name: str, members: list[tuple[str, list[str], str, TypeRef | None]], var: str) -> None:
        """Match arms that read one member of a oneof into `var` (refusing a second one)."""
        out = self.out
        for wire, aliases, ident, payload in members:
            assert payload is not None
            keys = " | ".join(rstr(k) for k in [wire, *aliases])
            dt, conv = self.dtype(payload)
            with out.block(f"{keys} => {{"):
                out.line(f"if let Some(prev) = &{var} {{ return Err(de::one_of_twice::<A::Error>(prev.key(), {rstr(wire)})); }}")
                out.line(f"{var} = Some({type_name}::{ident}(de::field::<A, {dt}>(&mut map, {rstr(wire)})?{conv}));")

    # -- declarations ---------------------------------------------------------

    def emit(self) -> str:
        self.emit_header()
        self.emit_shared()
        for d in self.decls.values():
            if d.name in self.shared:
                continue
            if isinstance(d, Struct):
                self.emit_struct(d)
            elif isinstance(d, Union):
                rust_unions.emit_union(self, d)
            elif isinstance(d, Enum):
                self.emit_enum(d)
            elif isinstance(d, Alias):
                self.emit_alias(d)
            self.out.line()
        self.emit_shortcuts()
        self.emit_methods()
        return self.out.text()

    def emit_shortcuts(self) -> None:
        """The hand-written conveniences of `crates/acp/src/shortcuts.rs` for the types this
        module writes itself (a shared type has them from its owner's module)."""
        if self.spec.protocol != "acp":
            return
        wanted = dict(SHORTCUTS)
        if self.spec.wire_version == 1:
            wanted.update(V1_SHORTCUTS)
        calls = [m for name, m in wanted.items() if name in self.decls and name not in self.shared]
        for macro in calls:
            self.out.line(f"crate::shortcuts::{macro}!();")
        if calls:
            self.out.line()

    def emit_header(self) -> None:
        s = self.spec
        self.out.lines(
            [
                f"// @generated by `make codegen` from spec/{s.source_file} and rules/acp.toml",
                f"// sha256 {s.source_sha256} (schema), {rules_sha(s)} (rules). Do not edit: change codegen/ and regenerate.",
                f"//! ACP {s.version} ({s.surface}) types, codecs and method table, generated from the pinned schema.",
                "#![allow(clippy::all, clippy::pedantic, missing_docs, unreachable_pub, rustdoc::all, unused_imports, unused_mut, unused_variables)]",
                "",
                "use agentproto_codec::{de, Decoded, SerializeFields};",
                "pub use agentproto_codec::{MaybeUndefined, RawJson, RawObject};",
                "use agentproto_codec::de::OrderedMap;",
                "use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};",
                "use serde::ser::{Serialize, SerializeMap, Serializer};",
                "use serde_json::value::RawValue;",
                "use std::fmt;",
                "",
                "/// The wire `protocolVersion` of this surface.",
                f"pub const PROTOCOL_VERSION: u16 = {s.wire_version};",
                "",
                *rust_rules.surface_rules(s),
                "",
            ]
        )

    def emit_shared(self) -> None:
        """`pub use` of the declarations another surface's module writes: the same types,
        so a value of one surface is a value of the other where their schemas agree."""
        by_module: dict[str, list[str]] = {}
        for name, module in self.shared.items():
            by_module.setdefault(module, []).append(name)
        for module, names in sorted(by_module.items()):
            self.out.line(f"/// The declarations this surface shares with `{module}` (the same shape in both).")
            self.out.line(f"pub use crate::{module}::{{{', '.join(sorted(names))}}};")
        if by_module:
            self.out.line()

    def emit_methods(self) -> None:
        rust_roles.emit_methods(self)

    def emit_alias(self, d: Alias) -> None:
        out = self.out
        out.doc(d.doc, DocStyle.RUST)
        if not (isinstance(d.target, PrimRef) and d.target.prim == "string"):
            out.line(f"pub type {d.name} = {self.rtype(d.target)};")
            return
        # A string alias is a newtype, so that a session id is not any string.
        n = d.name
        out.line("#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]")
        out.line("#[serde(transparent)]")
        out.line(f"pub struct {n}(pub String);")
        out.line(f"impl {n} {{ /** The text. */ pub fn as_str(&self) -> &str {{ &self.0 }} }}")
        out.line(f"impl From<&str> for {n} {{ fn from(s: &str) -> Self {{ Self(s.to_owned()) }} }}")
        out.line(f"impl From<String> for {n} {{ fn from(s: String) -> Self {{ Self(s) }} }}")
        out.line(f"impl AsRef<str> for {n} {{ fn as_ref(&self) -> &str {{ &self.0 }} }}")
        out.line(f"impl fmt::Display for {n} {{ fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{ f.write_str(&self.0) }} }}")
        out.line(f"agentproto_codec::wants!({n}, String);")

    # -- structs --------------------------------------------------------------

    def emit_struct(self, d: Struct) -> None:
        if len(d.fields) > 64:
            raise ValueError(f"{d.name}: more than 64 fields")  # the `seen` bit set is a u64
        out = self.out
        out.doc(d.doc, DocStyle.RUST)
        out.line("#[derive(Debug, Clone, PartialEq)]")
        with out.block(f"pub struct {d.name} {{"):
            for f in d.fields:
                if f.has_default and f.nullable:
                    raise ValueError(f"{d.name}.{f.wire}: nullable field with a default")
                out.doc(f.doc, DocStyle.RUST)
                out.line(f"pub {snake(f.wire)}: {self.field_type(f)},")
            if d.flatten:
                out.line("/// The variant part of this object.")
                out.line(f"pub variant: {d.flatten},")
            for o in d.oneofs:
                out.doc(o.doc or f"The `{o.name}` oneof: which of its members is present.", DocStyle.RUST)
                out.line(f"pub {snake(o.name)}: {o.type_name},")
        out.line()
        if self.defaultable(d):
            with out.block(f"impl Default for {d.name} {{"), out.block("fn default() -> Self {"), out.block("Self {"):
                for f in d.fields:
                    out.line(f"{snake(f.wire)}: {self.initial_expr(f, f'{d.name}.{f.wire}')},")
            out.line()
        elif d.flatten is None:
            self.emit_constructor(d)
        self.emit_struct_ser(d)
        self.emit_struct_de(d)

    def emit_constructor(self, d: Struct) -> None:
        """`new(required fields…)`; every optional field starts absent or at its default."""
        out = self.out
        required = [f for f in d.fields if f.required and not f.has_default]
        args = ", ".join(
            [f"{snake(f.wire)}: impl Into<{self.field_type(f)}>" for f in required]
            + [f"{snake(o.name)}: {o.type_name}" for o in d.oneofs]
        )
        # A long positional list is no public API (a caller cannot tell the arguments
        # apart): past MAX_POSITIONAL the constructor stays inside the crate, whose public
        # way to build the type is a builder written beside it (e.g. `AgentCard::builder`).
        public = len(required) + len(d.oneofs) <= MAX_POSITIONAL
        with out.block(f"impl {d.name} {{"):
            out.line(f"/// A `{d.name}` from its required fields; the others are absent or at their defaults.")
            if not public:
                out.line(f"/// Crate-internal: more than {MAX_POSITIONAL} positional fields; the crate offers a builder.")
                out.line("#[allow(dead_code)]")
            vis = "pub" if public else "pub(crate)"
            with out.block(f"{vis} fn new({args}) -> Self {{"), out.block("Self {"):
                for f in d.fields:
                    name = snake(f.wire)
                    if f.required and not f.has_default:
                        out.line(f"{name}: {name}.into(),")
                    else:
                        out.line(f"{name}: {self.initial_expr(f, f'{d.name}.{f.wire}')},")
                for o in d.oneofs:
                    out.line(f"{snake(o.name)},")
        out.line()

    def emit_struct_ser(self, d: Struct) -> None:
        out = self.out
        with out.block(f"impl SerializeFields for {d.name} {{"):
            with out.block("fn serialize_fields<M: SerializeMap>(&self, m: &mut M, skip: &[&str]) -> Result<(), M::Error> {"):
                for f in d.fields:
                    name = snake(f.wire)
                    key = rstr(f.wire)
                    ft = self.field_type(f)
                    if ft.startswith("MaybeUndefined<"):
                        with out.block(f"match &self.{name} {{"):
                            out.line("MaybeUndefined::Undefined => {}")
                            out.line(f"MaybeUndefined::Null => m.serialize_entry({key}, &())?,")
                            out.line(f"MaybeUndefined::Value(v) => m.serialize_entry({key}, v)?,")
                    elif ft.startswith("Option<") and not f.required:
                        out.line(f"if let Some(v) = &self.{name} {{ m.serialize_entry({key}, v)?; }}")
                    elif f.omit_default:
                        out.line(f"if {self.non_default(f, 'self.' + name)} {{ m.serialize_entry({key}, &self.{name})?; }}")
                    else:
                        out.line(f"m.serialize_entry({key}, &self.{name})?;")
                if d.flatten:
                    # The variant must not write the keys this object already wrote.
                    keys = ", ".join(rstr(f.wire) for f in d.fields)
                    out.line(f"let own: &[&str] = &[{keys}];")
                    out.line("let skip: Vec<&str> = own.iter().chain(skip.iter()).copied().collect();")
                    out.line("self.variant.serialize_fields(m, &skip)?;")
                for o in d.oneofs:
                    out.line(f"self.{snake(o.name)}.serialize_fields(m, &[])?;")
                out.line("Ok(())")
        out.line()
        self.emit_serialize_via_fields(d.name)

    def non_default(self, f: Field, expr: str) -> str:
        """A Rust condition that holds when a field differs from its (zero) default."""
        if isinstance(f.type, (ArrayRef, MapRef)) or (isinstance(f.type, PrimRef) and f.type.prim == "string"):
            return f"!{expr}.is_empty()"
        if isinstance(f.type, PrimRef) and f.type.prim == "bool":
            return expr
        if isinstance(f.type, PrimRef):
            return f"{expr} != 0"
        raise ValueError(f"{f.wire}: omit_default on {f.type}")

    def emit_struct_de(self, d: Struct) -> None:
        if d.flatten:
            self.emit_flatten_de(d)
            return
        self.emit_map_visitor(d.name)
        with self.visit_fields_fn(d.name):
            self.emit_fields_loop(d)
            members = [snake(f.wire) for f in d.fields] + [snake(o.name) for o in d.oneofs]
            self.out.line(f"Ok({d.name} {{ {', '.join(members)} }})")

    def emit_flatten_de(self, d: Struct) -> None:
        """An object with a union flattened into it: its members are read twice, once
        for the common fields and once for the variant (both from the same raw slice)."""
        out = self.out
        n = d.name
        with out.block(f"impl<'de> Deserialize<'de> for {n} {{"):
            with out.block("fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {"):
                out.line("struct V<'de> { raw: &'de RawValue }")
                with out.block("impl<'de> Visitor<'de> for V<'de> {"):
                    out.line(f"type Value = {n};")
                    out.line(f'fn expecting(&self, f: &mut fmt::Formatter<\'_>) -> fmt::Result {{ f.write_str("an object ({n})") }}')
                    with out.block(f"fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<{n}, A::Error> {{"):
                        self.emit_fields_loop(d)
                        out.line(f"let variant = de::from_raw::<{d.flatten}, A::Error>(self.raw)?;")
                        members = [snake(f.wire) for f in d.fields] + ["variant"]
                        out.line(f"Ok({n} {{ {', '.join(members)} }})")
                out.line("let raw = <&'de RawValue>::deserialize(d)?;")
                out.line("let mut inner = serde_json::Deserializer::from_str(raw.get());")
                out.line("inner.deserialize_map(V { raw }).map_err(D::Error::custom)")
        out.line()
        out.line(f"agentproto_codec::wants!({n}, Named);")

    def emit_fields_loop(self, d: Struct) -> None:
        """Reads the members of `d` into `f_<field>` / `o_<oneof>` slots, one pass, then
        binds each field (defaults, missing-field errors, constraints)."""
        out = self.out
        for f in d.fields:
            out.line(f"let mut {self.slot(f)}: Option<{self.present_type(f)}> = None;")
        for o in d.oneofs:
            out.line(f"let mut o_{snake(o.name)}: Option<{o.type_name}> = None;")
        out.line("let mut seen = 0u64;")
        with out.block("while let Some(key) = de::key(&mut map)? {"), out.block("match key.as_str() {"):
            for o in d.oneofs:
                self.emit_oneof_arms(o.type_name, self.keyed_members(o.type_name), "o_" + snake(o.name))
            for i, f in enumerate(d.fields):
                keys = " | ".join(rstr(k) for k in [f.wire, *f.aliases])
                with out.block(f"{keys} => {{"):
                    out.line(f"de::seen::<A::Error>(&mut seen, {i}, {rstr(f.wire)})?;")
                    out.lines(self.decode_field(f))
            out.line("_ => de::skip(&mut map)?,")
        for f in d.fields:
            out.line(f"let {snake(f.wire)} = {self.assemble(f)};")
            out.lines(self.constraints(f))
        for o in d.oneofs:
            keys = rstr(", ".join(f'"{m.wire}"' for m in o.members))
            out.line(f"let {snake(o.name)} = match o_{snake(o.name)} {{ Some(v) => v, None => return Err(de::missing_one_of::<A::Error>({keys})) }};")

    def slot(self, f: Field) -> str:
        """The variable a field's value is read into (`r#type` becomes `f_type`)."""
        return "f_" + snake(f.wire).removeprefix("r#")

    def present_type(self, f: Field) -> str:
        """What a field's variable holds once its key was seen."""
        t = self.rtype(f.type)
        return f"Option<{t}>" if f.nullable else t

    def decode_field(self, f: Field) -> list[str]:
        var = self.slot(f)
        key = rstr(f.wire)
        if f.skip_invalid_items:
            if not isinstance(f.type, ArrayRef):
                raise ValueError(f"{f.wire}: skip-invalid-items on a non-array")
            item = self.rtype(f.type.item)
            nullable = "true" if f.nullable else "false"
            lenient = "true" if f.lenient else "false"
            lines = [f"let r = de::field_items::<A, {item}>(&mut map, {key}, {nullable}, {lenient})?;"]
            if f.nullable:
                lines.append(f"if let Some(v) = r {{ {var} = Some(v); }}")
            elif f.required:
                # A required array dropped as a whole falls back to empty.
                lines.append(f"{var} = Some(r.and_then(|v| v).unwrap_or_default());")
            else:
                lines.append(f"if let Some(Some(v)) = r {{ {var} = Some(v); }}")
            return lines
        dt, conv = self.dtype(f.type)
        if f.nullable:
            dt = f"Option<{dt}>"
            conv = ".map(|v| v.0)" if conv else ""
        if f.default_on_null and not f.nullable and not f.lenient:
            # `null` reads as absent; a required member falls back to its empty value.
            fallback = f" else {{ {var} = Some(Default::default()); }}" if f.required else ""
            return [f"if let Some(v) = de::field_default_on_null::<A, {dt}>(&mut map, {key})? {{ {var} = Some(v{conv}); }}{fallback}"]
        if f.lenient:
            if f.required and not f.has_default:
                raise ValueError(f"{f.wire}: lenient required field without skip-invalid-items")
            return [f"if let Some(v) = de::field_lenient::<A, {dt}>(&mut map, {key})? {{ {var} = Some(v{conv}); }}"]
        return [f"{var} = Some(de::field::<A, {dt}>(&mut map, {key})?{conv});"]

    def constraints(self, f: Field) -> list[str]:
        """Checks of `minLength` / `minItems` on the assembled field value."""
        checks = []
        name = snake(f.wire)
        for bound, helper in ((f.min_length, "min_length"), (f.min_items, "min_items")):
            if bound is None:
                continue
            value = "v" if not (f.has_default or (f.required and not f.nullable)) else f"&{name}"
            call = f"de::{helper}::<{'_, ' if helper == 'min_items' else ''}A::Error>({value}, {bound}, {rstr(f.wire)})?;"
            if value == "v":
                getter = f"{name}.value()" if self.field_type(f).startswith("MaybeUndefined<") else f"{name}.as_ref()"
                checks.append(f"if let Some(v) = {getter} {{ {call} }}")
            else:
                checks.append(call)
        return checks

    def assemble(self, f: Field) -> str:
        var = self.slot(f)
        if f.has_default:
            return f"match {var} {{ Some(v) => v, None => {self.default_expr(f.type, f.default, f.wire)} }}"
        if f.required:
            return f"match {var} {{ Some(v) => v, None => return Err(de::missing::<A::Error>({rstr(f.wire)})) }}"
        if f.nullable:
            return f"MaybeUndefined::from_present({var})"
        return var

    # -- enums --------------------------------------------------------------

    def emit_enum(self, d: Enum) -> None:
        out = self.out
        out.doc(d.doc, DocStyle.RUST)
        derive = "Debug, Clone, PartialEq, Eq, Hash" + ("" if d.open else ", Copy")
        out.line(f"#[derive({derive})]")
        with out.block(f"pub enum {d.name} {{"):
            docs = d.value_docs or [""] * len(d.values)
            for value, vdoc in zip(d.values, docs):
                out.doc(vdoc, DocStyle.RUST)
                out.line(f"/// Wire value `{value}`." if not vdoc else "///")
                out.line(f"{self.enum_variant(d, value)},")
            if d.open:
                out.line("/// A value this schema does not list (an extension or a newer version).")
                out.line(f"{UNKNOWN}(String),")
        out.line()
        with out.block(f"impl {d.name} {{"):
            out.line("/// Every value this schema lists.")
            out.line(f"pub const VALUES: &'static [&'static str] = &[{', '.join(rstr(v) for v in d.values)}];")
            out.line("/// The wire value.")
            with out.block("pub fn as_str(&self) -> &str {"), out.block("match self {"):
                for value in d.values:
                    out.line(f"Self::{self.enum_variant(d, value)} => {rstr(value)},")
                if d.open:
                    out.line(f"Self::{UNKNOWN}(s) => s,")
        out.line()
        out.line(f"agentproto_codec::string_enum!({d.name});")
        out.line()
        with out.block(f"impl<'de> Deserialize<'de> for {d.name} {{"):
            with out.block("fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {"):
                out.line(f"let s = {self.enum_reader(d)};")
                with out.block("Ok(match s.as_str() {", "})"):
                    for value in d.values:
                        out.line(f"{rstr(value)} => Self::{self.enum_variant(d, value)},")
                    if d.open:
                        out.line(f"other => Self::{UNKNOWN}(other.to_owned()),")
                    else:
                        out.line("other => return Err(de::unknown_value::<D::Error>(other, Self::VALUES)),")

    def enum_reader(self, d: Enum) -> str:
        """The expression that reads an enum's wire value as a `de::Str` (its name)."""
        return "de::Str::deserialize(d)?"

    # -- method names and baseline handlers (from the rules file, via the model) ----

    def handler_name(self, m: Method) -> str:
        """The Rust name of a method's handler and of its typed call (the model's
        snake_case words, escaped where they are a Rust keyword)."""
        return snake(given(m.handler or None, f"{m.wire}: handler name (rules not applied?)"))

    def handler_required(self, m: Method) -> bool:
        """Whether the handling role must implement `m` (no default handler)."""
        return m.required


# The types `crates/acp/src/shortcuts.rs` adds conveniences to, by its macro for each:
# in every surface, and in the wire-version-1 surfaces only (their shapes differ in v2).
SHORTCUTS = {"TextContent": "text_content", "ContentBlock": "content_block", "SessionId": "session_id", "PromptRequest": "prompt_request"}
V1_SHORTCUTS = {"ContentChunk": "content_chunk_v1", "SessionUpdate": "session_update_v1"}


def emit(spec: Spec, shared: dict[str, str] | None = None) -> str:
    """A surface's module; `shared` names the declarations another module writes."""
    return Emitter(spec, shared).emit()

