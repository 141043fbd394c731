"""The shapes of the generated operation table (`agentproto.a2a.generated.v1.OPERATIONS`):
each operation's request and result types, its HTTP+JSON rules and query fields."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HttpRule", "OperationInfo", "QueryField"]


@dataclass(frozen=True, slots=True)
class HttpRule:
    """One `google.api.http` binding of an operation."""

    method: str
    """The HTTP verb, lower case (`get`, `post`, `delete`)."""
    path: str
    """The path template; `{name}` stands for the request field `name` (a proto name)."""
    body: bool
    """Whether the whole request message is the body."""


@dataclass(frozen=True, slots=True)
class QueryField:
    """A request field a bodiless HTTP+JSON call carries in the query string."""

    wire: str
    """The field's JSON name (also the query parameter's)."""
    kind: str
    """`string`, `int`, `bool`, `enum` or `timestamp`: how the text is read."""
    repeated: bool


@dataclass(frozen=True, slots=True)
class OperationInfo:
    """One row of the operation table."""

    name: str
    """The proto rpc name, also the JSON-RPC method."""
    request: str
    """The request message's type name."""
    result: str
    """The result's type name (for a streaming operation, the type of each item)."""
    streaming: bool
    http: tuple[HttpRule, ...]
    """The tenant-less rule first."""
    query: tuple[QueryField, ...]
    handler: str
    """The operation's name in snake_case words (handler and typed-call names)."""
