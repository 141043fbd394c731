"""The golden-file part of lint.py (vectors/README.md, "Canonical encoding").

Every case whose message decodes (outcome request, notification or response) has a
golden file `<case>.canonical` beside it; no golden file lacks its case; each one is
strict JSON in UTF-8, holds no line feed (canonical bytes never do, so an editor's
added newline is caught), and equals as a value the case's `expect.params` /
`expect.result`. Whether the bytes are *the* canonical ones is not checked here: the
author tool's reference encoder computes them and each language's runner compares its
encoder with them.
"""

from __future__ import annotations

import json
from pathlib import Path

DECODED = {"request": "params", "notification": "params", "response": "result"}
SUFFIX = ".canonical"


def same(a, b) -> bool:
    """JSON value equality: numbers by value, booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


def _no_constant(name):
    raise ValueError(f"non-JSON constant {name}")


def check(vectors: Path, cases: dict[str, dict], goldens: set[str], bad) -> None:
    """`cases`: case id -> case; `goldens`: ids that have a golden file; `bad(id, msg)` reports."""
    for gid in sorted(goldens - set(cases)):
        bad(gid + SUFFIX, "a golden file without a case beside it")
    for cid, c in sorted(cases.items()):
        e = c.get("expect")
        key = DECODED.get(e.get("outcome")) if isinstance(e, dict) else None
        if key is None:
            if cid in goldens:
                bad(cid + SUFFIX, "a golden file for a case whose message does not decode")
            continue
        if cid not in goldens:
            bad(cid, f"the message decodes, so the case needs a golden file {cid.rsplit('/', 1)[-1]}{SUFFIX}")
            continue
        if key not in e:
            bad(cid, f"a case with a golden file needs expect.{key} (the value the golden file encodes)")
            continue
        data = (vectors / (cid + SUFFIX)).read_bytes()
        if b"\n" in data:
            bad(cid + SUFFIX, "holds a line feed (the file is the exact bytes, with no terminator)")
        try:
            value = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError) as ex:
            bad(cid + SUFFIX, f"not strict JSON: {ex}")
            continue
        if not same(value, e[key]):
            bad(cid + SUFFIX, f"differs as a value from expect.{key}")
