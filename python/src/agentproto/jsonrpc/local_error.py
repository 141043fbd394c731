"""Local failures of a connection: a call that could not get a usable answer, and a
transport that failed.

These are exceptions (`agentproto.AgentprotoError`); the peer's own error answer is the
one `CallError` that carries a wire `ErrorObject` (`RpcError`). Handlers answer with an
error by raising `agentproto.jsonrpc.RequestError`, which is not one of these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentproto.errors import AgentprotoError
from agentproto.jsonrpc.error import ErrorObject

if TYPE_CHECKING:
    from agentproto.jsonrpc.message import EnvelopeError

__all__ = [
    "CallAborted",
    "CallError",
    "CallTimeout",
    "ConnectionClosed",
    "InvalidResponse",
    "ResponseTooLarge",
    "RpcError",
    "TransportError",
]


class CallError(AgentprotoError):
    """A call to the peer ended without a result."""


class RpcError(CallError):
    """The peer answered with an error object."""

    def __init__(self, error: ErrorObject) -> None:
        super().__init__(str(error))
        self.error = error


class ConnectionClosed(CallError):
    """The connection is closed (or closed while the call was pending)."""

    def __init__(self) -> None:
        super().__init__("the connection is closed")


class CallTimeout(CallError):
    """No answer came within the timeout; the cancel notification was sent."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"no answer within {timeout} s")
        self.timeout = timeout


class CallAborted(CallError):
    """The call's abort token fired: the call was abandoned and the cancel notification sent."""

    def __init__(self) -> None:
        super().__init__("the call was abandoned")


class InvalidResponse(CallError):
    """The answer was not a valid response object."""

    def __init__(self, error: EnvelopeError) -> None:
        super().__init__(str(error))
        self.error = error


class ResponseTooLarge(CallError):
    """The answer was longer than the connection's maximum message size."""

    def __init__(self, length: int) -> None:
        super().__init__(f"the response of {length} bytes exceeds the maximum message size")
        self.length = length


class TransportError(AgentprotoError):
    """Reading or writing the byte streams failed; the connection is over."""
