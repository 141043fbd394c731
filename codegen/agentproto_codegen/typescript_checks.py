"""Emit the ACP rules of a surface as TypeScript code over its typed values (part of the
roles module, ``ts/src/generated/acp/<surface>.roles.ts``).

For every method with a rule, one exported object ``<handler>Rules`` (a ``MethodChecks``
of ``ts/src/acp/refusal.ts``) holds plain functions:

* ``session(params)``: the session the message names (its required ``sessionId``);
* ``created(result)``: the session a ``created`` answer makes (the result's ``sessionId``);
* ``refusal(params, handshake)``: the capability gate and the value gates, read from the
  handling side's decoded ``initialize`` message (``Handshake``), as a ``Refusal`` value
  or ``null``; the runtime renders it (``refusal.ts``), the code here writes no message;
* ``accepted(handshake)``: the kinds the value gates let through;
* ``announced(result)``: which session-gate members an opening answer carries;
* ``needs``: the member a session-gated request needs its session to have announced.

``CHECKS`` maps each wire name to its object.  A capability path becomes an access
chain over the generated interfaces (``model.field_path``): a member that may be absent
or ``null`` is read with ``?.``, and both mean "not advertised", as the rules say.  A
member with a schema default is filled in by the decoder but may be missing from a value
this side built itself, so every default on a path must advertise nothing (checked here).
"""

from __future__ import annotations

from typing import Any

from .emit import Writer, given, ts_str
from .model import ArrayRef, Field, Gate, Method, PrimRef, Spec, Struct, ValueGate, field_path, resolve
from .rule_shapes import chosen_gate, value_gate_shape
from .names import lower_camel
from .typescript_roles import handler_name, session_scoped

IDENT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$0123456789"


def member(expr: str, wire: str, maybe_absent: bool) -> str:
    """`expr.wire`, `expr?.wire`, or the bracket form for a key that is no identifier."""
    plain = wire and not wire[0].isdigit() and all(c in IDENT for c in wire)
    if plain:
        return f"{expr}{'?.' if maybe_absent else '.'}{wire}"
    return f"{expr}{'?.' if maybe_absent else ''}[{ts_str(wire)}]"


def may_be_absent(f: Field) -> bool:
    """Whether a typed value may lack the member or hold `null` there."""
    return not f.required or f.nullable or f.has_default


def advertises(value: Any, test: str) -> bool:
    """What the interpreter of the rules says of a JSON value at a capability path."""
    if test == "non-empty":
        return isinstance(value, list) and len(value) > 0
    return value is True or isinstance(value, dict)


