"""The shapes of the generated method table and protocol-rule rows.

Each generated surface module (`agentproto.acp.v1`, ...) holds `METHODS`, one
`MethodInfo` per method with its rules (capability `Gate`, `ValueGate`s, `SessionRule`,
`SessionGate`, baseline handler, `null` result), and `RULES`, the surface's lifecycle method names and
where each side's capabilities sit. They come from `rules/acp.toml` through the code
generator's model; nothing here is written per method. The few functions that read
them (`Gate.is_open`, `describe`, `refusal_error`, `refused_value`, `announced`) follow
`crates/acp/src/rules.rs`, so both SDKs answer the same way. Capability and params
arguments are parsed JSON (`dict`s); nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from agentproto.jsonrpc.error import ErrorCode, ErrorObject

__all__ = [
    "Gate",
    "MethodInfo",
    "Refused",
    "SessionGate",
    "SessionRule",
    "SurfaceRules",
    "ValueGate",
    "announced",
    "opening_members",
    "refused_value",
]

_encode = msgspec.json.Encoder().encode


def _param_text(params: Any, member: str) -> str | None:
    value = params.get(member) if isinstance(params, dict) else None
    return value if isinstance(value, str) else None


def _advertised(init: Any, path: tuple[str, ...]) -> bool:
    node = init
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return node is True or isinstance(node, dict)


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

    def is_open(self, initialize: Any, params: Any = None) -> bool:
        """Whether the capability is advertised in `initialize` (the handling side's
        `initialize` message as parsed JSON); `params` (parsed) fills `{name}` segments.
        A `{name}` member that is missing or not a string leaves the gate open: the params
        are invalid anyway, and their validation says so."""
        node = initialize
        for segment in self.path:
            key = segment
            if segment.startswith("{") and segment.endswith("}"):
                chosen = _param_text(params, segment[1:-1])
                if chosen is None:
                    return True
                key = chosen
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        if self.test == "non-empty":
            return isinstance(node, list) and len(node) > 0
        return node is True or isinstance(node, dict)

    @property
    def chooses(self) -> bool:
        """Whether a params member chooses the capability (a `{name}` segment)."""
        return any(s.startswith("{") for s in self.path)

    def describe(self, params: Any = None) -> str:
        """The capability as a dotted path, e.g. `agentCapabilities.loadSession`."""
        parts = []
        for segment in self.path:
            if segment.startswith("{") and segment.endswith("}"):
                member = segment[1:-1]
                chosen = _param_text(params, member)
                parts.append(chosen if chosen is not None else f"<{member}>")
            else:
                parts.append(segment)
        return ".".join(parts)

    def refusal_error(self, method: str, params: Any = None) -> ErrorObject:
        """The answer to a request of `method` that arrives although the capability was
        not advertised: -32601 with `{method, capability}` as data, or -32602 at the
        params member that chose the capability."""
        capability = self.describe(params)
        wanted = f"`{capability}`" if self.test == "advertised" else f"a non-empty `{capability}`"
        chooser = next((s[1:-1] for s in self.path if s.startswith("{") and s.endswith("}")), None)
        if chooser is not None and self.refusal == ErrorCode.INVALID_PARAMS:
            value = _param_text(params, chooser) or ""
            error = ErrorObject.invalid_params(f"$.params.{chooser}", f"a {chooser} this side advertised", value)
            error.message = f"invalid params: {chooser} `{value}` needs {wanted}, which this side did not advertise"
            return error
        data = b'{"method":' + _encode(method) + b',"capability":' + _encode(capability) + b"}"
        message = f"method not found: `{method}` needs {wanted}, which this side did not advertise"
        return ErrorObject(code=self.refusal, message=message, data=msgspec.Raw(data))


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

    def refused(self, initialize: Any, params: Any) -> Refused | None:
        """The first item of the params list this gate refuses, given the handling side's
        `initialize` message; `None` when all were advertised (or the params do not have
        the expected shape, which their validation reports)."""
        items = params.get(self.member) if isinstance(params, dict) else None
        if not isinstance(items, list):
            return None
        for index, item in enumerate(items):
            tag = item.get(self.tag) if isinstance(item, dict) else None
            tag = tag if isinstance(tag, str) else ""
            if tag in self.baseline:
                continue
            path = next((p for t, p in self.gated if t == tag), None)
            if path is not None and _advertised(initialize, path):
                continue
            capability = None if path is None else ".".join(path)
            return Refused(f"$.params.{self.member}[{index}]", tag, capability)
        return None

    def accepted(self, initialize: Any) -> list[str]:
        """The tags this gate accepts given the handling side's `initialize` message."""
        return [*self.baseline, *(t for t, p in self.gated if _advertised(initialize, p))]


@dataclass(frozen=True, slots=True)
class Refused:
    """An item a `ValueGate` refuses."""

    path: str
    """Its JSON path, e.g. `$.params.prompt[2]`."""
    tag: str
    """Its tag (`""` when it has none)."""
    capability: str | None
    """The capability it needs, dotted; `None` for a tag the schema does not list."""

    @property
    def reason(self) -> str:
        shown = self.tag or "(untagged)"
        if self.capability is not None:
            return f"`{shown}` needs `{self.capability}`, which this side did not advertise"
        return f"`{shown}` is not a kind this side can have advertised"

    def error(self, accepted: list[str]) -> ErrorObject:
        """The -32602 answer, naming the item's path."""
        expected = f"one of the advertised kinds ({', '.join(accepted)})"
        error = ErrorObject.invalid_params(self.path, expected, self.tag or "(untagged)")
        error.message = f"invalid params: {self.path}: {self.reason}"
        return error


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

    def refusal_error(self, method: str, session: str) -> ErrorObject:
        """The -32602 answer to `method` naming `session`, whose opening answer did not
        announce the member."""
        expected = f"a session whose opening answer announced `{self.member}`"
        error = ErrorObject.invalid_params("$.params.sessionId", expected, session)
        error.message = (
            f"invalid params: `{method}` needs `{self.member}`, "
            f"which the answer that opened session `{session}` did not announce"
        )
        return error


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


def refused_value(row: MethodInfo, initialize: Any, params: Any) -> Refused | None:
    """The first params item a value gate of `row` refuses (see `ValueGate.refused`)."""
    for gate in row.values:
        refused = gate.refused(initialize, params)
        if refused is not None:
            return refused
    return None


def opening_members(methods: Iterable[MethodInfo]) -> dict[str, tuple[str, ...]]:
    """For each request that creates or opens a session, the members its answer may
    announce (the session gates of `methods` that list it); requests of one side only."""
    members: dict[str, list[str]] = {}
    for row in methods:
        gate = row.session_gate
        if gate is None:
            continue
        for opener in gate.opened_by:
            listed = members.setdefault(opener, [])
            if gate.member not in listed:
                listed.append(gate.member)
    return {opener: tuple(listed) for opener, listed in members.items()}


def announced(members: tuple[str, ...], result: Any) -> frozenset[str]:
    """Which of `members` an opening answer announces: those holding an object in
    `result` (the answer's parsed JSON)."""
    if not isinstance(result, dict):
        return frozenset()
    return frozenset(m for m in members if isinstance(result.get(m), dict))
