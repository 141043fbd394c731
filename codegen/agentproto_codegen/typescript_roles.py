"""Emit the TypeScript method table and rule rows of a surface (``METHODS``, ``RULES``,
``PROTOCOL_VERSION``), in the shapes of ``ts/src/acp/rules.ts``.

Every row carries the method's rules from ``rules/acp.toml`` as the model holds them:
the capability gate, the value gates, the session rule, whether it is a baseline
handler and whether a ``null`` result reads as the empty result object.  Handler names
are the model's snake_case words spelled lowerCamelCase (``new_session`` ->
``newSession``).
"""

from __future__ import annotations

from .emit import Writer, given, ts_str
from .model import Method, Spec
from .names import lower_camel


def strings(items: list[str]) -> str:
    return "[" + ", ".join(ts_str(s) for s in items) + "]"


def handler_name(m: Method) -> str:
    return lower_camel(given(m.handler or None, f"{m.wire}: handler name (rules not applied?)"))


def method_row(m: Method) -> list[str]:
    """The members of one `MethodInfo` literal, one per line."""
    rows = [
        f"name: {ts_str(m.wire)},",
        f"kind: {ts_str(m.kind)},",
        f"side: {ts_str(m.side)},",
        f"params: {ts_str(given(m.params, f'{m.wire}: params'))},",
        f"result: {'null' if m.result is None else ts_str(m.result)},",
        f"stability: {ts_str(m.stability)},",
        f"handler: {ts_str(handler_name(m))},",
        f"required: {'true' if m.required else 'false'},",
        f"nullResult: {'true' if m.null_result else 'false'},",
    ]
    if m.gate is None:
        rows.append("gate: null,")
    else:
        g = m.gate
        rows.append(
            f"gate: {{ where: {ts_str(g.where)}, path: {strings(g.path)}, test: {ts_str(g.test)}, refusal: {g.refusal} }},"
        )
    if not m.values:
        rows.append("values: [],")
    else:
        rows.append("values: [")
        for v in m.values:
            gated = ", ".join(f"{ts_str(t)}: {strings(p)}" for t, p in v.gated.items())
            rows.append(
                f"  {{ member: {ts_str(v.member)}, union: {ts_str(v.union)}, tag: {ts_str(v.tag)}, "
                f"where: {ts_str(v.where)}, baseline: {strings(v.baseline)}, gated: {{ {gated} }} }},"
            )
        rows.append("],")
    if m.session is None:
        rows.append("session: null,")
    else:
        effect = "null" if m.session.effect is None else ts_str(m.session.effect)
        rows.append(f"session: {{ effect: {effect}, unseenOk: {'true' if m.session.unseen_ok else 'false'} }},")
    return rows


def emit_methods(spec: Spec, out: Writer) -> None:
    out.line()
    out.line("/** Every method of this surface, with its rules. */")
    with out.block("export const METHODS: readonly MethodInfo[] = [", "];"):
        for m in spec.methods:
            with out.block("{", "},"):
                out.lines(method_row(m))


def emit_rules(spec: Spec, out: Writer) -> None:
    caps = spec.rules["capabilities"]
    life = spec.rules["lifecycle"]
    prompt = life.get("prompt_turn")
    out.line()
    out.line("/** The wire version of this surface (`protocolVersion`). */")
    out.line(f"export const PROTOCOL_VERSION = {int(spec.wire_version)};")
    out.line()
    out.line("/** The lifecycle method names and where each side's `initialize` message holds its capabilities. */")
    with out.block("export const RULES: SurfaceRules = {", "};"):
        out.line(f"agentCapabilities: {ts_str(caps['agent'])},")
        out.line(f"clientCapabilities: {ts_str(caps['client'])},")
        out.line(f"initialize: {ts_str(life['initialize'])},")
        out.line(f"cancelRequest: {ts_str(life['cancel_request'])},")
        out.line(f"sessionCancel: {ts_str(life['session_cancel'])},")
        out.line(f"promptTurn: {'null' if prompt is None else ts_str(prompt)},")
        out.line(f"nullRequestId: {'true' if spec.rules['envelope']['null_request_id'] else 'false'},")
