"""The sync-channel part of `make bench` (seed 002's workloads against the pinned `tsc --api`
of `typescript@7.0.2` and of `typescript@7.1.0-beta`, one server after the other). Standard
library only; bench/run.py calls `select_servers`, `builds`, `smoke` and `measure`,
bench/sync/sync_report.py renders what `measure` returns.

Every implementation is one driver process per round speaking one contract (bench/README.md,
"Sync channel"): agentproto's Rust, TypeScript and Python clients, the official synchronous
and asynchronous JS clients shipped inside the `typescript` package, and a raw pipe floor.
Per server, all of them talk to the same `tsc` binary, open the same project (written to a
temporary directory at run time) and ask the same questions; the runner checks that they got
the same answers (bytes transferred, nodes walked, symbols found). Nothing asserts a timing.

The servers (adapters.json, `sync.servers`) differ in their method set, not in the channel:
the runner tells each driver which release it talks to (`server` in the inputs file, with the
npm install the official clients come from), and each driver opens the project the way that
release wants (agentproto's through its typed `tsc` layer, configured with the release, which
fails if the server answers `initialize` like another one). Both servers get the same project
files (the lib files of the 7.0.2 install), so that their numbers compare.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INTEROP = ROOT / "interop" / "tsc-api"
TSC_LIB = INTEROP / "node_modules" / "@typescript" / "typescript-linux-x64" / "lib"  # the project's lib files
SERVER_ENV = "SYNC_SERVER"  # `make bench` without run.py's --sync-server: a comma-separated choice

# The inputs: three lib files shipped with the compiler (the size classes of the seed's
# debug.ts, program.ts and checker.ts), and agentproto's own TypeScript sync module as the
# project's real .ts files. The symbol workloads ask about every identifier of one of them.
LIB_FILES = {"small": "lib.es2015.core.d.ts", "medium": "lib.es5.d.ts", "large": "lib.dom.d.ts"}
SOURCES = ROOT / "ts" / "src" / "sync"
SYMBOL_FILE = "src/ast.ts"
ECHO_PAYLOAD = '"hello"'  # the seed's example payload, 7 bytes
SMOKE_POSITIONS = 64

# (id, title); the order every driver runs them in. `{open}`: the server's project-opening method.
WORKLOADS = [
    ("spawn", "spawn → first answer (a fresh server, one `echo`)"),
    ("load-cold", "load project, cold: `{open}` on a fresh server"),
    ("load-warm", "load project, warm: `{open}` again, nothing changed"),
    ("echo", "`echo` round trip, 7 bytes (channel cost alone)"),
    ("transfer-small", "transfer small: `getSourceFile`"),
    ("transfer-medium", "transfer medium: `getSourceFile`"),
    ("transfer-large", "transfer ~2 MB: `getSourceFile`"),
    ("materialize-small", "materialize small: walk every node"),
    ("materialize-medium", "materialize medium: walk every node"),
    ("materialize-large", "materialize ~2 MB: walk every node"),
    ("symbol-once", "`getSymbolAtPosition`, one call"),
    ("symbol-each", "`getSymbolAtPosition` per identifier"),
    ("symbol-batched", "`getSymbolsAtPositions`, every identifier in one call"),
]

PLANS = {
    # rounds (one driver process per implementation per round, order rotated); per workload
    # (untimed warm-up iterations, timed iterations) in each round; the server-time diagnostic.
    "full": {"rounds": 4, "counts": {
        "spawn": (3, 15), "load-cold": (1, 5), "load-warm": (20, 200), "echo": (2000, 10000),
        "transfer-small": (50, 300), "transfer-medium": (10, 60), "transfer-large": (3, 12),
        "materialize-small": (50, 300), "materialize-medium": (10, 40), "materialize-large": (3, 8),
        "symbol-once": (500, 3000), "symbol-each": (2, 8), "symbol-batched": (5, 30)}},
    "quick": {"rounds": 3, "counts": {
        "spawn": (2, 4), "load-cold": (1, 2), "load-warm": (10, 40), "echo": (500, 2000),
        "transfer-small": (20, 60), "transfer-medium": (5, 12), "transfer-large": (2, 4),
        "materialize-small": (20, 60), "materialize-medium": (5, 10), "materialize-large": (2, 3),
        "symbol-once": (200, 600), "symbol-each": (1, 3), "symbol-batched": (3, 8)}},
    "smoke": {"rounds": 1, "counts": {w: (0, 1) for w, _ in WORKLOADS}},
}  # fmt: skip

# What must agree between implementations: workload -> detail fields.
SAME_ANSWER = {
    "load-cold": ["root_files"],
    "load-warm": ["root_files"],
    "echo": ["bytes"],
    "transfer-small": ["bytes"],
    "transfer-medium": ["bytes"],
    "transfer-large": ["bytes"],
    "materialize-small": ["nodes", "bytes"],
    "materialize-medium": ["nodes", "bytes"],
    "materialize-large": ["nodes", "bytes"],
    "symbol-once": ["name"],
    "symbol-each": ["calls", "found"],
    "symbol-batched": ["positions", "found"],
}


def select_servers(registry: dict, choice: str | None = None) -> list[dict]:
    """The servers to run, in adapters.json's order: all of them, or those `choice` names
    (comma-separated releases, `7.1.0-beta`, or their major.minor, `7.1`); without `choice`,
    the `SYNC_SERVER` environment variable's. Raises ValueError for a name it does not know."""
    servers = registry["sync"]["servers"]
    choice = choice or os.environ.get(SERVER_ENV)
    if not choice:
        return servers
    wanted = [name.strip() for name in choice.split(",") if name.strip()]
    unknown = [name for name in wanted if not any(_names(s, name) for s in servers)]
    if unknown or not wanted:
        known = ", ".join(s["release"] for s in servers)
        raise ValueError(f"sync server {choice!r}: expected a comma-separated choice of {known} (or 7.0, 7.1)")
    return [s for s in servers if any(_names(s, name) for name in wanted)]


