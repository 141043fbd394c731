"""What one SendMessage costs the PostgreSQL store: round trips, transactions, statements,
PostgreSQL CPU and server CPU per send, sequential and at 50 connections. Standard library only.

    .venv/bin/python bench/a2a/pg_cost.py [--no-build] [--replicas 1|2] [--runs 3] [--json OUT]

Starts its own PostgreSQL (`a2a_pg.Cluster`, default durability, with `pg_stat_statements`
preloaded), builds the benchmark's server and load client (`cargo build --release` in
bench/rust, unless `--no-build`), starts the server with `--store postgres` on a fresh
database and sends the echo request (the EchoExecutor's turn: working, an artifact,
completed). Around each measured run it takes two snapshots and divides their difference by
the sends of the run:

- from the server (its `stats` line on stdin, see bench/a2a/agentproto/src/server.rs): the
  store's own counters — commits, round trips (exchanges the store awaited: statements sent
  together in one flight count once), statements and transactions;
- from PostgreSQL: committed transactions of the database (`pg_stat_database.xact_commit`,
  read once the backends have published their counters; a LISTENing backend commits one
  more transaction for each notice it reads, so with N replicas listening this is the
  store's transactions plus N per notice) and statements executed in it
  (`pg_stat_statements`, utility statements such as BEGIN and COMMIT included);
- from /proc/PID/schedstat (ns): CPU time of the PostgreSQL processes — the backends serving the
  database, and every other child of the postmaster (WAL writer, checkpointer, ...) — and of
  the server process(es).

Counts, not times, are the point: they do not move with the machine's noise. The medians of
`--runs` runs are printed; `--json` writes every run. A server without the `stats` line (an
older build, given with `--server`) gets the PostgreSQL and /proc columns only.
"""

from __future__ import annotations

import argparse
import json
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path

import a2a_pg

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
RELEASE = BENCH / "rust" / "target" / "release"
STATS_TIMEOUT = 10.0
# An idle PostgreSQL backend publishes its pending statistics within 10 s (PGSTAT_IDLE_INTERVAL).
SETTLE = 11.0
LIMIT = 600  # seconds any one client run may take


class Failure(Exception):
    pass


def build() -> None:
    argv = ["cargo", "build", "--release", "--manifest-path", str(BENCH / "rust" / "Cargo.toml"),
            "-p", "bench-a2a-agentproto", "--bins", "-p", "bench-a2a-client"]  # fmt: skip
    if subprocess.run(argv, timeout=3600).returncode != 0:
        raise Failure("cargo build failed")


class Server:
    """One server process on `config`; `stats()` asks it for the store's counters."""

    def __init__(self, path: Path, config: str) -> None:
        argv = [str(path), "--store", "postgres", config]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        line = self._line(30.0)
        word, _, port = line.partition(" ")
        if word != "LISTENING" or not port.isdigit():
            self.stop()
            raise Failure(f"server's first line: {line!r}")
        self.port = int(port)
        self.has_stats = True

    def _line(self, timeout: float) -> str:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise Failure(f"no line from the server within {timeout} s (got {line!r})")
            byte = self.proc.stdout.read(1)
            if not byte:
                raise Failure(f"the server exited (got {line!r})")
            line += byte
        return line.decode().strip()

    def stats(self) -> dict | None:
        if not self.has_stats:
            return None
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(b"stats\n")
            line = self._line(STATS_TIMEOUT)
        except (BrokenPipeError, Failure):
            self.has_stats = False  # a server without the stats line closed its stdin or says nothing
            return None
        word, _, text = line.partition(" ")
        if word != "STATS":
            raise Failure(f"expected the server's STATS line, got {line!r}")
        return json.loads(text)

    def cpu_ns(self) -> int:
        return proc_ns(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


def proc_ns(pid: int | str) -> int:
    """CPU time of one process (all its threads) in ns, from /proc/PID/schedstat (time on a
    CPU, user and system), which counts in ns where /proc/PID/stat counts in clock ticks; 0
    once the process is gone."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) + sum(
            int((task / "schedstat").read_text().split()[0])
            for task in Path(f"/proc/{pid}/task").iterdir()
            if task.name != str(pid)
        )
    except (OSError, ValueError, IndexError):
        return 0


def pg_ns(postmaster: int, dbname: str) -> tuple[int, int]:
    """CPU ns of the postmaster's children: (backends of `dbname`, every other child)."""
    backends = others = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) != postmaster:
            continue
        ns = proc_ns(entry.name)
        if f" {dbname} " in f" {cmdline} ":
            backends += ns
        else:
            others += ns
    return backends, others


class Snapshot:
    def __init__(self, cluster: a2a_pg.Cluster, servers: list[Server], dbname: str, oid: str) -> None:
        self.stats = [s.stats() for s in servers]
        self.xact = settled_xact(cluster, dbname)
        rows = cluster.psql(f"SELECT COALESCE(SUM(calls), 0) FROM pg_stat_statements WHERE dbid = {oid}")
        self.statements = int(rows[0][0])
        assert cluster.proc is not None
        self.backends, self.others = pg_ns(cluster.proc.pid, dbname)
        self.server = sum(s.cpu_ns() for s in servers)


def settled_xact(cluster: a2a_pg.Cluster, dbname: str) -> int:
    """`xact_commit` of the database once every backend has published its count: an idle
    backend does within 10 s (PGSTAT_IDLE_INTERVAL). The server's own background work
    (lease sweeps, the push worker, the listener's ping) commits a few transactions in
    that time too, and they count."""
    time.sleep(SETTLE)  # PostgreSQL's publication interval, not a synchronisation with our processes
    sql = f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{dbname}'"
    return int(cluster.psql(sql)[0][0])


