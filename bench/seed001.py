"""Seed 001 (zerodep ``acp.py`` vs ``agent-client-protocol``, pytest-benchmark): the
runner's part. Runs ``bench/python/seed001`` under pytest-benchmark and returns its
statistics per operation, size and implementation (bench/README.md, "Seed 001").

zerodep is optional: its PyPI package is a command-line tool that downloads ``acp.py``
from GitHub when used, so nothing here installs it. ``--zerodep-dir DIR`` (or
``AGENTPROTO_ZERODEP_DIR``) names a directory holding its ``acp/acp.py`` and
``jsonrpc/jsonrpc.py``; without one, the report says zerodep was not measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
TESTS = BENCH / "python" / "seed001"
ZERODEP_ENV = "AGENTPROTO_ZERODEP_DIR"
IMPLEMENTATION = "agentproto-python"  # seed 001 runs when this implementation is selected
BUILDS = {"python", "python-agentproto"}  # the official SDK and agentproto's Python SDK

OPERATIONS = ("serialize", "deserialize", "roundtrip")
SIZES = ("small", "medium", "large")
SIDES = {
    "agentproto": {
        "label": "agentproto (Python), object ↔ dict",
        "validating": True,
        "does": "object → dict: msgspec.to_builtins of the generated struct (Raw members parsed); dict → object: "
        "compact JSON, then SURFACE.decode, the validating decode classify runs on params (tested to accept "
        "and refuse what the receive path does, over the conformance vectors)",
    },
    "agentproto_json": {
        "label": "agentproto (Python), object ↔ JSON bytes (fastest path)",
        "validating": True,
        "does": "object → bytes: the canonical encoder; bytes → object: SURFACE.decode on the compact JSON of the "
        "seed's dicts; round trip: one then the other (no dicts, no json module)",
    },
    "official": {
        "label": "official Python SDK 0.12.1",
        "validating": True,
        "does": "acp.schema (pydantic): model_dump(by_alias=True, exclude_none=True) / Model.model_validate, "
        "as the seed calls them",
    },
    "zerodep": {
        "label": "zerodep acp.py (NOT validating)",
        "validating": False,
        "does": "NOT validating: to_dict (dataclasses to camelCase dicts) / from_raw (top-level keys renamed to "
        "snake_case into a new dict; no object built, nothing checked)",
    },
}
# pytest-benchmark settings per plan. Full: its defaults, as the seed ran it (calibrated
# rounds for up to 1 s per test, at least 5 rounds); quick: 0.2 s per test.
PLANS = {"full": [], "quick": ["--benchmark-max-time=0.2", "--benchmark-min-rounds=5"]}


def zerodep_dir(given: str | None) -> Path | None:
    """The zerodep directory from ``--zerodep-dir`` or the environment, checked."""
    value = given or os.environ.get(ZERODEP_ENV) or None
    if value is None:
        return None
    path = Path(value).resolve()
    for part in ("acp/acp.py", "jsonrpc/jsonrpc.py"):
        if not (path / part).is_file():
            raise ValueError(f"zerodep directory {path} has no {part}")
    return path


def zerodep_status(directory: Path | None) -> dict:
    if directory is not None:
        return {"measured": True, "dir": str(directory)}
    return {
        "measured": False,
        "why": "zerodep was not measured: no directory holding its acp/acp.py and jsonrpc/jsonrpc.py was given "
        f"(--zerodep-dir or {ZERODEP_ENV}). PyPI `zerodep` is a command-line tool that downloads acp.py from "
        "GitHub at use time (no wheel or sdist contains it), and this benchmark installs nothing from GitHub.",
    }


def _pytest(args: list[str], zerodep: Path | None, timeout: float) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop(ZERODEP_ENV, None)
    if zerodep is not None:
        env[ZERODEP_ENV] = str(zerodep)
    argv = [sys.executable, "-m", "pytest", str(TESTS), "-q", "-p", "no:cacheprovider", "--rootdir", str(TESTS)]
    with tempfile.TemporaryDirectory() as storage:  # pytest-benchmark's own store, kept out of the repository
        argv.append(f"--benchmark-storage=file://{storage}")
        try:
            return subprocess.run(argv + args, cwd=TESTS, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(argv + args, 1, "", f"timed out after {timeout} s")


def smoke(zerodep: Path | None, failure: type[Exception]) -> None:
    """Every seed-001 test once, untimed, its answer checked, and the test that holds
    agentproto's dict path to the receive path's outcomes over the vectors."""
    result = _pytest(["--benchmark-disable"], zerodep, timeout=300)
    if result.returncode != 0:
        raise failure(f"seed 001 smoke failed:\n{result.stdout[-3000:]}{result.stderr[-2000:]}")


def measure(plan: str, zerodep: Path | None, progress, failure: type[Exception]) -> dict:
    """Runs the table under pytest-benchmark; returns every statistic in nanoseconds."""
    progress(f"seed 001: pytest-benchmark ({plan} plan), 9 operations x {len(SIDES)} implementations")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "seed001.json"
        args = ["--benchmark-only", f"--benchmark-json={out}", "--benchmark-sort=name", *PLANS[plan]]
        result = _pytest(args, zerodep, timeout=1800)
        if result.returncode != 0 or not out.exists():
            raise failure(f"seed 001 failed:\n{result.stdout[-3000:]}{result.stderr[-2000:]}")
        data = json.loads(out.read_text())
    rows = []
    for b in data["benchmarks"]:
        operation, size = b["group"].split("-")
        s = b["stats"]
        rows.append(
            {
                "operation": operation,
                "size": size,
                "side": b["name"].removeprefix("test_"),
                "rounds": s["rounds"],
                "iterations": s["iterations"],
            }
            | {f"{k}_ns": s[k] * 1e9 for k in ("mean", "median", "min", "max", "q1", "q3", "stddev")}
        )
    progress(f"seed 001: done ({len(rows)} benchmarks)", done=True)
    return {
        "plan": plan,
        "settings": PLANS[plan] or ["pytest-benchmark defaults"],
        "pytest_benchmark": data.get("version"),
        "sides": SIDES,
        "zerodep": zerodep_status(zerodep),
        "rows": rows,
    }
