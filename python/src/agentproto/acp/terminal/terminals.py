"""`Terminals`: the client side of the `terminal/*` requests, running commands as child
processes (the twin of `crates/acp/src/terminal/terminals.rs`; behaviour and errors are
described in the package docs)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import subprocess
import weakref
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import NamedTuple, Self, TypeVar

import msgspec
from msgspec import Raw

from agentproto.acp import v1
from agentproto.acp.fs import FsError, FsRoots, NotAbsolute, NotFound, NulByte, OutsideRoots, ParentComponent
from agentproto.acp.terminal.output import OutputBuffer
from agentproto.codec import UnsetType
from agentproto.jsonrpc.error import ErrorCode, ErrorObject, RequestError

__all__ = ["CWD_PATH", "DEFAULT_MAX_OUTPUT_LIMIT", "DEFAULT_OUTPUT_LIMIT", "Terminals"]

T = TypeVar("T")

DEFAULT_OUTPUT_LIMIT = 1024 * 1024
"""How much output a terminal keeps when the request sets no `outputByteLimit`: 1 MiB."""
DEFAULT_MAX_OUTPUT_LIMIT = 16 * 1024 * 1024
"""The largest `outputByteLimit` honoured unless configured otherwise: 16 MiB. A larger
request is lowered to it."""
DRAIN_GRACE = 1.0
"""After the command exits, how many seconds its output pipes may stay open (held by a
process it started in the background) before reading stops and the exit is recorded."""
CWD_PATH = "$.params.cwd"
"""The JSON path of `cwd` in `terminal/create`, used in -32602 replies."""

# Signals whose numbers are the same on Linux, macOS and the BSDs, named as Rust names
# them; any other signal is reported as its decimal number.
_SIGNAL_NAMES = {
    1: "SIGHUP",
    2: "SIGINT",
    3: "SIGQUIT",
    4: "SIGILL",
    5: "SIGTRAP",
    6: "SIGABRT",
    8: "SIGFPE",
    9: "SIGKILL",
    11: "SIGSEGV",
    13: "SIGPIPE",
    14: "SIGALRM",
    15: "SIGTERM",
}


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kill_groups(pgids: set[int]) -> None:
    """What an unclosed `Terminals` does when it is collected or at interpreter exit."""
    for pgid in pgids:
        _kill_group(pgid)
    pgids.clear()


class _Exit(NamedTuple):
    """How a command ended: an exit code, or the name of the signal that ended it."""

    code: int | None
    signal: str | None

    @classmethod
    def from_returncode(cls, returncode: int | None) -> _Exit:
        if returncode is None:
            return cls(None, None)
        if returncode < 0:
            number = -returncode
            return cls(None, _SIGNAL_NAMES.get(number, str(number)))
        return cls(returncode, None)


class _Command(asyncio.SubprocessProtocol):
    """One running command: copies both pipes into the output buffer as they are read,
    and records the exit once the process has exited and its pipes are closed (or
    `DRAIN_GRACE` after the exit, if something else still holds them)."""

    def __init__(
        self, output: OutputBuffer, on_finished: Callable[[_Command], None], on_group_ended: Callable[[int], None]
    ) -> None:
        self.output = output
        self.exit: _Exit | None = None
        """Set once, when the command has finished; `None` while it runs."""
        self.finished = asyncio.Event()
        """Set once `exit` is (or once the process was given up by `abandon`)."""
        self.pid = 0
        self._transport: asyncio.SubprocessTransport | None = None
        self._open_pipes = {1, 2}
        self._exited = False
        self._group_ended = False
        self._grace: asyncio.TimerHandle | None = None
        self._on_finished = on_finished
        self._on_group_ended = on_group_ended

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._transport = transport
        self.pid = transport.get_pid()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.output.push(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open_pipes.discard(fd)
        if self._exited and not self._open_pipes:
            self._finish()

    def process_exited(self) -> None:
        self._exited = True
        # What the command left running goes with it, and at once: right after the
        # leader was reaped its id cannot have been given to another group yet.
        self.kill_group()
        self._group_ended = True
        self._on_group_ended(self.pid)
        if not self._open_pipes:
            self._finish()
        else:
            self._grace = asyncio.get_running_loop().call_later(DRAIN_GRACE, self._finish)

    @property
    def group_ended(self) -> bool:
        return self._group_ended

    def kill_group(self) -> None:
        """SIGKILLs the command's whole process group; nothing once the command has
        exited (the group was ended then, and its id may since belong to another)."""
        if self.pid and not self._group_ended:
            _kill_group(self.pid)

    def abandon(self) -> None:
        """Stops watching: an exited process gets its exit recorded now, whatever still
        holds its pipes; one that did not exit when killed has its pipes closed and its
        waiters released without an exit status. A no-op once finished."""
        if self._exited:
            self._finish()
        else:
            self._close()

    def _finish(self) -> None:
        if self.finished.is_set() or self._transport is None:
            return
        self.exit = _Exit.from_returncode(self._transport.get_returncode())
        self._close()

    def _close(self) -> None:
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        if self._transport is not None:
            self._transport.close()
        if not self.finished.is_set():
            self.finished.set()
            self._on_finished(self)


class _Live:
    """A terminal that has not been released."""

    __slots__ = ("command", "session_id")

    def __init__(self, session_id: str, command: _Command) -> None:
        self.session_id = session_id
        self.command = command


class Terminals:
    """The client's terminals: answers `terminal/create`, `terminal/output`,
    `terminal/wait_for_exit`, `terminal/kill` and `terminal/release` by running real
    processes (see the package docs for the behaviour and the errors).

    Each method raises `RequestError` with the wire error, so a `v1.Client` handler
    forwards to it in one line (`return await self.terminals.create(params)`).

    Memory is bounded per terminal by its output limit, and a buffer is freed when its
    terminal is released. `aclose()` (or leaving `async with`) kills every command still
    running, each with its whole process group; a `Terminals` that is collected or still
    open at interpreter exit kills the groups it knows of.
    """

    def __init__(
        self,
        roots: FsRoots | None = None,
        *,
        default_output_limit: int = DEFAULT_OUTPUT_LIMIT,
        max_output_limit: int = DEFAULT_MAX_OUTPUT_LIMIT,
    ) -> None:
        """`roots`: when given, `cwd` must resolve (symbolic links followed) to a directory
        inside them, checked as file reads are (`FsRoots`), and a request without `cwd`
        runs in the first root; without roots any absolute `cwd` is accepted, and a
        request without one runs in this process's working directory. The roots confine
        the working directory only: they are no sandbox, the command can reach whatever
        this process can.

        `default_output_limit`: the bytes of output kept when a request sets no
        `outputByteLimit`; `max_output_limit`: the most any terminal keeps, whatever its
        request asks for.
        """
        self._roots = roots
        self._default_limit = default_output_limit
        self._max_limit = max_output_limit
        self._next_id = 0
        self._closed = False
        self._live: dict[str, _Live] = {}
        self._running: set[_Command] = set()  # not finished yet, released or not
        self._groups: set[int] = set()  # the process groups to kill if never closed
        self._finalizer = weakref.finalize(self, _kill_groups, self._groups)

    def __repr__(self) -> str:
        roots = None if self._roots is None else [str(root) for root in self._roots.roots]
        return f"Terminals(roots={roots!r}, live={len(self._live)}, running={len(self._running)})"

    def __len__(self) -> int:
        """How many terminals exist that have not been released."""
        return len(self._live)

    @property
    def roots(self) -> FsRoots | None:
        return self._roots

    async def create(self, request: v1.CreateTerminalRequest) -> v1.CreateTerminalResponse:
        """Answers `terminal/create`: checks the request, starts the command and returns a
        fresh terminal id without waiting for the command."""
        if self._closed:
            raise RequestError.internal_error("the terminals are closed")
        _check_command(request)
        cwd = await self._resolve_cwd(request.cwd if isinstance(request.cwd, str) else None)
        requested = request.output_byte_limit
        limit = min(requested if isinstance(requested, int) else self._default_limit, self._max_limit)
        env = None
        if isinstance(request.env, list) and request.env:
            env = dict(os.environ)
            env.update((variable.name, variable.value) for variable in request.env)
        args = request.args if isinstance(request.args, list) else []

        command = _Command(OutputBuffer(limit), self._running.discard, self._groups.discard)
        loop = asyncio.get_running_loop()
        try:
            await loop.subprocess_exec(
                lambda: command,
                request.command,
                *args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
                process_group=0,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise RequestError.internal_error(f"cannot start `{request.command}`: {reason}") from None
        self._running.add(command)
        if self._closed:  # closed while the process was starting
            command.kill_group()
            raise RequestError.internal_error("the terminals are closed")
        if not command.group_ended:  # a command that exited at once has ended its group
            self._groups.add(command.pid)
        self._next_id += 1
        terminal_id = f"term-{self._next_id}"
        self._live[terminal_id] = _Live(request.session_id, command)
        return v1.CreateTerminalResponse(terminal_id=terminal_id)

    async def output(self, request: v1.TerminalOutputRequest) -> v1.TerminalOutputResponse:
        """Answers `terminal/output`: the output kept so far, whether some was dropped, and
        the exit status once the command has finished (the output is then complete)."""
        command = self._find(request.session_id, request.terminal_id).command
        # The exit is read first: once it is set, the output is final.
        exit = command.exit
        text, truncated = command.output.snapshot(exit is not None)
        if exit is None:
            return v1.TerminalOutputResponse(output=text, truncated=truncated)
        status = v1.TerminalExitStatus(exit_code=exit.code, signal=exit.signal)
        return v1.TerminalOutputResponse(output=text, truncated=truncated, exit_status=status)

    async def wait_for_exit(self, request: v1.WaitForTerminalExitRequest) -> v1.WaitForTerminalExitResponse:
        """Answers `terminal/wait_for_exit` once the command has finished: its exit code,
        or the signal that ended it (`"SIGKILL"` and the like). A terminal released while
        this waits is answered with the kill's status."""
        command = self._find(request.session_id, request.terminal_id).command
        exit = await _finished(command, request.terminal_id)
        return v1.WaitForTerminalExitResponse(exit_code=exit.code, signal=exit.signal)

    async def kill(self, request: v1.KillTerminalRequest) -> v1.KillTerminalResponse:
        """Answers `terminal/kill`: kills the command's process group and answers once the
        exit has been recorded. The terminal stays valid (its output can be read; it must
        still be released)."""
        command = self._find(request.session_id, request.terminal_id).command
        command.kill_group()
        await _finished(command, request.terminal_id)
        return v1.KillTerminalResponse()

    async def release(self, request: v1.ReleaseTerminalRequest) -> v1.ReleaseTerminalResponse:
        """Answers `terminal/release`: kills the command's process group (if anything in it
        still runs) and forgets the terminal; later requests for its id are answered
        -32002."""
        live = self._find(request.session_id, request.terminal_id)
        del self._live[request.terminal_id]
        live.command.kill_group()
        self._groups.discard(live.command.pid)
        return v1.ReleaseTerminalResponse()

    async def aclose(self) -> None:
        """Kills every command still running, each with its whole process group, and waits
        (boundedly) until their exits are recorded. Every terminal is forgotten; later
        `terminal/create` requests are refused (-32603). Closing twice is harmless."""
        self._closed = True
        _kill_groups(self._groups)  # every live terminal's group, finished or not
        self._live.clear()
        running = list(self._running)
        for command in running:
            command.kill_group()  # released ones too, still on their way out
        if running:
            waits = [asyncio.ensure_future(command.finished.wait()) for command in running]
            try:
                await asyncio.wait(waits, timeout=2 * DRAIN_GRACE)
            finally:
                for wait in waits:
                    wait.cancel()
                for command in running:
                    command.abandon()  # a no-op for every command that finished
        self._finalizer.detach()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    def _find(self, session_id: str, terminal_id: str) -> _Live:
        """The terminal `terminal_id` of `session_id`, or the -32002 answer."""
        live = self._live.get(terminal_id)
        if live is None or live.session_id != session_id:
            raise RequestError.from_object(_unknown_terminal(terminal_id))
        return live

    async def _resolve_cwd(self, cwd: str | None) -> str | None:
        """The directory to run in, checked against the roots when there are any."""
        roots = self._roots
        if roots is None:
            if cwd is None:
                return None
            if "\0" in cwd:
                raise RequestError.invalid_params(CWD_PATH, "a path without NUL bytes", cwd)
            if not cwd.startswith("/"):
                raise RequestError.invalid_params(CWD_PATH, "an absolute path", cwd)
            return cwd
        if cwd is None:
            return str(roots.roots[0])
        try:
            resolved = await roots.resolve_read(cwd)
        except FsError as e:
            raise RequestError.from_object(_cwd_error(e, cwd)) from None
        try:
            mode = (await asyncio.to_thread(os.stat, resolved)).st_mode
        except OSError as e:
            message = f"cannot use `{cwd}` as the working directory: {e.strerror or e}"
            raise RequestError.internal_error(message) from None
        if not stat.S_ISDIR(mode):
            raise RequestError.invalid_params(CWD_PATH, "a directory", cwd)
        return str(resolved)


