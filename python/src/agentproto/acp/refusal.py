"""What the generated rule code returns, and the one place it is turned into text.

Each surface's roles module (`agentproto.acp.generated.<surface>_roles`) holds `CHECKS`:
for every method a rule of `rules/acp.toml` applies to, a `MethodChecks` of plain
generated functions over the typed params, the typed result and the handling side's
typed `initialize` message. Nothing there walks a path by name or reads JSON. A check
that fails returns a `Refusal`, a value saying what was missing; `refusal_error` makes
it the -32601 / -32602 answer to an incoming request and `refusal_failure` the local
error of a call this side will not send. Their wording is shared with the Rust and
TypeScript SDKs, byte for byte, and lives only here.

The refusal classes share their names with the kinds the other SDKs use; two of them
(`CapabilityNotAdvertised`, `NotAnnounced`) also name local errors in
`agentproto.acp.errors`: import this module by name (`from agentproto.acp import
refusal`) where both are needed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeAlias, TypeVar

import msgspec

from agentproto.acp import errors
from agentproto.jsonrpc.error import ErrorCode, ErrorObject

__all__ = [
    "CapabilityNotAdvertised",
    "ChoiceNotAdvertised",
    "MethodChecks",
    "NotAnnounced",
    "Refusal",
    "ValueNotAdvertised",
    "refusal_error",
    "refusal_failure",
]

_encode = msgspec.json.Encoder().encode

P = TypeVar("P")
R = TypeVar("R")
M = TypeVar("M")  # the handling side's `initialize` message


@dataclass(frozen=True, slots=True)
class CapabilityNotAdvertised:
    """The method needs a capability the handling side did not advertise (-32601)."""

    capability: str
    """Dotted, from the handling side's `initialize` message: `agentCapabilities.loadSession`."""
    test: Literal["advertised", "non-empty"] = "advertised"
    """`advertised`: `true` or an object was needed; `non-empty`: a list with an item."""


@dataclass(frozen=True, slots=True)
class ChoiceNotAdvertised:
    """A params member chose a capability the handling side did not advertise (-32602 at
    `$.params.<member>`): an elicitation `mode`."""

    member: str
    value: str
    """The member's value, e.g. `url`."""
    capability: str


@dataclass(frozen=True, slots=True)
class ValueNotAdvertised:
    """An item of a params list is of a kind the handling side did not advertise (-32602
    at the item)."""

    path: str
    """The item's JSON path, e.g. `$.params.prompt[2]`."""
    tag: str
    """Its tag (`""` for the variant without one)."""
    capability: str | None
    """The capability it needs, dotted; `None` for a kind the schema does not list."""
    accepted: list[str]
    """The kinds the handling side accepts."""


@dataclass(frozen=True, slots=True)
class NotAnnounced:
    """The answer that opened the session did not announce the member the request needs
    (-32602 at `$.params.sessionId`)."""

    member: str
    session: str


Refusal: TypeAlias = CapabilityNotAdvertised | ChoiceNotAdvertised | ValueNotAdvertised | NotAnnounced


@dataclass(frozen=True, slots=True)
class MethodChecks(Generic[P, R, M]):
    """One method's rules as generated code. `P` and `R` are its params and result types,
    `M` the type of the handling side's `initialize` message. A rule the method does not
    have is `None`."""

    session: Callable[[P], str] | None = None
    """The session the message names (its `sessionId`)."""
    created: Callable[[R], str] | None = None
    """The session a successful answer created (the result's `sessionId`)."""
    refusal: Callable[[P, M], Refusal | None] | None = None
    """The capability gate and the value gates, against the handling side's `initialize` message."""
    accepted: Callable[[M], list[str]] | None = None
    """The kinds the value gates accept."""
    announced: Callable[[R], frozenset[str]] | None = None
    """The session-gate members an opening answer announces (e.g. `modes`)."""
    needs: str | None = None
    """The member the answer that opened the request's session must have announced."""
    effect: Literal["created", "opened", "removed"] | None = None
    """How a successful answer changes the sessions: `created` by the result's session,
    `opened` / `removed` by the params' one."""
    unseen_ok: bool = False
    """The request may name a session this connection never saw."""


def _wanted(capability: str, test: str) -> str:
    return f"`{capability}`" if test == "advertised" else f"a non-empty `{capability}`"


def refusal_error(method: str, refusal: Refusal) -> ErrorObject:
    """The answer to an incoming `method` request that `refusal` turns away."""
    if isinstance(refusal, CapabilityNotAdvertised):
        data = b'{"method":' + _encode(method) + b',"capability":' + _encode(refusal.capability) + b"}"
        wanted = _wanted(refusal.capability, refusal.test)
        message = f"method not found: `{method}` needs {wanted}, which this side did not advertise"
        return ErrorObject(code=ErrorCode.METHOD_NOT_FOUND, message=message, data=msgspec.Raw(data))
    if isinstance(refusal, ChoiceNotAdvertised):
        member, value = refusal.member, refusal.value
        error = ErrorObject.invalid_params(f"$.params.{member}", f"a {member} this side advertised", value)
        wanted = _wanted(refusal.capability, "advertised")
        error.message = f"invalid params: {member} `{value}` needs {wanted}, which this side did not advertise"
        return error
    if isinstance(refusal, ValueNotAdvertised):
        shown = refusal.tag or "(untagged)"
        expected = f"one of the advertised kinds ({', '.join(refusal.accepted)})"
        error = ErrorObject.invalid_params(refusal.path, expected, shown)
        if refusal.capability is not None:
            reason = f"`{shown}` needs `{refusal.capability}`, which this side did not advertise"
        else:
            reason = f"`{shown}` is not a kind this side can have advertised"
        error.message = f"invalid params: {refusal.path}: {reason}"
        return error
    member, session = refusal.member, refusal.session
    expected = f"a session whose opening answer announced `{member}`"
    error = ErrorObject.invalid_params("$.params.sessionId", expected, session)
    error.message = (
        f"invalid params: `{method}` needs `{member}`, "
        f"which the answer that opened session `{session}` did not announce"
    )
    return error


def refusal_failure(method: str, refusal: Refusal) -> errors.AcpError | None:
    """The local error of an outgoing `method` call that `refusal` stops before it is sent;
    `None` for an item of a kind the schema does not list (the params' validation, or the
    peer, says what is wrong with it)."""
    if isinstance(refusal, NotAnnounced):
        return errors.NotAnnounced(method, refusal.session, refusal.member)
    if refusal.capability is None:
        return None
    return errors.CapabilityNotAdvertised(method, refusal.capability)
