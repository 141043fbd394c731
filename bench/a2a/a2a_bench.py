"""The A2A part of `make bench` (seed 004's cross-language workloads and raw-socket floor).
Standard library only; bench/run.py calls `smoke` and `measure`.

One load client (`bench-a2a-client`, Rust, raw TCP) sends byte-identical requests to every
server: agentproto's A2A server, the community Rust SDK `a2a-protocol-sdk`, the official Python
`a2a-sdk`, and the raw-socket floor. Each trial starts every server afresh (order rotated from
trial to trial) and runs, on it: sequential latency for the floor request, the 256-byte echo, the
no-op and the 3-event stream; 50 concurrent connections (batches and sustained); the CPU probe.
The agent-card codec loop runs in process, interleaved the same way. Nothing asserts a timing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import a2a_counts
import a2a_pg

HERE = Path(__file__).resolve().parent

# Seed 004's raw-socket request, exactly (the notes' "Raw-socket floor benchmark"); port 0 here.
FLOOR_BODY = (
    '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"historyLength":0},'
    '"message":{"messageId":"bench-fixed-id","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
)
FLOOR_REQUEST = (
    "POST / HTTP/1.1\r\nHost: 127.0.0.1:0\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n"
    "Accept: application/json\r\nContent-Length: 181\r\n\r\n" + FLOOR_BODY
)
CANONICAL_CARD_SHA256 = "66ff3f40994dc47ea2d2cf2423f26d2fe744f26bb5daa7b9be09a4219ee44c4a"
CARD_INPUTS = {
    "1.0-clean": "a2a/vectors/agent_card_1.0.json",
    "canonical (as published)": "a2a/vectors/canonical_agent_card.json",
}

DONE = "TASK_STATE_COMPLETED"
ECHO = "Echo: benchmark"

PLANS = {
    # trials (a fresh server each); sequential: warm-up + timed requests; stream likewise;
    # concurrent: connections, warm-up per connection, batches, requests per connection (sustained);
    # CPU probe: warm-up, seconds; card codec: iterations (after 10 % as many untimed), rounds.
    "full": {"trials": 5, "warmup": 500, "count": 3000, "stream_warmup": 200, "stream_count": 1000,
             "large_warmup": 5, "large_count": 50, "memory_at_once": 8,
             "connections": 50, "conc_warmup": 5, "batches": 50, "per_connection": 50,
             "cpu_warmup": 200, "cpu_seconds": 3.0, "card_count": 100000, "card_rounds": 10},
    "quick": {"trials": 3, "warmup": 100, "count": 500, "stream_warmup": 50, "stream_count": 200,
              "large_warmup": 3, "large_count": 20, "memory_at_once": 8,
              "connections": 50, "conc_warmup": 2, "batches": 20, "per_connection": 20,
              "cpu_warmup": 100, "cpu_seconds": 1.0, "card_count": 20000, "card_rounds": 3},
    "smoke": {"trials": 1, "warmup": 0, "count": 3, "stream_warmup": 0, "stream_count": 2,
              "large_warmup": 0, "large_count": 1, "memory_at_once": 2,
              "connections": 4, "conc_warmup": 1, "batches": 2, "per_connection": 2,
              "cpu_warmup": 2, "cpu_seconds": 0.2, "card_count": 10, "card_rounds": 1},
}  # fmt: skip

# Sequential workloads: (id, client request, what every answer must and must not contain).
SEQUENTIAL = [
    ("floor-request", "floor", [DONE, ECHO], []),
    ("echo", "echo", [DONE, ECHO], []),
    ("noop", "noop", [DONE], [ECHO]),
    ("stream", "stream", [DONE, ECHO], []),
    # A maximum-size message (4 MiB less 4 KiB of text); the floors run it too: the raw-socket
    # floor's time is the transfer time the issue measures a large message against.
    ("large", "large", [DONE, ECHO], []),
]
# The workloads the floors run (with their canned answer).
FLOOR_WORKLOADS = ("floor-request", "large")


class Env:
    """What run.py lends: its path expansion, failure type, progress line and build profile."""

    def __init__(self, expand, failure, progress, profile: str) -> None:
        self.expand, self.Failure, self.progress, self.profile = expand, failure, progress, profile

    def argv(self, argv: list[str]) -> list[str]:
        return self.expand(argv, self.profile)


def run_line(env: Env, argv: list[str], timeout: float = 600) -> dict:
    """Runs one client or card process; returns its (last) JSON line."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise env.Failure(f"timed out after {timeout} s: {' '.join(argv)}") from None
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    if not lines:
        raise env.Failure(f"no output from {' '.join(argv)} (exit {out.returncode}): {out.stderr[-2000:]}")
    try:
        line = json.loads(lines[-1])
    except ValueError:
        raise env.Failure(f"not JSON from {' '.join(argv)}: {lines[-1][:300]}") from None
    if out.returncode != 0 or line.get("status") not in ("ok", "refused"):
        raise env.Failure(f"{' '.join(argv)}: exit {out.returncode}: {str(line)[:600]} {out.stderr[-1000:]}")
    return line


