#!/usr/bin/env python3
"""Authoring script for the A2A conformance vectors (vectors/a2a/).

Re-running it rewrites vectors/a2a/v1/ (cases, their canonical-encoding golden files,
flows) and vectors/a2a/requirements.json byte for byte (no random data). The golden
files (`<case>.canonical`) are computed by the reference encoder in a2a_canonical.py.

    python3 vectors/tools/a2a_author.py          # write the files
    python3 vectors/tools/a2a_author.py --check  # exit 1 if the files on disk differ
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from a2a_answers import build_answers
from a2a_canonical import canonical_bytes
from a2a_flows import FLOWS, build_flows
from a2a_lib import CASES, REQUIREMENTS, check_expectations
from a2a_requests import build_requests

A2A = Path(__file__).resolve().parents[1] / "a2a"


def golden(c: dict) -> bytes | None:
    e = c["expect"]
    if e["outcome"] == "dispatched":
        return canonical_bytes(e["type"], e["params"])
    if e["outcome"] == "decoded":
        return canonical_bytes(e["type"], e["result"])
    return None


def main() -> int:
    build_requests()
    build_answers()
    build_flows()
    check_expectations()
    files: dict[Path, bytes] = {}
    goldens = 0
    for cid, c in [*CASES.items(), *FLOWS.items()]:
        rel = cid.removeprefix("a2a/")
        files[A2A / (rel + ".json")] = (json.dumps(c, indent=2, ensure_ascii=False) + "\n").encode()
        g = golden(c) if cid in CASES else None
        if g is not None:
            files[A2A / (rel + ".canonical")] = g
            goldens += 1
    used = {c["requirement"] for c in [*CASES.values(), *FLOWS.values()]}
    unused = sorted(set(REQUIREMENTS) - used)
    if unused:
        print("unused requirements:", ", ".join(unused))
        return 1
    files[A2A / "requirements.json"] = (json.dumps({k: REQUIREMENTS[k] for k in sorted(REQUIREMENTS)}, indent=2,
                                                   ensure_ascii=False) + "\n").encode()
    summary = f"{len(CASES)} A2A cases ({goldens} with a canonical golden file) and {len(FLOWS)} flows"
    if "--check" in sys.argv:
        bad = [str(p) for p, t in files.items() if not p.exists() or p.read_bytes() != t]
        on_disk = {p for p in A2A.rglob("*") if p.is_file()}
        extra = sorted(str(p) for p in on_disk - set(files))
        if bad or extra:
            print("differs (run python3 vectors/tools/a2a_author.py):", *bad, *extra, sep="\n  ")
            return 1
        print(summary, "up to date")
        return 0
    if A2A.exists():
        shutil.rmtree(A2A)
    for p, t in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(t)
    print("wrote", summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
