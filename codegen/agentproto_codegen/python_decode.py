"""Emit the Python slow path: one straight-line validator per type.

``python/src/agentproto/acp/generated/_<surface>_decode.py`` walks a payload read by
``agentproto.codec.reader`` (repeated keys and value spans kept) and builds the same
instances the fast path builds, or raises ``DecodeError`` in the wording every SDK shares
and JSON path. It follows the Rust decoder's order of checks:

* members are read in received order; a repeated known key fails at the key;
* a tagged union reads its tag first (the first member of that name), then gives the
  other members, in order, to the variant; an unknown tag is kept as ``Unknown`` (a
  warning for a closed union), unless the union first tries its default variant;
* missing required members and ``minLength``/``minItems`` are checked after the whole
  object, field by field in schema order;
* lenient fields (``x-deserialize-default-on-error``), skip-invalid-items arrays and
  default-on-null fields salvage with a warning at the value's path.

Per struct two functions: ``f_<Name>(members, path, cx, cls)`` reads the members (what a
tagged variant calls with the tag removed) and ``d_<Name>(value, path, cx)`` checks that
the value is an object first.
"""

from __future__ import annotations

from .emit import Writer, given
from .model import Alias, ArrayRef, Enum, Field, JsonRef, MapRef, NamedRef, PrimRef, Spec, Struct, TypeRef, Union, prim_phrase
from .python import LINE, Call, Kw, Model, Paren, field_name, header, key_suffix, module_name, pystr, write

SCALARS = {
    "string": "rt.d_str",
    "bool": "rt.d_bool",
    "f64": "rt.d_f64",
    "i16": "rt.d_i16",
    "i32": "rt.d_i32",
    "i64": "rt.d_i64",
    "u16": "rt.d_u16",
    "u32": "rt.d_u32",
    "u64": "rt.d_u64",
}
RUNTIME = {"RequestId": "rt.d_request_id", "Error": "rt.d_error_object", "ErrorCode": "rt.d_i32"}


def describe(m: Model, t: TypeRef) -> str:
    """A type as an untagged union's error names it (vectors/README.md, "Error texts")."""
    if isinstance(t, NamedRef):
        return t.name
    if isinstance(t, ArrayRef):
        return f"an array of {describe(m, t.item)}"
    if isinstance(t, PrimRef):
        return prim_phrase(t.prim)
    return "a JSON value"


