#!/usr/bin/env python3
"""`make bench`: the cross-SDK benchmark (bench/README.md). Standard library only.

    python3 bench/run.py            # full run, writes bench/results/<date>-<host>.{json,md,html}
    python3 bench/run.py --quick    # fewer runs, smaller end-to-end turn (under 2 minutes)
    python3 bench/run.py --smoke    # every adapter with tiny counts, output checked, no timing

Steps: build or install every implementation at its pinned version (bench/adapters.json),
check that every adapter reads the same bytes and that the validating ones refuse an
invalid message, then run the seed-000 workloads with the implementations interleaved
(whole-process view, then the in-loop view with an in-process warm-up), the seed-003
analogue, the end-to-end prompt turn (over stdio, then over WebSocket and Streamable HTTP with
the agent's memory per idle connection: bench/net/net_bench.py), seed 001's table (bench/seed001.py, when agentproto's
Python SDK is selected), seed 002's sync-channel workloads against the `tsc --api` of
typescript 7.0.2, then of 7.1.0-beta (bench/sync/sync_bench.py; --sync-server picks one) and
seed 004's A2A workloads (bench/a2a/a2a_bench.py).
Medians with min/max and quartiles; nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "a2a"))
sys.path.insert(0, str(BENCH / "sync"))
sys.path.insert(0, str(BENCH / "net"))

import a2a_bench  # noqa: E402  (bench/a2a/a2a_bench.py: the A2A workloads)
import net_bench  # noqa: E402  (bench/net/net_bench.py: the end-to-end turn over WebSocket and HTTP)
import sync_bench  # noqa: E402  (bench/sync/sync_bench.py: seed 002's sync-channel workloads)

import report  # noqa: E402  (bench/report.py, next to this file)
import seed001  # noqa: E402  (bench/seed001.py: seed 001's pytest-benchmark table)

# Seed 000's matrix (hyperfine: 5 warm-ups, 20 runs). Sizes of the four messages.
SEED_CASES = [
    {"id": "cold-start", "args": ["--mode", "cold-start"]},
    {"id": "roundtrip", "args": ["--mode", "roundtrip"]},
    {"id": "throughput", "args": ["--mode", "throughput", "--count", "1000"], "items": 1000},
    {"id": "codec", "args": ["--mode", "codec", "--count", "10000"], "items": 20000},
    {"id": "tokens", "args": ["--mode", "tokens", "--count", "10000", "--tokens", "100"], "items": 10000},
]
SEED_SIZES = [216, 87, 192, 133]

# Required fields of each mode's output line, with their types.
FIELDS = {
    "cold-start": {"status": str, "mode": str, "elapsed_ms": int, "elapsed_ns": int},
    "roundtrip": {"status": str, "mode": str, "elapsed_ms": int, "elapsed_ns": int},
    "throughput": {
        "status": str, "mode": str, "count": int, "elapsed_ms": int, "msgs_per_sec": int, "elapsed_ns": int,
        "warmup": int,
    },
    "codec": {
        "status": str, "mode": str, "ops": int, "elapsed_ms": int, "ops_per_sec": int, "elapsed_ns": int, "warmup": int,
    },
    "tokens": {
        "status": str, "mode": str, "messages": int, "tokens_per_msg": int, "total_tokens": int, "elapsed_ms": int,
        "tokens_per_sec": int, "msgs_per_sec": int, "elapsed_ns": int, "warmup": int,
    },
    "e2e": {
        "status": str, "mode": str, "messages": int, "tokens_per_msg": int, "total_tokens": int, "elapsed_ms": int,
        "msgs_per_sec": int, "tokens_per_sec": int, "elapsed_ns": int, "received": int,
    },
    "reject": {"status": str, "mode": str, "refused": bool},
}  # fmt: skip

PLANS = {
    # warm-up rounds, measured rounds (seed view); in-loop view; end to end (count, runs); seed-003 (count, rounds)
    "full": {"warmup": 5, "runs": 20, "steady_warmup": 1, "steady_runs": 10, "e2e_count": 10000, "e2e_warmup": 1,
             "e2e_runs": 5, "seed003": (20000, 7)},
    "quick": {"warmup": 1, "runs": 3, "steady_warmup": 0, "steady_runs": 2, "e2e_count": 10000, "e2e_warmup": 0,
              "e2e_runs": 1, "seed003": (5000, 2)},
}  # fmt: skip


class Failure(Exception):
    """An adapter misbehaved (bad output, non-zero exit); the run stops."""


# ---------------------------------------------------------------------------
# Progress on stderr


class Progress:
    """One status line on stderr, rewritten in place on a terminal; elsewhere (CI, a log
    file) a line per phase and at most one every 10 seconds."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.phase = ""
        self.printed = 0.0

    def __call__(self, text: str, done: bool = False) -> None:
        stamp = f"[{self.clock()}] "
        if self.tty:
            sys.stderr.write("\r\x1b[K" + stamp + text + ("\n" if done else ""))
        else:
            phase = text.split(":")[0]
            if done or phase != self.phase or time.monotonic() - self.printed >= 10:
                sys.stderr.write(stamp + text + "\n")
                self.phase, self.printed = phase, time.monotonic()
        sys.stderr.flush()

    def clock(self) -> str:
        s = int(time.monotonic() - self.start)
        return f"{s // 60}:{s % 60:02d}"


