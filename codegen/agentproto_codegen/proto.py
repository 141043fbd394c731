"""Read a proto3 file (A2A's ``a2a.proto``) into the model, with the ProtoJSON mapping.

Only the subset of proto3 that ``a2a.proto`` uses is accepted; anything else fails
loudly so that a new upstream construct is noticed, not skipped.  The mapping:

* a message is a ``Struct``; its JSON keys are the lowerCamelCase field names and the
  proto (snake_case) names are accepted as aliases on input;
* ``REQUIRED`` (``google.api.field_behavior``) fields must be present, and a required
  repeated field must hold at least one item;
* other singular scalars are proto3 "implicit presence": absent reads as the zero
  value and the zero value is omitted on output; ``optional`` scalars and message
  fields are ``Option``s; repeated and map fields default to empty and are omitted
  when empty;
* a ``oneof`` is decided by which member key is present (``Oneof``); a message that
  is nothing but one oneof (``StreamResponse``) becomes a ``Union`` with the ``keyed``
  strategy;
* enums are their value names; the ``*_UNSPECIFIED`` zero value is not a legal value;
  the values must be numbered 0, 1, 2, ... in order, so that the emitters can read a
  value given by its number (ProtoJSON accepts both) as the n-th legal value;
* ``bytes`` is base64, ``google.protobuf.Timestamp`` an RFC 3339 string,
  ``google.protobuf.Struct`` a JSON object, ``google.protobuf.Value`` any JSON value,
  ``google.protobuf.Empty`` an empty object;
* the service's rpcs and their ``google.api.http`` rules become the operation table;
* every field, oneof member and enum value keeps its proto number (``Field.number``,
  ``Variant.number``, ``Enum.numbers``), which the protobuf codec emitter
  (``rust_a2a_proto.py``) reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .model import (
    ArrayRef,
    Decl,
    Enum,
    Field,
    HttpRule,
    JsonRef,
    MapRef,
    Method,
    NamedRef,
    Oneof,
    PrimRef,
    QueryField,
    Spec,
    Struct,
    TypeRef,
    Union,
    Variant,
)

SCALARS = {
    "string": PrimRef("string"),
    "bool": PrimRef("bool"),
    "int32": PrimRef("i32"),
    "bytes": PrimRef("bytes"),
}
WELL_KNOWN = {
    "google.protobuf.Struct": JsonRef(object_only=True),
    "google.protobuf.Value": JsonRef(),
    "google.protobuf.Timestamp": PrimRef("timestamp"),
}
ZERO = {"string": "", "bool": False, "i32": 0}


def lower_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


# ---------------------------------------------------------------------------
# Tokenizer: identifiers, strings, numbers, punctuation; comments kept as docs.

TOKEN = re.compile(
    r"""(?P<comment>//[^\n]*)|(?P<ws>\s+)|(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+)"""
    r"""|(?P<ident>[A-Za-z_][A-Za-z0-9_.]*)|(?P<punct>[{}()\[\];=<>,:])"""
)


@dataclass
class Tok:
    kind: str
    text: str
    doc: str  # the comment lines right above this token


def tokenize(text: str) -> list[Tok]:
    toks: list[Tok] = []
    pending: list[str] = []
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"proto: cannot read at offset {pos}: {text[pos:pos + 30]!r}")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        if kind == "comment":
            line = m.group()[2:].strip()
            if not line.startswith(("(--", "api-linter", "aip.dev", "protolint")) and not line.endswith("--)"):
                pending.append(line)
            continue
        if kind == "ws":
            if m.group().count("\n") > 1:
                pending = []  # a blank line detaches a comment
            continue
        toks.append(Tok(kind, m.group(), "\n".join(pending)))
        pending = []
    return toks


class Parser:
    def __init__(self, toks: list[Tok]):
        self.toks = toks
        self.i = 0

    def peek(self, k: int = 0) -> Tok:
        return self.toks[self.i + k]

    def next(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, text: str) -> Tok:
        t = self.next()
        if t.text != text:
            raise ValueError(f"proto: expected {text!r}, found {t.text!r} (token {self.i})")
        return t

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    def skip_statement(self) -> None:
        depth = 0
        while True:
            t = self.next()
            if t.text == "{":
                depth += 1
            elif t.text == "}":
                depth -= 1
                if depth == 0:
                    if not self.at_end() and self.peek().text == ";":
                        self.next()
                    return
            elif t.text == ";" and depth == 0:
                return

    def options(self) -> list[str]:
        """`[opt = v, …]` after a field: returns the field_behavior values."""
        behaviors = []
        if self.peek().text != "[":
            return behaviors
        self.next()
        while True:
            t = self.next()
            if t.text == "]":
                return behaviors
            if t.text == "(" and self.peek().text == "google.api.field_behavior":
                self.next()
                self.expect(")")
                self.expect("=")
                behaviors.append(self.next().text)


