"""What the sync-channel tests share: where the peers are, bounded waits, process checks,
a project of real files, and the reference walk."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentproto.sync import Client
from agentproto.sync.ast import SourceFile
from agentproto.sync.tsc import ServerApi

DEADLINE = 60.0
"""How long one test may talk to a child before the child is killed."""

REPO = Path(__file__).resolve().parents[3]
INTEROP = REPO / "interop" / "tsc-api"
SERVERS = (ServerApi.V7_0, ServerApi.V7_1)
"""Both pinned servers; every test of the real peer runs against each."""
PYTHON_FIXTURE = [sys.executable, "-m", "agentproto.sync.fixture"]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "python" / "src")}


def install_dir(api: ServerApi) -> Path:
    """The npm folder of one pinned server: `interop/tsc-api` (7.0.2) or `interop/tsc-api/7.1`."""
    return INTEROP / "7.1" if api is ServerApi.V7_1 else INTEROP


def tsc_lib(api: ServerApi) -> Path:
    """The platform package's `lib` directory: the `tsc` binary and the `lib.*.d.ts` files."""
    return install_dir(api) / "node_modules" / "@typescript" / "typescript-linux-x64" / "lib"


TSC_LIB = tsc_lib(ServerApi.V7_0)


def tsc_binary(api: ServerApi = ServerApi.V7_0) -> Path:
    """A pinned `tsc`; a missing one fails the test, never skips it."""
    binary = tsc_lib(api) / "tsc"
    if not binary.is_file():
        pytest.fail(
            f"the pinned TypeScript {api.value} API server is missing at {binary}: "
            f"run `npm ci --prefix {install_dir(api).relative_to(REPO)} --no-audit --no-fund`"
        )
    return binary


def rust_fixture() -> Path:
    """`agentproto-sync-fixture` from the Cargo target directory (`CARGO_TARGET_DIR` or
    `target/`), debug build; a missing one fails the test."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    binary = target / "debug" / "agentproto-sync-fixture"
    if not binary.is_file():
        pytest.fail(f"the Rust fixture server is missing at {binary}: run `cargo build -p agentproto-sync --bins`")
    return binary


def compile_ts_fixture(out: Path) -> Path:
    """Compiles `ts/src/sync/fixture.ts` (and what it imports) into `out` with the TypeScript
    package's pinned compiler, as `crates/sync/tests/ts_server.rs` does; a missing compiler
    fails the test. Returns the entry point for `node`."""
    ts = REPO / "ts"
    compiler = ts / "node_modules" / ".bin" / "tsc"
    if not compiler.is_file():
        pytest.fail(f"the TypeScript package's compiler is missing at {compiler}: run `npm ci --prefix ts`")
    command = [str(compiler), "--module", "nodenext", "--target", "es2022", "--strict", "--types", "node"]
    command += ["--typeRoots", str(ts / "node_modules" / "@types"), "--rootDir", str(ts / "src" / "sync")]
    command += ["--outDir", str(out), str(ts / "src" / "sync" / "fixture.ts")]
    # Run outside `ts/`, so that its tsconfig.json does not apply to this one entry point.
    run_bounded(command, 120.0, cwd=out)
    (out / "package.json").write_text('{"type":"module"}')
    fixture = out / "fixture.js"
    assert fixture.is_file(), f"tsc did not write {fixture}"
    return fixture


class FixtureServers:
    """The test server of each language: "python" (`python -m agentproto.sync.fixture`),
    "rust" (`agentproto-sync-fixture`), "ts" (`ts/src/sync/fixture.ts` on node, compiled
    on first use into `scratch`)."""

    def __init__(self, scratch: Path) -> None:
        self._scratch = scratch
        self._ts: Path | None = None

    def command(self, side: str) -> list[str]:
        if side == "python":
            return PYTHON_FIXTURE
        if side == "rust":
            return [str(rust_fixture())]
        assert side == "ts", side
        if self._ts is None:
            self._ts = compile_ts_fixture(self._scratch)
        return ["node", str(self._ts)]


def spawn_tsc(api: ServerApi, cwd: Path, *extra: str) -> Client:
    assert cwd.is_absolute(), "tsc --api panics on a relative --cwd"
    return Client.spawn([tsc_binary(api), "--api", "--cwd", str(cwd), *extra])


def running(pid: int) -> bool:
    """Whether `pid` exists and has not exited (a zombie counts as exited), from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@contextlib.contextmanager
