"""Emit Python from the model: msgspec types and the method table (``emit``), and the
slow path's validators (``python_decode.emit``).

The types module (``python/src/agentproto/acp/generated/<surface>.py``) holds:

* one ``msgspec.Struct`` per struct (``kw_only``, fields in schema order renamed to their
  wire keys, optional fields ``T | UnsetType = UNSET``, nullable ones ``T | None``,
  defaults written, free-form JSON as ``msgspec.Raw``);
* tagged unions as msgspec tagged Structs: a payload struct used only by one variant
  carries the tag itself, a shared one gets a subclass per variant
  (``SessionUpdateAgentMessageChunk(ContentChunk, tag=...)``), a variant without a body
  an empty tagged Struct; an unknown variant is an ``agentproto.codec.Unknown``;
* objects with a union flattened into them as ``Flattened`` classes (msgspec cannot
  express them; they encode through the codec's hook);
* closed enums as ``Literal`` aliases, open ones as ``str``;
* ``PROTOCOL_VERSION``, ``RULES`` and ``METHODS`` (every method with its rules).

Union aliases have two spellings: the one type checkers see (every variant, ``Unknown``
included) and the one msgspec reads at run time (only what its fast path can decode;
``SlowOnly`` where it can decode nothing), so that anything msgspec cannot decode falls
to the slow path. The output is already formatted as ``ruff format`` would write it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from . import names, python_roles
from .emit import DocStyle, Writer, doc_comment, given, python_str
from .model import Alias, ArrayRef, Decl, Enum, Field, JsonRef, MapRef, Method, NamedRef, PrimRef, Spec, Struct, TypeRef, Union
from .model import resolve

LINE = 120  # python/pyproject.toml [tool.ruff] line-length

INTS = {"i16": "I16", "i32": "I32", "i64": "I64", "u16": "U16", "u32": "U32", "u64": "U64"}
PRIMS = {"string": "str", "bool": "bool", "f64": "float", **INTS}

# Definitions owned by the JSON-RPC layer (acp.RUNTIME_TYPES).
RUNTIME = {"RequestId": "RequestId", "Error": "ErrorObject", "ErrorCode": "I32"}


def natural_key(name: str) -> list[Any]:
    """A natural sort key: runs of digits compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def import_key(name: str) -> tuple[int, str]:
    """How ruff's isort orders the names of one `from … import`: constants, classes, then
    the rest, each case-insensitively."""
    return isort_key(name)[0], name.lower()


def isort_key(name: str) -> tuple[int, list[Any]]:
    """How ruff sorts `__all__` (RUF022): SCREAMING_CASE, then CamelCase, then the rest."""
    if name.isupper() or (name.replace("_", "").isupper()):
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return group, natural_key(name)


def module_name(spec: Spec) -> str:
    """``v1``, ``v1_unstable``, ``v2``, ``v2_unstable``."""
    return spec.version + ("_unstable" if spec.surface == "unstable" else "")


def pystr(s: str) -> str:
    """A Python string literal as ruff writes it: double quotes, unless the text holds
    double quotes and no single ones."""
    if '"' in s and "'" not in s:
        body = python_str(s)[1:-1].replace('\\"', '"')
        return "'" + body + "'"
    return python_str(s)


def field_name(f: Field) -> str:
    """``sessionId`` -> ``session_id``, ``_meta`` -> ``meta``, ``type`` -> ``type_``."""
    return names.python_ident(names.snake(f.wire.lstrip("_") or "meta"))


def key_suffix(key: str) -> str:
    """The JSON path step of a member key, as the runtime renders it."""
    plain = key and key.isascii() and (key[0].isalpha() or key[0] in "_$") and all(c.isalnum() or c in "_$" for c in key)
    return f".{key}" if plain else f"[{json.dumps(key, ensure_ascii=False)}]"


# ---------------------------------------------------------------------------
# Layout: the few expression shapes the emitter writes, laid out as `ruff format` would
# (flat when it fits; else the contents on one indented line; else one item per line
# with a trailing comma).


@dataclass
class Call:
    """``head`` + items + ``close``: a call, a subscript, a tuple, a class head."""

    head: str  # up to and including the opening bracket
    items: list["Node"]
    close: str  # the closing bracket (and anything glued to it, e.g. ``):``)
    magic: bool = False  # always one item per line (a trailing comma in the source)


@dataclass
class Kw:
    name: str
    value: "Node"


@dataclass
class Ors:
    """``a | b | c``, parenthesised when it must break."""

    parts: list[str]


@dataclass
class Paren:
    """An expression that ruff parenthesises onto its own line when it does not fit."""

    text: str


Node = str | Call | Kw | Ors | Paren


def flat(n: Node) -> str:
    if isinstance(n, str):
        return n
    if isinstance(n, Kw):
        return f"{n.name}={flat(n.value)}"
    if isinstance(n, Ors):
        return " | ".join(n.parts)
    if isinstance(n, Paren):
        return n.text
    inner = ", ".join(flat(i) for i in n.items)
    if n.head.endswith("(") and n.head.strip() == "(" and len(n.items) == 1:
        inner += ","  # a one-item tuple
    return f"{n.head}{inner}{n.close}"


