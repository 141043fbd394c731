"""The language-neutral model every emitter works from.

A schema reader (``acp.py`` today, an A2A reader later) turns a pinned spec into a
``Spec``; an emitter (``rust.py`` today, Python and TypeScript later) turns a ``Spec``
into source text.  Emitters never look at the JSON Schema itself.

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
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Union as U

# ---------------------------------------------------------------------------
# Type references

Prim = Literal["string", "bool", "i16", "i32", "i64", "u16", "u32", "u64", "f64", "bytes", "timestamp"]


@dataclass(frozen=True)
class PrimRef:
    prim: Prim
    kind: str = "prim"


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


@dataclass
class Variant:
    name: str  # an identifier-friendly name (CamelCase)
    tag: str | None  # the tag value for tagged unions
    payload: TypeRef | None  # None: the variant has no body beyond its tag
    doc: str = ""


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


@dataclass
class Enum:
    name: str
    values: list[str]
    open: bool = False  # unknown values are kept as strings
    doc: str = ""
    value_docs: list[str] = field(default_factory=list)
    decl: str = "enum"
    strip_prefix: str = ""  # dropped from values to name variants (proto's `TASK_STATE_`)


@dataclass
class Alias:
    name: str
    target: TypeRef
    doc: str = ""
    decl: str = "alias"


Decl = U[Struct, Union, Enum, Alias]


@dataclass
class Method:
    wire: str  # e.g. "session/prompt"
    kind: Literal["request", "notification"]
    side: str  # who handles it: "agent", "client", "protocol", "proxy"
    params: str | None  # type name
    result: str | None  # type name, requests only
    stability: str  # "stable", "unstable"


@dataclass
class Spec:
    protocol: str  # "acp"
    version: str  # "v1", "v2"
    surface: str  # "stable", "unstable"
    source_file: str  # path under spec/
    source_sha256: str
    wire_version: int
    decls: dict[str, Decl]
    methods: list[Method]

    def to_json(self) -> str:
        """A stable JSON dump of the model, for debugging and for other emitters."""

        def conv(o: Any) -> Any:
            if hasattr(o, "__dataclass_fields__"):
                return {k: conv(v) for k, v in asdict(o).items()}
            if isinstance(o, dict):
                return {k: conv(v) for k, v in o.items()}
            if isinstance(o, list):
                return [conv(v) for v in o]
            return o

        return json.dumps(conv(self), indent=1, sort_keys=True)
