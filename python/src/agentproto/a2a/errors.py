"""A2A errors as values, and their wire forms on each binding.

`A2aError` is what a server answers with: a kind (a row of the generated table, which
gives the JSON-RPC code, the HTTP status, the `google.rpc` status and the `ErrorInfo`
reason), a message and `ErrorInfo` metadata (for invalid params: `path`, `kind`,
`expected`, `found`). `PeerError` is the other side of the wire: an error a client read
from a server's answer. Both render to text once, in `__str__`; nothing parses it back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from agentproto.a2a.generated.errors import ROWS, ErrorKind, kind_from_code, kind_from_http_status, kind_from_reason
from agentproto.codec.errors import DecodeError
from agentproto.errors import AgentprotoError

__all__ = ["DOMAIN", "ERROR_INFO", "A2aError", "ErrorKind", "ErrorTable", "PeerError"]

DOMAIN = "a2a-protocol.org"
"""The `ErrorInfo` domain A2A defines."""

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
"""The `@type` of a `google.rpc.ErrorInfo` detail."""


class ErrorTable(enum.Enum):
    """Which revision's HTTP status mapping to answer with."""

    V1_0_1 = 0
    """A2A 1.0.1 (the default)."""
    V1_0_0 = 1
    """A2A 1.0.0: TaskNotCancelable 409, ContentTypeNotSupported 415, InvalidAgentResponse 502."""


@dataclass(slots=True)
class A2aError(AgentprotoError):
    """An error a server answers with. Its wire forms come from the kind's row."""

    kind: ErrorKind
    message: str = ""
    """The human-readable message (the kind's default when empty)."""
    metadata: list[tuple[str, str]] = field(default_factory=list)
    """String pairs for `ErrorInfo.metadata` (`taskId`, `path`, …), in order."""

    def __post_init__(self) -> None:
        if not self.message:
            self.message = ROWS[self.kind].message

    def with_metadata(self, key: str, value: str) -> A2aError:
        """This error with one more `ErrorInfo.metadata` entry."""
        self.metadata.append((key, value))
        return self

    @classmethod
    def invalid_params(cls, e: DecodeError) -> A2aError:
        """Invalid params from a decode error: the path, kind, expected and found travel
        in the metadata, and the message names them."""
        return cls(
            ErrorKind.INVALID_PARAMS,
            f"Invalid parameters at {e.path}: {e.message}",
            [("path", e.path), ("kind", e.kind.value), ("expected", e.expected), ("found", e.found)],
        )

    @property
    def code(self) -> int:
        """The JSON-RPC error code."""
        return ROWS[self.kind].code

    @property
    def reason(self) -> str:
        """The `google.rpc.ErrorInfo` reason."""
        return ROWS[self.kind].reason

    def http_status(self, table: ErrorTable = ErrorTable.V1_0_1) -> int:
        """The HTTP status on the HTTP+JSON binding."""
        return ROWS[self.kind].http[table.value]

    @property
    def rest_status(self) -> str:
        """The `status` of the HTTP+JSON binding's AIP-193 body."""
        return ROWS[self.kind].status

    def error_info(self) -> dict[str, Any]:
        """The `google.rpc.ErrorInfo` detail in ProtoJSON `Any` form."""
        info: dict[str, Any] = {"@type": ERROR_INFO, "reason": self.reason, "domain": DOMAIN}
        if self.metadata:
            info["metadata"] = dict(self.metadata)
        return info

    def jsonrpc_error(self) -> dict[str, Any]:
        """The JSON-RPC error object; `data` is the list of `Any` details."""
        return {"code": self.code, "message": self.message, "data": [self.error_info()]}

    def rest_body(self, table: ErrorTable = ErrorTable.V1_0_1) -> dict[str, Any]:
        """The AIP-193 body of the HTTP+JSON binding."""
        return {
            "error": {
                "code": self.http_status(table),
                "status": self.rest_status,
                "message": self.message,
                "details": [self.error_info()],
            }
        }

    def __str__(self) -> str:
        return f"{self.reason} ({self.code}): {self.message}"


@dataclass(slots=True)
class PeerError(AgentprotoError):
    """An error a server answered a call with, as the client read it: the JSON-RPC error
    object, or the HTTP+JSON status and AIP-193 body. Fields the answer did not carry are
    `None`."""

    code: int | None = None
    """The JSON-RPC code (or the `code` of an AIP-193 body)."""
    message: str = ""
    http_status: int | None = None
    """The HTTP status of an HTTP+JSON answer."""
    status: str | None = None
    """The AIP-193 body's `status` (`NOT_FOUND`, …)."""
    reason: str | None = None
    """The reason of the first `google.rpc.ErrorInfo` detail."""
    metadata: dict[str, str] = field(default_factory=dict)
    """That detail's metadata."""

    @property
    def kind(self) -> ErrorKind | None:
        """The kind the answer names: by reason, else by JSON-RPC code, else guessed from
        the HTTP status; `None` when none of them says."""
        if self.reason is not None and (kind := kind_from_reason(self.reason)) is not None:
            return kind
        if self.http_status is None and self.code is not None:
            return kind_from_code(self.code)
        if self.http_status is not None:
            return kind_from_http_status(self.http_status)
        return None

    def __str__(self) -> str:
        head = self.reason or self.status or "error"
        number = self.code if self.http_status is None else self.http_status
        return (
            f"peer answered {head} ({number}): {self.message}" if self.message else f"peer answered {head} ({number})"
        )


def error_info_of(details: object) -> tuple[str | None, dict[str, str]]:
    """The reason and metadata of the first `ErrorInfo` among `details` (a parsed list)."""
    if not isinstance(details, list):
        return None, {}
    for d in details:
        if isinstance(d, dict) and d.get("@type") == ERROR_INFO and isinstance(d.get("reason"), str):
            meta = d.get("metadata")
            clean = {k: v for k, v in meta.items() if isinstance(v, str)} if isinstance(meta, dict) else {}
            return d["reason"], clean
    return None, {}
