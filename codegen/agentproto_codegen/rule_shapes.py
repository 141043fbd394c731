"""The shapes of a method's rules as every language's rule-code emitter reads them
(`rust_rules.py`, `python_checks.py`, `typescript_checks.py`): worked out and checked
once here, so the three emitters only spell them.

* `chosen_gate`: a gate whose last segment is `{member}` (elicitation's `mode`): the
  member, the capability path before it, the params' flattened union the member tags,
  and which of its tags the capability object lists at all;
* `value_gate_shape`: the params' list member a value gate walks and the tagged union of
  its items.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import ArrayRef, Decl, Field, Method, NamedRef, Struct, Union, ValueGate, field_path, resolve


@dataclass(frozen=True)
class ChosenGate:
    member: str  # the params member that chooses the capability: "mode"
    prefix: list[str]  # the capability path before it: ["clientCapabilities", "elicitation"]
    union: Union  # the params' flattened union `member` is the tag of
    listed: frozenset[str]  # the tags the capability object has a member for


def _params(decls: dict[str, Decl], m: Method) -> Struct:
    d = resolve(decls, NamedRef(m.params)) if m.params else None
    if not isinstance(d, Struct):
        raise ValueError(f"{m.wire}: its params are not an object")
    return d


def chosen_gate(decls: dict[str, Decl], m: Method, root: str) -> ChosenGate | None:
    """The shape of `m`'s gate when a params member chooses the capability; `None` for a
    plain gate. `root` is the type of the handling side's `initialize` message."""
    g = m.gate
    if g is None:
        return None
    chooser = [i for i, seg in enumerate(g.path) if seg.startswith("{") and seg.endswith("}")]
    if not chooser:
        if g.refusal != -32601:
            raise ValueError(f"{m.wire}: a gate without a chooser answers -32601")
        return None
    if len(chooser) != 1 or chooser[0] != len(g.path) - 1 or g.refusal != -32602:
        raise ValueError(f"{m.wire}: a chosen capability is the path's last segment and answers -32602")
    member, prefix = g.path[-1][1:-1], g.path[:-1]
    u = decls.get(_params(decls, m).flatten or "")
    if not isinstance(u, Union) or u.tag_field != member or u.strategy != "tagged":
        raise ValueError(f"{m.wire}: `{{{member}}}` must be the tag of the params' flattened union")
    owner = resolve(decls, field_path(decls, root, prefix)[-1].type) if prefix else resolve(decls, NamedRef(root))
    listed = frozenset(f.wire for f in owner.fields) if isinstance(owner, Struct) else frozenset()
    return ChosenGate(member, prefix, u, listed)


def value_gate_shape(decls: dict[str, Decl], m: Method, v: ValueGate) -> tuple[Field, Union]:
    """The params' list field a value gate walks, and the tagged union of its items."""
    f = next((x for x in _params(decls, m).fields if x.wire == v.member), None)
    if f is None or not isinstance(f.type, ArrayRef):
        raise ValueError(f"{m.wire}: `{v.member}` is not a list in the params")
    u = decls.get(v.union)
    if not isinstance(u, Union) or u.strategy != "tagged" or u.tag_field != v.tag:
        raise ValueError(f"{m.wire}: `{v.union}` is not a union tagged by `{v.tag}`")
    if "" in v.gated:
        raise ValueError(f"{m.wire}: the variant without a tag must be baseline")
    return f, u
