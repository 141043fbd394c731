"""The language-neutral model every emitter works from.

A reader turns a pinned spec into a ``Spec``: ``acp.py`` reads ACP's JSON Schemas,
``proto.py`` reads A2A's proto3 file; ``rules.py`` then adds what the specs say only
in prose, from the reviewed rules files in ``rules/``.  Emitters (``rust.py``, and the
Python and TypeScript emitters) turn a ``Spec`` into source text and never look at a
schema or a rules file themselves.  ``Spec.to_json`` is the documented dump of all of
it (``codegen/MODEL.md``).

The model is deliberately small.  A type is one of:

* ``Struct``  - an object with named fields, optionally with a ``Union`` flattened
  into it (ACP's "common fields + variant" objects such as ``SessionConfigOption``);
* ``Union``   - a choice between variants, told apart by a tag field (``Tagged``), by
  a tag field with an untagged default variant (``Tagged`` with ``default``), or by
  trying each variant in order (``Untagged``, only where the spec leaves no tag);
* ``Enum``    - a closed or open set of string values;
* ``Alias``   - a name for another type reference (``SessionId`` = string).

A ``TypeRef`` names what a field holds: a primitive, a named type, an array, a map,
or free-form JSON.  Presence (required / optional) and nullability are properties of
the *field*, so every emitter can pick its own encoding of the three states
"absent", ``null`` and "value".

Every declaration, field, variant, enum value and method carries a ``stability``:
``stable``, ``unstable`` (only in the UNSTABLE schema) or ``draft`` (a draft wire
version such as ACP v2).  One model holds a version's whole unstable superset;
``Spec.surface`` narrows it to what one surface (e.g. stable v1) contains.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from typing import Any, Literal, Union as U

# The dump format's version: bump it when a reader of the dump would misread the new one.
MODEL_FORMAT = 1

# Keys of the dump that only a model read from a proto fills (field, member and enum
# value numbers), written only when set.
PROTO_ONLY = frozenset({"number", "numbers"})

Stability = Literal["stable", "unstable", "draft"]

# ---------------------------------------------------------------------------
# Type references

# `text` is a `string` that may be large (a message's content): on the wire the same, but
# an emitter may share one copy of it between the places that hold it.
Prim = Literal["string", "text", "bool", "i16", "i32", "i64", "u16", "u32", "u64", "f64", "bytes", "timestamp"]


@dataclass(frozen=True)
class PrimRef:
    prim: Prim
    kind: str = "prim"


# The ranges of the integer primitives, from the schema's `format` (uint16, int64, …).
INTEGER_RANGES: dict[str, tuple[int, int]] = {
    "i16": (-(2**15), 2**15 - 1),
    "i32": (-(2**31), 2**31 - 1),
    "i64": (-(2**63), 2**63 - 1),
    "u16": (0, 2**16 - 1),
    "u32": (0, 2**32 - 1),
    "u64": (0, 2**64 - 1),
}


def prim_phrase(prim: str) -> str:
    """A primitive as a decode error's `expected` names it, the same in every language
    (vectors/README.md, "Error texts"): `a string`, `an integer from 0 to 65535`, …"""
    if prim in INTEGER_RANGES:
        low, high = INTEGER_RANGES[prim]
        return f"an integer from {low} to {high}"
    return {"bool": "a boolean", "f64": "a number"}.get(prim, "a string")


@dataclass(frozen=True)
class NamedRef:
    name: str
    kind: str = "named"


@dataclass(frozen=True)
class ArrayRef:
    item: "TypeRef"
    kind: str = "array"


@dataclass(frozen=True)
class MapRef:
    value: "TypeRef"
    kind: str = "map"


@dataclass(frozen=True)
class JsonRef:
    """Free-form JSON, kept as raw bytes (``_meta``, ``rawInput``, extension payloads)."""

    object_only: bool = False
    kind: str = "json"


TypeRef = U[PrimRef, NamedRef, ArrayRef, MapRef, JsonRef]

# ---------------------------------------------------------------------------
# Declarations


@dataclass
class Field:
    wire: str  # the JSON key, verbatim
    type: TypeRef
    required: bool
    nullable: bool = False
    default: Any = None  # JSON value, or None when the schema gives none
    has_default: bool = False
    lenient: bool = False  # x-deserialize-default-on-error
    skip_invalid_items: bool = False  # x-deserialize-skip-invalid-items
    doc: str = ""
    const: Any = None  # a fixed value the field must hold, if any
    default_on_null: bool = False  # x-deserialize-default-on-null: `null` reads as absent/empty
    min_length: int | None = None  # minLength of a string
    min_items: int | None = None  # minItems of an array
    aliases: list[str] = field(default_factory=list)  # other keys accepted on input (proto names)
    omit_default: bool = False  # not written when it holds its default (proto3 implicit presence)
    stability: Stability = "stable"
    number: int | None = None  # the proto field number (A2A; absent from the dump when None)


@dataclass
class Variant:
    name: str  # an identifier-friendly name (CamelCase)
    tag: str | None  # the tag value for tagged unions
    payload: TypeRef | None  # None: the variant has no body beyond its tag
    doc: str = ""
    stability: Stability = "stable"
    number: int | None = None  # a keyed union's member: its proto field number (A2A)


@dataclass
class Union:
    name: str
    # "keyed": a protobuf oneof on its own, told apart by which member key is present.
    strategy: Literal["tagged", "untagged", "keyed"]
    variants: list[Variant]
    tag_field: str | None = None
    open: bool = False  # an unknown tag is legal (kept without a warning)
    default: str | None = None  # name of the variant chosen when the tag is absent
    doc: str = ""
    decl: str = "union"
    # An unknown tag is first tried as the default variant (only where the schema
    # says so in prose; see acp.UNKNOWN_TAG_TO_DEFAULT).
    unknown_to_default: bool = False
    aliases: dict[str, str] = field(default_factory=dict)  # keyed: member key -> other accepted key
    # What a receiver does with a variant it does not know (set from the rules file):
    # "keep" (open union: kept with its raw JSON), "keep-warn" (closed union: kept,
    # with a warning), "error" (a keyed oneof: nothing to keep it as).
    on_unknown: str = "keep-warn"
    stability: Stability = "stable"


@dataclass
class Oneof:
    """A protobuf oneof inside a message: at most one of ``members`` may be present,
    and the member key that is present says which."""

    name: str
    type_name: str  # the name of the generated choice type
    members: list[Field]
    doc: str = ""


@dataclass
class Struct:
    name: str
    fields: list[Field]
    flatten: str | None = None  # name of a Union flattened into this object
    doc: str = ""
    decl: str = "struct"
    oneofs: list[Oneof] = field(default_factory=list)
    stability: Stability = "stable"


@dataclass
class Enum:
    name: str
    values: list[str]
    open: bool = False  # unknown values are kept as strings
    doc: str = ""
    value_docs: list[str] = field(default_factory=list)
    decl: str = "enum"
    strip_prefix: str = ""  # dropped from values to name variants (proto's `TASK_STATE_`)
    value_stability: list[Stability] = field(default_factory=list)  # one per value (empty: all as the enum)
    stability: Stability = "stable"
    numbers: list[int] = field(default_factory=list)  # the proto number of each value (A2A; empty otherwise)


@dataclass
class Alias:
    name: str
    target: TypeRef
    doc: str = ""
    decl: str = "alias"
    stability: Stability = "stable"


Decl = U[Struct, Union, Enum, Alias]


def resolve(decls: dict[str, Decl], t: TypeRef | None) -> Decl | None:
    """The declaration a type reference ends at, aliases followed (``None`` for a
    primitive, free-form JSON, a list or a map, or a name with no declaration)."""
    seen: set[str] = set()
    while isinstance(t, NamedRef) and t.name in decls:
        if t.name in seen:
            raise ValueError(f"alias cycle at {t.name}")
        seen.add(t.name)
        d = decls[t.name]
        if not isinstance(d, Alias):
            return d
        t = d.target
    return None


def field_path(decls: dict[str, Decl], root: str, wires: list[str]) -> list[Field]:
    """The fields a dotted capability path walks from the struct ``root`` (the rules
    reader checked that it exists); every language's emitter turns them into a typed
    access chain, so no runtime walks a path by name."""
    fields: list[Field] = []
    owner = resolve(decls, NamedRef(root))
    for wire in wires:
        found = next((f for f in owner.fields if f.wire == wire), None) if isinstance(owner, Struct) else None
        if found is None:
            raise ValueError(f"{root}: no field path {'.'.join(wires)}")
        fields.append(found)
        owner = resolve(decls, found.type)
    return fields


# ---------------------------------------------------------------------------
# Methods (ACP) and operations (A2A) are one kind of thing: a named call with a
# params type, a result type, who handles it, and the rules that apply to it.


@dataclass
class HttpRule:
    """One REST binding of an operation (A2A's ``google.api.http``)."""

    method: str  # get, post, delete
    path: str  # "/{tenant}/tasks/{id}:cancel", variables in braces (wire names of request fields)
    body: bool  # the whole request message is the body (`body: "*"`)


@dataclass
class QueryField:
    """A request field a body-less REST call carries in its query string."""

    wire: str
    kind: Literal["string", "int", "bool", "enum", "timestamp"]
    repeated: bool = False


@dataclass
class Gate:
    """A method the handling side must have advertised a capability for.

    ``path`` walks the handling side's ``initialize`` message (``where``: the
    client's params or the agent's result) to the capability.  A segment written
    ``{name}`` stands for the value of the request's top-level ``name`` member
    (elicitation: the capability depends on the requested mode)."""

    where: Literal["initialize.params", "initialize.result"]
    path: list[str]
    test: Literal["advertised", "non-empty"] = "advertised"  # `true` or an object / a list with an item
    # The answer when the gate is shut: -32601 (the method is not offered), or -32602
    # naming the request member that selected an unadvertised capability.
    refusal: int = -32601
    section: str = ""


@dataclass
class ValueGate:
    """Items of a list in the params that need a capability per variant.

    Each item of the params member ``member`` is the tagged union ``union`` (tag
    member ``tag``).  A tag in ``baseline`` is always allowed; a tag in ``gated``
    needs the capability at that path of the handling side's ``initialize`` message
    (``where``, as for ``Gate``); any other tag is refused.  ``""`` names the variant
    without a tag.  A refusal is -32602 at the offending item."""

    member: str
    union: str
    tag: str
    where: Literal["initialize.params", "initialize.result"]
    baseline: list[str]
    gated: dict[str, list[str]]
    section: str = ""


@dataclass
class SessionRule:
    """How a successful call changes the set of sessions a connection knows."""

    effect: Literal["created", "opened", "removed"] | None  # created: by the result's sessionId; else the params'
    unseen_ok: bool = False  # may name a session this connection has not seen (another connection's)
    section: str = ""


@dataclass
class SessionGate:
    """A session-scoped request that is served for a session only when the answer
    that opened that session announced something.

    ``member`` is a member of the results of the requests in ``opened_by`` (the ones
    that create or open a session); the session announced it when that member held
    an object in the latest such answer for it (absent and ``null`` do not announce
    anything).  A request naming a session whose opening answer did not announce it
    is refused -32602 at ``$.params.sessionId``."""

    member: str
    opened_by: list[str]
    section: str = ""


@dataclass
class Method:
    wire: str  # e.g. "session/prompt", "SendMessage"
    kind: Literal["request", "notification"]
    side: str  # who handles it: "agent", "client", "protocol", "proxy" (ACP); "server" (A2A)
    params: str | None  # type name
    result: str | None  # type name, requests only (for a streaming call: the type of each item)
    stability: Stability = "stable"
    doc: str = ""
    streaming: bool = False  # the answer is a stream of `result` items
    http: list[HttpRule] = field(default_factory=list)
    query: list[QueryField] = field(default_factory=list)
    # Set from the rules file:
    handler: str = ""  # the language-neutral snake_case name of its handler and typed call
    required: bool = False  # a baseline handler: every implementation of `side` must have it
    null_result: bool = False  # a `null` result reads as the (all-optional) result object
    gate: Gate | None = None
    values: list[ValueGate] = field(default_factory=list)
    session: SessionRule | None = None
    session_gate: SessionGate | None = None


@dataclass
class Spec:
    protocol: str  # "acp", "a2a"
    version: str  # "v1", "v2"
    surface: str  # "stable", "unstable" (the unstable superset), "draft"
    source_file: str  # path under spec/ of the schema this surface is read from
    source_sha256: str
    wire_version: int | str
    decls: dict[str, Decl]
    methods: list[Method]
    package: str = ""  # the proto package (A2A)
    # Every input the model was built from: spec files and rules files, with sha256.
    sources: list[dict[str, str]] = field(default_factory=list)
    # Protocol-wide rules (from the rules file), e.g. the lifecycle method names.
    rules: dict[str, Any] = field(default_factory=dict)

    def narrow(self, keep: set[str], surface: str, source_file: str, source_sha256: str) -> "Spec":
        """The part of this model a surface contains: every declaration, field, variant,
        enum value and method whose stability is in ``keep``."""
        decls: dict[str, Decl] = {}
        for name, d in self.decls.items():
            if d.stability not in keep:
                continue
            if isinstance(d, Struct):
                kept = [f for f in d.fields if f.stability in keep]
                decls[name] = replace(d, fields=[self._narrow_default(f, keep) for f in kept])
            elif isinstance(d, Union):
                decls[name] = replace(d, variants=[v for v in d.variants if v.stability in keep])
            elif isinstance(d, Enum):
                pairs = [(v, dv, s) for v, dv, s in zip(d.values, d.value_docs or [""] * len(d.values), d.value_stability or [d.stability] * len(d.values)) if s in keep]
                decls[name] = replace(
                    d,
                    values=[p[0] for p in pairs],
                    value_docs=[p[1] for p in pairs] if d.value_docs else [],
                    value_stability=[p[2] for p in pairs] if d.value_stability else [],
                )
            else:
                decls[name] = d
        methods = [self._narrow_values(m, decls) for m in self.methods if m.stability in keep]
        methods = [self._narrow_session_gate(m, methods, decls) for m in methods]
        return replace(self, surface=surface, source_file=source_file, source_sha256=source_sha256, decls=decls, methods=methods)

    @staticmethod
    def _narrow_values(m: "Method", decls: dict[str, Decl]) -> "Method":
        """A value gate keeps only the variants the surface has."""
        if not m.values:
            return m
        values = []
        for g in m.values:
            u = decls.get(g.union)
            tags = {v.tag or "" for v in u.variants} if isinstance(u, Union) else set()
            values.append(replace(g, baseline=[t for t in g.baseline if t in tags], gated={t: p for t, p in g.gated.items() if t in tags}))
        return replace(m, values=values)

    @staticmethod
    def _narrow_session_gate(m: "Method", methods: list["Method"], decls: dict[str, Decl]) -> "Method":
        """A session gate keeps only the opening requests the surface has whose result
        there still carries the member."""
        g = m.session_gate
        if g is None:
            return m
        results = {x.wire: x.result for x in methods if x.kind == "request"}

        def carries(wire: str) -> bool:
            d = decls.get(results[wire] or "") if wire in results else None
            return isinstance(d, Struct) and any(f.wire == g.member for f in d.fields)

        return replace(m, session_gate=replace(g, opened_by=[w for w in g.opened_by if carries(w)]))

    def _narrow_default(self, f: Field, keep: set[str]) -> Field:
        """An object default loses the members of fields the surface does not have."""
        if not isinstance(f.default, dict) or not f.default:
            return f
        return replace(f, default=self._narrow_value(f.type, f.default, keep))

    def _narrow_value(self, t: TypeRef, value: Any, keep: set[str]) -> Any:
        d = self.decls.get(t.name) if isinstance(t, NamedRef) else None
        while isinstance(d, Alias):
            d = self.decls.get(d.target.name) if isinstance(d.target, NamedRef) else None
        if not isinstance(d, Struct) or not isinstance(value, dict):
            return value
        fields = {f.wire: f for f in d.fields}
        return {
            k: self._narrow_value(fields[k].type, v, keep)
            for k, v in value.items()
            if k not in fields or fields[k].stability in keep
        }

    def to_json(self) -> str:
        """The model as JSON: the documented input of every emitter (codegen/MODEL.md)."""

        def conv(o: Any) -> Any:
            if hasattr(o, "__dataclass_fields__"):
                # Proto numbers exist only in a model read from a proto: left out
                # where unset, so that a schema-read model dumps as it always did.
                pairs = ((f.name, getattr(o, f.name)) for f in dataclass_fields(o))
                return {k: conv(v) for k, v in pairs if not (k in PROTO_ONLY and v in (None, []))}
            if isinstance(o, dict):
                return {k: conv(v) for k, v in o.items()}
            if isinstance(o, list):
                return [conv(v) for v in o]
            return o

        body = conv(self)
        # The dump is the whole version (every surface): which surface a generated
        # file is cut for, and from which file, is the emitter's business.
        for key in ("surface", "source_file", "source_sha256"):
            del body[key]
        head = {"format": "agentproto-model", "format_version": MODEL_FORMAT}
        order = ["protocol", "version", "wire_version", "package", "sources", "rules", "methods", "decls"]
        return json.dumps(head | {k: body[k] for k in order}, indent=1, ensure_ascii=False) + "\n"
