"""Emit the Rust A2A protobuf codec: for every message of the A2A model, its encoder
(``encoded_len``, ``encode_raw``) and its validating decoder (``decode_at``) on the
generated ProtoJSON types, so that the gRPC binding reads and writes the wire form
without a JSON detour.

It reads the same model as ``rust_a2a.py`` (field, oneof member and enum value numbers
come from ``proto.py``) and names types and fields through that emitter, so the two
modules cannot disagree.  Presence follows proto3 and the ProtoJSON decoders:

* an implicit-presence scalar (and a ``REQUIRED`` one: the wire form cannot tell an
  empty value from an absent one) is left out at its zero value and reads as it when
  absent;
* an ``optional`` scalar, a message, a ``Struct`` and a ``Value`` are written when set;
  a ``REQUIRED`` message absent is refused (``missing-field``);
* an enum is its value's number; 0 (``*_UNSPECIFIED``) is "not set" (refused where
  the field is ``REQUIRED``), a number the enum does not list is refused
  (``not-listed``);
* a ``REQUIRED`` repeated field must hold ``min_items`` items (``too-short``);
* a oneof is the last of its members given (members are all length-delimited in A2A;
  another kind fails here, loudly); none given is refused (``missing-one-of``).

The runtime it is written against (tags, varints, paths, the well-known types) is
``crates/a2a/src/grpc/wire.rs``.
"""

from __future__ import annotations

from collections.abc import Callable

from .emit import rust_str
from .model import ArrayRef, Enum, Field, JsonRef, MapRef, NamedRef, PrimRef, Spec, Struct, TypeRef, Union
from .rust import rules_sha, snake
from .rust_a2a import A2aEmitter

RUST_OUT = "crates/a2a/src/generated/v1_proto.rs"

W = "wire"

# The primitives written as length-delimited fields.
LEN_PRIMS = {"string", "text", "bytes"}


