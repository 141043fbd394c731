"""Classifying one incoming line: the receive path every ACP endpoint shares.

`classify` takes the bytes of one framed line, the receiving side (`Receiver`) and that
side's view of its own pending requests, and says what must happen: dispatch a request
or a notification, resolve a pending call, answer with an error, or ignore the line with
a `Finding`. It does no I/O, so connections, tools and the conformance vectors all run
exactly this code (the Python twin of `crates/acp/src/receive.rs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from agentproto.acp.rules import reads_as_empty
from agentproto.acp.surface import Surface
from agentproto.codec.errors import DecodeError, DecodeWarning
from agentproto.codec.runtime import rust_debug_str
from agentproto.jsonrpc.error import ErrorCode, ErrorObject
from agentproto.jsonrpc.message import (
    EnvelopeError,
    EnvelopeErrorKind,
    Notification,
    Request,
    RequestId,
    Response,
    _decode,
)

__all__ = [
    "CallFailed",
    "ExtMessage",
    "Finding",
    "Ignored",
    "Incoming",
    "IncomingError",
    "IncomingNotification",
    "IncomingRequest",
    "IncomingResponse",
    "Receiver",
    "Reply",
    "cancel_id_reader",
    "classify",
    "invalid_params",
]


class ExtMessage(msgspec.Struct, frozen=True):
    """An extension message (a method starting with `_`), passed through raw."""

    method: str
    """The full wire name, leading underscore included."""
    payload: Raw | None
    """The params or result as received; `None` when the message had none."""


@dataclass(frozen=True, slots=True)
class Receiver:
    """The receiving side of a connection: which payloads it decodes, and how."""

    surface: Surface
    side: str
    """`agent` or `client`: the side that receives."""
    allow_null_id: bool = True
    """Whether a request may carry `"id": null` (ACP v1 allows it)."""
    check_duplicate_keys: bool = False
    """Check for repeated keys before each fast decode (closes the fast path's one gap, at
    about the cost of a `json.loads` per message)."""
    fast_path: bool = True
    """Take the msgspec fast path where it applies (`False`: the authoritative path only,
    for debugging and for the tests that hold the two paths to one meaning)."""

    @property
    def sender(self) -> str:
        return "client" if self.side == "agent" else "agent"


class Finding(msgspec.Struct, frozen=True):
    """Why a line was not dispatched. `code` is stable and shared with the vectors:
    `bad-envelope`, `method-not-found`, `invalid-params`, `invalid-notification`,
    `unknown-notification`, `unmatched-response`, `invalid-response`."""

    code: str
    message: str = ""
    path: str = ""
    error: DecodeError | None = None


class IncomingRequest(msgspec.Struct, frozen=True):
    """Dispatch to the request handler, then answer `id`."""

    id: RequestId
    method: str
    params: Any
    """The decoded params (a generated type), or an `ExtMessage`."""
    type_name: str | None
    warnings: list[DecodeWarning] = msgspec.field(default_factory=list)


class IncomingNotification(msgspec.Struct, frozen=True):
    """Dispatch to the notification handler."""

    method: str
    params: Any
    type_name: str | None
    warnings: list[DecodeWarning] = msgspec.field(default_factory=list)


class IncomingResponse(msgspec.Struct, frozen=True):
    """Resolve the pending call `id` (a request of `method`) with its decoded result."""

    id: RequestId
    method: str
    result: Any
    type_name: str | None
    warnings: list[DecodeWarning] = msgspec.field(default_factory=list)


class IncomingError(msgspec.Struct, frozen=True):
    """Resolve the pending call `id` with the peer's error object."""

    id: RequestId
    method: str
    error: ErrorObject


class Reply(msgspec.Struct, frozen=True):
    """Send this error response; nothing is dispatched."""

    reply: Response
    finding: Finding


class CallFailed(msgspec.Struct, frozen=True):
    """The pending call `id` fails locally: its response was unusable. Nothing is sent."""

    id: RequestId
    method: str
    path: str
    message: str
    error: DecodeError | None = None


class Ignored(msgspec.Struct, frozen=True):
    """Nothing is dispatched and nothing is sent."""

    finding: Finding


Incoming = IncomingRequest | IncomingNotification | IncomingResponse | IncomingError | Reply | CallFailed | Ignored

Pending = Mapping[RequestId, str] | Callable[[RequestId], str | None]


def invalid_params(e: DecodeError) -> ErrorObject:
    """The -32602 error object for a decode failure; `data` is `{path, kind, expected,
    found}`, the message rendered from the same parts."""
    return ErrorObject.invalid_params_decoded(e)


def _pending(pending: Pending, id: RequestId) -> str | None:
    if callable(pending):
        return pending(id)
    return pending.get(id)


