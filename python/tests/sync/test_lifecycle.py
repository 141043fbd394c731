"""The server's process group goes on every way out: `close()`, leaving `with` by an
exception, garbage collection, interpreter exit, `kill()` from another thread. Deaths
are awaited through pidfds, each wait bounded."""

from __future__ import annotations

import gc
import os
import select
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentproto.sync import ChildExited, Client, ServerError
from tests.sync.support import DEADLINE, ENV, PYTHON_FIXTURE, bounded, running

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux)")


def wait_gone(pid: int, deadline: float = DEADLINE) -> None:
    """Returns once `pid` (not our child: a grandchild, or one already reaped) has ended."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        readable, _, _ = select.select([fd], [], [], deadline)
        assert readable, f"process {pid} still runs after {deadline} s"
    finally:
        os.close(fd)


def launcher(pidfile: Path) -> list[str]:
    """A server started through a shell that leaves a child behind in the group."""
    return ["sh", "-c", f'sleep 300 </dev/null & echo $! > "{pidfile}"; exec "$@"', "sh", *PYTHON_FIXTURE]


def test_close_ends_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    with bounded(Client.spawn(launcher(pidfile), env=ENV)) as client:
        assert client.request_bytes("echo", b"x") == b"x"
        straggler = int(pidfile.read_text())
        assert running(straggler)
    assert not running(client.pid)
    wait_gone(straggler)


def test_leaving_with_by_an_exception_ends_the_server() -> None:
    client = Client.spawn(PYTHON_FIXTURE, env=ENV)
    with pytest.raises(KeyError), client:
        assert client.request_bytes("echo", b"x") == b"x"
        raise KeyError("the caller failed")
    assert client.returncode is not None and not running(client.pid)
    with pytest.raises(ChildExited):
        client.request("echo", b"")


def test_an_unclosed_client_is_ended_when_collected(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"

    def forget() -> int:
        client = Client.spawn(launcher(pidfile), env=ENV)
        assert client.request_bytes("echo", b"x") == b"x"
        return client.pid

    gc.disable()  # collected by reference counting, at the end of `forget`
    try:
        pid = forget()
    finally:
        gc.enable()
    assert not running(pid), "the server was not ended and reaped by the finalizer"
    wait_gone(int(pidfile.read_text()))


def test_an_unclosed_client_is_ended_at_interpreter_exit(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = (
        "import sys\n"
        "from agentproto.sync import Client\n"
        f"CLIENT = Client.spawn({launcher(pidfile)!r})\n"
        "assert CLIENT.request('echo', b'x') == b'x'\n"
        "print(CLIENT.pid, flush=True)\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", script], env=ENV, stdout=subprocess.PIPE, timeout=DEADLINE, check=True
    )
    server = int(process.stdout)
    wait_gone(server)
    wait_gone(int(pidfile.read_text()))


def test_kill_from_another_thread_ends_a_blocked_request() -> None:
    # A server that never answers: only the kill ends the request. Whether the timer fires
    # before the request is written or while it waits, the outcome is the same.
    with bounded(Client.spawn(["sh", "-c", "exec cat >/dev/null"])) as client:
        killer = threading.Timer(0.1, client.kill)
        killer.start()
        try:
            with pytest.raises(ChildExited) as caught:
                client.request("echo", b"x")
        finally:
            killer.join()
        assert caught.value.status == -9
        client.kill()  # after the reap: does nothing


def test_a_server_killed_by_its_own_callback_is_a_clean_error() -> None:
    with bounded(Client.spawn(PYTHON_FIXTURE, env=ENV)) as client:

        def die(payload: memoryview) -> bytes:
            client.kill()
            return b"late"

        client.register_callback("die", die)
        with pytest.raises(ChildExited) as caught:
            client.request("callback", b"die\0x")
        assert caught.value.status == -9


def test_an_interrupt_in_a_callback_ends_the_server_and_propagates() -> None:
    def interrupted(payload: memoryview) -> bytes:
        raise KeyboardInterrupt

    with bounded(Client.spawn(PYTHON_FIXTURE, env=ENV)) as client:
        client.register_callback("stop", interrupted)
        with pytest.raises(KeyboardInterrupt):
            client.request("callback", b"stop\0x")
        assert not running(client.pid), "the exchange cannot resume: the server is ended"
        with pytest.raises(ChildExited):
            client.request("echo", b"")


def test_a_request_from_inside_a_callback_is_refused_and_reported_to_the_server() -> None:
    with bounded(Client.spawn(PYTHON_FIXTURE, env=ENV)) as client:
        client.register_callback("nested", lambda payload: client.request("echo", payload))
        with pytest.raises(ServerError) as caught:
            client.request("callback", b"nested\0x")
        assert caught.value.text.startswith("client error: callback `nested` panicked: a request is already in flight")
        assert client.request_bytes("echo", b"fine") == b"fine"


def test_a_server_started_to_die_with_its_parent_goes_when_the_spawning_thread_ends() -> None:
    spawned: list[Client] = []
    thread = threading.Thread(
        target=lambda: spawned.append(Client.spawn(PYTHON_FIXTURE, env=ENV, die_with_parent=True))
    )
    thread.start()
    thread.join(DEADLINE)
    assert spawned, "the spawning thread did not finish"
    with bounded(spawned[0]) as client:
        wait_gone(client.pid)  # our child: its pidfd turns readable when it exits
        with pytest.raises(ChildExited) as caught:
            client.request("echo", b"x")
        assert caught.value.status == -9


def test_a_server_started_to_die_with_its_parent_serves_like_any_other() -> None:
    with bounded(Client.spawn(PYTHON_FIXTURE, env=ENV, die_with_parent=True)) as client:
        assert client.request_bytes("echo", b"alive") == b"alive"