def per_send(before: Snapshot, after: Snapshot, sends: int) -> dict:
    us = 1e-3 / sends
    out = {
        "sends": sends,
        "pg_transactions": (after.xact - before.xact) / sends,
        "pg_statements": (after.statements - before.statements) / sends,
        "pg_backend_cpu_us": (after.backends - before.backends) * us,
        "pg_other_cpu_us": (after.others - before.others) * us,
        "server_cpu_us": (after.server - before.server) * us,
    }
    if all(s is not None for s in before.stats + after.stats):
        pairs = list(zip(after.stats, before.stats, strict=True))
        for name in before.stats[0]:
            out["store_" + name] = sum(a[name] - b[name] for a, b in pairs) / sends
    return out


def client(path: Path, argv: list[str]) -> dict:
    out = subprocess.run([str(path)] + argv + ["--expect", '"TASK_STATE_COMPLETED"'], capture_output=True,
                         text=True, timeout=LIMIT)  # fmt: skip
    lines = out.stdout.strip().splitlines()
    line = json.loads(lines[-1]) if lines else {}
    if out.returncode != 0 or line.get("status") != "ok":
        raise Failure(f"client {argv}: exit {out.returncode}: {out.stdout[-600:]} {out.stderr[-600:]}")
    return line


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-build", action="store_true", help="use the binaries as built")
    ap.add_argument("--server", type=Path, default=RELEASE / "bench-a2a-agentproto-server")
    ap.add_argument("--client", type=Path, default=RELEASE / "bench-a2a-client")
    ap.add_argument("--replicas", type=int, default=1, help="server processes on the one database")
    ap.add_argument("--runs", type=int, default=3, help="measured runs of each workload (medians printed)")
    ap.add_argument("--count", type=int, default=1000, help="sequential sends per run")
    ap.add_argument("--connections", type=int, default=50)
    ap.add_argument("--per-connection", type=int, default=40, help="sends per connection per run")
    ap.add_argument("--json", type=Path, help="write every run here")
    args = ap.parse_args()
    if not args.no_build:
        build()

    statements = ("shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track_utility=on")
    cluster = a2a_pg.Cluster(Failure, statements)
    servers: list[Server] = []
    try:
        cluster.psql("CREATE EXTENSION pg_stat_statements")
        config = cluster.database()
        dbname = config.rsplit("dbname=", 1)[1]
        oid = cluster.psql(f"SELECT oid FROM pg_database WHERE datname = '{dbname}'")[0][0]
        for _ in range(args.replicas):
            servers.append(Server(args.server, config))
        ports = [a for s in servers for a in ("--port", str(s.port))]
        # Warm-up: every connection of every pool opened, every statement prepared.
        client(args.client, ["latency", "--port", str(servers[0].port), "--request", "echo",
                             "--warmup", "0", "--count", "200"])  # fmt: skip
        client(args.client, ["concurrent", *ports, "--request", "echo", "--connections", str(args.connections),
                             "--warmup", "2", "--batches", "1", "--per-connection", "5"])  # fmt: skip
        runs: dict[str, list[dict]] = {"sequential": [], "concurrent": []}
        for _ in range(args.runs):
            before = Snapshot(cluster, servers, dbname, oid)
            line = client(args.client, ["latency", "--port", str(servers[0].port), "--request", "echo",
                                        "--warmup", "0", "--count", str(args.count)])  # fmt: skip
            after = Snapshot(cluster, servers, dbname, oid)
            runs["sequential"].append(per_send(before, after, args.count) | {"p50_us": line["p50_ns"] / 1000})
            before = after
            line = client(args.client, ["concurrent", *ports, "--request", "echo",
                                        "--connections", str(args.connections), "--warmup", "0", "--batches", "1",
                                        "--per-connection", str(args.per_connection)])  # fmt: skip
            after = Snapshot(cluster, servers, dbname, oid)
            sends = args.connections * (1 + args.per_connection)
            runs["concurrent"].append(per_send(before, after, sends) | {"sustained_rps": line["sustained_rps"]})
    finally:
        for server in servers:
            server.stop()
        cluster.stop()

    report(runs, args)
    if args.json:
        args.json.write_text(json.dumps({"replicas": args.replicas, "runs": runs}, indent=1) + "\n")
    return 0


COLUMNS = [
    ("store_commits", "commits", "{:.2f}"),
    ("store_round_trips", "round trips", "{:.2f}"),
    ("store_statements", "statements", "{:.2f}"),
    ("store_transactions", "transactions", "{:.2f}"),
    ("store_other_calls", "other calls", "{:.2f}"),
    ("pg_transactions", "PG xacts", "{:.2f}"),
    ("pg_statements", "PG stmts", "{:.2f}"),
    ("pg_backend_cpu_us", "PG backend us", "{:.0f}"),
    ("pg_other_cpu_us", "PG other us", "{:.0f}"),
    ("server_cpu_us", "server us", "{:.0f}"),
]


def report(runs: dict, args: argparse.Namespace) -> None:
    print(f"per SendMessage (echo), PostgreSQL store, {args.replicas} replica(s); medians of {args.runs} runs")
    head = ["workload", *(label for _, label, _ in COLUMNS), "p50 us / sends/s"]
    rows = []
    for name, label in (("sequential", "sequential"), ("concurrent", f"{args.connections} connections")):
        lines = runs[name]
        cells = [label]
        for key, _, fmt in COLUMNS:
            values = [line[key] for line in lines if key in line]
            cells.append(fmt.format(statistics.median(values)) if values else "n/a")
        speed = "p50_us" if name == "sequential" else "sustained_rps"
        cells.append(f"{statistics.median(line[speed] for line in lines):.0f}")
        rows.append(cells)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print(f"pg_cost: {e}", file=sys.stderr)
        sys.exit(1)
