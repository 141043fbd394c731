"""The A2A 0.3 <-> 1.0 mapping as tables: the pinned 0.3 JSON schema, the 1.0 model (read
from the proto) and `rules/a2a.toml [v03]`, which says only what cannot be derived.

Each shape of the rules pairs a 0.3 definition with a 1.0 message (or union). Members of
the same name are matched; the rules add renames, negated booleans, flattened members,
members one side drops, and the names of the hand-written conversions. From the schemas
come: each member's conversion (a nested shape, a list or map of one, an enum table, or
a plain copy), the 0.3 `const` discriminators (`kind`, a security scheme's `type`), the
members 0.3 requires (written as `""` when 1.0 leaves a string out), the union variants
and their tags, the enum tables (0.3 `input-required` <-> `TASK_STATE_INPUT_REQUIRED`
through the 1.0 enum's prefix; numbers from the proto's order), and the method table.

Every 0.3 member of a shape must be accounted for (matched, renamed, dropped, read by a
conversion), and so must every 1.0 member; a rules entry naming a member or a type that
does not exist is an error. So a refreshed schema cannot silently lose a member.

`read()`/`parse()` give language-neutral `Tables`; `rust_a2a_v03.rust()` writes the Rust
crate's `generated/v03.rs`, walked by `crates/a2a/src/compat/v03/engine.rs`.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RULES = "rules/a2a.toml"
SCHEMA_V03 = "spec/a2a/v0.3/a2a.json"
MODEL_V1 = "codegen/model/a2a-v1.json"

SHAPE_KEYS = {"v03", "v1", "rename", "not", "flatten", "drop", "v1_only", "value", "members", "custom"}
METHOD_KEYS = {"name", "operation", "params", "result"}


# ---------------------------------------------------------------------------
# The tables


@dataclass(frozen=True)
class EnumTable:
    name: str  # the 1.0 enum (TaskState)
    rows: list[tuple[str, str, int]]  # (0.3 value, 1.0 name, 1.0 number)


@dataclass(frozen=True)
class Rule:
    """One member rule. `op` is one of Copy, CopyRequired, Rename, Field, List, Map, Enum,
    Const, Not, Flatten, Members; `args` its arguments: member names, then a shape name
    (`shape`), an enum table (`enum`), a value function (`value`) or members function."""

    op: str
    names: tuple[str, ...] = ()
    shape: str | None = None  # a shape's name, for Field, List, Map, Flatten
    value: str | None = None  # a value function, for Field
    enum: str | None = None  # an enum table, for Enum
    fn: str | None = None  # a members function, for Members


@dataclass(frozen=True)
class Variant:
    v1_member: str  # statusUpdate
    tag: str  # status-update
    shape: str


@dataclass
class Shape:
    name: str  # the rules key (Message)
    v03: str  # the 0.3 definition or location
    v1: str  # the 1.0 message or union
    kind: str = "object"  # object, union, wrapped, empty, no_params, custom
    rules: list[Rule] = field(default_factory=list)
    tag: str = ""  # union: the 0.3 discriminator member
    variants: list[Variant] = field(default_factory=list)
    wrapped: str = ""  # wrapped: the 1.0 array member
    item: str = ""  # wrapped: the items' shape
    custom: str = ""  # custom: the value function
    covers_v1: set[str] = field(default_factory=set)  # object: the 1.0 members it writes


@dataclass(frozen=True)
class Method:
    name: str
    operation: str
    params: str
    result: str


@dataclass
class Tables:
    shapes: dict[str, Shape]
    enums: dict[str, EnumTable]
    methods: list[Method]
    value_fns: list[str]
    members_fns: list[str]
    sources: list[tuple[str, str]]  # (file, sha256)


def fail(where: str, what: str) -> ValueError:
    return ValueError(f"{RULES} [v03] {where}: {what}")


# ---------------------------------------------------------------------------
# Reading


def read(root: Path) -> Tables:
    """The tables from the rules file, the 0.3 schema and the 1.0 model dump under `root`."""
    return read_with(root, json.loads((root / MODEL_V1).read_bytes()))


def read_with(root: Path, model: dict[str, Any]) -> Tables:
    """The tables from the rules file and the 0.3 schema under `root`, and the 1.0 model
    (as `Spec.to_json()` writes it: the generator passes the model it just built)."""
    return parse((root / RULES).read_bytes(), (root / SCHEMA_V03).read_bytes(), model)


def parse(rules_bytes: bytes, schema_bytes: bytes, model: dict[str, Any]) -> Tables:
    """The tables from the rules' and the 0.3 schema's bytes and the 1.0 model (as dumped)."""
    section = tomllib.loads(rules_bytes.decode("utf-8")).get("v03")
    if not isinstance(section, dict) or not isinstance(section.get("shapes"), dict):
        raise fail("", "missing: a [v03.shapes] table")
    unknown = set(section) - {"same", "enums", "shapes", "methods"}
    if unknown:
        raise fail("", f"unknown keys {sorted(unknown)}")
    reader = Reader(section, json.loads(schema_bytes)["definitions"], model)
    shapes = reader.shapes()
    methods = reader.methods()
    proto = next((s for s in model.get("sources", []) if str(s.get("file", "")).endswith(".proto")), None)
    sources = [
        (RULES, hashlib.sha256(rules_bytes).hexdigest()),
        (SCHEMA_V03, hashlib.sha256(schema_bytes).hexdigest()),
    ]
    if proto:
        sources.append(
            (f"spec/{proto['file']}" if not proto["file"].startswith("spec/") else proto["file"], proto["sha256"])
        )
    return Tables(shapes, reader.enums, methods, reader.value_fns, reader.members_fns, sources)


Schema = dict[str, Any]


class Reader:
    def __init__(self, section: dict[str, Any], defs: dict[str, Schema], model: dict[str, Any]) -> None:
        self.section = section
        self.defs = defs
        self.decls: dict[str, dict[str, Any]] = model["decls"]
        self.model_methods = {m["wire"]: m for m in model["methods"]}
        self.raw: dict[str, dict[str, Any]] = section["shapes"]
        self.same: list[str] = list(section.get("same", []))
        self.enum_rules: dict[str, dict[str, Any]] = dict(section.get("enums", {}))
        self.enums: dict[str, EnumTable] = {}
        self.value_fns: list[str] = []
        self.members_fns: list[str] = []
        self.built: dict[str, Shape] = {}
        for name in self.same:
            self.check_same(name)
        for name, raw in self.raw.items():
            unknown = set(raw) - SHAPE_KEYS
            if unknown:
                raise fail(f"shapes.{name}", f"unknown keys {sorted(unknown)}")
            if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", name):
                raise fail(f"shapes.{name}", "a shape's name must be UpperCamelCase")

    # -- lookups --------------------------------------------------------------

    def location(self, where: str, loc: str) -> Schema:
        """A 0.3 definition, or `Definition.member`'s schema."""
        d, _, m = loc.partition(".")
        if d not in self.defs:
            raise fail(where, f"no definition {d!r} in {SCHEMA_V03}")
        s = self.defs[d]
        if m:
            props = s.get("properties", {})
            if m not in props:
                raise fail(where, f"0.3 {d} has no member {m!r}")
            return dict(props[m])
        return s

    def decl(self, where: str, name: str) -> dict[str, Any]:
        if name not in self.decls:
            raise fail(where, f"no 1.0 message {name!r} in the model")
        return self.decls[name]

    def check_same(self, name: str) -> None:
        d = self.location(f"same {name}", name)
        decl = self.decl(f"same {name}", name)
        a = set(d.get("properties", {}))
        b = {f["wire"] for f in decl.get("fields", [])}
        if a != b:
            raise fail(f"same {name}", f"0.3 members {sorted(a)} differ from 1.0 members {sorted(b)}")

    def shape_for(self, where: str, v03: str, v1: str) -> str | None:
        """The shape converting 0.3 `v03` to 1.0 `v1`: the only one, or the one named `v03`."""
        found = [n for n, r in self.raw.items() if r.get("v03", n) == v03 and r.get("v1", n) == v1]
        if len(found) > 1:
            found = [n for n in found if n == v03]
            if len(found) != 1:
                raise fail(where, f"several shapes convert 0.3 {v03} to 1.0 {v1}, and none is named {v03}")
        if not found:
            return None
        self.shape(found[0])
        return found[0]

    # -- shapes ---------------------------------------------------------------

    def shapes(self) -> dict[str, Shape]:
        for name in self.raw:
            self.shape(name)
        return {n: self.built[n] for n in self.raw}

    def shape(self, name: str) -> Shape:
        if name in self.built:
            return self.built[name]
        raw = self.raw[name]
        where = f"shapes.{name}"
        v03, v1 = raw.get("v03", name), raw.get("v1", name)
        decl = self.decl(where, v1)
        shape = Shape(name, v03, v1)
        self.built[name] = shape  # before the members, so that shapes may nest themselves
        member_keys = set(raw) - {"v03", "v1", "custom", "v1_only"}
        if ("custom" in raw or v03 == "") and set(raw) & (member_keys | ({"v1_only"} if "custom" in raw else set())):
            raise fail(
                where,
                f"a shape converted whole takes no member rules, found {sorted(set(raw) - {'v03', 'v1', 'custom'})}",
            )
        if "custom" in raw:
            self.location(where, v03)
            shape.kind, shape.custom = "custom", self.value_fn(raw["custom"])
            return shape
        if v03 == "":
            shape.kind = "no_params"
            self.account_v1(where, decl, set(), raw)
            return shape
        schema = self.location(where, v03)
        if schema.get("type") != "object" and "properties" not in schema and member_keys:
            raise fail(where, f"member rules {sorted(member_keys)} on 0.3 {v03}, which is not an object")
        if "anyOf" in schema:
            if "v1_only" in raw:
                raise fail(where, "v1_only on a union")
            self.union(shape, schema, decl)
        elif schema.get("type") == "null":
            if decl.get("fields") != [] or decl.get("decl") != "struct":
                raise fail(where, f"0.3 {v03} is null but 1.0 {v1} is not an empty message")
            shape.kind = "empty"
        elif schema.get("type") == "array":
            self.wrapped(shape, schema, decl, raw)
        else:
            self.object(shape, schema, decl, raw)
        return shape

    def union(self, shape: Shape, schema: Schema, decl: dict[str, Any]) -> None:
        where = f"shapes.{shape.name}"
        if decl.get("decl") != "union":
            raise fail(where, f"0.3 {shape.v03} is a union but 1.0 {shape.v1} is not")
        refs = [ref_name(a) for a in schema["anyOf"]]
        if None in refs:
            raise fail(where, f"0.3 {shape.v03}: every variant must be a $ref")
        consts = [
            {k: v["const"] for k, v in self.defs[r].get("properties", {}).items() if "const" in v} for r in refs if r
        ]
        tags = set.intersection(*(set(c) for c in consts)) if consts else set()
        if len(tags) != 1:
            raise fail(
                where, f"0.3 {shape.v03}: expected one member that is a const in every variant, found {sorted(tags)}"
            )
        shape.kind, shape.tag = "union", tags.pop()
        unused = list(refs)
        for v in decl["variants"]:
            payload = v["payload"].get("name")
            match = [r for r in unused if r and payload and self.shape_for(where, r, payload)]
            if len(match) != 1:
                raise fail(
                    where,
                    f"1.0 variant {v['tag']} ({payload}): expected one 0.3 variant converted to it, found {match}",
                )
            r = match[0]
            unused.remove(r)
            inner = self.shape_for(where, r, payload)
            assert r is not None and inner is not None
            shape.variants.append(Variant(v["tag"], self.defs[r]["properties"][shape.tag]["const"], inner))
        if unused:
            raise fail(where, f"0.3 variants {unused} have no 1.0 variant")

    def wrapped(self, shape: Shape, schema: Schema, decl: dict[str, Any], raw: dict[str, Any]) -> None:
        where = f"shapes.{shape.name}"
        item = ref_name(schema.get("items", {}))
        arrays = [
            (f["wire"], s)
            for f in decl.get("fields", [])
            if f["type"]["kind"] == "array" and item
            for s in [self.shape_for(where, item, f["type"]["item"].get("name", ""))]
            if s
        ]
        if len(arrays) != 1:
            raise fail(
                where,
                f"0.3 {shape.v03} is an array of {item}: expected one 1.0 {shape.v1} member listing it, found {arrays}",
            )
        shape.kind, (shape.wrapped, shape.item) = "wrapped", arrays[0]
        self.account_v1(where, decl, {shape.wrapped}, raw)

    def object(self, shape: Shape, schema: Schema, decl: dict[str, Any], raw: dict[str, Any]) -> None:
        where = f"shapes.{shape.name}"
        if decl.get("decl") != "struct":
            raise fail(where, f"1.0 {shape.v1} is not a message")
        props: dict[str, Schema] = schema.get("properties", {})
        required = set(schema.get("required", []))
        fields = {f["wire"]: f for f in decl["fields"]}
        rename: dict[str, str] = dict(raw.get("rename", {}))
        negate: dict[str, str] = dict(raw.get("not", {}))
        flatten: list[str] = list(raw.get("flatten", []))
        drop: list[str] = list(raw.get("drop", []))
        values: dict[str, str] = dict(raw.get("value", {}))
        members: list[dict[str, Any]] = list(raw.get("members", []))

        claimed = [*rename, *negate, *flatten, *drop, *(m for e in members for m in e.get("v03", []))]
        twice = sorted({m for m in claimed if claimed.count(m) > 1})
        if twice:
            raise fail(where, f"0.3 members {twice} are named by more than one rule")

        def v03_member(what: str, m: str) -> None:
            if m not in props:
                raise fail(where, f"{what} names {m!r}, which is not a member of 0.3 {shape.v03}")

        def v1_member(what: str, m: str) -> None:
            if m not in fields:
                raise fail(where, f"{what} names {m!r}, which is not a member of 1.0 {shape.v1}")

        for a, b in [*rename.items(), *negate.items()]:
            v03_member("rename/not", a)
            v1_member("rename/not", b)
        for m in [*flatten, *drop, *values]:
            v03_member("flatten/drop/value", m)
        for m in drop:
            if m in fields:
                raise fail(where, f"drop names {m!r}, but 1.0 {shape.v1} has it")
        by_fn: dict[str, set[str]] = {}
        v1_by_fn: set[str] = set()
        for entry in members:
            unknown = set(entry) - {"fn", "v03", "v1"}
            if unknown or not isinstance(entry.get("fn"), str):
                raise fail(where, "a members entry is { fn = name, v03 = [...], v1 = [...] }")
            for m in entry.get("v03", []):
                v03_member(f"members {entry['fn']}", m)
            for m in entry.get("v1", []):
                v1_member(f"members {entry['fn']}", m)
            by_fn[entry["fn"]] = set(entry.get("v03", []))
            v1_by_fn |= set(entry.get("v1", []))
        read_by_fn = set().union(*by_fn.values()) if by_fn else set()

        rules: list[Rule] = []
        written: set[str] = set(v1_by_fn)
        for m, p in props.items():
            if "const" in p:
                rules.append(Rule("Const", (m, str(p["const"]))))
                continue
            if m in drop or m in read_by_fn:
                continue
            if m in flatten:
                inner = self.shape_for(where, ref_name(p) or "", shape.v1)
                if inner is None:
                    raise fail(where, f"flatten {m!r}: no shape converts 0.3 {ref_name(p)} to 1.0 {shape.v1}")
                rules.append(Rule("Flatten", (m,), shape=inner))
                written |= self.built[inner].covers_v1
                continue
            if m in negate:
                rules.append(Rule("Not", (m, negate[m])))
                written.add(negate[m])
                continue
            target = rename.get(m, m)
            if target not in fields:
                raise fail(
                    where, f"0.3 member {m!r} of {shape.v03} is not in 1.0 {shape.v1} and no rule accounts for it"
                )
            written.add(target)
            rules.append(self.member(where, m, target, p, fields[target], m in required, values.get(m)))
        for fn in by_fn:
            rules.append(Rule("Members", fn=self.members_fn(fn)))
        shape.kind, shape.rules = "object", order(rules, list(fields))
        shape.covers_v1 = written
        self.account_v1(where, decl, written, raw)

    def account_v1(self, where: str, decl: dict[str, Any], written: set[str], raw: dict[str, Any]) -> None:
        only = list(raw.get("v1_only", []))
        fields = [f["wire"] for f in decl.get("fields", [])]
        for m in only:
            if m not in fields:
                raise fail(where, f"v1_only names {m!r}, which is not a member of 1.0 {decl['name']}")
            if m in written:
                raise fail(where, f"v1_only names {m!r}, but a 0.3 member maps to it")
        for m in fields:
            if m not in written and m not in only:
                raise fail(where, f"1.0 member {m!r} of {decl['name']} has no 0.3 member and is not in v1_only")

    def member(
        self, where: str, a: str, b: str, p: Schema, f: dict[str, Any], required: bool, value: str | None
    ) -> Rule:
        """The rule for 0.3 member `a` (schema `p`) and 1.0 member `b` (field `f`)."""
        names = (a,) if a == b else (a, b)
        two = (a, b)
        if value is not None:
            return Rule("Field", two, value=self.value_fn(value))
        t = f["type"]
        named = t.get("name") if t["kind"] == "named" else None
        if named and self.decls[named]["decl"] == "enum":
            return Rule("Enum", two, enum=self.enum(where, a, p, named))
        nested = {
            "named": (named, ref_name(p), "Field"),
            "array": (t.get("item", {}).get("name"), ref_name(p.get("items", {})), "List"),
            "map": (t.get("value", {}).get("name"), ref_name(p.get("additionalProperties") or {}), "Map"),
        }
        if t["kind"] in nested:
            v1_type, v03_type, op = nested[t["kind"]]
            if v1_type and v03_type:
                s = self.shape_for(where, v03_type, v1_type)
                if s is not None:
                    return Rule(op, two, shape=s)
                if v03_type not in self.same or v1_type != v03_type:
                    raise fail(where, f"member {a!r}: no shape converts 0.3 {v03_type} to 1.0 {v1_type}")
            elif v1_type or v03_type:
                raise fail(
                    where, f"member {a!r}: 0.3 {v03_type or 'inline value'} and 1.0 {v1_type or 'plain value'} differ"
                )
        if a != b:
            return Rule("Rename", two)
        if required and p.get("type") == "string":
            return Rule("CopyRequired", names)
        return Rule("Copy", names)

    def enum(self, where: str, member: str, p: Schema, name: str) -> str:
        values = p.get("enum")
        ref = ref_name(p)
        if values is None and ref:
            values = self.defs[ref].get("enum")
        if not isinstance(values, list):
            raise fail(where, f"member {member!r}: 1.0 {name} is an enum but 0.3 gives no enum values")
        decl = self.decls[name]
        prefix = decl["strip_prefix"] or ""
        # The proto's numbers where the model keeps them; else the proto reader's rule:
        # the zero value is `<PREFIX>UNSPECIFIED` and the legal values are 1, 2, ... in order.
        given = decl.get("numbers") or [i + 1 for i in range(len(decl["values"]))]
        numbers = dict(zip(decl["values"], given, strict=True))
        numbers[f"{prefix}UNSPECIFIED"] = 0
        extra: dict[str, str] = dict(self.enum_rules.get(name, {}).get("extra", {}))
        rows: list[tuple[str, str, int]] = []
        tail: list[tuple[str, str, int]] = []
        for v in values:
            if v in extra:
                if extra[v] not in numbers:
                    raise fail(f"enums.{name}", f"{v!r} maps to {extra[v]!r}, which is not a value of 1.0 {name}")
                tail.append((v, extra[v], numbers[extra[v]]))
                continue
            v1 = prefix + re.sub(r"[^A-Za-z0-9]+", "_", v).upper()
            if v1 not in decl["values"]:
                raise fail(f"enums.{name}", f"0.3 value {v!r} has no 1.0 value {v1} and no extra entry")
            rows.append((v, v1, numbers[v1]))
        for v in extra:
            if v not in values:
                raise fail(f"enums.{name}", f"extra names {v!r}, which is not a 0.3 value")
        missing = set(decl["values"]) - {r[1] for r in rows}
        if missing:
            raise fail(f"enums.{name}", f"1.0 values {sorted(missing)} have no 0.3 value")
        table = EnumTable(name, sorted(rows, key=lambda r: r[2]) + tail)
        if name in self.enums and self.enums[name] != table:
            raise fail(where, f"member {member!r}: the 0.3 values of {name} differ from another member's")
        self.enums[name] = table
        return name

    def value_fn(self, name: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise fail("", f"a function name must be snake_case, found {name!r}")
        if name not in self.value_fns:
            self.value_fns.append(name)
        return name

    def members_fn(self, name: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise fail("", f"a function name must be snake_case, found {name!r}")
        if name not in self.members_fns:
            self.members_fns.append(name)
        return name

    # -- methods --------------------------------------------------------------

    def methods(self) -> list[Method]:
        out: list[Method] = []
        requests = {
            d["properties"]["method"]["const"]: n
            for n, d in self.defs.items()
            if "const" in d.get("properties", {}).get("method", {})
        }
        for i, raw in enumerate(self.section.get("methods", [])):
            where = f"methods[{i}] ({raw.get('name', '?')})"
            if set(raw) != METHOD_KEYS:
                raise fail(where, f"expected the keys {sorted(METHOD_KEYS)}, found {sorted(raw)}")
            name, op = raw["name"], raw["operation"]
            if name not in requests:
                raise fail(where, f"no 0.3 request has the method {name!r}")
            if op not in self.model_methods:
                raise fail(where, f"no 1.0 operation {op!r}")
            m = self.model_methods[op]
            for key in ("params", "result"):
                if raw[key] not in self.raw:
                    raise fail(where, f"{key} names {raw[key]!r}, which is not a shape")
            params, result = self.shape(raw["params"]), self.shape(raw["result"])
            request = self.defs[requests[name]]
            # The 0.3 params: one definition, none, or several (`anyOf`) of which the
            # shape converts one that holds the others' members.
            p = request.get("properties", {}).get("params")
            want = [ref_name(a) or "?" for a in p["anyOf"]] if p and "anyOf" in p else [ref_name(p or {}) or ""]
            if params.v03 not in want or params.v1 != m["params"]:
                raise fail(
                    where,
                    f"params: 0.3 {' or '.join(want) or 'none'} -> 1.0 {m['params']}, "
                    f"but shape {params.name} is {params.v03 or 'none'} -> {params.v1}",
                )
            for other in want if params.v03 else []:
                extra = set(self.defs.get(other, {}).get("properties", {})) - set(
                    self.defs[params.v03].get("properties", {})
                )
                if extra:
                    raise fail(
                        where,
                        f"params: shape {params.name} reads 0.3 {params.v03}, which lacks {sorted(extra)} of {other}",
                    )
            if result.v1 != m["result"]:
                raise fail(where, f"result: 1.0 {m['result']}, but shape {result.name} converts to {result.v1}")
            answer = requests[name].removesuffix("Request") + "SuccessResponse"
            if answer in self.defs:
                r = self.defs[answer]["properties"]["result"]
                if result.v03 != f"{answer}.result" and ref_name(r) != result.v03:
                    raise fail(where, f"result: 0.3 {answer}.result, but shape {result.name} converts {result.v03}")
            if any(x.name == name for x in out):
                raise fail(where, "method listed twice")
            out.append(Method(name, op, params.name, result.name))
        return out


def ref_name(schema: Schema) -> str | None:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def order(rules: list[Rule], v1_fields: list[str]) -> list[Rule]:
    """Discriminators first, then in the 1.0 message's member order, then the functions
    (which may read what the other rules wrote)."""

    def key(r: Rule) -> tuple[int, int]:
        if r.op == "Const":
            return (0, 0)
        if r.op in ("Members", "Flatten"):
            return (2, 0) if r.op == "Flatten" else (3, 0)
        target = r.names[-1]
        return (1, v1_fields.index(target) if target in v1_fields else len(v1_fields))

    return sorted(rules, key=key)
