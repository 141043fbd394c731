"""File-system handlers for the client role, confined to a set of root directories
(the Python twin of `crates/acp/src/fs.rs`).

An ACP client that advertises `fs.readTextFile` / `fs.writeTextFile` answers the agent's
`fs/read_text_file` and `fs/write_text_file`. The agent names any path it likes, so
`FsRoots` decides once, the same way for every request:

* the path must be absolute, without a `..` component (even one that would stay
  inside a root) and without a NUL byte;
* once symbolic links are resolved, the file must lie inside one of the roots. A read
  resolves the whole path; a write (whose file may not exist yet) resolves the parent
  directory and follows the final component if it is a symbolic link, so a link
  pointing out of the roots is refused even when its target does not exist yet.

A path whose resolution leaves the roots is refused whether or not it exists, so the
answers do not reveal which files exist outside the roots. Errors map to wire codes as
in Rust: refusals -32602 at `$.params.path`; a missing file -32002 with `{"path"}`; a
file that is not UTF-8 or any other I/O failure -32603. No error carries file content.

The checks and the file operation are separate system calls, so a process that can
rewrite the directories under a root in between can still race them. Files are written
in place (truncate, then write). File-system calls run in a worker thread.
"""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import msgspec
from msgspec import Raw

from agentproto.acp import v1
from agentproto.errors import AgentprotoError
from agentproto.jsonrpc.error import ErrorCode, ErrorObject, RequestError

__all__ = [
    "FsError",
    "FsRoots",
    "IoFailed",
    "NotAbsolute",
    "NotFound",
    "NotUtf8",
    "NulByte",
    "OutsideRoots",
    "ParentComponent",
    "RootError",
    "slice_lines",
]

PARAMS_PATH = "$.params.path"
"""The JSON path of the `path` member of both requests."""
MAX_SYMLINK_HOPS = 40
"""How many symbolic links a write follows before giving up (Linux's own limit)."""


class RootError(AgentprotoError):
    """A set of roots could not be built: none given, or one not an absolute path to a directory."""


