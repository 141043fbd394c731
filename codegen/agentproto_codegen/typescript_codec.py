"""Emit the TypeScript validators and encoders of a surface: one straight-line function
per type, no schema read at run time.

``ts/src/generated/acp/<surface>.codec.ts`` walks a payload read by ``codec/reader.ts``
(repeated keys and value spans kept) and builds plain objects of the types module, or
throws ``DecodeError`` in the wording every SDK shares, with its JSON path.  It follows the Rust
decoder's order of checks (the Python slow path, ``python_decode.py``, does the same):

* members are read in received order, one ``switch`` on the key; a repeated known key
  fails at the key;
* a tagged union reads its tag first (the first member of that name), then gives the
  other members, in order, to the variant; an unknown tag is kept as an
  ``UnknownVariant`` (a warning for a closed union), unless the union first tries its
  default variant;
* missing required members and ``minLength``/``minItems`` are checked after the whole
  object, field by field in schema order;
* lenient fields (``x-deserialize-default-on-error``), skip-invalid-items arrays and
  default-on-null fields salvage with a warning at the value's path.

Per struct: ``d_<Name>(value, path, cx)`` checks that the value is an object, and
``f_<Name>(members, path, cx, o)`` reads the members into ``o`` (what a tagged variant
calls with the tag already in ``o`` and removed from the members); an object with a
union flattened into it has ``g_<Name>(object, path, cx, o)`` instead.  Encoders write
the canonical encoding (vectors/README.md): ``m_<Name>`` a struct's members in schema
order (each with a leading comma), ``n_<Name>`` a union value's members, ``e_<Name>`` a
whole value.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

from .emit import Writer, given, ts_str
from .names import ts_property
from .model import Alias, ArrayRef, Enum, Field, JsonRef, MapRef, NamedRef, PrimRef, Spec, Struct, TypeRef, Union, prim_phrase
from .typescript import INTEGERS, Model, by_owner, codec_names, header, module_name, name_list, payload_of
from .typescript_share import Plan, plan_for

DECODE_PRIMS = {
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
ENCODE_PRIMS = {"string": "rt.str", "bool": "rt.bool", "f64": "rt.f64", **{p: "rt.int" for p in INTEGERS}}
DECODE_RUNTIME = {"RequestId": "rt.d_request_id", "Error": "rt.d_error_object", "ErrorCode": "rt.d_i32"}
ENCODE_RUNTIME = {"RequestId": "rt.e_request_id", "Error": "rt.e_error_object", "ErrorCode": "rt.int"}

_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
# A call or mention of a declaration's function (`d_Name`, `f_Name`, ...), and a definition.
_FUNCTION_REF = re.compile(r"(?<![\w.$])([dfgmne]_[A-Za-z_$][\w$]*)")
_FUNCTION_DEF = re.compile(r"^(?:export )?function ([dfgmne]_[\w$]+)\(", re.M)


def key_suffix(key: str) -> str:
    """The JSON path step of a member key, as the runtime renders it."""
    return f".{key}" if _PLAIN_KEY.fullmatch(key) else f"[{json.dumps(key, ensure_ascii=False)}]"


def access(obj: str, key: str) -> str:
    """A property read: ``v.key`` or ``v["odd key"]``."""
    return f"{obj}.{key}" if _PLAIN_KEY.fullmatch(key) else f"{obj}[{ts_str(key)}]"


def describe(t: TypeRef) -> str:
    """A type as an untagged union's error names it (vectors/README.md, "Error texts")."""
    if isinstance(t, NamedRef):
        return t.name
    if isinstance(t, ArrayRef):
        return f"an array of {describe(t.item)}"
    if isinstance(t, PrimRef):
        return prim_phrase(t.prim)
    return "a JSON value"


def canonical_double(x: float) -> str:
    """Rule 7 for a default written into generated code (what `encodeDouble` writes)."""
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign, digit_tuple, exp = Decimal(repr(x)).as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    n = len(digit_tuple) + exp - 1
    head = "-" if sign else ""
    if n < -5 or n > 15:
        tail = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{head}{digits[0]}{tail}e{'-' if n < 0 else '+'}{abs(n)}"
    if n < 0:
        return f"{head}0.{'0' * (-n - 1)}{digits}"
    if len(digits) <= n + 1:
        return f"{head}{digits}{'0' * (n + 1 - len(digits))}.0"
    return f"{head}{digits[: n + 1]}.{digits[n + 1 :]}"


