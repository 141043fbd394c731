#!/usr/bin/env python3
"""`make readme-test`: runs the README's quick starts as a newcomer would paste them.

Each quick start in README.md is a fenced block preceded by `<!-- quickstart: NAME -->`.
A block named like a file (`agent.py`, `agent.ts`, `main.rs`) is written, byte for byte,
into a fresh temporary project; a block named `run-…`, `a2a` or `inspect` is a shell
block whose lines are run there with bash, as written. Only what a newcomer would get
from a registry is provided locally instead (the packages are not published from this
test): `python` is this interpreter (with agentproto installed), `agentproto` is the
workspace's debug build of the CLI, the TypeScript project links this repository's
built `ts/` package and its pinned compiler, and the Rust project depends on
`crates/acp` by path. The A2A block's port 8080 is replaced by a free port.

Usage: python3 tests/quickstarts.py [NAME...]   (default: every quick start)
Needs: `cargo build -p agentproto-cli` (target/debug/agentproto) and `npm ci --prefix ts`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARK = re.compile(r"<!-- quickstart: (\S+) -->\n```[a-z,_]*\n(.*?)```\n", re.S)
TIMEOUT = 600  # seconds for one command (the Rust build compiles the SDK on a cold cache)


class Failed(Exception):
    pass


def blocks(text: str) -> dict[str, str]:
    found = {}
    for name, body in MARK.findall(text):
        if name in found:
            raise Failed(f"README.md: quick start {name!r} appears twice")
        found[name] = body
    return found


def run(line: str, cwd: Path, env: dict[str, str], background: list[subprocess.Popen[bytes]]) -> str:
    """Runs one shell line as written; returns its stdout. A line ending in `&` starts a
    server that is ended (with its process group) when the quick start is done."""
    print(f"  $ {line}", flush=True)
    if line.endswith("&"):
        proc = subprocess.Popen(
            ["bash", "-c", "exec " + line[:-1].strip()],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        background.append(proc)
        return ""
    result = subprocess.run(
        ["bash", "-c", line],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        start_new_session=True,
    )
    if result.returncode != 0:
        raise Failed(f"`{line}` exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result.stdout + result.stderr


def stop(background: list[subprocess.Popen[bytes]]) -> None:
    for proc in background:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def commands(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def tools(work: Path) -> dict[str, str]:
    """PATH with `python` (this interpreter) and `agentproto` (the workspace's build) first."""
    bin_dir = work / ".bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    agentproto = ROOT / "target" / "debug" / "agentproto"
    if not agentproto.exists():
        raise Failed(f"{agentproto} is missing: run `cargo build -p agentproto-cli` first")
    (bin_dir / "agentproto").symlink_to(agentproto)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env.pop("PYTHONPATH", None)
    return env


def expect(output: str, *wanted: str) -> None:
    for text in wanted:
        if text not in output:
            raise Failed(f"expected {text!r} in the output:\n{output}")


# -- the quick starts -------------------------------------------------------------


def python_agent(found: dict[str, str], work: Path, env: dict[str, str]) -> None:
    (work / "agent.py").write_text(found["agent.py"])
    for line in commands(found["run-python"]):
        expect(run(line, work, env, []), "hello", "end_turn")


def npm_pack(work: Path) -> Path:
    """`npm pack` of the tracked ts/ sources in a clean copy (prepack builds them); checks
    the tarball's file list and returns its path."""
    copy = work / "ts-src"
    files = subprocess.run(["git", "ls-files", "ts"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in files.stdout.split():
        target = copy / Path(name).relative_to("ts")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    (copy / "node_modules").symlink_to(ROOT / "ts" / "node_modules")  # the pinned compiler, for prepack
    out = subprocess.run(
        ["npm", "pack", "--json", "--pack-destination", str(work)],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    if out.returncode != 0:
        raise Failed(f"npm pack failed:\n{out.stdout}\n{out.stderr}")
    report = json.loads(out.stdout)[0]
    names = {f["path"] for f in report["files"]}
    for wanted in ("LICENSE", "README.md", "package.json", "dist/src/index.js", "dist/src/index.d.ts"):
        if wanted not in names:
            raise Failed(f"the npm tarball lacks {wanted}")
    stray = sorted(n for n in names if n.endswith(".map") or "/test/" in n or "/fixtures/" in n)
    if stray:
        raise Failed(f"the npm tarball ships files it should not: {stray[:10]}")
    return work / report["filename"]


def ts_agent(found: dict[str, str], work: Path, env: dict[str, str]) -> None:
    tarball = npm_pack(work)
    project = work / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "quickstart", "private": True, "type": "module"}))
    tsconfig = {
        "compilerOptions": {"target": "es2022", "module": "nodenext", "strict": True, "types": ["node"]},
        "files": ["agent.ts"],
    }
    (project / "tsconfig.json").write_text(json.dumps(tsconfig, indent=2))
    (project / "agent.ts").write_text(found["agent.ts"])
    # `npm install agentproto` from the packed tarball (it has no dependency, so nothing is fetched);
    # the compiler and Node's types as `npm install -D typescript @types/node` would give them.
    install = ["npm", "install", "--offline", "--no-audit", "--no-fund", "--no-save", str(tarball)]
    run(" ".join(install), project, env, [])
    modules = project / "node_modules"
    (modules / "@types").mkdir(exist_ok=True)
    (modules / "typescript").symlink_to(ROOT / "ts" / "node_modules" / "typescript")
    (modules / "@types" / "node").symlink_to(ROOT / "ts" / "node_modules" / "@types" / "node")
    (modules / ".bin" / "tsc").symlink_to(ROOT / "ts" / "node_modules" / "typescript" / "bin" / "tsc")
    package = json.loads((modules / "agentproto" / "package.json").read_text())
    for entry, target in package["exports"].items():  # every subpath resolves in the installed package
        for kind in ("types", "default"):
            if not (modules / "agentproto" / target[kind]).is_file():
                raise Failed(f"export {entry!r} ({kind}) points at a missing file: {target[kind]}")
    for line in commands(found["run-ts"]):
        expect(run(line, project, env, []), "hello", "end_turn")


def rust_agent(found: dict[str, str], work: Path, env: dict[str, str]) -> None:
    crate = work / "my-agent"
    (crate / "src").mkdir(parents=True)
    acp = ROOT / "crates" / "acp"
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "my-agent"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
        f"agentproto-acp = {{ path = {json.dumps(str(acp))} }}\n"
        'tokio = { version = "1", features = ["macros", "rt-multi-thread"] }\n'
    )
    shutil.copy(ROOT / "Cargo.lock", crate / "Cargo.lock")  # the workspace's versions, as a user would get
    # A cache kept between runs under the workspace's target/ (ignored by git).
    cache = ROOT / "target" / "quickstart"
    cache.mkdir(parents=True, exist_ok=True)
    (crate / "target").symlink_to(cache)
    (crate / "src" / "main.rs").write_text(strip_rustdoc(found["main.rs"]))
    for line in commands(found["run-rust"]):
        expect(run(line, crate, env, []), "hello", "end_turn")