# ---------------------------------------------------------------------------
# Registry and builds


def load_registry() -> dict:
    return json.loads((BENCH / "adapters.json").read_text())


def expand(argv: list[str], profile: str) -> list[str]:
    rust = str(BENCH / "rust" / "target" / ("release" if profile == "release" else "debug"))
    cargo_profile = "--release" if profile == "release" else "--profile=dev"
    out = []
    for arg in argv:
        arg = arg.replace("{python}", sys.executable).replace("{rust}", rust)
        arg = arg.replace("{cargo_profile}", cargo_profile)
        # Files under bench/: absolute, cwd-independent.
        if arg.startswith(("ts/", "python/", "rust/", "a2a/", "sync/")):
            arg = str(BENCH / arg)
        out.append(arg)
    return out


def build(registry: dict, wanted: set[str], profile: str, progress: Progress) -> dict[str, float]:
    """Builds or installs what the wanted implementations need; returns seconds per build."""
    timings = {}
    for name, spec in registry["builds"].items():
        if name not in wanted:
            continue
        started = time.monotonic()
        check = spec.get("check")
        present = spec.get("skip_if_present")
        needed = True
        if check and (present is None or (BENCH / present).exists()):
            needed = subprocess.run(expand(check, profile), cwd=BENCH, capture_output=True).returncode != 0
        if needed:
            progress(f"build: {name}: {spec['what']}")
            result = subprocess.run(expand(spec["command"], profile), cwd=BENCH, capture_output=True, text=True)
            if result.returncode != 0:
                sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
                raise Failure(f"build {name} failed: {' '.join(spec['command'])}")
            if check and subprocess.run(expand(check, profile), cwd=BENCH, capture_output=True).returncode != 0:
                raise Failure(f"build {name}: the pinned version is still not installed")
        timings[name] = round(time.monotonic() - started, 1)
        progress(f"build: {name} ready ({timings[name]} s)", done=True)
    return timings


# ---------------------------------------------------------------------------
# Running one process


