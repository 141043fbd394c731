"""Decoding and encoding A2A 1.0 messages by type name (ProtoJSON).

`decode` has two paths with one meaning: the msgspec fast path (plainly valid input in
its canonical spelling: camelCase names, no `null` members, enum names, integers as
numbers, standard base64, no unknown members) and the generated slow path, which is
authoritative and reads everything ProtoJSON allows, failing with a `DecodeError` (path,
kind, expected, found) where the input is wrong. Known gap of the fast path, as in the
ACP decoder: it keeps the last of a repeated key; `check_duplicate_keys=True` closes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from agentproto.a2a.generated import _v1_decode
from agentproto.a2a.generated.v1 import Empty
from agentproto.codec.errors import DecodeError
from agentproto.codec.kind import DecodeErrorKind
from agentproto.codec.reader import JsonSyntaxError, parse
from agentproto.codec.runtime import Ctx
from agentproto.codec.values import encode
from agentproto.jsonrpc.message import has_duplicate_keys

__all__ = ["decode", "encode", "is_json"]

_FAST: dict[str, Callable[[bytes], Any]] = {}
_FAST_ERRORS = (msgspec.ValidationError, msgspec.DecodeError)


def _fast(type_name: str) -> Callable[[bytes], Any]:
    decoder = _FAST.get(type_name)
    if decoder is None:
        decoder = msgspec.json.Decoder(_v1_decode.FAST_TYPES[type_name]).decode
        _FAST[type_name] = decoder
    return decoder


def decode(
    type_name: str, data: bytes, root: str = "$", *, fast: bool = True, check_duplicate_keys: bool = False
) -> Any:
    """The value of type `type_name` that the JSON text `data` holds.

    Args:
        type_name: a message name of the A2A model (`SendMessageRequest`, `Task`, …).
        data: the JSON text (UTF-8).
        root: the JSON path of the value in its message (`$.params`, `$.result`, `$`),
            where error paths start.
        fast: take the msgspec fast path where it applies (`False`: the exact path only).
        check_duplicate_keys: look for repeated keys before the fast path.

    Raises:
        DecodeError: the text is not a valid value of the type (kind `not-json` when it
            is not JSON at all).
        KeyError: `type_name` is not a type of the model.
    """
    slow = _v1_decode.DECODERS[type_name]
    if fast and type_name in _v1_decode.FAST_TYPES and not (check_duplicate_keys and has_duplicate_keys(data)):
        try:
            return _fast(type_name)(data)
        except _FAST_ERRORS:
            pass
    try:
        text = data.decode("utf-8")
        node = parse(text)
    except (UnicodeDecodeError, JsonSyntaxError):
        raise DecodeError(root, DecodeErrorKind.NOT_JSON, "JSON text", "text that is not JSON") from None
    except RecursionError:
        raise DecodeError(root, DecodeErrorKind.NOT_JSON, "JSON text", "text nested deeper") from None
    return slow(node, root, Ctx(text))


def decode_empty_or_null(data: bytes, root: str) -> Empty:
    """An `Empty` result, which `null` stands for too."""
    if data.strip() == b"null":
        return Empty()
    value: Empty = decode("Empty", data, root)
    return value


def is_json(data: bytes) -> bool:
    """Whether `data` is one JSON value (a refusal is a parse error rather than invalid params)."""
    try:
        parse(data.decode("utf-8"))
    except (UnicodeDecodeError, JsonSyntaxError, RecursionError):
        return False
    return True