def strip_rustdoc(block: str) -> str:
    """The block as a file: rustdoc's hidden lines (`# `) are part of the program."""
    return "\n".join(line[2:] if line.startswith("# ") else line for line in block.splitlines()) + "\n"


def a2a_server(found: dict[str, str], work: Path, env: dict[str, str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    block = found["a2a"].replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    block = block.replace("/tmp/a2a-demo.db", str(work / "a2a-demo.db"))
    lines = commands(block)
    background: list[subprocess.Popen[bytes]] = []
    try:
        run(lines[0], work, env, background)
        wait_for_port(port, background[0])
        card = json.loads(run(lines[1], work, env, background))
        if not card.get("name") or not card.get("supportedInterfaces"):
            raise Failed(f"the agent card lacks a name or interfaces: {card}")
        answer = json.loads(run(lines[2], work, env, background))
        task = answer.get("result", {}).get("task", {})
        if task.get("status", {}).get("state") != "TASK_STATE_COMPLETED" or "hello" not in json.dumps(task):
            raise Failed(f"SendMessage did not answer a completed echo task: {answer}")
    finally:
        stop(background)


def wait_for_port(port: int, server: subprocess.Popen[bytes]) -> None:
    """Waits (at most 60 s) for the server's "listening on" line."""
    import select
    import time

    assert server.stdout is not None
    deadline = time.monotonic() + 60
    seen = b""
    while b"listening on" not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failed(f"the server did not say it listens on {port} within 60 s: {seen.decode(errors='replace')}")
        ready, _, _ = select.select([server.stdout], [], [], left)
        chunk = os.read(server.stdout.fileno(), 4096) if ready else b""
        if ready and not chunk:
            server.wait(timeout=10)
            raise Failed(f"the server exited {server.returncode}: {seen.decode(errors='replace')}")
        seen += chunk


def inspect(found: dict[str, str], work: Path, env: dict[str, str]) -> None:
    (work / "agent.py").write_text(found["agent.py"])
    lines = commands(found["inspect"])
    out = run(lines[0], work, env, [])
    expect(out, "hello", "end_turn")
    if " error " in out:
        raise Failed(f"inspect reported an error finding on the quick-start agent:\n{out}")
    expect(run(lines[1], work, env, []), "pass")


QUICKSTARTS: dict[str, Callable[[dict[str, str], Path, dict[str, str]], None]] = {
    "python": python_agent,
    "typescript": ts_agent,
    "rust": rust_agent,
    "a2a": a2a_server,
    "inspect": inspect,
}


def main(argv: list[str]) -> int:
    found = blocks(README.read_text())
    wanted = argv or list(QUICKSTARTS)
    failures = 0
    for name in wanted:
        print(f"quick start: {name}", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"agentproto-quickstart-{name}-") as tmp:
            work = Path(tmp)
            try:
                QUICKSTARTS[name](found, work, tools(work))
            except (Failed, subprocess.TimeoutExpired, KeyError) as exc:
                failures += 1
                print(f"FAILED: {name}: {exc}", flush=True)
                continue
        print(f"ok: {name}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