class Emitter:
    def __init__(self, spec: Spec, plan: Plan | None = None) -> None:
        self.spec = spec
        self.m = Model(spec)
        self.decls = spec.decls
        self.plan = plan if plan is not None else plan_for(spec)
        self.out = Writer("  ")
        self.helpers: dict[str, str] = {}  # type key -> helper function name
        self.helper_out = Writer("  ")
        self.enc_helpers: dict[str, str] = {}
        self.fits_needed: set[str] = set()  # structs an untagged union tells apart by members
        self.members_needed: set[str] = set()  # unions flattened into an object

    # -- decoding: item functions ---------------------------------------------------

    def item_fn(self, t: TypeRef, wide: bool = False) -> str:
        """A function `(value, path, cx) => decoded` for values of `t` (not free-form JSON)."""
        t = self.m.target(t)
        if isinstance(t, PrimRef):
            if t.prim not in DECODE_PRIMS:
                raise ValueError(f"primitive {t.prim} is not supported by the TypeScript emitter")
            if wide and t.prim in INTEGERS:
                return f"rt.d_{t.prim}_big"
            return DECODE_PRIMS[t.prim]
        if isinstance(t, NamedRef):
            if t.name in DECODE_RUNTIME:
                return DECODE_RUNTIME[t.name]
            d = self.m.resolve(t)
            return "rt.d_str" if isinstance(d, Enum) and d.open else f"d_{t.name}"
        if isinstance(t, (ArrayRef, MapRef)):
            key = repr(t)
            if key not in self.helpers:
                kind = "list" if isinstance(t, ArrayRef) else "map"
                name = f"{kind}_{len(self.helpers)}"
                self.helpers[key] = name
                inner = t.item if isinstance(t, ArrayRef) else t.value
                returns = self.m.ts_type(t, "t.")
                w = self.helper_out
                w.line()
                with w.block(f"function {name}(v: JNode, path: string, cx: rt.Ctx): {returns} {{"):
                    if isinstance(self.m.target(inner), JsonRef):
                        w.line(f"return rt.d_{kind}_raw(v, path, cx);")
                    else:
                        w.line(f"return rt.d_{kind}(v, path, cx, {self.item_fn(inner)});")
            return self.helpers[key]
        raise ValueError(f"no item function for {t}")

    def value_expr(self, t: TypeRef, p: str) -> str:
        """Decodes the member `m` (value, span) of type `t` at the path `p` (an expression)."""
        target = self.m.target(t)
        if isinstance(target, JsonRef):
            if target.object_only:
                return f"rt.d_raw_object(m.value, {p}, cx, m.start, m.end)"
            return "rt.d_raw(cx, m.start, m.end)"
        return self.dec_call(target, f"m.value, {p}, cx")

    def dec_call(self, t: TypeRef, args: str) -> str:
        """A call that decodes a value of `t` (not free-form JSON) from `args` (value,
        path, context): a list or a map calls the runtime with its item's function, the
        rest their function."""
        t = self.m.target(t)
        if isinstance(t, (ArrayRef, MapRef)):
            kind = "list" if isinstance(t, ArrayRef) else "map"
            inner = t.item if isinstance(t, ArrayRef) else t.value
            if isinstance(self.m.target(inner), JsonRef):
                return f"rt.d_{kind}_raw({args})"
            return f"rt.d_{kind}({args}, {self.item_fn(inner)})"
        return f"{self.item_fn(t)}({args})"

    # -- encoding: item functions ---------------------------------------------------

    def enc_call(self, t: TypeRef, x: str) -> str:
        """An expression that encodes the value `x` of `t` (a list or a map through the
        runtime with its item's encoder, the rest through their encoder)."""
        target = self.m.target(t)
        if isinstance(target, (ArrayRef, MapRef)):
            kind = "list" if isinstance(target, ArrayRef) else "map"
            inner = target.item if isinstance(target, ArrayRef) else target.value
            return f"rt.{kind}({x}, {self.enc_fn(inner)})"
        return f"{self.enc_fn(t)}({x})"

    def enc_fn(self, t: TypeRef) -> str:
        """A function `(value) => JSON text` for values of `t`."""
        t = self.m.target(t)
        if isinstance(t, PrimRef):
            return ENCODE_PRIMS[t.prim]
        if isinstance(t, JsonRef):
            return "rt.raw"
        if isinstance(t, NamedRef):
            if t.name in ENCODE_RUNTIME:
                return ENCODE_RUNTIME[t.name]
            d = self.m.resolve(t)
            return "rt.str" if isinstance(d, Enum) else f"e_{t.name}"
        if isinstance(t, (ArrayRef, MapRef)):
            key = repr(t)
            if key not in self.enc_helpers:
                kind = "list" if isinstance(t, ArrayRef) else "map"
                name = f"enc_{kind}_{len(self.enc_helpers)}"
                self.enc_helpers[key] = name
                inner = t.item if isinstance(t, ArrayRef) else t.value
                w = self.helper_out
                w.line()
                with w.block(f"function {name}(v: {self.m.ts_type(t, 't.')}): string {{"):
                    w.line(f"return rt.{kind}(v, {self.enc_fn(inner)});")
            return self.enc_helpers[key]
        raise ValueError(f"no encoder for {t}")

    # -- module -----------------------------------------------------------------------

    def emit(self) -> str:
        for d in self.decls.values():
            if not self.plan.own_codec(d.name):
                continue
            if isinstance(d, Enum):
                self.emit_enum(d)
            elif isinstance(d, Struct):
                if d.flatten:
                    self.emit_flattened(d)
                    self.members_needed.add(d.flatten)
                else:
                    self.emit_struct(d)
            elif isinstance(d, Union):
                if d.strategy == "tagged":
                    self.emit_tagged(d)
                else:
                    self.emit_untagged(d)
            elif isinstance(d, Alias):
                self.emit_alias(d)
        for name in sorted(self.members_needed):
            u = self.decls[name]
            assert isinstance(u, Union)
            if u.strategy == "untagged":
                # Written here even when another module holds the union: that module
                # writes it only if one of its own objects flattens the union.
                self.emit_untagged_members(u)
        for name in sorted(self.fits_needed):
            self.emit_fits(name)
        out = self.out
        out.line()
        base = self.plan.codec_base
        # With a base, the tables are the base's (the same function for every name in
        # `codec_same`) and then this surface's other entries, which replace the base's.
        rest = [n for n in codec_names(self.m) if not base or n not in self.plan.codec_same]
        out.line("/** The validator of every declared type, by schema name. */")
        with out.block("export const DECODERS: { readonly [K in keyof t.Types]: rt.Decoder<t.Types[K]> } = {", "};"):
            if base:
                out.line("...BASE_DECODERS,")
            for name in rest:
                d = self.decls[name]
                out.line(f"{name}: {'rt.d_str' if isinstance(d, Enum) and d.open else f'd_{name}'},")
        out.line()
        out.line("/** The canonical encoder of every declared type, by schema name. */")
        with out.block(
            "export const ENCODERS: { readonly [K in keyof t.Types]: (value: t.Types[K]) => string } = {", "};"
        ):
            if base:
                out.line("...BASE_ENCODERS,")
            for name in rest:
                d = self.decls[name]
                out.line(f"{name}: {'rt.str' if isinstance(d, Enum) else f'e_{name}'},")
        head = Writer("  ")
        head.lines(header(self.spec, "the validators and the canonical encoders"))
        head.line()
        head.line('import type { JMember, JNode, JObject } from "../../codec/reader.js";')
        head.line('import * as rt from "../../codec/runtime.js";')
        head.line('import { MISSING, type Missing } from "../../codec/runtime.js";')
        head.line('import { RawJson, UnknownVariant } from "../../codec/values.js";')
        head.line(f'import type * as t from "./{module_name(self.spec)}.js";')
        helpers = self.helper_out.text() if self.helpers or self.enc_helpers else ""
        body = helpers + out.text()
        head.lines(self.imports(body))
        if base:
            head.line(f'import {{ DECODERS as BASE_DECODERS, ENCODERS as BASE_ENCODERS }} from "./{base}.codec.js";')
        return head.text() + body

    def imports(self, body: str) -> list[str]:
        """The imports of the functions `body` uses that other modules hold."""
        defined = set(_FUNCTION_DEF.findall(body))
        used: dict[str, None] = {}
        for fn in _FUNCTION_REF.findall(body):
            if fn not in defined and fn[2:] in self.decls:
                used[fn] = None
        owner = {fn: self.plan.codec.get(fn[2:], self.plan.stem) for fn in used}
        for fn, stem in owner.items():
            if stem == self.plan.stem:
                raise ValueError(f"{fn}: used by the {stem} codec module, which does not write it")
        lines = []
        for stem, names in by_owner(list(used), owner, self.plan.stem).items():
            lines += name_list("import {", names, f'}} from "./{stem}.codec.js";')
        return lines

    def fn_head(self, name: str, returns: str) -> str:
        return f"export function {name}(v: JNode, path: string, cx: rt.Ctx): {returns} {{"

    def emit_enum(self, d: Enum) -> None:
        """A closed enum's validator (`d_<Name>`, its values in `V_<Name>`); an open one
        decodes as a string (`rt.d_str`), and every enum encodes as one (`rt.str`)."""
        if d.open:
            return
        out = self.out
        out.line()
        values = ", ".join(ts_str(v) for v in d.values)
        out.line(f"const V_{d.name}: readonly t.{d.name}[] = [{values}];")
        out.line()
        with out.block(self.fn_head(f"d_{d.name}", f"t.{d.name}")):
            out.line(f"return rt.d_enum(v, path, V_{d.name});")

    def emit_alias(self, d: Alias) -> None:
        target = self.m.target(d.target)
        if not isinstance(target, (JsonRef, NamedRef)):
            return  # a scalar alias decodes and encodes as its primitive, where it is used
        out = self.out
        out.line()
        with out.block(self.fn_head(f"d_{d.name}", f"t.{d.name}")):
            if isinstance(target, JsonRef):
                out.line("return rt.d_raw_node(v, path, cx);")
            else:
                out.line(f"return {self.dec_call(target, 'v, path, cx')};")
        out.line()
        with out.block(f"export function e_{d.name}(v: t.{d.name}): string {{"):
            out.line(f"return {self.enc_call(d.target, 'v')};")

    # -- structs --------------------------------------------------------------------

    def emit_struct(self, d: Struct) -> None:
        out = self.out
        n = d.name
        out.line()
        with out.block(self.fn_head(f"d_{n}", f"t.{n}")):
            out.line(f"return f_{n}(rt.expectObject(v, path, {ts_str(n)}).members, path, cx, {{}});")
        out.line()
        head = f"export function f_{n}(members: readonly JMember[], path: string, cx: rt.Ctx, o: Record<string, unknown>): t.{n} {{"
        with out.block(head):
            self.fields_loop(d, "members")
            self.construct(d)
            out.line(f"return o as unknown as t.{n};")
        self.emit_struct_encoder(d)

    def emit_flattened(self, d: Struct) -> None:
        out = self.out
        n = d.name
        union = given(d.flatten, "flatten")
        out.line()
        with out.block(self.fn_head(f"d_{n}", f"t.{n}")):
            out.line(f"return g_{n}(rt.expectObject(v, path, {ts_str(n)}), path, cx, {{}});")
        out.line()
        head = f"export function g_{n}(obj: JObject, path: string, cx: rt.Ctx, o: Record<string, unknown>): t.{n} {{"
        with out.block(head):
            self.fields_loop(d, "obj.members")
            self.construct(d)
            out.line(f"o.variant = d_{union}(obj, path, cx);")
            out.line(f"return o as unknown as t.{n};")
        self.emit_struct_encoder(d)

    def local(self, i: int, f: Field) -> str:
        return f"x{i}_" + re.sub(r"[^A-Za-z0-9]", "_", f.wire)

    def fields_loop(self, d: Struct, members: str) -> None:
        out = self.out
        for i, f in enumerate(d.fields):
            out.line(f"let {self.local(i, f)}: {self.local_type(f)} = MISSING;")
        if not d.fields:
            return
        words = (len(d.fields) + 31) // 32
        for w in range(words):
            out.line(f"let seen{w} = 0;")
        with out.block(f"for (const m of {members}) {{"):
            with out.block("switch (m.key) {"):
                for i, f in enumerate(d.fields):
                    word, bit = f"seen{i // 32}", f"0x{1 << (i % 32):x}"
                    with out.block(f"case {ts_str(f.wire)}: {{"):
                        out.line(f"if (({word} & {bit}) !== 0) throw rt.duplicate(path, {ts_str(f.wire)});")
                        out.line(f"{word} |= {bit};")
                        self.decode_field(d, i, f, f"path + {ts_str(key_suffix(f.wire))}")
                        out.line("break;")
        for i, f in enumerate(d.fields):
            self.assemble(d, i, f)

    def local_type(self, f: Field) -> str:
        base = self.m.ts_type(f.type, "t.")
        if f.nullable or f.skip_invalid_items:
            base += " | null"
        return f"{base} | Missing"

    def decode_field(self, d: Struct, i: int, f: Field, p: str) -> None:
        """Decodes the member `m` into the field's local; `p` is the expression of its path
        (built where a value is decoded, in the call)."""
        out = self.out
        x = self.local(i, f)
        where = f"{d.name}.{f.wire}"
        target = self.m.target(f.type)
        if f.skip_invalid_items:
            if not isinstance(target, ArrayRef):
                raise ValueError(f"{where}: skip-invalid-items on a non-array")
            if isinstance(self.m.target(target.item), JsonRef):
                raise ValueError(f"{where}: skip-invalid-items over free-form items")
            item = self.item_fn(target.item)
            nullable = "true" if f.nullable else "false"
            lenient = "true" if f.lenient else "false"
            out.line(f"{x} = rt.items(cx, m.value, {p}, {item}, {nullable}, {lenient});")
            if f.required:
                out.line(f"if ({x} === MISSING || {x} === null) {x} = [];")
            return
        expr = self.value_expr(f.type, p)
        if f.default_on_null and not f.nullable and not f.lenient:
            if isinstance(target, JsonRef):
                raise ValueError(f"{where}: default-on-null on free-form JSON")
            out.line(f"{x} = rt.defaultOnNull(cx, m.value, {p}, {self.item_fn(f.type)});")
            if f.required:
                if not isinstance(target, (ArrayRef, MapRef)):
                    raise ValueError(f"{where}: required default-on-null field that is not a list or a map")
                empty = "[]" if isinstance(target, ArrayRef) else "rt.emptyMap()"
                out.line(f"if ({x} === MISSING) {x} = {empty};")
            return
        value = f"m.value === null ? null : {expr}" if f.nullable else expr
        if f.lenient:
            if f.required and not f.has_default:
                raise ValueError(f"{where}: lenient required field without skip-invalid-items")
            # The runtime's helpers hold the try/catch of the common cases (every `_meta`
            # is one): one line per member instead of six.
            if isinstance(target, JsonRef) and target.object_only:
                out.line(f"{x} = rt.lenientRawObject(m, {p}, cx, {'true' if f.nullable else 'false'});")
                return
            if not isinstance(target, JsonRef):
                call = f"rt.lenient(cx, m.value, {p}, {self.item_fn(target)})"
                out.line(f"{x} = {f'm.value === null ? null : {call}' if f.nullable else call};")
                return
            out.line(f"const p = {p};")
            out.line("const mark = cx.warnings.length;")
            out.line("try {")
            with out.indent():
                out.line(f"{x} = {value.replace(p, 'p')};")
            out.line("} catch (err) {")
            with out.indent():
                out.line(f"{x} = rt.dropped(cx, mark, p, err);")
            out.line("}")
            return
        out.line(f"{x} = {value};")

    def assemble(self, d: Struct, i: int, f: Field) -> None:
        out = self.out
        x = self.local(i, f)
        if f.has_default:
            return  # filled in when the object is built
        if f.required:
            out.line(f"if ({x} === MISSING) throw rt.missing(path, {ts_str(f.wire)});")
        for bound, helper in ((f.min_length, "minLength"), (f.min_items, "minItems")):
            if bound is None:
                continue
            call = f"rt.{helper}(path + {ts_str(key_suffix(f.wire))}, {x}, {bound});"
            conds = []
            if not f.required:
                conds.append(f"{x} !== MISSING")
            if f.nullable:
                conds.append(f"{x} !== null")
            out.line(f"if ({' && '.join(conds)}) {call}" if conds else call)

    def construct(self, d: Struct) -> None:
        out = self.out
        for i, f in enumerate(d.fields):
            x = self.local(i, f)
            key = access("o", f.wire)
            if f.has_default:
                out.line(f"{key} = {x} === MISSING ? {self.default_value(d, f)} : {x};")
            elif f.required:
                out.line(f"{key} = {x};")
            else:
                out.line(f"if ({x} !== MISSING) {key} = {x};")

    def default_value(self, d: Struct, f: Field) -> str:
        t = self.m.target(f.type)
        value = f.default
        if isinstance(t, ArrayRef):
            return "[]"
        if isinstance(t, MapRef):
            return "rt.emptyMap()"
        if isinstance(t, PrimRef):
            if t.prim == "string":
                return ts_str(value)
            if t.prim == "bool":
                return "true" if value else "false"
            if t.prim == "f64":
                return repr(float(value))
            return str(int(value))
        target = self.m.resolve(t)
        if isinstance(target, Enum):
            return ts_str(value)
        if isinstance(target, Struct) and not target.flatten:
            return f"f_{target.name}([], path, cx, {{}})"
        raise ValueError(f"{d.name}.{f.wire}: unsupported default {value!r}")

    def default_json(self, d: Struct, f: Field) -> str:
        """The canonical text of a member's default (what the encoder writes when it is absent)."""
        t = self.m.target(f.type)
        if isinstance(t, ArrayRef):
            return "[]"
        if isinstance(t, MapRef):
            return "{}"
        if isinstance(t, PrimRef):
            if t.prim == "f64":
                return canonical_double(float(f.default))
            if t.prim in INTEGERS:
                return str(int(f.default))
            return json.dumps(f.default, ensure_ascii=False)
        target = self.m.resolve(t)
        if isinstance(target, Enum):
            return json.dumps(f.default, ensure_ascii=False)
        if isinstance(target, Struct) and not target.flatten:
            return ""  # computed at run time: the struct with every default of its own
        raise ValueError(f"{d.name}.{f.wire}: unsupported default {f.default!r}")

    # -- struct encoders ------------------------------------------------------------

    def emit_struct_encoder(self, d: Struct) -> None:
        out = self.out
        n = d.name
        out.line()
        with out.block(f"export function m_{n}(v: t.{n}): string {{"):
            out.line('let s = "";')
            for f in d.fields:
                self.encode_field(d, f)
            if d.flatten:
                own = "[" + ", ".join(ts_str(f.wire) for f in d.fields) + "]"
                out.line(f"s += rt.skipMembers(n_{d.flatten}(v.variant), {own});")
            out.line("return s;")
        out.line()
        with out.block(f"export function e_{n}(v: t.{n}): string {{"):
            out.line(f"return rt.object(m_{n}(v));")

    def encode_field(self, d: Struct, f: Field) -> None:
        out = self.out
        get = access("v", f.wire)
        key = ts_str("," + json.dumps(f.wire, ensure_ascii=False) + ":")
        enc = self.enc_call(f.type, get)
        if f.nullable:
            enc = f'({get} === null ? "null" : {enc})'
        if f.has_default:
            text = self.default_json(d, f)
            if text:
                default = ts_str(text)
            else:
                target = self.m.resolve(self.m.target(f.type))
                assert target is not None
                default = f"e_{target.name}({{}} as t.{target.name})"
            out.line(f"s += {key} + ({get} === undefined ? {default} : {enc});")
        elif f.required:
            out.line(f"s += {key} + {enc};")
        else:
            out.line(f"if ({get} !== undefined) s += {key} + {enc};")

    # -- unions ---------------------------------------------------------------------

    def emit_tagged(self, u: Union) -> None:
        out = self.out
        n = u.name
        tag_field = given(u.tag_field, f"{n}: tag field")
        tag = ts_str(tag_field)
        out.line()
        default = None
        with out.block(self.fn_head(f"d_{n}", f"t.{n}")):
            out.line(f"const obj = rt.expectObject(v, path, {ts_str(n)});")
            uses_rest = any(
                sh.kind in ("tagged", "wrapped", "flattened") for v, sh in zip(u.variants, self.m.shapes[n]) if v.tag is not None
            )
            out.line(f"const [tag{', rest' if uses_rest else ''}] = rt.splitTag(obj, {tag}, path);")
            with out.block("switch (tag) {"):
                for variant, shape in zip(u.variants, self.m.shapes[n]):
                    if variant.tag is None:
                        default = shape
                        continue
                    literal = f"{{ {ts_property(tag_field)}: {ts_str(variant.tag)} }}"
                    out.line(f"case {ts_str(variant.tag)}:")
                    with out.indent():
                        if shape.kind == "empty":
                            out.line(f"return {literal} as t.{n};")
                        elif shape.kind == "wrapped":
                            inner = f"d_{shape.payload}(rt.sub(obj, rest), path, cx)"
                            out.line(
                                f"return {{ {ts_property(tag_field)}: {ts_str(variant.tag)}, variant: {inner} }} as t.{n};"
                            )
                        elif shape.kind == "flattened":
                            # Without the tag: a union flattened into the payload that keeps an
                            # unknown variant's members must not keep this tag among them.
                            out.line(f"return g_{shape.payload}(rt.sub(obj, rest), path, cx, {literal}) as t.{n};")
                        else:
                            out.line(f"return f_{shape.payload}(rest, path, cx, {literal}) as t.{n};")
            with out.block("if (tag === null) {"):
                if default is None:
                    out.line(f"throw rt.missing(path, {tag});")
                elif default.kind == "flattened":
                    out.line(f"return g_{default.payload}(obj, path, cx, {{}}) as t.{n};")
                else:
                    out.line(f"return f_{default.payload}(obj.members, path, cx, {{}}) as t.{n};")
            if u.unknown_to_default and default is not None:
                out.line(f"const got = rt.attempt(cx, obj, path, d_{default.payload});")
                out.line(f"if (got !== MISSING) return got as t.{n};")
            if u.on_unknown == "keep-warn":
                out.line(f"rt.warnUnknown(cx, path, {ts_str(n)}, tag);")
            elif u.on_unknown != "keep":
                raise ValueError(f"{n}: on_unknown {u.on_unknown!r} is not supported")
            out.line(f"return rt.unknown(cx, obj, {tag}, tag) as t.{n};")
        self.emit_tagged_encoder(u)

    def emit_tagged_encoder(self, u: Union) -> None:
        out = self.out
        n = u.name
        tag_field = given(u.tag_field, "tag field")
        out.line()
        with out.block(f"export function n_{n}(v: t.{n}): string {{"):
            out.line("if (v instanceof UnknownVariant) return rt.unknownMembers(v, []);")
            default = None
            with out.block(f"switch ({access('v', tag_field)}) {{"):
                for variant, shape in zip(u.variants, self.m.shapes[n]):
                    if variant.tag is None:
                        default = shape
                        continue
                    head = ts_str("," + json.dumps(tag_field) + ":" + json.dumps(variant.tag, ensure_ascii=False))
                    out.line(f"case {ts_str(variant.tag)}:")
                    with out.indent():
                        if shape.kind == "empty":
                            out.line(f"return {head};")
                        elif shape.kind == "wrapped":
                            out.line(f"return {head} + n_{shape.payload}(v.variant);")
                        else:
                            out.line(f"return {head} + m_{shape.payload}(v);")
            if default is not None:
                out.line(f"return m_{default.payload}(v);")
            else:
                out.line(f"throw new TypeError({ts_str(f'not a variant of {n}')});")
        out.line()
        with out.block(f"export function e_{n}(v: t.{n}): string {{"):
            out.line(f"return v instanceof UnknownVariant ? v.raw.text : rt.object(n_{n}(v));")

    def emit_untagged(self, u: Union) -> None:
        out = self.out
        n = u.name
        wide = self.m.wide_integers(u)
        out.line()
        described = []
        with out.block(self.fn_head(f"d_{n}", f"t.{n}")):
            for i, variant in enumerate(u.variants):
                payload = payload_of(u, variant)
                described.append(describe(payload))
                free = isinstance(self.m.target(payload), JsonRef)
                fn = "rt.d_raw_node" if free else self.item_fn(payload, wide)
                out.line(f"const got{i} = rt.attempt(cx, v, path, {fn});")
                out.line(f"if (got{i} !== MISSING) return got{i};")
            expected = "one of " + ", ".join(described) if len(described) > 1 else described[0]
            out.line(f"throw rt.noVariant(path, v, {ts_str(expected)});")
        out.line()
        with out.block(f"export function e_{n}(v: t.{n}): string {{"):
            for variant in u.variants:
                payload = payload_of(u, variant)
                out.line(f"if ({self.fits(payload, 'v', wide)}) return {self.enc_call(payload, 'v')};")
            out.line(f"throw new TypeError({ts_str(f'not a value of {n}')});")

    def emit_untagged_members(self, u: Union) -> None:
        """`n_<Name>`: the members of an untagged union's value (it is flattened into an object)."""
        out = self.out
        n = u.name
        out.line()
        with out.block(f"export function n_{n}(v: t.{n}): string {{"):
            for variant in u.variants:
                payload = payload_of(u, variant)
                d = self.m.resolve(payload)
                if not isinstance(d, Struct) or d.flatten:
                    raise ValueError(f"{n}: a flattened untagged union of something other than plain structs")
                out.line(f"if ({self.fits(payload, 'v', False)}) return m_{d.name}(v);")
            out.line(f"throw new TypeError({ts_str(f'not a value of {n}')});")

    def fits(self, t: TypeRef, x: str, wide: bool) -> str:
        """An expression: whether the value `x` is one of type `t` (how an untagged union's
        encoder picks the first variant the value fits, rule 4)."""
        target = self.m.target(t)
        if isinstance(target, PrimRef):
            if target.prim == "string":
                return f'typeof {x} === "string"'
            if target.prim == "bool":
                return f'typeof {x} === "boolean"'
            if target.prim == "f64":
                return f'typeof {x} === "number"'
            if wide:
                return f'typeof {x} === "bigint"'
            return f'(typeof {x} === "bigint" || Number.isInteger({x}))'
        if isinstance(target, JsonRef):
            return f"{x} instanceof RawJson"
        if isinstance(target, ArrayRef):
            return f"(Array.isArray({x}) && {x}.every((item) => {self.fits(target.item, 'item', wide)}))"
        if isinstance(target, MapRef):
            return f'(typeof {x} === "object" && {x} !== null && !Array.isArray({x}))'
        d = self.m.resolve(target)
        if isinstance(d, Struct):
            self.fits_needed.add(d.name)
            return f"is_{d.name}({x})"
        raise ValueError(f"{t}: an untagged union variant the encoder cannot tell apart")

    def emit_fits(self, name: str) -> None:
        d = self.decls[name]
        assert isinstance(d, Struct)
        out = self.out
        out.line()
        required = [f for f in d.fields if f.required and not f.has_default]
        with out.block(f"function is_{name}(v: unknown): v is t.{name} {{"):
            out.line(
                'if (typeof v !== "object" || v === null || Array.isArray(v) || v instanceof RawJson) return false;'
            )
            if required:
                checks = " && ".join(f"{ts_str(f.wire)} in v" for f in required)
                out.line(f"return {checks};")
            else:
                out.line("return true;")


def emit(spec: Spec, plan: Plan | None = None) -> str:
    """`ts/src/generated/acp/<surface>.codec.ts`; `plan` says which declarations other
    modules hold (by default the pinned ACP family's plan, `typescript_share`)."""
    return Emitter(spec, plan).emit()