def layout(n: Node, col: int, base: int, suffix: str = "") -> list[str]:
    """Lines for `n`, whose first line starts at column `col` on a line indented `base`
    columns (continuation lines are relative to that indentation)."""
    one = flat(n)
    if isinstance(n, str) or (col + len(one) + len(suffix) <= LINE and not (isinstance(n, Call) and n.magic)):
        return [one + suffix]
    if isinstance(n, Kw):
        lines = layout(n.value, col + len(n.name) + 1, base, suffix)
        return [f"{n.name}={lines[0]}", *lines[1:]]
    if isinstance(n, Paren):
        return ["(", "    " + n.text, ")" + suffix]
    if isinstance(n, Ors):
        joined = " | ".join(n.parts)
        if base + 4 + len(joined) <= LINE:
            return ["(", "    " + joined, ")" + suffix]
        return ["(", "    " + n.parts[0], *("    | " + p for p in n.parts[1:]), ")" + suffix]
    inner = ", ".join(flat(i) for i in n.items)
    # A collection literal (a tuple) is split one item per line; a call or a subscript
    # first tries its contents on one indented line.
    if not n.magic and base + 4 + len(inner) <= LINE and n.head.strip() not in ("(", "["):
        return [n.head, "    " + inner, n.close + suffix]
    lines = [n.head]
    for item in n.items:
        lines += ["    " + line for line in layout(item, base + 4, base + 4, ",")]
    return [*lines, n.close + suffix]


def write(out: Writer, prefix: str, n: Node, suffix: str = "") -> None:
    """Writes `prefix` + `n` + `suffix` at the writer's indentation."""
    col = len(out.margin)
    lines = layout(n, col + len(prefix), col, suffix)
    out.line(prefix + lines[0])
    for line in lines[1:]:
        out.line(line)


def header(spec: Spec, what: str) -> list[str]:
    rules = next(src["sha256"] for src in spec.sources if src["file"].startswith("rules/"))
    return [
        f"# @generated by `make codegen` from spec/{spec.source_file} and rules/acp.toml",
        f"# sha256 {spec.source_sha256} (schema), {rules} (rules).",
        "# Do not edit: change codegen/ and regenerate.",
        f'"""ACP {spec.version} ({spec.surface}): {what}, generated from the pinned schema."""',
    ]


@dataclass
class VariantClass:
    """How one variant of a tagged union is represented in Python."""

    cls: str  # the class name
    # "tagged" (a msgspec tagged Struct), "default" (untagged struct), "flattened",
    # "empty" (no body), "wrapped" (a Flattened wrapper around a nested tagged union)
    kind: str
    payload: str | None  # the payload struct's name (None for "empty")
    own: bool  # the class is generated for this variant (a subclass or an empty struct)