async def _finished(command: _Command, terminal_id: str) -> _Exit:
    """Waits (without polling) until the command's exit is recorded."""
    await command.finished.wait()
    if command.exit is None:
        message = f"the process of terminal `{terminal_id}` was lost before it exited"
        raise RequestError.internal_error(message)
    return command.exit


def _check_command(request: v1.CreateTerminalRequest) -> None:
    """Refuses what no process can be started with: an empty command, NUL bytes, bad
    environment variable names."""
    if not request.command:
        raise RequestError.invalid_params("$.params.command", "a non-empty command", "")
    if "\0" in request.command:
        raise RequestError.invalid_params("$.params.command", "a command without NUL bytes", request.command)
    for i, arg in enumerate(_items(request.args)):
        if "\0" in arg:
            raise RequestError.invalid_params(f"$.params.args[{i}]", "an argument without NUL bytes", arg)
    for i, variable in enumerate(_items(request.env)):
        name = variable.name
        if not name or "=" in name or "\0" in name:
            expected = "a non-empty variable name without `=` or NUL bytes"
            raise RequestError.invalid_params(f"$.params.env[{i}].name", expected, name)
        if "\0" in variable.value:
            path = f"$.params.env[{i}].value"
            raise RequestError.invalid_params(path, "a value without NUL bytes", variable.value)


