"""Exits 0 when every package pinned in bench/requirements.txt is installed at its pinned
version in this interpreter's environment, 1 (listing what differs) otherwise.

The benchmark's Python builds run this as their check: `make bench` on a fresh machine
installs the pins into .venv/ first, and a stale or partial environment is reinstalled.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

PINS = Path(__file__).resolve().parents[1] / "requirements.txt"
PIN = re.compile(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)$")


def pins(text: str) -> dict[str, str]:
    """Distribution name -> pinned version, for every `name[extras]==version` line."""
    found = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        match = PIN.match(line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def problems() -> list[str]:
    out = []
    for name, wanted in pins(PINS.read_text()).items():
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{name}: not installed (pinned {wanted})")
            continue
        if have != wanted:
            out.append(f"{name}: {have} installed, {wanted} pinned")
    return out


if __name__ == "__main__":
    found = problems()
    for line in found:
        print(line, file=sys.stderr)
    sys.exit(1 if found else 0)
