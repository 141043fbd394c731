"""Decode failures and the warnings of lenient decoding.

A failure says what kind it is (`DecodeErrorKind`, generated from `rules/decode.toml`),
what the schema expected, what the input held and where (a JSON path from the message
root), in the same words in every SDK (vectors/README.md, "Error texts"), so a -32602
reply carries the same `{path, kind, expected, found}` in every language.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

import msgspec

from agentproto.codec.kind import DecodeErrorKind
from agentproto.errors import AgentprotoError

T = TypeVar("T")


class DecodeError(AgentprotoError):
    """A value could not be decoded: what kind of failure, what was expected, what was
    found, and where. It is made where the failure happens; its message is rendered from
    those parts and never read back.

    Attributes:
        path: JSON path of the offending value from the message root (`$.params.prompt[0].text`).
        kind: what kind of failure it is (`DecodeErrorKind`, the same names in every SDK;
            a -32602 reply carries it as `data.kind`).
        expected: what the schema wants there, as a phrase: "a string", 'the field "sessionId"',
            "an integer from 0 to 65535".
        found: what the input holds there, as a phrase: "null", "the integer 5", 'the string "x"'.
        message: "expected <expected>, found <found>", rendered from the parts.
    """

    def __init__(self, path: str, kind: DecodeErrorKind, expected: str, found: str) -> None:
        if not isinstance(kind, DecodeErrorKind):
            raise TypeError(f"a DecodeError's kind is a DecodeErrorKind, not {type(kind).__name__}")
        super().__init__(f"expected {expected}, found {found} at {path}")
        self.path = path
        self.kind = kind
        self.expected = expected
        self.found = found

    @property
    def message(self) -> str:
        """`expected <expected>, found <found>`, rendered from the parts."""
        return f"expected {self.expected}, found {self.found}"

    def __str__(self) -> str:
        return f"{self.message} at {self.path}"

    def __repr__(self) -> str:
        return (
            f"DecodeError(path={self.path!r}, kind={self.kind.value!r}, "
            f"expected={self.expected!r}, found={self.found!r})"
        )

    def __reduce__(self) -> tuple[type[DecodeError], tuple[str, DecodeErrorKind, str, str]]:
        return (DecodeError, (self.path, self.kind, self.expected, self.found))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DecodeError):
            return NotImplemented
        return (self.path, self.kind, self.expected, self.found) == (
            other.path,
            other.kind,
            other.expected,
            other.found,
        )

    def __hash__(self) -> int:
        return hash((self.path, self.kind, self.expected, self.found))


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
    """What happened, in one line (written where it happened, from `error`'s parts)."""
    error: DecodeError
    """What was wrong with it: the failure that made a salvaged value be dropped, or (for
    an unknown variant) a failure of kind `unknown-variant` naming the tag."""
    kind: WarningKind = WarningKind.SALVAGED
    """What happened to the value."""


class Decoded(msgspec.Struct, Generic[T], frozen=True):
    """A decoded value with the warnings lenient decoding produced (empty for a clean message)."""

    value: T
    warnings: list[DecodeWarning] = msgspec.field(default_factory=list)
