"""The JSON-RPC 2.0 envelope: decode one line into a message, encode messages compactly.

`params` and `result` stay raw (`msgspec.Raw`, the received bytes); the protocol layer
decodes them by method. Decoding has two paths with one meaning:

* the fast path decodes the envelope with msgspec and accepts only what is plainly
  valid (it never reports an error itself);
* anything else goes to the exact path, which reads the line with
  `agentproto.codec.reader` (repeated keys visible) and classifies every failure as the
  Rust SDK does (`crates/jsonrpc/src/decode.rs`): code, recoverable id, message, path.

Known gap of the fast path: msgspec keeps the last of two repeated keys. Pass
`check_duplicate_keys=True` to check for repeated keys first (at about the cost of a
`json.loads`); see the package README.
"""

from __future__ import annotations

import enum
import json
from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from agentproto.codec.reader import JArray, JObject, JsonSyntaxError, parse
from agentproto.codec.runtime import I32, I64, RequestId
from agentproto.codec.syntax import first_invalid, position_at
from agentproto.errors import AgentprotoError
from agentproto.jsonrpc.error import ErrorCode, ErrorObject

__all__ = [
    "MAX_NESTING_DEPTH",
    "EnvelopeError",
    "EnvelopeErrorKind",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "encode_notification",
    "encode_request",
    "encode_response",
]

MAX_NESTING_DEPTH = 128
"""Nesting deeper than this many arrays/objects (the message object included) is a parse error."""


class Request(msgspec.Struct, frozen=True):
    """A call that expects a response."""

    id: RequestId
    method: str
    params: Raw | None = None
    """The params as received; `None` when absent or `null`."""


class Notification(msgspec.Struct, frozen=True):
    """A one-way message."""

    method: str
    params: Raw | None = None


class Response(msgspec.Struct, frozen=True):
    """The answer to a request: a raw `result` or an `error` object."""

    id: RequestId
    result: Raw | None = None
    error: ErrorObject | None = None


Message = Request | Notification | Response


class EnvelopeErrorKind(enum.Enum):
    """How a line failed to be a message, and how it must be treated."""

    PARSE = "parse"
    """Not JSON (invalid UTF-8, a syntax error, trailing data, too deep). Answered -32700."""
    INVALID_REQUEST = "invalid-request"
    """JSON that is not a valid request (a batch, a scalar, a bad `jsonrpc` or `id`, ...). Answered -32600."""
    INVALID_PARAMS = "invalid-params"
    """A request whose `params` is neither an object, an array nor `null`. Answered -32602."""
    INVALID_NOTIFICATION = "invalid-notification"
    """A notification whose `params` is neither an object, an array nor `null`. Never answered."""
    INVALID_RESPONSE = "invalid-response"
    """A malformed response. Never answered; the matching pending call fails."""