def _names(server: dict, name: str) -> bool:
    return name in (server["release"], ".".join(server["release"].split(".")[:2]))


def builds(registry: dict, servers: list[dict]) -> set[str]:
    spec = registry["sync"]
    return {spec["project_build"]} | {s["build"] for s in servers} | {i["build"] for i in spec["implementations"]}


def kill_tree(pid: int) -> None:
    """SIGKILLs `pid` and every descendant still running (found through /proc), whatever
    process group they are in: a driver that timed out must leave no server behind."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    doomed, stack = [], [pid]
    while stack:
        current = stack.pop()
        doomed.append(current)
        stack.extend(children.get(current, []))
    for victim in doomed:
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run_driver(env, argv: list[str], timeout: float) -> list[dict]:
    """Runs one driver process; returns its JSON lines. On a timeout the driver and all its
    descendants are killed and the driver reaped."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid)
            proc.communicate()
            raise env.Failure(f"timed out after {timeout} s: {' '.join(argv)}") from None
        except BaseException:
            kill_tree(proc.pid)
            proc.communicate()
            raise
        err.seek(0)
        stderr = err.read()[-2000:].decode("utf-8", "replace")
    lines = []
    for text in out.decode("utf-8", "replace").splitlines():
        if text.strip():
            try:
                lines.append(json.loads(text))
            except ValueError:
                raise env.Failure(f"not JSON from {' '.join(argv)}: {text[:300]}") from None
    bad = [line for line in lines if line.get("status") not in ("ok", "unsupported")]
    if proc.returncode != 0 or bad or not lines:
        what = json.dumps(bad[0])[:1500] if bad else f"exit {proc.returncode}"
        raise env.Failure(f"{' '.join(argv)}: {what} {stderr}")
    return lines