class ProtoEmitter:
    def __init__(self, spec: Spec):
        self.spec = spec
        self.decls = spec.decls
        self.names = A2aEmitter(spec)
        self.lines: list[str] = []
        # The choice types of oneofs inside messages: not messages themselves.
        self.choices = {o.type_name for d in self.decls.values() if isinstance(d, Struct) for o in d.oneofs}

    def w(self, line: str = "") -> None:
        self.lines.append(line)

    # -- classification -----------------------------------------------------------

    def kind(self, t: TypeRef) -> str:
        """`prim:<p>`, `enum`, `message`, `struct` (JSON object), `value` (JSON value)."""
        if isinstance(t, PrimRef):
            if t.prim == "timestamp":
                return "message"
            if t.prim in ("string", "text", "bytes", "bool", "i32"):
                return f"prim:{t.prim}"
            raise ValueError(f"a2a proto codec: primitive {t.prim!r} is not supported")
        if isinstance(t, JsonRef):
            return "struct" if t.object_only else "value"
        if isinstance(t, NamedRef):
            d = self.names.resolve(t)
            if isinstance(d, Enum):
                if d.open:
                    raise ValueError(f"{d.name}: open enums are not supported by the proto codec")
                return "enum"
            if isinstance(d, Struct) or (isinstance(d, Union) and d.strategy == "keyed" and d.name not in self.choices):
                return "message"
        raise ValueError(f"a2a proto codec: cannot encode {t}")

    def length_delimited(self, t: TypeRef) -> bool:
        k = self.kind(t)
        return k in ("message", "struct", "value") or k.removeprefix("prim:") in LEN_PRIMS

    def rtype(self, t: TypeRef) -> str:
        return self.names.rtype(t)

    @staticmethod
    def number(f: Field | None, owner: str, what: str) -> int:
        n = f.number if f is not None else None
        if n is None:
            raise ValueError(f"{owner}.{what}: no proto field number in the model")
        return n

    # -- encoding expressions (`v` is a `&T`) -----------------------------------------

    def value_len(self, t: TypeRef, n: int, v: str) -> str:
        """The length of field `n` holding `*v`, key included."""
        k = self.kind(t)
        if k in ("prim:string", "prim:text"):
            return f"{W}::len_field({n}, {v}.len())"
        if k == "prim:bytes":
            return f"{W}::len_field({n}, {v}.0.len())"
        if k == "prim:bool":
            return f"{W}::tag_len({n}) + 1"
        if k == "prim:i32":
            return f"{W}::int32_field({n}, *{v})"
        if k == "enum":
            return f"{W}::int32_field({n}, {v}.number())"
        if k == "struct":
            return f"{W}::struct_field({n}, {v})"
        if k == "value":
            return f"{W}::value_field({n}, {v})"
        return f"{W}::message_field({n}, {v})"

    def value_put(self, t: TypeRef, n: int, v: str) -> str:
        k = self.kind(t)
        if k in ("prim:string", "prim:text"):
            return f"{W}::put_bytes(buf, {n}, {v}.as_bytes());"
        if k == "prim:bytes":
            return f"{W}::put_bytes(buf, {n}, &{v}.0);"
        if k == "prim:bool":
            return f"{W}::put_bool(buf, {n}, *{v});"
        if k == "prim:i32":
            return f"{W}::put_int32(buf, {n}, *{v});"
        if k == "enum":
            return f"{W}::put_int32(buf, {n}, {v}.number());"
        if k == "struct":
            return f"{W}::put_struct_field(buf, {n}, {v});"
        if k == "value":
            return f"{W}::put_value_field(buf, {n}, {v});"
        return f"{W}::put_message(buf, {n}, {v});"

    def nonzero(self, t: TypeRef, v: str) -> str | None:
        """The test that `*v` is not its zero value (None: a value that is always written)."""
        k = self.kind(t)
        if k in ("prim:string", "prim:text"):
            return f"!{v}.is_empty()"
        if k == "prim:bytes":
            return f"!{v}.0.is_empty()"
        if k == "prim:bool":
            return f"*{v}"
        if k == "prim:i32":
            return f"*{v} != 0"
        return None

    def field_encoders(self, owner: str, f: Field) -> tuple[list[str], list[str]]:
        """(statements adding the field's length to `n`, statements writing it)."""
        n = self.number(f, owner, f.wire)
        name = snake(f.wire)
        ftype = self.names.field_type(f)
        t = f.type
        if isinstance(t, ArrayRef):
            if not self.length_delimited(t.item):
                raise ValueError(f"{owner}.{f.wire}: repeated scalars (packed) are not in a2a.proto; add them here first")
            return (
                [f"for v in &self.{name} {{ n += {self.value_len(t.item, n, 'v')}; }}"],
                [f"for v in &self.{name} {{ {self.value_put(t.item, n, 'v')} }}"],
            )
        if isinstance(t, MapRef):
            entry = f"{W}::len_field(1, k.len()) + {self.value_len(t.value, 2, 'v')}"
            return (
                [f"for (k, v) in &self.{name}.0 {{ n += {W}::len_field({n}, {entry}); }}"],
                [
                    f"for (k, v) in &self.{name}.0 {{",
                    f"    {W}::put_len_prefix(buf, {n}, {entry});",
                    f"    {W}::put_bytes(buf, 1, k.as_bytes());",
                    f"    {self.value_put(t.value, 2, 'v')}",
                    "}",
                ],
            )
        if ftype.startswith("Option<"):
            return (
                [f"if let Some(v) = &self.{name} {{ n += {self.value_len(t, n, 'v')}; }}"],
                [f"if let Some(v) = &self.{name} {{ {self.value_put(t, n, 'v')} }}"],
            )
        test = self.nonzero(t, "v")
        bind = f"let v = &self.{name};"
        if test is None:
            return [f"{{ {bind} n += {self.value_len(t, n, 'v')}; }}"], [f"{{ {bind} {self.value_put(t, n, 'v')} }}"]
        return (
            [f"{{ {bind} if {test} {{ n += {self.value_len(t, n, 'v')}; }} }}"],
            [f"{{ {bind} if {test} {{ {self.value_put(t, n, 'v')} }} }}"],
        )

    def choice_arms(self, union: Union, subject: str) -> tuple[list[str], list[str]]:
        """Match statements over a oneof's choice value (`subject`), for length and write."""
        lens = [f"match {subject} {{"]
        puts = [f"match {subject} {{"]
        for v in union.variants:
            if v.payload is None or v.number is None:
                raise ValueError(f"{union.name}.{v.name}: a oneof member without a payload or number")
            if not self.length_delimited(v.payload):
                raise ValueError(f"{union.name}.{v.name}: oneof members that are not length-delimited are not supported")
            lens.append(f"    {union.name}::{v.name}(v) => n += {self.value_len(v.payload, v.number, 'v')},")
            puts.append(f"    {union.name}::{v.name}(v) => {{ {self.value_put(v.payload, v.number, 'v')} }}")
        return lens + ["}"], puts + ["}"]

    # -- decoding -------------------------------------------------------------------

    def read_scalar(self, t: TypeRef, at: str) -> str:
        """An expression reading a scalar field from reader `r` (wire type `wt`)."""
        k = self.kind(t)
        return {
            "prim:string": f"r.string(wt, {at})?",
            "prim:text": f"Text::from(r.str(wt, {at})?)",
            "prim:bytes": f"Bytes(r.len(wt, {at})?.to_vec())",
            "prim:bool": f"r.bool(wt, {at})?",
            "prim:i32": f"r.int32(wt, {at})?",
        }[k]

    def from_bytes(self, t: TypeRef, b: str, at: str) -> str:
        """An expression decoding a length-delimited value from the slice `b`."""
        k = self.kind(t)
        if k in ("prim:string",):
            return f"{W}::utf8({b}, {at})?.to_owned()"
        if k == "prim:text":
            return f"Text::from({W}::utf8({b}, {at})?)"
        if k == "prim:bytes":
            return f"Bytes({b}.to_vec())"
        if k == "struct":
            return f"{W}::struct_from({b}, {at})?"
        if k == "value":
            return f"{W}::value_from({b}, {at})?"
        if k == "message":
            return f"<{self.rtype(t)} as Proto>::decode_at({b}, {at})?"
        raise ValueError(f"{t}: not length-delimited")

    def zero(self, t: TypeRef) -> str:
        return {
            "prim:string": "String::new()",
            "prim:text": "Text::default()",
            "prim:bytes": "Bytes(Vec::new())",
            "prim:bool": "false",
            "prim:i32": "0",
        }[self.kind(t)]

    def emit_enum(self, d: Enum) -> None:
        if len(d.numbers) != len(d.values):
            raise ValueError(f"{d.name}: the model gives no proto numbers for its values")
        w = self.w
        w(f"impl {W}::ProtoEnum for {d.name} {{")
        w("    const NAMES: &'static [&'static str] = Self::VALUES;")
        w("    fn number(&self) -> i32 {")
        w("        match self {")
        for value, num in zip(d.values, d.numbers):
            w(f"            Self::{self.names.enum_variant(d, value)} => {num},")
        w("        }")
        w("    }")
        w("    fn from_number(n: i32) -> Option<Self> {")
        w("        Some(match n {")
        for value, num in zip(d.values, d.numbers):
            w(f"            {num} => Self::{self.names.enum_variant(d, value)},")
        w("            _ => return None,")
        w("        })")
        w("    }")
        w("}")
        w()

    def emit_struct(self, d: Struct) -> None:
        if d.flatten:
            raise ValueError(f"{d.name}: flattened unions do not occur in a proto")
        # Written in field-number order, as the spec recommends (a oneof where its
        # lowest-numbered member would be).
        parts: list[tuple[int, list[str], list[str]]] = []
        for f in d.fields:
            flen, fput = self.field_encoders(d.name, f)
            parts.append((self.number(f, d.name, f.wire), flen, fput))
        for o in d.oneofs:
            union = self.decls[o.type_name]
            assert isinstance(union, Union)
            olen, oput = self.choice_arms(union, f"&self.{snake(o.name)}")
            parts.append((min(self.number(m, d.name, m.wire) for m in o.members), olen, oput))
        parts.sort(key=lambda p: p[0])
        lens = [line for _, flen, _ in parts for line in flen]
        puts = [line for _, _, fput in parts for line in fput]
        self.emit_impl(d.name, lens, puts, lambda: self.emit_struct_decode(d))

    def emit_union(self, u: Union) -> None:
        lens, puts = self.choice_arms(u, "self")
        self.emit_impl(u.name, lens, puts, lambda: self.emit_union_decode(u))
        # Each member on its own, for a value held apart from the union (a shared task
        # answered as `SendMessageResponse.task`), so it need not be moved into one.
        for v in u.variants:
            assert v.payload is not None and v.number is not None
            fn = f"encode_{snake(u.name)}_{snake(v.name)}"
            self.w(f"/// The bytes of a `{u.name}` whose `{v.tag}` is `v`.")
            self.w(f"pub fn {fn}(v: &{self.rtype(v.payload)}) -> Vec<u8> {{")
            self.w(f"    let mut out = Vec::with_capacity({self.value_len(v.payload, v.number, 'v')});")
            self.w("    let buf = &mut out;")
            self.w(f"    {self.value_put(v.payload, v.number, 'v')}")
            self.w("    out")
            self.w("}")
            self.w()

    def emit_impl(self, name: str, lens: list[str], puts: list[str], decode: Callable[[], None]) -> None:
        w = self.w
        w(f"impl Proto for {name} {{")
        w("    fn encoded_len(&self) -> usize {")
        w("        let mut n = 0;")
        for line in lens:
            w("        " + line)
        w("        n")
        w("    }")
        w("    fn encode_raw(&self, buf: &mut Vec<u8>) {")
        for line in puts:
            w("        " + line)
        w("    }")
        w("    fn decode_at(buf: &[u8], at: &At<'_>) -> Result<Self, DecodeError> {")
        w("        at.enter()?;")
        decode()
        w("    }")
        w("}")
        w()

    def emit_struct_decode(self, d: Struct) -> None:
        w = self.w
        ind = "        "
        arms: list[str] = []
        after: list[str] = []
        names: list[str] = []
        for f in d.fields:
            n = self.number(f, d.name, f.wire)
            field_name = snake(f.wire)
            name = "f_" + field_name.removeprefix("r#")
            names.append(f"{field_name}: {name}")
            key = rust_str(f.wire)
            ftype = self.names.field_type(f)
            t = f.type
            if isinstance(t, ArrayRef):
                item = t.item
                w(f"{ind}let mut {name}: Vec<{self.rtype(item)}> = Vec::new();")
                arms.append(
                    f"{n} => {{ let k = at.key({key}); let a = k.index({name}.len()); let b = r.len(wt, &a)?; "
                    f"{name}.push({self.from_bytes(item, 'b', '&a')}); }}"
                )
                if f.min_items:
                    after.append(f"at.key({key}).min_items(&{name}, {f.min_items})?;")
            elif isinstance(t, MapRef):
                merge = "true" if self.kind(t.value) == "message" else "false"
                w(f"{ind}let mut {name}: OrderedMap<{self.rtype(t.value)}> = OrderedMap(Vec::new());")
                arms.append(
                    f"{n} => {{ let k = at.key({key}); let (key, value) = {W}::map_entry(r.len(wt, &k)?, &k, {merge})?; "
                    f"let a = k.entry(key); let b = value.bytes().unwrap_or_default(); "
                    f"let v = {self.from_bytes(t.value, 'b', '&a')}; {W}::insert(&mut {name}, key, v); }}"
                )
            elif self.kind(t).startswith("prim:"):
                if ftype.startswith("Option<"):
                    w(f"{ind}let mut {name}: Option<{self.rtype(t)}> = None;")
                    arms.append(f"{n} => {name} = Some({self.read_scalar(t, f'&at.key({key})')}),")
                else:
                    w(f"{ind}let mut {name}: {self.rtype(t)} = {self.zero(t)};")
                    arms.append(f"{n} => {name} = {self.read_scalar(t, f'&at.key({key})')},")
            elif self.kind(t) == "enum":
                w(f"{ind}let mut {name}: i32 = 0;")
                arms.append(f"{n} => {name} = r.int32(wt, &at.key({key}))?,")
                e = self.rtype(t)
                read = f"{W}::enum_of::<{e}>({name}, &at.key({key}))?"
                if ftype.startswith("Option<"):
                    after.append(f"let {name} = if {name} == 0 {{ None }} else {{ Some({read}) }};")
                else:
                    after.append(f"if {name} == 0 {{ return Err(at.missing({key})); }}")
                    after.append(f"let {name} = {read};")
            else:
                w(f"{ind}let mut {name} = {W}::Parts::default();")
                arms.append(f"{n} => {name}.push(r.len(wt, &at.key({key}))?),")
                decoded = f"match {name}.bytes() {{ Some(b) => {{ let a = at.key({key}); Some({self.from_bytes(t, 'b', '&a')}) }} None => None }}"
                if ftype.startswith("Option<"):
                    after.append(f"let {name} = {decoded};")
                else:
                    after.append(f"let {name} = match {decoded} {{ Some(v) => v, None => return Err(at.missing({key})) }};")
        for o in d.oneofs:
            union = self.decls[o.type_name]
            assert isinstance(union, Union)
            name = "o_" + snake(o.name).removeprefix("r#")
            names.append(f"{snake(o.name)}: {name}")
            w(f"{ind}let mut {name} = {W}::Choice::default();")
            arms += self.choice_set_arms(union, name)
            after += self.choice_assemble(union, name, f"let {name} = ", ";")
        self.emit_loop(arms)
        for line in after:
            w(ind + line)
        w(f"{ind}Ok({d.name} {{ {', '.join(names)} }})")

    def choice_set_arms(self, union: Union, var: str) -> list[str]:
        arms = []
        for v in union.variants:
            assert v.payload is not None and v.tag is not None
            merge = "true" if self.kind(v.payload) in ("message", "struct", "value") else "false"
            arms.append(f"{v.number} => {var}.set({v.number}, r.len(wt, &at.key({rust_str(v.tag)}))?, {merge}),")
        return arms

    def choice_assemble(self, union: Union, var: str, head: str, tail: str) -> list[str]:
        keys = ", ".join(f'"{v.tag}"' for v in union.variants)
        lines = [f"{head}match {var}.get() {{"]
        for v in union.variants:
            assert v.payload is not None and v.tag is not None
            lines.append(
                f"    Some(({v.number}, b)) => {{ let a = at.key({rust_str(v.tag)}); "
                f"{union.name}::{v.name}({self.from_bytes(v.payload, 'b', '&a')}) }}"
            )
        lines.append(f"    _ => return Err(at.missing_one_of({rust_str(keys)})),")
        lines.append("}" + tail)
        return lines

    def emit_union_decode(self, u: Union) -> None:
        self.w("        let mut choice = wire::Choice::default();")
        self.emit_loop(self.choice_set_arms(u, "choice"))
        for line in self.choice_assemble(u, "choice", "Ok(", ")"):
            self.w("        " + line)

    def emit_loop(self, arms: list[str]) -> None:
        w = self.w
        w("        let mut r = wire::Reader::new(buf);")
        w("        while let Some((field, wt)) = r.tag(at)? {")
        w("            match field {")
        for arm in arms:
            w("                " + arm)
        w("                _ => r.skip(field, wt, at)?,")
        w("            }")
        w("        }")

    # -- the module -------------------------------------------------------------------

    def emit(self) -> str:
        s = self.spec
        w = self.w
        w(f"// @generated by `make codegen` from spec/{s.source_file} and rules/a2a.toml")
        w(f"// sha256 {s.source_sha256} (proto), {rules_sha(s)} (rules). Do not edit: change codegen/ and regenerate.")
        w(f"//! The protobuf codec of the A2A types (proto package `{s.package}`): each message's")
        w("//! encoder and validating decoder on the generated types of [`super::v1`].")
        w("#![allow(clippy::all, clippy::pedantic, unused_mut, unused_variables, unused_imports)]")
        w()
        w("use super::v1::*;")
        w("use crate::grpc::wire::{self, At, Proto, ProtoEnum};")
        w("use crate::{Bytes, Text, Timestamp};")
        w("use agentproto_codec::de::OrderedMap;")
        w("use agentproto_codec::DecodeError;")
        w()
        for d in self.decls.values():
            if isinstance(d, Enum):
                self.emit_enum(d)
            elif isinstance(d, Struct):
                self.emit_struct(d)
            elif isinstance(d, Union) and d.strategy == "keyed" and d.name not in self.choices:
                self.emit_union(d)
        self.emit_requests()
        return "\n".join(self.lines) + "\n"

    def emit_requests(self) -> None:
        w = self.w
        ops = self.spec.methods
        w("/// Decodes the request of `op` from its protobuf bytes; paths in errors start at `root`.")
        w("pub fn decode_request(op: Operation, buf: &[u8], root: &'static str) -> Result<Request, DecodeError> {")
        w("    Ok(match op {")
        for m in ops:
            w(f"        Operation::{m.wire} => Request::{m.wire}(<{m.params} as Proto>::decode(buf, root)?),")
        w("    })")
        w("}")
        w()
        w("/// Decodes the answer of `op` (an item of its stream, for a streaming one) from its")
        w("/// protobuf bytes and gives its ProtoJSON (the client's gRPC transport hands the")
        w("/// client the same text the HTTP bindings do).")
        w("pub fn response_to_json(op: Operation, buf: &[u8], root: &'static str) -> Result<Vec<u8>, DecodeError> {")
        w("    let encoded = match op {")
        for m in ops:
            w(f"        Operation::{m.wire} => serde_json::to_vec(&<{m.result} as Proto>::decode(buf, root)?),")
        w("    };")
        w("    encoded.map_err(|e| DecodeError::new(root, agentproto_codec::DecodeErrorKind::NotEncodable, \"a value JSON can hold\", e.to_string()))")
        w("}")
        w()
        w("/// A request's protobuf bytes.")
        w("pub fn encode_request(request: &Request) -> Vec<u8> {")
        w("    match request {")
        for m in ops:
            w(f"        Request::{m.wire}(r) => r.encode_to_vec(),")
        w("    }")
        w("}")


def emit(spec: Spec) -> str:
    return ProtoEmitter(spec).emit()
