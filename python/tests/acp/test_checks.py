"""The ACP rules as generated code (`CHECKS` in each roles module) against the rule rows
read over JSON.

`Oracle` below is the interpreter of the rule rows (`MethodInfo.gate`, `.values`,
`.session_gate`) that the runtime used before the rules were generated as code, kept here
as the specification: it walks the handling side's `initialize` message and the params as
parsed JSON. For every surface, every method with a capability rule, many `initialize`
messages (capabilities on and off in many combinations) and params of every kind the
value gates read (unknown kinds too), the generated code over the decoded, typed values
must refuse exactly what the interpreter refuses over the same values as JSON, and the
rendered answers must be the same bytes; so must the local errors of outgoing calls. The
announcements of opening answers and the sessions messages name are held to the JSON the
same way.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import msgspec
import pytest

from agentproto.acp import v1, v1_unstable, v2, v2_unstable
from agentproto.acp.errors import CapabilityNotAdvertised, NotAnnounced
from agentproto.acp.refusal import CapabilityNotAdvertised as CapabilityNotAdvertisedRefusal
from agentproto.acp.refusal import (
    ChoiceNotAdvertised,
    MethodChecks,
    Refusal,
    ValueNotAdvertised,
    refusal_error,
    refusal_failure,
)
from agentproto.acp.refusal import NotAnnounced as NotAnnouncedRefusal
from agentproto.acp.rules import Gate, MethodInfo, ValueGate
from agentproto.codec import DecodeError, encode
from agentproto.jsonrpc import ErrorObject
from agentproto.jsonrpc.error import ErrorCode

SURFACES = [v1, v1_unstable, v2, v2_unstable]
IDS = ["v1", "v1_unstable", "v2", "v2_unstable"]


# -- the interpreter of the rule rows, over JSON ------------------------------------------


class Oracle:
    """The rule rows read over parsed JSON, as the runtime did before the rules were code."""

    @staticmethod
    def advertised(init: Any, path: tuple[str, ...]) -> bool:
        node = init
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        return node is True or isinstance(node, dict)

    @staticmethod
    def chosen(params: Any, member: str) -> str | None:
        value = params.get(member) if isinstance(params, dict) else None
        return value if isinstance(value, str) else None

    @classmethod
    def gate_open(cls, gate: Gate, init: Any, params: Any) -> bool:
        node = init
        for segment in gate.path:
            key = segment
            if segment.startswith("{") and segment.endswith("}"):
                chosen = cls.chosen(params, segment[1:-1])
                if chosen is None:
                    return True
                key = chosen
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        if gate.test == "non-empty":
            return isinstance(node, list) and len(node) > 0
        return node is True or isinstance(node, dict)

    @classmethod
    def describe(cls, gate: Gate, params: Any) -> str:
        parts = []
        for segment in gate.path:
            if segment.startswith("{") and segment.endswith("}"):
                chosen = cls.chosen(params, segment[1:-1])
                parts.append(chosen if chosen is not None else f"<{segment[1:-1]}>")
            else:
                parts.append(segment)
        return ".".join(parts)

    @classmethod
    def gate_error(cls, gate: Gate, method: str, params: Any) -> ErrorObject:
        capability = cls.describe(gate, params)
        wanted = f"`{capability}`" if gate.test == "advertised" else f"a non-empty `{capability}`"
        chooser = next((s[1:-1] for s in gate.path if s.startswith("{") and s.endswith("}")), None)
        if chooser is not None and gate.refusal == ErrorCode.INVALID_PARAMS:
            value = cls.chosen(params, chooser) or ""
            error = ErrorObject.invalid_params(f"$.params.{chooser}", f"a {chooser} this side advertised", value)
            error.message = f"invalid params: {chooser} `{value}` needs {wanted}, which this side did not advertise"
            return error
        data = b'{"method":' + msgspec.json.encode(method) + b',"capability":' + msgspec.json.encode(capability) + b"}"
        message = f"method not found: `{method}` needs {wanted}, which this side did not advertise"
        return ErrorObject(code=gate.refusal, message=message, data=msgspec.Raw(data))

    @classmethod
    def refused(cls, gate: ValueGate, init: Any, params: Any) -> tuple[str, str, str | None] | None:
        items = params.get(gate.member) if isinstance(params, dict) else None
        if not isinstance(items, list):
            return None
        for index, item in enumerate(items):
            tag = item.get(gate.tag) if isinstance(item, dict) else None
            tag = tag if isinstance(tag, str) else ""
            if tag in gate.baseline:
                continue
            path = next((p for t, p in gate.gated if t == tag), None)
            if path is not None and cls.advertised(init, path):
                continue
            return f"$.params.{gate.member}[{index}]", tag, None if path is None else ".".join(path)
        return None

    @classmethod
    def accepted(cls, row: MethodInfo, init: Any) -> list[str]:
        return [tag for g in row.values for tag in [*g.baseline, *(t for t, p in g.gated if cls.advertised(init, p))]]

    @staticmethod
    def refused_error(path: str, tag: str, capability: str | None, accepted: list[str]) -> ErrorObject:
        shown = tag or "(untagged)"
        if capability is not None:
            reason = f"`{shown}` needs `{capability}`, which this side did not advertise"
        else:
            reason = f"`{shown}` is not a kind this side can have advertised"
        error = ErrorObject.invalid_params(path, f"one of the advertised kinds ({', '.join(accepted)})", shown)
        error.message = f"invalid params: {path}: {reason}"
        return error

    @classmethod
    def incoming(cls, row: MethodInfo, init: Any, params: Any) -> ErrorObject | None:
        """What the agent or client answered a request the rules refuse."""
        if row.gate is not None and not cls.gate_open(row.gate, init, params):
            return cls.gate_error(row.gate, row.name, params)
        for gate in row.values:
            refused = cls.refused(gate, init, params)
            if refused is not None:
                return cls.refused_error(*refused, cls.accepted(row, init))
        return None

    @classmethod
    def outgoing(cls, row: MethodInfo, init: Any, params: Any) -> str | None:
        """The local error of a call the rules stop (its text), or `None`."""
        if row.gate is not None and not cls.gate_open(row.gate, init, params):
            return str(CapabilityNotAdvertised(row.name, cls.describe(row.gate, params)))
        for gate in row.values:
            refused = cls.refused(gate, init, params)
            if refused is not None:
                return None if refused[2] is None else str(CapabilityNotAdvertised(row.name, refused[2]))
        return None


# -- inputs --------------------------------------------------------------------------------


def as_json(value: Any) -> Any:
    return json.loads(encode(value))


def decode(surface: ModuleType, type_name: str, value: Any) -> Any | None:
    """`value` decoded as `type_name` of the surface; `None` when it is not one."""
    try:
        return surface.SURFACE.decode(type_name, json.dumps(value).encode(), "$").value
    except DecodeError:
        return None


def init_types(surface: ModuleType) -> dict[str, str]:
    row = next(m for m in surface.METHODS if m.name == "initialize")
    return {"agent": row.result, "client": row.params}


def base_init(surface: ModuleType, side: str) -> dict[str, Any]:
    init: dict[str, Any] = {"protocolVersion": surface.PROTOCOL_VERSION}
    if decode(surface, init_types(surface)[side], init) is None:
        init["info"] = {"name": "test", "version": "1"}  # v2 names both sides
    return init


# Candidate values of a capability: the first that survives decoding is the one used.
ADVERTISED = [True, {}]
NON_EMPTY = [["m"], [{"type": "agent", "methodId": "m", "name": "M"}], [{"id": "m", "name": "M"}]]


def with_path(init: dict[str, Any], path: tuple[str, ...], leaf: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(init))
    node = out
    for key in path[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return out
    node[path[-1]] = leaf
    return out


def capability_paths(surface: ModuleType, side: str) -> list[tuple[tuple[str, ...], str]]:
    """Every capability path the rules of `side`'s requests read, with its test."""
    paths: list[tuple[tuple[str, ...], str]] = []
    for row in surface.METHODS:
        if row.kind != "request" or row.side != side:
            continue
        found: list[tuple[tuple[str, ...], str]] = []
        if row.gate is not None:
            if row.gate.path[-1].startswith("{"):
                prefix = row.gate.path[:-1]
                found += [((*prefix, v), "advertised") for v in ("form", "url")]
            else:
                found.append((row.gate.path, row.gate.test))
        for gate in row.values:
            found += [(p, "advertised") for _, p in gate.gated]
        paths += [p for p in found if p not in paths]
    return paths


