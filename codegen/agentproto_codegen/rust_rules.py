"""Rust spellings of the model's protocol rules: the rule fields of each
``MethodInfo`` row and a surface's ``SurfaceRules`` (types in
``crates/acp/src/rules.rs``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .emit import rust_str as _str
from .model import Field, Gate, Method, PrimRef, SessionGate, SessionRule, Spec, Struct, ValueGate, field_path
from .rule_shapes import ChosenGate, chosen_gate, value_gate_shape

if TYPE_CHECKING:
    from .rust import Emitter


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


# ---------------------------------------------------------------------------
# The rules as code over the typed values (no runtime walks a path by name): the
# bodies of each method marker's `RequestMethod` rule functions.


def _access(e: "Emitter", root_type: str, root: str, wires: list[str]) -> tuple[str, bool, Field]:
    """An expression reaching the last field of `wires` from the place `root` (a
    `root_type`): a place while every step is always there, else an `Option<&T>`
    (second item true); and that field."""
    fields = field_path(e.decls, root_type, wires)
    expr, optional = root, False
    for f in fields:
        name = e.field_name(f.wire)
        kind = e.field_type(f)
        getter = ".value()" if kind.startswith("MaybeUndefined<") else ".as_ref()" if kind.startswith("Option<") else None
        if optional:
            expr += f".and_then(|x| x.{name}{getter})" if getter else f".map(|x| &x.{name})"
        else:
            expr += f".{name}{getter or ''}"
            optional = getter is not None
    return expr, optional, fields[-1]


def capability_test(e: "Emitter", root_type: str, root: str, wires: list[str], test: str) -> str:
    """A `bool` expression: whether the capability at `wires` is advertised (`true` or an
    object) or, for `non-empty`, a list with an item."""
    expr, optional, last = _access(e, root_type, root, wires)
    is_bool = isinstance(last.type, PrimRef) and last.type.prim == "bool"
    if test == "non-empty":
        return f"{expr}.is_some_and(|v| !v.is_empty())" if optional else f"!{expr}.is_empty()"
    if is_bool:
        return f"{expr}.is_some_and(|v| *v)" if optional else expr
    if not optional:
        # A defaulted object is always there, so it could not tell absent from advertised.
        raise ValueError(f"{root_type}.{'.'.join(wires)}: an object capability must be optional")
    return f"{expr}.is_some()"


def _handshake(where: str) -> tuple[str, str]:
    """The side of the typed handshake a gate reads, and which message it is."""
    return ("hs.client", "client") if where == "initialize.params" else ("hs.agent", "agent")


def init_types(spec: Spec) -> tuple[str, str]:
    init = next(m for m in spec.methods if m.wire == "initialize" and m.kind == "request")
    return init.params or "", init.result or ""


def refusal_body(e: "Emitter", m: Method) -> list[str]:
    """Statements of `fn refusal(params, hs)`: the gate, then the value gates."""
    params_type, result_type = init_types(e.spec)
    lines: list[str] = []
    g = m.gate
    if g is not None:
        root, which = _handshake(g.where)
        root_type = params_type if which == "client" else result_type
        test = "NonEmpty" if g.test == "non-empty" else "Advertised"
        chosen = chosen_gate(e.decls, m, root_type)
        if chosen is None:
            cond = capability_test(e, root_type, root, g.path, g.test)
            lines += [
                f"if !{cond} {{",
                f"    return Some(crate::rules::Refusal::CapabilityNotAdvertised {{ capability: {_str('.'.join(g.path))}.into(), test: crate::rules::GateTest::{test} }});",
                "}",
            ]
        else:
            lines += _choice_gate(e, g, chosen, root, root_type)
    for v in m.values:
        lines += _value_gate(e, m, v)
    lines.append("let _ = (params, hs);")
    lines.append("None")
    return lines


def _choice_gate(e: "Emitter", g: Gate, chosen: ChosenGate, root: str, root_type: str) -> list[str]:
    """A gate whose last segment is chosen by the params' tag (`{mode}`): one arm per variant."""
    member, prefix, union = chosen.member, chosen.prefix, chosen.union
    lines = ["let (value, open): (std::borrow::Cow<'_, str>, bool) = match &params.variant {"]
    for v in union.variants:
        if v.tag is None:
            continue
        cond = capability_test(e, root_type, root, prefix + [v.tag], g.test)
        lines.append(f"    super::{union.name}::{v.name}(_) => ({_str(v.tag)}.into(), {cond}),")
    # An unknown mode cannot have been advertised; a missing one is the params' problem.
    lines.append(f"    super::{union.name}::Unknown(raw) => match raw.string_member({_str(member)}) {{ Some(mode) => (mode.into(), false), None => return None }},")
    lines.append("};")
    lines += [
        "if !open {",
        f"    let capability = format!(\"{'.'.join(prefix)}.{{value}}\");",
        f"    return Some(crate::rules::Refusal::ChoiceNotAdvertised {{ member: {_str(member)}, value: value.into_owned(), capability }});",
        "}",
    ]
    return lines


