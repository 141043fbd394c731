"""`layout.json` for the lints and authoring tools in this folder: where each corpus's
cases, flows and requirement ids are (README.md, "Layout")."""

from __future__ import annotations

import json
from pathlib import Path

VECTORS = Path(__file__).resolve().parent
CORPORA: dict[str, dict] = json.loads((VECTORS / "layout.json").read_text(encoding="utf-8"))["corpora"]

# Files under vectors/ that belong to no corpus: the format, the table, the tools.
NOT_CORPUS = (".gitattributes", "README.md", "layout.json", "layout.py", "lint.py", "lint_a2a.py", "lint_canonical.py")
NOT_CORPUS_DIRS = ("baselines", "tools", "__pycache__")


def corpus(name: str) -> dict:
    """The corpus `name` (`acp`, `a2a`): `cases` (roots), `flows` (folder), `requirements`."""
    return CORPORA[name]


def stray_files() -> list[str]:
    """Files under vectors/ that no corpus claims and that are not the format's own files."""
    claimed = [Path(r) for c in CORPORA.values() for r in [*c["cases"], c["flows"]]]
    known = {c["requirements"] for c in CORPORA.values()} | set(NOT_CORPUS)
    stray = []
    for path in sorted(VECTORS.rglob("*")):
        rel = path.relative_to(VECTORS)
        if path.is_dir() or rel.parts[0] in NOT_CORPUS_DIRS or rel.as_posix() in known:
            continue
        if not any(rel.is_relative_to(root) for root in claimed):
            stray.append(rel.as_posix())
    return stray
