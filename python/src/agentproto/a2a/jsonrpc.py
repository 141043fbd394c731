"""The JSON-RPC binding without I/O: a request body (with its headers and query string) in,
an operation and its typed request out, or the error answer to send; and, on the client's
side, a response body (or one SSE item's data) in, a typed result, a local failure or the
peer's error out.

Steps of a request, in the order the Rust server takes them: the nesting depth
(`limits.py`), the envelope (one decode, params kept raw), the `Content-Type`, the
`A2A-Version`, the method, then the params by method (paths from `$.params`). A request's
id is echoed as the exact JSON text it had (an integer of any size included).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from agentproto.a2a import codec
from agentproto.a2a.answers import Answer, AnswerValue, CallFailed, ErrorReply
from agentproto.a2a.errors import A2aError, ErrorKind, PeerError, error_info_of
from agentproto.a2a.generated.v1 import OPERATIONS, Operation
from agentproto.a2a.limits import check_depth
from agentproto.a2a.version import MissingVersion, check_version, header
from agentproto.codec.errors import DecodeError
from agentproto.codec.reader import JObject, JsonSyntaxError, parse
from agentproto.jsonrpc.message import EnvelopeError, Notification, Request, Response
from agentproto.jsonrpc.message import decode as decode_envelope

__all__ = ["RpcCall", "RpcId", "RpcRefusal", "read_answer", "read_request"]

_MEDIA_TYPES = ("application/json", "application/a2a+json")
_BY_METHOD = {operation.value: operation for operation in Operation}


@dataclass(frozen=True, slots=True)
class RpcId:
    """A request id as it is written back: the JSON text the request gave."""

    json: bytes

    @property
    def value(self) -> Any:
        """The id as a Python value (`int`, `str`, `None`, or a `float`)."""
        return msgspec.json.decode(self.json)


_NULL_ID = RpcId(b"null")


@dataclass(frozen=True, slots=True)
class RpcCall:
    """A request to run: the operation and its typed request."""

    id: RpcId | None
    """`None` for a notification: run it, answer nothing (HTTP 204)."""
    operation: Operation
    request: Any


@dataclass(frozen=True, slots=True)
class RpcRefusal:
    """Nothing runs; this error is the answer (none for a notification: HTTP 204)."""

    id: RpcId | None
    """The id the error response carries; `None` when none could be read (`null`)."""
    error: A2aError
    notification: bool = False

    @property
    def http_status(self) -> int:
        """The HTTP status of the answer: 200, except where the HTTP meaning matters."""
        if self.notification:
            return 204
        return _HTTP_STATUS.get(self.error.kind, 200)

    def body(self) -> bytes:
        """The JSON-RPC error response."""
        head = b'{"jsonrpc":"2.0","id":' + (self.id or _NULL_ID).json + b',"error":'
        return head + msgspec.json.encode(self.error.jsonrpc_error()) + b"}"


_HTTP_STATUS = {
    ErrorKind.UNAUTHENTICATED: 401,
    ErrorKind.PERMISSION_DENIED: 403,
    ErrorKind.PAYLOAD_TOO_LARGE: 413,
    ErrorKind.REQUEST_TIMEOUT: 408,
    ErrorKind.MALFORMED_BODY: 400,
    ErrorKind.RATE_LIMITED: 429,
}


def content_type_ok(headers: Mapping[str, str]) -> bool:
    """No `Content-Type`, or JSON (`application/json`, `application/a2a+json`)."""
    value = header(headers, "Content-Type")
    if value is None:
        return True
    return value.split(";")[0].strip().lower() in _MEDIA_TYPES


def _numeric_id(body: bytes) -> tuple[RpcId, bytes] | None:
    """For an object whose one `id` member is a number the envelope does not take (beyond
    64 bits, or a fraction): that number's text, and the body with the id replaced by 0."""
    try:
        text = body.decode("utf-8")
        top = parse(text)
    except (UnicodeDecodeError, JsonSyntaxError, RecursionError):
        return None
    if type(top) is not JObject:
        return None
    ids = [m for m in top.members if m[0] == "id"]
    if len(ids) != 1 or not (type(ids[0][1]) is int or type(ids[0][1]) is float):
        return None
    _, _, start, end = ids[0]
    return RpcId(text[start:end].encode()), (text[:start] + "0" + text[end:]).encode()


