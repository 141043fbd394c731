"""Emit the Python A2A protobuf tables: for every message of the A2A model (structs and
keyed unions), its fields by proto number with their JSON key, presence and kind; every
enum's value numbers; and the service's methods. The runtime
(`agentproto.a2a.grpc_wire`) walks these tables to turn the protobuf wire form into the
ProtoJSON tree the generated decoders read, and back, so no per-message code is
written by hand.

It reads the same model dump as `python_a2a.py` and the same rows the Rust codec
emitter (`rust_a2a_proto.py`) reads. Presence follows proto3 as there:

* `implicit`: a scalar left out at its zero value (absent reads as absent);
* `required`: an implicit-presence scalar the JSON form requires: absent on the wire
  reads as its zero value (the wire cannot tell the two apart);
* `optional`: explicit presence (`optional` scalars, messages, `Struct`, `Value`);
* `oneof`: a member of a oneof (written when set, whatever its value);
* `repeated`, `map` (string keys).

Kinds: `string`, `bytes`, `bool`, `int32`, `enum`, `message`, `timestamp`, `struct`
(`google.protobuf.Struct`), `value` (`google.protobuf.Value`).
"""

from __future__ import annotations

from typing import Any

from .emit import python_str

OUT = "python/src/agentproto/a2a/generated/v1_proto.py"

PRIM_KINDS = {"string": "string", "text": "string", "bytes": "bytes", "bool": "bool", "i32": "int32", "timestamp": "timestamp"}


def kind_of(t: dict[str, Any], decls: dict[str, Any]) -> tuple[str, str]:
    """(kind, type name) of a value type."""
    k = t["kind"]
    if k == "prim":
        if t["prim"] not in PRIM_KINDS:
            raise ValueError(f"a2a proto tables: primitive {t['prim']!r} is not supported")
        return PRIM_KINDS[t["prim"]], ""
    if k == "json":
        return ("struct" if t.get("object_only") else "value"), ""
    if k == "named":
        d = decls[t["name"]]
        if d["decl"] == "enum":
            return "enum", d["name"]
        if d["decl"] in ("struct", "union"):
            return "message", d["name"]
    raise ValueError(f"a2a proto tables: cannot encode {t}")


def field_row(f: dict[str, Any], decls: dict[str, Any], owner: str, oneof: bool) -> tuple[int, str, str, str, str]:
    n = f.get("number")
    if n is None:
        raise ValueError(f"{owner}.{f['wire']}: no proto field number in the model")
    t = f["type"] if "type" in f else f["payload"]
    if t["kind"] == "array":
        kind, name = kind_of(t["item"], decls)
        return n, f["wire"], "repeated", kind, name
    if t["kind"] == "map":
        kind, name = kind_of(t["value"], decls)
        return n, f["wire"], "map", kind, name
    kind, name = kind_of(t, decls)
    if oneof:
        presence = "oneof"
    elif kind in ("message", "timestamp", "struct", "value"):
        presence = "optional"
    elif kind == "enum":
        presence = "implicit"  # 0 (`*_UNSPECIFIED`) is "not set"
    elif f.get("required"):
        presence = "required"
    else:
        presence = "implicit" if f.get("omit_default") else "optional"
    return n, f["wire"], presence, kind, name


def message_rows(model: dict[str, Any]) -> dict[str, list[tuple[int, str, str, str, str]]]:
    decls = model["decls"]
    choices = {o["type_name"] for d in decls.values() if d["decl"] == "struct" for o in d["oneofs"]}
    out: dict[str, list[tuple[int, str, str, str, str]]] = {}
    for d in decls.values():
        rows: list[tuple[int, str, str, str, str]] = []
        if d["decl"] == "struct":
            rows += [field_row(f, decls, d["name"], False) for f in d["fields"]]
            if len(d["oneofs"]) > 1:
                raise ValueError(f"{d['name']}: more than one oneof; the tables keep one group a message")
            for o in d["oneofs"]:
                rows += [field_row(m, decls, d["name"], True) for m in o["members"]]
        elif d["decl"] == "union" and d["strategy"] == "keyed" and d["name"] not in choices:
            for v in d["variants"]:
                rows.append(field_row({"wire": v["tag"], "payload": v["payload"], "number": v["number"]}, decls, d["name"], True))
        else:
            continue
        out[d["name"]] = sorted(rows)
    return out


def emit(model: dict[str, Any], header: list[str]) -> str:
    lines = [*header]
    lines.append('"""The protobuf wire tables of the A2A types: each message\'s fields by number')
    lines.append("(JSON key, presence, kind, type name), each enum's value numbers, the service's")
    lines.append('methods. Read by `agentproto.a2a.grpc_wire`."""')
    lines.append("")
    lines.append("from __future__ import annotations")
    lines.append("")
    lines.append("from typing import Final")
    lines.append("")
    lines.append('__all__ = ["ENUMS", "MESSAGES", "METHODS", "SERVICE", "FieldRow"]')
    lines.append("")
    lines.append("FieldRow = tuple[int, str, str, str, str]")
    lines.append('"""(number, JSON key, presence, kind, type name)."""')
    lines.append("")
    lines.append(f"SERVICE: Final = {python_str(model['package'] + '.A2AService')}")
    lines.append('"""The fully qualified name of the A2A service."""')
    lines.append("")
    lines.append("ENUMS: Final[dict[str, dict[str, int]]] = {")
    for d in model["decls"].values():
        if d["decl"] != "enum":
            continue
        if len(d["numbers"]) != len(d["values"]):
            raise ValueError(f"{d['name']}: the model gives no proto numbers for its values")
        pairs = ", ".join(f"{python_str(v)}: {n}" for v, n in zip(d["values"], d["numbers"]))
        lines.append(f"    {python_str(d['name'])}: {{{pairs}}},")
    lines.append("}")
    lines.append("")
    lines.append("MESSAGES: Final[dict[str, tuple[FieldRow, ...]]] = {")
    for name, rows in message_rows(model).items():
        lines.append(f"    {python_str(name)}: (")
        for n, wire, presence, kind, tname in rows:
            lines.append(f"        ({n}, {python_str(wire)}, {python_str(presence)}, {python_str(kind)}, {python_str(tname)}),")
        lines.append("    ),")
    lines.append("}")
    lines.append("")
    lines.append("METHODS: Final[dict[str, tuple[str, str, bool]]] = {")
    lines.append('    # name: (request message, answer message (a stream item), streaming)')
    for m in model["methods"]:
        lines.append(f"    {python_str(m['wire'])}: ({python_str(m['params'])}, {python_str(m['result'])}, {m['streaming']}),")
    lines.append("}")
    return "\n".join(lines) + "\n"
