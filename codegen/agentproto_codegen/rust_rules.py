"""Rust spellings of the model's protocol rules: the rule fields of each
``MethodInfo`` row and a surface's ``SurfaceRules`` (types in
``crates/acp/src/rules.rs``)."""

from __future__ import annotations

import re

from .emit import rust_str as _str
from .model import Gate, Method, SessionGate, SessionRule, Spec, ValueGate


def _bool(b: bool) -> str:
    return "true" if b else "false"


def gate_expr(g: Gate | None) -> str:
    if g is None:
        return "None"
    segments = []
    for seg in g.path:
        member = re.fullmatch(r"\{([A-Za-z_]+)\}", seg)
        segments.append(f"crate::rules::Segment::Param({_str(member.group(1))})" if member else f"crate::rules::Segment::Key({_str(seg)})")
    init = "Params" if g.where == "initialize.params" else "Result"
    test = {"advertised": "Advertised", "non-empty": "NonEmpty"}[g.test]
    return (
        f"Some(crate::rules::Gate {{ init: crate::rules::InitMessage::{init}, path: &[{', '.join(segments)}], "
        f"test: crate::rules::GateTest::{test}, refusal: agentproto_jsonrpc::ErrorCode({g.refusal}) }})"
    )


def _init(where: str) -> str:
    return "crate::rules::InitMessage::" + ("Params" if where == "initialize.params" else "Result")


def _keys(path: list[str]) -> str:
    return "&[" + ", ".join(_str(seg) for seg in path) + "]"


def value_gate_expr(g: ValueGate) -> str:
    gated = ", ".join(f"({_str(tag)}, {_keys(path)})" for tag, path in g.gated.items())
    return (
        f"crate::rules::ValueGate {{ member: {_str(g.member)}, tag: {_str(g.tag)}, init: {_init(g.where)}, "
        f"baseline: &[{', '.join(_str(t) for t in g.baseline)}], gated: &[{gated}] }}"
    )


def session_expr(s: SessionRule | None) -> str:
    if s is None:
        return "None"
    effect = {
        None: "None",
        "created": "Some(crate::rules::SessionEffect::CreatedByResult)",
        "opened": "Some(crate::rules::SessionEffect::OpenedByParams)",
        "removed": "Some(crate::rules::SessionEffect::Removed)",
    }[s.effect]
    return f"Some(crate::rules::SessionRule {{ effect: {effect}, unseen_ok: {_bool(s.unseen_ok)} }})"


def session_gate_expr(g: SessionGate | None) -> str:
    if g is None:
        return "None"
    return (
        f"Some(crate::rules::SessionGate {{ member: {_str(g.member)}, "
        f"opened_by: &[{', '.join(_str(w) for w in g.opened_by)}] }})"
    )


def method_rule_fields(m: Method) -> str:
    """The rule fields of a ``MethodInfo`` literal, after its name/kind/side/types."""
    return (
        f"required: {_bool(m.required)}, null_result: {_bool(m.null_result)}, "
        f"gate: {gate_expr(m.gate)}, values: &[{', '.join(value_gate_expr(g) for g in m.values)}], "
        f"session: {session_expr(m.session)}, session_gate: {session_gate_expr(m.session_gate)}"
    )


def surface_rules(spec: Spec) -> list[str]:
    """The ``RULES`` constant of a surface module."""
    caps = spec.rules["capabilities"]
    life = spec.rules["lifecycle"]
    prompt_turn = "None" if life.get("prompt_turn") is None else f"Some({_str(life['prompt_turn'])})"
    return [
        "/// The lifecycle method names and where each side's `initialize` message holds its",
        "/// capabilities (from rules/acp.toml and the schema).",
        "pub const RULES: crate::rules::SurfaceRules = crate::rules::SurfaceRules {",
        f"    agent_capabilities: {_str(caps['agent'])},",
        f"    client_capabilities: {_str(caps['client'])},",
        f"    initialize: {_str(life['initialize'])},",
        f"    cancel_request: {_str(life['cancel_request'])},",
        f"    session_cancel: {_str(life['session_cancel'])},",
        f"    prompt_turn: {prompt_turn},",
        f"    null_request_id: {_bool(spec.rules['envelope']['null_request_id'])},",
        "};",
    ]