class Emitter:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.m = Model(spec)
        self.decls = spec.decls
        self.out = Writer()
        self.helpers: dict[str, str] = {}  # type key -> helper function name
        self.helper_out = Writer()
        self.table: list[str] = []
        self.uses_jobject = False

    # -- item functions ----------------------------------------------------------

    def item_fn(self, t: TypeRef) -> str:
        """A function `(value, path, cx) -> decoded` for values of `t` (not free-form JSON)."""
        t = self.m.target(t)
        if isinstance(t, PrimRef):
            if t.prim not in SCALARS:
                raise ValueError(f"primitive {t.prim} is not supported by the Python emitter")
            return SCALARS[t.prim]
        if isinstance(t, NamedRef):
            if t.name in RUNTIME:
                return RUNTIME[t.name]
            return f"d_{t.name}"
        if isinstance(t, (ArrayRef, MapRef)):
            # Named by what it reads (aliases followed), so that two surfaces name the
            # same helper alike.
            key = self.slug(t)
            if key not in self.helpers:
                name = "_" + key
                self.helpers[key] = name
                inner = t.item if isinstance(t, ArrayRef) else t.value
                kind = "list" if isinstance(t, ArrayRef) else "map"
                w = self.helper_out
                w.line()
                w.line()
                write(w, "", Call(f"def {name}(", ["v: Any", "path: str", "cx: rt.Ctx"], f") -> {'list[Any]' if kind == 'list' else 'dict[str, Any]'}:"))
                with w.indent():
                    if isinstance(self.m.target(inner), JsonRef):
                        w.line(f"return rt.d_{kind}_raw(v, path, cx)")
                    else:
                        w.line(f"return rt.d_{kind}(v, path, cx, {self.item_fn(inner)})")
            return self.helpers[key]
        raise ValueError(f"no item function for {t}")

    def slug(self, t: TypeRef) -> str:
        """A name for the values of `t` (aliases followed): `list_ContentBlock`, `map_str`."""
        t = self.m.target(t)
        if isinstance(t, ArrayRef):
            return "list_" + self.slug(t.item)
        if isinstance(t, MapRef):
            return "map_" + self.slug(t.value)
        if isinstance(t, PrimRef):
            return t.prim
        if isinstance(t, NamedRef):
            return t.name
        return "raw_object" if isinstance(t, JsonRef) and t.object_only else "raw"

    def value_expr(self, t: TypeRef, p: str = "p") -> str:
        """Decodes the member value `val` (span `s`..`e`) of type `t` at path `p`."""
        target = self.m.target(t)
        if isinstance(target, JsonRef):
            if target.object_only:
                return f"rt.d_raw_object(val, {p}, cx, s, e)"
            return "rt.d_raw(cx, s, e)"
        return f"{self.item_fn(target)}(val, {p}, cx)"

    def def_line(self, name: str, returns: str) -> None:
        write(self.out, "", Call(f"def {name}(", ["v: Any", "path: str", "cx: rt.Ctx"], f") -> {returns}:"))

    # -- module -----------------------------------------------------------------------

    def emit(self) -> str:
        out = self.out
        for d in self.decls.values():
            if isinstance(d, Enum):
                self.emit_enum(d)
            elif isinstance(d, Struct):
                if d.flatten:
                    self.emit_flattened(d)
                else:
                    self.emit_struct(d)
            elif isinstance(d, Union):
                if d.strategy == "tagged":
                    self.emit_tagged(d)
                else:
                    self.emit_untagged(d)
            elif isinstance(d, Alias) and not isinstance(self.m.target(d.target), JsonRef):
                self.item_fn(d.target)  # aliases decode as their target
        out.line()
        out.line()
        out.line("DECODERS: Final[dict[str, rt.Decoder]] = {")
        with out.indent():
            for name in self.table:
                out.line(f"{pystr(name)}: d_{name},")
        out.line("}")
        out.line('"""The decoder of every struct and union, by schema name."""')
        head = Writer()
        head.lines(header(self.spec, "the slow decode path (validators), read on first use"))
        head.line()
        head.line("from __future__ import annotations")
        head.line()
        head.line("from typing import Any, Final")
        head.line()
        head.line("from msgspec import UNSET")
        head.line()
        head.line(f"from agentproto.acp.generated import {module_name(self.spec)} as t")
        head.line("from agentproto.codec import runtime as rt")
        if "DecodeError" in out.text():
            head.line("from agentproto.codec.errors import DecodeError")
        if self.uses_jobject:
            head.line("from agentproto.codec.reader import JObject")
        head.line("from agentproto.codec.runtime import MISSING")
        return head.text() + (self.helper_out.text() if self.helpers else "") + out.text()

    def emit_enum(self, d: Enum) -> None:
        out = self.out
        out.line()
        out.line()
        self.table.append(d.name)
        if d.open:
            self.def_line(f"d_{d.name}", "str")
            with out.indent():
                out.line("return rt.d_str(v, path, cx)")
            return
        write(out, f"_{d.name}_VALUES: Final = ", Call("(", [pystr(v) for v in d.values], ")"))
        out.line()
        out.line()
        self.def_line(f"d_{d.name}", "str")
        with out.indent():
            out.line(f"return rt.d_enum(v, path, _{d.name}_VALUES)")

    # -- structs --------------------------------------------------------------------

    def emit_struct(self, d: Struct) -> None:
        out = self.out
        n = d.name
        self.table.append(n)
        out.line()
        out.line()
        write(out, "", Call(f"def f_{n}(", ["members: rt.Members", "path: str", "cx: rt.Ctx", f"cls: type[t.{n}]"], f") -> t.{n}:"))
        with out.indent():
            self.fields_loop(d, "members")
            write(out, "return ", Call("cls(", self.constructor_args(d), ")"))
        out.line()
        out.line()
        write(out, f"d_{n}: Final = ", Call("rt.struct_decoder(", [f"f_{n}", pystr(n), f"t.{n}"], ")"))

    def emit_flattened(self, d: Struct) -> None:
        out = self.out
        n = d.name
        self.table.append(n)
        out.line()
        out.line()
        self.def_line(f"d_{n}", f"t.{n}")
        with out.indent():
            out.line(f"obj = rt.expect_object(v, path, {pystr(n)})")
            self.fields_loop(d, "obj.members")
            out.line(f"variant = d_{given(d.flatten, 'flatten')}(obj, path, cx)")
            write(out, "return ", Call(f"t.{n}(", [*self.constructor_args(d), Kw("variant", "variant")], ")"))

    def local(self, f: Field) -> str:
        return "x_" + field_name(f)

    def fields_loop(self, d: Struct, members: str) -> None:
        out = self.out
        if len(d.fields) > 62:
            raise ValueError(f"{d.name}: too many fields")
        for f in d.fields:
            out.line(f"{self.local(f)}: Any = MISSING")
        if d.fields:
            out.line("seen = 0")
            spans = "s, e" if any(isinstance(self.m.target(f.type), JsonRef) for f in d.fields) else "_s, _e"
            out.line(f"for key, val, {spans} in {members}:")
            with out.indent():
                for i, f in enumerate(d.fields):
                    out.line(f"{'if' if i == 0 else 'elif'} key == {pystr(f.wire)}:")
                    with out.indent():
                        out.line(f"seen = rt.once(seen, {1 << i}, path, key)")
                        self.decode_field(d, f, f"path + {pystr(key_suffix(f.wire))}")
        if self.checks_after(d):
            for f in d.fields:
                self.assemble(d, f)

    def checks_after(self, d: Struct) -> bool:
        """Whether `d` checks its members after the loop (a minimum length or count, in
        schema order with the missing-member checks); else a missing member is found as
        the constructor's arguments are built, in the same order."""
        return any(f.min_length is not None or f.min_items is not None for f in d.fields)

    def decode_field(self, d: Struct, f: Field, p: str) -> None:
        out = self.out
        x = self.local(f)
        where = f"{d.name}.{f.wire}"
        if f.skip_invalid_items:
            if not isinstance(self.m.target(f.type), ArrayRef):
                raise ValueError(f"{where}: skip-invalid-items on a non-array")
            arr = self.m.target(f.type)
            assert isinstance(arr, ArrayRef)
            if isinstance(self.m.target(arr.item), JsonRef):
                raise ValueError(f"{where}: skip-invalid-items over free-form items")
            item = self.item_fn(arr.item)
            write(out, f"{x} = ", Call("rt.items(", ["cx", "val", p, item, str(f.nullable), str(f.lenient)], ")"))
            if f.required:
                out.line(f"if {x} is MISSING or {x} is None:")
                with out.indent():
                    out.line(f"{x} = []")
            return
        expr = self.value_expr(f.type, p)
        if f.default_on_null and not f.nullable and not f.lenient:
            if isinstance(self.m.target(f.type), JsonRef):
                raise ValueError(f"{where}: default-on-null on free-form JSON")
            write(out, f"{x} = ", Call("rt.default_on_null(", ["cx", "val", p, self.item_fn(f.type)], ")"))
            if f.required:
                if not isinstance(self.m.target(f.type), (ArrayRef, MapRef)):
                    raise ValueError(f"{where}: required default-on-null field that is not a list or a map")
                empty = "[]" if isinstance(self.m.target(f.type), ArrayRef) else "{}"
                out.line(f"if {x} is MISSING:")
                with out.indent():
                    out.line(f"{x} = {empty}")
            return
        if f.lenient:
            if f.required and not f.has_default:
                raise ValueError(f"{where}: lenient required field without skip-invalid-items")
            target = self.m.target(f.type)
            if isinstance(target, JsonRef) and not target.object_only:
                pass  # any JSON value reads: nothing to salvage
            elif isinstance(target, JsonRef):
                write(out, f"{x} = ", Call("rt.lenient_raw_object(", ["cx", "val", p, "s", "e", str(f.nullable)], ")"))
                return
            else:
                args = ["cx", "val", p, self.item_fn(f.type), *(["True"] if f.nullable else [])]
                write(out, f"{x} = ", Call("rt.lenient(", args, ")"))
                return
        value: str | Paren = expr
        if f.nullable:
            value = Paren(f"None if val is None else {expr}")
        write(out, f"{x} = ", value)

    def assemble(self, d: Struct, f: Field) -> None:
        out = self.out
        x = self.local(f)
        if f.has_default:
            return  # filled in the constructor call
        if f.required:
            out.line(f"if {x} is MISSING:")
            with out.indent():
                out.line(f"raise rt.missing(path, {pystr(f.wire)})")
        for bound, helper in ((f.min_length, "min_length"), (f.min_items, "min_items")):
            if bound is None:
                continue
            call = f"rt.{helper}(path + {pystr(key_suffix(f.wire))}, {x}, {bound})"
            conds = []
            if not f.required:
                conds.append(f"{x} is not MISSING")
            if f.nullable:
                conds.append(f"{x} is not None")
            if conds:
                out.line(f"if {' and '.join(conds)}:")
                with out.indent():
                    out.line(call)
            else:
                out.line(call)

    def constructor_args(self, d: Struct) -> list[Kw | str]:
        args: list[Kw | str] = []
        checked = self.checks_after(d)
        for f in d.fields:
            x = self.local(f)
            if f.has_default:
                value = self.default_value(f)
                args.append(Kw(field_name(f), f"{value} if {x} is MISSING else {x}"))
            elif f.required and checked:
                args.append(Kw(field_name(f), x))
            elif f.required:
                args.append(Kw(field_name(f), f"rt.need({x}, path, {pystr(f.wire)})"))
            else:
                args.append(Kw(field_name(f), f"UNSET if {x} is MISSING else {x}"))
        return args

    def default_value(self, f: Field) -> str:
        t = self.m.target(f.type)
        value = f.default
        if isinstance(t, ArrayRef):
            return "[]"
        if isinstance(t, MapRef):
            return "{}"
        if isinstance(t, PrimRef):
            if t.prim == "string":
                return pystr(value)
            if t.prim == "bool":
                return "True" if value else "False"
            if t.prim == "f64":
                return repr(float(value))
            return str(int(value))
        d = self.m.resolve(t)
        if isinstance(d, Enum):
            return pystr(value)
        if isinstance(d, Struct):
            return f"t.{d.name}()"
        raise ValueError(f"{f.wire}: unsupported default {value!r}")

    # -- unions ---------------------------------------------------------------------

    def emit_tagged(self, u: Union) -> None:
        out = self.out
        n = u.name
        tag = pystr(given(u.tag_field, f"{n}: tag field"))
        self.table.append(n)
        out.line()
        out.line()
        self.def_line(f"d_{n}", "Any")
        default = None
        with out.indent():
            out.line(f"obj = rt.expect_object(v, path, {pystr(n)})")
            uses_rest = any(vc.kind in ("tagged", "wrapped") for v, vc in zip(u.variants, self.m.variants[n]) if v.tag is not None)
            out.line(f"tag, {'rest' if uses_rest else '_rest'} = rt.split_tag(obj, {tag}, path)")
            for v, vc in zip(u.variants, self.m.variants[n]):
                if v.tag is None:
                    default = vc
                    continue
                out.line(f"if tag == {pystr(v.tag)}:")
                with out.indent():
                    if vc.kind == "empty":
                        out.line(f"return t.{vc.cls}()")
                    elif vc.kind == "wrapped":
                        out.line(f"inner = d_{vc.payload}(JObject(rest, obj.start, obj.end), path, cx)")
                        self.uses_jobject = True
                        out.line(f"return t.{vc.cls}(variant=inner)")
                    elif vc.kind == "flattened":
                        out.line(f"return d_{vc.payload}(obj, path, cx)")
                    else:
                        write(out, "return ", Call(f"f_{vc.payload}(", ["rest", "path", "cx", f"t.{vc.cls}"], ")"))
            out.line("if tag is None:")
            with out.indent():
                if default is None:
                    out.line(f"raise rt.missing(path, {tag})")
                elif default.kind == "flattened":
                    out.line(f"return d_{default.payload}(obj, path, cx)")
                else:
                    write(out, "return ", Call(f"f_{default.payload}(", ["obj.members", "path", "cx", f"t.{default.cls}"], ")"))
            if u.unknown_to_default and default is not None:
                out.line(f"got = rt.attempt(cx, obj, path, d_{default.payload})")
                out.line("if got is not MISSING:")
                with out.indent():
                    out.line("return got")
            if u.on_unknown == "keep-warn":
                out.line(f"rt.warn_unknown(cx, path, {pystr(n)}, tag)")
            elif u.on_unknown != "keep":
                raise ValueError(f"{n}: on_unknown {u.on_unknown!r} is not supported")
            out.line(f"return rt.unknown(cx, obj, {tag}, tag)")

    def emit_untagged(self, u: Union) -> None:
        out = self.out
        n = u.name
        self.table.append(n)
        out.line()
        out.line()
        self.def_line(f"d_{n}", "Any")
        described = []
        with out.indent():
            for v in u.variants:
                payload = given(v.payload, f"{n}.{v.name}: payload")
                described.append(describe(self.m, payload))
                free = isinstance(self.m.target(payload), JsonRef)
                out.line(f"got = rt.attempt(cx, v, path, {'rt.d_raw_node' if free else self.item_fn(payload)})")
                out.line("if got is not MISSING:")
                with out.indent():
                    out.line("return got")
            expected = "one of " + ", ".join(described) if len(described) > 1 else described[0]
            write(out, "raise ", Call("rt.no_variant(", ["path", "v", pystr(expected)], ")"))


def emit(spec: Spec) -> str:
    text = Emitter(spec).emit()
    too_long = [line for line in text.splitlines() if len(line) > LINE and not line.lstrip().startswith(("#", '"'))]
    if too_long:
        raise ValueError(f"generated lines over {LINE} columns: {too_long[:3]}")
    return text