class EnvelopeError(AgentprotoError):
    """A line that is not a valid message: what to answer, to which id, and why."""

    def __init__(
        self,
        kind: EnvelopeErrorKind,
        id: RequestId | UnsetType,
        message: str,
        path: str,
        position: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(f"{message} at `{path}`")
        self.kind = kind
        self.id = id
        """The id recovered from the line; `UNSET` when none could be."""
        self.message = message
        self.path = path
        self.position = position
        """For a parse error, `(line, column)` (from 1, the column in characters) of the
        first character that cannot continue a JSON text, or of the end of the input
        (`agentproto.codec.syntax`)."""

    @property
    def code(self) -> int:
        """The JSON-RPC code that describes the failure."""
        return _CODES[self.kind]

    @property
    def is_answered(self) -> bool:
        return self.kind in (
            EnvelopeErrorKind.PARSE,
            EnvelopeErrorKind.INVALID_REQUEST,
            EnvelopeErrorKind.INVALID_PARAMS,
        )

    def to_error_object(self) -> ErrorObject:
        """Code, message, and `{"path"}` as data, with `"line"` and `"column"` for a parse error."""
        error = ErrorObject(code=self.code, message=self.message)
        if self.position is None:
            return error.with_path(self.path)
        line, column = self.position
        return error.with_position(self.path, line, column)

    def reply(self) -> Response | None:
        """The error response to send, or `None` when the failure is not answered."""
        if not self.is_answered:
            return None
        return Response(id=None if self.id is UNSET else self.id, error=self.to_error_object())


_CODES = {
    EnvelopeErrorKind.PARSE: ErrorCode.PARSE_ERROR,
    EnvelopeErrorKind.INVALID_REQUEST: ErrorCode.INVALID_REQUEST,
    EnvelopeErrorKind.INVALID_RESPONSE: ErrorCode.INVALID_REQUEST,
    EnvelopeErrorKind.INVALID_PARAMS: ErrorCode.INVALID_PARAMS,
    EnvelopeErrorKind.INVALID_NOTIFICATION: ErrorCode.INVALID_PARAMS,
}


# ---------------------------------------------------------------------------
# Fast path


class _Error(msgspec.Struct):
    code: I32
    message: str
    data: Raw | UnsetType = UNSET


class _Envelope(msgspec.Struct):
    jsonrpc: str | UnsetType = UNSET
    id: I64 | str | None | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: Raw | UnsetType = UNSET
    result: Raw | UnsetType = UNSET
    error: _Error | UnsetType = UNSET


_envelope = msgspec.json.Decoder(_Envelope).decode
_FAST_ERRORS = (msgspec.ValidationError, msgspec.DecodeError)


class _Duplicate(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> None:
    if len(pairs) > 1 and len({k for k, _ in pairs}) != len(pairs):
        raise _Duplicate


def has_duplicate_keys(text: str | bytes) -> bool:
    """Whether any object in the JSON text repeats a key (the fast path's guard when
    `check_duplicate_keys` is on; also used for payloads)."""
    try:
        json.loads(text, object_pairs_hook=_pairs)
    except _Duplicate:
        return True
    except ValueError:
        return False
    return False


def decode(
    line: bytes, *, allow_null_id: bool = False, check_duplicate_keys: bool = False, fast: bool = True
) -> Message:
    """Decodes one line (without its terminator).

    Args:
        line: the bytes of one framed line.
        allow_null_id: whether a request may carry `"id": null` (ACP v1 allows it).
        check_duplicate_keys: check for repeated keys before taking the fast path.
        fast: take the fast path when it applies (`False`: the exact path only).

    Raises:
        EnvelopeError: the line is not a valid message; its `kind`, `code`, `id` and
            `reply()` say how to answer.
    """
    return _decode(line, allow_null_id, check_duplicate_keys, fast)


def _decode(line: bytes, allow_null_id: bool, check_duplicate_keys: bool, fast: bool) -> Message:
    try:
        text = "" if line.isascii() else line.decode("utf-8")
    except UnicodeDecodeError as e:
        # The position of the first byte that does not begin a valid sequence, in characters.
        at = position_at(line[: e.start].decode("utf-8"))
        what = f"parse error: invalid utf-8 at line {at.line}, column {at.column}"
        raise EnvelopeError(EnvelopeErrorKind.PARSE, UNSET, what, "$", (at.line, at.column)) from None
    # A line that decodes and nests deeper than the limit has more than 2 * limit bytes.
    shallow = len(line) <= 2 * MAX_NESTING_DEPTH or line.count(b"{") + line.count(b"[") <= MAX_NESTING_DEPTH
    if fast and shallow and not (check_duplicate_keys and has_duplicate_keys(line)):
        try:
            env = _envelope(line)
        except _FAST_ERRORS:
            pass
        else:
            message = _fast(env, allow_null_id)
            if message is not None:
                return message
    return _exact(text or line.decode("ascii"), allow_null_id)


def _fast(env: _Envelope, allow_null_id: bool) -> Message | None:
    """The message when the envelope is plainly valid, else `None` (the exact path decides)."""
    if env.jsonrpc != "2.0":
        return None
    method = env.method
    if method is not UNSET:
        if env.result is not UNSET or env.error is not UNSET:
            return None
        params = env.params
        if params is UNSET:
            raw = None
        else:
            first = memoryview(params)[0]
            if first == 0x7B or first == 0x5B:  # { [
                raw = params
            elif first == 0x6E:  # null
                raw = None
            else:
                return None
        id = env.id
        if id is UNSET:
            return Notification(method, raw)
        if (id is None and not allow_null_id) or id == 0:
            return None  # `0` may be `-0`, which is not an integer to the decoding model
        return Request(id, method, raw)
    id = env.id
    if id is UNSET or id == 0:
        return None
    result = env.result
    error = env.error
    if result is not UNSET:
        if error is not UNSET:
            return None
        return Response(id, result=result)
    if error is not UNSET:
        if error.code == 0:
            return None
        return Response(id, error=ErrorObject(code=error.code, message=error.message, data=error.data))
    return None


# ---------------------------------------------------------------------------
# Exact path


def _parse_error(message: str) -> EnvelopeError:
    return EnvelopeError(EnvelopeErrorKind.PARSE, UNSET, message, "$")


def _syntax_error(text: str, eof: bool) -> EnvelopeError:
    """The parse error for a line the reader refused, with the position every SDK reports;
    a line that is JSON by the grammar but refused all the same has none."""
    at = first_invalid(text)
    if at is None:
        return _parse_error("parse error: unexpected end of input" if eof else "parse error: invalid JSON")
    what = "unexpected end of input" if at.eof else "invalid JSON"
    message = f"parse error: {what} at line {at.line}, column {at.column}"
    return EnvelopeError(EnvelopeErrorKind.PARSE, UNSET, message, "$", (at.line, at.column))


def _nesting_exceeds(text: str, limit: int) -> bool:
    depth = 0
    in_string = False
    escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
            continue
        if c == '"':
            in_string = True
        elif c == "[" or c == "{":
            depth += 1
            if depth > limit:
                return True
        elif c == "]" or c == "}":
            depth = max(depth - 1, 0)
    return False


_KEYS = ("jsonrpc", "id", "method", "params", "result", "error")


def _probe(value: Any) -> tuple[str, Any]:
    """(kind, value) the way the Rust envelope's probe classifies a value."""
    if value is None:
        return "null", None
    if value is True or value is False:
        return "boolean", value
    if type(value) is int:
        if -(2**63) <= value <= 2**63 - 1:
            return "integer", value
        if 0 <= value < 2**64:
            return "integer out of range", value
        return "fractional number", value
    if type(value) is float:
        return "fractional number", value
    if type(value) is str:
        return "string", value
    if type(value) is JArray:
        return "array", value
    return "object", value


def _raw(text: str, start: int, end: int) -> Raw:
    return Raw(text[start:end].encode())


def _exact(text: str, allow_null_id: bool) -> Message:
    if (text.count("{") + text.count("[")) > MAX_NESTING_DEPTH and _nesting_exceeds(text, MAX_NESTING_DEPTH):
        raise _parse_error("parse error: nesting too deep")
    try:
        top = parse(text)
    except JsonSyntaxError as e:
        raise _syntax_error(text, e.eof) from None
    if type(top) is JArray:
        raise EnvelopeError(EnvelopeErrorKind.INVALID_REQUEST, UNSET, "invalid request: batches are not supported", "$")
    if type(top) is not JObject:
        found = {"null": "null", "boolean": "a boolean", "string": "a string"}.get(_probe(top)[0], "a number")
        raise EnvelopeError(
            EnvelopeErrorKind.INVALID_REQUEST, UNSET, f"invalid request: expected an object, found {found}", "$"
        )
    fields: dict[str, tuple[Any, int, int]] = {}
    duplicate: str | None = None
    for key, value, start, end in top.members:
        if key not in _KEYS:
            continue
        if key in fields:
            if duplicate is None:
                duplicate = key
            continue
        fields[key] = (value, start, end)
    return _classify(text, fields, duplicate, allow_null_id)


def _id_state(fields: dict[str, tuple[Any, int, int]]) -> tuple[str, Any]:
    """("missing" | "valid" | "null" | "invalid", id or the invalid kind)."""
    if "id" not in fields:
        return "missing", None
    kind, value = _probe(fields["id"][0])
    if kind in ("integer", "string"):
        return "valid", value
    if kind == "null":
        return "null", None
    return "invalid", kind


def _jsonrpc_problem(fields: dict[str, tuple[Any, int, int]]) -> tuple[str, str] | None:
    if "jsonrpc" not in fields:
        return "missing `jsonrpc`", "$"
    kind, value = _probe(fields["jsonrpc"][0])
    if kind == "string":
        if value == "2.0":
            return None
        return f'`jsonrpc` must be "2.0", found {json.dumps(value, ensure_ascii=False)}', "$.jsonrpc"
    return f'`jsonrpc` must be "2.0", found {kind}', "$.jsonrpc"


def _duplicate_error(kind: EnvelopeErrorKind, id: RequestId | UnsetType, key: str) -> EnvelopeError:
    # A repeated `id` leaves the id ambiguous: answer with `null`.
    if key == "id":
        id = UNSET
    prefix = "invalid response" if kind is EnvelopeErrorKind.INVALID_RESPONSE else "invalid request"
    return EnvelopeError(kind, id, f"{prefix}: duplicate key `{key}`", f"$.{key}")


def _classify(
    text: str, fields: dict[str, tuple[Any, int, int]], duplicate: str | None, allow_null_id: bool
) -> Message:
    state, id = _id_state(fields)
    if "method" in fields:
        return _classify_call(text, fields, state, id, duplicate, allow_null_id)
    if "result" in fields or "error" in fields:
        return _classify_response(text, fields, state, id, duplicate)
    echo: RequestId | UnsetType = id if state == "valid" else UNSET
    if duplicate is not None:
        raise _duplicate_error(EnvelopeErrorKind.INVALID_REQUEST, echo, duplicate)
    raise EnvelopeError(EnvelopeErrorKind.INVALID_REQUEST, echo, "invalid request: missing `method`", "$")


def _classify_call(
    text: str,
    fields: dict[str, tuple[Any, int, int]],
    state: str,
    id: Any,
    duplicate: str | None,
    allow_null_id: bool,
) -> Message:
    def invalid(echo: RequestId | UnsetType, message: str, path: str) -> EnvelopeError:
        return EnvelopeError(EnvelopeErrorKind.INVALID_REQUEST, echo, message, path)

    echo: RequestId | UnsetType = UNSET
    if state == "valid":
        echo = id
    elif state == "null" and allow_null_id:
        echo = None
    if duplicate is not None:
        raise _duplicate_error(EnvelopeErrorKind.INVALID_REQUEST, echo, duplicate)
    problem = _jsonrpc_problem(fields)
    if problem is not None:
        raise invalid(echo, f"invalid request: {problem[0]}", problem[1])
    if state == "invalid":
        raise invalid(UNSET, f"invalid request: expected an integer or a string id, found {id}", "$.id")
    if state == "null" and not allow_null_id:
        raise invalid(UNSET, "invalid request: `id` must not be null", "$.id")
    kind, method = _probe(fields["method"][0])
    if kind != "string":
        raise invalid(echo, f"invalid request: expected a string method, found {kind}", "$.method")
    if "result" in fields or "error" in fields:
        path = "$.result" if "result" in fields else "$.error"
        raise invalid(echo, "invalid request: a request cannot carry `result` or `error`", path)
    params: Raw | None = None
    if "params" in fields:
        value, start, end = fields["params"]
        if type(value) is JObject or type(value) is JArray:
            params = _raw(text, start, end)
        elif value is not None:
            found = "string" if type(value) is str else "boolean" if value is True or value is False else "number"
            if echo is UNSET:
                kind_, prefix = EnvelopeErrorKind.INVALID_NOTIFICATION, "invalid notification params"
            else:
                kind_, prefix = EnvelopeErrorKind.INVALID_PARAMS, "invalid params"
            raise EnvelopeError(kind_, echo, f"{prefix}: expected an object or an array, found {found}", "$.params")
    if echo is UNSET:
        return Notification(method, params)
    return Request(echo, method, params)


def _classify_response(
    text: str,
    fields: dict[str, tuple[Any, int, int]],
    state: str,
    id: Any,
    duplicate: str | None,
) -> Message:
    recovered: RequestId | UnsetType = UNSET
    if state == "valid":
        recovered = id
    elif state == "null":
        recovered = None

    def invalid(echo: RequestId | UnsetType, message: str, path: str) -> EnvelopeError:
        return EnvelopeError(EnvelopeErrorKind.INVALID_RESPONSE, echo, f"invalid response: {message}", path)

    if duplicate is not None:
        raise _duplicate_error(EnvelopeErrorKind.INVALID_RESPONSE, recovered, duplicate)
    problem = _jsonrpc_problem(fields)
    if problem is not None:
        raise invalid(recovered, problem[0], problem[1])
    if state == "missing":
        raise invalid(UNSET, "missing `id`", "$")
    if state == "invalid":
        raise invalid(UNSET, f"expected an integer, a string or null id, found {id}", "$.id")
    rid: RequestId = id
    if "result" in fields and "error" in fields:
        raise invalid(rid, "both `result` and `error`", "$")
    if "result" in fields:
        _, start, end = fields["result"]
        return Response(rid, result=_raw(text, start, end))
    value = fields["error"][0]
    if type(value) is not JObject:
        found = {"integer": "number", "integer out of range": "number", "fractional number": "number"}
        kind = _probe(value)[0]
        raise invalid(rid, f"expected an error object, found {found.get(kind, kind)}", "$.error")
    members: dict[str, tuple[Any, int, int]] = {}
    dup_path: str | None = None
    for key, v, start, end in value.members:
        if key not in ("code", "message", "data"):
            continue
        if key in members:
            dup_path = dup_path or f"$.error.{key}"
            continue
        members[key] = (v, start, end)
    if dup_path is not None:
        raise invalid(rid, "duplicate key in the error object", dup_path)
    if "code" not in members:
        raise invalid(rid, "missing error code", "$.error")
    kind, code = _probe(members["code"][0])
    if kind != "integer":
        raise invalid(rid, f"expected an integer error code, found {kind}", "$.error.code")
    if not -(2**31) <= code <= 2**31 - 1:
        raise invalid(rid, "error code out of the i32 range", "$.error.code")
    if "message" not in members:
        raise invalid(rid, "missing error message", "$.error")
    kind, message = _probe(members["message"][0])
    if kind != "string":
        raise invalid(rid, f"expected a string error message, found {kind}", "$.error.message")
    data: Raw | UnsetType = UNSET
    if "data" in members:
        _, start, end = members["data"]
        data = _raw(text, start, end)
    return Response(rid, error=ErrorObject(code=code, message=message, data=data))


# ---------------------------------------------------------------------------
# Encoding

_encode_str = msgspec.json.Encoder().encode


def _id_bytes(id: RequestId) -> bytes:
    return b"null" if id is None else _encode_str(id)


def _raw_bytes(raw: Raw | bytes) -> bytes:
    data = bytes(raw)
    # A framed message must not contain a line break; in valid JSON one can only be
    # whitespace between tokens.
    if b"\n" in data or b"\r" in data:
        data = data.replace(b"\n", b"").replace(b"\r", b"")
    return data


def encode_request(id: RequestId, method: str, params: Raw | bytes | None) -> bytes:
    """A request as compact JSON (no newline), around already-encoded params."""
    out = b'{"jsonrpc":"2.0","id":' + _id_bytes(id) + b',"method":' + _encode_str(method)
    if params is not None:
        out += b',"params":' + _raw_bytes(params)
    return out + b"}"


def encode_notification(method: str, params: Raw | bytes | None) -> bytes:
    """A notification as compact JSON (no newline), around already-encoded params."""
    out = b'{"jsonrpc":"2.0","method":' + _encode_str(method)
    if params is not None:
        out += b',"params":' + _raw_bytes(params)
    return out + b"}"


def encode_response(id: RequestId, result: Raw | bytes | None = None, error: ErrorObject | None = None) -> bytes:
    """A response as compact JSON (no newline): the raw result, or the error object."""
    out = b'{"jsonrpc":"2.0","id":' + _id_bytes(id)
    if error is not None:
        out += b',"error":{"code":' + str(error.code).encode() + b',"message":' + _encode_str(error.message)
        if error.data is not UNSET:
            out += b',"data":' + _raw_bytes(error.data)
        out += b"}"
    else:
        out += b',"result":' + (b"null" if result is None else _raw_bytes(result))
    return out + b"}"


def encode(message: Message) -> bytes:
    """Any message as compact JSON, without a newline."""
    if isinstance(message, Request):
        return encode_request(message.id, message.method, message.params)
    if isinstance(message, Notification):
        return encode_notification(message.method, message.params)
    return encode_response(message.id, message.result, message.error)