class FsError(AgentprotoError):
    """Why a file-system request was refused or failed; `to_error_object` is the answer."""

    refusal = False
    """Whether the path was refused by a check (as opposed to the file operation failing)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        """The path as the request gave it."""

    def to_error_object(self) -> ErrorObject:
        return ErrorObject.internal_error(str(self))


class _Refusal(FsError):
    refusal = True
    expected = ""

    def to_error_object(self) -> ErrorObject:
        return ErrorObject.invalid_params(PARAMS_PATH, self.expected, self.path)


class NotAbsolute(_Refusal):
    expected = "an absolute path"

    def __init__(self, path: str) -> None:
        super().__init__(path, f"path `{path}` is not absolute")


class ParentComponent(_Refusal):
    expected = "a path without .. components"

    def __init__(self, path: str) -> None:
        super().__init__(path, f"path `{path}` has a `..` component")


class NulByte(_Refusal):
    expected = "a path without NUL bytes"

    def __init__(self, path: str) -> None:
        super().__init__(path, f"path {path!r} contains a NUL byte")


class OutsideRoots(_Refusal):
    def __init__(self, path: str, roots: list[Path]) -> None:
        shown = ", ".join(str(r) for r in roots)
        super().__init__(path, f"path `{path}` is outside the allowed roots ({shown})")
        self.roots = roots
        self.expected = f"a path inside the allowed roots ({shown})"


class NotFound(FsError):
    def __init__(self, path: str) -> None:
        super().__init__(path, f"no such file or directory: `{path}`")

    def to_error_object(self) -> ErrorObject:
        data = Raw(b'{"path":' + msgspec.json.encode(self.path) + b"}")
        return ErrorObject(code=ErrorCode.RESOURCE_NOT_FOUND, message=f"file not found: `{self.path}`", data=data)


class NotUtf8(FsError):
    def __init__(self, path: str) -> None:
        super().__init__(path, f"file `{path}` is not valid UTF-8")


class IoFailed(FsError):
    """Any other I/O failure (permission denied, is a directory, ...)."""

    def __init__(self, path: str, source: OSError) -> None:
        super().__init__(path, f"could not access `{path}`: {source.strerror or source}")
        self.source = source


def _io_error(path: str, source: OSError) -> FsError:
    if isinstance(source, FileNotFoundError):
        return NotFound(path)
    return IoFailed(path, source)


def _check_lexically(path: str) -> PurePosixPath:
    """The checks that need no file system: no NUL byte, absolute, no `..`."""
    if "\0" in path:
        raise NulByte(path)
    requested = PurePosixPath(path)
    if not requested.is_absolute():
        raise NotAbsolute(path)
    if ".." in requested.parts:
        raise ParentComponent(path)
    return requested


def _canonical(path: PurePosixPath | Path) -> Path:
    return Path(os.path.realpath(path, strict=True))


class FsRoots:
    """The root directories that file-system requests are confined to (canonicalized
    once, when the set is built)."""

    def __init__(self, roots: Iterable[str | os.PathLike[str]]) -> None:
        canonical: list[Path] = []
        for root in roots:
            given = Path(root)
            if not given.is_absolute():
                raise RootError(f"root `{given}` is not an absolute path")
            try:
                resolved = _canonical(given)
            except OSError as e:
                raise RootError(f"root `{given}` cannot be resolved: {e.strerror or e}") from None
            if not resolved.is_dir():
                raise RootError(f"root `{given}` is not a directory")
            if resolved not in canonical:
                canonical.append(resolved)
        if not canonical:
            raise RootError("no root directory was given")
        self._roots = canonical

    @property
    def roots(self) -> list[Path]:
        """The canonical roots, in the order given (duplicates removed)."""
        return list(self._roots)

    def contains(self, canonical: Path) -> bool:
        """Whether a canonical path lies inside (or is) one of the roots, by whole
        components (`/srv/a` does not contain `/srv/ab`)."""
        return any(canonical.is_relative_to(root) for root in self._roots)

    async def read_text_file(self, request: v1.ReadTextFileRequest) -> v1.ReadTextFileResponse:
        """Answers `fs/read_text_file`: the file's text, from line `line` (1-based) for at
        most `limit` lines when those are given.

        Raises:
            RequestError: the refusal or failure, as the wire error.
        """
        line = request.line if isinstance(request.line, int) else None
        limit = request.limit if isinstance(request.limit, int) else None
        try:
            content = await self.read_text(request.path, line, limit)
        except FsError as e:
            raise RequestError.from_object(e.to_error_object()) from None
        return v1.ReadTextFileResponse(content=content)

    async def write_text_file(self, request: v1.WriteTextFileRequest) -> v1.WriteTextFileResponse:
        """Answers `fs/write_text_file`: creates the file if needed (its directory must
        exist) and replaces its content."""
        try:
            await self.write_text(request.path, request.content)
        except FsError as e:
            raise RequestError.from_object(e.to_error_object()) from None
        return v1.WriteTextFileResponse()

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The text of the file at `path` (checked as for a read), sliced by `slice_lines`."""
        return await asyncio.to_thread(self._read_text, path, line, limit)

    async def write_text(self, path: str, content: str) -> None:
        """Writes `content` to the file at `path` (checked as for a write)."""
        await asyncio.to_thread(self._write_text, path, content)

    async def resolve_read(self, path: str) -> Path:
        """Checks `path` for a read and returns the canonical file to read."""
        return await asyncio.to_thread(self._resolve_read, path)

    async def resolve_write(self, path: str) -> Path:
        """Checks `path` for a write and returns the file to write (never a symbolic link)."""
        return await asyncio.to_thread(self._resolve_write, path)

    # -- the blocking steps, run in a worker thread ---------------------------------------

    def _read_text(self, path: str, line: int | None, limit: int | None) -> str:
        resolved = self._resolve_read(path)
        try:
            data = resolved.read_bytes()
        except OSError as e:
            raise _io_error(path, e) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise NotUtf8(path) from None
        return slice_lines(text, line, limit)

    def _write_text(self, path: str, content: str) -> None:
        resolved = self._resolve_write(path)
        try:
            with open(resolved, "w", encoding="utf-8", newline="") as file:
                file.write(content)
        except OSError as e:
            raise _io_error(path, e) from None

    def _resolve_read(self, path: str) -> Path:
        requested = _check_lexically(path)
        try:
            canonical = _canonical(requested)
        except OSError as e:
            raise self._missing(path, requested, e) from None
        if not self.contains(canonical):
            raise OutsideRoots(path, self._roots)
        return canonical

    def _resolve_write(self, path: str) -> Path:
        target = PurePosixPath(_check_lexically(path))
        for _ in range(MAX_SYMLINK_HOPS):
            if not target.name:
                raise IoFailed(path, IsADirectoryError(errno.EISDIR, "not a file path"))
            try:
                parent = _canonical(target.parent)
            except OSError as e:
                raise self._missing(path, target.parent, e) from None
            if not self.contains(parent):
                raise OutsideRoots(path, self._roots)
            candidate = parent / target.name
            try:
                is_link = candidate.is_symlink()
            except OSError as e:
                raise _io_error(path, e) from None
            if not is_link:
                return candidate
            # An absolute link target stays as it is; a relative one is resolved against
            # the link's directory. Its target is then checked the same way.
            target = PurePosixPath(parent) / os.readlink(candidate)
        raise IoFailed(path, OSError(errno.ELOOP, "too many levels of symbolic links"))

    def _missing(self, path: str, missing: PurePosixPath, source: OSError) -> FsError:
        """Classifies a failure to resolve `missing` (the path or an ancestor): when the
        deepest ancestor that does resolve lies outside the roots, the path is refused as
        outside, whatever the failure was."""
        for ancestor in missing.parents:
            try:
                canonical = _canonical(ancestor)
            except OSError:
                continue
            if not self.contains(canonical):
                return OutsideRoots(path, self._roots)
            break
        if isinstance(source, FileNotFoundError | NotADirectoryError):
            return NotFound(path)
        return _io_error(path, source)


def slice_lines(text: str, line: int | None = None, limit: int | None = None) -> str:
    """The lines of `text` from `line` (1-based; 0 reads as 1) for at most `limit` lines,
    with their line endings kept. Lines end at `\\n` (so `\\r\\n` stays intact); a `line`
    past the end gives an empty string."""
    start = _line_start(text, max(0, (line or 1) - 1))
    if limit is None:
        return text[start:]
    return text[start : start + _line_start(text[start:], limit)]


def _line_start(text: str, index: int) -> int:
    """Where line `index` (0-based) starts, or `len(text)`."""
    at = 0
    for _ in range(index):
        newline = text.find("\n", at)
        if newline < 0:
            return len(text)
        at = newline + 1
    return at
