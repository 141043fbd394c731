"""The client's `Terminals` with real commands: output and exit statuses, truncation at a
character boundary, invalid and incomplete UTF-8, args/env/cwd, the roots' refusals with
their exact data, session ownership, kill and release (the whole process group goes, a
background grandchild included), and the output buffer alone.

Every wait is bounded; a command that would run long is always killed by the test (every
test runs inside `async with Terminals()`, which kills what is left). A command tells the
test where it is through a named pipe, never through a sleep; the death of a process is
awaited through a pidfd."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import shutil
import signal
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from msgspec import Raw

from agentproto.acp import Terminals, v1
from agentproto.acp.fs import FsRoots
from agentproto.acp.terminal import CWD_PATH, DEFAULT_MAX_OUTPUT_LIMIT, DEFAULT_OUTPUT_LIMIT
from agentproto.acp.terminal.output import OutputBuffer
from agentproto.codec import UNSET, encode
from agentproto.jsonrpc import ErrorObject, RequestError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
needs_pidfd = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux)")

WAIT = 10.0
"""The bound of every single wait."""
SESSION = "s1"
T = TypeVar("T")


async def bounded(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, WAIT)


def sh(script: str, *args: str, **fields: Any) -> v1.CreateTerminalRequest:
    """`sh -c script sh args…`: inside the script, `$1` is the first of `args`."""
    return v1.CreateTerminalRequest(session_id=SESSION, command="sh", args=["-c", script, "sh", *args], **fields)


async def create(terminals: Terminals, request: v1.CreateTerminalRequest) -> str:
    return (await bounded(terminals.create(request))).terminal_id


async def output(terminals: Terminals, terminal_id: str, session: str = SESSION) -> v1.TerminalOutputResponse:
    return await bounded(terminals.output(v1.TerminalOutputRequest(session_id=session, terminal_id=terminal_id)))


async def wait(terminals: Terminals, terminal_id: str, session: str = SESSION) -> v1.WaitForTerminalExitResponse:
    request = v1.WaitForTerminalExitRequest(session_id=session, terminal_id=terminal_id)
    return await bounded(terminals.wait_for_exit(request))


async def kill(terminals: Terminals, terminal_id: str, session: str = SESSION) -> v1.KillTerminalResponse:
    return await bounded(terminals.kill(v1.KillTerminalRequest(session_id=session, terminal_id=terminal_id)))


async def release(terminals: Terminals, terminal_id: str, session: str = SESSION) -> v1.ReleaseTerminalResponse:
    return await bounded(terminals.release(v1.ReleaseTerminalRequest(session_id=session, terminal_id=terminal_id)))


async def run(terminals: Terminals, request: v1.CreateTerminalRequest) -> v1.TerminalOutputResponse:
    """Runs `request` to its end and returns the final output."""
    terminal_id = await create(terminals, request)
    await wait(terminals, terminal_id)
    response = await output(terminals, terminal_id)
    await release(terminals, terminal_id)
    return response


async def refused(call: Awaitable[object]) -> ErrorObject:
    with pytest.raises(RequestError) as raised:
        await bounded(call)
    return raised.value.error


def data(error: ErrorObject) -> Any:
    assert isinstance(error.data, Raw)
    return json.loads(bytes(error.data))


def assert_not_found(error: ErrorObject, terminal_id: str) -> None:
    assert error.code == -32002, error
    assert data(error) == {"terminalId": terminal_id}
    assert error.message == f"terminal not found: `{terminal_id}`"


def exited(code: int) -> v1.TerminalExitStatus:
    return v1.TerminalExitStatus(exit_code=code, signal=None)


class Fifo:
    """A named pipe the test and a command talk through. The test holds it open for
    reading and writing, so neither side's `open` ever blocks and a read never sees an
    end of file."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = str(path)
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self._pending = b""

    async def line(self) -> str:
        """The next line a command wrote (waits for it without polling)."""
        while b"\n" not in self._pending:
            await readable(self._fd)
            self._pending += os.read(self._fd, 4096)
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode()

    def send(self, line: str) -> None:
        os.write(self._fd, line.encode() + b"\n")

    def close(self) -> None:
        os.close(self._fd)


@pytest.fixture
def fifos(tmp_path: Path) -> Any:
    """Makes `Fifo`s in a temporary directory and closes them after the test."""
    made: list[Fifo] = []

    def make(name: str) -> Fifo:
        fifo = Fifo(tmp_path / name)
        made.append(fifo)
        return fifo

    yield make
    for fifo in made:
        fifo.close()


