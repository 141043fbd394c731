#!/usr/bin/env python3
"""`make version-check`: one version number for the whole release.

The Cargo workspace (`Cargo.toml`), the Python package (`python/pyproject.toml`) and the
npm package (`ts/package.json`) must carry the same version, and so must the version
constants the SDKs report at run time (`agentproto.__version__`, `ts/src/version.ts`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def found() -> dict[str, str | None]:
    def first(path: str, pattern: str) -> str | None:
        match = re.search(pattern, (ROOT / path).read_text(), re.M)
        return match.group(1) if match else None

    return {
        "Cargo.toml [workspace.package]": first("Cargo.toml", r'^\[workspace\.package\][^\[]*?^version = "([^"]+)"'),
        "python/pyproject.toml": first("python/pyproject.toml", r'^version = "([^"]+)"'),
        "python/src/agentproto/__init__.py": first("python/src/agentproto/__init__.py", r'__version__ = "([^"]+)"'),
        "ts/package.json": json.loads((ROOT / "ts" / "package.json").read_text()).get("version"),
        "ts/src/version.ts": first("ts/src/version.ts", r'"(\d+\.\d+\.\d+[^"]*)"'),
    }


def main() -> int:
    versions = found()
    distinct = {v for v in versions.values()}
    if len(distinct) != 1 or None in distinct:
        for where, version in versions.items():
            print(f"{where}: {version}", file=sys.stderr)
        print("version-check: the release's versions differ (or one was not found)", file=sys.stderr)
        return 1
    print(f"version-check: {distinct.pop()} everywhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())