class Model:
    """What both Python emitters need to know about a surface, beyond the model."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.decls = spec.decls
        for d in self.decls.values():
            if isinstance(d, Struct) and d.oneofs:
                raise ValueError(f"{d.name}: oneofs are not supported by the Python emitter")
            if isinstance(d, Union) and d.strategy == "keyed":
                raise ValueError(f"{d.name}: keyed unions are not supported by the Python emitter")
        self.refs = self._count_refs()
        # The struct names that carry a union's tag themselves: (union, tag_field, tag).
        self.tagged_payload: dict[str, tuple[str, str, str]] = {}
        self.variants: dict[str, list[VariantClass]] = {}
        taken = set(self.decls)
        for u in self.decls.values():
            if isinstance(u, Union) and u.strategy == "tagged":
                self.variants[u.name] = [self._variant(u, v.name, v.tag, v.payload, taken) for v in u.variants]

    def _count_refs(self) -> dict[str, int]:
        refs: dict[str, int] = {}

        def walk(t: TypeRef | None) -> None:
            if isinstance(t, NamedRef):
                refs[t.name] = refs.get(t.name, 0) + 1
            elif isinstance(t, ArrayRef):
                walk(t.item)
            elif isinstance(t, MapRef):
                walk(t.value)

        for d in self.decls.values():
            if isinstance(d, Struct):
                for f in d.fields:
                    walk(f.type)
                if d.flatten:
                    walk(NamedRef(d.flatten))
            elif isinstance(d, Union):
                for v in d.variants:
                    walk(v.payload)
            elif isinstance(d, Alias):
                walk(d.target)
        for m in self.spec.methods:
            walk(NamedRef(m.params) if m.params else None)
            walk(NamedRef(m.result) if m.result else None)
        return refs

    def _variant(self, u: Union, vname: str, tag: str | None, payload: TypeRef | None, taken: set[str]) -> VariantClass:
        if payload is None:
            if tag is None:
                raise ValueError(f"{u.name}.{vname}: a variant without a tag needs a payload")
            return VariantClass(self._new_name(u.name + vname, taken), "empty", None, True)
        if not isinstance(payload, NamedRef):
            raise ValueError(f"{u.name}.{vname}: a variant payload must be a named struct")
        d = self.resolve(payload)
        if isinstance(d, Union) and d.strategy == "tagged" and tag is not None:
            # A tagged union inside a variant: a wrapper that writes the outer tag.
            return VariantClass(self._new_name(u.name + vname, taken), "wrapped", d.name, True)
        if not isinstance(d, Struct):
            raise ValueError(f"{u.name}.{vname}: a variant payload must be a struct, not {type(d).__name__}")
        if tag is None:
            return VariantClass(d.name, "flattened" if d.flatten else "default", d.name, False)
        only_here = self.refs.get(d.name, 0) == 1
        if d.flatten:
            if not only_here:
                raise ValueError(f"{u.name}.{vname}: a flattened payload used elsewhere cannot carry the tag")
            self.tagged_payload[d.name] = (u.name, given(u.tag_field, f"{u.name}: tag field"), tag)
            return VariantClass(d.name, "flattened", d.name, False)
        if only_here:
            self.tagged_payload[d.name] = (u.name, given(u.tag_field, f"{u.name}: tag field"), tag)
            return VariantClass(d.name, "tagged", d.name, False)
        return VariantClass(self._new_name(u.name + vname, taken), "tagged", d.name, True)

    @staticmethod
    def _new_name(name: str, taken: set[str]) -> str:
        if name in taken:
            raise ValueError(f"generated class name {name} collides with a declaration")
        taken.add(name)
        return name

    def resolve(self, t: TypeRef) -> Decl | None:
        """The declaration a reference ends at, aliases followed."""
        return resolve(self.decls, t)

    def target(self, t: TypeRef) -> TypeRef:
        """The reference with aliases followed."""
        while isinstance(t, NamedRef) and isinstance(self.decls.get(t.name), Alias):
            d = self.decls[t.name]
            assert isinstance(d, Alias)
            t = d.target
        return t

    def is_flattened(self, name: str) -> bool:
        d = self.decls.get(name)
        return isinstance(d, Struct) and d.flatten is not None

    def msgspec_union(self, u: Union) -> list[str] | None:
        """The classes msgspec decodes for a union on the fast path (None: none can)."""
        if u.strategy == "tagged":
            classes = [v.cls for v in self.variants[u.name] if v.kind in ("tagged", "empty")]
            # One tagged Struct alone is not a union to msgspec: it would not require the tag.
            return classes if len(classes) > 1 else None
        # Untagged: only variants msgspec tells apart by JSON type, in an order where
        # "the first that fits" and msgspec's choice agree.
        kinds: list[str] = []
        out: list[str] = []
        for v in u.variants:
            t = self.target(given(v.payload, f"{u.name}.{v.name}: payload"))
            kind = self.json_kind(t)
            if kind is None or kind in kinds or (kind == "int" and "float" in kinds):
                return None
            kinds.append(kind)
            out.append(self.annotation(t))
        return out

    def json_kind(self, t: TypeRef) -> str | None:
        """The JSON type a fast-path value of `t` has (for untagged unions)."""
        if isinstance(t, PrimRef):
            return {"string": "str", "bool": "bool", "f64": "float"}.get(t.prim, "int")
        if isinstance(t, ArrayRef):
            return "array"
        d = self.resolve(t)
        if isinstance(d, Struct) and not d.flatten:
            return "object"
        if isinstance(d, Enum):
            return "str"
        return None

    def annotation(self, t: TypeRef) -> str:
        """The annotation of a value of type `t` (what type checkers and msgspec read)."""
        if isinstance(t, PrimRef):
            if t.prim not in PRIMS:
                raise ValueError(f"primitive {t.prim} is not supported by the Python emitter")
            return PRIMS[t.prim]
        if isinstance(t, NamedRef):
            if t.name in RUNTIME:
                return RUNTIME[t.name]
            if t.name not in self.decls:
                raise ValueError(f"unknown type {t.name}")
            return t.name
        if isinstance(t, ArrayRef):
            return f"list[{self.annotation(t.item)}]"
        if isinstance(t, MapRef):
            return f"dict[str, {self.annotation(t.value)}]"
        if isinstance(t, JsonRef):
            return "Raw"
        raise TypeError(t)

    def field_annotation(self, f: Field) -> str:
        base = self.annotation(f.type)
        bounds = [f"min_length={n}" for n in (f.min_length, f.min_items) if n is not None]
        if bounds:
            base = f"Annotated[{base}, Meta({', '.join(bounds)})]"
        if isinstance(self.target(f.type), JsonRef) and f.nullable:
            base = "NullableRaw"
        elif f.nullable:
            base += " | None"
        if not f.required and not f.has_default:
            base += " | UnsetType"
        return base

    def has_f64(self, t: TypeRef) -> bool:
        """Whether values of `t` hold doubles that are not inside a struct of their own."""
        t = self.target(t)
        if isinstance(t, PrimRef):
            return t.prim == "f64"
        if isinstance(t, ArrayRef):
            return self.has_f64(t.item)
        if isinstance(t, MapRef):
            return self.has_f64(t.value)
        d = self.resolve(t)
        if isinstance(d, Union) and d.strategy == "untagged":
            return any(v.payload is not None and isinstance(self.target(v.payload), PrimRef) and self.target(v.payload) == PrimRef("f64") for v in d.variants)
        return False


def f64_wrap(m: Model, t: TypeRef, expr: str) -> str:
    """An expression turning the doubles of `expr` (of type `t`) into `Float64`s."""
    t = m.target(t)
    if isinstance(t, PrimRef):
        return f"_rt.f64({expr})"
    if isinstance(t, ArrayRef):
        return f"[{f64_wrap(m, t.item, 'x')} for x in {expr}]"
    if isinstance(t, MapRef):
        return f"{{k: {f64_wrap(m, t.value, 'x')} for k, x in {expr}.items()}}"
    return f"_rt.f64_in_union({expr})"


class Emitter:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.m = Model(spec)
        self.decls = spec.decls
        self.out = Writer()
        self.exports: list[str] = []
        self.uses: set[str] = set()

    # -- helpers ------------------------------------------------------------

    def blank(self, n: int = 1) -> None:
        for _ in range(n):
            self.out.line()

    def doc(self, doc: str) -> None:
        self.out.lines(doc_comment(doc, DocStyle.DOCSTRING))

    def call(self, head: str, args: list[str], tail: str = ")") -> None:
        """``head(args)tail`` laid out as ruff would."""
        write(self.out, "", Call(head, list(args), tail))

    def default_expr(self, f: Field, where: str) -> tuple[str, bool]:
        """(expression, is a factory) of a field's default."""
        t = self.m.target(f.type)
        value = f.default
        if isinstance(t, PrimRef):
            if t.prim == "string":
                return pystr(value), False
            if t.prim == "bool":
                return ("True" if value else "False"), False
            if t.prim == "f64":
                return repr(float(value)), False
            return str(int(value)), False
        if isinstance(t, ArrayRef):
            if value != []:
                raise ValueError(f"{where}: non-empty array default")
            return "list", True
        if isinstance(t, MapRef):
            if value != {}:
                raise ValueError(f"{where}: non-empty map default")
            return "dict", True
        d = self.m.resolve(t)
        if isinstance(d, Enum):
            if value not in d.values:
                raise ValueError(f"{where}: default {value!r} not in {d.name}")
            return pystr(value), False
        if isinstance(d, Struct) and not d.flatten:
            self.check_struct_default(d, value, where)
            return d.name, True
        raise ValueError(f"{where}: unsupported default {value!r}")

    def check_struct_default(self, d: Struct, value: Any, where: str) -> None:
        """An object default must be what the class's own defaults produce."""
        if not isinstance(value, dict):
            raise ValueError(f"{where}: object default expected")
        with_default = {f.wire: f for f in d.fields if f.has_default}
        if set(value) != set(with_default) or any(f.required and not f.has_default for f in d.fields):
            raise ValueError(f"{where}: default keys {sorted(value)} != {sorted(with_default)}")
        for k, v in value.items():
            f = with_default[k]
            inner = self.m.resolve(f.type)
            if isinstance(inner, Struct):
                self.check_struct_default(inner, v, f"{where}.{k}")
            elif v != f.default:
                raise ValueError(f"{where}.{k}: default {v!r} != {f.default!r}")

    # -- the module ---------------------------------------------------------

    def emit(self) -> str:
        body = self.emit_body()
        out = Writer()
        out.lines(header(self.spec, "types, method table and rules"))
        out.line()
        out.line("from __future__ import annotations")
        out.line()
        stdlib = ["import sys"]
        typing = sorted({"TYPE_CHECKING", "Annotated", "ClassVar", "Final", "Literal", "TypeAlias"} & self.uses, key=isort_key)
        if typing:
            stdlib.append(f"from typing import {', '.join(typing)}")
        if stdlib:
            out.lines(stdlib)
            out.line()
        msgspec_names = sorted({"UNSET", "Meta", "Raw", "Struct", "UnsetType", "field"} & self.uses, key=isort_key)
        out.line(f"from msgspec import {', '.join(msgspec_names)}")
        out.line()
        # First-party imports in ruff's order: by module, plain imports before aliased ones.
        rule_names = ["Gate", "MethodInfo", "SessionRule", "SurfaceRules", "ValueGate"]
        if any(m.session_gate is not None for m in self.spec.methods):
            rule_names.insert(2, "SessionGate")
        first: list[tuple[str, int, str]] = [
            ("agentproto.acp.rules", 0, f"from agentproto.acp.rules import {', '.join(rule_names)}")
        ]
        codec = sorted({"Flattened", "Unknown"} & self.uses)
        if codec:
            first.append(("agentproto.codec", 0, f"from agentproto.codec import {', '.join(codec)}"))
        if "_rt" in self.uses:
            first.append(("agentproto.codec", 1, "from agentproto.codec import runtime as _rt"))
        rt_names = sorted({"I16", "I32", "I64", "U16", "U32", "U64", "NullableRaw", "RequestId", "SlowOnly"} & self.uses, key=isort_key)
        if rt_names:
            first.append(("agentproto.codec.runtime", 0, f"from agentproto.codec.runtime import {', '.join(rt_names)}"))
        if "ErrorObject" in self.uses:
            first.append(("agentproto.jsonrpc", 0, "from agentproto.jsonrpc import ErrorObject"))
        first.append(("agentproto.acp.surface", 0, "from agentproto.acp.surface import Surface"))
        for _, _, line in sorted(first):
            out.line(line)
        out.line()
        out.line("__all__ = [")
        with out.indent():
            for name in sorted(["METHODS", "PROTOCOL_VERSION", "RULES", "SURFACE", *self.exports], key=isort_key):
                out.line(f"{pystr(name)},")
        out.line("]")
        return out.text() + body

    def emit_body(self) -> str:
        out = self.out
        spec = self.spec
        self.uses.update({"Final"})
        out.line()
        out.line(f"PROTOCOL_VERSION: Final = {spec.wire_version}")
        out.line('"""The wire `protocolVersion` of this surface."""')
        out.line()
        self.emit_rules()
        # Enums and aliases of primitives first (no dependencies), then every class in
        # the model's order, the variant classes, and the aliases that name classes.
        for d in self.decls.values():
            if isinstance(d, Enum):
                self.emit_enum(d)
            elif isinstance(d, Alias) and not self.names_class(d.target):
                self.emit_alias(d)
        for d in self.ordered_structs():
            if d.flatten:
                self.emit_flattened(d)
            else:
                self.emit_struct(d)
        for u in self.decls.values():
            if isinstance(u, Union) and u.strategy == "tagged":
                self.emit_variant_classes(u)
        for d in self.ordered_aliases():
            if isinstance(d, Union):
                self.emit_union(d)
            else:
                self.emit_alias(d)
        self.emit_methods()
        self.blank(2)
        decoders = f'"agentproto.acp.generated._{module_name(spec)}_decode"'
        args = ["sys.modules[__name__]", decoders]
        if python_roles.has_roles(spec.methods):
            args.append(f'"agentproto.acp.generated.{module_name(spec)}_roles"')
        write(out, "SURFACE: Final = ", Call("Surface(", args, ")"))
        out.line('"""This surface: its method table, payload decoders and rule checks (built from this module)."""')
        self.roles_body = python_roles.emit(self)
        return out.text()

    def roles_module(self) -> str | None:
        """`generated/<surface>_roles.py`, after `emit`: the roles, importing the types
        they name from the types module (`None` for a surface without roles)."""
        if not self.roles_body:
            return None
        name = module_name(self.spec)
        defined = {"METHODS", "PROTOCOL_VERSION", "RULES", "SURFACE", *self.exports}
        used = sorted(defined & set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.roles_body)), key=import_key)
        out = Writer()
        out.lines(header(self.spec, "roles"))
        out.line()
        out.line("from __future__ import annotations")
        out.line()
        out.lines(python_roles.STDLIB)
        out.line()
        out.lines(python_roles.THIRD_PARTY)
        out.line()
        first = [(line.split()[1], 1 if " as " in line else 0, line) for line in python_roles.first_party(self.roles_body)]
        module = f"agentproto.acp.generated.{name}"
        imported = f"from {module} import {', '.join(used)}"
        if len(imported) > LINE:
            imported = f"from {module} import (\n" + "".join(f"    {n},\n" for n in used) + ")"
        first.append((module, 0, imported))
        for _, _, line in sorted(first):
            out.lines(line.split("\n"))
        out.line()
        out.line("__all__ = [")
        with out.indent():
            for export in sorted(python_roles.EXPORTS, key=isort_key):
                out.line(f"{pystr(export)},")
        out.line("]")
        return out.text() + self.roles_body

    def ordered_structs(self) -> list[Struct]:
        """Structs in the model's order, each after the structs its defaults construct
        (a default factory is evaluated when the class is defined)."""
        done: list[Struct] = []
        placed: set[str] = set()

        def place(d: Struct) -> None:
            if d.name in placed:
                return
            placed.add(d.name)
            for f in d.fields:
                target = self.m.resolve(f.type) if f.has_default else None
                if isinstance(target, Struct):
                    place(target)
            done.append(d)

        for d in self.decls.values():
            if isinstance(d, Struct):
                place(d)
        return done

    def names_class(self, t: TypeRef) -> bool:
        """Whether an alias target mentions a generated class (so it must follow it)."""
        if isinstance(t, NamedRef):
            d = self.decls.get(t.name)
            if isinstance(d, Alias):
                return self.names_class(d.target)
            return isinstance(d, (Struct, Union))
        if isinstance(t, ArrayRef):
            return self.names_class(t.item)
        if isinstance(t, MapRef):
            return self.names_class(t.value)
        return False

    def ordered_aliases(self) -> list[Decl]:
        """Unions and class-naming aliases, each after the aliases it names."""
        pending = [d for d in self.decls.values() if isinstance(d, Union) or (isinstance(d, Alias) and self.names_class(d.target))]
        names = {d.name for d in pending}
        done: list[Decl] = []
        placed: set[str] = set()

        def deps(d: Decl) -> set[str]:
            refs: set[str] = set()

            def walk(t: TypeRef | None) -> None:
                if isinstance(t, NamedRef) and t.name in names:
                    refs.add(t.name)
                elif isinstance(t, ArrayRef):
                    walk(t.item)
                elif isinstance(t, MapRef):
                    walk(t.value)

            if isinstance(d, Union):
                for v in d.variants:
                    if d.strategy == "untagged":
                        walk(v.payload)
            elif isinstance(d, Alias):
                walk(d.target)
            return refs - {d.name}

        def place(d: Decl, stack: tuple[str, ...]) -> None:
            if d.name in placed:
                return
            if d.name in stack:
                raise ValueError(f"alias cycle through {d.name}")
            for dep in sorted(deps(d)):
                place(self.decls[dep], (*stack, d.name))
            placed.add(d.name)
            done.append(d)

        for d in pending:
            place(d, ())
        return done

    def emit_rules(self) -> None:
        caps = self.spec.rules["capabilities"]
        life = self.spec.rules["lifecycle"]
        out = self.out
        out.line("RULES: Final = SurfaceRules(")
        with out.indent():
            out.line(f"agent_capabilities={pystr(caps['agent'])},")
            out.line(f"client_capabilities={pystr(caps['client'])},")
            out.line(f"initialize={pystr(life['initialize'])},")
            out.line(f"cancel_request={pystr(life['cancel_request'])},")
            out.line(f"session_cancel={pystr(life['session_cancel'])},")
            prompt = life.get("prompt_turn")
            out.line(f"prompt_turn={'None' if prompt is None else pystr(prompt)},")
            out.line(f"null_request_id={self.spec.rules['envelope']['null_request_id']},")
        out.line(")")
        out.line('"""The lifecycle method names and where each side\'s `initialize` message holds its capabilities."""')

    # -- declarations ---------------------------------------------------------

    def type_doc(self, doc: str) -> None:
        """A comment above a type alias (aliases have no docstring)."""
        self.out.lines(doc_comment(doc, DocStyle.HASH))

    def emit_enum(self, d: Enum) -> None:
        self.uses.update({"TypeAlias"})
        self.blank(2 if self.out._lines and self.out._lines[-1] != "" else 1)
        self.type_doc(d.doc)
        self.exports.append(d.name)
        if d.open:
            known = ", ".join(d.values)
            self.out.line(f"# Open: values other than these are kept as strings: {known}.")
            self.out.line(f"{d.name}: TypeAlias = str")
            return
        self.uses.add("Literal")
        self.call(f"{d.name}: TypeAlias = Literal[", [pystr(v) for v in d.values], "]")

    def emit_alias(self, d: Alias) -> None:
        self.uses.update({"TypeAlias"})
        self.blank(2 if self.out._lines and self.out._lines[-1] != "" else 1)
        self.type_doc(d.doc)
        self.exports.append(d.name)
        self.use_annotation(d.target)
        self.out.line(f"{d.name}: TypeAlias = {self.m.annotation(d.target)}")

    def use_annotation(self, t: TypeRef) -> None:
        """Records the imports an annotation of `t` needs."""
        t2 = t
        while isinstance(t2, (ArrayRef, MapRef)):
            t2 = t2.item if isinstance(t2, ArrayRef) else t2.value
        if isinstance(t2, PrimRef) and t2.prim in INTS:
            self.uses.add(INTS[t2.prim])
        elif isinstance(t2, JsonRef):
            self.uses.add("Raw")
        elif isinstance(t2, NamedRef) and t2.name in RUNTIME:
            self.uses.add({"RequestId": "RequestId", "Error": "ErrorObject", "ErrorCode": "I32"}[t2.name])

    def emit_union(self, u: Union) -> None:
        self.uses.update({"TypeAlias"})
        out = self.out
        self.blank(2 if out._lines and out._lines[-1] != "" else 1)
        self.type_doc(u.doc)
        self.exports.append(u.name)
        if u.strategy == "tagged":
            static = list(dict.fromkeys(v.cls for v in self.m.variants[u.name])) + ["Unknown"]
            self.uses.add("Unknown")
        else:
            static = []
            for v in u.variants:
                t = given(v.payload, f"{u.name}.{v.name}: payload")
                self.use_annotation(t)
                static.append(self.m.annotation(t))
        runtime = self.m.msgspec_union(u)
        if runtime == static:
            self.alias_line(f"{u.name}: TypeAlias = ", static)
            return
        self.uses.add("TYPE_CHECKING")
        out.line("if TYPE_CHECKING:")
        with out.indent():
            self.alias_line(f"{u.name}: TypeAlias = ", static)
        out.line("else:")
        with out.indent():
            if runtime is None:
                self.uses.add("SlowOnly")
                out.line(f"{u.name} = SlowOnly  # msgspec cannot decode it: the slow path does")
            else:
                self.alias_line(f"{u.name} = ", runtime)

    def alias_line(self, head: str, parts: list[str]) -> None:
        write(self.out, head, Ors(parts) if len(parts) > 1 else parts[0])

    def class_head(self, name: str, base: str, options: list[str]) -> None:
        self.call(f"class {name}(", [base, *options], "):")

    def emit_struct(self, d: Struct) -> None:
        out = self.out
        self.uses.update({"Struct"})
        self.blank(2)
        options = ["kw_only=True"]
        tagged = self.m.tagged_payload.get(d.name)
        if tagged:
            options += [f"tag_field={pystr(tagged[1])}", f"tag={pystr(tagged[2])}"]
        self.class_head(d.name, "Struct", options)
        self.exports.append(d.name)
        with out.indent():
            doc = doc_comment(d.doc, DocStyle.DOCSTRING) or [f'"""`{d.name}`."""']
            out.lines(doc)
            if d.fields:
                out.line()
            seen: set[str] = set()
            for f in d.fields:
                name = field_name(f)
                if name in seen:
                    raise ValueError(f"{d.name}: two fields are named {name} in Python")
                seen.add(name)
                self.emit_field(d, f, name)
            self.emit_post_init(d)

    def emit_field(self, d: Struct, f: Field, name: str) -> None:
        if f.has_default and f.nullable:
            raise ValueError(f"{d.name}.{f.wire}: nullable field with a default")
        self.use_annotation(f.type)
        ann = self.m.field_annotation(f)
        if "Annotated[" in ann:
            self.uses.update({"Annotated", "Meta"})
        if "NullableRaw" in ann:
            self.uses.add("NullableRaw")
        if "UnsetType" in ann:
            self.uses.add("UnsetType")
        rename = name != f.wire
        args: list[Node] = []
        value: Node | None = None
        if f.has_default:
            expr, factory = self.default_expr(f, f"{d.name}.{f.wire}")
            if factory:
                args.append(Kw("default_factory", expr))
            elif rename:
                args.append(Kw("default", expr))
            else:
                value = expr
        elif not f.required:
            self.uses.add("UNSET")
            if rename:
                args.append(Kw("default", "UNSET"))
            else:
                value = "UNSET"
        if rename:
            args.append(Kw("name", pystr(f.wire)))
        if args:
            self.uses.add("field")
            value = Call("field(", args, ")")
        if value is None:
            self.out.line(f"{name}: {ann}")
        else:
            write(self.out, f"{name}: {ann} = ", value)
        self.out.lines(doc_comment(f.doc, DocStyle.DOCSTRING))

    def post_init_lines(self, d: Struct, target: str) -> list[str]:
        """Statements normalising raw and double fields (`target`: `self`)."""
        lines: list[str] = []
        for f in d.fields:
            name = f"{target}.{field_name(f)}"
            t = self.m.target(f.type)
            call = None
            if isinstance(t, JsonRef):
                if t.object_only:
                    call = "_rt.nullable_raw_object" if f.nullable else "_rt.raw_object"
                elif f.nullable:
                    call = "_rt.nullable_raw"
            if call is not None:
                self.uses.add("_rt")
                stmt = f"{name} = {call}({name})"
                lines += [f"if {name} is not UNSET:", "    " + stmt] if not f.required and not f.has_default else [stmt]
                continue
            if t == PrimRef("u64"):
                self.uses.add("_rt")
                stmt = f"_rt.u64({name})"
                conds = [f"{name} is not UNSET"] if not f.required and not f.has_default else []
                if f.nullable:
                    conds.append(f"{name} is not None")
                lines += [f"if {' and '.join(conds)}:", "    " + stmt] if conds else [stmt]
                continue
            if self.m.has_f64(f.type):
                self.uses.add("_rt")
                stmt = f"{name} = {f64_wrap(self.m, f.type, name)}"
                conds = []
                if not f.required and not f.has_default:
                    conds.append(f"{name} is not UNSET")
                if f.nullable:
                    conds.append(f"{name} is not None")
                lines += [f"if {' and '.join(conds)}:", "    " + stmt] if conds else [stmt]
        if any("UNSET" in line for line in lines):
            self.uses.add("UNSET")
        return lines

    def emit_post_init(self, d: Struct) -> None:
        lines = self.post_init_lines(d, "self")
        if not lines:
            return
        out = self.out
        out.line()
        out.line("def __post_init__(self) -> None:")
        with out.indent():
            out.lines(lines)

    def emit_flattened(self, d: Struct) -> None:
        out = self.out
        self.uses.update({"Flattened", "ClassVar"})
        self.blank(2)
        out.line(f"class {d.name}(Flattened):")
        self.exports.append(d.name)
        union = given(d.flatten, "flatten")
        fields = [(field_name(f), f) for f in d.fields]
        if any(n == "variant" for n, _ in fields):
            raise ValueError(f"{d.name}: a field is named `variant`")
        with out.indent():
            out.lines(doc_comment(d.doc, DocStyle.DOCSTRING) or [f'"""`{d.name}`."""'])
            out.line()
            write(out, "__slots__ = ", tup([pystr(n) for n in sorted([n for n, _ in fields] + ["variant"], key=natural_key)]))
            write(out, "_wire: ClassVar[tuple[str, ...]] = ", tup([pystr(f.wire) for f in d.fields]))
            tagged = self.m.tagged_payload.get(d.name)
            if tagged:
                out.line(f"_tag: ClassVar[tuple[str, str] | None] = ({pystr(tagged[1])}, {pystr(tagged[2])})")
            out.line()
            for n, f in fields:
                if f.has_default:
                    raise ValueError(f"{d.name}.{f.wire}: a default in a flattened object")
                self.use_annotation(f.type)
                ann = self.m.field_annotation(f)
                for used in ("NullableRaw", "UnsetType"):
                    if used in ann:
                        self.uses.add(used)
                out.line(f"{n}: {ann}")
                out.lines(doc_comment(f.doc, DocStyle.DOCSTRING))
            out.line(f"variant: {union}")
            out.line('"""The variant part of this object."""')
            out.line()
            params = ["self", "*"]
            for n, f in fields:
                ann = self.m.field_annotation(f)
                if not f.required:
                    self.uses.add("UNSET")
                params.append(f"{n}: {ann}" + ("" if f.required else " = UNSET"))
            params.append(f"variant: {union}")
            self.call("def __init__(", params, ") -> None:")
            with out.indent():
                for n, _ in fields:
                    out.line(f"self.{n} = {n}")
                out.line("self.variant = variant")
                out.lines(self.post_init_lines(d, "self"))
            out.line()
            out.line("def _members(self) -> list[tuple[str, bytes]]:")
            self.uses.add("_rt")
            with out.indent():
                if tagged:
                    tag_bytes = "b" + pystr(json.dumps(tagged[2]))
                    out.line(f"out: list[tuple[str, bytes]] = [({pystr(tagged[1])}, {tag_bytes})]")
                else:
                    out.line("out: list[tuple[str, bytes]] = []")
                for n, f in fields:
                    entry = f"out.append(({pystr(f.wire)}, _rt.member_bytes(self.{n})))"
                    if f.required:
                        out.line(entry)
                    else:
                        out.line(f"if self.{n} is not UNSET:")
                        with out.indent():
                            out.line(entry)
                out.line("out += _rt.variant_members(self.variant, self._wire)")
                out.line("return out")

    def emit_variant_classes(self, u: Union) -> None:
        out = self.out
        docs = {v.name: v.doc for v in u.variants}
        for v, vc in zip(u.variants, self.m.variants[u.name]):
            if not vc.own:
                continue
            self.blank(2)
            self.exports.append(vc.cls)
            tag_field = pystr(given(u.tag_field, f"{u.name}: tag field"))
            tag = given(v.tag, "tag")
            doc = doc_comment(docs[v.name], DocStyle.DOCSTRING) or [f'"""The `{tag}` variant of `{u.name}`."""']
            if vc.kind == "wrapped":
                self.emit_wrapper(vc, tag_field, tag, doc)
                continue
            self.uses.add("Struct")
            base = vc.payload or "Struct"
            options = [f"tag_field={tag_field}", f"tag={pystr(tag)}"]
            if vc.payload is None:
                options.insert(0, "kw_only=True")
            self.class_head(vc.cls, base, options)
            with out.indent():
                out.lines(doc)

    def emit_wrapper(self, vc: VariantClass, tag_field: str, tag: str, doc: list[str]) -> None:
        """A variant whose body is another tagged union: the outer tag, then the inner value's members."""
        out = self.out
        self.uses.update({"Flattened", "ClassVar", "_rt"})
        inner = given(vc.payload, "payload")
        out.line(f"class {vc.cls}(Flattened):")
        with out.indent():
            out.lines(doc)
            out.line()
            out.line('__slots__ = ("variant",)')
            out.line("_wire: ClassVar[tuple[str, ...]] = ()")
            out.line(f"_tag: ClassVar[tuple[str, str] | None] = ({tag_field}, {pystr(tag)})")
            out.line()
            out.line(f"variant: {inner}")
            out.line()
            out.line(f"def __init__(self, *, variant: {inner}) -> None:")
            with out.indent():
                out.line("self.variant = variant")
            out.line()
            out.line("def _members(self) -> list[tuple[str, bytes]]:")
            with out.indent():
                out.line(f"out: list[tuple[str, bytes]] = [({tag_field}, b{pystr(json.dumps(tag))})]")
                out.line("out += _rt.variant_members(self.variant, self._wire)")
                out.line("return out")

    # -- the method table -------------------------------------------------------

    def emit_methods(self) -> None:
        out = self.out
        self.blank(2)
        out.line("METHODS: Final[tuple[MethodInfo, ...]] = (")
        with out.indent():
            for m in self.spec.methods:
                write(out, "", Call("MethodInfo(", method_fields(m), ")", magic=True), ",")
        out.line(")")
        out.line('"""Every method of this surface, with its rules."""')