class Process:
    """One server process: started, `LISTENING <port>` read from its stdout, stopped."""

    def __init__(self, env: Env, sid: str, argv: list[str], extra_env: dict | None = None, timeout: float = 30) -> None:
        self.sid = sid
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=self.err,
            stdin=subprocess.DEVNULL,
            bufsize=0,  # unbuffered: select() below sees every byte not yet read
            env=os.environ | extra_env if extra_env else None,
        )
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise env.Failure(f"{sid}: no LISTENING line within {timeout:g} s: {self.stop()}")
            byte = self.proc.stdout.read(1)
            if not byte:
                raise env.Failure(f"{sid}: exited before listening: {self.stop()}")
            line += byte
        word, _, port = line.decode().strip().partition(" ")
        if word != "LISTENING" or not port.isdigit():
            raise env.Failure(f"{sid}: first line {line!r}: {self.stop()}")
        self.port = int(port)
        self.pid = self.proc.pid

    def stderr(self) -> str:
        self.err.seek(0)
        return self.err.read()[-2000:].decode("utf-8", "replace")

    def stop(self) -> str:
        """Stops the process (SIGTERM, then SIGKILL after 5 s); returns the end of its stderr."""
        if self.err.closed:
            return ""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        text = self.stderr()
        self.err.close()
        return text


class Server:
    """One server, started fresh: `replicas` processes (default 1) of the spec's command on one
    store. In the command, `{tmpdir}` is a new temporary directory (removed at stop) and `{pg}`
    a new database on the benchmark's PostgreSQL cluster. For the counts (a2a_counts.py):
    `wrap` goes before the command (a tool that runs it), `extra_env` into its environment."""

    def __init__(
        self,
        env: Env,
        spec: dict,
        pg: a2a_pg.Cluster | None,
        wrap: list[str] | None = None,
        extra_env: dict | None = None,
        start_timeout: float = 30,
    ) -> None:
        self.spec = spec
        self.tmp = tempfile.mkdtemp(prefix="agentproto-bench-a2a-")
        self.procs: list[Process] = []
        argv = env.argv(spec["server"])
        if any("{pg}" in a for a in argv):
            if pg is None:
                raise env.Failure(f"{spec['id']}: needs the PostgreSQL cluster")
            db = pg.database()
            argv = [a.replace("{pg}", db) for a in argv]
        argv = (wrap or []) + [a.replace("{tmpdir}", self.tmp) for a in argv]
        try:
            for k in range(spec.get("replicas", 1)):
                self.procs.append(Process(env, f"{spec['id']} (replica {k + 1})", argv, extra_env, start_timeout))
        except BaseException:
            self.stop()
            raise
        self.ports = [p.port for p in self.procs]
        self.pids = [p.pid for p in self.procs]
        self.port, self.pid = self.ports[0], self.pids[0]

    def exited(self) -> bool:
        return any(p.proc.poll() is not None for p in self.procs)

    def stop(self) -> str:
        """Stops every process; returns the end of their stderr."""
        text = "\n".join(p.stop() for p in self.procs)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return text


def check_requests(env: Env, client: list[str]) -> dict:
    """The client's requests: the floor request must be the seed's, byte for byte."""
    line = run_line(env, client + ["requests"])
    reqs = line["requests"]
    if reqs.get("floor") != FLOOR_REQUEST:
        raise env.Failure(f"the client's floor request is not seed 004's: {reqs.get('floor')!r}")
    if len(FLOOR_BODY.encode()) != 181:
        raise env.Failure("seed 004's floor body is 181 bytes")
    out = {}
    for name, raw in reqs.items():
        head, _, body = raw.partition("\r\n\r\n")
        out[name] = {
            "bytes": len(raw.encode()),
            "body_bytes": len(body.encode()),
            "sha256": hashlib.sha256(raw.encode()).hexdigest(),
            "body": body if len(body) < 400 else body[:200] + "…",
        }
    if '"text":"' + "A" * 256 + '"' not in reqs["echo"]:
        raise env.Failure("the echo request does not carry 256 x 'A'")
    return out