def file_info(path: Path) -> dict:
    data = path.read_bytes()
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def write_project(directory: Path) -> dict:
    """The benchmark project: the three lib files and agentproto's TypeScript sync module's
    sources, copied, with a tsconfig listing them (`noLib`: the lib files are the only
    library; `types: []`: nothing from node_modules). Returns what it holds."""
    (directory / "src").mkdir(parents=True)
    files = []
    for name in LIB_FILES.values():
        shutil.copyfile(TSC_LIB / name, directory / name)
        files.append(name)
    for source in sorted(SOURCES.glob("*.ts")):
        shutil.copyfile(source, directory / "src" / source.name)
        files.append(f"src/{source.name}")
    config = {
        "compilerOptions": {
            "noLib": True,
            "types": [],
            "strict": True,
            "target": "es2022",
            "module": "nodenext",
            "noEmit": True,
        },
        "files": files,
    }
    (directory / "tsconfig.json").write_text(json.dumps(config, indent=1) + "\n")
    return {
        "tsconfig": config,
        "files": {name: file_info(directory / name) for name in files},
        "lib_files": LIB_FILES,
        "symbol_file": SYMBOL_FILE,
        "sources_from": str(SOURCES.relative_to(ROOT)),
        "lib_from": str(TSC_LIB.relative_to(ROOT)),
    }


def workload_args(counts: dict, names: list[str]) -> list[str]:
    out = []
    for name in names:
        warmup, iterations = counts[name]
        out += ["--workload", f"{name}:{warmup}:{iterations}"]
    return out


def echo_tuple_bytes(payload: bytes) -> int:
    """Bytes of the `Response` tuple that answers an `echo` of `payload` (the floor's echo size)."""

    def bin_len(n: int) -> int:
        return 2 + n if n < 256 else 3 + n if n < 65536 else 5 + n

    return 1 + 1 + bin_len(len(b"echo")) + bin_len(len(payload))


def _fill(text: str, server: dict) -> str:
    """A registry string with the server's names in: `{opens_with}`, `{official_sync}`, `{official_async}`."""
    for key in ("opens_with", "official_sync", "official_async"):
        text = text.replace("{" + key + "}", server[key])
    return text