def _envelope(
    body: bytes, check_duplicate_keys: bool, fast: bool
) -> tuple[Request | Notification, RpcId | None] | RpcRefusal:
    raw_id: RpcId | None = None
    try:
        try:
            message = decode_envelope(body, allow_null_id=True, check_duplicate_keys=check_duplicate_keys, fast=fast)
        except EnvelopeError as e:
            rebuilt = _numeric_id(body) if e.path == "$.id" and e.code == -32600 else None
            if rebuilt is None:
                raise
            raw_id, body = rebuilt
            message = decode_envelope(body, allow_null_id=True, check_duplicate_keys=check_duplicate_keys, fast=fast)
    except EnvelopeError as e:
        kind = {-32700: ErrorKind.PARSE, -32602: ErrorKind.INVALID_PARAMS}.get(e.code, ErrorKind.INVALID_REQUEST)
        echo = None if isinstance(e.id, msgspec.UnsetType) else raw_id or RpcId(msgspec.json.encode(e.id))
        return RpcRefusal(echo, A2aError(kind, e.message))
    if isinstance(message, Response):
        return RpcRefusal(None, A2aError(ErrorKind.INVALID_REQUEST, "a JSON-RPC request is expected, not a response"))
    if isinstance(message, Notification):
        return message, None
    return message, raw_id or RpcId(msgspec.json.encode(message.id))


def read_request(
    body: bytes,
    headers: Mapping[str, str],
    query: str = "",
    *,
    missing_version: MissingVersion = MissingVersion.V0_3,
    check_duplicate_keys: bool = False,
    fast: bool = True,
) -> RpcCall | RpcRefusal:
    """A JSON-RPC request body read as an operation and its typed request, or the error
    answer. Pure: no I/O, nothing runs.

    Args:
        body: the HTTP body.
        headers: the request's headers (names in any case).
        query: the request URL's query string, without `?` (`A2A-Version` may be there).
        missing_version: what a request without `A2A-Version` is taken to be.
        check_duplicate_keys: refuse repeated keys that the fast paths would not see.
        fast: take the msgspec fast paths where they apply (`False`: the exact paths only).
    """
    too_deep = check_depth(body, 1)
    if too_deep is not None:
        return RpcRefusal(None, too_deep)
    read = _envelope(body, check_duplicate_keys, fast)
    if isinstance(read, RpcRefusal):
        return read
    message, rpc_id = read
    notification = rpc_id is None

    def refuse(error: A2aError) -> RpcRefusal:
        return RpcRefusal(rpc_id, error, notification)

    if not content_type_ok(headers):
        return refuse(
            A2aError(ErrorKind.INVALID_REQUEST, "Content-Type must be application/json or application/a2a+json")
        )
    refused = check_version(headers, query, "JSON-RPC", missing_version)
    if refused is not None:
        return refuse(refused)
    operation = _BY_METHOD.get(message.method)
    if operation is None:
        error = A2aError(ErrorKind.METHOD_NOT_FOUND, f"method {message.method!r} does not exist")
        return refuse(error.with_metadata("method", message.method))
    raw = b"{}" if message.params is None else bytes(message.params)
    try:
        request = codec.decode(
            OPERATIONS[operation].request, raw, "$.params", fast=fast, check_duplicate_keys=check_duplicate_keys
        )
    except DecodeError as e:
        return refuse(A2aError.invalid_params(e))
    return RpcCall(rpc_id, operation, request)


def read_answer(
    operation: Operation, body: bytes, request_id: Any, *, check_duplicate_keys: bool = False, fast: bool = True
) -> Answer:
    """A JSON-RPC response body (or the data of one SSE item of a stream) to a call of
    `operation` whose request carried `request_id`, read as what the call came to."""
    try:
        message = decode_envelope(body, allow_null_id=True, check_duplicate_keys=check_duplicate_keys, fast=fast)
    except EnvelopeError as e:
        return CallFailed(f"the answer is no valid JSON-RPC response: {e.message}")
    if not isinstance(message, Response):
        return CallFailed("the answer is no JSON-RPC response")
    if type(message.id) is not type(request_id) or message.id != request_id:
        return CallFailed(f"the response answers the id {msgspec.json.encode(message.id).decode()}, not this call")
    if message.error is not None:
        return ErrorReply(_peer_error(message.error.code, message.error.message, message.error.data))
    type_name = OPERATIONS[operation].result
    raw = b"null" if message.result is None else bytes(message.result)
    try:
        if type_name == "Empty":
            return AnswerValue(codec.decode_empty_or_null(raw, "$.result"), type_name)
        return AnswerValue(codec.decode(type_name, raw, "$.result"), type_name)
    except DecodeError as e:
        return CallFailed("the result does not decode", e)


def _peer_error(code: int, message: str, data: object) -> PeerError:
    details: object = None
    if isinstance(data, msgspec.Raw):
        try:
            details = msgspec.json.decode(data)
        except msgspec.DecodeError:  # pragma: no cover - the envelope read it as JSON
            details = None
    reason, metadata = error_info_of(details)
    return PeerError(code=code, message=message, reason=reason, metadata=metadata)
