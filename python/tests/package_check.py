"""Builds the Python package as it would be published and uses it as a newcomer would.

    python3 python/tests/package_check.py [--python INTERPRETER ...]   (from anywhere; under a minute)

1. `python -m build` writes the sdist and, from the sdist, the wheel into a temporary
   directory (so the sdist is complete enough to build from);
2. `twine check --strict` checks both (metadata, the long description renders);
3. the file lists and metadata are checked: the sdist holds LICENSE, README.md,
   pyproject.toml and the sources but not the repository's tests; the wheel holds the
   licence under `.dist-info/licenses/`, `py.typed` and no tests, and its metadata the
   version, the SPDX licence, the project URLs and the POSIX classifier;
4. the wheel is installed into a fresh virtual environment (no system site packages;
   msgspec comes from the package index or pip's cache), and the quick start of
   `python/README.md` runs there as written: the blocks marked
   `<!-- package-test: NAME -->` are written to files, `client.py` spawns `agent.py`
   and runs one prompt, and its output must be the block marked `output`. With
   `--python` (repeatable), this step runs under each interpreter given instead.

Every step has a time limit; on any way out, children still running are killed and the
temporary directory is removed. Exit status 0 when everything holds, 1 otherwise.
Needs `build` and `twine` (pinned in `.ci/requirements.txt`).
"""

from __future__ import annotations

import argparse
import email.parser
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parents[1]
README = PYTHON_DIR / "README.md"
MARK = re.compile(r"<!-- package-test: ([\w.]+) -->\n```\w*\n(.*?)```", re.DOTALL)
BUILD_TIMEOUT = 300.0
INSTALL_TIMEOUT = 300.0
RUN_TIMEOUT = 60.0


class CheckFailed(Exception):
    """One check did not hold; the message says which and what was found."""


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (Linux `/proc`; elsewhere none are found)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        for children in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                pids = [int(child) for child in children.read_text().split()]
            except OSError:
                continue
            found.extend(pids)
            pending.extend(pids)
    return found


def run(command: list[str], timeout: float, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Runs `command` and returns its stdout; a failure or a timeout raises `CheckFailed`.
    The command runs in a process group of its own: on a timeout the group goes, and so
    does every process below it that started a group of its own (an ACP agent does)."""
    shown = " ".join(command)
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except BaseException:
        below = descendants(process.pid)
        for pid in [process.pid, *below]:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in below:  # a child that left its parent's group: kill it by pid too
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        process.wait()  # the command itself is gone; its output is not read (an orphan may hold the pipes)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        raise
    if process.returncode != 0:
        raise CheckFailed(f"`{shown}` exited with status {process.returncode}\n{out}{err}")
    return out


def readme_blocks() -> dict[str, str]:
    blocks = {name: text for name, text in MARK.findall(README.read_text())}
    for name in ("agent.py", "client.py", "output"):
        if name not in blocks:
            raise CheckFailed(f"{README}: no block marked `<!-- package-test: {name} -->`")
    return blocks


def build(out: Path) -> tuple[Path, Path]:
    run([sys.executable, "-m", "build", "--outdir", str(out), str(PYTHON_DIR)], BUILD_TIMEOUT)
    sdists = sorted(out.glob("*.tar.gz"))
    wheels = sorted(out.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise CheckFailed(f"expected one sdist and one wheel, found {[p.name for p in out.iterdir()]}")
    return sdists[0], wheels[0]


def check_sdist(sdist: Path, version: str) -> None:
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    top = f"agentproto-{version}"
    wanted = [f"{top}/{name}" for name in ("LICENSE", "README.md", "pyproject.toml", "src/agentproto/py.typed")]
    missing = [name for name in wanted if name not in names]
    if missing:
        raise CheckFailed(f"{sdist.name} lacks {missing}")
    tests = [name for name in names if name.startswith(f"{top}/tests/")]
    if tests:
        raise CheckFailed(f"{sdist.name} ships the repository's tests: {tests[:5]}")


def check_wheel(wheel: Path, version: str) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = f"agentproto-{version}.dist-info"
        metadata = email.parser.Parser().parsestr(archive.read(f"{info}/METADATA").decode())
    wanted = [f"{info}/licenses/LICENSE", "agentproto/py.typed", "agentproto/acp/v1.py"]
    missing = [name for name in wanted if name not in names]
    if missing:
        raise CheckFailed(f"{wheel.name} lacks {missing}")
    strays = sorted({name.split("/")[0] for name in names} - {"agentproto", info})
    if strays:
        raise CheckFailed(f"{wheel.name} holds more than the package: {strays}")
    tests = [name for name in names if "/tests/" in name or name.split("/")[-1].startswith("test_")]
    if tests:
        raise CheckFailed(f"{wheel.name} ships tests: {tests[:5]}")
    expected = {"Name": "agentproto", "Version": version, "License-Expression": "Apache-2.0"}
    for key, value in expected.items():
        if metadata.get(key) != value:
            raise CheckFailed(f"{wheel.name} METADATA {key}: expected {value!r}, found {metadata.get(key)!r}")
    urls = metadata.get_all("Project-URL") or []
    if not any(url.startswith("Repository, https://github.com/agentproto/agentproto") for url in urls):
        raise CheckFailed(f"{wheel.name} METADATA has no Repository URL: {urls}")
    if "Operating System :: POSIX" not in (metadata.get_all("Classifier") or []):
        raise CheckFailed(f"{wheel.name} METADATA does not say POSIX")


def quick_start(wheel: Path, work: Path, blocks: dict[str, str], interpreter: str) -> None:
    work.mkdir()
    venv = work / "venv"
    run([interpreter, "-m", "venv", str(venv)], INSTALL_TIMEOUT)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, str(wheel)], INSTALL_TIMEOUT)
    app = work / "app"
    app.mkdir()
    for name in ("agent.py", "client.py"):
        (app / name).write_text(blocks[name])
    # Only what a user's shell would have: no PYTHONPATH pointing into this repository.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    where = run([python, "-c", "import agentproto; print(agentproto.__file__)"], RUN_TIMEOUT, app, env)
    if not where.strip().startswith(str(venv)):
        raise CheckFailed(f"agentproto was imported from {where.strip()}, not from the fresh environment")
    out = run([python, "client.py"], RUN_TIMEOUT, app, env)
    if out.strip() != blocks["output"].strip():
        raise CheckFailed(f"the quick start printed\n{out}\nexpected\n{blocks['output']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="package_check", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--python",
        action="append",
        metavar="INTERPRETER",
        help="run the quick start under this interpreter too (repeatable; default: the one running this)",
    )
    interpreters = parser.parse_args(argv).python or [sys.executable]
    version = tomllib.loads((PYTHON_DIR / "pyproject.toml").read_text())["project"]["version"]
    try:
        blocks = readme_blocks()
        with tempfile.TemporaryDirectory(prefix="agentproto-package-") as temp:
            work = Path(temp)
            sdist, wheel = build(work / "dist")
            run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)], RUN_TIMEOUT)
            check_sdist(sdist, version)
            check_wheel(wheel, version)
            for number, interpreter in enumerate(interpreters):
                quick_start(wheel, work / f"quick-start-{number}", blocks, interpreter)
    except CheckFailed as e:
        print(f"package check: {e}", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired as e:
        print(f"package check: `{' '.join(map(str, e.cmd))}` took longer than {e.timeout} s", file=sys.stderr)
        return 1
    ran = ", ".join(interpreters)
    print(f"package check: agentproto {version} builds, passes twine and runs its README quick start ({ran})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
