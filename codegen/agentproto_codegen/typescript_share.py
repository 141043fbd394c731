"""Which module of ``ts/src/generated/acp/`` holds each declaration of a surface.

The four ACP surfaces share most of their declarations (``sharing.py`` says which).  The
TypeScript modules write each shared declaration once, in its owner's module, and the
other surfaces import it:

* the types (``<stem>.ts``) are shared where the doc is the same too, so that a reader
  of v2 never sees a v1 doc (``sharing.owners(..., docs=True)`` over
  ``sharing.ACP_BASES``); a type import costs nothing at run time;
* the validators and encoders (``<stem>.codec.ts``) carry no docs but are shared inside
  a version only (v1 unstable takes from v1, v2 unstable from v2): a module that imports
  from another loads all of it, so v2 taking from v1 (and v2 unstable from v1 unstable
  and v1) would make those surfaces load about twice the code at start-up.  A function
  written in another module returns that module's interface, the same type by structure.

A surface's module still exports every name of the surface (the types re-exported,
``Types``, ``DECODERS`` and ``ENCODERS`` complete: the base's entries picked or spread,
then the surface's own), so nothing outside the generated modules can tell where a
declaration is written.

The emitters are called one surface at a time (``__main__.emit_typescript``) with that
surface's plan, which ``__main__`` computes for the whole family of ACP surfaces at once
(``plans``); a spec emitted on its own (a test's model) shares nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from . import sharing
from .model import Spec
from .sharing import SurfaceKey


def stem(k: SurfaceKey) -> str:
    """The module stem of a surface (``v1``, ``v1-unstable``, ...), as ``typescript.module_name``."""
    version, surface = k
    return version + ("-unstable" if surface == "unstable" else "")


# Types are shared across versions too (where the docs are the same): a type import costs
# nothing at run time.  The codec is shared inside a version only: a module that imports
# from another loads all of it, and v2 loading v1's validators (or v2 unstable loading
# v1 unstable's and v1's) costs more at start-up than the sharing saves.
TYPE_BASES: dict[SurfaceKey, list[SurfaceKey]] = sharing.ACP_BASES
CODEC_BASES: dict[SurfaceKey, list[SurfaceKey]] = {
    ("v1", "stable"): [],
    ("v1", "unstable"): [("v1", "stable")],
    ("v2", "stable"): [],
    ("v2", "unstable"): [("v2", "stable")],
}


@dataclass
class Plan:
    """For one surface: the module stem that holds each declaration's type and codec
    (its own stem for what it writes itself), and the base modules its tables start
    from (`Types` picks the base's entries, `DECODERS` and `ENCODERS` spread the base's),
    with the names whose entry is the base's."""

    stem: str
    types: dict[str, str] = field(default_factory=dict)
    codec: dict[str, str] = field(default_factory=dict)
    types_base: str | None = None
    types_same: frozenset[str] = frozenset()
    codec_base: str | None = None
    codec_same: frozenset[str] = frozenset()

    def own_type(self, name: str) -> bool:
        return self.types.get(name, self.stem) == self.stem

    def own_codec(self, name: str) -> bool:
        return self.codec.get(name, self.stem) == self.stem


def plans(
    specs: Mapping[SurfaceKey, Spec],
    type_bases: Mapping[SurfaceKey, Sequence[SurfaceKey]] = TYPE_BASES,
    codec_bases: Mapping[SurfaceKey, Sequence[SurfaceKey]] = CODEC_BASES,
) -> dict[SurfaceKey, Plan]:
    """The plan of every surface of a family."""
    types = sharing.owners(specs, type_bases, docs=True)
    codec = sharing.owners(specs, codec_bases)
    out = {}
    for k, spec in specs.items():
        plan = Plan(stem(k), {n: stem(o) for n, o in types[k].items()}, {n: stem(o) for n, o in codec[k].items()})
        # `Types` picks from the first base the entries that are the same type there.
        for b in (b for b in type_bases.get(k, ()) if b in specs):
            same = frozenset(n for n in spec.decls if n in types[b] and types[b][n] == types[k][n])
            if same:
                plan.types_base, plan.types_same = stem(b), same
            break
        # The tables spread a base's tables only when the base has no name this surface
        # lacks (a spread entry would otherwise be a type this surface does not have).
        for b in (b for b in codec_bases.get(k, ()) if b in specs):
            if set(specs[b].decls) <= set(spec.decls):
                same = frozenset(n for n in spec.decls if n in codec[b] and codec[b][n] == codec[k][n])
                plan.codec_base, plan.codec_same = stem(b), same
            break
        out[k] = plan
    return out


def plan_for(spec: Spec) -> Plan:
    """The plan of a surface written on its own (a test's model): it shares nothing. The
    pinned ACP surfaces get theirs from `plans`, computed by `__main__` for the family."""
    return Plan(stem(sharing.key(spec)))
