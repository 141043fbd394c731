"""Emit Rust from the model: types, hand-rolled serde impls, the method table.

The generated impls decode in one pass over the input with serde_json's streaming
deserializer.  Object fields are matched by key; unions capture their value as a
borrowed raw slice, read the tag, then decode the one variant it names (no trial
decoding of every variant).  Only unions without any tag try their few variants in
order.  All bookkeeping (JSON paths, warnings) goes through `agentproto_codec`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .names import camel
from .model import (
    Alias,
    ArrayRef,
    Decl,
    Enum,
    Field,
    JsonRef,
    Oneof,
    MapRef,
    Method,
    NamedRef,
    PrimRef,
    Spec,
    Struct,
    TypeRef,
    Union,
)

RUST_KEYWORDS = {
    "type", "ref", "match", "mod", "move", "self", "super", "struct", "enum", "fn", "use", "where",
    "loop", "impl", "trait", "in", "for", "if", "else", "let", "const", "static", "crate", "as",
    "async", "await", "dyn", "box", "break", "continue", "extern", "false", "true", "pub", "return",
    "unsafe", "while", "abstract", "become", "do", "final", "macro", "override", "priv", "typeof",
    "unsized", "virtual", "yield", "try",
}

# Definitions owned by the JSON-RPC layer (see acp.RUNTIME_TYPES).
RUNTIME = {
    "RequestId": "crate::RequestId",
    "Error": "agentproto_jsonrpc::ErrorObject",
    "ErrorCode": "agentproto_jsonrpc::ErrorCode",
}

PRIMS = {
    "string": "String",
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

UNKNOWN = "Unknown"

# Handler and call names that the params-type rule would make awkward.
HANDLER_NAMES = {"session/update": "session_update"}

# The methods every peer of a role must handle (the baseline): no default handler.
REQUIRED_HANDLERS = {
    "agent": {"initialize", "session/new", "session/prompt"},
    "client": {"session/request_permission", "session/update"},
}


def snake(name: str) -> str:
    name = name.lstrip("_") or "meta"
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = re.sub(r"[^A-Za-z0-9]+", "_", s).lower().strip("_")
    if s in RUST_KEYWORDS:
        s = "r#" + s
    return s




def doc_lines(doc: str, indent: str = "") -> list[str]:
    """The first paragraph of a description, as `///` lines."""
    if not doc:
        return []
    para = doc.strip().split("\n\n")[0]
    out = []
    for line in para.splitlines():
        line = line.rstrip().replace("\t", " ")
        out.append(f"{indent}/// {line}".rstrip())
    return out


def rstr(s: str) -> str:
    return json.dumps(s)


class Emitter:
    def __init__(self, spec: Spec):
        self.spec = spec
        self.decls = spec.decls
        self.out: list[str] = []

    # -- helpers ------------------------------------------------------------

    def w(self, line: str = "") -> None:
        self.out.append(line)

    def resolve(self, t: TypeRef) -> Decl | None:
        """The declaration a reference ends at, following aliases."""
        seen = set()
        while isinstance(t, NamedRef) and t.name in self.decls:
            if t.name in seen:
                raise ValueError(f"alias cycle at {t.name}")
            seen.add(t.name)
            d = self.decls[t.name]
            if isinstance(d, Alias):
                t = d.target
                continue
            return d
        return None

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

    def enum_variant(self, d: Enum, value: str) -> str:
        if d.strip_prefix and value.startswith(d.strip_prefix):
            value = value[len(d.strip_prefix):].lower()
        name = camel(value)
        return name + "Value" if d.open and name == UNKNOWN else name

    # -- declarations ---------------------------------------------------------

    def emit(self) -> str:
        self.emit_header()
        for d in self.decls.values():
            if isinstance(d, Struct):
                self.emit_struct(d)
            elif isinstance(d, Union):
                self.emit_union(d)
            elif isinstance(d, Enum):
                self.emit_enum(d)
            elif isinstance(d, Alias):
                self.emit_alias(d)
            self.w()
        self.emit_methods()
        return "\n".join(self.out) + "\n"

    def emit_header(self) -> None:
        s = self.spec
        self.w(f"// @generated by `make codegen` from spec/{s.source_file}")
        self.w(f"// sha256 {s.source_sha256}. Do not edit: change codegen/ and regenerate.")
        self.w(f"//! ACP {s.version} ({s.surface}) types, codecs and method table, generated from the pinned schema.")
        self.w("#![allow(clippy::all, clippy::pedantic, missing_docs, unreachable_pub, rustdoc::all, unused_mut, unused_variables)]")
        self.w()
        self.w("use agentproto_codec::{de, Decoded, SerializeFields};")
        self.w("pub use agentproto_codec::{MaybeUndefined, RawJson, RawObject};")
        self.w("use agentproto_codec::de::OrderedMap;")
        self.w("use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, Visitor};")
        self.w("use serde::ser::{Serialize, SerializeMap, Serializer};")
        self.w("use serde_json::value::RawValue;")
        self.w("use std::fmt;")
        self.w()
        self.w(f"/// The wire `protocolVersion` of this surface.")
        self.w(f"pub const PROTOCOL_VERSION: u16 = {s.wire_version};")
        self.w()

    def emit_alias(self, d: Alias) -> None:
        for line in doc_lines(d.doc):
            self.w(line)
        if isinstance(d.target, PrimRef) and d.target.prim == "string":
            n = d.name
            self.w("#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]")
            self.w("#[serde(transparent)]")
            self.w(f"pub struct {n}(pub String);")
            self.w(f"impl {n} {{ /** The text. */ pub fn as_str(&self) -> &str {{ &self.0 }} }}")
            self.w(f"impl From<&str> for {n} {{ fn from(s: &str) -> Self {{ Self(s.to_owned()) }} }}")
            self.w(f"impl From<String> for {n} {{ fn from(s: String) -> Self {{ Self(s) }} }}")
            self.w(f"impl AsRef<str> for {n} {{ fn as_ref(&self) -> &str {{ &self.0 }} }}")
            self.w(f"impl fmt::Display for {n} {{ fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{ f.write_str(&self.0) }} }}")
        else:
            self.w(f"pub type {d.name} = {self.rtype(d.target)};")

    def emit_struct(self, d: Struct) -> None:
        if len(d.fields) > 64:
            raise ValueError(f"{d.name}: more than 64 fields")
        for line in doc_lines(d.doc):
            self.w(line)
        self.w("#[derive(Debug, Clone, PartialEq)]")
        self.w(f"pub struct {d.name} {{")
        for f in d.fields:
            if f.has_default and f.nullable:
                raise ValueError(f"{d.name}.{f.wire}: nullable field with a default")
            for line in doc_lines(f.doc, "    "):
                self.w(line)
            self.w(f"    pub {snake(f.wire)}: {self.field_type(f)},")
        if d.flatten:
            self.w(f"    /// The variant part of this object.")
            self.w(f"    pub variant: {d.flatten},")
        for o in d.oneofs:
            for line in doc_lines(o.doc or f"The `{o.name}` oneof: which of its members is present.", "    "):
                self.w(line)
            self.w(f"    pub {snake(o.name)}: {o.type_name},")
        self.w("}")
        self.w()
        if self.defaultable(d):
            self.w(f"impl Default for {d.name} {{")
            self.w("    fn default() -> Self {")
            self.w("        Self {")
            for f in d.fields:
                if f.has_default:
                    expr = self.default_expr(f.type, f.default, f"{d.name}.{f.wire}")
                elif f.nullable:
                    expr = "MaybeUndefined::Undefined"
                else:
                    expr = "None"
                self.w(f"            {snake(f.wire)}: {expr},")
            self.w("        }")
            self.w("    }")
            self.w("}")
            self.w()
        elif d.flatten is None:
            self.emit_constructor(d)
        self.emit_struct_ser(d)
        self.emit_struct_de(d)

    def emit_constructor(self, d: Struct) -> None:
        """`new(required fields…)`; every optional field starts absent or at its default."""
        required = [f for f in d.fields if f.required and not f.has_default]
        args = ", ".join(
            [f"{snake(f.wire)}: impl Into<{self.field_type(f)}>" for f in required]
            + [f"{snake(o.name)}: {o.type_name}" for o in d.oneofs]
        )
        self.w(f"impl {d.name} {{")
        self.w(f"    /// A `{d.name}` from its required fields; the others are absent or at their defaults.")
        self.w(f"    pub fn new({args}) -> Self {{")
        self.w("        Self {")
        for f in d.fields:
            name = snake(f.wire)
            if f.required and not f.has_default:
                expr = f"{name}.into()"
            elif f.has_default:
                expr = self.default_expr(f.type, f.default, f"{d.name}.{f.wire}")
            elif f.nullable:
                expr = "MaybeUndefined::Undefined"
            else:
                expr = "None"
            self.w(f"            {name}: {expr},")
        for o in d.oneofs:
            self.w(f"            {snake(o.name)},")
        self.w("        }")
        self.w("    }")
        self.w("}")
        self.w()

    def emit_struct_ser(self, d: Struct) -> None:
        self.w(f"impl SerializeFields for {d.name} {{")
        self.w("    fn serialize_fields<M: SerializeMap>(&self, m: &mut M, skip: &[&str]) -> Result<(), M::Error> {")
        for f in d.fields:
            name = snake(f.wire)
            key = rstr(f.wire)
            ft = self.field_type(f)
            if ft.startswith("MaybeUndefined<"):
                self.w(f"        match &self.{name} {{")
                self.w("            MaybeUndefined::Undefined => {}")
                self.w(f"            MaybeUndefined::Null => m.serialize_entry({key}, &())?,")
                self.w(f"            MaybeUndefined::Value(v) => m.serialize_entry({key}, v)?,")
                self.w("        }")
            elif ft.startswith("Option<") and not f.required:
                self.w(f"        if let Some(v) = &self.{name} {{ m.serialize_entry({key}, v)?; }}")
            elif f.omit_default:
                self.w(f"        if {self.non_default(f, 'self.' + name)} {{ m.serialize_entry({key}, &self.{name})?; }}")
            else:
                self.w(f"        m.serialize_entry({key}, &self.{name})?;")
        if d.flatten:
            keys = ", ".join(rstr(f.wire) for f in d.fields)
            self.w(f"        let own: &[&str] = &[{keys}];")
            self.w("        let skip: Vec<&str> = own.iter().chain(skip.iter()).copied().collect();")
            self.w("        self.variant.serialize_fields(m, &skip)?;")
        for o in d.oneofs:
            self.w(f"        self.{snake(o.name)}.serialize_fields(m, &[])?;")
        self.w("        Ok(())")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"impl Serialize for {d.name} {{")
        self.w("    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {")
        self.w("        let mut m = s.serialize_map(None)?;")
        self.w("        self.serialize_fields(&mut m, &[])?;")
        self.w("        m.end()")
        self.w("    }")
        self.w("}")
        self.w()

    def emit_struct_de(self, d: Struct) -> None:
        n = d.name
        if d.flatten:
            self.emit_flatten_de(d)
            return
        self.emit_map_visitor(n)
        self.w(f"impl {n} {{")
        self.w("    /// Decodes the members of an object whose opening brace was already read.")
        self.w("    #[doc(hidden)]")
        self.w(f"    pub fn visit_fields<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {{")
        self.emit_fields_loop(d, "        ")
        names = [snake(f.wire) for f in d.fields] + [snake(o.name) for o in d.oneofs]
        self.w(f"        Ok({n} {{ {', '.join(names)} }})")
        self.w("    }")
        self.w("}")

    def emit_map_visitor(self, n: str) -> None:
        """`Deserialize` for a type that has `visit_fields`: open the object, delegate."""
        self.w(f"impl<'de> Deserialize<'de> for {n} {{")
        self.w("    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {")
        self.w("        struct V;")
        self.w("        impl<'de> Visitor<'de> for V {")
        self.w(f"            type Value = {n};")
        self.w(f"            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{ f.write_str(\"an object ({n})\") }}")
        self.w(f"            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<{n}, A::Error> {{ {n}::visit_fields(map) }}")
        self.w("        }")
        self.w("        d.deserialize_map(V)")
        self.w("    }")
        self.w("}")
        self.w()

    def emit_fields_loop(self, d: Struct, ind: str) -> None:
        for f in d.fields:
            self.w(f"{ind}let mut f_{snake(f.wire).removeprefix('r#')}: Option<{self.present_type(f)}> = None;")
        for o in d.oneofs:
            self.w(f"{ind}let mut o_{snake(o.name)}: Option<{o.type_name}> = None;")
        self.w(f"{ind}let mut seen = 0u64;")
        self.w(f"{ind}while let Some(key) = map.next_key::<de::Str<'de>>()? {{")
        self.w(f"{ind}    match key.as_str() {{")
        for o in d.oneofs:
            self.emit_oneof_arms(o.type_name, self.keyed_members(o.type_name), "o_" + snake(o.name), ind + "        ")
        for i, f in enumerate(d.fields):
            keys = " | ".join(rstr(k) for k in [f.wire, *f.aliases])
            self.w(f"{ind}        {keys} => {{")
            self.w(f"{ind}            de::seen::<A::Error>(&mut seen, {i}, {rstr(f.wire)})?;")
            for line in self.decode_field(f):
                self.w(f"{ind}            " + line)
            self.w(f"{ind}        }}")
        self.w(f"{ind}        _ => de::skip(&mut map)?,")
        self.w(f"{ind}    }}")
        self.w(f"{ind}}}")
        for f in d.fields:
            self.w(f"{ind}let {snake(f.wire)} = {self.assemble(f)};")
            for line in self.constraints(f):
                self.w(ind + line)
        for o in d.oneofs:
            keys = rstr(", ".join(f"`{m.wire}`" for m in o.members))
            self.w(f"{ind}let {snake(o.name)} = match o_{snake(o.name)} {{ Some(v) => v, None => return Err(de::missing_one_of::<A::Error>({keys})) }};")

    def non_default(self, f: Field, expr: str) -> str:
        """A Rust condition that holds when a field differs from its (zero) default."""
        if isinstance(f.type, (ArrayRef, MapRef)) or (isinstance(f.type, PrimRef) and f.type.prim == "string"):
            return f"!{expr}.is_empty()"
        if isinstance(f.type, PrimRef) and f.type.prim == "bool":
            return expr
        if isinstance(f.type, PrimRef):
            return f"{expr} != 0"
        raise ValueError(f"{f.wire}: omit_default on {f.type}")

    def emit_oneof_arms(self, type_name: str, members: list[tuple[str, list[str], str, TypeRef | None]], var: str, ind: str) -> None:
        """Match arms that read one member of a oneof into `var` (refusing a second one)."""
        for wire, aliases, ident, payload in members:
            assert payload is not None
            keys = " | ".join(rstr(k) for k in [wire, *aliases])
            dt, conv = self.dtype(payload)
            self.w(f"{ind}{keys} => {{")
            self.w(f"{ind}    if let Some(prev) = &{var} {{ return Err(de::one_of_twice::<A::Error>(prev.key(), {rstr(wire)})); }}")
            self.w(f"{ind}    {var} = Some({type_name}::{ident}(de::field::<A, {dt}>(&mut map, {rstr(wire)})?{conv}));")
            self.w(f"{ind}}}")

    def emit_flatten_de(self, d: Struct) -> None:
        """An object with a union flattened into it: its members are read twice, once
        for the common fields and once for the variant (both from the same raw slice)."""
        n = d.name
        self.w(f"impl<'de> Deserialize<'de> for {n} {{")
        self.w("    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {")
        self.w("        struct V<'de> { raw: &'de RawValue }")
        self.w("        impl<'de> Visitor<'de> for V<'de> {")
        self.w(f"            type Value = {n};")
        self.w(f"            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{ f.write_str(\"an object ({n})\") }}")
        self.w(f"            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<{n}, A::Error> {{")
        self.emit_fields_loop(d, "                ")
        self.w(f"                let variant = de::from_raw::<{d.flatten}, A::Error>(self.raw)?;")
        names = [snake(f.wire) for f in d.fields] + ["variant"]
        self.w(f"                Ok({n} {{ {', '.join(names)} }})")
        self.w("            }")
        self.w("        }")
        self.w("        let raw = <&'de RawValue>::deserialize(d)?;")
        self.w("        let mut inner = serde_json::Deserializer::from_str(raw.get());")
        self.w("        inner.deserialize_map(V { raw }).map_err(D::Error::custom)")
        self.w("    }")
        self.w("}")

    def present_type(self, f: Field) -> str:
        """What a field's variable holds once its key was seen."""
        t = self.rtype(f.type)
        return f"Option<{t}>" if f.nullable else t

    def decode_field(self, f: Field) -> list[str]:
        var = "f_" + snake(f.wire).removeprefix("r#")
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
        var = "f_" + snake(f.wire).removeprefix("r#")
        key = rstr(f.wire)
        if f.has_default:
            return f"match {var} {{ Some(v) => v, None => {self.default_expr(f.type, f.default, f.wire)} }}"
        if f.required:
            return f"match {var} {{ Some(v) => v, None => return Err(de::missing::<A::Error>({key})) }}"
        if f.nullable:
            return f"MaybeUndefined::from_present({var})"
        return var

    # -- unions -------------------------------------------------------------

    def variant_ident(self, u: Union, name: str) -> str:
        return name + "Variant" if name == UNKNOWN else name

    def emit_union(self, u: Union) -> None:
        for line in doc_lines(u.doc):
            self.w(line)
        self.w("#[derive(Debug, Clone, PartialEq)]")
        self.w(f"pub enum {u.name} {{")
        for v in u.variants:
            for line in doc_lines(v.doc, "    "):
                self.w(line)
            ident = self.variant_ident(u, v.name)
            if v.payload is None:
                self.w(f"    {ident},")
            else:
                self.w(f"    {ident}({self.rtype(v.payload)}),")
        if u.strategy == "tagged":
            kind = "a future or extension variant" if u.open else "a variant this schema does not list"
            self.w(f"    /// {kind}, kept as its raw JSON.")
            self.w(f"    {UNKNOWN}(RawJson),")
        self.w("}")
        self.w()
        if u.strategy == "tagged":
            self.emit_tagged(u)
        elif u.strategy == "keyed":
            self.emit_keyed(u)
        else:
            self.emit_untagged(u)

    def keyed_members(self, name: str) -> list[tuple[str, list[str], str, TypeRef | None]]:
        """(key, other accepted keys, variant, payload) of each member of a keyed union."""
        u = self.decls[name]
        assert isinstance(u, Union) and u.strategy == "keyed"
        return [(v.tag or "", [u.aliases[v.tag]] if v.tag in u.aliases else [], v.name, v.payload) for v in u.variants]

    def emit_keyed(self, u: Union) -> None:
        """A protobuf oneof: an object with exactly one of the member keys."""
        n = u.name
        self.w(f"impl {n} {{")
        self.w("    /// The member key this choice is written under.")
        self.w("    pub fn key(&self) -> &'static str {")
        self.w("        match self {")
        for v in u.variants:
            self.w(f"            Self::{v.name}(_) => {rstr(v.tag)},")
        self.w("        }")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"impl SerializeFields for {n} {{")
        self.w("    fn serialize_fields<M: SerializeMap>(&self, m: &mut M, _skip: &[&str]) -> Result<(), M::Error> {")
        self.w("        match self {")
        for v in u.variants:
            self.w(f"            Self::{v.name}(v) => m.serialize_entry({rstr(v.tag)}, v),")
        self.w("        }")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"impl Serialize for {n} {{")
        self.w("    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {")
        self.w("        let mut m = s.serialize_map(Some(1))?;")
        self.w("        self.serialize_fields(&mut m, &[])?;")
        self.w("        m.end()")
        self.w("    }")
        self.w("}")
        self.w()
        self.emit_map_visitor(n)
        self.w(f"impl {n} {{")
        self.w("    /// Decodes the members of an object whose opening brace was already read.")
        self.w("    #[doc(hidden)]")
        self.w(f"    pub fn visit_fields<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {{")
        self.w(f"        let mut choice: Option<{n}> = None;")
        self.w("        while let Some(key) = map.next_key::<de::Str<'de>>()? {")
        self.w("            match key.as_str() {")
        self.emit_oneof_arms(n, self.keyed_members(n), "choice", "                ")
        self.w("                _ => de::skip(&mut map)?,")
        self.w("            }")
        self.w("        }")
        keys = rstr(", ".join(f"`{v.tag}`" for v in u.variants))
        self.w(f"        match choice {{ Some(v) => Ok(v), None => Err(de::missing_one_of::<A::Error>({keys})) }}")
        self.w("    }")
        self.w("}")

    def emit_tagged(self, u: Union) -> None:
        tag = rstr(u.tag_field or "")
        # Serialisation.
        self.w(f"impl SerializeFields for {u.name} {{")
        self.w("    fn serialize_fields<M: SerializeMap>(&self, m: &mut M, skip: &[&str]) -> Result<(), M::Error> {")
        self.w("        match self {")
        for v in u.variants:
            ident = self.variant_ident(u, v.name)
            entry = f"m.serialize_entry({tag}, {rstr(v.tag)})?; " if v.tag is not None else ""
            if v.payload is None:
                self.w(f"            Self::{ident} => {{ {entry}}}")
            elif self.is_fields_type(v.payload):
                self.w(f"            Self::{ident}(v) => {{ {entry}v.serialize_fields(m, skip)?; }}")
            else:
                raise ValueError(f"{u.name}.{v.name}: payload cannot be flattened")
        self.w(f"            Self::{UNKNOWN}(raw) => raw.serialize_fields(m, skip)?,")
        self.w("        }")
        self.w("        Ok(())")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"impl Serialize for {u.name} {{")
        self.w("    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {")
        self.w(f"        if let Self::{UNKNOWN}(raw) = self {{ return raw.serialize(s); }}")
        self.w("        let mut m = s.serialize_map(None)?;")
        self.w("        self.serialize_fields(&mut m, &[])?;")
        self.w("        m.end()")
        self.w("    }")
        self.w("}")
        self.w()
        # Deserialisation: one pass; members before the tag are buffered as raw slices.
        n = u.name
        self.emit_map_visitor(n)
        self.w(f"impl {n} {{")
        self.w("    /// Decodes the members of an object whose opening brace was already read.")
        self.w("    #[doc(hidden)]")
        self.w(f"    pub fn visit_fields<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {{")
        self.w(f"        let (tag, mut buffered) = de::read_until_tag(&mut map, {tag})?;")
        self.w("        let live = if tag.is_some() { Some(map) } else { None };")
        self.w("        Ok(match tag.as_ref().map(|t| t.as_str()) {")
        default = None
        for v in u.variants:
            ident = self.variant_ident(u, v.name)
            if v.tag is None:
                default = (ident, v)
                continue
            self.w(f"            Some({rstr(v.tag)}) => {self.variant_visit(ident, v.payload, v.tag, tag)},")
        if default is not None:
            ident, v = default
            self.w(f"            None => {self.variant_visit(ident, v.payload, None, tag)},")
        else:
            self.w(f"            None => return Err(de::missing::<A::Error>({tag})),")
        self.w("            Some(other) => {")
        self.w("                if let Some(live) = live { de::drain(live, &mut buffered)?; }")
        self.w(f"                let raw = de::rebuild(Some(({tag}, other)), &buffered);")
        if default is not None and default[1].payload is not None and u.unknown_to_default:
            ident, v = default
            dt, conv = self.dtype(v.payload)
            self.w(f"                if let Some(v) = de::try_variant::<{dt}>(raw.as_raw()) {{ return Ok(Self::{ident}(v{conv})); }}")
        if not u.open:
            self.w(f"                de::warn_unknown({rstr(u.name)}, other);")
        self.w(f"                Self::{UNKNOWN}(raw)")
        self.w("            }")
        self.w("        })")
        self.w("    }")
        self.w("}")

    def visit_fields_type(self, t: TypeRef | None) -> str | None:
        """The type whose `visit_fields` can decode a variant body, if it has one."""
        if not isinstance(t, NamedRef):
            return None
        name = t.name
        while isinstance(self.decls.get(name), Alias):
            target = self.decls[name].target  # type: ignore[union-attr]
            if not isinstance(target, NamedRef):
                return None
            name = target.name
        d = self.decls.get(name)
        if isinstance(d, Struct) and d.flatten is None:
            return name
        if isinstance(d, Union) and d.strategy == "tagged":
            return name
        return None

    def variant_visit(self, ident: str, payload: TypeRef | None, tag_value: str | None, tag: str) -> str:
        rest = "de::Replay::new(buffered, live)"
        if payload is None:
            return f"{{ de::drain({rest}, &mut Vec::new())?; Self::{ident} }}"
        direct = self.visit_fields_type(payload)
        if direct is not None:
            return f"Self::{ident}({direct}::visit_fields({rest})?)"
        # Bodies that need their raw bytes (flattened or untagged): rebuild them.
        dt, conv = self.dtype(payload)
        tag_arg = f"Some(({tag}, {rstr(tag_value)}))" if tag_value is not None else "None"
        return (
            f"{{ if let Some(live) = live {{ de::drain(live, &mut buffered)?; }} "
            f"let raw = de::rebuild({tag_arg}, &buffered); "
            f"Self::{ident}(de::from_raw::<{dt}, A::Error>(raw.as_raw())?{conv}) }}"
        )

    def variant_build(self, ident: str, payload: TypeRef | None, err: str) -> str:
        if payload is None:
            return f"Self::{ident}"
        dt, conv = self.dtype(payload)
        return f"Self::{ident}(de::from_raw::<{dt}, {err}>(raw)?{conv})"

    def emit_untagged(self, u: Union) -> None:
        fields_ok = all(self.is_fields_type(v.payload) for v in u.variants)
        if fields_ok:
            self.w(f"impl SerializeFields for {u.name} {{")
            self.w("    fn serialize_fields<M: SerializeMap>(&self, m: &mut M, skip: &[&str]) -> Result<(), M::Error> {")
            self.w("        match self {")
            for v in u.variants:
                self.w(f"            Self::{self.variant_ident(u, v.name)}(v) => v.serialize_fields(m, skip),")
            self.w("        }")
            self.w("    }")
            self.w("}")
            self.w()
        self.w(f"impl Serialize for {u.name} {{")
        self.w("    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {")
        self.w("        match self {")
        for v in u.variants:
            self.w(f"            Self::{self.variant_ident(u, v.name)}(v) => v.serialize(s),")
        self.w("        }")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"impl<'de> Deserialize<'de> for {u.name} {{")
        self.w("    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {")
        self.w("        let raw = <&'de RawValue>::deserialize(d)?;")
        names = []
        for v in u.variants:
            assert v.payload is not None
            dt, conv = self.dtype(v.payload)
            ident = self.variant_ident(u, v.name)
            names.append(self.describe(v.payload))
            self.w(f"        if let Some(v) = de::try_variant::<{dt}>(raw) {{ return Ok(Self::{ident}(v{conv})); }}")
        expected = "one of " + ", ".join(names) if len(names) > 1 else names[0]
        self.w(f"        Err(de::no_variant::<D::Error>({rstr(expected)}, raw))")
        self.w("    }")
        self.w("}")

    def describe(self, t: TypeRef) -> str:
        if isinstance(t, NamedRef):
            return t.name
        if isinstance(t, ArrayRef):
            return f"an array of {self.describe(t.item)}"
        if isinstance(t, PrimRef):
            return {"string": "a string", "bool": "a boolean", "f64": "a number"}.get(t.prim, f"an integer ({t.prim})")
        return "a JSON value"

    # -- enums --------------------------------------------------------------

    def emit_enum(self, d: Enum) -> None:
        for line in doc_lines(d.doc):
            self.w(line)
        derive = "Debug, Clone, PartialEq, Eq, Hash" + ("" if d.open else ", Copy")
        self.w(f"#[derive({derive})]")
        self.w(f"pub enum {d.name} {{")
        docs = d.value_docs or [""] * len(d.values)
        for value, vdoc in zip(d.values, docs):
            for line in doc_lines(vdoc, "    "):
                self.w(line)
            self.w(f"    /// Wire value `{value}`." if not vdoc else "    ///")
            self.w(f"    {self.enum_variant(d, value)},")
        if d.open:
            self.w("    /// A value this schema does not list (an extension or a newer version).")
            self.w(f"    {UNKNOWN}(String),")
        self.w("}")
        self.w()
        self.w(f"impl {d.name} {{")
        self.w(f"    /// Every value this schema lists.")
        vals = ", ".join(rstr(v) for v in d.values)
        self.w(f"    pub const VALUES: &'static [&'static str] = &[{vals}];")
        self.w("    /// The wire value.")
        self.w("    pub fn as_str(&self) -> &str {")
        self.w("        match self {")
        for value in d.values:
            self.w(f"            Self::{self.enum_variant(d, value)} => {rstr(value)},")
        if d.open:
            self.w(f"            Self::{UNKNOWN}(s) => s,")
        self.w("        }")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"impl Serialize for {d.name} {{")
        self.w("    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }")
        self.w("}")
        self.w()
        self.w(f"impl<'de> Deserialize<'de> for {d.name} {{")
        self.w("    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {")
        self.w("        let s = de::Str::deserialize(d)?;")
        self.w("        Ok(match s.as_str() {")
        for value in d.values:
            self.w(f"            {rstr(value)} => Self::{self.enum_variant(d, value)},")
        if d.open:
            self.w(f"            other => Self::{UNKNOWN}(other.to_owned()),")
        else:
            self.w("            other => return Err(de::unknown_value::<D::Error>(other, Self::VALUES)),")
        self.w("        })")
        self.w("    }")
        self.w("}")

    # -- methods ------------------------------------------------------------

    def emit_methods(self) -> None:
        ms = self.spec.methods
        self.w("/// One marker type per method, tying its wire name to its params and result types.")
        self.w("pub mod method {")
        self.w("    use crate::{MethodInfo, MethodKind, NotificationMethod, RequestMethod, Side, Stability};")
        self.w()
        for m in ms:
            marker = self.marker(m)
            self.w(f"    /// `{m.wire}`: {m.kind} handled by the {m.side} side ({m.stability}).")
            self.w("    #[derive(Debug, Clone, Copy)]")
            self.w(f"    pub struct {marker};")
            if m.kind == "request":
                self.w(f"    impl RequestMethod for {marker} {{")
                self.w(f"        const NAME: &'static str = {rstr(m.wire)};")
                self.w(f"        const SIDE: Side = Side::{camel(m.side)};")
                self.w(f"        type Params = super::{m.params};")
                self.w(f"        type Result = super::{m.result};")
                self.w("    }")
            else:
                self.w(f"    impl NotificationMethod for {marker} {{")
                self.w(f"        const NAME: &'static str = {rstr(m.wire)};")
                self.w(f"        const SIDE: Side = Side::{camel(m.side)};")
                self.w(f"        type Params = super::{m.params};")
                self.w("    }")
        self.w()
        self.w("    /// Every method of this surface.")
        self.w("    pub const ALL: &[MethodInfo] = &[")
        for m in ms:
            result = f"Some({rstr(m.result)})" if m.result else "None"
            self.w(
                f"        MethodInfo {{ name: {rstr(m.wire)}, kind: MethodKind::{camel(m.kind)}, side: Side::{camel(m.side)}, "
                f"params: {rstr(m.params)}, result: {result}, stability: Stability::{camel(m.stability)} }},"
            )
        self.w("    ];")
        self.w("}")
        self.w()
        # Receive-side enums, named after the sender as the schema does.
        for sender, handler in (("Client", "agent"), ("Agent", "client")):
            reqs = [m for m in ms if m.kind == "request" and m.side == handler]
            notes = [m for m in ms if m.kind == "notification" and m.side in (handler, "protocol")]
            self.emit_dispatch_enum(f"{sender}Request", "request", reqs, f"A request sent by the {sender.lower()}, handled by the {handler}.", "$.params", "params")
            self.emit_dispatch_enum(f"{sender}Notification", "notification", notes, f"A notification sent by the {sender.lower()}, handled by the {handler}.", "$.params", "params")
            self.emit_dispatch_enum(f"{camel(handler)}Response", "response", reqs, f"A result sent by the {handler}, for a request it handled.", "$.result", "result")
        self.emit_roles()

    def marker(self, m: Method) -> str:
        name = camel(m.wire)
        both = any(o.wire == m.wire and o.kind != m.kind for o in self.spec.methods)
        return name + "Notification" if both and m.kind == "notification" else name

    def emit_dispatch_enum(self, name: str, kind: str, ms: list[Method], doc: str, root: str, what: str) -> None:
        self.w(f"/// {doc}")
        self.w("#[derive(Debug, Clone, PartialEq)]")
        self.w(f"pub enum {name} {{")
        for m in ms:
            t = m.result if kind == "response" else m.params
            self.w(f"    /// `{m.wire}`")
            self.w(f"    {self.marker(m)}({t}),")
        self.w("    /// An extension method (its name starts with `_`), passed through raw.")
        self.w("    Ext(crate::ExtMessage),")
        self.w("}")
        self.w()
        self.w(f"impl {name} {{")
        self.w("    /// The wire method name.")
        self.w("    pub fn method(&self) -> &str {")
        self.w("        match self {")
        for m in ms:
            self.w(f"            Self::{self.marker(m)}(_) => {rstr(m.wire)},")
        self.w("            Self::Ext(e) => &e.method,")
        self.w("        }")
        self.w("    }")
        self.w()
        self.w("    /// The name of the schema type the payload decodes as (`None` for extensions).")
        self.w("    pub fn type_name(&self) -> Option<&'static str> {")
        self.w("        match self {")
        for m in ms:
            t = m.result if kind == "response" else m.params
            self.w(f"            Self::{self.marker(m)}(_) => Some({rstr(t)}),")
        self.w("            Self::Ext(_) => None,")
        self.w("        }")
        self.w("    }")
        self.w()
        self.w(f"    /// Decodes the {what} of `method` (absent or `null` {what} decode as `{{}}`).")
        self.w(f"    pub fn decode(method: &str, {what}: Option<&RawValue>) -> Result<Decoded<Self>, crate::DispatchError> {{")
        self.w(f"        let text = match {what} {{ Some(r) if r.get() != \"null\" => r.get(), _ => \"{{}}\" }};")
        self.w("        match method {")
        for m in ms:
            t = m.result if kind == "response" else m.params
            self.w(f"            {rstr(m.wire)} => crate::decode_as::<{t}, Self>(text, {rstr(root)}, Self::{self.marker(m)}),")
        self.w(f"            m if m.starts_with('_') => Ok(Decoded {{ value: Self::Ext(crate::ExtMessage::new(m, {what})), warnings: Vec::new() }}),")
        self.w("            _ => Err(crate::DispatchError::MethodNotFound),")
        self.w("        }")
        self.w("    }")
        self.w()
        self.w(f"    /// Encodes the {what} alone (not the envelope) into `buf`.")
        self.w("    pub fn encode_payload(&self, buf: &mut Vec<u8>) -> Result<(), serde_json::Error> {")
        self.w("        match self {")
        for m in ms:
            self.w(f"            Self::{self.marker(m)}(v) => serde_json::to_writer(&mut *buf, v),")
        self.w("            Self::Ext(e) => { buf.extend_from_slice(e.payload_text().as_bytes()); Ok(()) }")
        self.w("        }")
        self.w("    }")
        self.w("}")
        self.w()
        self.w(f"impl crate::Payload for {name} {{")
        self.w("    fn decode(method: &str, payload: Option<&RawValue>) -> Result<Decoded<Self>, crate::DispatchError> { Self::decode(method, payload) }")
        self.w("    fn method(&self) -> &str { Self::method(self) }")
        self.w("    fn type_name(&self) -> Option<&'static str> { Self::type_name(self) }")
        self.w("    fn encode_payload(&self, buf: &mut Vec<u8>) -> Result<(), serde_json::Error> { Self::encode_payload(self, buf) }")
        scoped = [m for m in ms if kind != "response" and self.session_scoped(m.params)]
        if scoped:
            self.w("    fn session_id(&self) -> Option<&str> {")
            self.w("        match self {")
            for m in scoped:
                self.w(f"            Self::{self.marker(m)}(p) => Some(p.session_id.as_str()),")
            self.w("            _ => None,")
            self.w("        }")
            self.w("    }")
        self.w("}")
        self.w()

    def session_scoped(self, type_name: str | None) -> bool:
        """Whether a params type names its session in a required `sessionId`."""
        d = self.spec.decls.get(type_name) if type_name else None
        return isinstance(d, Struct) and any(
            f.wire == "sessionId" and f.required and not f.nullable and isinstance(f.type, NamedRef) and f.type.name == "SessionId"
            for f in d.fields
        )

    # -- roles ----------------------------------------------------------------

    def surface_marker(self) -> str:
        return camel(self.spec.version) + ("Unstable" if self.spec.surface == "unstable" else "")

    def handler_name(self, m: Method) -> str:
        """The Rust name of a method's handler and of its typed call: from the params type."""
        if m.wire in HANDLER_NAMES:
            return HANDLER_NAMES[m.wire]
        base = re.sub(r"(Request|Notification)$", "", m.params or camel(m.wire))
        return snake(base)

    def emit_roles(self) -> None:
        ms = [m for m in self.spec.methods if m.side in ("agent", "client")]
        marker = self.surface_marker()
        unstable = "true" if self.spec.surface == "unstable" else "false"
        self.w(f"/// This surface as a type: selects the types and handler traits of a connection.")
        self.w("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]")
        self.w(f"pub struct {marker};")
        self.w()
        self.w(f"impl crate::Protocol for {marker} {{")
        self.w("    const VERSION: u16 = PROTOCOL_VERSION;")
        self.w(f"    const UNSTABLE: bool = {unstable};")
        self.w("    type ClientRequest = ClientRequest;")
        self.w("    type ClientNotification = ClientNotification;")
        self.w("    type AgentRequest = AgentRequest;")
        self.w("    type AgentNotification = AgentNotification;")
        self.w("    const METHODS: &'static [crate::MethodInfo] = method::ALL;")
        self.w("}")
        self.w()
        self.w("pub use crate::{AcpError, AcpEvent, AcpOptions, AgentConnection, AgentProcess, ClientConnection, Context, ErrorCode, ErrorObject, ExtMessage};")
        self.w()
        self.w(f"/// Serves `agent` on this process's stdin and stdout until stdin closes.")
        self.w(f"pub async fn serve_agent_stdio<A: Agent>(agent: A, options: AcpOptions) -> Result<(), agentproto_jsonrpc::ConnectionError> {{")
        self.w(f"    crate::agent::serve_stdio::<{marker}, A>(agent, options).await")
        self.w("}")
        self.w(f"/// The agent side of a connection over any byte streams; run the returned connection.")
        self.w(f"pub fn connect_agent<A: Agent>(agent: A, input: impl tokio::io::AsyncRead + Send + Unpin + 'static, output: impl tokio::io::AsyncWrite + Send + Unpin + 'static, options: AcpOptions) -> (agentproto_jsonrpc::Connection, ClientConnection<{marker}>) {{")
        self.w(f"    crate::agent::connect::<{marker}, A>(agent, input, output, options)")
        self.w("}")
        self.w(f"/// The client side of a connection over any byte streams; run the returned connection.")
        self.w(f"pub fn connect_client<C: Client>(client: C, input: impl tokio::io::AsyncRead + Send + Unpin + 'static, output: impl tokio::io::AsyncWrite + Send + Unpin + 'static, options: AcpOptions) -> (agentproto_jsonrpc::Connection, AgentConnection<{marker}>) {{")
        self.w(f"    crate::client::connect::<{marker}, C>(client, input, output, options)")
        self.w("}")
        self.w(f"/// Spawns an agent command and connects `client` to it (see [`crate::client::spawn`]).")
        self.w(f"pub fn spawn_agent<C: Client>(command: tokio::process::Command, client: C, options: AcpOptions) -> std::io::Result<(AgentConnection<{marker}>, AgentProcess)> {{")
        self.w(f"    crate::client::spawn::<{marker}, C>(command, client, options)")
        self.w("}")
        self.w()
        self.w(f"/// What an [`Agent`] handler receives besides the params: the connection to the client, the request's cancellation.")
        self.w(f"pub type AgentContext = crate::Context<crate::ClientConnection<{marker}>>;")
        self.w(f"/// What a [`Client`] handler receives besides the params: the connection to the agent, the request's cancellation.")
        self.w(f"pub type ClientContext = crate::Context<crate::AgentConnection<{marker}>>;")
        self.w()
        for role, sender, conn, peer_conn in (("agent", "Client", "AgentContext", "ClientConnection"), ("client", "Agent", "ClientContext", "AgentConnection")):
            trait = camel(role)
            mine = [m for m in ms if m.side == role]
            names = [self.handler_name(m) for m in mine]
            if len(set(names)) != len(names):
                raise ValueError(f"handler names collide: {names}")
            required = REQUIRED_HANDLERS[role]
            self.w(f"/// The {role} role: one handler per method the {sender.lower()} sends. Implement the required")
            self.w(f"/// ones; every other request is answered `-32601` and every other notification ignored")
            self.w(f"/// until you implement it. `$/cancel_request` is handled by the connection (see")
            self.w(f"/// [`Context::cancellation_token`](crate::Context::cancellation_token)).")
            self.w(f"pub trait {trait}: Send + Sync + 'static {{")
            for m, name in zip(mine, names):
                self.w(f"    /// Handles `{m.wire}` ({m.stability}).")
                if m.kind == "request":
                    sig = f"fn {name}(&self, cx: {conn}, params: {m.params}) -> impl std::future::Future<Output = Result<{m.result}, agentproto_jsonrpc::ErrorObject>> + Send"
                    if m.wire in required:
                        self.w(f"    {sig};")
                    else:
                        self.w(f"    {sig} {{ async {{ Err(agentproto_jsonrpc::ErrorObject::method_not_found({rstr(m.wire)})) }} }}")
                else:
                    sig = f"fn {name}(&self, cx: {conn}, params: {m.params}) -> impl std::future::Future<Output = ()> + Send"
                    if m.wire in required:
                        self.w(f"    {sig};")
                    else:
                        self.w(f"    {sig} {{ async {{}} }}")
            self.w(f"    /// Handles an extension request (a method starting with `_`, passed with its full name).")
            self.w(f"    fn ext_method(&self, cx: {conn}, request: crate::ExtMessage) -> impl std::future::Future<Output = Result<RawJson, agentproto_jsonrpc::ErrorObject>> + Send {{")
            self.w(f"        async move {{ Err(agentproto_jsonrpc::ErrorObject::method_not_found(&request.method)) }}")
            self.w("    }")
            self.w(f"    /// Handles an extension notification; ignored unless implemented.")
            self.w(f"    fn ext_notification(&self, cx: {conn}, notification: crate::ExtMessage) -> impl std::future::Future<Output = ()> + Send {{ async {{}} }}")
            self.w("}")
            self.w()
            self.w(f"impl<H: {trait}> crate::Dispatch<{sender}Request, {sender}Notification, crate::{peer_conn}<{marker}>> for H {{")
            self.w(f"    fn dispatch_request(self: std::sync::Arc<Self>, cx: {conn}, request: {sender}Request) -> futures::future::BoxFuture<'static, Result<Box<RawValue>, agentproto_jsonrpc::ErrorObject>> {{")
            self.w("        Box::pin(async move {")
            self.w("            let strict = cx.strict();")
            self.w("            match request {")
            for m, name in zip(mine, names):
                if m.kind == "request":
                    self.w(f"                {sender}Request::{self.marker(m)}(p) => crate::encode_reply(&self.{name}(cx, p).await?, strict, {rstr(m.wire)}),")
            self.w(f"                {sender}Request::Ext(m) => Ok(self.ext_method(cx, m).await?.into_raw()),")
            self.w("            }")
            self.w("        })")
            self.w("    }")
            self.w(f"    fn dispatch_notification(self: std::sync::Arc<Self>, cx: {conn}, notification: {sender}Notification) -> futures::future::BoxFuture<'static, ()> {{")
            self.w("        Box::pin(async move {")
            self.w("            match notification {")
            for m, name in zip(mine, names):
                if m.kind == "notification":
                    self.w(f"                {sender}Notification::{self.marker(m)}(p) => self.{name}(cx, p).await,")
            self.w(f"                {sender}Notification::Ext(m) => self.ext_notification(cx, m).await,")
            self.w("                #[allow(unreachable_patterns)]")
            self.w("                _ => {}")
            self.w("            }")
            self.w("        })")
            self.w("    }")
            self.w("}")
            self.w()
        # Typed calls: what each side sends, on the connection to the other side.
        for conn, handler in (("AgentConnection", "agent"), ("ClientConnection", "client")):
            mine = [m for m in ms if m.side == handler]
            self.w(f"impl crate::{conn}<{marker}> {{")
            for m in mine:
                name = self.handler_name(m)
                if m.kind == "request":
                    self.w(f"    /// Sends `{m.wire}` and waits for its validated result.")
                    self.w(f"    pub async fn {name}(&self, params: {m.params}) -> Result<{m.result}, crate::AcpError> {{")
                    self.w(f"        self.request::<method::{self.marker(m)}>(params).await")
                else:
                    self.w(f"    /// Sends the `{m.wire}` notification.")
                    self.w(f"    pub async fn {name}(&self, params: {m.params}) -> Result<(), crate::AcpError> {{")
                    self.w(f"        self.notify::<method::{self.marker(m)}>(params).await")
                self.w("    }")
            self.w("}")
            self.w()


def emit(spec: Spec) -> str:
    return Emitter(spec).emit()
