"""Decode failures and the warnings of lenient decoding.

A failure says what the schema expected, what the input held and where (a JSON path
from the message root), in the same words in every SDK (vectors/README.md, "Error
texts"), so a -32602 reply carries the same `{path, expected, found}` in every language.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

import msgspec

from agentproto.errors import AgentprotoError

T = TypeVar("T")


class DecodeError(AgentprotoError):
    """A value could not be decoded: what was expected, what was found, and where.

    Attributes:
        path: JSON path of the offending value from the message root (`$.params.prompt[0].text`).
        expected: what the schema wants there, as a phrase: "a string", 'the field "sessionId"',
            "an integer from 0 to 65535".
        found: what the input holds there, as a phrase: "null", "the integer 5", 'the string "x"'.
        message: the whole explanation in one line, rendered from the parts
            ("expected X, found Y"); only a failure without parts has a message of its own.
    """

    def __init__(self, path: str, expected: str, found: str, message: str | None = None) -> None:
        if message is None:
            message = f"expected {expected}, found {found}"
        super().__init__(f"{message} at {path}")
        self.path = path
        self.expected = expected
        self.found = found
        self.message = message

    def __repr__(self) -> str:
        return f"DecodeError(path={self.path!r}, expected={self.expected!r}, found={self.found!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DecodeError):
            return NotImplemented
        return (self.path, self.expected, self.found, self.message) == (
            other.path,
            other.expected,
            other.found,
            other.message,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.expected, self.found, self.message))


class WarningKind(enum.Enum):
    """What lenient decoding did with a value."""

    SALVAGED = "salvaged"
    """An invalid optional value was dropped (or an invalid array item skipped), as the
    schema's lenient annotations allow."""
    UNKNOWN_VARIANT = "unknown-variant"
    """A union variant the schema does not list was kept as raw JSON (nothing was lost)."""


@dataclass(frozen=True, slots=True)
class DecodeWarning:
    """A value that lenient decoding dropped, replaced or kept raw, and why."""

    path: str
    """JSON path of the value."""
    message: str
    """What was wrong with it."""
    kind: WarningKind = WarningKind.SALVAGED
    """What happened to the value."""


class Decoded(msgspec.Struct, Generic[T], frozen=True):
    """A decoded value with the warnings lenient decoding produced (empty for a clean message)."""

    value: T
    warnings: list[DecodeWarning] = msgspec.field(default_factory=list)
