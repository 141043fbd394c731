"""`ConnectionOptions`, and the `ConnectionEvent`s a connection reports to an observer.

The defaults are the Rust SDK's (`crates/jsonrpc/src/connection/options.rs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from msgspec import Raw, UnsetType

from agentproto.jsonrpc.error import ErrorObject
from agentproto.jsonrpc.frame import DEFAULT_MAX_MESSAGE_SIZE, Oversize
from agentproto.jsonrpc.message import EnvelopeError, RequestId

__all__ = [
    "CancelIdReader",
    "CancelNotification",
    "ConnectionEvent",
    "ConnectionOptions",
    "ErrorWithoutId",
    "InputClosed",
    "InvalidCancel",
    "InvalidMessage",
    "LateResponse",
    "NonJsonLineSkipped",
    "NotificationHandlerFailed",
    "Observer",
    "OversizeMessage",
    "RequestHandlerFailed",
    "ResultHookFailed",
    "UnmatchedResponse",
]


class ConnectionEvent:
    """Something noteworthy that happened on a connection (one of the subclasses below)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class NonJsonLineSkipped(ConnectionEvent):
    """A line that is not JSON was skipped without a reply (`skip_non_json_lines`)."""

    length: int


@dataclass(frozen=True, slots=True)
class InvalidMessage(ConnectionEvent):
    """A line was not a valid message; it was answered when `error.is_answered`."""

    error: EnvelopeError
    failed_call: bool
    """Whether a pending call was failed with it (invalid responses only)."""


@dataclass(frozen=True, slots=True)
class OversizeMessage(ConnectionEvent):
    """A line over `max_message_size` was discarded. A call with a recovered id was
    answered -32600; a response with a pending id failed that call."""

    line: Oversize


@dataclass(frozen=True, slots=True)
class UnmatchedResponse(ConnectionEvent):
    """A response arrived for an id that is not pending."""

    id: RequestId


@dataclass(frozen=True, slots=True)
class LateResponse(ConnectionEvent):
    """A response arrived for a call that was abandoned (cancelled, timed out); discarded."""

    id: RequestId


@dataclass(frozen=True, slots=True)
class ErrorWithoutId(ConnectionEvent):
    """The peer sent an error response with `"id": null` (it could not read something we sent)."""

    error: ErrorObject


@dataclass(frozen=True, slots=True)
class RequestHandlerFailed(ConnectionEvent):
    """A request handler raised; the request was answered -32603."""

    id: RequestId
    method: str
    exception: BaseException


@dataclass(frozen=True, slots=True)
class NotificationHandlerFailed(ConnectionEvent):
    """A notification handler raised; the worker went on with the next one."""

    method: str
    exception: BaseException


@dataclass(frozen=True, slots=True)
class ResultHookFailed(ConnectionEvent):
    """The result hook of a call raised; the call still received its answer."""

    id: RequestId
    exception: BaseException


@dataclass(frozen=True, slots=True)
class InvalidCancel(ConnectionEvent):
    """A cancel notification whose params do not name a request id."""


@dataclass(frozen=True, slots=True)
class InputClosed(ConnectionEvent):
    """The input reached its end; the connection is shutting down."""


Observer = Callable[[ConnectionEvent], None]
"""Receives every `ConnectionEvent`; runs inline on the connection's tasks (keep it short)."""


CancelIdReader = Callable[[Raw | None], RequestId | UnsetType]
"""Reads the id to cancel from a cancel notification's params; `UNSET` when they name none."""


@dataclass(frozen=True, slots=True)
class CancelNotification:
    """The method and params key of the cancel notification (`{"requestId": <id>}`)."""

    method: str = "$/cancel_request"
    id_key: str = "requestId"
    read_id: CancelIdReader | None = None
    """How incoming params are read. `None`: the `id_key` member, when it is an integer,
    a string or `null`. A protocol layer passes the decoder of its params type, so that
    the connection acts on exactly the cancels its validation accepts."""


@dataclass(slots=True)
class ConnectionOptions:
    """The limits and conventions of a connection."""

    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    """The longest incoming line (without its LF); longer ones are discarded as they
    stream by and reported. Default 64 MiB."""
    read_chunk_size: int = 64 * 1024
    """How many bytes are read at once."""
    allow_null_id: bool = False
    """Whether incoming requests may carry `"id": null` (ACP v1 allows it)."""
    skip_non_json_lines: bool = False
    """Report lines that are not JSON (`NonJsonLineSkipped`) instead of answering -32700
    (for clients of agents that log to stdout)."""
    check_duplicate_keys: bool = False
    """Check envelopes for repeated keys before the msgspec fast path (see the README)."""
    notification_queue: int = 64
    """Capacity of the queue between the reader and the notification worker; when it is
    full the reader stops reading."""
    max_concurrent_requests: int = 64
    """The most request handlers running at once; when all are busy the reader stops reading."""
    backlog: int = 1024
    """How many notifications or requests the reader may set aside while its queues are
    full, in order to keep reading responses to calls that are pending."""
    outgoing_queue: int = 64
    """Capacity of the outgoing queue; senders wait for room."""
    call_timeout: float | None = None
    """Seconds after which every call fails with `CallTimeout` (and is cancelled). Default none."""
    shutdown_grace: float = 5.0
    """Seconds in-flight handlers may run after the input ended, and the writer may take
    to flush afterwards."""
    cancel_notification: CancelNotification | None = CancelNotification()
    """The cancel notification; `None` disables it both ways."""
    observer: Observer | None = None
    """Receives every `ConnectionEvent`."""
