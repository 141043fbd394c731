"""`AcpOptions`, and the `AcpEvent`s an ACP connection reports besides the JSON-RPC ones."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentproto.acp.receive import cancel_id_reader
from agentproto.codec.errors import DecodeError, DecodeWarning
from agentproto.jsonrpc.message import RequestId
from agentproto.jsonrpc.options import ConnectionEvent, ConnectionOptions

if TYPE_CHECKING:
    from agentproto.acp.surface import Surface

__all__ = [
    "AcpEvent",
    "AcpObserver",
    "AcpOptions",
    "HandlerFailure",
    "InvalidHandlerResult",
    "InvalidNotification",
    "NotificationBeforeInitialize",
    "Salvaged",
    "UnknownNotification",
    "UnknownSession",
]


class AcpEvent:
    """Something an ACP connection noticed and did not pass to a handler, or passed on
    after salvaging it (one of the subclasses below)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Salvaged(AcpEvent):
    """A message was accepted after dropping malformed optional values."""

    method: str
    warnings: list[DecodeWarning]


@dataclass(frozen=True, slots=True)
class InvalidNotification(AcpEvent):
    """A notification whose params are invalid was dropped."""

    method: str
    error: DecodeError


@dataclass(frozen=True, slots=True)
class UnknownNotification(AcpEvent):
    """A notification of a method this side does not handle was ignored."""

    method: str


@dataclass(frozen=True, slots=True)
class NotificationBeforeInitialize(AcpEvent):
    """A notification arrived before `initialize` completed and was dropped."""

    method: str


@dataclass(frozen=True, slots=True)
class UnknownSession(AcpEvent):
    """A notification named a session this side does not know. `session/update` is still
    delivered (agents send updates before the `session/new` answer); `session/cancel` is
    ignored."""

    method: str
    session_id: str


AcpObserver = Callable[[ConnectionEvent | AcpEvent], None]
"""Receives every JSON-RPC and ACP event; runs inline on the connection's tasks."""


class InvalidHandlerResult(TypeError):
    """A handler returned something the runtime cannot send as its method's result: not
    the method's typed result (a dict, say), or a value that fails validation. The peer
    is answered -32603; the message says which method, what was expected and what was
    found."""

    def __init__(self, method: str, message: str) -> None:
        super().__init__(message)
        self.method = method


@dataclass(frozen=True, slots=True)
class HandlerFailure:
    """A handler raised (or returned an unusable result): what `AcpOptions.on_error`
    receives. A request was answered -32603; a notification was dropped."""

    method: str
    request_id: RequestId
    """The id of the request being handled (`None` for a notification, or for a request
    whose id is `null`)."""
    exception: BaseException
    notification: bool = False
    """Whether a notification handler failed (nothing was answered)."""


def _connection_defaults() -> ConnectionOptions:
    return ConnectionOptions(allow_null_id=True)


@dataclass(slots=True)
class AcpOptions:
    """How an ACP connection behaves: the JSON-RPC limits plus the ACP-level checks."""

    connection: ConnectionOptions = field(default_factory=_connection_defaults)
    """The JSON-RPC options (line size, queues, backlog, call timeout, shutdown grace).
    ACP v1 allows `"id": null`, so `allow_null_id` is always turned on."""
    strict: bool = True
    """Validate everything this side sends (params of calls and notifications, results
    of handlers) by decoding it again as the receiving side would: a violation fails the
    call locally (`InvalidParams`) or, for a handler result, is answered -32603 and
    reported like a handler failure. On by default, so nothing invalid goes out.
    `strict=False` is the hot-path switch: it saves one decode per outgoing message, and
    then the application alone answers for what it sends (typed values still encode
    only their own fields, and a handler result must still be its method's type)."""
    check_duplicate_keys: bool = False
    """Check envelopes and payloads for repeated keys before the msgspec fast path."""
    exit_grace: float = 2.0
    """Seconds a spawned agent may take to exit after its stdin is closed before it is killed."""
    die_with_parent: bool = False
    """Linux only: the kernel SIGKILLs a spawned agent when the thread that spawned it (the
    event loop's) ends, so a client killed with SIGKILL leaves no agent behind. See
    `agentproto.acp.process` for its limits."""
    observer: AcpObserver | None = None
    """Receives every `AcpEvent` and `ConnectionEvent`."""
    on_error: Callable[[HandlerFailure], None] | None = None
    """Receives every handler failure (an exception, or a result that cannot be sent).
    Without it each one is logged with its traceback on the `agentproto.acp` logger
    (`logging.getLogger("agentproto.acp")`). Runs inline on the connection's tasks; what
    it raises is not caught."""

    def connection_options(self, surface: Surface | None = None) -> ConnectionOptions:
        """The options the JSON-RPC connection runs with; with `surface`, the cancel
        notification's params are read by that surface's generated decoder."""
        options = dataclasses.replace(
            self.connection,
            allow_null_id=True,
            check_duplicate_keys=self.connection.check_duplicate_keys or self.check_duplicate_keys,
        )
        cancel = options.cancel_notification
        if (
            surface is not None
            and cancel is not None
            and cancel.read_id is None
            and cancel.method == surface.rules.cancel_request
        ):
            # The cancels the connection acts on are the ones `classify` dispatches.
            reader = cancel_id_reader(surface, options.check_duplicate_keys)
            options.cancel_notification = dataclasses.replace(cancel, read_id=reader)
        if options.observer is None and self.observer is not None:
            options.observer = self.observer
        return options
