"""File-system handlers confined to roots: reads and writes inside, every way out refused
(relative, `..`, NUL, symbolic links), missing files told apart from outside ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from msgspec import Raw

from agentproto.acp import v1
from agentproto.acp.fs import FsRoots, RootError, slice_lines
from agentproto.jsonrpc import ErrorObject, RequestError


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "root" / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    (tmp_path / "outside" / "secret.txt").write_text("CONTENT-NEVER-SHOWN")
    return tmp_path


async def read(roots: FsRoots, path: str, line: int | None = None, limit: int | None = None) -> str:
    request = v1.ReadTextFileRequest(session_id="s", path=path, line=line, limit=limit)
    return (await roots.read_text_file(request)).content


async def refused(call: object) -> ErrorObject:
    with pytest.raises(RequestError) as raised:
        await call  # type: ignore[misc]
    return raised.value.error


def data(error: ErrorObject) -> dict[str, str]:
    assert isinstance(error.data, Raw)
    value: dict[str, str] = json.loads(bytes(error.data))
    return value


def assert_refused(error: ErrorObject, path: str, expected: str) -> None:
    assert error.code == -32602
    assert data(error)["path"] == "$.params.path" and data(error)["found"] == path
    assert data(error)["expected"].startswith(expected)
    assert "CONTENT-NEVER-SHOWN" not in error.message


def test_roots_must_be_absolute_existing_directories(tree: Path) -> None:
    with pytest.raises(RootError):
        FsRoots([])
    with pytest.raises(RootError):
        FsRoots(["relative/dir"])
    with pytest.raises(RootError):
        FsRoots([tree / "missing"])
    with pytest.raises(RootError):
        FsRoots([tree / "root" / "a.txt"])
    assert FsRoots([tree / "root", tree / "root"]).roots == [(tree / "root").resolve()]


async def test_reads_whole_files_and_slices_of_lines(tree: Path) -> None:
    roots = FsRoots([tree / "root"])
    path = str(tree / "root" / "a.txt")
    assert await read(roots, path) == "one\ntwo\nthree\nfour\n"
    assert await read(roots, path, 2, 2) == "two\nthree\n"
    assert await read(roots, path, 0, 1) == "one\n"
    assert await read(roots, path, 9) == ""


def test_slice_lines_keeps_line_endings() -> None:
    assert slice_lines("a\r\nb\r\nc", 2, 1) == "b\r\n"
    assert slice_lines("a\nb\nc", 3, 5) == "c"
    assert slice_lines("a\nb\nc", 2) == "b\nc"
    assert slice_lines("", 1, 1) == ""
    assert slice_lines("a\n\nb", 2, 1) == "\n"
    assert slice_lines("é\nü\n", 2) == "ü\n"
    assert slice_lines("x", 2**32 - 1, 2**32 - 1) == ""


async def test_writes_create_or_replace_files_but_not_directories(tree: Path) -> None:
    roots = FsRoots([tree / "root"])
    await roots.write_text_file(v1.WriteTextFileRequest(session_id="s", path=str(tree / "root/new.txt"), content="x"))
    assert (tree / "root/new.txt").read_text() == "x"
    await roots.write_text(str(tree / "root/a.txt"), "short")
    assert await read(roots, str(tree / "root/a.txt")) == "short"
    missing_dir = str(tree / "root/missing/new.txt")
    error = await refused(roots.write_text_file(v1.WriteTextFileRequest(session_id="s", path=missing_dir, content="")))
    assert error.code == -32002
    assert not (tree / "root/missing").exists()


async def test_paths_that_leave_the_roots_are_refused(tree: Path) -> None:
    roots = FsRoots([tree / "root"])
    for path, expected in [
        ("a.txt", "an absolute path"),
        (str(tree / "root/sub/../a.txt"), "a path without .. components"),
        (str(tree / "root/a\0.txt"), "a path without NUL bytes"),
        (str(tree / "outside/secret.txt"), "a path inside the allowed roots ("),
        (str(tree / "outside/missing.txt"), "a path inside the allowed roots ("),
    ]:
        assert_refused(await refused(read(roots, path)), path, expected)
    # A sibling whose name starts like the root is not inside it.
    (tree / "rootless").mkdir()
    (tree / "rootless/x.txt").write_text("x")
    sibling = str(tree / "rootless/x.txt")
    assert_refused(await refused(read(roots, sibling)), sibling, "a path inside the allowed roots (")


async def test_symbolic_links_are_followed_before_the_check(tree: Path) -> None:
    roots = FsRoots([tree / "root"])
    os.symlink(tree / "outside/secret.txt", tree / "root/leak.txt")
    os.symlink(tree / "outside", tree / "root/door")
    os.symlink(tree / "outside/not-yet.txt", tree / "root/dangling.txt")
    os.symlink("a.txt", tree / "root/alias.txt")
    for path in ("root/leak.txt", "root/door/secret.txt"):
        assert_refused(await refused(read(roots, str(tree / path))), str(tree / path), "a path inside")
    # A write through a link pointing out is refused even when the target does not exist.
    dangling = str(tree / "root/dangling.txt")
    assert_refused(await refused(roots.write_text_file(_write(dangling))), dangling, "a path inside")
    assert not (tree / "outside/not-yet.txt").exists()
    # A link inside the roots works, and a write replaces its target, not the link.
    await roots.write_text(str(tree / "root/alias.txt"), "via link")
    assert (tree / "root/a.txt").read_text() == "via link"
    assert (tree / "root/alias.txt").is_symlink()


def _write(path: str) -> v1.WriteTextFileRequest:
    return v1.WriteTextFileRequest(session_id="s", path=path, content="x")


async def test_missing_and_undecodable_files_inside_the_roots(tree: Path) -> None:
    roots = FsRoots([tree / "root"])
    missing = str(tree / "root/nope.txt")
    error = await refused(read(roots, missing))
    assert error.code == -32002 and data(error) == {"path": missing}
    (tree / "root/bin").write_bytes(b"\xff\xfe")
    error = await refused(read(roots, str(tree / "root/bin")))
    assert error.code == -32603 and "UTF-8" in error.message
    error = await refused(read(roots, str(tree / "root/sub")))
    assert error.code == -32603
