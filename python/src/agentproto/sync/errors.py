"""The exceptions of the sync channel, one class per case of the Rust crate's error enums
(`crates/sync`: `ClientError`, `ProtocolError`, `FrameError`, `CallError`, `ServerError`).

Client side: `ServerError` (an `Error` tuple: the server's text), `ProtocolError` and its
subclasses (the stream cannot be trusted any more: the child has been ended), `ChildExited`
(the server went away; its status), `ChannelClosed`, `ChannelIOError`, and the JSON
conveniences' `EncodeParamsError` / `DecodeResultError`. Server side: `HandlerError` (what
a handler raises to answer with its text), `ClientCallError` and `ChannelBroken` (from
`Peer.call`), `EndedDuringCall`. A callback raises `CallbackError` to answer with its text.
"""

from __future__ import annotations

from enum import Enum, IntEnum

from agentproto.errors import AgentprotoError

__all__ = [
    "CallbackError",
    "ChannelBroken",
    "ChannelClosed",
    "ChannelIOError",
    "ChildExited",
    "ClientCallError",
    "DecodeResultError",
    "EncodeParamsError",
    "EndedDuringCall",
    "Field",
    "FrameError",
    "FrameProblem",
    "HandlerError",
    "MessageType",
    "NameMismatch",
    "ProtocolError",
    "ServerError",
    "SyncError",
    "UnexpectedMessage",
]


class MessageType(IntEnum):
    """What a tuple is (its wire value). Types 1-3 go from the client to the server, 4-6 back."""

    REQUEST = 1
    """Client → server: call the method `name` with `payload`."""
    CALL_RESPONSE = 2
    """Client → server: the answer to a `CALL`."""
    CALL_ERROR = 3
    """Client → server: a `CALL` failed; the payload is UTF-8 text."""
    RESPONSE = 4
    """Server → client: the result of the request in flight."""
    ERROR = 5
    """Server → client: the request in flight failed; the payload is UTF-8 text."""
    CALL = 6
    """Server → client: call back the client's callback `name` mid-request."""


class Field(Enum):
    """Which bin field of a tuple a `FrameError` is about."""

    NAME = "name"
    PAYLOAD = "payload"


class FrameProblem(Enum):
    """What is wrong with a tuple that could not be read (Rust's `FrameError` variants)."""

    ARRAY_HEADER = "array header"
    TYPE_MARKER = "type marker"
    UNKNOWN_TYPE = "unknown type"
    BIN_MARKER = "bin marker"
    TOO_LONG = "too long"
    UNEXPECTED_EOF = "unexpected end of stream"


class SyncError(AgentprotoError):
    """Base class of the sync channel's errors."""


class ServerError(SyncError):
    """The server answered the request with an `Error` tuple; `text` is its payload."""

    def __init__(self, text: str) -> None:
        super().__init__(f"server error: {text}")
        self.text = text


class ProtocolError(SyncError):
    """A tuple that is malformed or does not fit the conversation at this point."""


class FrameError(ProtocolError):
    """A tuple that could not be read. `problem` says which check failed; `found`, `field`,
    `length`, `limit`, `value` and `stage` are set where they apply."""

    def __init__(
        self,
        problem: FrameProblem,
        message: str,
        *,
        found: int | None = None,
        value: int | None = None,
        field: Field | None = None,
        length: int | None = None,
        limit: int | None = None,
        stage: str | None = None,
    ) -> None:
        super().__init__(message)
        self.problem = problem
        self.found = found
        self.value = value
        self.field = field
        self.length = length
        self.limit = limit
        self.stage = stage


class NameMismatch(ProtocolError):
    """An answer named another method or callback than the one waited for."""

    def __init__(self, kind: MessageType, expected: str, found: str) -> None:
        super().__init__(f"{kind.name} names `{found}` while the answer for `{expected}` was expected")
        self.kind = kind
        self.expected = expected
        self.found = found


class UnexpectedMessage(ProtocolError):
    """A tuple of a type this side never receives here (a `REQUEST` from the server, a
    `RESPONSE` during a callback, ...)."""

    def __init__(self, kind: MessageType, name: str) -> None:
        super().__init__(f"unexpected {kind.name} tuple `{name}`")
        self.kind = kind
        self.name = name


class ChildExited(SyncError):
    """The server closed its end of the pipes (it exited, crashed or was killed); it has
    been reaped and `status` is its `returncode` (negative: the signal that ended it)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"server process exited (status {status})")
        self.status = status


class ChannelClosed(SyncError):
    """The channel was closed before this request."""

    def __init__(self) -> None:
        super().__init__("channel is closed")


class ChannelIOError(SyncError):
    """Reading or writing the pipes failed for another reason than the child going away
    (the `OSError` is the `__cause__`). The channel is closed and the child ended."""


class EncodeParamsError(SyncError):
    """The params of a JSON request could not be encoded (msgspec's error is the `__cause__`)."""

    def __init__(self, method: str) -> None:
        super().__init__(f"could not encode the params of `{method}` as JSON")
        self.method = method


class DecodeResultError(SyncError):
    """The result of a JSON request is not the JSON expected (msgspec's error is the `__cause__`)."""

    def __init__(self, method: str) -> None:
        super().__init__(f"could not decode the result of `{method}`")
        self.method = method


class CallbackError(SyncError):
    """Raised by a client callback: the server gets a `CALL_ERROR` with exactly `text`."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class HandlerError(SyncError):
    """Raised by a server handler: the client gets an `ERROR` with exactly `text`."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class ClientCallError(HandlerError):
    """`Peer.call`: the client answered with a `CALL_ERROR`; `client_text` is its text.
    A handler that lets it through answers `client error: TEXT`, as in Rust."""

    def __init__(self, client_text: str) -> None:
        super().__init__(f"client error: {client_text}")
        self.client_text = client_text


class ChannelBroken(SyncError):
    """`Peer.call`: the channel broke during the call (end of input, a malformed or
    unexpected tuple, an I/O error). `Server.serve` raises the cause once the handler
    returns; nothing more is written."""

    def __init__(self) -> None:
        super().__init__("the channel to the client broke during the call")


class EndedDuringCall(SyncError):
    """`Server.serve`: the input ended while a handler waited for the answer to `name`."""

    def __init__(self, name: str) -> None:
        super().__init__(f"input ended while waiting for the answer to callback `{name}`")
        self.name = name