# ---------------------------------------------------------------------------


@dataclass
class RawField:
    name: str
    type: str
    label: str  # "", "optional", "repeated", "map"
    map_value: str | None
    behaviors: list[str]
    doc: str
    number: int  # the field number (the protobuf wire form's tag)


def read_proto(path: str, source_file: str, sha256: str, rules: dict[str, Any]) -> Spec:
    """The proto file as a model; ``rules`` is ``rules/a2a.toml`` (its `messages` and
    `rest` sections decide what the types alone do not)."""
    messages_rules = rules["messages"]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    p = Parser(tokenize(text))
    package = ""
    messages: dict[str, tuple[str, list[RawField], list[tuple[str, list[RawField], str]]]] = {}
    enums: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    rpcs: list[Method] = []
    while not p.at_end():
        t = p.peek()
        if t.text in ("syntax", "import", "option"):
            p.skip_statement()
        elif t.text == "package":
            p.next()
            package = p.next().text
            p.expect(";")
        elif t.text == "message":
            name, fields, oneofs = read_message(p)
            messages[name] = (t.doc, fields, oneofs)
        elif t.text == "enum":
            name, values = read_enum(p)
            enums[name] = (t.doc, values)
        elif t.text == "service":
            rpcs = read_service(p)
        else:
            raise ValueError(f"proto: unexpected top-level {t.text!r}")

    def ref(type_name: str) -> TypeRef:
        if type_name in SCALARS:
            return SCALARS[type_name]
        if type_name in WELL_KNOWN:
            return WELL_KNOWN[type_name]
        if type_name == "google.protobuf.Empty":
            return NamedRef("Empty")
        if type_name in messages or type_name in enums:
            return NamedRef(type_name)
        raise ValueError(f"proto: unknown type {type_name!r}")

    large_text = set(messages_rules.get("large_text", []))
    unused_large_text = set(large_text)

    def member_ref(owner: str, f: RawField) -> TypeRef:
        """The field's type, with a `string` listed in `large_text` marked as such."""
        base = ref(f.map_value if f.label == "map" and f.map_value else f.type)
        name = f"{owner}.{f.name}"
        if name in large_text:
            if base != PrimRef("string") or f.label != "":
                raise ValueError(f"rules: large_text names {name}, which is not a singular string field")
            unused_large_text.discard(name)
            return PrimRef("text")
        return base

    def model_field(owner: str, f: RawField, in_oneof: bool) -> Field:
        wire = lower_camel(f.name)
        aliases = [f.name] if f.name != wire else []
        required = "REQUIRED" in f.behaviors
        base = member_ref(owner, f)
        if f.label == "map":
            t: TypeRef = MapRef(base)
        elif f.label == "repeated":
            t = ArrayRef(base)
        else:
            t = base
        fld = Field(wire=wire, type=t, required=required, doc=f.doc, aliases=aliases, number=f.number)
        if in_oneof:
            return fld
        if f.label in ("repeated", "map"):
            # A required list must hold an item, except in a response, where an empty
            # result (a ListTasks page that matches nothing) is still an answer.
            needs_item = messages_rules["required_list_needs_item"] and not owner.endswith(messages_rules["empty_list_allowed_suffix"])
            if required and f.label == "repeated" and needs_item:
                fld.min_items = 1
            elif not required:
                fld.has_default = True
                fld.default = [] if f.label == "repeated" else {}
                fld.omit_default = True
        elif f.label == "" and isinstance(base, PrimRef) and base.prim in ZERO:
            # Implicit presence: the zero value stands for "absent".
            if not required:
                fld.has_default = True
                fld.default = ZERO[base.prim]
                fld.omit_default = True
        return fld

    decls: dict[str, Decl] = {}
    decls["Empty"] = Struct(name="Empty", fields=[], doc="An empty object (`google.protobuf.Empty`).")
    for name, (doc, values) in enums.items():
        if not values or not values[0][0].endswith("_UNSPECIFIED") or any(v.endswith("_UNSPECIFIED") for v, _ in values[1:]):
            # The legal values are then exactly numbers 1..n (see read_enum).
            raise ValueError(f"proto: enum {name}: the zero value, and only it, must be *_UNSPECIFIED")
        legal = [v for v, _ in values if not v.endswith("_UNSPECIFIED")]
        vdocs = [d for v, d in values if not v.endswith("_UNSPECIFIED")]
        prefix = values[0][0].removesuffix("UNSPECIFIED") if values and values[0][0].endswith("_UNSPECIFIED") else ""
        # read_enum checked the numbering: the legal values are 1..n, in order.
        numbers = list(range(1, len(legal) + 1))
        decls[name] = Enum(name=name, values=legal, doc=doc, value_docs=vdocs, strip_prefix=prefix, numbers=numbers)
    for name, (doc, fields, oneofs) in messages.items():
        def keyed(union_name: str, members: list[RawField], udoc: str) -> Union:
            variants = [Variant(name=camel_ident(m.name), tag=lower_camel(m.name), payload=member_ref(name, m), doc=m.doc, number=m.number) for m in members]
            aliases = {lower_camel(m.name): m.name for m in members if m.name != lower_camel(m.name)}
            return Union(name=union_name, strategy="keyed", variants=variants, doc=udoc, aliases=aliases, on_unknown="error")

        if not fields and len(oneofs) == 1:
            decls[name] = keyed(name, oneofs[0][1], doc)
            continue
        st = Struct(name=name, fields=[model_field(name, f, False) for f in fields], doc=doc)
        if oneofs and not messages_rules["oneof_required"]:
            raise ValueError("proto: optional oneofs are not supported by the emitters")
        for oname, members, odoc in oneofs:
            # A oneof inside a message is required (rules/a2a.toml): A2A gives every
            # such choice (a part's content) exactly one member.
            type_name = name + camel_ident(oname)
            st.oneofs.append(Oneof(name=oname, type_name=type_name, members=[model_field(name, m, True) for m in members], doc=odoc))
            decls[type_name] = keyed(type_name, members, odoc or f"What a `{name}` holds.")
        decls[name] = st
    if unused_large_text:
        raise ValueError(f"rules: large_text names fields the proto does not have: {sorted(unused_large_text)}")
    for m in rpcs:
        add_rest_rules(m, decls, rules["rest"])
    spec = Spec(
        protocol="a2a", version="v1", surface="stable", source_file=source_file, source_sha256=sha256,
        wire_version="1.0", decls=decls, methods=rpcs, package=package,
    )
    spec.sources = [{"file": f"spec/{source_file}", "sha256": sha256}]
    spec.rules = {
        "messages": {k: v for k, v in messages_rules.items() if k != "docs"},
        "rest": {k: v for k, v in rules["rest"].items() if k not in ("docs", "also")},
    }
    return spec


