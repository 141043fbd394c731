"""What the Streamable HTTP profile needs to know about a message to route it.

The connection runtime never looks at method names; this transport has to, a little:
the RFD routes by connection and by session. Each scan decodes only the few members it
needs (msgspec skips the rest) and is never the message's decode: the connection
decodes and validates every message as on stdio. A message the scan cannot read is
routed as connection-level, and the connection answers it as it would on stdio.

* `scan_incoming` (server, a POSTed body): its id, whether it is a request, its method
  (`initialize` is answered in the POST's own response).
* `scan_outgoing` (server, a line the agent wrote): a response's id, a request's or
  notification's `params.sessionId` (which session stream carries it).
* `session_header` (client, a line it writes): the `Acp-Session-Id` header it needs.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from agentproto.acp.surface import Surface

__all__ = ["Incoming", "Outgoing", "is_batch", "result_session", "scan_incoming", "scan_outgoing", "session_header"]

CONNECTION_ID_HEADER = "acp-connection-id"
SESSION_ID_HEADER = "acp-session-id"


class _Params(msgspec.Struct):
    sessionId: str | UnsetType = UNSET  # the wire name


class _Message(msgspec.Struct):
    id: int | str | None | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: msgspec.Raw | UnsetType = UNSET


_message = msgspec.json.Decoder(_Message)
_params = msgspec.json.Decoder(_Params)


class Incoming(msgspec.Struct, frozen=True):
    """A POSTed message, as far as routing cares."""

    id: int | str | None | UnsetType
    method: str | UnsetType

    @property
    def is_request(self) -> bool:
        return self.id is not UNSET and self.method is not UNSET


class Outgoing(msgspec.Struct, frozen=True):
    """A message the agent wrote, as far as routing cares."""

    response_id: int | str | None | UnsetType
    """A response's id (`UNSET` for requests and notifications)."""
    session: str | None
    """A request's or notification's `params.sessionId`."""


def _scan(line: bytes) -> _Message | None:
    try:
        return _message.decode(line)
    except msgspec.DecodeError:
        return None


def _session_of(params: msgspec.Raw | UnsetType) -> str | None:
    if params is UNSET or memoryview(params)[:1].tobytes() != b"{":
        return None
    try:
        session = _params.decode(params).sessionId
    except msgspec.DecodeError:
        return None
    return None if session is UNSET else session


def is_batch(body: bytes) -> bool:
    """Whether a body is a JSON array (a batch, which this transport refuses)."""
    return body.lstrip(b" \t\r\n")[:1] == b"["


def scan_incoming(body: bytes) -> Incoming | None:
    """`None` when the body is not a JSON object."""
    message = _scan(body)
    return None if message is None else Incoming(message.id, message.method)


def scan_outgoing(line: bytes) -> Outgoing:
    message = _scan(line)
    if message is None:
        return Outgoing(UNSET, None)
    if message.method is UNSET and (message.result is not UNSET or message.error is not UNSET):
        return Outgoing(message.id, None)
    return Outgoing(UNSET, _session_of(message.params))


def result_session(line: bytes) -> str | None:
    """A response's `result.sessionId` (client side: a session was created or opened)."""
    message = _scan(line)
    if message is None or message.result is UNSET:
        return None
    return _session_of(message.result)


def session_header(surface: Surface, line: bytes) -> str | None:
    """The session a client→agent message is scoped to: its `params.sessionId` when its
    method works on a session this connection already has (not one that creates, loads
    or resumes a session, whose answers come on the connection-scoped stream)."""
    message = _scan(line)
    if message is None or message.method is UNSET:
        return None
    info: Any = surface.requests("agent").get(message.method) or surface.notifications("agent").get(message.method)
    if info is None or (info.session is not None and (info.session.unseen_ok or info.session.effect == "created")):
        return None
    return _session_of(message.params)
