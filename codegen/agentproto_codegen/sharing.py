"""Which declarations two surfaces can share: the language-neutral answer every emitter
may build on (the TypeScript one does, ``typescript_share.py``).

A surface (``Spec.narrow``) is a cut of its version's model.  Much of one surface is the
same as another's: most of ACP v1 unstable is v1 stable, most of v2 unstable is v2.  A
declaration can be written once and used by two surfaces when it has the same *shape*
in both (the declaration without its docs and stability marks: names, fields, variants,
presence, defaults, lenient annotations, ...) and every declaration it refers to can be
shared as well, transitively.  Docs and stability marks do not change what a value is
or how it reads and writes; the surface that owns a shared declaration gives it its doc.

``same_decls(a, b)`` is that relation for one pair of surfaces: the greatest set of
names with equal shapes whose references all stay in the set (computed by removing
names until nothing changes, so reference cycles are handled).  It is an equivalence
between surfaces: if a name is shared by a and b and by b and c, it is by a and c.

``owners(specs, bases)`` turns it into a plan: each surface lists the surfaces it may
take declarations from, in order of preference; a declaration goes to the first base
that shares it, and from there to whatever that base took it from, so every shared
declaration has exactly one owner, the surface whose module holds it.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any, Mapping, Sequence

from .model import ArrayRef, Decl, MapRef, NamedRef, Spec, Struct, TypeRef, Union, Alias

# What a declaration's shape leaves out: words for readers, and the stability marks
# (which follow from the surface the declaration is in).
IGNORED = frozenset({"doc", "value_docs", "stability", "value_stability"})
DOCS = frozenset({"doc", "value_docs"})

SurfaceKey = tuple[str, str]  # (version, surface), e.g. ("v1", "unstable")


def key(spec: Spec) -> SurfaceKey:
    return (spec.version, spec.surface)


def _strip(value: Any, ignored: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, ignored) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [_strip(v, ignored) for v in value]
    return value


def shape(d: Decl, docs: bool = False) -> str:
    """A declaration without its stability marks, and without its docs unless `docs`,
    as canonical text (two declarations have the same shape when these texts are equal)."""
    ignored = IGNORED - DOCS if docs else IGNORED
    return json.dumps(_strip(asdict(d), ignored), sort_keys=True, default=str)


def _refs(t: TypeRef | None, acc: set[str]) -> None:
    if isinstance(t, NamedRef):
        acc.add(t.name)
    elif isinstance(t, ArrayRef):
        _refs(t.item, acc)
    elif isinstance(t, MapRef):
        _refs(t.value, acc)


def references(d: Decl) -> set[str]:
    """The names a declaration refers to directly (field and variant types, the union
    flattened into a struct, an alias's target)."""
    acc: set[str] = set()
    if isinstance(d, Struct):
        for f in d.fields:
            _refs(f.type, acc)
        for o in d.oneofs:
            for f in o.members:
                _refs(f.type, acc)
        if d.flatten:
            acc.add(d.flatten)
    elif isinstance(d, Union):
        for v in d.variants:
            _refs(v.payload, acc)
    elif isinstance(d, Alias):
        _refs(d.target, acc)
    return acc


def same_decls(a: Spec, b: Spec, docs: bool = False) -> set[str]:
    """The declarations `a` and `b` can share: same shape in both (docs included when
    `docs`), and every name they refer to shared too (a name declared in neither, such
    as a runtime type, counts as the same thing on both sides)."""
    shapes_a = {n: shape(d, docs) for n, d in a.decls.items()}
    shared = {n for n, d in b.decls.items() if n in shapes_a and shapes_a[n] == shape(d, docs)}

    def ok(name: str) -> bool:
        if name in shared:
            return True
        return name not in a.decls and name not in b.decls

    changed = True
    while changed:
        changed = False
        for name in sorted(shared):
            if not all(ok(r) for r in references(a.decls[name])):
                shared.discard(name)
                changed = True
    return shared


def owners(
    specs: Mapping[SurfaceKey, Spec], bases: Mapping[SurfaceKey, Sequence[SurfaceKey]], docs: bool = False
) -> dict[SurfaceKey, dict[str, SurfaceKey]]:
    """For every surface, each of its declarations' owner: the surface whose module
    holds it (the surface itself for what it shares with none of its bases); with
    `docs`, a declaration is shared only where its docs are the same too.

    A base must come before the surfaces that use it (no cycles); a base missing from
    `specs` is skipped."""
    result: dict[SurfaceKey, dict[str, SurfaceKey]] = {}
    pending = list(specs)
    while pending:
        ready = [s for s in pending if all(b in result or b not in specs for b in bases.get(s, ()))]
        if not ready:
            raise ValueError(f"the bases of {pending} form a cycle")
        for s in ready:
            pending.remove(s)
            spec = specs[s]
            mine = {name: s for name in spec.decls}
            for base in reversed([b for b in bases.get(s, ()) if b in specs]):
                # Reversed, so that the first base that shares a name wins.
                for name in same_decls(specs[base], spec, docs):
                    mine[name] = result[base][name]
            result[s] = mine
    return result


# ACP: stable v1 is the root; v1 unstable and v2 take from it, v2 unstable from v2 first,
# then from v1 unstable (what the draft kept of the unstable v1 additions).
ACP_BASES: dict[SurfaceKey, list[SurfaceKey]] = {
    ("v1", "stable"): [],
    ("v1", "unstable"): [("v1", "stable")],
    ("v2", "stable"): [("v1", "stable")],
    ("v2", "unstable"): [("v2", "stable"), ("v1", "unstable")],
}
