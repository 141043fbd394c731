"""The checks of `package_check.py` (the build itself runs in `make python-package-test`):
each one refuses what it is there to refuse, and a command that overruns its time is
ended with the processes it started."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests import package_check
from tests.package_check import CheckFailed, check_sdist, check_wheel

VERSION = "0.2.0"
INFO = f"agentproto-{VERSION}.dist-info"
METADATA = f"""Metadata-Version: 2.4
Name: agentproto
Version: {VERSION}
License-Expression: Apache-2.0
Classifier: Operating System :: POSIX
Project-URL: Repository, https://github.com/agentproto/agentproto

A description.
"""
GOOD = {
    "agentproto/__init__.py": "",
    "agentproto/py.typed": "",
    "agentproto/acp/v1.py": "",
    f"{INFO}/licenses/LICENSE": "Apache License",
    f"{INFO}/METADATA": METADATA,
}


def wheel(tmp_path: Path, files: dict[str, str]) -> Path:
    path = tmp_path / f"agentproto-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_a_complete_wheel_passes(tmp_path: Path) -> None:
    check_wheel(wheel(tmp_path, GOOD), VERSION)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({f"{INFO}/licenses/LICENSE": None}, "lacks"),
        ({"agentproto/py.typed": None}, "lacks"),
        ({"tests/test_flows.py": ""}, "holds more than the package"),
        ({"agentproto/acp/test_roles.py": ""}, "ships tests"),
        ({f"{INFO}/METADATA": METADATA.replace("Apache-2.0", "MIT")}, "License-Expression"),
        ({f"{INFO}/METADATA": METADATA.replace("Version: 0.2.0", "Version: 0.1.0")}, "Version"),
        ({f"{INFO}/METADATA": METADATA.replace("Project-URL: Repository", "Project-URL: Home")}, "Repository"),
        ({f"{INFO}/METADATA": METADATA.replace("Classifier: Operating System :: POSIX\n", "")}, "POSIX"),
    ],
)
def test_an_incomplete_wheel_is_refused(tmp_path: Path, change: dict[str, str | None], message: str) -> None:
    files = {name: text for name, text in {**GOOD, **change}.items() if text is not None}
    with pytest.raises(CheckFailed, match=message):
        check_wheel(wheel(tmp_path, files), VERSION)


def sdist(tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / f"agentproto-{VERSION}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name in names:
            data = b"x"
            info = tarfile.TarInfo(f"agentproto-{VERSION}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


SDIST = ["LICENSE", "README.md", "pyproject.toml", "src/agentproto/py.typed", "src/agentproto/__init__.py"]


def test_a_complete_sdist_passes(tmp_path: Path) -> None:
    check_sdist(sdist(tmp_path, SDIST), VERSION)


@pytest.mark.parametrize(
    ("names", "message"),
    [
        ([n for n in SDIST if n != "LICENSE"], "lacks"),
        ([n for n in SDIST if n != "README.md"], "lacks"),
        ([*SDIST, "tests/test_flows.py"], "ships the repository's tests"),
    ],
)
def test_an_incomplete_sdist_is_refused(tmp_path: Path, names: list[str], message: str) -> None:
    with pytest.raises(CheckFailed, match=message):
        check_sdist(sdist(tmp_path, names), VERSION)


def test_the_readme_marks_the_three_quick_start_blocks() -> None:
    blocks = package_check.readme_blocks()
    assert sorted(blocks) == ["agent.py", "client.py", "output"]
    assert "spawn_agent" in blocks["client.py"] and "serve_agent_stdio" in blocks["agent.py"]


def test_a_failing_command_is_a_check_failure() -> None:
    with pytest.raises(CheckFailed, match="exited with status 3"):
        package_check.run([sys.executable, "-c", "import sys; sys.exit(3)"], 30)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waits for an unrelated process through a pidfd (Linux)")
def test_an_overrun_ends_the_command_and_what_it_started_in_a_group_of_its_own(tmp_path: Path) -> None:
    # The command starts a child in a session (and group) of its own, as spawn_agent
    # does, tells its pid, and waits forever.
    pid_file = tmp_path / "pid"
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        package_check.run([sys.executable, "-c", script], 5)
    child = int(pid_file.read_text())
    try:
        handle = os.pidfd_open(child)
    except ProcessLookupError:
        return  # already gone and reaped
    try:
        readable, _, _ = select.select([handle], [], [], 10)  # readable once the process has ended
        assert readable, f"process {child} still runs"
    finally:
        os.close(handle)