def add_rest_rules(m: Method, decls: dict[str, Decl], rest: dict[str, Any]) -> None:
    """The verbs the rules file adds, and the query fields of a body-less call: every
    request field that is not a path variable."""
    for verb in rest.get("also", {}).get(m.wire, []):
        m.http += [HttpRule(method=verb, path=h.path, body=h.body) for h in m.http if h.method != verb]
    if rest["query"] != "non-path-fields":
        raise ValueError(f"rules/a2a.toml: rest.query {rest['query']!r}")
    if any(h.body for h in m.http):
        return
    d = decls[m.params or ""]
    assert isinstance(d, Struct)
    path_vars = {lower_camel(v) for h in m.http for v in re.findall(r"\{([a-z_]+)\}", h.path)}
    for f in d.fields:
        if f.wire in path_vars:
            continue
        item = f.type.item if isinstance(f.type, ArrayRef) else f.type
        m.query.append(QueryField(wire=f.wire, kind=query_kind(item, decls), repeated=isinstance(f.type, ArrayRef)))


def query_kind(t: TypeRef, decls: dict[str, Decl]) -> Any:
    if isinstance(t, PrimRef):
        return {"string": "string", "bool": "bool", "timestamp": "timestamp"}.get(t.prim, "int")
    if isinstance(t, NamedRef) and isinstance(decls.get(t.name), Enum):
        return "enum"
    raise ValueError(f"a query parameter of type {t} cannot travel in a query string")


