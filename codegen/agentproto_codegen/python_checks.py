"""The ACP rules of a surface as Python code over its typed values, written into the roles
module (``generated/<surface>_roles.py``) by ``python_roles.py``; the Python twin of
``typescript_checks.py``.

For every method a rule applies to, plain functions over the generated classes:

* ``_<handler>_session(params)``: the session the message names (its required ``sessionId``);
* ``_<handler>_created(result)``: the session a ``created`` answer makes;
* ``_<handler>_refusal(params, init)``: the capability gate and the value gates, read from
  the handling side's decoded ``initialize`` message, as a ``Refusal`` value or ``None``
  (``agentproto.acp.refusal`` renders it; nothing here writes a message);
* ``_<handler>_accepted(init)``: the kinds the value gates let through;
* ``_<handler>_announced(result)``: which session-gate members an opening answer carries;

gathered in ``CHECKS`` (wire name -> ``MethodChecks``, with the member a session gate
needs and the session effect). Each capability path becomes one predicate,
``_<side>_has_<path>(init)``, an access chain over the generated classes
(``model.field_path``): a member that may be ``None`` or unset is tested with
``isinstance`` before going on (both mean "not advertised"), a member with a schema default
is always there. A default that would advertise a capability fails generation, since the
rules read a missing member as not advertised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .emit import Writer, given
from .model import ArrayRef, Field, Method, PrimRef, Struct, Union, ValueGate, field_path, resolve
from .rule_shapes import chosen_gate, value_gate_shape
from .names import snake

if TYPE_CHECKING:
    from .python import Emitter

# The names of `agentproto.acp.refusal` the generated code may use.
REFUSAL_NAMES = ("CapabilityNotAdvertised", "ChoiceNotAdvertised", "MethodChecks", "Refusal", "ValueNotAdvertised")


def may_be_absent(f: Field) -> bool:
    """Whether the Python value of `f` may be `None` or `UNSET`."""
    return f.nullable or (not f.required and not f.has_default)


def advertises(value: Any, test: str) -> bool:
    """What the rules say of a JSON value at a capability path."""
    if test == "non-empty":
        return isinstance(value, list) and len(value) > 0
    return value is True or isinstance(value, dict)


def is_string(e: Emitter, t: Any) -> bool:
    t = e.m.target(t)
    return isinstance(t, PrimRef) and t.prim == "string"


def session_field(e: Emitter, type_name: str | None) -> Field | None:
    """The required, non-null `sessionId` string of a struct, if it has one."""
    d = e.decls.get(type_name or "")
    if not isinstance(d, Struct):
        return None
    f = next((x for x in d.fields if x.wire == "sessionId"), None)
    if f is None or not f.required or f.nullable or not is_string(e, f.type):
        return None
    return f


class Checks:
    def __init__(self, e: Emitter) -> None:
        from .python import field_name

        self.e = e
        self.field_name = field_name
        self.decls = e.decls
        spec = e.spec
        init = next((m for m in spec.methods if m.wire == spec.rules["lifecycle"]["initialize"] and m.kind == "request"), None)
        self.init = {"initialize.params": init.params if init else None, "initialize.result": init.result if init else None}
        self.predicates: dict[tuple[str, tuple[str, ...], str], str] = {}
        self.out = Writer()  # the predicates
        self.body = Writer()  # the checks

    # -- capability predicates ----------------------------------------------------------

    def predicate(self, where: str, path: list[str], test: str) -> str:
        """The name of the function telling whether the capability at `path` of the
        `initialize` message `where` is advertised (written on first use)."""
        key = (where, tuple(path), test)
        name = self.predicates.get(key)
        if name is not None:
            return name
        side = "client" if where == "initialize.params" else "agent"
        root = given(self.init[where], f"{where}: the surface has no `initialize`")
        name = f"_{side}_has_{'_'.join(snake(p) for p in path)}" + ("_non_empty" if test == "non-empty" else "")
        if name in self.predicates.values():
            raise ValueError(f"{root}.{'.'.join(path)}: predicate name {name} is taken")
        self.predicates[key] = name
        fields = field_path(self.decls, root, path)
        out = self.out
        out.line()
        out.line()
        out.line(f"def {name}(init: {root}) -> bool:")
        with out.indent():
            message = "params" if where == "initialize.params" else "answer"
            out.line(f'"""Whether `{".".join(path)}` is advertised in the {side}\'s `initialize` {message}."""')
            expr = "init"
            taken = {"init", "items"}
            for i, f in enumerate(fields):
                if f.has_default:
                    value: Any = f.default
                    for wire in path[i + 1 :]:
                        value = value.get(wire) if isinstance(value, dict) else None
                    if advertises(value, test):
                        raise ValueError(f"{root}.{'.'.join(path)}: the default of `{f.wire}` advertises it")
                access = f"{expr}.{self.field_name(f)}"
                target = resolve(self.decls, f.type)
                if i < len(fields) - 1:
                    if not isinstance(target, Struct):
                        raise ValueError(f"{root}.{'.'.join(path)}: `{f.wire}` is not an object")
                    if may_be_absent(f):
                        local = self.field_name(f)
                        while local in taken:
                            local += "_"
                        taken.add(local)
                        out.line(f"{local} = {access}")
                        out.line(f"if not isinstance({local}, {target.name}):")
                        with out.indent():
                            out.line("return False")
                        expr = local
                    else:
                        expr = access
                    continue
                if test == "non-empty":
                    if not isinstance(f.type, ArrayRef):
                        raise ValueError(f"{root}.{'.'.join(path)}: `non-empty` needs a list")
                    if may_be_absent(f):
                        out.line(f"items = {access}")
                        out.line("return isinstance(items, list) and len(items) > 0")
                    else:
                        out.line(f"return len({access}) > 0")
                elif self.e.m.target(f.type) == PrimRef("bool"):
                    out.line(f"return {access} is True")
                elif isinstance(target, Struct):
                    if not may_be_absent(f):
                        raise ValueError(f"{root}.{'.'.join(path)}: an object capability that is always there")
                    out.line(f"return isinstance({access}, {target.name})")
                else:
                    raise ValueError(f"{root}.{'.'.join(path)}: a capability must be a boolean or an object")
        return name

    # -- per method ---------------------------------------------------------------------

    def init_type(self, m: Method) -> str:
        where = "initialize.result" if m.side == "agent" else "initialize.params"
        return given(self.init[where], f"{m.wire}: the surface has no `initialize`")

    def variant_classes(self, u: Union) -> list[tuple[str | None, str]]:
        """(tag, class) of each variant of a tagged union."""
        return [(v.tag, vc.cls) for v, vc in zip(u.variants, self.e.m.variants[u.name], strict=True)]

    def gate(self, m: Method, name: str) -> None:
        from .python import Call, pystr, write

        g = given(m.gate, m.wire)
        out = self.body
        chosen = chosen_gate(self.decls, m, self.init_type(m))
        if chosen is None:
            out.line(f"if not {self.predicate(g.where, g.path, g.test)}(init):")
            with out.indent():
                args = [pystr(".".join(g.path))] + ([pystr(g.test)] if g.test != "advertised" else [])
                write(out, "return ", Call("CapabilityNotAdvertised(", args, ")"))
            return
        member, prefix, u, known = chosen.member, chosen.prefix, chosen.union, chosen.listed
        dotted = ".".join(prefix)
        out.line("variant = params.variant")
        out.line("chosen = type(variant)")
        keyword = "if"
        for tag, cls in self.variant_classes(u):
            tag = given(tag, f"{u.name}: a chosen capability needs tagged variants")
            refuse = Call("ChoiceNotAdvertised(", [pystr(member), pystr(tag), pystr(f"{dotted}.{tag}")], ")")
            out.line(f"{keyword} chosen is {cls}:")
            keyword = "elif"
            with out.indent():
                if tag in known:
                    out.line(f"if not {self.predicate(g.where, [*prefix, tag], g.test)}(init):")
                    with out.indent():
                        write(out, "return ", refuse)
                else:
                    write(out, "return ", refuse)
        # A value the schema does not list cannot have been advertised; a missing one is
        # left to validation.
        out.line(f"{keyword} isinstance(variant, Unknown) and variant.tag is not None:")
        with out.indent():
            args = [pystr(member), "variant.tag", f"{pystr(dotted + '.')} + variant.tag"]
            write(out, "return ", Call("ChoiceNotAdvertised(", args, ")"))

    def value_gate(self, m: Method, v: ValueGate, n: int, accepted: str) -> None:
        from .python import Call, pystr, write

        out = self.body
        f, u = value_gate_shape(self.decls, m, v)
        suffix = "" if n == 0 else f"_{n + 1}"
        item, kind, index = f"item{suffix}", f"kind{suffix}", f"index{suffix}"
        access = f"params.{self.field_name(f)}"
        if may_be_absent(f):
            items = f"items{suffix}"
            out.line(f"{items} = {access}")
            access = f"{items} if isinstance({items}, list) else ()"
        out.line(f"for {index}, {item} in enumerate({access}):")
        path = f'f"$.params.{v.member}[{{{index}}}]"'
        with out.indent():
            out.line(f"{kind} = type({item})")
            keyword = "if"
            for tag, cls in self.variant_classes(u):
                tag = tag or ""
                if tag in v.baseline:
                    continue
                out.line(f"{keyword} {kind} is {cls}:")
                keyword = "elif"
                with out.indent():
                    if tag in v.gated:
                        capability = pystr(".".join(v.gated[tag]))
                        out.line(f"if not {self.predicate(v.where, v.gated[tag], 'advertised')}(init):")
                        with out.indent():
                            write(out, "return ", Call("ValueNotAdvertised(", [path, pystr(tag), capability, accepted], ")"))
                    else:
                        write(out, "return ", Call("ValueNotAdvertised(", [path, pystr(tag), "None", accepted], ")"))
            # A kind the schema does not list: refused, unless it is the variant without a
            # tag (an unknown one with no tag, or an empty one, reads as that).
            if "" in v.baseline:
                out.line(f"{keyword} isinstance({item}, Unknown) and {item}.tag:")
                tag = f"{item}.tag"
            else:
                out.line(f"{keyword} isinstance({item}, Unknown):")
                tag = f'{item}.tag or ""'
            with out.indent():
                write(out, "return ", Call("ValueNotAdvertised(", [path, tag, "None", accepted], ")"))

    def accepted(self, m: Method) -> None:
        from .python import pystr

        out = self.body
        for n, v in enumerate(m.values):
            baseline = ", ".join(pystr(t) for t in v.baseline)
            if n == 0:
                out.line(f"kinds: list[str] = [{baseline}]")
            elif baseline:
                out.line(f"kinds += [{baseline}]")
            for tag, path in v.gated.items():
                out.line(f"if {self.predicate(v.where, path, 'advertised')}(init):")
                with out.indent():
                    out.line(f"kinds.append({pystr(tag)})")
        out.line("return kinds")

    def announced_members(self, m: Method) -> list[str]:
        members: list[str] = []
        for x in self.e.spec.methods:
            g = x.session_gate
            if g is not None and x.side == m.side and m.wire in g.opened_by and g.member not in members:
                members.append(g.member)
        return members

    def emit(self, handler_name: Callable[[Method], str]) -> None:
        from .python import Call, Kw, pystr, write

        body = self.body
        entries: list[tuple[str, list[Kw]]] = []
        for m in self.e.spec.methods:
            if m.side not in ("agent", "client", "protocol"):
                continue
            session = session_field(self.e, m.params)
            created = m.session is not None and m.session.effect == "created"
            announced = self.announced_members(m) if m.kind == "request" else []
            refusal = m.kind == "request" and (m.gate is not None or bool(m.values))
            effect = m.session.effect if m.kind == "request" and m.session is not None else None
            needs = m.session_gate.member if m.kind == "request" and m.session_gate is not None else None
            if not (session or created or announced or refusal or effect or needs):
                continue
            if any(wire == m.wire for wire, _ in entries):
                raise ValueError(f"`{m.wire}` has rules on both sides")
            name = f"_{handler_name(m)}"
            params = given(m.params, m.wire)
            kws: list[Kw] = []

            @contextmanager
            def function(what: str, args: list[str], returns: str, doc: str) -> Iterator[None]:
                body.line()
                body.line()
                write(body, "", Call(f"def {name}_{what}(", args, f") -> {returns}:"))
                kws.append(Kw(what, f"{name}_{what}"))
                with body.indent():
                    body.line(f'"""{doc}"""')
                    yield

            if session is not None:
                with function("session", [f"params: {params}"], "str", f"The session `{m.wire}` names."):
                    body.line(f"return params.{self.field_name(session)}")
            if created:
                result = given(m.result, m.wire)
                f = session_field(self.e, result)
                if f is None:
                    raise ValueError(f"{m.wire}: a `created` answer needs a required `sessionId`")
                with function("created", [f"result: {result}"], "str", f"The session an answer to `{m.wire}` created."):
                    body.line(f"return result.{self.field_name(f)}")
            init = self.init_type(m) if refusal or m.values else ""
            accepted = f"{name}_accepted(init)"
            if refusal:
                doc = f"What `{m.wire}` needs that the {m.side}'s `initialize` message did not advertise."
                with function("refusal", [f"params: {params}", f"init: {init}"], "Refusal | None", doc):
                    if m.gate is not None:
                        self.gate(m, name)
                    for n, v in enumerate(m.values):
                        self.value_gate(m, v, n, accepted)
                    body.line("return None")
            if m.values:
                doc = f"The kinds of items `{m.wire}` may carry, as the {m.side} advertised them."
                with function("accepted", [f"init: {init}"], "list[str]", doc):
                    self.accepted(m)
            if announced:
                result = given(m.result, m.wire)
                d = self.decls.get(result)
                doc = f"The members an answer to `{m.wire}` announces for its session."
                with function("announced", [f"result: {result}"], "frozenset[str]", doc):
                    body.line("members: list[str] = []")
                    for wire in announced:
                        f = next((x for x in d.fields if x.wire == wire), None) if isinstance(d, Struct) else None
                        target = resolve(self.decls, f.type) if f is not None else None
                        if f is None or not isinstance(target, Struct) or not may_be_absent(f):
                            raise ValueError(f"{m.wire}: `{wire}` is not an optional object of the result")
                        body.line(f"if isinstance(result.{self.field_name(f)}, {target.name}):")
                        with body.indent():
                            body.line(f"members.append({pystr(wire)})")
                    body.line("return frozenset(members)")
            if needs is not None:
                if session is None:
                    raise ValueError(f"{m.wire}: a session gate on a request without a session")
                kws.append(Kw("needs", pystr(needs)))
            if effect is not None:
                kws.append(Kw("effect", pystr(effect)))
                if given(m.session, m.wire).unseen_ok:
                    kws.append(Kw("unseen_ok", "True"))
            entries.append((m.wire, kws))
        out = Writer()
        out.lines(self.out.text().split("\n")[:-1] if self.out.text() else [])
        out.lines(body.text().split("\n")[:-1] if body.text() else [])
        out.line()
        out.line()
        items: list[Any] = [Call(f"{pystr(wire)}: MethodChecks(", list(kws), ")") for wire, kws in entries]
        write(out, "", Call("CHECKS: Final[Mapping[str, MethodChecks[Any, Any, Any]]] = {", items, "}", magic=True))
        out.line('"""Every method\'s rules as code, by wire name (what the runtime checks with)."""')
        self.text = out.text()


def emit(e: Emitter, handler_name: Callable[[Method], str]) -> str:
    """The predicates, the checks and `CHECKS` (ends with a newline)."""
    c = Checks(e)
    c.emit(handler_name)
    return c.text
