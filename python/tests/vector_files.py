"""Finding the conformance vectors' files through `vectors/layout.json` (format in
`vectors/README.md`, "Layout"), as every runner does: a corpus's cases are the `.json`
files under its case roots except those under its flows folder; its flows are the
`.json` files directly in that folder. Also the `AGENTPROTO_VECTORS` selection."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypedDict

VECTORS = Path(__file__).resolve().parents[2] / "vectors"


class Corpus(TypedDict):
    cases: list[str]
    flows: str
    requirements: str


def corpus(name: str) -> Corpus:
    """The corpus `name` (`acp`, `a2a`) of `vectors/layout.json`."""
    layout = json.loads((VECTORS / "layout.json").read_text(encoding="utf-8"))
    found: Corpus = layout["corpora"][name]
    return found


def case_files(name: str) -> list[Path]:
    """Every case file of the corpus, sorted by path."""
    c = corpus(name)
    flows = VECTORS / c["flows"]
    files = {p for root in c["cases"] for p in (VECTORS / root).rglob("*.json") if flows not in p.parents}
    return sorted(files)


def flow_files(name: str) -> list[Path]:
    """Every flow file of the corpus, sorted by path."""
    return sorted((VECTORS / corpus(name)["flows"]).glob("*.json"))


def id_of(path: Path) -> str:
    """A file's id: its path under `vectors/` without `.json`."""
    return path.relative_to(VECTORS).with_suffix("").as_posix()


def selected(id: str) -> bool:
    """Whether `AGENTPROTO_VECTORS` (prefixes, `-`prefixes excluded) selects `id`."""
    spec = os.environ.get("AGENTPROTO_VECTORS", "")
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    includes = [p for p in parts if not p.startswith("-")]
    if any(id.startswith(p[1:]) for p in parts if p.startswith("-")):
        return False
    return not includes or any(id.startswith(p) for p in includes)
