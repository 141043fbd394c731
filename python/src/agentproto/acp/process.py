"""Spawning an agent: the client side of ACP over a child process's stdin and stdout.

The agent runs in a process group of its own (`process_group=0`), and every way of
ending it ends the whole group: an agent command is often a launcher (`npx`, `uvx`, a
shell script) whose child is the real agent, and that child must not outlive the
session. `AgentProcess.close` ends the session the way ACP asks (close stdin, wait
`exit_grace` seconds, then SIGKILL the group); using the process as an async context
manager closes it on every way out, and a process left unclosed is killed (group and
all) when it is garbage collected or at interpreter exit. The agent's stderr is
inherited; lines it prints on stdout that are not JSON are skipped and reported.
(A terminal's Ctrl-C reaches this process, not the agent's group.)

A client killed with SIGKILL runs none of that. With `AcpOptions.die_with_parent` (Linux
only) the kernel sends SIGKILL to the agent when the thread that spawned it ends, which
includes the whole client being killed (`PR_SET_PDEATHSIG`). It follows the *thread*: the
event loop's thread spawns, so only use it where that thread outlives the agent (the
usual `asyncio.run` in the main thread). It reaches the direct child only: a launcher's
own children survive unless the launcher takes them down. And it makes `subprocess` fork
with a hook instead of its faster spawn path.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import os
import signal
import sys
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

from agentproto.acp.client import AgentConnectionBase, connect
from agentproto.acp.options import AcpOptions
from agentproto.acp.surface import Surface

__all__ = ["AgentProcess", "spawn"]

C = TypeVar("C", bound=AgentConnectionBase)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _death_signal_hook() -> Callable[[], None]:
    """A `preexec_fn` asking the kernel to SIGKILL the child when its parent thread ends.

    It runs in the forked child before `exec`: one `prctl` through a function pointer
    looked up here, in the parent, and a `getppid` check for a parent that died before
    the `prctl` (no signal would come then)."""
    if not sys.platform.startswith("linux"):
        raise OSError("die_with_parent needs Linux (PR_SET_PDEATHSIG)")
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()
    kill = int(signal.SIGKILL)

    def hook() -> None:
        if prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:
            raise OSError("the client exited while the agent was starting")

    return hook


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3+), else `None`."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _forget(pgid: int, pidfd: int | None) -> None:
    """The end of an `AgentProcess`: its group is killed and its pidfd closed."""
    _kill_group(pgid)
    if pidfd is not None:
        with contextlib.suppress(OSError):
            os.close(pidfd)


class _Stdin:
    """The child's stdin, closable by `AgentProcess.close` while the connection's writer
    still holds it (writes after that fail with `BrokenPipeError`)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer: asyncio.StreamWriter | None = writer

    def write(self, data: bytes, /) -> None:
        if self._writer is None:
            raise BrokenPipeError("the agent's stdin is closed")
        self._writer.write(data)

    async def drain(self) -> None:
        if self._writer is None:
            raise BrokenPipeError("the agent's stdin is closed")
        await self._writer.drain()

    def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


class AgentProcess:
    """A spawned agent process and the connection task serving it."""

    def __init__(
        self, process: asyncio.subprocess.Process, stdin: _Stdin, run: asyncio.Task[None], grace: float
    ) -> None:
        self.process = process
        self._stdin = stdin
        self._run = run
        self._grace = grace
        # `Process.wait()` (3.11) returns only once the child's pipes are closed too, which
        # a grandchild holding its stdout delays; a pidfd tells when the agent itself exits.
        self._pidfd = _pidfd(process.pid)
        # A process nobody closed still goes, with its whole group.
        self._finalizer = weakref.finalize(self, _forget, process.pid, self._pidfd)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def connection(self) -> asyncio.Task[None]:
        """The task running the connection (ends when the agent's stdout ends)."""
        return self._run

    def kill(self) -> None:
        """SIGKILLs the agent's whole process group at once (no grace)."""
        _kill_group(self.process.pid)

    async def _exited(self) -> None:
        """Returns once the agent itself has exited."""
        if self._pidfd is None:
            await self.process.wait()
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not done.done():
                done.set_result(None)

        loop.add_reader(self._pidfd, readable)
        try:
            await done
        finally:
            loop.remove_reader(self._pidfd)

    async def close(self) -> int | None:
        """Closes the agent's stdin, waits up to `exit_grace` for it to exit, then kills
        whatever is left of its process group (the agent too, if it is still running).
        Returns the agent's exit status (negative: the signal that ended it; `None` in
        the odd case where it could not be collected within a second grace)."""
        self._stdin.close()
        exited = True
        try:
            await asyncio.wait_for(self._exited(), self._grace)
        except TimeoutError:
            exited = False
        # The group goes either way: a launcher's children must not outlive it.
        _kill_group(self.process.pid)
        if not exited:
            # In case it left its group (setsid). Not `Process.kill()`: it polls the
            # child first, reaping it behind asyncio's child watcher's back.
            with contextlib.suppress(ProcessLookupError, OSError):
                if self._pidfd is not None:
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                elif self.process.returncode is None:
                    self.process.kill()
        self._finalizer()  # closes the pidfd
        # Bounded: a process that escaped the group may still hold the pipes open.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), self._grace)
        # The child is gone, so its stdout ends: the connection ends promptly.
        done, _ = await asyncio.wait((self._run,), timeout=self._grace)
        if not done:
            self._run.cancel()
            await asyncio.wait((self._run,))
        if not self._run.cancelled():
            self._run.exception()  # retrieved: a broken pipe to a dead agent is expected
        return self.process.returncode

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()


async def spawn(
    surface: Surface,
    command: Sequence[str],
    client: Any,
    options: AcpOptions | None,
    connection_type: type[C],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[C, AgentProcess]:
    """Starts `command` and connects `client` to it (use the per-surface `spawn_agent`)."""
    if not command:
        raise ValueError("an agent command needs at least the program")
    options = options if options is not None else AcpOptions()
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=None,
        cwd=cwd,
        env=None if env is None else dict(env),
        process_group=0,
        preexec_fn=_death_signal_hook() if options.die_with_parent else None,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        stdin = _Stdin(process.stdin)
        # Agents that print logs on stdout are common: skip what is not JSON.
        connection_options = dataclasses.replace(options.connection, skip_non_json_lines=True)
        connection, agent = connect(
            surface,
            client,
            process.stdout,
            stdin,
            dataclasses.replace(options, connection=connection_options),
            connection_type,
        )
        run = asyncio.create_task(connection.run())
    except BaseException:
        _kill_group(process.pid)
        await process.wait()
        raise
    return agent, AgentProcess(process, stdin, run, options.exit_grace)