def run_process(argv: list[str], timeout: float = 300, env: dict[str, str] | None = None) -> dict:
    """Spawns `argv` (posix_spawn: the least harness overhead); returns wall time (spawn
    to exit), time to the first stdout line, the output lines and the exit code. stderr
    goes to a file so that it never blocks."""
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryFile() as err:
        read_end, write_end = os.pipe()
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, write_end, 1),
            (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
            (os.POSIX_SPAWN_CLOSE, read_end),
        ]
        start = time.perf_counter_ns()
        try:
            pid = os.posix_spawnp(argv[0], argv, os.environ | (env or {}), file_actions=actions)
        except OSError as exc:
            os.close(read_end)
            os.close(write_end)
            raise Failure(f"cannot start {argv[0]}: {exc}") from None
        os.close(write_end)
        chunks: list[bytes] = []
        first_ns = None
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([read_end], [], [], left)[0]:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    raise Failure(f"timed out after {timeout} s: {' '.join(argv)}")
                chunk = os.read(read_end, 1 << 16)
                if first_ns is None and (not chunk or b"\n" in chunk):
                    first_ns = time.perf_counter_ns() - start
                if not chunk:
                    break
                chunks.append(chunk)
            _, status = os.waitpid(pid, 0)
            wall_ns = time.perf_counter_ns() - start
        finally:
            os.close(read_end)
        err.seek(0)
        stderr = err.read()[-2000:].decode("utf-8", "replace")
    text = b"".join(chunks).decode("utf-8", "replace")
    return {
        "wall_ns": wall_ns,
        "first_line_ns": first_ns,
        "lines": [line for line in text.splitlines() if line.strip()],
        "code": os.waitstatus_to_exitcode(status),
        "stderr": stderr,
    }


def summary_line(result: dict, argv: list[str]) -> dict:
    if not result["lines"]:
        raise Failure(f"no output from {' '.join(argv)} (exit {result['code']}): {result['stderr']}")
    try:
        return json.loads(result["lines"][-1])
    except ValueError:
        raise Failure(f"last line is not JSON from {' '.join(argv)}: {result['lines'][-1][:200]}") from None


def check_line(line: dict, mode: str, expect: dict, argv: list[str]) -> None:
    """Checks the schema of one output line, its status and the counts it reports."""
    where = " ".join(argv)
    for key, kind in FIELDS[mode].items():
        if key not in line:
            raise Failure(f"{where}: field {key!r} missing in {line}")
        if kind is int and (not isinstance(line[key], int) or isinstance(line[key], bool)):
            raise Failure(f"{where}: field {key!r} is not an integer in {line}")
        if kind is not int and not isinstance(line[key], kind):
            raise Failure(f"{where}: field {key!r} is not {kind.__name__} in {line}")
    if line["status"] != "ok" or line["mode"] != mode:
        raise Failure(f"{where}: status {line['status']!r}, mode {line['mode']!r}: {line}")
    for key, value in expect.items():
        if line.get(key) != value:
            raise Failure(f"{where}: {key} is {line.get(key)!r}, expected {value!r}")


# ---------------------------------------------------------------------------
# Checks every run starts with (and all that --smoke does)