def camel_ident(snake_name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in snake_name.split("_"))


def read_field(p: Parser) -> RawField:
    first = p.peek()
    doc = first.doc
    label = ""
    map_value = None
    if first.text in ("optional", "repeated"):
        label = p.next().text
    if p.peek().text == "map":
        p.next()
        p.expect("<")
        key = p.next().text
        if key != "string":
            raise ValueError(f"proto: map key {key!r}")
        p.expect(",")
        map_value = p.next().text
        p.expect(">")
        label = "map"
        type_name = "map"
    else:
        type_name = p.next().text
    name = p.next().text
    p.expect("=")
    number = int(p.next().text)
    behaviors = p.options()
    p.expect(";")
    return RawField(name=name, type=type_name, label=label, map_value=map_value, behaviors=behaviors, doc=doc, number=number)


def read_message(p: Parser) -> tuple[str, list[RawField], list[tuple[str, list[RawField], str]]]:
    p.expect("message")
    name = p.next().text
    p.expect("{")
    fields: list[RawField] = []
    oneofs: list[tuple[str, list[RawField], str]] = []
    while p.peek().text != "}":
        t = p.peek()
        if t.text == "oneof":
            p.next()
            oname = p.next().text
            p.expect("{")
            members = []
            while p.peek().text != "}":
                members.append(read_field(p))
            p.expect("}")
            oneofs.append((oname, members, t.doc))
        elif t.text in ("message", "enum", "reserved", "option"):
            raise ValueError(f"proto: {name}: unsupported member {t.text!r}")
        else:
            fields.append(read_field(p))
    p.expect("}")
    return name, fields, oneofs


def read_enum(p: Parser) -> tuple[str, list[tuple[str, str]]]:
    p.expect("enum")
    name = p.next().text
    p.expect("{")
    values = []
    while p.peek().text != "}":
        t = p.next()
        p.expect("=")
        number = p.next().text
        p.expect(";")
        # ProtoJSON also accepts an enum value by its number; the emitters map number n
        # to the n-th value, so the proto must number its values 0, 1, 2, ... in order.
        if number != str(len(values)):
            raise ValueError(f"proto: enum {name}: {t.text} = {number}, expected {len(values)} (values numbered in order)")
        values.append((t.text, t.doc))
    p.expect("}")
    return name, values


def read_service(p: Parser) -> list[Method]:
    p.expect("service")
    p.next()
    p.expect("{")
    rpcs = []
    while p.peek().text != "}":
        t = p.expect("rpc")
        name = p.next().text
        p.expect("(")
        req = p.next().text
        p.expect(")")
        p.expect("returns")
        p.expect("(")
        streaming = False
        if p.peek().text == "stream":
            p.next()
            streaming = True
        resp = p.next().text
        p.expect(")")
        rules: list[HttpRule] = []
        p.expect("{")
        while p.peek().text != "}":
            p.expect("option")
            p.expect("(")
            opt = p.next().text
            p.expect(")")
            p.expect("=")
            if opt == "google.api.http":
                read_http(p, rules)
            else:
                p.next()
            p.expect(";")
        p.expect("}")
        resp = "Empty" if resp == "google.protobuf.Empty" else resp
        handler = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
        rpcs.append(Method(wire=name, kind="request", side="server", params=req, result=resp, doc=t.doc, streaming=streaming, http=rules, handler=handler))
    p.expect("}")
    return rpcs


def read_http(p: Parser, rules: list[HttpRule]) -> None:
    p.expect("{")
    rule = HttpRule(method="", path="", body=False)
    while p.peek().text != "}":
        key = p.next().text
        if p.peek().text == ":":
            p.next()
        if key == "additional_bindings":
            read_http(p, rules)
            continue
        value = p.next().text.strip('"')
        if key in ("get", "post", "delete", "put", "patch"):
            rule.method = key
            rule.path = re.sub(r"\{([a-z_]+)=\*\}", r"{\1}", value)
        elif key == "body":
            if value != "*":
                raise ValueError(f"proto: http body {value!r} (only the whole message is supported)")
            rule.body = True
        else:
            raise ValueError(f"proto: http option {key!r}")
    p.expect("}")
    rules.insert(0, rule) if not rules or rule.path.count("{tenant}") == 0 else rules.append(rule)