def leaf(surface: ModuleType, side: str, path: tuple[str, ...], test: str) -> Any:
    """A value at `path` that advertises the capability once decoded."""
    base = base_init(surface, side)
    for candidate in NON_EMPTY if test == "non-empty" else ADVERTISED:
        typed = decode(surface, init_types(surface)[side], with_path(base, path, candidate))
        if typed is None:
            continue
        node: Any = as_json(typed)
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if (test == "non-empty" and isinstance(node, list) and node) or node is True or isinstance(node, dict):
            return candidate
    raise AssertionError(f"no value advertises {'.'.join(path)}")


def init_messages(surface: ModuleType, side: str) -> Iterator[Any]:
    """The handling side's typed `initialize` message with the rules' capabilities in many
    combinations: none, all, each alone, all but each, and random subsets."""
    paths = capability_paths(surface, side)
    leaves = {p: leaf(surface, side, p, t) for p, t in paths}
    chosen = [set(), set(leaves)] + [{p} for p in leaves] + [set(leaves) - {p} for p in leaves]
    rng = random.Random(29)
    chosen += [{p for p in leaves if rng.random() < 0.5} for _ in range(24)]
    for subset in chosen:
        init = base_init(surface, side)
        for path in subset:
            init = with_path(init, path, leaves[path])
        typed = decode(surface, init_types(surface)[side], init)
        assert typed is not None, init
        yield typed