class Checks:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.decls = spec.decls
        init = next((m for m in spec.methods if m.wire == spec.rules["lifecycle"]["initialize"] and m.kind == "request"), None)
        # A model without `initialize` (a test's) can have no capability rule.
        self.init_params = init.params if init else None
        self.init_result = init.result if init else None

    def root(self, where: str) -> tuple[str, str]:
        """The typed `initialize` message a rule reads, as an expression and its type."""
        if where == "initialize.params":
            return "handshake.client", given(self.init_params, "initialize: params")
        return "handshake.agent", given(self.init_result, "initialize: result")

    def capability(self, where: str, path: list[str], test: str) -> str:
        """A boolean expression: whether the capability at `path` is advertised."""
        root, root_type = self.root(where)
        fields = field_path(self.decls, root_type, path)
        expr, absent = root, False
        for i, f in enumerate(fields):
            expr = member(expr, f.wire, absent)
            absent = absent or may_be_absent(f)
            if f.has_default:
                value: Any = f.default
                for wire in path[i + 1 :]:
                    value = value.get(wire) if isinstance(value, dict) else None
                if advertises(value, test):
                    raise ValueError(f"{root_type}.{'.'.join(path)}: the default of `{f.wire}` advertises it")
        last = fields[-1]
        target = resolve(self.decls, last.type)
        if test == "non-empty":
            if not isinstance(last.type, ArrayRef):
                raise ValueError(f"{root_type}.{'.'.join(path)}: `non-empty` needs a list")
            return f"({expr}?.length ?? 0) > 0" if absent else f"{expr}.length > 0"
        if isinstance(last.type, PrimRef) and last.type.prim == "bool":
            return f"{expr} === true"
        if isinstance(target, Struct):
            if not absent:
                raise ValueError(f"{root_type}.{'.'.join(path)}: an object capability that is always there")
            return f"{expr} != null"
        raise ValueError(f"{root_type}.{'.'.join(path)}: a capability must be a boolean or an object")

    def refused(self, where: str, path: list[str], test: str) -> str:
        """The negation of `capability`: a boolean expression, true when it is not advertised."""
        cond = self.capability(where, path, test)
        for yes, no in ((" === true", " !== true"), (" != null", " == null"), (" > 0", " <= 0")):
            if cond.endswith(yes):
                return cond[: -len(yes)] + no
        return f"!({cond})"

    def gate(self, out: Writer, m: Method, g: Gate) -> None:
        test = ts_str(g.test)
        _, root_type = self.root(g.where)
        chosen = chosen_gate(self.decls, m, root_type)
        if chosen is None:
            cond = self.refused(g.where, g.path, g.test)
            with out.block(f"if ({cond}) {{"):
                out.line(f'return {{ kind: "CapabilityNotAdvertised", capability: {ts_str(".".join(g.path))}, test: {test} }};')
            return
        name, prefix, u, known = chosen.member, chosen.prefix, chosen.union, chosen.listed
        dotted = ".".join(prefix)
        choice = f'{{ kind: "ChoiceNotAdvertised", member: {ts_str(name)}, value: %s, capability: %s }}'
        out.line("const variant = params.variant;")
        # An unknown value cannot have been advertised; a missing one is left to validation.
        out.line("if (variant instanceof UnknownVariant) {")
        value = "variant.variantTag"
        with out.indent():
            out.line(f"if ({value} !== null) return {choice % (value, ts_str(dotted + '.') + ' + ' + value)};")
        out.line("} else {")
        with out.indent():
            with out.block(f"switch ({member('variant', name, False)}) {{"):
                for v in u.variants:
                    tag = given(v.tag, f"{u.name}.{v.name}: a chosen capability needs tagged variants")
                    refuse = f"return {choice % (ts_str(tag), ts_str(dotted + '.' + tag))};"
                    out.line(f"case {ts_str(tag)}:")
                    with out.indent():
                        if tag in known:
                            out.line(f"if ({self.refused(g.where, prefix + [tag], g.test)}) {refuse}")
                            out.line("break;")
                        else:
                            out.line(refuse)
        out.line("}")

    # -- value gates ------------------------------------------------------------------

    def value_gate(self, out: Writer, m: Method, v: ValueGate, accepted: str) -> None:
        f, u = value_gate_shape(self.decls, m, v)
        items = member("params", v.member, False)
        if may_be_absent(f):
            items = f"{items} ?? []"
        path = f"`$.params.{v.member}[${{index}}]`"

        def refused(tag: str, capability: str) -> str:
            return f'return {{ kind: "ValueNotAdvertised", path: {path}, tag: {tag}, capability: {capability}, accepted: {accepted} }};'

        out.line(f"const {ident(v.member)} = {items};")
        with out.block(f"for (let index = 0; index < {ident(v.member)}.length; index++) {{"):
            out.line(f"const item = {ident(v.member)}[index]!;")
            with out.block("if (item instanceof UnknownVariant) {"):
                if "" in v.baseline:
                    out.line("if (item.variantTag === null) continue;")
                out.line(refused("item.variantTag" if "" in v.baseline else 'item.variantTag ?? ""', "null"))
            with out.block(f"switch ({member('item', v.tag, False)}) {{"):
                for variant in u.variants:
                    tag = variant.tag or ""
                    out.line(f"case {'undefined' if variant.tag is None else ts_str(tag)}:")
                    with out.indent():
                        if tag in v.baseline:
                            out.line("continue;")
                        elif tag in v.gated:
                            cond = self.capability(v.where, v.gated[tag], "advertised")
                            out.line(f"if ({cond}) continue;")
                            out.line(refused(ts_str(tag), ts_str(".".join(v.gated[tag]))))
                        else:
                            out.line(refused(ts_str(tag), "null"))

    def accepted(self, out: Writer, m: Method) -> None:
        kinds = [t for v in m.values for t in v.baseline]
        out.line(f"const kinds: string[] = [{', '.join(ts_str(t) for t in kinds)}];")
        for v in m.values:
            for tag, path in v.gated.items():
                out.line(f"if ({self.capability(v.where, path, 'advertised')}) kinds.push({ts_str(tag)});")
        out.line("return kinds;")

    # -- sessions -----------------------------------------------------------------------

    def announced_members(self, m: Method) -> list[str]:
        members: list[str] = []
        for x in self.spec.methods:
            g = x.session_gate
            if g is not None and x.side == m.side and m.wire in g.opened_by and g.member not in members:
                members.append(g.member)
        return members

    def emit(self, out: Writer) -> None:
        scoped = set(session_scoped(self.spec))
        names: dict[str, Method] = {}
        entries: list[tuple[str, str]] = []
        for m in self.spec.methods:
            if m.side not in ("agent", "client"):
                continue
            has_session = m.params in scoped
            created = m.session is not None and m.session.effect == "created"
            announced = self.announced_members(m) if m.kind == "request" else []
            rules = m.kind == "request" and (m.gate is not None or m.values or m.session_gate is not None)
            if not (has_session or created or announced or rules):
                continue
            if m.wire in names:
                raise ValueError(f"`{m.wire}` has rules on both sides")
            names[m.wire] = m
            name = f"{handler_name(m)}Rules"
            entries.append((m.wire, name))
            params = f"T.{given(m.params, m.wire)}"
            result = f"T.{m.result}" if m.result else "never"
            out.line()
            out.line(f"/** The rules of `{m.wire}` as code over its typed params and result. */")
            with out.block(f"export const {name}: MethodChecks<{params}, {result}, Handshake> = {{", "};"):
                if has_session:
                    with out.block(f"session(params: {params}): string {{", "},"):
                        out.line("return params.sessionId;")
                if created:
                    d = self.decls.get(m.result or "")
                    f = next((x for x in d.fields if x.wire == "sessionId"), None) if isinstance(d, Struct) else None
                    if f is None or may_be_absent(f):
                        raise ValueError(f"{m.wire}: a `created` answer needs a required `sessionId`")
                    with out.block(f"created(result: {result}): string {{", "},"):
                        out.line("return result.sessionId;")
                if m.kind == "request" and (m.gate is not None or m.values):
                    with out.block(f"refusal(params: {params}, handshake: Handshake): Refusal | null {{", "},"):
                        if m.gate is not None:
                            self.gate(out, m, m.gate)
                        accepted = f"{name}.accepted!(handshake)"
                        for v in m.values:
                            self.value_gate(out, m, v, accepted)
                        out.line("return null;")
                if m.values:
                    with out.block("accepted(handshake: Handshake): string[] {", "},"):
                        self.accepted(out, m)
                if announced:
                    d = self.decls.get(given(m.result, m.wire))
                    with out.block(f"announced(result: {result}): string[] {{", "},"):
                        out.line("const members: string[] = [];")
                        for wire in announced:
                            f = next((x for x in d.fields if x.wire == wire), None) if isinstance(d, Struct) else None
                            if f is None or not isinstance(resolve(self.decls, f.type), Struct) or not may_be_absent(f):
                                raise ValueError(f"{m.wire}: `{wire}` is not an optional object of the result")
                            out.line(f"if ({member('result', wire, False)} != null) members.push({ts_str(wire)});")
                        out.line("return members;")
                if m.kind == "request" and m.session_gate is not None:
                    if not has_session:
                        raise ValueError(f"{m.wire}: a session gate on a request without a session")
                    out.line(f"needs: {ts_str(m.session_gate.member)},")
        out.line()
        out.line("/** Every method's rules as code, by wire name (what the runtime checks with). */")
        with out.block("export const CHECKS: ReadonlyMap<string, MethodChecks> = new Map<string, MethodChecks>([", "]);"):
            for wire, name in entries:
                out.line(f"[{ts_str(wire)}, {name}],")


def ident(wire: str) -> str:
    return lower_camel(wire) or "items"


def emit_checks(spec: Spec, out: Writer) -> None:
    """The `Handshake` type, one `<handler>Rules` object per method with rules, and `CHECKS`."""
    c = Checks(spec)
    out.line()
    out.line("/** Both sides' `initialize` messages, decoded: the client's params and the agent's answer. */")
    with out.block("export interface Handshake {"):
        out.line(f"readonly client: {'T.' + c.init_params if c.init_params else 'unknown'};")
        out.line(f"readonly agent: {'T.' + c.init_result if c.init_result else 'unknown'};")
    c.emit(out)