class Bench:
    def __init__(self, registry: dict, env, plan_name: str, server: dict) -> None:
        self.spec = registry["sync"]
        self.env = env
        self.plan_name = plan_name
        self.plan = PLANS[plan_name]
        self.server = server
        self.release = server["release"]
        # Relative to bench/, as in adapters.json.
        self.tsc = (HERE.parent / server["tsc"]).resolve()
        self.install = (HERE.parent / server["install"]).resolve()
        self.timeout = 120 if plan_name == "smoke" else 1200

    def argv(self, impl: dict, project: Path, inputs: Path) -> list[str]:
        return self.env.argv(impl["driver"]) + [
            "--tsc", str(self.tsc), "--project", str(project), "--inputs", str(inputs),
        ]  # fmt: skip

    def run(self, work: Path) -> dict:
        env = self.env
        install = self.install.relative_to(ROOT) if self.install.is_relative_to(ROOT) else self.install
        if not self.tsc.is_file():
            raise env.Failure(f"the pinned tsc {self.release} is missing at {self.tsc}: npm ci --prefix {install}")
        project = work / "project"
        described = write_project(project)
        inputs = {
            "server": self.release,
            "install": str(self.install),
            "opens_with": self.server["opens_with"],
            "official_sync": self.server["official_sync"],
            "official_async": self.server["official_async"],
            "tsconfig": str(project / "tsconfig.json"),
            "files": {size: str(project / name) for size, name in LIB_FILES.items()},
            "symbol_file": str(project / SYMBOL_FILE),
            "echo_payload": ECHO_PAYLOAD,
            "echo_tuple_bytes": echo_tuple_bytes(ECHO_PAYLOAD.encode()),
        }
        inputs_path = work / "inputs.json"
        inputs_path.write_text(json.dumps(inputs))
        impls = self.spec["implementations"]
        reference = next(i for i in impls if i["id"] == self.spec["reference"])

        # The positions every implementation asks about, and the payload sizes the floor
        # moves, from agentproto's Rust reader; the TypeScript and Python readers must find
        # the same identifiers.
        probe = ["identifiers", "transfer-small", "transfer-medium", "transfer-large"]
        first = run_driver(env, self.argv(reference, project, inputs_path) + workload_args(
            {w: (0, 1) for w in probe}, probe), self.timeout)  # fmt: skip
        by_name = {line["workload"]: line for line in first}
        positions = by_name["identifiers"]["detail"]["positions"]
        if len(positions) < 100:
            raise env.Failure(f"{SYMBOL_FILE}: only {len(positions)} identifiers")
        inputs["symbol_position"] = positions[len(positions) // 2]
        # The smoke run asks about the first identifiers only (a check of answers, not a timing).
        inputs["positions"] = positions[:SMOKE_POSITIONS] if self.plan_name == "smoke" else positions
        inputs["transfer_bytes"] = {s: by_name[f"transfer-{s}"]["detail"]["bytes"] for s in LIB_FILES}
        inputs_path.write_text(json.dumps(inputs))
        label = f"sync {self.release}"
        env.progress(f"{label}: project written, {len(positions)} identifiers in {SYMBOL_FILE}", done=True)

        names = [w for w, _ in WORKLOADS]
        counts = self.plan["counts"]
        collected: dict = {i["id"]: {} for i in impls}
        identifiers: dict = {}
        for round_no in range(self.plan["rounds"]):
            k = round_no % len(impls)
            jobs = []
            for impl in impls[k:] + impls[:k]:
                extra = ["identifiers"] if impl.get("reader") and round_no == 0 else []
                argv = self.argv(impl, project, inputs_path) + workload_args(counts | {"identifiers": (0, 1)},
                                                                             names + extra)  # fmt: skip
                jobs.append((impl, argv))
            if self.plan_name == "smoke":  # nothing is timed: the drivers may share the cores
                with ThreadPoolExecutor(max_workers=3) as pool:
                    outputs = list(pool.map(lambda job: run_driver(env, job[1], self.timeout), jobs))
            else:
                outputs = []
                for impl, argv in jobs:
                    env.progress(f"{label}: round {round_no + 1}/{self.plan['rounds']} {impl['id']}")
                    outputs.append(run_driver(env, argv, self.timeout))
            for (impl, _), lines in zip(jobs, outputs, strict=True):
                for line in lines:
                    if line["workload"] == "identifiers":
                        identifiers[impl["id"]] = line["detail"]["positions"]
                        continue
                    collected[impl["id"]].setdefault(line["workload"], []).append(line)
        for impl_id, found in identifiers.items():
            if found != positions:
                raise env.Failure(f"{label}: {impl_id}'s reader finds other identifiers than agentproto-rust's")

        runs = self.check_and_summarise(collected)
        env.progress(f"{label}: done ({self.plan['rounds']} rounds, {len(impls)} implementations)", done=True)
        described["files"] = {
            name: info
            | ({"payload_bytes": inputs["transfer_bytes"][size]} if (size := _size_of(name)) else {})
            | ({"identifiers": len(positions)} if name == SYMBOL_FILE else {})
            for name, info in described["files"].items()
        }
        return {
            "server": {
                "release": self.release,
                "install": str(install),
                "opens_with": self.server["opens_with"],
            },
            "plan": self.plan_name,
            "settings": self.plan | {"counts": {k: list(v) for k, v in counts.items()}},
            "workloads": [{"id": w, "title": t.replace("{open}", self.server["opens_with"])} for w, t in WORKLOADS],
            "tsc": str(self.tsc.relative_to(ROOT)) if self.tsc.is_relative_to(ROOT) else str(self.tsc),
            "project": described,
            "echo_payload": ECHO_PAYLOAD,
            "symbol_position": inputs["symbol_position"],
            "implementations": [
                impl | {"version": _fill(impl["version"], self.server), "does": _fill(impl["does"], self.server)}
                for impl in impls
            ],
            "runs": runs,
        }

    def check_and_summarise(self, collected: dict) -> dict:
        """The same answers everywhere (SAME_ANSWER), the expected sample counts, then
        statistics over every round's samples."""
        env = self.env
        agreed: dict = {}
        runs: dict = {}
        floors = {i["id"] for i in self.spec["implementations"] if i.get("floor")}
        for impl_id, per_workload in collected.items():
            runs[impl_id] = {}
            for workload, lines in per_workload.items():
                if lines[0]["status"] == "unsupported":
                    runs[impl_id][workload] = {"status": "unsupported", "reason": lines[0]["reason"]}
                    continue
                expected = self.plan["counts"][workload][1]
                samples = []
                for line in lines:
                    if line["iterations"] != expected or len(line["samples_ns"]) != expected:
                        raise env.Failure(
                            f"sync {self.release} {impl_id} {workload}: {line['iterations']} samples, not {expected}"
                        )
                    samples += line["samples_ns"]
                    if impl_id in floors:  # moves bytes only: nothing to compare
                        continue
                    for key in SAME_ANSWER.get(workload, []):
                        value = line["detail"].get(key)
                        seen = agreed.setdefault((workload, key), (impl_id, value))
                        if seen[1] != value:
                            raise env.Failure(
                                f"sync {self.release} {workload}: {impl_id} answered {key}={value!r}, "
                                f"{seen[0]} {seen[1]!r}"
                            )
                entry = {
                    "status": "ok",
                    "stats": _stats(samples),
                    "round_medians": [_stats(line["samples_ns"])["median"] for line in lines],
                    "detail": {k: v for k, v in lines[-1]["detail"].items() if k != "spawn_call_ns"},
                }
                if workload == "spawn":
                    entry["spawn_call"] = _stats([ns for line in lines for ns in line["detail"]["spawn_call_ns"]])
                if "first_byte_ns" in lines[0]["detail"]:
                    entry["first_byte"] = _stats([ns for line in lines for ns in line["detail"]["first_byte_ns"]])
                    entry["detail"].pop("first_byte_ns")
                runs[impl_id][workload] = entry
        return runs


def _size_of(name: str) -> str | None:
    return next((size for size, lib in LIB_FILES.items() if lib == name), None)


def _stats(values: list[float]) -> dict:
    """Median, quartiles (inclusive method) and extremes; the report's `stats` over stored numbers."""
    import statistics

    values = sorted(values)
    if not values:
        return {"n": 0}
    q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
    return {"n": len(values), "median": statistics.median(values), "min": values[0], "max": values[-1],
            "q1": q[0], "q3": q[2]}  # fmt: skip


def run_all(registry: dict, env, plan_name: str, servers: list[dict]) -> dict:
    """Every server, one after the other, each on a project of its own (the same files)."""
    started = time.monotonic()
    out: dict = {"plan": plan_name, "servers": []}
    for server in servers:
        begun = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="agentproto-sync-bench-") as work:
            one = Bench(registry, env, plan_name, server).run(Path(work).resolve())
        one["seconds"] = round(time.monotonic() - begun, 1)
        out["servers"].append(one)
    out["seconds"] = round(time.monotonic() - started, 1)
    return out