def check_adapters(registry: dict, impls: list[dict], profile: str, progress: Progress, tiny: bool) -> dict:
    """Same bytes everywhere, validating adapters refuse an invalid message, every mode
    produces a well-formed line. Returns what was seen (for the report)."""
    seen = {}
    reference = None
    for impl in impls:
        progress(f"check: {impl['id']}")
        codec = expand(impl["codec"], profile)
        out = run_process(codec + ["--mode", "messages", "--tokens", "7"])
        if out["code"] != 0:
            raise Failure(f"{impl['id']}: --mode messages failed: {out['stderr']}")
        sizes = [len(line.encode()) for line in out["lines"]]
        if sizes[:4] != SEED_SIZES or len(out["lines"]) != 5:
            raise Failure(f"{impl['id']}: message sizes {sizes}, expected {SEED_SIZES} + the token message")
        digest = hashlib.sha256("\n".join(out["lines"]).encode()).hexdigest()
        reference = reference or digest
        if digest != reference:
            raise Failure(f"{impl['id']}: its messages differ from {impls[0]['id']}'s")
        reject = run_process(codec + ["--mode", "reject"])
        line = summary_line(reject, codec)
        check_line(line, "reject", {}, codec)
        refused = line["refused"]
        if refused != impl["validating"]:
            what = "refused" if refused else "accepted"
            raise Failure(f"{impl['id']}: {what} the invalid prompt, but is labelled validating={impl['validating']}")
        if tiny:
            cold = run_process(codec + ["--mode", "cold-start"])
            if cold["code"] != 0 or len(cold["lines"]) != 2:
                raise Failure(f"{impl['id']}: cold-start printed {cold['lines']} (exit {cold['code']})")
            response = json.loads(cold["lines"][0])
            if response.get("id") != 1 or response.get("result", {}).get("protocolVersion") != 1:
                raise Failure(f"{impl['id']}: cold-start response {cold['lines'][0]}")
            check_line(json.loads(cold["lines"][1]), "cold-start", {"failed": 0}, codec)
            small = [
                (["--mode", "roundtrip"], "roundtrip", {"failed": 0}),
                (["--mode", "throughput", "--count", "8"], "throughput", {"count": 8, "warmup": 0, "failed": 0}),
                (["--mode", "codec", "--count", "8"], "codec", {"ops": 16, "failed": 0}),
                (["--mode", "codec", "--count", "8", "--warmup", "4"], "codec", {"ops": 16, "warmup": 4}),
                (
                    ["--mode", "tokens", "--count", "5", "--tokens", "7"],
                    "tokens",
                    {"messages": 5, "tokens_per_msg": 7, "total_tokens": 35, "failed": 0},
                ),
            ]
            for args, mode, expect in small:
                result = run_process(codec + args)
                if result["code"] != 0:
                    raise Failure(f"{impl['id']} {' '.join(args)}: exit {result['code']}: {result['stderr']}")
                check_line(summary_line(result, codec + args), mode, expect, codec + args)
            if "e2e" in impl:
                e2e = run_e2e(impl, impl, profile, count=20, tokens=3)
                check_line(e2e, "e2e", {"messages": 20, "received": 20, "total_tokens": 60}, ["e2e", impl["id"]])
                if impl["e2e"].get("unchecked_outgoing"):  # both sides say whether they checked what they sent
                    check_line(e2e, "e2e", {"outgoing": "checked"}, ["e2e", impl["id"]])
                    e2e = run_e2e(impl, impl, profile, count=20, tokens=3, unchecked=True)
                    expect = {"received": 20, "outgoing": "unchecked"}
                    check_line(e2e, "e2e", expect, ["e2e", impl["id"], "unchecked"])
            if "seed003" in impl:
                argv = expand(impl["seed003"], profile) + ["--count", "20", "--rounds", "1"]
                line = summary_line(run_process(argv), argv)
                if line.get("status") != "ok" or len(line.get("rows", [])) != 5 * (4 + 3 + 5):
                    raise Failure(f"{impl['id']} seed003: {str(line)[:300]}")
        seen[impl["id"]] = {"messages_sha256": digest, "refuses_invalid_prompt": refused}
        progress(f"check: {impl['id']} ok", done=True)
    return seen


# ---------------------------------------------------------------------------
# Measurements


def rotate(items: list, k: int) -> list:
    k %= max(1, len(items))
    return items[k:] + items[:k]


def seed_view(impls: list[dict], profile: str, plan: dict, progress: Progress, steady: bool) -> dict:
    """Seed 000's matrix, implementations interleaved and their order rotated each round.
    Whole-process view: the seed's command lines, no in-process warm-up. In-loop view
    (`steady`): the same loops with at least 10,000 iterations after as many untimed
    ones; only the in-loop time is used."""
    cases = [c for c in SEED_CASES if not steady or "items" in c]
    warmup, runs = (plan["steady_warmup"], plan["steady_runs"]) if steady else (plan["warmup"], plan["runs"])
    data = {c["id"]: {i["id"]: {"wall_ns": [], "first_line_ns": [], "elapsed_ns": []} for i in impls} for c in cases}
    total = (warmup + runs) * len(cases) * len(impls)
    step = 0
    view = "in-loop" if steady else "whole-process"
    for round_no in range(warmup + runs):
        measured = round_no >= warmup
        for case in rotate(cases, round_no):
            args = list(case["args"])
            if steady:  # at least 10,000 iterations, after as many untimed ones
                at = args.index("--count") + 1
                args[at] = str(max(int(args[at]), 10000))
                args += ["--warmup", args[at]]
            for impl in rotate(impls, round_no):
                step += 1
                label = "warm-up" if not measured else f"run {round_no - warmup + 1}/{runs}"
                progress(f"{view}: {label} {case['id']:<10} {impl['id']:<16} [{step}/{total}]")
                argv = expand(impl["codec"], profile) + args
                result = run_process(argv)
                line = summary_line(result, argv)
                if result["code"] != 0 or line.get("status") != "ok":
                    raise Failure(f"{' '.join(argv)}: {line} {result['stderr']}")
                if measured:
                    slot = data[case["id"]][impl["id"]]
                    if case["id"] == "cold-start":  # the spawn floor: a process that only prints a line
                        floor = run_process(["echo", '{"floor":1}'])
                        data["cold-start"].setdefault("_floor", {"first_line_ns": []})
                        data["cold-start"]["_floor"]["first_line_ns"].append(floor["first_line_ns"])
                    slot["wall_ns"].append(result["wall_ns"])
                    slot["first_line_ns"].append(result["first_line_ns"])
                    slot["elapsed_ns"].append(line["elapsed_ns"])
                    slot["items"] = line.get("count") or line.get("ops") or line.get("messages") or 1
    progress(f"{view}: done ({runs} runs after {warmup} warm-up rounds)", done=True)
    return {"warmup_rounds": warmup, "runs": runs, "in_process_warmup": steady, "cases": data}