def bounded(client: Client, deadline: float = DEADLINE) -> Iterator[Client]:
    """Kills the client's server if the block has not finished within `deadline` (a blocked
    request then fails instead of hanging), fails the test if that happened, and closes the
    client on every way out."""
    fired = threading.Event()

    def expire() -> None:
        fired.set()
        client.kill()

    timer = threading.Timer(deadline, expire)
    timer.start()
    try:
        with client:
            yield client
    finally:
        timer.cancel()
        timer.join()
    assert not fired.is_set(), f"the server was killed after {deadline} s: a request hung"


def run_bounded(command: list[str], deadline: float, cwd: Path | None = None) -> str:
    """Runs `command` in a process group of its own, killing the group if it takes longer
    than `deadline`; returns its stdout and fails the test unless it succeeded."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, cwd=cwd, process_group=0)
    try:
        output, _ = process.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} did not finish within {deadline} s")
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
    assert process.returncode == 0, f"{command} failed with {process.returncode}"
    return output.decode()


@dataclass(frozen=True)
class Walk:
    nodes: int
    digest: str


def official_walk(api: ServerApi, cwd: Path, project: Path, *files: Path) -> list[Walk]:
    """`interop/tsc-api/walk.mjs`: the `forEachChild` walk of `files` by the official JS
    client of `api`'s package."""
    tsc_binary(api)
    command = ["node", str(INTEROP / "walk.mjs"), "--install", str(install_dir(api))]
    command += ["--cwd", str(cwd), "--project", str(project), *map(str, files)]
    lines = run_bounded(command, 120.0).splitlines()
    walks = [Walk(json.loads(line)["nodes"], json.loads(line)["digest"]) for line in lines]
    assert len(walks) == len(files), lines
    return walks


_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


def our_walk(file: SourceFile) -> Walk:
    """The same walk over our reader: the nodes below the root in preorder, and the FNV-1a
    digest of their (kind, pos, end) as little-endian u32s."""
    digest = 0xCBF29CE484222325
    nodes = 0
    for node in file.root().descendants():
        nodes += 1
        record = (node.kind & _MASK).to_bytes(4, "little")
        record += (node.pos & 0xFFFF_FFFF).to_bytes(4, "little") + (node.end & 0xFFFF_FFFF).to_bytes(4, "little")
        for byte in record:
            digest = ((digest ^ byte) * _FNV_PRIME) & _MASK
    return Walk(nodes, f"{digest:016x}")


POINT_TS = (
    "export interface Point { x: number; y: number }\n"
    "/** Adds two points. */\n"
    "export function add(a: Point, b: Point): Point {\n    return { x: a.x + b.x, y: a.y + b.y };\n}\n"
)
MAIN_TS = (
    'import { add, type Point } from "./point";\n'
    "const origin: Point = { x: 0, y: 0 };\n"
    "export const moved = add(origin, { x: `${1}`.length, y: 2 });\n"
)
TSCONFIG = {
    "compilerOptions": {"strict": True, "noLib": True, "target": "es2022", "module": "esnext"},
    "files": ["src/point.ts", "src/main.ts"],
}


@dataclass(frozen=True)
class Project:
    """A project of real files: `tsconfig.json`, `src/point.ts`, `src/main.ts`."""

    root: Path

    @classmethod
    def write(cls, directory: Path) -> Project:
        root = directory.resolve()
        (root / "src").mkdir()
        (root / "tsconfig.json").write_text(json.dumps(TSCONFIG))
        (root / "src" / "point.ts").write_text(POINT_TS)
        (root / "src" / "main.ts").write_text(MAIN_TS)
        return cls(root)

    @property
    def tsconfig(self) -> Path:
        return self.root / "tsconfig.json"

    def file(self, name: str) -> Path:
        return self.root / "src" / name