ITEMS: dict[str, list[Any]] = {
    "prompt": [
        {"type": "text", "text": "hi"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///a", "name": "a"},
        {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}},
        {"type": "skill", "name": "review"},
        {"type": "video", "data": "x"},
        {"type": "", "text": "x"},
    ],
    "mcpServers": [
        {"name": "s", "command": "/bin/c", "args": [], "env": []},
        {"type": "stdio", "name": "s", "command": "/bin/c", "args": [], "env": []},
        {"type": "http", "name": "h", "url": "http://x", "headers": []},
        {"type": "sse", "name": "h", "url": "http://x", "headers": []},
        {"type": "acp", "name": "a", "serverId": "x"},
        {"type": "ws", "name": "w"},
        {"type": "", "name": "e"},
    ],
}
BASE_PARAMS: dict[str, Any] = {
    "sessionId": "s",
    "cwd": "/",
    "prompt": [],
    "mcpServers": [],
    "path": "/a",
    "content": "x",
    "terminalId": "t",
    "command": "c",
    "title": "t",
    "methodId": "m",
    "providerId": "p",
    "apiType": "openai",
    "baseUrl": "https://x",
}
"""Params members the requests with rules require, besides what a rule reads."""
MODES: list[dict[str, Any]] = [
    {"mode": "form", "message": "m", "sessionId": "s", "requestedSchema": {"type": "object", "properties": {}}},
    {"mode": "url", "message": "m", "sessionId": "s", "url": "https://x", "elicitationId": "e"},
    {"mode": "carrier-pigeon", "message": "m", "sessionId": "s"},
]


def params_of(surface: ModuleType, row: MethodInfo) -> list[Any]:
    """Typed params of `row` for its rules: one per kind of item each value gate reads
    (alone, after an allowed one, before an unknown one), one per `{mode}` choice."""
    candidates: list[dict[str, Any]] = [dict(BASE_PARAMS)]
    if row.gate is not None and row.gate.path[-1].startswith("{"):
        candidates = [dict(m) for m in MODES]
    for gate in row.values:
        items = ITEMS[gate.member]
        lists = (
            [[item] for item in items] + [[items[0], item] for item in items] + [[item, items[-2]] for item in items]
        )
        candidates += [{**BASE_PARAMS, gate.member: listed} for listed in lists]
    decoded = [decode(surface, row.params, c) for c in candidates]
    return [d for d in decoded if d is not None]


def rows_with_rules(surface: ModuleType) -> list[tuple[MethodInfo, MethodChecks[Any, Any, Any]]]:
    out = []
    for row in surface.METHODS:
        if row.kind == "request" and (row.gate is not None or row.values):
            checks = surface.CHECKS.get(row.name)
            assert checks is not None and checks.refusal is not None, row.name
            out.append((row, checks))
    return out


# -- the tests -----------------------------------------------------------------------------


@pytest.mark.parametrize("surface", SURFACES, ids=IDS)
def test_the_generated_checks_refuse_what_the_rule_rows_refuse(surface: ModuleType) -> None:
    inits = {side: list(init_messages(surface, side)) for side in ("agent", "client")}
    compared = refused = 0
    kinds: set[str] = set()
    for row, checks in rows_with_rules(surface):
        all_params = params_of(surface, row)
        assert all_params, f"{row.name}: no params decoded"
        for init in inits[row.side]:
            init_json = as_json(init)
            for params in all_params:
                params_json = as_json(params)
                assert checks.refusal is not None
                refusal = checks.refusal(params, init)
                answer = None if refusal is None else refusal_error(row.name, refusal)
                expected = Oracle.incoming(row, init_json, params_json)
                assert encode(answer) == encode(expected), (row.name, init_json, params_json)
                failure = None if refusal is None else refusal_failure(row.name, refusal)
                assert (None if failure is None else str(failure)) == Oracle.outgoing(row, init_json, params_json)
                if row.values:
                    assert checks.accepted is not None
                    assert checks.accepted(init) == Oracle.accepted(row, init_json)
                compared += 1
                if refusal is not None:
                    refused += 1
                    kinds.add(type(refusal).__name__)
    assert compared > 1000 and 0 < refused < compared
    expected_kinds = {"CapabilityNotAdvertised", "ValueNotAdvertised"}
    if any(r.gate is not None and r.gate.refusal == ErrorCode.INVALID_PARAMS for r, _ in rows_with_rules(surface)):
        expected_kinds.add("ChoiceNotAdvertised")
    assert kinds == expected_kinds