# Set for both processes of an end-to-end pair whose SDK can switch off the check of what it
# sends (agentproto's adapters read it): the pair measures what that check costs.
UNCHECKED_ENV = {"AGENTPROTO_BENCH_OUTGOING": "unchecked"}


def run_e2e(client: dict, agent: dict, profile: str, count: int, tokens: int, unchecked: bool = False) -> dict:
    argv = expand(client["e2e"]["client"], profile) + ["--count", str(count), "--tokens", str(tokens), "--"]
    argv += expand(agent["e2e"]["agent"], profile)
    result = run_process(argv, timeout=600, env=UNCHECKED_ENV if unchecked else None)
    line = summary_line(result, argv)
    if result["code"] != 0 or line.get("status") != "ok":
        raise Failure(f"{' '.join(argv)}: exit {result['code']}: {line} {result['stderr']}")
    line["wall_ns"] = result["wall_ns"]
    return line


def e2e_view(impls: list[dict], profile: str, plan: dict, progress: Progress, cross: bool) -> dict:
    sdks = [i for i in impls if "e2e" in i]
    pairs = [(i, i, False) for i in sdks]
    # The same SDK with the check of outgoing messages switched off: what validating costs.
    pairs += [(i, i, True) for i in sdks if i["e2e"].get("unchecked_outgoing")]
    if cross:  # the two Rust SDKs against each other: tells which side sets the pace
        rust = [i for i in sdks if i["language"] == "Rust"]
        pairs += [(c, a, False) for c in rust for a in rust if c is not a]
    count, tokens = plan["e2e_count"], 100

    def key(client: dict, agent: dict, unchecked: bool) -> str:
        return f"{client['id']}<-{agent['id']}" + (":unchecked" if unchecked else "")

    out = {key(c, a, u): {"client": c["id"], "agent": a["id"], "unchecked": u, "runs": []} for c, a, u in pairs}
    total = (plan["e2e_warmup"] + plan["e2e_runs"]) * len(pairs)
    step = 0
    for round_no in range(plan["e2e_warmup"] + plan["e2e_runs"]):
        for client, agent, unchecked in rotate(pairs, round_no):
            step += 1
            what = ", outgoing unchecked" if unchecked else ""
            progress(f"end to end: {client['id']} client, {agent['id']} agent{what} [{step}/{total}]")
            line = run_e2e(client, agent, profile, count, tokens, unchecked)
            if round_no >= plan["e2e_warmup"]:
                out[key(client, agent, unchecked)]["runs"].append(line)
    progress(f"end to end: done ({plan['e2e_runs']} runs of {count} x {tokens} tokens)", done=True)
    return {"count": count, "tokens": tokens, "runs": plan["e2e_runs"], "pairs": out}