def flags(expect: list[str], forbid: list[str]) -> list[str]:
    out = []
    for s in expect:
        out += ["--expect", s]
    for s in forbid:
        out += ["--forbid", s]
    return out


def one_server(env: Env, spec: dict, client: list[str], plan: dict, clk_tck: int, pg) -> dict:
    """Every workload once on a fresh server (sequential and CPU workloads on its first replica,
    concurrent connections spread over all of them; CPU counted for all of them)."""
    server = Server(env, spec, pg)
    # A gRPC row: the same workloads as gRPC calls (the client's --grpc flag).
    grpc = ["--grpc"] if spec.get("transport") == "grpc" else []
    out = {}
    try:
        port = ["--port", str(server.port)]
        floor = spec.get("floor", False)

        def sequential(wid: str, req: str, expect: list[str], forbid: list[str]) -> None:
            if floor and wid not in FLOOR_WORKLOADS:
                return
            if floor:
                expect, forbid = ['"result":{}'], []
            stream = req == "stream"
            prefix = req + "_" if req in ("stream", "large") else ""
            warm, count = plan[prefix + "warmup"], plan[prefix + "count"]
            argv = client + ["latency"] + grpc + port + ["--request", req, "--warmup", str(warm), "--count", str(count)]
            line = run_line(env, argv + flags(expect, forbid))
            if line["count"] != count:
                raise env.Failure(f"{spec['id']} {wid}: {line['count']} timed requests, expected {count}")
            if stream and line["events"] < 3:
                raise env.Failure(f"{spec['id']} stream: {line['events']} events, expected at least 3")
            if floor and line["body_bytes"] != 259:
                raise env.Failure(f"floor answered {line['body_bytes']} body bytes, expected 259")
            out[wid] = line

        for workload in SEQUENTIAL:
            if workload[0] != "large":
                sequential(*workload)
        if not floor:
            argv = (
                client
                + ["concurrent"]
                + grpc
                + [a for p in server.ports for a in ("--port", str(p))]
                + ["--request", "echo"]
            )
            for key, opt in (
                ("connections", "--connections"),
                ("conc_warmup", "--warmup"),
                ("batches", "--batches"),
                ("per_connection", "--per-connection"),
            ):
                argv += [opt, str(plan[key])]
            line = run_line(env, argv + flags([DONE, ECHO], []))
            if line["sustained_requests"] != plan["connections"] * plan["per_connection"]:
                raise env.Failure(f"{spec['id']} concurrent: {line}")
            out["concurrent"] = line
        expect = ['"result":{}'] if floor else [DONE]
        pids = [a for pid in server.pids for a in ("--pid", str(pid))]
        argv = client + ["cpu"] + grpc + port + pids + ["--clk-tck", str(clk_tck), "--request", "floor"]
        argv += ["--warmup", str(plan["cpu_warmup"]), "--seconds", str(plan["cpu_seconds"])]
        line = run_line(env, argv + flags(expect, []))
        if line["requests"] < 1:
            raise env.Failure(f"{spec['id']} cpu probe served no request")
        out["cpu"] = line
        # The large message runs last: the tasks it leaves in the store would weigh on the rest.
        for workload in SEQUENTIAL:
            if workload[0] == "large":
                sequential(*workload)
        if server.exited():
            raise env.Failure(f"{spec['id']} exited during the trial: {server.stop()}")
    finally:
        server.stop()
    return out


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line[len(field) :].split()[0])
    raise ValueError(f"no {field} in /proc/{pid}/status")