def tup(items: list[Node]) -> Call:
    return Call("(", items, ")")


def method_fields(m: Method) -> list[Node]:
    fields: list[Node] = [
        Kw("name", pystr(m.wire)),
        Kw("kind", pystr(m.kind)),
        Kw("side", pystr(m.side)),
        Kw("params", pystr(given(m.params, f"{m.wire}: params"))),
        Kw("result", "None" if m.result is None else pystr(m.result)),
        Kw("stability", pystr(m.stability)),
        Kw("handler", pystr(given(m.handler or None, f"{m.wire}: handler name (rules not applied?)"))),
    ]
    if m.required:
        fields.append(Kw("required", "True"))
    if m.null_result:
        fields.append(Kw("null_result", "True"))
    if m.gate is not None:
        g = m.gate
        gate_args: list[Node] = [
            Kw("where", pystr(g.where)),
            Kw("path", tup([pystr(x) for x in g.path])),
            Kw("test", pystr(g.test)),
            Kw("refusal", str(g.refusal)),
        ]
        fields.append(Kw("gate", Call("Gate(", gate_args, ")")))
    if m.values:
        gates: list[Node] = []
        for v in m.values:
            gated: list[Node] = [tup([pystr(t), tup([pystr(x) for x in p])]) for t, p in v.gated.items()]
            value_args: list[Node] = [
                Kw("member", pystr(v.member)),
                Kw("union", pystr(v.union)),
                Kw("tag", pystr(v.tag)),
                Kw("where", pystr(v.where)),
                Kw("baseline", tup([pystr(t) for t in v.baseline])),
                Kw("gated", tup(gated)),
            ]
            gates.append(Call("ValueGate(", value_args, ")"))
        fields.append(Kw("values", tup(gates)))
    if m.session is not None:
        effect = "None" if m.session.effect is None else pystr(m.session.effect)
        fields.append(Kw("session", Call("SessionRule(", [Kw("effect", effect), Kw("unseen_ok", str(m.session.unseen_ok))], ")")))
    if m.session_gate is not None:
        g = m.session_gate
        gate_args = [Kw("member", pystr(g.member)), Kw("opened_by", tup([pystr(w) for w in g.opened_by]))]
        fields.append(Kw("session_gate", Call("SessionGate(", gate_args, ")")))
    return fields


