"""The protobuf wire form of the A2A types, table-driven: the generated tables
(`agentproto.a2a.generated.v1_proto`, from the model) say each message's fields by
number; this module walks them to turn protobuf bytes into the ProtoJSON tree the
generated decoders read (`to_json`), and a ProtoJSON tree into protobuf bytes
(`from_json`). `decode` and `encode` go on to and from the typed values through
`agentproto.a2a.codec`, so a request read from gRPC is checked exactly as one read from
JSON, with the same paths in its errors.

Presence as proto3 has it (see the table module): an implicit-presence scalar is not
written at its zero value; one the JSON form requires reads as its zero value when
absent; enum 0 is "not set"; of a oneof's members the last given counts. The well-known
types `Timestamp`, `Struct`, `Value` and `ListValue` are written here, and
`google.rpc.Status` with an `ErrorInfo` detail (`status_details`, `error_of_details`).
"""

from __future__ import annotations

import base64
import calendar
import datetime
import struct
from collections.abc import Iterator
from typing import Any

import msgspec

from agentproto.a2a import codec
from agentproto.a2a._protojson import timestamp_text
from agentproto.a2a.errors import A2aError
from agentproto.a2a.generated.v1_proto import ENUMS, MESSAGES, FieldRow
from agentproto.codec.errors import DecodeError
from agentproto.codec.kind import DecodeErrorKind

__all__ = ["decode", "encode", "error_of_details", "from_json", "status_details", "to_json"]

MAX_DEPTH = 64
"""How deeply messages may nest (a deeper input is refused, not recursed into)."""

_ROWS: dict[str, dict[int, FieldRow]] = {name: {row[0]: row for row in rows} for name, rows in MESSAGES.items()}
_NAMES: dict[str, dict[int, str]] = {name: {n: v for v, n in values.items()} for name, values in ENUMS.items()}
_ZERO: dict[str, Any] = {"string": "", "bytes": "", "bool": False, "int32": 0}
_LEN_KINDS = frozenset({"string", "bytes", "message", "timestamp", "struct", "value"})
_WIRE_TYPE = {"bool": 0, "int32": 0, "enum": 0}
STATUS_TYPE_URL = "type.googleapis.com/google.rpc.ErrorInfo"


# --- reading -------------------------------------------------------------------------


def _fail(path: str, kind: DecodeErrorKind, expected: str, found: str) -> DecodeError:
    return DecodeError(path, kind, expected, found)


def _varint(buf: bytes, i: int, path: str) -> tuple[int, int]:
    shift = 0
    value = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise _fail(path, DecodeErrorKind.WRONG_FORMAT, "a protobuf varint", "a truncated or overlong one")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, i
        shift += 7