def memory_probe(env: Env, spec: dict, client: list[str], plan: dict, pg, body_bytes: int) -> dict | None:
    """Peak memory for maximum-size messages (issue 35's measure, as crates/cli/tests/
    large_messages.rs takes it): on a fresh server, one floor request, then `memory_at_once`
    large SendMessages at once on as many connections; the growth of the server's peak resident
    memory (VmHWM, reset through clear_refs before them) over its resident memory before them,
    relative to the bodies' total. JSON-RPC rows with one process only (not the floors)."""
    if spec.get("floor") or spec.get("transport") == "grpc" or spec.get("replicas", 1) != 1:
        return None
    at_once = plan["memory_at_once"]
    server = Server(env, spec, pg)
    try:
        port = ["--port", str(server.port)]
        run_line(env, client + ["latency"] + port + ["--request", "floor", "--warmup", "0", "--count", "1"])
        Path(f"/proc/{server.pid}/clear_refs").write_text("5")
        before = _kib(server.pid, "VmRSS:")
        argv = client + ["concurrent"] + port + ["--request", "large", "--connections", str(at_once)]
        argv += ["--warmup", "0", "--batches", "1", "--per-connection", "0"]
        run_line(env, argv + flags([DONE, ECHO], []))
        peak = _kib(server.pid, "VmHWM:")
        if server.exited():
            raise env.Failure(f"{spec['id']} exited during the memory probe: {server.stop()}")
    finally:
        server.stop()
    bodies = at_once * body_bytes
    growth = max(0, peak - before) * 1024
    return {"at_once": at_once, "body_bytes": body_bytes, "rss_before_kib": before, "hwm_kib": peak,
            "growth_bytes": growth, "growth_per_bodies": growth / bodies}  # fmt: skip


