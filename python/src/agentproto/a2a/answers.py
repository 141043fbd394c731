"""What a call's answer came to, as a client reads it: a typed value, a local failure (the
answer does not decode, or is no valid answer), or the peer's error. Shared by the
JSON-RPC and HTTP+JSON answer readers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentproto.a2a.errors import PeerError
from agentproto.codec.errors import DecodeError

__all__ = ["Answer", "AnswerValue", "CallFailed", "ErrorReply"]


@dataclass(frozen=True, slots=True)
class AnswerValue:
    """The call returned a value."""

    value: Any
    """The decoded result (a generated type)."""
    type_name: str


@dataclass(frozen=True, slots=True)
class CallFailed:
    """The call failed locally: the answer is unusable. Never sent anywhere."""

    reason: str
    """What was wrong, in one line."""
    error: DecodeError | None = None
    """The decode failure, when the answer was well framed but its value does not decode."""

    def __str__(self) -> str:
        return self.reason if self.error is None else f"{self.reason}: {self.error}"


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """The call resolved with the peer's error."""

    error: PeerError


Answer = AnswerValue | CallFailed | ErrorReply
