"""The value types generated code uses besides `msgspec.Struct`, and the canonical encoder.

* `Unknown`: a union variant this schema does not list, kept as its raw JSON.
* `Float64`: a `float` that encodes by the canonical rules (`1e+16`, not `1e16`).
* `Flattened`: the base of objects with a union flattened into them (common members
  plus a variant, e.g. `SessionConfigOption`); msgspec cannot express those, so they
  are plain classes that encode through `encode`'s hook.
* `encode`: the canonical encoding of a decoded value (vectors/README.md, "Canonical
  encoding"): msgspec writes Structs in field order and `Raw` verbatim; the hook
  writes the three types above.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import msgspec
from msgspec import UNSET, Raw

__all__ = ["Flattened", "Float64", "Unknown", "encode", "encode_float", "encode_into"]


class Unknown:
    """A variant of a tagged union that this schema does not list (an extension, a newer
    version, or a value a closed union does not allow), kept as its JSON.

    `raw` is the object re-emitted as the canonical rules say: its members in received
    order, each value's text as received, keys and the tag re-spelled. It encodes as
    `raw`, so a value passes through unchanged.
    """

    __slots__ = ("raw", "tag")

    def __init__(self, tag: str | None, raw: Raw) -> None:
        self.tag = tag
        """The tag value, or `None` for an object without the tag member."""
        self.raw = raw
        """The object as raw JSON."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Unknown):
            return NotImplemented
        return self.tag == other.tag and bytes(self.raw) == bytes(other.raw)

    def __hash__(self) -> int:
        return hash((self.tag, bytes(self.raw)))

    def __repr__(self) -> str:
        return f"Unknown(tag={self.tag!r}, raw={bytes(self.raw).decode()!r})"


class Float64(float):
    """A JSON `double`: a `float` whose encoding follows canonical rule 7 (the
    shortest round-trip digits; plain notation for exponents -5..15, else
    `d.ddde+N` / `d.ddde-N`). Generated structs convert their `double` fields to it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return float.__repr__(self)


def encode_float(x: float) -> bytes:
    """The canonical text of a double: what serde_json 1.0.154 writes (`null` when not finite)."""
    if not math.isfinite(x):
        return b"null"
    text = _PLAIN_ENCODER.encode(float(x))
    # msgspec already writes the shortest digits with the same plain/exponent cut-off;
    # it only leaves out the `+` of a positive exponent.
    e = text.find(b"e")
    if e >= 0 and text[e + 1 : e + 2] != b"-":
        text = text[: e + 1] + b"+" + text[e + 1 :]
    return text


class Flattened:
    """Base of generated objects that have a union flattened into them.

    A subclass lists its fields in `__slots__` (the wire keys in `_wire`) and writes
    its members with `_members`; `encode` writes it as one object.
    """

    __slots__: ClassVar[tuple[str, ...]] = ()
    _wire: ClassVar[tuple[str, ...]] = ()

    def _members(self) -> list[tuple[str, bytes]]:  # pragma: no cover - generated
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: {type(self).__name__!r}")

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{name}={getattr(self, name)!r}" for name in self.__slots__ if getattr(self, name) is not UNSET
        )
        return f"{type(self).__name__}({inner})"


def _enc_hook(obj: Any) -> Any:
    if type(obj) is Float64:
        return Raw(encode_float(obj))
    if isinstance(obj, Unknown):
        return obj.raw
    if isinstance(obj, Flattened):
        return Raw(join_members(obj._members()))
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


_PLAIN_ENCODER = msgspec.json.Encoder()
_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)
_encode: Callable[[Any], bytes] = _ENCODER.encode


def encode(value: Any) -> bytes:
    """The canonical JSON of a decoded (or constructed) value: compact, fields in schema
    order, defaults written, absent fields left out, free-form JSON and unknown variants
    as received."""
    return _encode(value)


def encode_into(value: Any, buffer: bytearray, offset: int = 0) -> None:
    """`encode` into a reused buffer (see `msgspec.json.Encoder.encode_into`)."""
    _ENCODER.encode_into(value, buffer, offset)


def encode_key(key: str) -> bytes:
    """A key (or any string) as a canonical JSON string."""
    return _PLAIN_ENCODER.encode(key)


def join_members(members: list[tuple[str, bytes]]) -> bytes:
    """An object from (key, encoded value) pairs."""
    return b"{" + b",".join(encode_key(k) + b":" + v for k, v in members) + b"}"