def classify(line: bytes, receiver: Receiver, pending: Pending) -> Incoming:
    """Classifies one line (without its terminator).

    Args:
        line: the bytes of one framed line.
        receiver: the receiving side.
        pending: the requests this side sent and awaits: a mapping from id to method,
            or a function from the id to the method (or `None`).
    """
    try:
        message = _decode(line, receiver.allow_null_id, receiver.check_duplicate_keys, receiver.fast_path)
    except EnvelopeError as e:
        return _envelope_failure(e, pending)
    surface = receiver.surface
    check = receiver.check_duplicate_keys
    fast = receiver.fast_path
    if isinstance(message, Notification):
        note = surface.notifications(receiver.side).get(message.method)
        if note is None:
            if message.method.startswith("_"):
                return IncomingNotification(message.method, ExtMessage(message.method, message.params), None)
            return Ignored(Finding("unknown-notification", message.method))
        try:
            decoded = surface._decode(note.params, message.params, "$.params", check, fast)
        except DecodeError as e:
            return Ignored(Finding("invalid-notification", e.message, e.path, e))
        return IncomingNotification(message.method, decoded.value, note.params, decoded.warnings)
    if isinstance(message, Request):
        info = surface.requests(receiver.side).get(message.method)
        if info is None:
            if message.method.startswith("_"):
                return IncomingRequest(message.id, message.method, ExtMessage(message.method, message.params), None)
            not_found = ErrorObject(
                code=ErrorCode.METHOD_NOT_FOUND, message=f"method not found: {rust_debug_str(message.method)}"
            )
            return Reply(Response(message.id, error=not_found), Finding("method-not-found", message.method))
        try:
            decoded = surface._decode(info.params, message.params, "$.params", check, fast)
        except DecodeError as e:
            return Reply(Response(message.id, error=invalid_params(e)), Finding("invalid-params", e.message, e.path, e))
        return IncomingRequest(message.id, message.method, decoded.value, info.params, decoded.warnings)
    method = _pending(pending, message.id)
    if method is None:
        return Ignored(Finding("unmatched-response", repr(message.id)))
    if message.error is not None:
        return IncomingError(message.id, method, message.error)
    call = surface.requests(receiver.sender).get(method)
    if call is None:
        if method.startswith("_"):
            return IncomingResponse(message.id, method, ExtMessage(method, message.result), None)
        return CallFailed(message.id, method, "$", f"no result type for method {rust_debug_str(method)}")
    if call.result is None:  # pragma: no cover - every request has a result type
        return CallFailed(message.id, method, "$", f"no result type for method {rust_debug_str(method)}")
    try:
        raw: Raw | bytes | None = b"{}" if reads_as_empty(call, message.result) else message.result
        result = surface._decode(call.result, raw, "$.result", check, fast)
    except DecodeError as e:
        return CallFailed(message.id, method, e.path, e.message, e)
    return IncomingResponse(message.id, method, result.value, call.result, result.warnings)


def _envelope_failure(e: EnvelopeError, pending: Pending) -> Incoming:
    if e.kind is EnvelopeErrorKind.INVALID_RESPONSE:
        if e.id is not UNSET:
            method = _pending(pending, e.id)
            if method is not None:
                return CallFailed(e.id, method, e.path or "$", e.message)
        return Ignored(Finding("invalid-response", e.message, e.path))
    if e.kind is EnvelopeErrorKind.INVALID_NOTIFICATION:
        return Ignored(Finding("invalid-notification", e.message, e.path))
    reply = e.reply()
    if reply is None:  # pragma: no cover - every other kind is answered
        return Ignored(Finding("invalid-response", e.message, e.path))
    return Reply(reply, Finding("bad-envelope", e.message, e.path))


def cancel_id_reader(
    surface: Surface, check_duplicate_keys: bool = False
) -> Callable[[Raw | None], RequestId | UnsetType]:
    """How a connection of `surface` reads the request id of an incoming cancel
    notification (`$/cancel_request`): with the generated decoder of its params, the one
    `classify` dispatches it with, so that the connection cancels exactly when `classify`
    says `IncomingNotification` and reports an invalid cancel exactly when it says
    `invalid-notification`. Returns `UNSET` for params that do not decode."""
    method = surface.rules.cancel_request
    note = surface.notifications("agent").get(method) or surface.notifications("client").get(method)
    if note is None:  # pragma: no cover - every surface has the cancel notification
        raise ValueError(f"the surface has no {method!r} notification")
    type_name = note.params

    def read(params: Raw | None) -> RequestId | UnsetType:
        try:
            decoded = surface._decode(type_name, params, "$.params", check_duplicate_keys, True)
        except DecodeError:
            return UNSET
        id: RequestId = decoded.value.request_id
        return id

    return read
