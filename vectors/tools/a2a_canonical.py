"""Reference ProtoJSON reader and canonical encoder for the A2A vectors.

It reads the generator's model (`codegen/model/a2a-v1.json`, made from the pinned
`a2a.proto` and `rules/a2a.toml`) for the members of each message, their order,
aliases, defaults and kinds. Two functions:

- `normalize(type_name, value)`: what a *valid* ProtoJSON value decodes to, written back
  as canonical JSON values: aliases renamed to their camelCase name, unknown members
  and `null` members dropped, enum numbers turned into names, integers given as strings
  or as integral numbers turned into integers, timestamps rewritten in UTC with
  milliseconds, bytes rewritten as padded standard base64, defaults left out. It checks
  only what it needs to do that; invalid values are judged by the SDKs, not here.
- `canonical_bytes(type_name, value)`: the exact bytes an encoder writes for the
  normalized value: compact, members in the model's order (the message's fields in
  proto order, then its oneof members), strings as `json.dumps(ensure_ascii=False)`
  writes them (the escapes of vectors/README.md, "Canonical encoding", rule 6).

Free-form values (`metadata`, `Part.data`) are kept as given: the cases write them
compact, so re-serialising the parsed value gives back the received text.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODEL = json.loads((ROOT / "codegen/model/a2a-v1.json").read_text())
DECLS = MODEL["decls"]

I32 = (-(2**31), 2**31 - 1)


class NotValid(Exception):
    """The value is not valid ProtoJSON for its type (the reference reader refuses it)."""


def named(name: str) -> dict:
    return {"kind": "named", "name": name}


def _int(v, path: str) -> int:
    if isinstance(v, bool):
        raise NotValid(f"{path}: a boolean is no integer")
    if isinstance(v, int):
        n = v
    elif isinstance(v, float):
        if not v.is_integer():
            raise NotValid(f"{path}: {v} is not integral")
        n = int(v)
    elif isinstance(v, str):
        m = re.fullmatch(r"-?\d+(\.\d+)?([eE][+-]?\d+)?", v)
        if not m:
            raise NotValid(f"{path}: {v!r} holds no number")
        from decimal import Decimal
        d = Decimal(v)
        if d != d.to_integral_value():
            raise NotValid(f"{path}: {v!r} is not integral")
        n = int(d)
    else:
        raise NotValid(f"{path}: {v!r} is no integer")
    if not I32[0] <= n <= I32[1]:
        raise NotValid(f"{path}: {n} is out of the int32 range")
    return n


def _timestamp(v, path: str) -> str:
    if not isinstance(v, str):
        raise NotValid(f"{path}: a timestamp is a string")
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)", v)
    if not m:
        raise NotValid(f"{path}: {v!r} is not RFC 3339")
    y, mo, d, h, mi, s, frac, off = m.groups()
    dt = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=datetime.UTC)
    if off not in ("Z", "z"):
        sign = 1 if off[0] == "+" else -1
        dt -= sign * datetime.timedelta(hours=int(off[1:3]), minutes=int(off[4:6]))
    millis = int((frac or "0").ljust(9, "0")[:3])
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


def _bytes(v, path: str) -> str:
    if not isinstance(v, str):
        raise NotValid(f"{path}: bytes are a base64 string")
    t = v.replace("-", "+").replace("_", "/")
    t += "=" * (-len(t) % 4)
    try:
        raw = base64.b64decode(t, validate=True)
    except binascii.Error as ex:
        raise NotValid(f"{path}: {v!r} is not base64") from ex
    return base64.b64encode(raw).decode()


def _prim(prim: str, v, path: str):
    if prim in ("string", "text"):
        if not isinstance(v, str):
            raise NotValid(f"{path}: a string is wanted")
        return v
    if prim == "bool":
        if not isinstance(v, bool):
            raise NotValid(f"{path}: a boolean is wanted")
        return v
    if prim == "i32":
        return _int(v, path)
    if prim == "bytes":
        return _bytes(v, path)
    if prim == "timestamp":
        return _timestamp(v, path)
    raise NotValid(f"{path}: unknown primitive {prim}")


def _enum(decl: dict, v, path: str) -> str:
    values = decl["values"]
    if isinstance(v, str) and v in values:
        return v
    if isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= len(values):
        return values[v - 1]
    raise NotValid(f"{path}: {v!r} is not a value of {decl['name']}")


def _find(obj: dict, names: list[str], path: str):
    """The value of the first of `names` present and not null (or None)."""
    hits = [n for n in names if n in obj and obj[n] is not None]
    if len(hits) > 1:
        raise NotValid(f"{path}: both {hits}")
    return obj[hits[0]] if hits else None


def _struct(decl: dict, v, path: str) -> dict:
    if not isinstance(v, dict):
        raise NotValid(f"{path}: an object is wanted")
    out: dict = {}
    for f in decl["fields"]:
        raw = _find(v, [f["wire"], *f["aliases"]], path)
        if raw is None:
            if f["required"]:
                raise NotValid(f"{path}: {f['wire']} is required")
            continue
        value = norm(f["type"], raw, f"{path}.{f['wire']}")
        if f["omit_default"] and value == f["default"]:
            continue
        if f.get("min_items") and len(value) < f["min_items"]:
            raise NotValid(f"{path}.{f['wire']}: too short")
        out[f["wire"]] = value
    for o in decl["oneofs"]:
        # null reads as absent, except for a `google.protobuf.Value` member, where it is
        # the JSON null value (ProtoJSON)
        present = [m for m in o["members"]
                   if m["wire"] in v and (v[m["wire"]] is not None or _holds_null(m["type"]))]
        if len(present) != 1:
            raise NotValid(f"{path}: oneof {o['name']} needs exactly one member")
        m = present[0]
        out[m["wire"]] = norm(m["type"], v[m["wire"]], f"{path}.{m['wire']}")
    return out


def _holds_null(t: dict) -> bool:
    return t["kind"] == "json" and not t.get("object_only")


def _union(decl: dict, v, path: str) -> dict:
    if not isinstance(v, dict):
        raise NotValid(f"{path}: an object is wanted")
    found = []
    for var in decl["variants"]:
        for key in (var["tag"], decl["aliases"].get(var["tag"])):
            if key and v.get(key) is not None:
                found.append((var, v[key]))
    if len(found) != 1:
        raise NotValid(f"{path}: exactly one of the {decl['name']} members is wanted")
    var, payload = found[0]
    return {var["tag"]: norm(var["payload"], payload, f"{path}.{var['tag']}")}


def norm(t: dict, v, path: str = "$"):
    kind = t["kind"]
    if kind == "prim":
        return _prim(t["prim"], v, path)
    if kind == "json":
        if t.get("object_only") and not isinstance(v, dict):
            raise NotValid(f"{path}: an object is wanted")
        return v
    if kind == "array":
        if not isinstance(v, list):
            raise NotValid(f"{path}: an array is wanted")
        return [norm(t["item"], x, f"{path}[{i}]") for i, x in enumerate(v)]
    if kind == "map":
        if not isinstance(v, dict):
            raise NotValid(f"{path}: an object is wanted")
        return {k: norm(t["value"], x, f"{path}.{k}") for k, x in v.items()}
    if kind == "named":
        decl = DECLS[t["name"]]
        if decl["decl"] == "enum":
            return _enum(decl, v, path)
        if decl["decl"] == "union":
            return _union(decl, v, path)
        return _struct(decl, v, path)
    raise NotValid(f"{path}: unknown kind {kind}")


def normalize(type_name: str, value, path: str = "$"):
    """The canonical JSON value a valid `value` of `type_name` decodes to."""
    if type_name == "Empty":
        if value is not None and not isinstance(value, dict):
            raise NotValid(f"{path}: an object is wanted")
        return {}
    return norm(named(type_name), value, path)


def canonical_bytes(type_name: str, value) -> bytes:
    """The exact bytes of the canonical encoding of `value` (normalized first)."""
    return json.dumps(normalize(type_name, value), ensure_ascii=False, separators=(",", ":")).encode()