def card_round(env: Env, spec: dict, plan: dict, label: str, path: str) -> dict:
    count = plan["card_count"]
    argv = env.argv(spec["card"]) + ["--input", str(env.argv([path])[0]), "--count", str(count)]
    line = run_line(env, argv + ["--warmup", str(max(1, count // 10))])
    if line["status"] == "ok":
        if line["count"] != count:
            raise env.Failure(f"{spec['id']} card: {line}")
        if label == "1.0-clean":  # what it re-encodes means the same as what it read
            source = json.loads(Path(env.argv([path])[0]).read_text())
            if json.loads(line["encoded"]) != source:
                raise env.Failure(f"{spec['id']} card: its encoding differs from the input: {line['encoded']}")
    return line


def selected(registry: dict, only: set[str] | None) -> list[dict]:
    """The servers to run: all, or those named in `only` (run.py's `--only` with A2A server ids)."""
    servers = registry["a2a"]["servers"]
    return servers if not only else [s for s in servers if s["id"] in only]


def run_all(registry: dict, env: Env, plan_name: str, only: set[str] | None = None, counts: bool = True) -> dict:
    spec = registry["a2a"]
    plan = PLANS[plan_name]
    servers = selected(registry, only)
    client = env.argv(spec["client"])
    clk_tck = os.sysconf("SC_CLK_TCK")
    canonical = (HERE / "vectors" / "canonical_agent_card.json").read_bytes()
    if hashlib.sha256(canonical).hexdigest() != CANONICAL_CARD_SHA256:
        raise env.Failure("bench/a2a/vectors/canonical_agent_card.json is not seed 004's file")
    requests = check_requests(env, client)
    env.progress("a2a: requests checked (the floor request is seed 004's, byte for byte)", done=True)

    runs: dict = {s["id"]: {} for s in servers}
    counted = None
    pg = a2a_pg.Cluster(env.Failure) if any("{pg}" in a for s in servers for a in s["server"]) else None
    try:
        for trial in range(plan["trials"]):
            k = trial % len(servers)
            for s in servers[k:] + servers[:k]:
                env.progress(f"a2a: trial {trial + 1}/{plan['trials']} {s['id']}")
                for wid, line in one_server(env, s, client, plan, clk_tck, pg).items():
                    runs[s["id"]].setdefault(wid, []).append(line)
                memory = memory_probe(env, s, client, plan, pg, requests["large"]["body_bytes"])
                if memory is not None:
                    runs[s["id"]].setdefault("memory", []).append(memory)
        env.progress(f"a2a: servers done ({plan['trials']} trials)", done=True)
        # Instructions and allocations per request (issue 30, item 5), after the timed trials.
        if counts:

            def start(s: dict, **options) -> Server:
                return Server(env, s, pg, **options)

            counted = a2a_counts.measure(env, start, servers, client, [DONE, ECHO], plan_name)
    finally:
        if pg is not None:
            pg.stop()

    coders = [s for s in servers if "card" in s]
    cases = [(s, label, path) for label, path in CARD_INPUTS.items() for s in coders]
    card: dict = {s["id"]: {label: [] for label in CARD_INPUTS} for s in coders}
    for r in range(plan["card_rounds"] if cases else 0):
        k = r % len(cases)
        for s, label, path in cases[k:] + cases[:k]:
            env.progress(f"a2a: card codec round {r + 1}/{plan['card_rounds']} {s['id']} {label}")
            card[s["id"]][label].append(card_round(env, s, plan, label, path))
    env.progress(f"a2a: card codec done ({plan['card_rounds']} rounds)", done=True)
    return {
        "plan": plan_name,
        "settings": plan,
        "clk_tck": clk_tck,
        "requests": requests,
        "card_inputs": {label: path for label, path in CARD_INPUTS.items()},
        "servers": servers,
        "runs": runs,
        "counts": counted,
        "card": card,
    }


def npm_version(package: str) -> str:
    """The version of a package installed under bench/ts (`?` when it is not)."""
    try:
        return json.loads((HERE.parent / "ts" / "node_modules" / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def fill_versions(results: dict, v: dict, locked_crate, py_version) -> None:
    """Fills the servers' version strings (run.py's `versions()` and its look-ups)."""
    has = [m for m in ("uvloop", "httptools") if importlib.util.find_spec(m) is not None]
    impl = "+".join(has) if has else "asyncio + h11: uvloop and httptools are not installed"
    values = {
        "{commit}": v["agentproto"],
        "{a2a_protocol_sdk}": locked_crate("a2a-protocol-sdk"),
        "{a2a_sdk}": py_version("a2a-sdk"),
        "{uvicorn}": py_version("uvicorn"),
        "{agentproto_python}": v["agentproto (python/)"],
        "{msgspec}": v["msgspec (PyPI)"],
        "{uvicorn_impl}": impl,
        "{protobuf}": py_version("protobuf"),
        "{rustc}": v["rustc"].split(" (")[0].removeprefix("rustc "),
        "{hyper}": locked_crate("hyper"),
        "{postgresql}": a2a_pg.version(),
        "{serde_json}": locked_crate("serde_json"),
        "{tonic}": locked_crate("tonic"),
        "{grpcio}": py_version("grpcio"),
        "{a2a_server_lf}": locked_crate("a2a-server-lf"),
        "{a2a_lf}": locked_crate("a2a-lf"),
        "{a2a_grpc}": locked_crate("a2a-grpc"),
        "{axum}": locked_crate("axum"),
        "{node}": v.get("node", "?"),
        "{a2a_js}": npm_version("@a2a-js/sdk"),
        "{express}": npm_version("express"),
    }
    for server in results["servers"]:
        for key, value in values.items():
            server["version"] = server["version"].replace(key, value)
    results["versions"] = {
        "a2a-protocol-sdk (crate)": values["{a2a_protocol_sdk}"],
        "a2a-protocol-types (crate)": locked_crate("a2a-protocol-types"),
        "hyper (crate)": locked_crate("hyper"),
        "axum (crate)": locked_crate("axum"),
        "a2a-sdk (PyPI)": values["{a2a_sdk}"],
        "uvicorn (PyPI)": values["{uvicorn}"],
        "starlette (PyPI)": py_version("starlette"),
        "protobuf (PyPI)": values["{protobuf}"],
        "tonic (crate)": values["{tonic}"],
        "grpcio (PyPI)": values["{grpcio}"],
        "a2a-server-lf (crate)": values["{a2a_server_lf}"],
        "a2a-lf (crate)": values["{a2a_lf}"],
        "a2a-grpc (crate)": values["{a2a_grpc}"],
        "@a2a-js/sdk (npm)": values["{a2a_js}"],
        "express (npm)": values["{express}"],
    }


def builds(registry: dict, only: set[str] | None = None) -> set[str]:
    spec = registry["a2a"]
    return {spec["client_build"]} | {s["build"] for s in selected(registry, only)}


def smoke(registry: dict, env: Env, only: set[str] | None = None) -> dict:
    """Every server and card adapter with tiny counts; output checked, no timing."""
    out = run_all(registry, env, "smoke", only)
    cards = sum(1 for s in out["servers"] if "card" in s)
    env.progress(f"a2a smoke: {len(out['servers'])} servers and {cards} card codecs answer as they should", done=True)
    return out


def measure(registry: dict, env: Env, quick: bool, only: set[str] | None = None, counts: bool = True) -> dict:
    return run_all(registry, env, "quick" if quick else "full", only, counts)
