"""`AcpError`: how a typed call or notification failed.

The peer's own error answer is `PeerError`; every other subclass happened on this side.
Each class's `variant` is the name of the Rust SDK's `AcpError` variant (the flow vectors
name outcomes by it). A handler that lets one of these escape answers -32603 naming the
call (`data.method`, and `data.cause` for a peer error), or -32800 for `Cancelled`, as
Rust's `From<AcpError> for ErrorObject` does: the peer's code is never passed on as the
handler's own (a -32601 from the peer does not mean this method is missing).
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from agentproto.codec.errors import DecodeError
from agentproto.errors import AgentprotoError
from agentproto.jsonrpc.error import ErrorCode, ErrorObject
from agentproto.jsonrpc.local_error import CallError

__all__ = [
    "AcpError",
    "Cancelled",
    "CapabilityNotAdvertised",
    "ConnectionFailed",
    "InvalidParams",
    "InvalidResult",
    "NotAnnounced",
    "NotInitialized",
    "PeerError",
    "UnsupportedVersion",
]

_encode = msgspec.json.Encoder().encode


class AcpError(AgentprotoError):
    """A typed call or notification failed."""

    variant: ClassVar[str] = ""

    def __init__(self, method: str | None, message: str) -> None:
        super().__init__(message)
        self.method = method
        """The method called (`None` where no single method is to blame)."""

    def to_error_object(self) -> ErrorObject:
        """The answer of a handler that failed with this error."""
        code = ErrorCode.REQUEST_CANCELLED if isinstance(self, Cancelled) else ErrorCode.INTERNAL_ERROR
        data = b'{"method":' + _encode(self.method)
        if isinstance(self, PeerError):
            cause = self.error
            data += b',"cause":{"code":' + _encode(cause.code) + b',"message":' + _encode(cause.message) + b"}"
        return ErrorObject(code=code, message=str(self), data=msgspec.Raw(data + b"}"))


class PeerError(AcpError):
    """The peer answered with an error object."""

    variant = "Rpc"

    def __init__(self, method: str, error: ErrorObject) -> None:
        super().__init__(method, f"`{method}` failed: {error.message} ({error.code})")
        self.error = error


class ConnectionFailed(AcpError):
    """The connection is closed or failed, the call timed out, or its answer was unusable."""

    variant = "Connection"

    def __init__(self, method: str, cause: CallError) -> None:
        super().__init__(method, f"`{method}`: {cause}")
        self.cause = cause


class InvalidResult(AcpError):
    """The peer's result does not match the method's result type."""

    variant = "InvalidResult"

    def __init__(self, method: str, error: DecodeError) -> None:
        super().__init__(method, f"`{method}`: invalid result: {error}")
        self.error = error


class InvalidParams(AcpError):
    """Strict mode: the params this side was about to send are invalid; nothing was sent."""

    variant = "InvalidParams"

    def __init__(self, method: str, error: DecodeError) -> None:
        super().__init__(method, f"`{method}`: refusing to send invalid params: {error}")
        self.error = error


class NotInitialized(AcpError):
    """`initialize` has not completed; nothing was sent."""

    variant = "NotInitialized"

    def __init__(self, method: str) -> None:
        super().__init__(method, f"`{method}` cannot be sent before `initialize` has completed")


class CapabilityNotAdvertised(AcpError):
    """The peer did not advertise the capability this method (or this content) needs; nothing was sent."""

    variant = "CapabilityNotAdvertised"

    def __init__(self, method: str, capability: str) -> None:
        super().__init__(method, f"`{method}` needs the peer capability `{capability}`, which it did not advertise")
        self.capability = capability


class NotAnnounced(AcpError):
    """The answer that opened the session did not announce what this method needs
    (`session/set_mode` for a session whose opening answer had no `modes`); nothing was sent."""

    variant = "NotAnnounced"

    def __init__(self, method: str, session: str, member: str) -> None:
        super().__init__(
            method, f"`{method}` needs `{member}`, which the answer that opened session `{session}` did not announce"
        )
        self.session = session
        """The session the call names."""
        self.member = member
        """The member of the opening answer it needs, e.g. `modes`."""


class UnsupportedVersion(AcpError):
    """The agent answered `initialize` with a protocol version this side does not speak."""

    variant = "UnsupportedVersion"

    def __init__(self, answered: int, supported: int) -> None:
        super().__init__(None, f"the agent answered protocol version {answered}; this connection speaks {supported}")
        self.answered = answered
        self.supported = supported


class Cancelled(AcpError):
    """The session's prompt turn was cancelled while this call was pending;
    `$/cancel_request` was sent."""

    variant = "Cancelled"

    def __init__(self, method: str) -> None:
        super().__init__(method, f"`{method}` was abandoned: the session's prompt turn was cancelled")