def _npm(path: Path) -> str:
    try:
        return json.loads(path.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "not installed"


def fill_versions(results: dict, v: dict) -> None:
    """Fills each server's implementations' version strings (the official clients' from that
    server's install) and the sync part's versions, per install."""
    common = {
        "{commit}": v["agentproto"],
        "{node}": v["node"],
        "{python_version}": v["python"],
        "{msgspec}": v.get("msgspec (PyPI)", "?"),
        "{rustc}": v["rustc"].split(" (")[0].removeprefix("rustc "),
    }
    results["versions"] = {}
    for server in results["servers"]:
        modules = ROOT / server["server"]["install"] / "node_modules"
        values = common | {
            "{typescript}": _npm(modules / "typescript" / "package.json"),
            "{vscode_jsonrpc}": _npm(modules / "typescript" / "vendor" / "vscode-jsonrpc" / "package.json"),
        }
        for impl in server["implementations"]:
            for key, value in values.items():
                impl["version"] = impl["version"].replace(key, value)
        where = server["server"]["install"]
        server["versions"] = {
            f"typescript (npm, {where}: the server and the official clients)": values["{typescript}"],
            f"@typescript/typescript-linux-x64 (npm, {where}: the tsc binary)": _npm(
                modules / "@typescript" / "typescript-linux-x64" / "package.json"
            ),
        }
        results["versions"] |= server["versions"]


def smoke(registry: dict, env, servers: list[dict]) -> dict:
    """Every driver with one iteration of every workload on every server: output and answers
    checked, no timing."""
    out = run_all(registry, env, "smoke", servers)
    drivers = len(registry["sync"]["implementations"])
    releases = ", ".join(s["server"]["release"] for s in out["servers"])
    env.progress(f"sync smoke: {drivers} drivers agree on every workload on {releases}", done=True)
    return out


def measure(registry: dict, env, quick: bool, servers: list[dict]) -> dict:
    return run_all(registry, env, "quick" if quick else "full", servers)