def _fields(buf: bytes, path: str) -> Iterator[tuple[int, int, Any]]:
    """(number, wire type, value) of each field: an int (varint, fixed), or bytes."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i, path)
        number, wt = key >> 3, key & 7
        if number == 0:
            raise _fail(path, DecodeErrorKind.WRONG_FORMAT, "a protobuf field number", "0")
        if wt == 0:
            value, i = _varint(buf, i, path)
            yield number, wt, value
        elif wt == 2:
            size, i = _varint(buf, i, path)
            if i + size > len(buf):
                raise _fail(path, DecodeErrorKind.WRONG_FORMAT, "a complete length-delimited field", "a truncated one")
            yield number, wt, buf[i : i + size]
            i += size
        elif wt in (1, 5):
            width = 8 if wt == 1 else 4
            if i + width > len(buf):
                raise _fail(path, DecodeErrorKind.WRONG_FORMAT, "a complete fixed-width field", "a truncated one")
            yield number, wt, buf[i : i + width]
            i += width
        else:
            raise _fail(path, DecodeErrorKind.WRONG_FORMAT, "a supported protobuf wire type", f"wire type {wt}")


def _int32(value: int, path: str) -> int:
    signed = value - (1 << 64) if value >= 1 << 63 else value
    if not -(2**31) <= signed < 2**31:
        raise _fail(path, DecodeErrorKind.OUT_OF_RANGE, "an integer from -2147483648 to 2147483647", str(signed))
    return signed


def _expect(wt: int, want: int, path: str) -> None:
    if wt != want:
        raise _fail(path, DecodeErrorKind.WRONG_TYPE, f"protobuf wire type {want}", f"wire type {wt}")


def _text(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _fail(path, DecodeErrorKind.INVALID_UNICODE, "UTF-8 text", "invalid UTF-8") from None


def _read(kind: str, type_name: str, wt: int, value: Any, path: str, depth: int) -> Any:
    if kind in _WIRE_TYPE:
        _expect(wt, 0, path)
        if kind == "bool":
            return value != 0
        number = _int32(value, path)
        return _NAMES[type_name].get(number, number) if kind == "enum" else number
    _expect(wt, 2, path)
    if kind == "string":
        return _text(value, path)
    if kind == "bytes":
        return base64.b64encode(value).decode("ascii")
    if depth >= MAX_DEPTH:
        raise _fail(path, DecodeErrorKind.WRONG_FORMAT, f"messages nested at most {MAX_DEPTH} deep", "deeper")
    if kind == "message":
        return _message(type_name, value, path, depth + 1)
    if kind == "timestamp":
        return _timestamp(value, path)
    if kind == "struct":
        return _struct(value, path, depth + 1)
    return _value(value, path, depth + 1)


def _message(name: str, buf: bytes, path: str, depth: int) -> dict[str, Any]:
    rows = _ROWS[name]
    out: dict[str, Any] = {}
    oneof: str | None = None
    for number, wt, value in _fields(buf, path):
        row = rows.get(number)
        if row is None:
            continue  # an unknown field: skipped, as proto3 readers do
        _, key, presence, kind, type_name = row
        at = f"{path}.{key}"
        if presence == "repeated":
            items = out.setdefault(key, [])
            items.append(_read(kind, type_name, wt, value, f"{at}[{len(items)}]", depth))
        elif presence == "map":
            _expect(wt, 2, at)
            entry_key, entry_value = "", None
            for n, ewt, evalue in _fields(value, at):
                if n == 1:
                    _expect(ewt, 2, at)
                    entry_key = _text(evalue, at)
                elif n == 2:
                    entry_value = (ewt, evalue)
            if entry_value is None:
                item = _ZERO.get(kind, {}) if kind != "value" else None
            else:
                item = _read(kind, type_name, entry_value[0], entry_value[1], f"{at}.{entry_key}", depth)
            out.setdefault(key, {})[entry_key] = item
        else:
            item = _read(kind, type_name, wt, value, at, depth)
            if kind == "enum" and item == 0:
                out.pop(key, None)
                continue
            if presence == "oneof":
                if oneof is not None and oneof != key:
                    del out[oneof]
                oneof = key
            out[key] = item
    for _, key, presence, kind, _ in rows.values():
        if presence == "required" and key not in out:
            out[key] = _ZERO[kind]
    return out


def _timestamp(buf: bytes, path: str) -> str:
    seconds, nanos = 0, 0
    for n, wt, value in _fields(buf, path):
        if n == 1:
            _expect(wt, 0, path)
            seconds = value - (1 << 64) if value >= 1 << 63 else value
        elif n == 2:
            _expect(wt, 0, path)
            nanos = _int32(value, path)
    if not 0 <= nanos < 1_000_000_000:
        raise _fail(path, DecodeErrorKind.OUT_OF_RANGE, "nanos from 0 to 999999999", str(nanos))
    try:
        moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=seconds)
    except OverflowError:
        raise _fail(path, DecodeErrorKind.OUT_OF_RANGE, "a timestamp from year 1 to 9999", str(seconds)) from None
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}.{nanos:09d}Z"


def _struct(buf: bytes, path: str, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, wt, value in _fields(buf, path):
        if n != 1:
            continue
        _expect(wt, 2, path)
        key, item = "", None
        for en, ewt, evalue in _fields(value, path):
            if en == 1:
                _expect(ewt, 2, path)
                key = _text(evalue, path)
            elif en == 2:
                _expect(ewt, 2, path)
                item = _value(evalue, f"{path}.{key}", depth + 1)
        out[key] = item
    return out


def _value(buf: bytes, path: str, depth: int) -> Any:
    if depth >= MAX_DEPTH:
        raise _fail(path, DecodeErrorKind.WRONG_FORMAT, f"values nested at most {MAX_DEPTH} deep", "deeper")
    out: Any = None
    for n, wt, value in _fields(buf, path):
        if n == 1:
            out = None
        elif n == 2:
            _expect(wt, 1, path)
            number = struct.unpack("<d", value)[0]
            out = int(number) if number.is_integer() and abs(number) < 2**53 else number
        elif n == 3:
            _expect(wt, 2, path)
            out = _text(value, path)
        elif n == 4:
            _expect(wt, 0, path)
            out = value != 0
        elif n == 5:
            _expect(wt, 2, path)
            out = _struct(value, path, depth + 1)
        elif n == 6:
            _expect(wt, 2, path)
            items: list[Any] = []
            for ln, lwt, lvalue in _fields(value, path):
                if ln == 1:
                    _expect(lwt, 2, path)
                    items.append(_value(lvalue, f"{path}[{len(items)}]", depth + 1))
            out = items
    return out


def to_json(type_name: str, data: bytes, root: str = "$") -> dict[str, Any]:
    """The ProtoJSON tree of the message `type_name` held by the protobuf bytes `data`.

    Raises:
        DecodeError: the bytes are not a well-formed protobuf message.
    """
    return _message(type_name, data, root, 0)


def decode(type_name: str, data: bytes, root: str = "$") -> Any:
    """The typed value of the message `type_name` held by the protobuf bytes `data`,
    checked by the same decoder the JSON bindings use.

    Raises:
        DecodeError: the bytes are not well formed, or the value is not valid.
    """
    return codec.decode(type_name, msgspec.json.encode(to_json(type_name, data, root)), root)


# --- writing -------------------------------------------------------------------------


def _put_varint(out: bytearray, value: int) -> None:
    value &= 0xFFFFFFFFFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _put_len(out: bytearray, number: int, data: bytes | bytearray) -> None:
    _put_varint(out, number << 3 | 2)
    _put_varint(out, len(data))
    out += data


def _put_int(out: bytearray, number: int, value: int) -> None:
    _put_varint(out, number << 3)
    _put_varint(out, value)


def _put(out: bytearray, number: int, kind: str, type_name: str, value: Any) -> None:
    if kind == "string":
        _put_len(out, number, str(value).encode("utf-8"))
    elif kind == "bytes":
        _put_len(out, number, base64.b64decode(value))
    elif kind == "bool":
        _put_int(out, number, 1 if value else 0)
    elif kind == "int32":
        _put_int(out, number, int(value))
    elif kind == "enum":
        _put_int(out, number, ENUMS[type_name][value] if isinstance(value, str) else int(value))
    elif kind == "message":
        _put_len(out, number, _encode_message(type_name, value))
    elif kind == "timestamp":
        _put_len(out, number, _encode_timestamp(value))
    elif kind == "struct":
        _put_len(out, number, _encode_struct(value))
    else:
        _put_len(out, number, _encode_value(value))


def _is_zero(kind: str, value: Any) -> bool:
    return value in ("", 0, False) if kind in ("string", "bytes", "bool", "int32") else False


def _encode_message(name: str, tree: dict[str, Any]) -> bytearray:
    out = bytearray()
    for number, key, presence, kind, type_name in MESSAGES[name]:
        value: Any = tree.get(key)
        if value is None and not (presence == "oneof" and kind == "value" and key in tree):
            continue
        if presence == "repeated":
            for item in value:
                _put(out, number, kind, type_name, item)
        elif presence == "map":
            for k, item in value.items():
                entry = bytearray()
                _put_len(entry, 1, k.encode("utf-8"))
                _put(entry, 2, kind, type_name, item)
                _put_len(out, number, entry)
        elif presence in ("implicit", "required") and _is_zero(kind, value):
            continue
        else:
            _put(out, number, kind, type_name, value)
    return out


def _encode_timestamp(text: str) -> bytearray:
    canonical = timestamp_text(text)
    if canonical is None:
        raise ValueError(f"not an RFC 3339 date-time: {text!r}")
    moment = datetime.datetime.fromisoformat(canonical)
    out = bytearray()
    seconds = calendar.timegm(moment.utctimetuple())
    if seconds:
        _put_int(out, 1, seconds)
    if moment.microsecond:
        _put_int(out, 2, moment.microsecond * 1000)
    return out


def _encode_struct(tree: dict[str, Any]) -> bytearray:
    out = bytearray()
    for key, item in tree.items():
        entry = bytearray()
        _put_len(entry, 1, key.encode("utf-8"))
        _put_len(entry, 2, _encode_value(item))
        _put_len(out, 1, entry)
    return out


def _encode_value(value: Any) -> bytearray:
    out = bytearray()
    if value is None:
        _put_int(out, 1, 0)
    elif isinstance(value, bool):
        _put_int(out, 4, 1 if value else 0)
    elif isinstance(value, (int, float)):
        _put_varint(out, 2 << 3 | 1)
        out += struct.pack("<d", float(value))
    elif isinstance(value, str):
        _put_len(out, 3, value.encode("utf-8"))
    elif isinstance(value, dict):
        _put_len(out, 5, _encode_struct(value))
    else:
        items = bytearray()
        for item in value:
            _put_len(items, 1, _encode_value(item))
        _put_len(out, 6, items)
    return out


def from_json(type_name: str, tree: dict[str, Any]) -> bytes:
    """The protobuf bytes of the message `type_name` whose ProtoJSON tree is `tree` (as
    the generated encoders write it: wire names, enums by name, bytes in base64)."""
    return bytes(_encode_message(type_name, tree))


def encode(type_name: str, value: Any) -> bytes:
    """The protobuf bytes of the typed value `value` of message `type_name`."""
    tree = msgspec.json.decode(codec.encode(value)) if value is not None else {}
    return from_json(type_name, tree if isinstance(tree, dict) else {})


# --- google.rpc.Status ---------------------------------------------------------------


def status_details(code: int, error: A2aError) -> bytes:
    """A `google.rpc.Status` (code, message, one `ErrorInfo` detail) for the
    `grpc-status-details-bin` trailer."""
    info = bytearray()
    _put_len(info, 1, error.reason.encode("utf-8"))
    _put_len(info, 2, error.error_info()["domain"].encode("utf-8"))
    for key, value in dict(error.metadata).items():
        entry = bytearray()
        _put_len(entry, 1, key.encode("utf-8"))
        _put_len(entry, 2, value.encode("utf-8"))
        _put_len(info, 3, entry)
    detail = bytearray()
    _put_len(detail, 1, STATUS_TYPE_URL.encode("ascii"))
    _put_len(detail, 2, info)
    out = bytearray()
    if code:
        _put_int(out, 1, code)
    _put_len(out, 2, error.message.encode("utf-8"))
    _put_len(out, 3, detail)
    return bytes(out)


def error_of_details(data: bytes) -> tuple[str | None, str | None, dict[str, str]]:
    """(reason, domain, metadata) of the first `ErrorInfo` detail of a `google.rpc.Status`
    (`None`s and `{}` when it has none or is not well formed)."""
    try:
        for n, wt, value in _fields(data, "$"):
            if n != 3 or wt != 2:
                continue
            type_url, payload = "", b""
            for dn, dwt, dvalue in _fields(value, "$"):
                if dn == 1 and dwt == 2:
                    type_url = _text(dvalue, "$")
                elif dn == 2 and dwt == 2:
                    payload = dvalue
            if type_url != STATUS_TYPE_URL:
                continue
            reason: str | None = None
            domain: str | None = None
            metadata: dict[str, str] = {}
            for fn, fwt, fvalue in _fields(payload, "$"):
                if fwt != 2:
                    continue
                if fn == 1:
                    reason = _text(fvalue, "$")
                elif fn == 2:
                    domain = _text(fvalue, "$")
                elif fn == 3:
                    k = v = ""
                    for en, ewt, evalue in _fields(fvalue, "$"):
                        if en == 1 and ewt == 2:
                            k = _text(evalue, "$")
                        elif en == 2 and ewt == 2:
                            v = _text(evalue, "$")
                    metadata[k] = v
            return reason, domain, metadata
    except DecodeError:
        pass
    return None, None, {}