def emit(spec: Spec) -> str:
    return Emitter(spec).emit()


def emit_modules(spec: Spec) -> tuple[str, str | None]:
    """The types module and the roles module (`None` without roles) of a surface."""
    e = Emitter(spec)
    types = e.emit()
    return types, e.roles_module()


SURFACE_TITLES = {
    ("v1", "stable"): "Stable ACP, wire version 1",
    ("v1", "unstable"): "ACP wire version 1 with every UNSTABLE method and field",
    ("v2", "stable"): "The ACP wire version 2 DRAFT",
    ("v2", "unstable"): "The ACP wire version 2 DRAFT with its UNSTABLE additions",
}


def public_module(spec: Spec) -> str:
    """`agentproto/acp/<surface>.py`: the surface's public module, re-exporting the
    generated types module, adding its two receiving sides (their null-id rule from the
    surface's rules), and the roles, imported on first use."""
    name = module_name(spec)
    title = SURFACE_TITLES[(spec.version, spec.surface)]
    roles = sorted(python_roles.EXPORTS, key=import_key) if python_roles.has_roles(spec.methods) else []
    head = f'''# @generated by `make codegen`. Do not edit: change codegen/ and regenerate.
"""{title}: the generated types, method table, rules and roles, and this surface's receivers.

Every name of `agentproto.acp.generated.{name}` is re-exported here. `SURFACE` decodes
payloads by type (fast path, then the authoritative slow path); `AGENT` and `CLIENT`
are the two receiving sides for `agentproto.acp.receive.classify`. The roles: `Agent` and
`Client` (handler base classes), `AgentConnection` and `ClientConnection` (typed calls),
`connect_agent`, `serve_agent_stdio`, `connect_client`, `spawn_agent`. They come from
`agentproto.acp.generated.{name}_roles`, imported on first use, so that decoding
messages does not load the asyncio runtime.
"""

from __future__ import annotations
'''
    imports = "\nimport importlib\nfrom typing import TYPE_CHECKING\n" if roles else ""
    body = f'''
from agentproto.acp.generated import {name} as _generated
from agentproto.acp.generated.{name} import *
from agentproto.acp.generated.{name} import RULES, SURFACE
from agentproto.acp.receive import Receiver
'''
    if roles:
        body += "\nif TYPE_CHECKING:\n"
        line = f"    from agentproto.acp.generated.{name}_roles import {', '.join(roles)}"
        if len(line) > LINE:
            line = f"    from agentproto.acp.generated.{name}_roles import (\n" + "".join(f"        {r},\n" for r in roles) + "    )"
        body += line + "\n"
    body += '''
AGENT = Receiver(SURFACE, "agent", allow_null_id=RULES.null_request_id)
"""The agent's receiving side: client requests and notifications, results of its own calls."""
CLIENT = Receiver(SURFACE, "client", allow_null_id=RULES.null_request_id)
"""The client's receiving side: agent requests and notifications, results of its own calls."""
'''
    if roles:
        body += "\n_ROLES = frozenset(\n    {\n" + "".join(f"        {pystr(r)},\n" for r in roles) + "    }\n)\n"
        names = sorted(["AGENT", "CLIENT", *roles], key=isort_key)
        body += "\n__all__ = [\n" + "".join(f"    {pystr(n)},\n" for n in names) + "]\n"
        body += f'''__all__ += _generated.__all__


def __getattr__(name: str) -> object:
    if name not in _ROLES:
        raise AttributeError(f"module {{__name__!r}} has no attribute {{name!r}}")
    value = getattr(importlib.import_module("agentproto.acp.generated.{name}_roles"), name)
    globals()[name] = value
    return value
'''
    else:
        body += '''
__all__ = ["AGENT", "CLIENT"]
__all__ += _generated.__all__
'''
    return head + imports + body


def package_init() -> str:
    """`generated/__init__.py`: the package of the generated modules."""
    return (
        "# @generated by `make codegen`. Do not edit: change codegen/ and regenerate.\n"
        '"""Generated ACP modules: `<surface>` (types, method table, rules, `SURFACE`),\n'
        '`<surface>_roles` (the roles, which need asyncio) and `_<surface>_decode` (the slow path)\n'
        'for each surface (v1, v1_unstable, v2, v2_unstable). Import them through `agentproto.acp`."""\n'
    )