def seed003_view(impls: list[dict], profile: str, plan: dict, progress: Progress) -> dict | None:
    impl = next((i for i in impls if "seed003" in i), None)
    if impl is None:
        return None
    count, rounds = plan["seed003"]
    progress(f"seed-003 analogue: {count} operations x {rounds} rounds")
    argv = expand(impl["seed003"], profile) + ["--count", str(count), "--rounds", str(rounds)]
    line = summary_line(run_process(argv, timeout=600), argv)
    if line.get("status") != "ok":
        raise Failure(f"seed003: {str(line)[:300]}")
    progress("seed-003 analogue: done", done=True)
    return line


# ---------------------------------------------------------------------------
# Machine and versions


def command_output(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, cwd=BENCH, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    os_name = platform.platform()
    try:
        release = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
        os_name = f"{release.get('PRETTY_NAME', '').strip(chr(34))} (kernel {platform.release()})"
    except OSError:
        pass
    memory = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, AttributeError):
        pass
    return {
        "host": socket.gethostname(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "os": os_name,
        "arch": platform.machine(),
    }


def locked_crate(name: str) -> str:
    text = (BENCH / "rust" / "Cargo.lock").read_text()
    match = re.search(r'name = "' + re.escape(name) + r'"\nversion = "([^"]+)"', text)
    return match.group(1) if match else "?"


def py_version(package: str) -> str:
    script = f"import importlib.metadata as m; print(m.version({package!r}))"
    return command_output([sys.executable, "-c", script]) or "not installed"


def versions() -> dict:
    def npm_version(package: str) -> str:
        try:
            return json.loads((BENCH / "ts" / "node_modules" / package / "package.json").read_text())["version"]
        except (OSError, ValueError, KeyError):
            return "not installed"

    commit = command_output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = command_output(["git", "-C", str(ROOT), "status", "--porcelain", "--", "crates", "python", "ts", "bench"])
    return {
        "agentproto": commit + ("+local changes" if dirty else ""),
        "rustc": command_output(["rustc", "--version"]),
        "cargo": command_output(["cargo", "--version"]),
        "node": command_output(["node", "--version"]),
        "python": platform.python_version(),
        "agent-client-protocol (crate)": locked_crate("agent-client-protocol"),
        "agent-client-protocol-schema (crate)": locked_crate("agent-client-protocol-schema"),
        "agent-client-protocol-http (crate)": locked_crate("agent-client-protocol-http"),
        "serde_json (crate)": locked_crate("serde_json"),
        "tokio (crate)": locked_crate("tokio"),
        "@agentclientprotocol/sdk (npm)": npm_version("@agentclientprotocol/sdk"),
        "zod (npm)": npm_version("zod"),
        "agent-client-protocol (PyPI)": py_version("agent-client-protocol"),
        "pydantic (PyPI)": py_version("pydantic"),
        "agentproto (python/)": py_version("agentproto"),
        "msgspec (PyPI)": py_version("msgspec"),
        "pytest-benchmark (PyPI)": py_version("pytest-benchmark"),
        "rust profile": "release: opt-level 3, lto fat, codegen-units 1 (both Rust SDKs alike)",
    }


def fill_versions(impls: list[dict], v: dict) -> None:
    for impl in impls:
        impl["version"] = (
            impl["version"]
            .replace("{commit}", v["agentproto"])
            .replace("{serde_json}", v["serde_json (crate)"])
            .replace("{node}", v["node"])
            .replace("{pydantic}", v["pydantic (PyPI)"])
            .replace("{agentproto_python}", v["agentproto (python/)"])
            .replace("{msgspec}", v["msgspec (PyPI)"])
            .replace("{python_version}", v["python"])
        )


# ---------------------------------------------------------------------------


def cache_python_bytecode() -> str:
    """Python children start from cached bytecode, as an installed package does (pip
    compiles it at install time), wherever the environment turned the cache off
    (``PYTHONDONTWRITEBYTECODE``): otherwise a package run from its source tree, such as
    an editable install, would be compiled again at every start and its cold start would
    measure the compiler. The cache goes outside the repository; warm-up rounds fill it."""
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(Path(tempfile.gettempdir()) / "agentproto-bench-pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    return prefix


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="fewer runs (QUICK=1)")
    mode.add_argument("--smoke", action="store_true", help="tiny counts, output checks only (CI)")
    parser.add_argument(
        "--only",
        help="comma-separated implementation ids (default: all); `a2a` and `sync` select those sections",
    )
    parser.add_argument(
        "--profile", choices=["release", "dev"], help="Rust build profile (default: release; dev for --smoke)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where the report goes (default: bench/results/ for a full run of everything, which replaces the "
        "previous one there and adds its headline to bench/results/history.md; bench/results/local/, ignored "
        "by git, for quick and partial runs)",
    )
    parser.add_argument("--no-readme", action="store_true", help="do not update the results table in README.md")
    parser.add_argument(
        "--zerodep-dir",
        help=f"zerodep's acp/acp.py and jsonrpc/jsonrpc.py are there, for seed 001 (default: ${seed001.ZERODEP_ENV})",
    )
    a2a = parser.add_mutually_exclusive_group()
    a2a.add_argument("--no-a2a", action="store_true", help="leave out the A2A workloads")
    a2a.add_argument("--a2a-only", action="store_true", help="only the A2A workloads (seed 004)")
    parser.add_argument("--no-sync", action="store_true", help="leave out the sync-channel workloads (seed 002)")
    parser.add_argument(
        "--net-only",
        action="store_true",
        help="of the ACP workloads only the end-to-end turn over WebSocket and Streamable HTTP (with --only: of "
        "those implementations); no A2A, sync or seed 001",
    )
    parser.add_argument(
        "--sync-server",
        help="the tsc --api servers of the sync workloads, comma-separated: 7.0.2, 7.1.0-beta (or 7.0, 7.1); "
        f"default: ${sync_bench.SERVER_ENV}, else every pinned server, one after the other",
    )
    parser.add_argument(
        "--no-counts",
        action="store_true",
        help="leave out the A2A instruction and allocation counts (callgrind and an allocation counter)",
    )
    parser.add_argument(
        "--no-build", action="store_true", help="use the adapters as last built (a quick re-run; nothing is rebuilt)"
    )
    args = parser.parse_args()
    profile = args.profile or ("dev" if args.smoke else "release")
    progress = Progress()
    pycache = cache_python_bytecode()

    registry = load_registry()
    impls = registry["implementations"]
    try:
        sync_servers = sync_bench.select_servers(registry, args.sync_server)
    except ValueError as exc:
        parser.error(str(exc))
    with_sync = not args.no_sync and not args.a2a_only
    a2a_only_ids = None  # A2A server ids in --only: the A2A section with only those servers
    if args.only:  # `a2a` / `sync` in the list: those sections too (otherwise they are left out)
        wanted = set(args.only.split(","))
        with_sync = "sync" in wanted and not args.no_sync
        wanted.discard("sync")
        a2a_ids = {s["id"] for s in registry["a2a"]["servers"]} & wanted
        if a2a_ids:
            a2a_only_ids = a2a_ids
            wanted -= a2a_ids
            wanted.add("a2a")
        if "a2a" in wanted:
            wanted.discard("a2a")
            args.a2a_only = not wanted and not with_sync
        else:
            args.no_a2a = True
        unknown = wanted - {i["id"] for i in impls}
        if unknown:
            parser.error(f"unknown implementations: {sorted(unknown)}")
        impls = [i for i in impls if i["id"] in wanted]
    for tool in ("cargo", "node", "npm"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} is not on PATH")

    if args.a2a_only:
        impls = []
    if args.net_only:
        impls = net_bench.selected(impls)
        args.no_a2a, with_sync = True, False
    with_seed001 = not args.net_only and any(i["id"] == seed001.IMPLEMENTATION for i in impls)
    try:
        zerodep = seed001.zerodep_dir(args.zerodep_dir) if with_seed001 else None
    except ValueError as exc:
        parser.error(str(exc))
    a2a_env = a2a_bench.Env(expand, Failure, progress, profile)
    whole = steady = s003 = e2e = net = s001 = a2a = sync = None
    net_env = net_bench.Env(expand, Failure, progress, profile, run_process, summary_line)
    try:
        wanted = {i["build"] for i in impls} | (set() if args.no_a2a else a2a_bench.builds(registry, a2a_only_ids))
        wanted |= seed001.BUILDS if with_seed001 else set()
        wanted |= sync_bench.builds(registry, sync_servers) if with_sync else set()
        build_seconds = {} if args.no_build else build(registry, wanted, profile, progress)
        checks = check_adapters(registry, impls, profile, progress, tiny=args.smoke)
        if args.smoke:
            net_bench.smoke(net_env, impls)
            if with_seed001:
                progress("smoke: seed 001 (each test once, untimed, checked; agentproto's dict path vs classify)")
                seed001.smoke(zerodep, Failure)
            if with_sync:
                sync_bench.smoke(registry, a2a_env, sync_servers)
            if not args.no_a2a:
                a2a_bench.smoke(registry, a2a_env, a2a_only_ids)
            progress(f"smoke: {len(impls)} implementations, every adapter's output is well formed", done=True)
            return 0
        plan = PLANS["quick" if args.quick else "full"]
        started = time.monotonic()
        if impls and not args.net_only:
            whole = seed_view(impls, profile, plan, progress, steady=False)
            steady = seed_view(impls, profile, plan, progress, steady=True)
            s003 = seed003_view(impls, profile, plan, progress)
            e2e = e2e_view(impls, profile, plan, progress, cross=not args.quick)
        if impls:
            net = net_bench.measure(net_env, impls, plan, args.quick)
        if with_seed001:
            s001 = seed001.measure("quick" if args.quick else "full", zerodep, progress, Failure)
        if with_sync:
            sync = sync_bench.measure(registry, a2a_env, args.quick, sync_servers)
        if not args.no_a2a:
            a2a = a2a_bench.measure(registry, a2a_env, args.quick, a2a_only_ids, counts=not args.no_counts)
    except Failure as failure:
        progress(f"FAILED: {failure}", done=True)
        return 1

    v = versions()
    fill_versions(impls, v)
    if a2a:
        a2a_bench.fill_versions(a2a, v, locked_crate, py_version)
    if sync:
        sync_bench.fill_versions(sync, v)
    now = dt.datetime.now(dt.UTC)
    host = re.sub(r"[^A-Za-z0-9.-]+", "-", socket.gethostname()) or "host"
    results = {
        "schema": 1,
        "date": now.strftime("%Y-%m-%d"),
        "time": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "plan": "quick" if args.quick else "full",
        "profile": profile,
        "seconds": round(time.monotonic() - started, 1),
        "build_seconds": build_seconds,
        "machine": machine(),
        "versions": v,
        "settings": plan | {"seed_cases": SEED_CASES, "python_bytecode_cache": pycache},
        "implementations": impls,
        "checks": checks,
        "whole_process": whole,
        "in_loop": steady,
        "seed003": s003,
        "e2e": e2e,
        "net": net,
        "seed001": s001,
        "sync": sync,
        "a2a": a2a,
    }
    # Only a full run of everything is committed: it replaces the previous one in bench/results/.
    complete = not (args.quick or args.only or args.no_a2a or args.a2a_only or args.no_sync or args.no_counts)
    complete = complete and not args.net_only
    complete = complete and bool(impls) and len(sync_servers) == len(registry["sync"]["servers"])
    out = args.out or (BENCH / "results" if complete else BENCH / "results" / "local")
    out.mkdir(parents=True, exist_ok=True)
    only = "-a2a" if args.a2a_only else "-sync" if sync and not impls and not a2a else ""
    only = "-net" if args.net_only else only
    stem = f"{results['date']}-{host}" + ("-quick" if args.quick else "") + only
    in_results = out.resolve() == (BENCH / "results").resolve()
    if complete and in_results:
        report.keep_latest(results, out, stem)
    paths = report.write_all(results, out / stem)
    if complete and not args.no_readme and in_results:
        report.update_readmes(results, ROOT / "README.md", BENCH / "README.md", stem)
    shown = ", ".join(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p) for p in paths)
    progress(f"report: {shown}", done=True)
    sys.stdout.write(report.headline_text(results) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
