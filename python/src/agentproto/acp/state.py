"""What an ACP endpoint holds besides its state machine: both sides' typed `initialize`
messages once negotiated, an incoming request decoded once as it was read, the answer to a
call decoded once as it was read, what this side knows about each session, and the two
errors the state itself answers with."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import Raw

from agentproto.acp.refusal import MethodChecks
from agentproto.acp.rules import MethodInfo
from agentproto.codec.errors import Decoded, DecodeError, DecodeWarning
from agentproto.jsonrpc.cancellation import CancellationToken
from agentproto.jsonrpc.error import ErrorCode, ErrorObject, RequestError

__all__ = ["Answer", "Checks", "Negotiated", "Prepared", "Role", "SessionState", "before_ready", "unknown_session"]

Role = Literal["agent", "client"]
Checks = MethodChecks[Any, Any, Any]
_encode_json = msgspec.json.Encoder().encode


class Negotiated:
    """What `initialize` settled: the version and both sides' `initialize` messages, typed
    (the surface's `InitializeRequest` and `InitializeResponse`), which the capability
    rules read."""

    __slots__ = ("agent", "client", "own", "peer", "version")

    def __init__(self, version: int, role: Role, client: Any, agent: Any) -> None:
        self.version = version
        self.client = client
        """The client's `initialize` params."""
        self.agent = agent
        """The agent's `initialize` answer."""
        self.own: Any = agent if role == "agent" else client
        """This side's `initialize` message."""
        self.peer: Any = client if role == "agent" else agent
        """The peer's `initialize` message."""


class Prepared:
    """An incoming request decoded once, as it was read: its typed params (an
    `ExtMessage` for an extension request), its table row and generated checks, and the
    warnings to report; or the error to answer it with, raised when it is handled."""

    __slots__ = ("checks", "error", "info", "params", "warnings")

    def __init__(
        self,
        params: Any,
        info: MethodInfo | None,
        checks: Checks | None,
        warnings: list[DecodeWarning] | None = None,
        error: RequestError | None = None,
    ) -> None:
        self.params = params
        self.info = info
        self.checks = checks
        self.warnings = warnings
        self.error = error


class Answer:
    """The answer to one of this side's calls, decoded once as it was read; for
    `initialize`, also the protocol version it named (when it is one)."""

    __slots__ = ("decoded", "version")

    def __init__(self, decoded: Decoded[Any] | DecodeError, version: int | None) -> None:
        self.decoded = decoded
        self.version = version


class SessionState:
    """What this side knows about one session."""

    __slots__ = ("announced", "cancel", "cancelled_at", "turn")

    def __init__(self) -> None:
        self.turn: tuple[int, CancellationToken] | None = None
        """Agent side: the number and token of the prompt turn in flight."""
        self.cancelled_at = 0
        """Agent side: the read index of the session's last `session/cancel`; a prompt read
        before it but started after it starts cancelled."""
        self.cancel = CancellationToken()
        """Client side: fires when this side cancels the session (answers its pending
        permission requests); replaced by a fresh token after each cancel."""
        self.announced: frozenset[str] | None = None
        """What the latest answer that created or opened the session announced (the
        members the session gates read, e.g. `modes`); `None` while this side has seen no
        such answer for it."""


def before_ready(method: str) -> ErrorObject:
    """-32600 for a request before `initialize` has completed."""
    return ErrorObject(
        code=ErrorCode.INVALID_REQUEST, message=f"invalid request: `{method}` before `initialize` has completed"
    )


def unknown_session(session: str) -> ErrorObject:
    """-32002 with `data.sessionId`."""
    return ErrorObject(
        code=ErrorCode.RESOURCE_NOT_FOUND,
        message=f"resource not found: unknown session `{session}`",
        data=Raw(b'{"sessionId":' + _encode_json(session) + b"}"),
    )
