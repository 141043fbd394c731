"""agentproto's Python objects to and from plain dicts, for seed 001's dict-based steps.

The SDK itself speaks bytes (its receive path decodes raw JSON, its send path encodes
to JSON), so the benchmark defines the two dict conversions on top of its public API:

* ``to_dict(obj)``: ``msgspec.to_builtins`` of the generated struct (wire names, fields
  in schema order, defaults written, absent optionals left out, as the canonical
  encoder writes them), with the SDK's own value types made plain: free-form JSON kept
  as ``Raw`` (``rawInput``, ``_meta``) and unknown union variants parsed into dicts,
  ``Float64`` as ``float``, flattened objects through their members. The test beside
  this file checks that it equals ``json.loads(agentproto.codec.encode(obj))``.
* ``from_dict(type_name, d)``: the validating decode. The dict is written as compact
  JSON and decoded by ``SURFACE.decode``, the very call ``classify`` makes on a
  message's params (msgspec fast path, the authoritative validating path behind it),
  so it accepts and refuses exactly what the receive path does (tested beside this
  file over every conformance vector that carries params).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from agentproto.acp.v1 import SURFACE
from agentproto.codec import Flattened, Float64, Raw, Unknown, encode

_json_decode = msgspec.json.decode
_json_encode = msgspec.json.Encoder().encode
_to_builtins = msgspec.to_builtins
_decode = SURFACE.decode


def _plain(value: Any) -> Any:
    if type(value) is Raw:
        return _json_decode(value)
    if type(value) is Float64:
        return float(value)
    if isinstance(value, Unknown):
        return _json_decode(value.raw)
    if isinstance(value, Flattened):
        return {key: _json_decode(text) for key, text in value._members()}
    raise NotImplementedError(f"cannot convert {type(value).__name__}")


def to_dict(obj: Any) -> Any:
    """A generated value as plain dicts, lists and scalars (wire names)."""
    return _to_builtins(obj, enc_hook=_plain)


def from_dict(type_name: str, data: Any) -> Any:
    """A dict decoded and validated as the generated type ``type_name``.

    Raises:
        agentproto.codec.DecodeError: the dict is not a valid ``type_name``.
    """
    return _decode(type_name, _json_encode(data), "$").value


def dict_decoder(type_name: str) -> Callable[[Any], Any]:
    """``from_dict`` bound to one type (what a caller decoding one type over and over holds)."""

    def decode(data: Any) -> Any:
        return _decode(type_name, _json_encode(data), "$").value

    return decode


def json_decoder(type_name: str) -> Callable[[bytes], Any]:
    """``from_json`` bound to one type."""

    def decode(data: bytes) -> Any:
        return _decode(type_name, data, "$").value

    return decode


def to_json(obj: Any) -> bytes:
    """The fastest path out: the canonical encoding, object to JSON bytes."""
    return encode(obj)


def from_json(type_name: str, data: bytes) -> Any:
    """The fastest path in: JSON bytes to a validated object (the receive path's decode)."""
    return _decode(type_name, data, "$").value
