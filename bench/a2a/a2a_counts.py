"""Counts that noise cannot hide (issue 30, item 5): instructions and allocations per request
on each A2A server, beside the time figures. Standard library only; a2a_bench.py calls `measure`.

For every server, on a fresh process per tool and one warm keep-alive connection, the bench
client runs a workload with `--hold`: it does its warm-up, says `warm` and waits; the runner
opens the window; the client sends the timed requests, prints its line and waits; the runner
closes the window; the client closes its connection. So a window holds exactly the timed
requests (and whatever work the server does for them on its other threads), never start-up,
warm-up or the connection's opening and closing.

- Instructions: user-space instructions retired by the server process, all threads, counted by
  valgrind's callgrind (the server runs under it; `callgrind_control -z` opens the window,
  `callgrind_control -d` closes it and writes the counts). The hardware counter
  (`perf stat -e instructions:u`) would be cheaper, but virtual machines often do not expose
  it (this one does not: the runner records what `perf_counter` found, and the report says
  it). Callgrind counts the same thing as `instructions:u` (the process's own instructions,
  not the kernel's), about 50 times more slowly.
- Allocations: calls into the C allocator, counted by a small LD_PRELOAD library
  (`counts/alloc_count.c`, built here with `cc` into a temporary directory) that forwards
  every call to glibc and keeps its counts in a shared file the runner reads. Rust's System
  allocator (every Rust row's) allocates through it. Python rows run with PYTHONMALLOC=malloc
  so that every object goes through it too (pymalloc would serve small ones unseen).

With several replicas (the PostgreSQL pair), both counts are the first replica's: the one the
client's sequential requests go to.

Counts do not depend on the machine's load: one run per server is enough, and quick runs
give the same figures as full ones up to the servers' own variation (hash seeds, timers).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM_SOURCE = HERE / "counts" / "alloc_count.c"

# Per plan: warm-up and timed requests of each window (instructions under callgrind are slow:
# about 50× the native time, so fewer).
PLANS = {
    "full": {"inst_warmup": 100, "inst_count": 500, "alloc_warmup": 500, "alloc_count": 3000,
             "large_warmup": 2, "large_count": 10},
    "quick": {"inst_warmup": 50, "inst_count": 200, "alloc_warmup": 100, "alloc_count": 500,
              "large_warmup": 2, "large_count": 5},
    "smoke": {"inst_warmup": 2, "inst_count": 3, "alloc_warmup": 2, "alloc_count": 3,
              "large_warmup": 0, "large_count": 1},
}  # fmt: skip
# The Python rows cost about 10 M instructions a request, which callgrind runs at a few M/s:
# at most this many there (their per-request figure needs no more to be steady).
PYTHON_INST = {"inst_warmup": 20, "inst_count": 50}
# The counted workloads: (id, client request). The floors answer only the floor request.
WORKLOADS = (("floor-request", "floor"), ("stream", "stream"))
# Allocations only (under callgrind it would take minutes a server), on every row: the 4 MiB
# message, whose bytes allocated per request say how many times a server copies the text.
LARGE = ("large", "large")
# The shim's slots (alloc_count.c).
SLOTS = ("malloc", "calloc", "realloc", "aligned", "free", "bytes", "realloc_null", "magic")
MAGIC = 0xA110C0DE
# A server under callgrind starts far more slowly than natively (Python: its imports).
START_TIMEOUT = 300.0
WINDOW_TIMEOUT = 900.0


def perf_counter() -> str:
    """Whether `perf stat -e instructions:u` counts on this machine: "yes", or why not."""
    perf = shutil.which("perf")
    if perf is None:
        return "no perf on PATH"
    try:
        out = subprocess.run(
            [perf, "stat", "-x", ",", "-e", "instructions:u", "--", "true"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"perf did not run: {exc}"
    first = (out.stderr.strip().splitlines() or [""])[0]
    value = first.split(",")[0]
    if out.returncode == 0 and value.isdigit() and int(value) > 0:
        return "yes"
    if value.startswith("<"):  # perf's `<not supported>` / `<not counted>`
        return value.strip("<>")
    return (first or out.stderr.strip())[:200] or f"exit {out.returncode}"


def tools_missing() -> list[str]:
    return [t for t in ("valgrind", "callgrind_control", "cc") if shutil.which(t) is None]


def build_shim(env, into: Path) -> Path:
    """Compiles the allocation counter into `into`; returns the library's path."""
    lib = into / "alloc_count.so"
    argv = ["cc", "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o", str(lib), str(SHIM_SOURCE)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise env.Failure(f"building the allocation counter failed: {out.stderr[-2000:]}")
    return lib


def read_slots(env, path: Path) -> dict[str, int]:
    raw = path.read_bytes() if path.exists() else b""
    if len(raw) != 8 * len(SLOTS):
        raise env.Failure(f"allocation counts file {path}: {len(raw)} bytes (the counter was not loaded)")
    values = dict(zip(SLOTS, struct.unpack(f"<{len(SLOTS)}Q", raw), strict=True))
    if values["magic"] != MAGIC:
        raise env.Failure(f"allocation counts file {path}: not written by the counter")
    return values


def context_switches(pid: int) -> int:
    """Voluntary and involuntary context switches of every live thread of `pid` (threads that
    ended since are not in /proc any more: an undercount if a server's threads come and go)."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            text = status.read_text()
        except OSError:  # the thread ended while we read
            continue
        for line in text.splitlines():
            if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                total += int(line.split()[1])
    return total


def callgrind_total(env, path: Path) -> int:
    """The instruction total of one callgrind dump (its `totals:` line, else `summary:`)."""
    found = {}
    for line in path.read_text(errors="replace").splitlines():
        key, _, value = line.partition(":")
        if key in ("totals", "summary") and value.strip():
            found[key] = int(value.split()[0])
    if not found:
        raise env.Failure(f"callgrind dump {path} has no totals")
    return found.get("totals", found.get("summary", 0))


class Held:
    """One `latency --hold` client: started, warm, then stepped by the runner."""

    def __init__(self, env, argv: list[str]) -> None:
        self.env, self.argv = env, argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf = b""

    def line(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise self.env.Failure(f"no answer within {timeout:g} s from {' '.join(self.argv)}")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")[-1000:] if self.proc.poll() is not None else ""
                raise self.env.Failure(f"{' '.join(self.argv)} ended early: {self.buf[-600:]!r} {err}")
            self.buf += chunk
        raw, _, self.buf = self.buf.partition(b"\n")
        try:
            return json.loads(raw)
        except ValueError:
            raise self.env.Failure(f"not JSON from {' '.join(self.argv)}: {raw[:300]!r}") from None

    def go(self) -> None:
        self.proc.stdin.write(b"\n")
        self.proc.stdin.flush()

    def finish(self, timeout: float) -> None:
        self.go()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise self.env.Failure(f"{' '.join(self.argv)} did not end within {timeout:g} s") from None
        if self.proc.returncode != 0:
            raise self.env.Failure(f"{' '.join(self.argv)}: exit {self.proc.returncode}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            pipe.close()


def window(env, argv: list[str], opened, closed, count: int) -> tuple[dict, object, object]:
    """Runs one held client: `opened()` once it is warm, `closed()` once its timed requests are
    answered (before it closes its connection). Returns its line and the two callbacks' values."""
    client = Held(env, argv + ["--hold"])
    try:
        first = client.line(WINDOW_TIMEOUT)
        if first.get("status") != "warm":
            raise env.Failure(f"{' '.join(argv)}: expected the warm line, got {str(first)[:300]}")
        before = opened()
        client.go()
        line = client.line(WINDOW_TIMEOUT)
        if line.get("status") != "ok" or line.get("count") != count:
            raise env.Failure(f"{' '.join(argv)}: {str(line)[:600]}")
        after = closed()
        client.finish(60)
        return line, before, after
    finally:
        client.stop()


def _client_argv(client: list[str], spec: dict, port: int, req: str, warm: int, count: int, expect: list[str]):
    grpc = ["--grpc"] if spec.get("transport") == "grpc" else []
    argv = client + ["latency"] + grpc + ["--port", str(port), "--request", req]
    argv += ["--warmup", str(warm), "--count", str(count)]
    for s in expect:
        argv += ["--expect", s]
    return argv


def _workloads(spec: dict) -> tuple[tuple[str, str], ...]:
    return WORKLOADS[:1] if spec.get("floor") else WORKLOADS


def _expect(spec: dict, expect: list[str]) -> list[str]:
    return ['"result":{}'] if spec.get("floor") else expect


def allocations(env, start, spec: dict, client: list[str], expect: list[str], plan: dict, shim: Path) -> dict:
    """Allocator calls per request, per workload, on one fresh server with the counter loaded."""
    counts = Path(tempfile.mkdtemp(prefix="agentproto-bench-allocs-")) / "counts.bin"
    extra = {"LD_PRELOAD": str(shim), "BENCH_ALLOC_COUNTS": str(counts)}
    if spec.get("language") == "Python":
        extra["PYTHONMALLOC"] = "malloc"
    server = start(spec, extra_env=extra)
    out = {}
    try:
        for wid, req in (*_workloads(spec), LARGE):
            prefix = "large_" if wid == "large" else "alloc_"
            warm, count = plan[prefix + "warmup"], plan[prefix + "count"]
            argv = _client_argv(client, spec, server.port, req, warm, count, _expect(spec, expect))

            def snap() -> dict[str, int]:  # the first replica's: the one the client talks to
                return read_slots(env, Path(f"{counts}.{server.pid}")) | {"switches": context_switches(server.pid)}

            line, before, after = window(env, argv, snap, snap, count)
            d = {k: after[k] - before[k] for k in (*SLOTS, "switches") if k != "magic"}
            allocs = d["malloc"] + d["calloc"] + d["aligned"] + d["realloc_null"]
            # Every A2A server allocates for a request; none seen means the counter is not in the
            # allocation path (a static binary, a custom global allocator), not a free server.
            if allocs == 0 and not spec.get("floor"):
                raise env.Failure(f"{spec['id']} {wid}: the allocation counter saw no allocation")
            out[wid] = {
                "requests": count,
                "allocations": allocs,
                "reallocations": d["realloc"] - d["realloc_null"],
                "frees": d["free"],
                "bytes": d["bytes"],
                "per_request": allocs / count,
                "reallocs_per_request": (d["realloc"] - d["realloc_null"]) / count,
                "bytes_per_request": d["bytes"] / count,
                # Not an allocation: the server's context switches in the same window (its
                # threads handing work to each other and waiting for the network).
                "context_switches_per_request": d["switches"] / count,
                "p50_ns": line["p50_ns"],
            }
        if server.exited():
            raise env.Failure(f"{spec['id']} exited during the allocation count: {server.stop()}")
    finally:
        server.stop()
        shutil.rmtree(counts.parent, ignore_errors=True)
    return out


def instructions(env, start, spec: dict, client: list[str], expect: list[str], plan: dict) -> dict:
    """User-space instructions per request, per workload, on one fresh server under callgrind."""
    dumps = Path(tempfile.mkdtemp(prefix="agentproto-bench-callgrind-"))
    prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={dumps}/cg.%p", "--dump-instr=no"]
    prefix += ["--vgdb=yes", "--log-file=" + str(dumps / "valgrind.log")]
    server = start(spec, wrap=prefix, start_timeout=START_TIMEOUT)
    out = {}
    try:
        pid = server.pid

        def control(flag: str) -> None:
            run = subprocess.run(["callgrind_control", flag, str(pid)], capture_output=True, text=True, timeout=120)
            if run.returncode != 0 or "OK" not in run.stdout:
                raise env.Failure(f"callgrind_control {flag} {pid} ({spec['id']}): {run.stdout} {run.stderr}")

        def dump() -> Path:  # callgrind names each dump cg.<pid>.<n>
            before = set(dumps.glob(f"cg.{pid}.*"))
            control("-d")
            new = sorted(set(dumps.glob(f"cg.{pid}.*")) - before, key=lambda p: int(p.suffix[1:]))
            if not new:
                raise env.Failure(f"callgrind wrote no dump for {spec['id']}")
            return new[-1]

        warm, count = plan["inst_warmup"], plan["inst_count"]
        if spec.get("language") == "Python":
            warm, count = min(warm, PYTHON_INST["inst_warmup"]), min(count, PYTHON_INST["inst_count"])
        for wid, req in _workloads(spec):
            argv = _client_argv(client, spec, server.port, req, warm, count, _expect(spec, expect))
            line, _, path = window(env, argv, lambda: control("-z"), dump, count)
            total = callgrind_total(env, path)
            if total < count:
                raise env.Failure(f"{spec['id']} {wid}: callgrind counted {total} instructions for {count} requests")
            out[wid] = {"requests": count, "instructions": total, "per_request": total / count}
        if server.exited():
            raise env.Failure(f"{spec['id']} exited under callgrind: {server.stop()}")
    finally:
        server.stop()
        shutil.rmtree(dumps, ignore_errors=True)
    return out


def measure(env, start, servers: list[dict], client: list[str], expect: list[str], plan_name: str) -> dict:
    """Both counts for every server whose row counts (all by default; `"counts": false` in
    adapters.json leaves one out). `start(spec, **options)` starts a fresh server (a2a_bench's
    `Server`); `expect`: what every A2A answer must contain. Returns the `counts` part of the
    A2A results."""
    plan = PLANS[plan_name]
    missing = tools_missing()
    if missing:
        raise env.Failure(f"the A2A counts need {', '.join(missing)} on PATH")
    counted = [s for s in servers if s.get("counts", True)]
    work = Path(tempfile.mkdtemp(prefix="agentproto-bench-shim-"))
    runs: dict = {}
    try:
        shim = build_shim(env, work)
        for s in counted:
            env.progress(f"a2a counts: allocations {s['id']}")
            runs.setdefault(s["id"], {})["allocations"] = allocations(env, start, s, client, expect, plan, shim)
            env.progress(f"a2a counts: instructions (callgrind) {s['id']}")
            runs[s["id"]]["instructions"] = instructions(env, start, s, client, expect, plan)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    env.progress(f"a2a counts: {len(counted)} servers counted", done=True)
    return {
        "settings": plan,
        "perf_instructions_u": perf_counter(),
        "instruction_tool": "valgrind --tool=callgrind (user-space instructions, all threads)",
        "allocation_tool": "LD_PRELOAD counter (bench/a2a/counts/alloc_count.c) on the C allocator",
        "runs": runs,
    }