@pytest.mark.parametrize("surface", SURFACES, ids=IDS)
def test_every_value_gate_kind_was_judged_both_ways(surface: ModuleType) -> None:
    """The inputs above reach every tag a value gate lists, refused and let through."""
    inits = {side: list(init_messages(surface, side)) for side in ("agent", "client")}
    for row, checks in rows_with_rules(surface):
        for gate in row.values:
            seen: dict[str, set[bool]] = {}
            for init in inits[row.side]:
                for params in params_of(surface, row):
                    items = as_json(params).get(gate.member) or []
                    if len(items) != 1:
                        continue
                    tag = items[0].get(gate.tag, "")
                    assert checks.refusal is not None
                    # Whether the item got through (a shut gate of the method is not its doing).
                    through = not isinstance(checks.refusal(params, init), ValueNotAdvertised)
                    seen.setdefault(tag, set()).add(through)
            for tag, _ in gate.gated:
                assert seen.get(tag) == {True, False}, (row.name, tag, seen)
            for tag in gate.baseline:
                assert seen.get(tag) == {True}, (row.name, tag, seen)


@pytest.mark.parametrize("surface", SURFACES, ids=IDS)
def test_announcements_and_sessions_are_read_from_the_typed_values(surface: ModuleType) -> None:
    announced = 0
    for row in surface.METHODS:
        checks = surface.CHECKS.get(row.name)
        if checks is None:
            continue
        members = tuple(
            r.session_gate.member
            for r in surface.METHODS
            if r.session_gate is not None and row.name in r.session_gate.opened_by and r.side == row.side
        )
        assert (checks.announced is not None) == bool(members) or row.kind != "request", row.name
        if checks.announced is not None and row.result is not None:
            for modes in (None, {"currentModeId": "m", "availableModes": [{"id": "m", "name": "M"}]}, "absent"):
                result: dict[str, Any] = {"sessionId": "s1"}
                if modes != "absent":
                    result["modes"] = modes
                typed = decode(surface, row.result, result)
                assert typed is not None, (row.name, result)
                expected = frozenset(m for m in members if isinstance(result.get(m), dict))
                assert checks.announced(typed) == expected
                announced += 1
        if checks.created is not None and row.result is not None:
            typed = decode(surface, row.result, {"sessionId": "s1"})
            assert typed is not None and checks.created(typed) == "s1"
        if checks.session is not None:
            sample = decode(surface, row.params, {**BASE_PARAMS, **(MODES[0] if "elicitation" in row.name else {})})
            if sample is not None:
                assert checks.session(sample) == "s"
    assert announced > 0 or surface in (v2, v2_unstable)


def test_the_renderings_keep_their_wording() -> None:
    """The four refusals as answers and as local errors, byte for byte as before."""
    gate = refusal_error("session/load", CapabilityNotAdvertisedRefusal("agentCapabilities.loadSession"))
    assert encode(gate) == (
        b'{"code":-32601,"message":"method not found: `session/load` needs `agentCapabilities.loadSession`,'
        b' which this side did not advertise","data":{"method":"session/load","capability":"agentCapabilities.loadSession"}}'
    )
    empty = refusal_error("auth/login", CapabilityNotAdvertisedRefusal("authMethods", "non-empty"))
    assert (
        empty.message
        == "method not found: `auth/login` needs a non-empty `authMethods`, which this side did not advertise"
    )
    choice = refusal_error(
        "elicitation/create", ChoiceNotAdvertised("mode", "url", "clientCapabilities.elicitation.url")
    )
    assert choice.message == (
        "invalid params: mode `url` needs `clientCapabilities.elicitation.url`, which this side did not advertise"
    )
    assert as_json(choice.data) == {"path": "$.params.mode", "expected": "a mode this side advertised", "found": "url"}
    value = refusal_error("session/prompt", ValueNotAdvertised("$.params.prompt[1]", "", None, ["text"]))
    assert (
        value.message == "invalid params: $.params.prompt[1]: `(untagged)` is not a kind this side can have advertised"
    )
    unannounced = refusal_error("session/set_mode", NotAnnouncedRefusal("modes", "s1"))
    assert unannounced.message == (
        "invalid params: `session/set_mode` needs `modes`, which the answer that opened session `s1` did not announce"
    )
    assert as_json(unannounced.data) == {
        "path": "$.params.sessionId",
        "expected": "a session whose opening answer announced `modes`",
        "found": "s1",
    }
    failure = refusal_failure("session/set_mode", NotAnnouncedRefusal("modes", "s1"))
    assert isinstance(failure, NotAnnounced) and (failure.session, failure.member) == ("s1", "modes")
    unknown: Refusal = ValueNotAdvertised("$.params.prompt[0]", "video", None, ["text"])
    assert refusal_failure("session/prompt", unknown) is None
