"""Which module of ``ts/src/generated/acp/`` holds each declaration of a surface.

The four ACP surfaces share most of their declarations (``sharing.py`` says which).  The
TypeScript modules write each shared declaration once, in its owner's module, and the
other surfaces import it:

* the types (``<stem>.ts``) are shared inside a version only where the doc is the same
  too, so that a reader of v2 never sees a v1 doc (``sharing.same_decls(..., docs=True)``):
  v1 unstable takes from v1, v2 unstable from v2;
* the validators and encoders (``<stem>.codec.ts``) carry no docs, so they are shared
  across versions as well: v1 unstable and v2 take from v1, v2 unstable from v2, then v1
  unstable (``sharing.ACP_BASES``).  A function written in v1's module returns v1's
  interface, which is the same type as v2's by structure.

A surface's module still exports every name of the surface (the types re-exported,
``DECODERS`` and ``ENCODERS`` complete), so nothing outside the generated modules can
tell where a declaration is written.

The emitters are called one surface at a time (``__main__.emit_typescript``).  A plan is
computed for the whole family of ACP surfaces at once; a spec that is not one of the
pinned surfaces exactly (a test's model) gets no sharing unless a plan is given.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from . import sharing
from .model import Spec
from .sharing import SurfaceKey


def stem(k: SurfaceKey) -> str:
    """The module stem of a surface (``v1``, ``v1-unstable``, ...), as ``typescript.module_name``."""
    version, surface = k
    return version + ("-unstable" if surface == "unstable" else "")


# Types are shared inside a version; the codec across versions too.
TYPE_BASES: dict[SurfaceKey, list[SurfaceKey]] = sharing.ACP_BASES
CODEC_BASES = sharing.ACP_BASES


@dataclass
class Plan:
    """For one surface: the module stem that holds each declaration's type and codec
    (its own stem for what it writes itself)."""

    stem: str
    types: dict[str, str] = field(default_factory=dict)
    codec: dict[str, str] = field(default_factory=dict)

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
    return {
        k: Plan(
            stem(k),
            {n: stem(o) for n, o in types[k].items()},
            {n: stem(o) for n, o in codec[k].items()},
        )
        for k in specs
    }


@functools.cache
def _pins() -> dict[str, str]:
    from . import __main__ as main  # imported here: __main__ imports the emitters

    return main.verify_pins()


@functools.cache
def _acp_family() -> dict[SurfaceKey, Spec]:
    """The pinned ACP surfaces, cut the way `__main__` cuts them."""
    from . import __main__ as main

    hashes = _pins()
    models = main.build_models(hashes)
    return {
        (version, surface): models[f"acp-{version}"].narrow(keep, surface, schema, hashes[schema])
        for schema, version, surface, keep, _ in main.ACP_SURFACES
    }


@functools.cache
def _acp_plans() -> dict[SurfaceKey, Plan]:
    return plans(_acp_family())


def plan_for(spec: Spec) -> Plan:
    """The plan of a pinned ACP surface; for any other spec, a plan that shares nothing."""
    k = sharing.key(spec)
    if spec.protocol == "acp" and k in TYPE_BASES and _pins().get(spec.source_file) == spec.source_sha256:
        family = _acp_family()
        if family[k].decls == spec.decls and family[k].source_sha256 == spec.source_sha256:
            return _acp_plans()[k]
    return Plan(stem(k))
