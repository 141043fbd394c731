"""The reference canonical encoder (vectors/README.md, "Canonical encoding").

Given a decoded payload as JSON (what a case's `expect.params` / `expect.result`
holds) and the source text of the message it came from, it writes the bytes every SDK
must produce when it encodes that payload. It walks the generator's language-neutral
model (codegen/agentproto_codegen), never the generated Rust, so it is a second,
independent implementation of the rules: the Rust runner compares its own encoder's
output with the golden files this module computes.

The decoded value decides *what* is written (which variant, which fields, defaults
filled in, lenient values dropped); the source text is used only where the rules say a
value is re-emitted as received: free-form JSON, unknown union variants and extension
payloads.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import sys
from pathlib import Path

import rawjson
from rawjson import Node

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

from agentproto_codegen import acp, rules  # noqa: E402
from agentproto_codegen.model import (  # noqa: E402
    Alias, ArrayRef, Enum, JsonRef, MapRef, NamedRef, PrimRef, Struct, Union,
)

DECODED = {"request": "params", "notification": "params", "response": "result"}
INT_RANGES = {
    "i16": (-(1 << 15), (1 << 15) - 1), "i32": (-(1 << 31), (1 << 31) - 1), "i64": (-(1 << 63), (1 << 63) - 1),
    "u16": (0, (1 << 16) - 1), "u32": (0, (1 << 32) - 1), "u64": (0, (1 << 64) - 1),
}
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


class CanonicalError(Exception):
    """The decoded value does not fit the model, or a verbatim value has no source text."""


# scalars -------------------------------------------------------------------------

def string(s: str) -> str:
    """A JSON string: `"` and `\\` escaped, control characters as short escapes or
    `\\u00XX` (lower-case hex), everything else (`/`, DEL, non-ASCII) as itself."""
    out = ['"']
    for c in s:
        if c in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[c])
        elif ord(c) < 0x20:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def f64(x: float) -> str:
    """A double the way serde_json 1.0.154 writes it (zmij's `format_finite`).

    The digits are the shortest that read back as the same double (what `repr` gives).
    With d the digit string and 10^(e-1) <= |x| < 10^e: plain notation when -5 < e <= 16
    (integral values end in `.0`), otherwise `d[0]`, then `.` and `d[1:]` when there is
    more than one digit, then `e`, the sign (`+` or `-`, always) and e-1 without leading
    zeros. Non-finite values are written `null`.
    """
    if not math.isfinite(x):
        return "null"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0.0"
    mant, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    k = (int(exp) if exp else 0) - len(frac)  # |x| = int(digits) * 10^k
    stripped = digits.rstrip("0")
    k += len(digits) - len(stripped)
    d = stripped
    e = len(d) + k
    if 0 <= k and e <= 16:
        body = d + "0" * k + ".0"
    elif 0 < e <= 16:
        body = d[:e] + "." + d[e:]
    elif -5 < e <= 0:
        body = "0." + "0" * -e + d
    else:
        body = d[0] + ("." + d[1:] if len(d) > 1 else "") + f"e{'+' if e > 0 else '-'}{abs(e - 1)}"
    return sign + body


def integer(v, prim: str) -> str:
    if not _is_int(v) or not INT_RANGES[prim][0] <= v <= INT_RANGES[prim][1]:
        raise CanonicalError(f"{v!r} is not a {prim}")
    return str(v)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# the model walk --------------------------------------------------------------------

class Encoder:
    def __init__(self, decls: dict):
        self.decls = decls

    def decl(self, t):
        """The declaration a reference ends at (aliases followed), or None."""
        while isinstance(t, NamedRef) and t.name in self.decls:
            d = self.decls[t.name]
            if not isinstance(d, Alias):
                return d
            t = d.target
        return None

    def target(self, t):
        """The reference with aliases followed."""
        while isinstance(t, NamedRef) and isinstance(self.decls.get(t.name), Alias):
            t = self.decls[t.name].target
        return t

    # values

    def value(self, t, v, raw: Node | None) -> str:
        t = self.target(t)
        if isinstance(t, PrimRef):
            return self.prim(t.prim, v)
        if isinstance(t, JsonRef):
            if raw is None:
                raise CanonicalError("free-form value without source text")
            return raw.text
        if isinstance(t, ArrayRef):
            if not isinstance(v, list):
                raise CanonicalError(f"{v!r} is not an array")
            raws = align(v, raw.items if raw is not None and raw.kind == "array" else None)
            return "[" + ",".join(self.value(t.item, x, r) for x, r in zip(v, raws)) + "]"
        if isinstance(t, MapRef):
            if not isinstance(v, dict):
                raise CanonicalError(f"{v!r} is not an object")
            return "{" + ",".join(f"{string(k)}:{self.value(t.value, x, member(raw, k))}" for k, x in v.items()) + "}"
        if isinstance(t, NamedRef) and t.name == "RequestId":  # owned by the JSON-RPC layer
            if v is None:
                return "null"
            return string(v) if isinstance(v, str) else integer(v, "i64")
        d = self.decl(t)
        if isinstance(d, Enum):
            if not isinstance(v, str) or not (d.open or v in d.values):
                raise CanonicalError(f"{v!r} is not a value of {d.name}")
            return string(v)
        if isinstance(d, Union) and d.strategy == "untagged":
            return self.value(self.untagged(d, v).payload, v, raw)
        if isinstance(d, (Struct, Union)):
            if not isinstance(d, Union) and not isinstance(v, dict):
                raise CanonicalError(f"{v!r} is not an object ({d.name})")
            return "{" + ",".join(f"{k}:{x}" for k, x in self.members(d, v, raw, ())) + "}"
        raise CanonicalError(f"unsupported type {t}")

    def prim(self, prim: str, v) -> str:
        if prim == "string":
            if not isinstance(v, str):
                raise CanonicalError(f"{v!r} is not a string")
            return string(v)
        if prim == "bool":
            if not isinstance(v, bool):
                raise CanonicalError(f"{v!r} is not a boolean")
            return "true" if v else "false"
        if prim == "f64":
            if not _is_number(v):
                raise CanonicalError(f"{v!r} is not a number")
            return f64(float(v))
        if prim in INT_RANGES:
            return integer(v, prim)
        raise CanonicalError(f"primitive {prim} is not part of ACP")

    # objects: (encoded key, encoded value) pairs, in the order they are written

    def members(self, d, v, raw: Node | None, skip) -> list[tuple[str, str]]:
        if isinstance(d, Struct):
            return self.struct_members(d, v, raw, skip)
        if d.strategy == "untagged":
            variant = self.untagged(d, v)
            return self.members(self.decl(variant.payload), v, raw, skip)
        if d.strategy != "tagged":
            raise CanonicalError(f"{d.name}: {d.strategy} unions are not part of ACP")
        if not isinstance(v, dict):
            raise CanonicalError(f"{v!r} is not an object ({d.name})")
        variant = self.tagged(d, v)
        if variant is None:  # an unknown tag: the received members, tag first
            return [(string(k), x) for k, x in unknown_members(d.tag_field, raw) if k not in skip]
        out = [] if variant.tag is None else [(string(d.tag_field), string(variant.tag))]
        if variant.payload is not None:
            body = {k: x for k, x in v.items() if k != d.tag_field}
            out += self.members(self.decl(variant.payload), body, raw, skip)
        return out

    def struct_members(self, d: Struct, v: dict, raw: Node | None, skip) -> list[tuple[str, str]]:
        if d.oneofs:
            raise CanonicalError(f"{d.name}: oneofs are not part of ACP")
        out = []
        for f in d.fields:
            if f.wire not in v:
                if f.required or f.has_default:
                    raise CanonicalError(f"{d.name}.{f.wire}: always written, but absent from the decoded value")
                continue
            x = v[f.wire]
            if f.omit_default and f.has_default and x == f.default:
                continue
            if x is None and not self.admits_null(f.type):
                if not f.nullable:
                    raise CanonicalError(f"{d.name}.{f.wire}: null in a field that is not nullable")
                out.append((string(f.wire), "null"))
                continue
            out.append((string(f.wire), self.value(f.type, x, member(raw, f.wire))))
        if d.flatten:
            own = tuple(f.wire for f in d.fields)
            out += self.members(self.decls[d.flatten], v, raw, own + tuple(skip))
        return out

    def admits_null(self, t) -> bool:
        """Whether `null` is a value of the type itself (free-form JSON, a request id)."""
        t = self.target(t)
        return isinstance(t, JsonRef) or t == NamedRef("RequestId")

    # choosing a variant from the decoded value

    def tagged(self, d: Union, v: dict):
        """The variant a decoded object holds; None for an unknown tag."""
        if d.tag_field not in v:
            for variant in d.variants:
                if variant.tag is None:
                    return variant
            raise CanonicalError(f"{d.name}: tag `{d.tag_field}` missing and no default variant")
        for variant in d.variants:
            if variant.tag is not None and variant.tag == v[d.tag_field]:
                return variant
        return None

    def untagged(self, d: Union, v):
        """The first variant the value fits, the order in which decoders try them."""
        for variant in d.variants:
            if self.fits(variant.payload, v):
                return variant
        raise CanonicalError(f"{v!r} fits no variant of {d.name}")

    def fits(self, t, v) -> bool:
        t = self.target(t)
        if isinstance(t, PrimRef):
            try:
                self.prim(t.prim, v)
                return True
            except CanonicalError:
                return False
        if isinstance(t, JsonRef):
            return isinstance(v, dict) or not t.object_only
        if isinstance(t, ArrayRef):
            return isinstance(v, list) and all(self.fits(t.item, x) for x in v)
        if isinstance(t, MapRef):
            return isinstance(v, dict) and all(self.fits(t.value, x) for x in v.values())
        if isinstance(t, NamedRef) and t.name == "RequestId":
            return v is None or isinstance(v, str) or (_is_int(v) and INT_RANGES["i64"][0] <= v <= INT_RANGES["i64"][1])
        d = self.decl(t)
        if isinstance(d, Enum):
            return isinstance(v, str) and (d.open or v in d.values)
        if isinstance(d, Union) and d.strategy == "untagged":
            return any(self.fits(x.payload, v) for x in d.variants)
        if not isinstance(v, dict):
            return False
        return self.fields_fit(d, v)

    def fields_fit(self, d, v: dict) -> bool:
        if isinstance(d, Union):
            if d.strategy == "untagged":
                return any(self.fields_fit(self.decl(x.payload), v) for x in d.variants)
            if d.tag_field in v:
                if not isinstance(v[d.tag_field], str):
                    return False
                variant = self.tagged(d, v)
                if variant is None:
                    return True  # an unknown tag is a valid (unknown) variant
            else:
                variant = next((x for x in d.variants if x.tag is None), None)
                if variant is None:
                    return False
            return variant.payload is None or self.fields_fit(self.decl(variant.payload), v)
        for f in d.fields:
            if f.wire not in v:
                if f.required and not f.has_default:
                    return False
            elif v[f.wire] is None:
                if not f.nullable and not self.admits_null(f.type):
                    return False
            elif not self.fits(f.type, v[f.wire]):
                return False
        return d.flatten is None or self.fields_fit(self.decls[d.flatten], v)


# source text helpers ------------------------------------------------------------------

def member(raw: Node | None, key: str) -> Node | None:
    return raw.member(key) if raw is not None and raw.kind == "object" else None


def unknown_members(tag: str, raw: Node | None) -> list[tuple[str, str]]:
    """An unknown variant as received: every member in the order received, each
    value's text unchanged (repeated keys included) except the tag's, which was read
    as a string and is written as one."""
    if raw is None or raw.kind != "object":
        raise CanonicalError("unknown variant without source text")
    out, tag_seen = [], False
    for k, x in raw.members:
        if k == tag and not tag_seen:
            out.append((k, string(x.value())))
            tag_seen = True
        else:
            out.append((k, x.text))
    return out


def align(values: list, raws: list[Node] | None) -> list[Node | None]:
    """Pairs decoded items with the received ones. Items dropped by lenient decoding
    (skip-invalid-items) leave gaps, so the received items are matched in order."""
    if raws is None:
        return [None] * len(values)
    if len(raws) == len(values):
        return list(raws)
    matched = _subsequence(values, [r.value() for r in raws])
    if matched is None:  # only a problem if an item needs its source text (then it fails there)
        return [None] * len(values)
    return [raws[j] for j in matched]


def _subsequence(decoded: list, received: list) -> list[int] | None:
    """Indices of the received items the decoded ones came from, matched in order."""
    out, j = [], 0
    for v in decoded:
        while j < len(received) and not _compatible(v, received[j]):
            j += 1
        if j == len(received):
            return None
        out.append(j)
        j += 1
    return out


def _compatible(decoded, received) -> bool:
    """Whether `decoded` may be the decoding of `received` (members that decoding fills
    in or drops are ignored; everything both hold must agree)."""
    if isinstance(decoded, dict) and isinstance(received, dict):
        return all(_compatible(decoded[k], received[k]) for k in decoded.keys() & received.keys())
    if isinstance(decoded, list) and isinstance(received, list):
        return _subsequence(decoded, received) is not None
    if _is_number(decoded) and _is_number(received):
        return decoded == received
    return type(decoded) is type(received) and decoded == received


# cases ---------------------------------------------------------------------------------

def load_encoder(root: Path = ROOT) -> Encoder:
    """The encoder of the stable v1 surface, cut out of the same model every emitter reads."""
    schema = root / "spec/acp/v1/schema.json"
    sha = hashlib.sha256(schema.read_bytes()).hexdigest()
    model = acp.read_version(str(root / "spec"), "v1", {
        f: hashlib.sha256((root / "spec" / f).read_bytes()).hexdigest()
        for f in ("acp/v1/schema.json", "acp/v1/schema.unstable.json")
    })
    rules.apply_acp(model, root / "rules/acp.toml", root / "spec/acp/v1/schema.unstable.json")
    return Encoder(model.narrow({"stable"}, "stable", "acp/v1/schema.json", sha).decls)


def input_line(case: dict) -> str:
    """The line a case feeds the receiver, without its terminator."""
    if "input" in case:
        text = json.dumps(case["input"], separators=(",", ":"), ensure_ascii=False)
    elif "input_text" in case:
        text = case["input_text"]
    else:
        text = base64.b64decode(case["input_base64"]).decode("utf-8")
    for end in ("\r\n", "\n"):
        if text.endswith(end):
            return text[: -len(end)]
    return text


def payload_bytes(enc: Encoder, case: dict) -> bytes | None:
    """The canonical encoding of a case's decoded params or result; None when the
    case's message does not decode (an error, a finding)."""
    e = case["expect"]
    key = DECODED.get(e["outcome"])
    if key is None:
        return None
    raw = member(rawjson.parse(input_line(case)), key)
    if e["type"] is None:  # an extension message: the payload as received, `null` when absent
        return (raw.text if raw is not None else "null").encode()
    if key not in e:
        raise CanonicalError(f"{case['id']}: a decoded case needs expect.{key}")
    if raw is not None and raw.kind == "null":
        raw = None
    try:
        return enc.value(NamedRef(e["type"]), e[key], raw).encode()
    except CanonicalError as ex:
        raise CanonicalError(f"{case['id']}: {ex}") from None
