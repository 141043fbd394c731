"""Read an ACP JSON Schema (draft 2020-12, with ACP's ``x-*`` annotations) into the model.

The reader recognises the handful of shapes ACP's schema generator produces and fails
loudly on anything else, so a new construct upstream is noticed at ``make codegen``
time rather than silently mis-generated.
"""

from __future__ import annotations

import json
from typing import Any

from .names import camel
from .model import (
    Alias,
    ArrayRef,
    Decl,
    Enum,
    Field,
    JsonRef,
    MapRef,
    Method,
    NamedRef,
    PrimRef,
    Spec,
    Stability,
    Struct,
    TypeRef,
    Union,
    Variant,
)

# Definitions the JSON-RPC layer owns: envelopes, ids and error objects.  The emitters
# map the names below to runtime types instead of generating them.
RUNTIME_TYPES = {"RequestId", "ErrorCode", "Error"}

FORMATS = {
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "double": "f64",
    "float": "f64",
}


class SchemaError(Exception):
    pass


def ref_name(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise SchemaError(f"unsupported $ref {ref!r}")
    return ref[len(prefix) :]


def first_line(doc: str | None) -> str:
    return (doc or "").strip()


class Reader:
    def __init__(self, schema: dict[str, Any], stable_defs: set[str] | None):
        self.defs: dict[str, Any] = schema["$defs"]
        self.out: dict[str, Decl] = {}
        self.stable_defs = stable_defs

    # -- entry ------------------------------------------------------------

    def read(self) -> dict[str, Decl]:
        for name, d in self.defs.items():
            if name in RUNTIME_TYPES or d.get("x-docs-ignore"):
                continue
            self.read_def(name, d)
        return self.out

    def add(self, decl: Decl) -> None:
        if decl.name in self.out:
            raise SchemaError(f"duplicate declaration {decl.name}")
        self.out[decl.name] = decl

    # -- definitions ------------------------------------------------------

    def read_def(self, name: str, d: dict[str, Any]) -> None:
        doc = first_line(d.get("description"))
        choices = d.get("oneOf") or d.get("anyOf")
        if d.get("type") == "object" and "properties" in d:
            self.read_struct(name, d, doc)
        elif d.get("type") == "object" and "additionalProperties" in d and "properties" not in d:
            ap = d["additionalProperties"]
            target: TypeRef = JsonRef(object_only=True) if ap is True else MapRef(self.type_of(ap, name + "Value")[0])
            self.add(Alias(name, target, doc))
        elif d.get("type") == "object":
            self.add(Struct(name, [], None, doc))  # a capability marker: `{}` means supported
        elif choices is not None:
            self.read_choice(name, choices, doc)
        elif "allOf" in d and len(d["allOf"]) == 1 and "$ref" in d["allOf"][0]:
            self.add(Alias(name, NamedRef(ref_name(d["allOf"][0]["$ref"])), doc))
        elif "type" in d:
            t, nullable = self.type_of(d, name)
            if nullable:
                raise SchemaError(f"{name}: nullable top-level alias")
            self.add(Alias(name, t, doc))
        elif set(d) <= {"description", "x-method", "x-side", "title"}:
            self.add(Alias(name, JsonRef(), doc))  # extension payloads: any JSON
        else:
            raise SchemaError(f"{name}: unrecognised definition keys {sorted(d)}")

    def read_struct(self, name: str, d: dict[str, Any], doc: str) -> None:
        fields = self.fields_of(name, d)
        flatten = None
        choices = d.get("oneOf") or d.get("anyOf")
        if choices is not None and not self.constraint_only(choices, d):
            flatten = name + "Variant"
            self.read_choice(flatten, choices, f"The variant part of [`{name}`].")
            # A property that is also the tag of the flattened union (`IdleStateUpdate`'s
            # `stopReason`) belongs to the union: as a field too, it would be read and
            # written twice.
            tag = getattr(self.out[flatten], "tag_field", None)
            fields = [f for f in fields if f.wire != tag]
        self.add(Struct(name, fields, flatten, doc))

    def fields_of(self, owner: str, d: dict[str, Any]) -> list[Field]:
        required = set(d.get("required", []))
        fields = []
        for key, ps in d.get("properties", {}).items():
            t, nullable = self.type_of(ps, owner + camel(key))
            f = Field(
                wire=key,
                type=t,
                required=key in required,
                nullable=nullable,
                lenient=bool(ps.get("x-deserialize-default-on-error")),
                skip_invalid_items=bool(ps.get("x-deserialize-skip-invalid-items")),
                default_on_null=bool(ps.get("x-deserialize-default-on-null")),
                doc=first_line(ps.get("description")),
            )
            if "default" in ps:
                f.default = ps["default"]
                f.has_default = True
            if "const" in ps:
                f.const = ps["const"]
            if "minLength" in ps:
                f.min_length = int(ps["minLength"])
            if "minItems" in ps:
                f.min_items = int(ps["minItems"])
            fields.append(f)
        return fields

    @staticmethod
    def constraint_only(choices: list[Any], d: dict[str, Any]) -> bool:
        """An ``anyOf`` that only restates allowed values of existing properties."""
        props = d.get("properties", {})
        for c in choices:
            if set(c) - {"type", "properties", "required", "description"}:
                return False
            for k, v in c.get("properties", {}).items():
                if k not in props or "const" not in v:
                    return False
        return True

    # -- unions and enums -------------------------------------------------

    def read_choice(self, name: str, choices: list[Any], doc: str) -> None:
        def is_str_const(c: Any) -> bool:
            return c.get("type") == "string" and "const" in c

        def is_str_other(c: Any) -> bool:
            # The catch-all branch of an open enum ("other" in v1, "unknown" in v2).
            return "title" in c and c.get("type") == "string" and "const" not in c

        if all(is_str_const(c) or is_str_other(c) for c in choices):
            values = [c["const"] for c in choices if is_str_const(c)]
            docs = [first_line(c.get("description")) for c in choices if is_str_const(c)]
            self.add(Enum(name, values, any(is_str_other(c) for c in choices), doc, docs))
            return

        tag_field = self.find_tag(choices)
        if tag_field is not None:
            self.read_tagged(name, choices, tag_field, doc)
        else:
            self.read_untagged(name, choices, doc)

    @staticmethod
    def find_tag(choices: list[Any]) -> str | None:
        tags = set()
        for c in choices:
            for k, v in c.get("properties", {}).items():
                if isinstance(v, dict) and "const" in v and k in c.get("required", []):
                    tags.add(k)
        if len(tags) == 1:
            return tags.pop()
        if len(tags) > 1:
            raise SchemaError(f"several candidate tag fields {sorted(tags)}")
        return None

    def read_tagged(self, name: str, choices: list[Any], tag: str, doc: str) -> None:
        variants: list[Variant] = []
        is_open = False
        default = None
        for c in choices:
            props = c.get("properties", {})
            vdoc = first_line(c.get("description"))
            if tag in props and "const" not in props[tag]:
                # The catch-all branch of an open union: any other tag value.
                is_open = True
                continue
            if tag not in props:
                # The untagged default variant (McpServer stdio, AuthMethod agent).
                if default is not None:
                    raise SchemaError(f"{name}: two untagged default variants")
                payload = self.payload_of(name, c, camel(c.get("title", "default")), tag)
                vname = camel(c.get("title", "default"))
                default = vname
                variants.append(Variant(vname, None, payload, vdoc))
                continue
            value = props[tag]["const"]
            vname = camel(value)
            payload = self.payload_of(name, c, vname, tag)
            variants.append(Variant(vname, value, payload, vdoc))
        self.add(Union(name, "tagged", variants, tag, is_open, default, doc))

    def payload_of(self, union: str, c: dict[str, Any], vname: str, tag: str | None) -> TypeRef | None:
        """The body of a variant: a referenced type, an inline struct, or nothing."""
        refs = [a["$ref"] for a in c.get("allOf", []) if "$ref" in a]
        extra = {k: v for k, v in c.get("properties", {}).items() if k != tag}
        if len(refs) > 1:
            raise SchemaError(f"{union}.{vname}: several allOf refs")
        if refs and extra:
            raise SchemaError(f"{union}.{vname}: both a ref and inline properties")
        if refs:
            return NamedRef(ref_name(refs[0]))
        if extra:
            sname = union + vname
            inline = dict(c)
            inline["properties"] = extra
            inline["required"] = [r for r in c.get("required", []) if r != tag]
            self.add(Struct(sname, self.fields_of(sname, inline), None, first_line(c.get("description"))))
            return NamedRef(sname)
        if "anyOf" in c or "oneOf" in c:
            raise SchemaError(f"{union}.{vname}: nested choice in a tagged variant")
        return None

    def read_untagged(self, name: str, choices: list[Any], doc: str) -> None:
        variants = []
        for c in choices:
            title = c.get("title")
            if title is None:
                raise SchemaError(f"{name}: untagged variant without a title")
            vdoc = first_line(c.get("description"))
            if "allOf" in c and len(c["allOf"]) == 1 and set(c) <= {"title", "description", "allOf"}:
                payload: TypeRef = NamedRef(ref_name(c["allOf"][0]["$ref"]))
            elif c.get("type") == "object" and "properties" in c:
                sname = name + camel(title)
                self.add(Struct(sname, self.fields_of(sname, c), None, vdoc))
                payload = NamedRef(sname)
            else:
                payload, nullable = self.type_of(c, name + camel(title))
                if nullable:
                    raise SchemaError(f"{name}.{title}: nullable untagged variant")
            variants.append(Variant(camel(title), None, payload, vdoc))
        self.add(Union(name, "untagged", variants, None, False, None, doc))

    # -- property types -----------------------------------------------------

    def type_of(self, ps: dict[str, Any], synth_name: str) -> tuple[TypeRef, bool]:
        """The type reference of a property schema and whether it admits ``null``."""
        if "$ref" in ps:
            return NamedRef(ref_name(ps["$ref"])), False
        if "allOf" in ps and len(ps["allOf"]) == 1 and "$ref" in ps["allOf"][0]:
            return NamedRef(ref_name(ps["allOf"][0]["$ref"])), False
        choices = ps.get("anyOf") or ps.get("oneOf")
        if choices is not None and "type" not in ps:
            non_null = [c for c in choices if c.get("type") != "null"]
            nullable = len(non_null) != len(choices)
            if len(non_null) == 1:
                t, n2 = self.type_of(non_null[0], synth_name)
                return t, nullable or n2
            self.read_choice(synth_name, non_null, first_line(ps.get("description")))
            return NamedRef(synth_name), nullable
        ty = ps.get("type")
        if ty is None:
            return JsonRef(), False  # any JSON value (rawInput, data, result, ...)
        nullable = False
        if isinstance(ty, list):
            non_null = [t for t in ty if t != "null"]
            nullable = len(non_null) != len(ty)
            if len(non_null) != 1:
                raise SchemaError(f"{synth_name}: multi-type {ty}")
            ty = non_null[0]
        if ty == "string":
            if "enum" in ps:
                self.add(Enum(synth_name, list(ps["enum"]), False, first_line(ps.get("description"))))
                return NamedRef(synth_name), nullable
            return PrimRef("string"), nullable
        if ty == "boolean":
            return PrimRef("bool"), nullable
        if ty == "integer":
            fmt = ps.get("format", "int64")
            if fmt not in FORMATS:
                raise SchemaError(f"{synth_name}: integer format {fmt}")
            return PrimRef(FORMATS[fmt]), nullable  # type: ignore[arg-type]
        if ty == "number":
            return PrimRef("f64"), nullable
        if ty == "array":
            item, item_null = self.type_of(ps["items"], synth_name + "Item")
            if item_null:
                raise SchemaError(f"{synth_name}: nullable array items")
            return ArrayRef(item), nullable
        if ty == "object":
            ap = ps.get("additionalProperties")
            if "properties" in ps:
                self.add(Struct(synth_name, self.fields_of(synth_name, ps), None, first_line(ps.get("description"))))
                return NamedRef(synth_name), nullable
            if ap is True or ap is None:
                return JsonRef(object_only=True), nullable
            value, _ = self.type_of(ap, synth_name + "Value")
            return MapRef(value), nullable
        if ty == "null":
            raise SchemaError(f"{synth_name}: bare null type")
        raise SchemaError(f"{synth_name}: unsupported type {ty!r}")


def read_methods(schema: dict[str, Any], meta: dict[str, Any], stable_methods: set[str] | None) -> list[Method]:
    """The method table: every ``$defs`` entry with ``x-method``, joined per wire name.

    The meta file lists the same names; we check the two agree instead of trusting one.
    """
    by_method: dict[tuple[str, str], dict[str, str]] = {}
    for name, d in schema["$defs"].items():
        wire = d.get("x-method")
        if wire is None:
            continue
        side = d["x-side"]
        slot = by_method.setdefault((wire, side), {})
        if name.endswith("Request"):
            slot["params"] = name
        elif name.endswith("Response"):
            slot["result"] = name
        elif name.endswith("Notification"):
            slot["notification"] = name
        else:
            raise SchemaError(f"{name}: cannot tell params from result by name")
    methods = []
    for (wire, side), slot in sorted(by_method.items()):
        stability = "stable" if stable_methods is None or wire in stable_methods else "unstable"
        if "notification" in slot:
            methods.append(Method(wire, "notification", side, slot["notification"], None, stability))
        if "params" in slot or "result" in slot:
            if "params" not in slot or "result" not in slot:
                raise SchemaError(f"{wire}: request without both params and result types")
            methods.append(Method(wire, "request", side, slot["params"], slot["result"], stability))

    listed = set()
    for key in ("agentMethods", "clientMethods", "protocolMethods", "proxyMethods"):
        listed |= set(meta.get(key, {}).values())
    found = {m.wire for m in methods}
    if listed != found:
        raise SchemaError(f"meta and x-method disagree: only in meta {sorted(listed - found)}, only in schema {sorted(found - listed)}")
    return methods


def read_spec(
    schema_path: str, meta_path: str, sha256: str, version: str, surface: str, stable_methods: set[str] | None
) -> Spec:
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(meta_path, encoding="utf-8") as f:
        meta = json.load(f)
    decls = Reader(schema, None).read()
    methods = read_methods(schema, meta, stable_methods)
    for m in methods:
        for t in (m.params, m.result):
            if t is not None and t not in decls:
                raise SchemaError(f"{m.wire}: type {t} was not generated")
    rel = schema_path.rsplit("/spec/", 1)[-1]  # the path under spec/ (a checkout may sit in a folder named *spec)
    spec = Spec("acp", version, surface, rel, sha256, int(meta["version"]), decls, methods)
    spec.sources = [{"file": f"spec/{rel}", "sha256": sha256}]
    return spec


def read_version(spec_dir: str, version: str, hashes: dict[str, str]) -> Spec:
    """A whole wire version as one model: the UNSTABLE schema (a superset of the
    stable one), each declaration, field, variant, enum value and method marked
    ``unstable`` where the stable schema lacks it.  The rest is ``stable``, or
    ``draft`` for a draft wire version (v2)."""
    files = {
        "stable": (f"acp/{version}/schema.json", f"acp/{version}/meta.json"),
        "unstable": (f"acp/{version}/schema.unstable.json", f"acp/{version}/meta.unstable.json"),
    }
    def read(surface: str, stable_methods: set[str] | None) -> Spec:
        schema, meta = files[surface]
        return read_spec(f"{spec_dir}/{schema}", f"{spec_dir}/{meta}", hashes[schema], version, surface, stable_methods)

    stable = read("stable", None)
    full = read("unstable", {m.wire for m in stable.methods})
    base = DRAFT_VERSIONS.get(version, "stable")
    mark_stability(full, stable, base)  # type: ignore[arg-type]
    full.decls = merged_order(stable.decls, full.decls)
    full.sources = stable.sources + full.sources
    return full


def merged_order(stable: dict[str, Decl], full: dict[str, Decl]) -> dict[str, Decl]:
    """``full``'s declarations in the stable schema's order, each unstable-only one
    right after the declaration it follows in the unstable schema (so that the
    stable surface cut out of the model is in the stable schema's order)."""
    after: dict[str | None, list[str]] = {}
    previous: str | None = None
    for name in full:
        if name not in stable:
            after.setdefault(previous, []).append(name)
        previous = name
    order: list[str] = []

    def place(anchor: str | None) -> None:
        for name in after.pop(anchor, []):
            order.append(name)
            place(name)

    place(None)
    for name in stable:
        order.append(name)
        place(name)
    for rest in list(after):  # anchors that were themselves unplaced cannot remain, but be safe
        place(rest)
    if sorted(order) != sorted(full):
        raise SchemaError("merged declaration order lost a declaration")
    return {name: full[name] for name in order}


# Wire versions that are drafts as a whole (the pinned v2 schema says so of itself).
DRAFT_VERSIONS = {"v2": "draft"}


def mark_stability(full: Spec, stable: Spec, base: Stability) -> None:
    """Marks what ``full`` has beyond ``stable`` as unstable, the rest as ``base``.

    Fails if the stable schema has anything the unstable one lacks or holds
    differently (then "unstable = stable + additions" would not hold and a
    surface could not be cut out of the one model).  What both schemas have keeps
    the stable schema's description (the unstable one links to draft pages)."""
    for m in full.methods:
        m.stability = base if m.stability == "stable" else "unstable"
    for name, d in full.decls.items():
        old = stable.decls.get(name)
        if old is None:
            _mark_all(d, "unstable")
            continue
        if type(old) is not type(d):
            raise SchemaError(f"{name}: a {old.decl} in the stable schema, a {d.decl} in the unstable one")
        _mark_all(d, base)
        d.doc = old.doc
        if isinstance(d, Struct) and isinstance(old, Struct):
            known = {f.wire: f for f in old.fields}
            for f in d.fields:
                if f.wire not in known:
                    f.stability = "unstable"
                else:
                    f.doc = known[f.wire].doc
        elif isinstance(d, Union) and isinstance(old, Union):
            known_v = {v.name: v for v in old.variants}
            for v in d.variants:
                if v.name not in known_v:
                    v.stability = "unstable"
                else:
                    v.doc = known_v[v.name].doc
        elif isinstance(d, Enum) and isinstance(old, Enum):
            d.value_stability = [base if v in old.values else "unstable" for v in d.values]
            old_docs = dict(zip(old.values, old.value_docs))
            d.value_docs = [old_docs.get(v, doc) for v, doc in zip(d.values, d.value_docs)] if d.value_docs else d.value_docs
    for name in stable.decls:
        if name not in full.decls:
            raise SchemaError(f"{name}: in the stable schema only")


def _mark_all(d: Decl, stability: Stability) -> None:
    d.stability = stability
    if isinstance(d, Struct):
        for f in d.fields:
            f.stability = stability
    elif isinstance(d, Union):
        for v in d.variants:
            v.stability = stability
    elif isinstance(d, Enum):
        d.value_stability = [stability] * len(d.values)
