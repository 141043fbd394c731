"""The shapes of the generated method table and its protocol-rule rows.

Each generated surface module (`agentproto.acp.v1`, ...) holds `METHODS`, one
`MethodInfo` per method with its rules (capability `Gate`, `ValueGate`s, `SessionRule`,
`SessionGate`, baseline handler, `null` result), and `RULES`, the surface's lifecycle
method names and where each side's capabilities sit. They come from `rules/acp.toml`
through the code generator's model and are data for reading (documentation, tools,
tests): the runtime evaluates the same rules with the code generated from them into each
roles module (`CHECKS`, see `agentproto.acp.refusal`), over typed values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Gate", "MethodInfo", "SessionGate", "SessionRule", "SurfaceRules", "ValueGate"]

InitMessage = Literal["initialize.params", "initialize.result"]


@dataclass(frozen=True, slots=True)
class Gate:
    """A capability the handling side must have advertised before the request may be sent.

    `path` walks the handling side's `initialize` message (`where`: the client's params or
    the agent's result); a segment written `{name}` stands for the value of the request's
    top-level `name` member.
    """

    where: InitMessage
    path: tuple[str, ...]
    test: Literal["advertised", "non-empty"] = "advertised"
    """`advertised`: `true` or an object; `non-empty`: a list with an item."""
    refusal: int = -32601
    """The answer to a request that arrives anyway: -32601, or -32602 at the member that chose the capability."""


@dataclass(frozen=True, slots=True)
class ValueGate:
    """Items of a params list that need a capability per variant (prompt content blocks,
    MCP server kinds). A tag in `baseline` is always allowed, one in `gated` needs the
    capability at its path, any other is refused; `""` names the variant without a tag."""

    member: str
    union: str
    tag: str
    where: InitMessage
    baseline: tuple[str, ...]
    gated: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class SessionRule:
    """How a successful call changes the sessions a connection knows."""

    effect: Literal["created", "opened", "removed"] | None
    """`created` by the result's `sessionId`; `opened` / `removed` by the params'."""
    unseen_ok: bool = False
    """The request may name a session this connection never saw."""


@dataclass(frozen=True, slots=True)
class SessionGate:
    """A session-scoped request served only for a session whose opening answer announced
    `member` (v1's `session/set_mode` needs `modes`): the latest answer to one of
    `opened_by` for that session held an object there (absent and `null` announce
    nothing). A request naming a session whose answer did not is refused -32602 at
    `$.params.sessionId`; one naming a session this side saw no opening answer for is
    left to the other checks."""

    member: str
    opened_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """One row of a surface's method table."""

    name: str
    """The wire name, e.g. `session/prompt`."""
    kind: Literal["request", "notification"]
    side: str
    """Who handles it: `agent`, `client`, `protocol` (either), `proxy`."""
    params: str
    """The schema type of its params."""
    result: str | None
    """The schema type of its result (requests only)."""
    stability: Literal["stable", "unstable", "draft"]
    handler: str
    """The snake_case name of its handler and typed call."""
    required: bool = False
    """A baseline handler: every implementation of `side` provides it."""
    null_result: bool = False
    """A `null` result reads as the (all-optional) result object."""
    gate: Gate | None = None
    values: tuple[ValueGate, ...] = ()
    session: SessionRule | None = None
    session_gate: SessionGate | None = None
    """What the answer that opened the named session must have announced."""


@dataclass(frozen=True, slots=True)
class SurfaceRules:
    """The lifecycle method names of a surface and where each side's `initialize`
    message holds its capabilities."""

    agent_capabilities: str
    client_capabilities: str
    initialize: str
    cancel_request: str
    session_cancel: str
    prompt_turn: str | None
    """The request whose response ends a prompt turn (`None` in v2)."""
    null_request_id: bool
    """Whether a request id may be `null` (v1, as JSON-RPC allows; not v2)."""


def reads_as_empty(info: MethodInfo, result: bytes | memoryview | None) -> bool:
    """Rule 10: a `null` result reads as `{}` for a method whose result may be empty
    (`null_result`); for any other method it stays `null`, a wrong type."""
    return info.null_result and result is not None and bytes(result) == b"null"