def _value_gate(e: "Emitter", m: Method, v: ValueGate) -> list[str]:
    """The first item of the params list the value gate refuses, with the kinds accepted."""
    params_type, result_type = init_types(e.spec)
    root, which = _handshake(v.where)
    root_type = params_type if which == "client" else result_type
    member, union = value_gate_shape(e.decls, m, v)
    by_tag = {(x.tag or ""): x for x in union.variants}
    items = f"params.{e.field_name(v.member)}"
    kind = e.field_type(member)
    if kind.startswith("MaybeUndefined<"):
        items += ".value().into_iter().flatten()"
    elif kind.startswith("Option<"):
        items += ".iter().flatten()"
    else:
        items += ".iter()"
    lines = [f"for (index, item) in {items}.enumerate() {{"]
    lines.append("    let refused: Option<(std::borrow::Cow<'_, str>, Option<&'static str>)> = match item {")
    for tag in v.baseline:
        lines.append(f"        super::{union.name}::{by_tag[tag].name}(_) => None,")
    for tag, path in v.gated.items():
        cond = capability_test(e, root_type, root, path, "advertised")
        lines.append(f"        super::{union.name}::{by_tag[tag].name}(_) => (!{cond}).then(|| ({_str(tag)}.into(), Some({_str('.'.join(path))}))),")
    lines.append(f"        super::{union.name}::Unknown(raw) => Some((raw.string_member({_str(v.tag)}).unwrap_or_default().into(), None)),")
    lines.append("    };")
    lines += [
        "    if let Some((tag, capability)) = refused {",
        f"        let path = format!(\"$.params.{v.member}[{{index}}]\");",
        "        return Some(crate::rules::Refusal::ValueNotAdvertised { path, tag: tag.into_owned(), capability, accepted: Self::accepted(hs) });",
        "    }",
        "}",
    ]
    return lines


def accepted_body(e: "Emitter", m: Method) -> list[str]:
    """Statements of the kinds every value gate of `m` accepts, in the rules' order."""
    params_type, result_type = init_types(e.spec)
    lines = ["let mut kinds: Vec<&'static str> = Vec::new();"]
    for v in m.values:
        root, which = _handshake(v.where)
        root_type = params_type if which == "client" else result_type
        if v.baseline:
            lines.append(f"kinds.extend([{', '.join(_str(t) for t in v.baseline)}]);")
        for tag, path in v.gated.items():
            lines.append(f"if {capability_test(e, root_type, root, path, 'advertised')} {{ kinds.push({_str(tag)}); }}")
    lines.append("kinds")
    return lines


def announced_body(e: "Emitter", m: Method) -> list[str] | None:
    """Statements of `fn announced(result)`: the members of the session gates `m` opens
    sessions for that the typed result holds; `None` when `m` opens none."""
    members = []
    for x in e.spec.methods:
        g = x.session_gate
        if g is not None and x.side == m.side and m.wire in g.opened_by and g.member not in members:
            members.append(g.member)
    if not members:
        return None
    d = e.decls[m.result or ""]
    assert isinstance(d, Struct)
    lines = ["let mut members: Vec<&'static str> = Vec::new();"]
    for member in members:
        cond = capability_test(e, d.name, "result", [member], "advertised")
        lines.append(f"if {cond} {{ members.push({_str(member)}); }}")
    lines.append("members")
    return lines