def _items(value: list[T] | UnsetType) -> Iterable[T]:
    return value if isinstance(value, list) else ()


def _cwd_error(error: FsError, cwd: str) -> ErrorObject:
    """The answer for a `cwd` the roots refuse (-32602 at `$.params.cwd`), or -32603."""
    if isinstance(error, NotAbsolute):
        expected = "an absolute path"
    elif isinstance(error, ParentComponent):
        expected = "a path without .. components"
    elif isinstance(error, NulByte):
        expected = "a path without NUL bytes"
    elif isinstance(error, OutsideRoots):
        shown = ", ".join(str(root) for root in error.roots)
        expected = f"a directory inside the allowed roots ({shown})"
    elif isinstance(error, NotFound):
        expected = "an existing directory"
    else:
        return ErrorObject.internal_error(f"cannot use `{cwd}` as the working directory: {error}")
    return ErrorObject.invalid_params(CWD_PATH, expected, cwd)


def _unknown_terminal(terminal_id: str) -> ErrorObject:
    """-32002 with `data: {"terminalId": …}`."""
    data = Raw(b'{"terminalId":' + msgspec.json.encode(terminal_id) + b"}")
    return ErrorObject(code=ErrorCode.RESOURCE_NOT_FOUND, message=f"terminal not found: `{terminal_id}`", data=data)