async def readable(fd: int) -> None:
    """Returns once `fd` is readable (bounded)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await bounded(ready)
    finally:
        loop.remove_reader(fd)


async def process_ended(pid: int) -> None:
    """Returns once the process `pid` has ended (its pidfd becomes readable)."""
    fd = os.pidfd_open(pid)
    try:
        await readable(fd)
    finally:
        os.close(fd)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# --- the output buffer alone --------------------------------------------------------


def buffer(limit: int, *chunks: bytes) -> OutputBuffer:
    kept = OutputBuffer(limit)
    for chunk in chunks:
        kept.push(chunk)
    return kept


def test_the_buffer_keeps_the_tail_on_a_character_boundary() -> None:
    assert buffer(8, b"abc", b"def").snapshot(True) == ("abcdef", False)
    assert buffer(6, b"abc", b"def").snapshot(True) == ("abcdef", False)
    assert buffer(4, b"abc", b"def").snapshot(True) == ("cdef", True)
    assert buffer(2, b"abcdef").snapshot(True) == ("ef", True)  # one chunk over the limit
    # "éé" is C3 A9 C3 A9: its last three bytes start inside the first é.
    assert buffer(3, "éé".encode()).snapshot(True) == ("é", True)
    assert buffer(3, "aé".encode(), "é".encode()).snapshot(True) == ("é", True)
    # A four-byte character cut after its first byte loses its three others.
    assert buffer(4, "x😀".encode(), b"y").snapshot(True) == ("y", True)
    once = buffer(2, b"abc")
    once.push(b"")
    assert once.snapshot(True) == ("bc", True)  # once truncated, always truncated


def test_a_buffer_with_limit_zero_keeps_nothing() -> None:
    assert buffer(0).snapshot(True) == ("", False)
    assert buffer(0, b"", b"").snapshot(True) == ("", False)
    assert buffer(0, b"a").snapshot(True) == ("", True)


def test_a_long_stream_keeps_exactly_its_last_bytes() -> None:
    stream = b"".join(b"%05d," % i for i in range(20_000))
    kept = OutputBuffer(1000)
    for at in range(0, len(stream), 777):
        kept.push(stream[at : at + 777])
    assert kept.snapshot(True) == (stream[-1000:].decode(), True)
    assert len(kept) == 1000


def test_the_snapshot_holds_back_an_incomplete_character_while_running() -> None:
    kept = buffer(16, b"a\xc3")
    assert kept.snapshot(False) == ("a", False)
    assert kept.snapshot(True) == ("a\ufffd", False)
    kept.push(b"\xa9")
    assert kept.snapshot(False) == ("aé", False)
    # Bytes that can never be a character are replaced at once.
    assert buffer(16, b"a\xffb\xc3").snapshot(False) == ("a\ufffdb", False)
    # One replacement character per maximal invalid sequence, as Rust's decoder does.
    assert buffer(32, b"\xe0\x80x\xed\xa0\x80\xf0\x9f\x98").snapshot(True) == ("\ufffd" * 2 + "x" + "\ufffd" * 4, False)
    # Replacement characters (3 bytes each) never push the text past the limit.
    assert buffer(4, b"\xff\xff\xff\xff").snapshot(True) == ("\ufffd", True)


# --- commands -----------------------------------------------------------------------


async def test_runs_a_command_and_captures_its_output() -> None:
    async with Terminals() as terminals:
        terminal_id = await create(terminals, sh("printf hi"))
        assert len(terminals) == 1
        answer = await wait(terminals, terminal_id)
        assert (answer.exit_code, answer.signal) == (0, None)
        assert encode(answer) == b'{"exitCode":0,"signal":null}'
        response = await output(terminals, terminal_id)
        assert (response.output, response.truncated, response.exit_status) == ("hi", False, exited(0))
        assert encode(response) == b'{"output":"hi","truncated":false,"exitStatus":{"exitCode":0,"signal":null}}'
        assert (await wait(terminals, terminal_id)).exit_code == 0  # waiting again answers the same
        await release(terminals, terminal_id)
        assert len(terminals) == 0


async def test_reports_exit_codes_and_signals() -> None:
    async with Terminals() as terminals:
        for code in (1, 3, 255):
            terminal_id = await create(terminals, sh(f"exit {code}"))
            assert (await wait(terminals, terminal_id)).exit_code == code
            assert (await output(terminals, terminal_id)).exit_status == exited(code)
        terminal_id = await create(terminals, sh("kill -TERM $$"))
        answer = await wait(terminals, terminal_id)
        assert (answer.exit_code, answer.signal) == (None, "SIGTERM")
        # A signal without a portable number is reported as its number.
        terminal_id = await create(terminals, sh("kill -USR1 $$"))
        assert (await wait(terminals, terminal_id)).signal == str(int(signal.SIGUSR1))


async def test_stdout_and_stderr_go_into_one_buffer() -> None:
    async with Terminals() as terminals:
        response = await run(terminals, sh("printf out; printf err >&2"))
        # The two pipes are read as data arrives, so only their contents are certain.
        assert sorted([response.output[:3], response.output[3:]]) == ["err", "out"]


async def test_passes_args_env_and_cwd(tmp_path: Path) -> None:
    async with Terminals() as terminals:
        script = 'printf "%s|%s|%s|" "$AGENTPROTO_TEST" "$1" "${HOME:+home}"; pwd'
        request = sh(script, "two words", env=[v1.EnvVariable(name="AGENTPROTO_TEST", value="value=1")])
        request.cwd = str(tmp_path)
        response = await run(terminals, request)
        # The variable is added to this process's environment (HOME stays).
        assert response.output.startswith("value=1|two words|home|"), response.output
        assert Path(response.output.rsplit("|", 1)[1].strip()).resolve() == tmp_path.resolve()
        # Stdin is the null device: reading it ends at once.
        assert (await run(terminals, sh("cat; printf end"))).output == "end"


async def test_truncates_from_the_start_at_a_character_boundary() -> None:
    async with Terminals() as terminals:
        response = await run(terminals, sh(r"printf 'a\303\251\303\251'", output_byte_limit=3))  # "aéé"
        assert (response.output, response.truncated) == ("é", True)
        response = await run(terminals, sh("printf abc", output_byte_limit=3))
        assert (response.output, response.truncated) == ("abc", False)
        lines = sh("i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done", output_byte_limit=100)
        response = await run(terminals, lines)
        assert response.truncated
        assert 90 < len(response.output) <= 100 and response.output.endswith("\nline1999\n"), response.output


async def test_output_limits_default_and_maximum() -> None:
    assert (DEFAULT_OUTPUT_LIMIT, DEFAULT_MAX_OUTPUT_LIMIT) == (1024 * 1024, 16 * 1024 * 1024)
    async with Terminals(default_output_limit=2, max_output_limit=4) as terminals:
        response = await run(terminals, sh("printf abcdef"))
        assert (response.output, response.truncated) == ("ef", True)
        response = await run(terminals, sh("printf abcdef", output_byte_limit=2**64 - 1))
        assert (response.output, response.truncated) == ("cdef", True)
        response = await run(terminals, sh("printf abcdef", output_byte_limit=None))  # null reads as absent
        assert (response.output, response.truncated) == ("ef", True)


async def test_invalid_utf8_reads_as_replacement_characters() -> None:
    async with Terminals() as terminals:
        response = await run(terminals, sh(r"printf 'a\377b\303'"))
        # Once the command has exited, an incomplete last character is replaced too.
        assert response.output == "a\ufffdb\ufffd"


async def test_an_incomplete_character_is_held_back_while_the_command_runs(fifos: Any) -> None:
    ready, go = fifos("ready"), fifos("go")
    async with Terminals() as terminals:
        script = r'printf "a\303"; echo > "$1"; read x < "$2"; printf "\251"'
        terminal_id = await create(terminals, sh(script, ready.path, go.path))
        await ready.line()
        assert (await output(terminals, terminal_id)).output == "a"
        go.send("")
        await wait(terminals, terminal_id)
        assert (await output(terminals, terminal_id)).output == "aé"


async def test_wait_for_exit_runs_alongside_output(fifos: Any) -> None:
    ready, go = fifos("ready"), fifos("go")
    async with Terminals() as terminals:
        script = 'printf started; echo > "$1"; read x < "$2"; printf " done"; exit 7'
        terminal_id = await create(terminals, sh(script, ready.path, go.path))
        waiter = asyncio.create_task(wait(terminals, terminal_id))
        await ready.line()
        running = await output(terminals, terminal_id)
        assert (running.output, running.exit_status) == ("started", UNSET)
        assert encode(running) == b'{"output":"started","truncated":false}'
        assert not waiter.done()
        go.send("")
        assert (await bounded(waiter)).exit_code == 7
        assert await output(terminals, terminal_id) == v1.TerminalOutputResponse(
            output="started done", truncated=False, exit_status=exited(7)
        )


@needs_pidfd
async def test_kill_ends_the_whole_group_and_keeps_the_terminal(fifos: Any) -> None:
    pid = fifos("pid")
    async with Terminals() as terminals:
        terminal_id = await create(terminals, sh('sleep 30 & echo $! > "$1"; wait', pid.path))
        grandchild = int(await pid.line())
        assert alive(grandchild)
        waiter = asyncio.create_task(wait(terminals, terminal_id))
        assert (await output(terminals, terminal_id)).exit_status is UNSET
        await kill(terminals, terminal_id)
        await process_ended(grandchild)
        answer = await bounded(waiter)
        assert (answer.exit_code, answer.signal) == (None, "SIGKILL")
        # Still valid: output, wait and kill all answer.
        after = await output(terminals, terminal_id)
        assert after.exit_status == v1.TerminalExitStatus(exit_code=None, signal="SIGKILL")
        assert (await wait(terminals, terminal_id)).signal == "SIGKILL"
        await kill(terminals, terminal_id)
        await release(terminals, terminal_id)


@needs_pidfd
async def test_what_a_command_leaves_running_ends_when_it_exits() -> None:
    async with Terminals() as terminals:
        # The command exits at once; the sleep it started is in its process group.
        terminal_id = await create(terminals, sh("sleep 30 </dev/null >/dev/null 2>&1 & echo $!"))
        assert (await wait(terminals, terminal_id)).exit_code == 0
        grandchild = int((await output(terminals, terminal_id)).output)
        try:
            await process_ended(grandchild)  # without a release
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(grandchild, signal.SIGKILL)
        await release(terminals, terminal_id)


async def test_release_kills_a_running_command_and_forgets_the_terminal() -> None:
    async with Terminals() as terminals:
        terminal_id = await create(terminals, sh("sleep 30"))
        waiter = asyncio.create_task(wait(terminals, terminal_id))
        await asyncio.sleep(0)  # a yield, not a delay: the waiter's first step finds the terminal
        await release(terminals, terminal_id)
        assert len(terminals) == 0
        # The wait already under way sees the kill.
        assert (await bounded(waiter)).signal == "SIGKILL"
        for call in (output, wait, kill, release):
            assert_not_found(await refused(call(terminals, terminal_id)), terminal_id)


@needs_pidfd
async def test_closing_ends_every_group_and_answers_pending_waits(fifos: Any) -> None:
    pid = fifos("pid")
    terminals = Terminals()
    try:
        terminal_id = await create(terminals, sh('sleep 30 & echo $! > "$1"; wait', pid.path))
        grandchild = int(await pid.line())
        waiter = asyncio.create_task(wait(terminals, terminal_id))
        await asyncio.sleep(0)  # a yield, not a delay: the waiter's first step finds the terminal
    finally:
        await bounded(terminals.aclose())
    await process_ended(grandchild)
    assert (await bounded(waiter)).signal == "SIGKILL"
    assert len(terminals) == 0
    error = await refused(terminals.create(sh("true")))
    assert (error.code, error.message) == (-32603, "the terminals are closed")
    await bounded(terminals.aclose())  # twice is harmless


async def test_a_terminal_belongs_to_its_session() -> None:
    async with Terminals() as terminals:
        assert_not_found(await refused(output(terminals, "nope")), "nope")
        terminal_id = await create(terminals, sh("printf x"))
        for call in (output, wait, kill, release):
            assert_not_found(await refused(call(terminals, terminal_id, "s2")), terminal_id)
        assert len(terminals) == 1
        await wait(terminals, terminal_id)
        assert (await output(terminals, terminal_id)).output == "x"
        await release(terminals, terminal_id)


async def test_ids_are_fresh() -> None:
    async with Terminals() as terminals:
        first = await create(terminals, sh("true"))
        second = await create(terminals, sh("true"))
        await release(terminals, first)
        third = await create(terminals, sh("true"))
        assert len({first, second, third}) == 3


# --- refusals -----------------------------------------------------------------------


async def test_cwd_is_confined_to_the_roots(tmp_path: Path) -> None:
    (tmp_path / "root" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "file").write_text("")
    root = (tmp_path / "root").resolve()
    async with Terminals(FsRoots([root])) as terminals:
        cases = [
            (str(tmp_path), f"a directory inside the allowed roots ({root})"),
            ("/", f"a directory inside the allowed roots ({root})"),
            ("root", "an absolute path"),
            (f"{root}/sub/..", "a path without .. components"),
            (f"{root}/missing", "an existing directory"),
            (f"{root}/file", "a directory"),
            (f"{root}/a\0b", "a path without NUL bytes"),
        ]
        for cwd, expected in cases:
            error = await refused(terminals.create(sh("pwd", cwd=cwd)))
            assert error.code == -32602
            assert data(error) == {"path": CWD_PATH, "expected": expected, "found": cwd}
        assert len(terminals) == 0
        # Inside the roots; and without a cwd, the first root.
        assert (await run(terminals, sh("pwd", cwd=f"{root}/sub"))).output == f"{root / 'sub'}\n"
        assert (await run(terminals, sh("pwd"))).output == f"{root}\n"


async def test_without_roots_cwd_must_be_absolute() -> None:
    async with Terminals() as terminals:
        error = await refused(terminals.create(sh("pwd", cwd="relative")))
        assert data(error) == {"path": CWD_PATH, "expected": "an absolute path", "found": "relative"}
        assert (await run(terminals, sh("pwd", cwd=None))).exit_status == exited(0)  # null reads as absent


async def test_invalid_command_fields_are_refused() -> None:
    async with Terminals() as terminals:
        error = await refused(terminals.create(v1.CreateTerminalRequest(session_id=SESSION, command="")))
        assert data(error) == {"path": "$.params.command", "expected": "a non-empty command", "found": ""}
        error = await refused(terminals.create(v1.CreateTerminalRequest(session_id=SESSION, command="a\0b")))
        assert data(error)["path"] == "$.params.command"
        error = await refused(terminals.create(sh("true", "a\0b")))
        assert data(error) == {"path": "$.params.args[3]", "expected": "an argument without NUL bytes", "found": "a\0b"}
        env = [v1.EnvVariable(name="OK", value="1"), v1.EnvVariable(name="A=B", value="1")]
        error = await refused(terminals.create(sh("true", env=env)))
        expected = "a non-empty variable name without `=` or NUL bytes"
        assert data(error) == {"path": "$.params.env[1].name", "expected": expected, "found": "A=B"}
        error = await refused(terminals.create(sh("true", env=[v1.EnvVariable(name="V", value="\0")])))
        assert data(error)["path"] == "$.params.env[0].value"
        assert len(terminals) == 0


async def test_a_command_that_cannot_start_is_an_internal_error() -> None:
    async with Terminals() as terminals:
        command = "/nonexistent/agentproto-no-such-command"
        error = await refused(terminals.create(v1.CreateTerminalRequest(session_id=SESSION, command=command)))
        assert error.code == -32603 and command in error.message and error.data is UNSET
        assert len(terminals) == 0


@needs_pidfd
@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs setsid(1)")
async def test_an_escaped_process_holding_the_output_does_not_hold_the_exit_back() -> None:
    async with Terminals() as terminals:
        # The sleep leaves the group (its own session) and inherits stdout: the pipe
        # stays open after the shell exits, and no group kill reaches it.
        terminal_id = await create(terminals, sh("setsid sleep 30 & echo $!"))
        grandchild = 0
        try:
            assert (await wait(terminals, terminal_id)).exit_code == 0  # after the drain grace
            response = await output(terminals, terminal_id)
            grandchild = int(response.output)
            assert response.exit_status == exited(0) and alive(grandchild)
        finally:
            if grandchild:
                os.kill(grandchild, signal.SIGKILL)
        await release(terminals, terminal_id)


@needs_pidfd
async def test_terminals_never_closed_kill_their_groups_when_collected(fifos: Any) -> None:
    pid = fifos("pid")
    terminals = Terminals()
    await create(terminals, sh('sleep 30 & echo $! > "$1"; wait', pid.path))
    grandchild = int(await pid.line())
    del terminals
    gc.collect()
    await process_ended(grandchild)
