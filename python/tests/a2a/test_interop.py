"""Interop over real loopback HTTP, each peer in its own process:

* the official `a2a-sdk` 1.3.0 client (`interop/official/a2a-python/client.py`, its scenario
  runner: sends, a direct message, get, list, a stream, cancels, push configs, a
  subscription) against our Python server (`python -m agentproto.examples.a2a_server
  --memory`, which also checks that contract), on JSON-RPC and HTTP+JSON; the same server
  on a `--db` file keeps a task across a restart, and every acknowledged task across a
  SIGKILL under load;
* our Python client against our Rust server (`target/debug/agentproto serve --memory`;
  build it with `cargo build -p agentproto-cli`), on both bindings: two sends, a stream,
  get, cancel, and a subscription resumed with `Last-Event-ID`.

Every child process is ended on every path; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentproto.a2a.client import A2aClient, PeerError, fetch_card
from agentproto.a2a.codec import encode
from agentproto.a2a.errors import ErrorKind
from agentproto.a2a.generated.v1 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)

ROOT = Path(__file__).resolve().parents[3]
BOUND = 30.0


class Child:
    """A child process whose stdout lines are read on a thread (so waits are bounded)."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.decode("utf-8", "replace"))
        self.lines.put(None)

    def url(self) -> str:
        """The `http://HOST:PORT` of the first `listening on` line."""
        while True:
            try:
                line = self.lines.get(timeout=BOUND)
            except queue.Empty:
                raise AssertionError("the server did not print its address within the bound") from None
            if line is None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise AssertionError(f"the server exited before listening: {err}")
            found = re.search(r"listening on (http://\S+)", line)
            if found:
                return found.group(1)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.reader.join(timeout=10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture(scope="module")
def python_server() -> Iterator[str]:
    argv = [
        sys.executable,
        "-m",
        "agentproto.examples.a2a_server",
        "--addr",
        "127.0.0.1:0",
        "--memory",
        "--push-allow-private",
    ]
    child = Child(argv, ROOT)
    try:
        yield child.url()
    finally:
        child.stop()


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_official_client_against_our_python_server(python_server: str, binding: str) -> None:
    script = ROOT / "interop/official/a2a-python/client.py"
    argv = [sys.executable, str(script), "--card-url", python_server, "--binding", binding, "--timeout", "10"]
    done = subprocess.run(argv, capture_output=True, timeout=120, check=False)
    steps = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    failed = [s for s in steps if not s.get("ok", True)]
    assert done.returncode == 0 and not failed, f"{failed or steps}\n{done.stderr.decode()[-2000:]}"
    names = {s["step"] for s in steps}
    assert {"send", "send-message", "get", "stream", "cancel", "subscribe", "push-config"} <= names


def test_the_python_server_on_a_db_file_keeps_tasks_across_a_restart(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "agentproto.examples.a2a_server", "--addr", "127.0.0.1:0", "--db"]
    path = str(tmp_path / "tasks.db")

    async def send(base: str) -> str:
        async with await A2aClient.connect(base, timeout=10) as client:
            sent = await client.send_message(_send("kept", "m-kept"))
            assert isinstance(sent.task, Task) and sent.task.status.state is TaskState.COMPLETED
            return sent.task.id

    async def get(base: str, task_id: str) -> Task:
        async with await A2aClient.connect(base, timeout=10) as client:
            return await client.get_task(GetTaskRequest(id=task_id))

    child = Child([*argv, path], ROOT)
    try:
        task_id = asyncio.run(asyncio.wait_for(send(child.url()), BOUND))
    finally:
        child.stop()
    child = Child([*argv, path], ROOT)
    try:
        got = asyncio.run(asyncio.wait_for(get(child.url(), task_id), BOUND))
    finally:
        child.stop()
    assert got.status.state is TaskState.COMPLETED and got.artifacts[0].parts[0].text == "kept"


def test_a_sigkill_of_the_python_server_under_load_loses_no_acknowledged_task(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "agentproto.examples.a2a_server", "--addr", "127.0.0.1:0", "--db"]
    path = str(tmp_path / "tasks.db")
    acknowledged: list[str] = []

    async def load(base: str, process: subprocess.Popen[bytes]) -> None:
        enough = asyncio.Event()

        async def sender(n: int) -> None:
            async with await A2aClient.connect(base, timeout=10) as client:
                for i in range(10_000):
                    sent = await client.send_message(_send("kept", f"m-{n}-{i}"))
                    assert isinstance(sent.task, Task)
                    acknowledged.append(sent.task.id)
                    if len(acknowledged) >= 100:
                        enough.set()

        senders = [asyncio.create_task(sender(n)) for n in range(8)]
        await enough.wait()
        process.kill()  # SIGKILL while the senders still send
        outcomes = await asyncio.gather(*senders, return_exceptions=True)
        assert all(isinstance(o, Exception) for o in outcomes)  # each saw the server die

    child = Child([*argv, path], ROOT)
    try:
        asyncio.run(asyncio.wait_for(load(child.url(), child.process), BOUND))
    finally:
        child.stop()

    async def check(base: str) -> None:
        async with await A2aClient.connect(base, timeout=10) as client:
            for task_id in acknowledged:
                got = await client.get_task(GetTaskRequest(id=task_id))
                assert got.status.state is TaskState.COMPLETED, task_id

    child = Child([*argv, path], ROOT)
    try:
        asyncio.run(asyncio.wait_for(check(child.url()), BOUND))
    finally:
        child.stop()
    assert len(acknowledged) >= 100


@pytest.fixture(scope="module")
def rust_server() -> Iterator[str]:
    binary = ROOT / "target/debug/agentproto"
    assert binary.exists(), "build the Rust server first: cargo build -p agentproto-cli"
    child = Child([str(binary), "serve", "--memory", "--addr", "127.0.0.1:0"], ROOT)
    try:
        yield child.url()
    finally:
        child.stop()


def _send(text: str, message_id: str, task_id: str = "") -> SendMessageRequest:
    message = Message(message_id=message_id, role=Role.USER, parts=[Part(text=text)], task_id=task_id)
    return SendMessageRequest(message=message)


async def _scenario(base: str, binding: str) -> None:
    async with await A2aClient.connect(base, binding=binding, timeout=10) as client:
        first = await client.send_message(_send("hello", "m-1"))
        second = await client.send_message(_send("again", "m-2"))
        assert isinstance(first.task, Task) and isinstance(second.task, Task)
        assert first.task.status.state is TaskState.COMPLETED and first.task.artifacts[0].parts[0].text == "hello"
        got = await client.get_task(GetTaskRequest(id=second.task.id))
        assert got.status.state is TaskState.COMPLETED and got.artifacts[0].parts[0].text == "again"
        events = [item async for item in client.send_streaming_message(_send("streamed", "m-3"))]
        assert isinstance(events[0].event.task, Task) and events[0].id is not None
        assert events[-1].event.status_update.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
        waiting = await client.send_message(_send("more please", "tck-input-required-1"))
        assert isinstance(waiting.task, Task) and waiting.task.status.state is TaskState.INPUT_REQUIRED
        subscription = client.subscribe_to_task(SubscribeToTaskRequest(id=waiting.task.id))
        snapshot = await anext(subscription)
        assert isinstance(snapshot.event.task, Task) and snapshot.event.task.id == waiting.task.id
        canceled = await client.cancel_task(CancelTaskRequest(id=waiting.task.id))
        assert canceled.status.state is TaskState.CANCELED
        rest = [item async for item in subscription]
        assert rest[-1].event.status_update.status.state is TaskState.CANCELED  # type: ignore[union-attr]
        resumed = client.subscribe_to_task(SubscribeToTaskRequest(id=waiting.task.id), last_event_id=snapshot.id)
        replay = [item async for item in resumed]
        assert replay[-1].event.status_update.status.state is TaskState.CANCELED  # type: ignore[union-attr]
        try:
            await client.cancel_task(CancelTaskRequest(id=first.task.id))
        except PeerError as e:
            assert e.kind is ErrorKind.TASK_NOT_CANCELABLE
        else:
            raise AssertionError("canceling a completed task succeeded")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_our_client_against_the_rust_server(rust_server: str, binding: str) -> None:
    async def main() -> None:
        async with asyncio.timeout(BOUND):
            await _scenario(rust_server, binding)

    asyncio.run(main())


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_our_client_against_our_python_server(python_server: str, binding: str) -> None:
    async def main() -> None:
        async with asyncio.timeout(BOUND):
            await _scenario(python_server, binding)

    asyncio.run(main())


INVENTED = {"id", "contextId", "taskId", "messageId", "artifactId", "timestamp"}
"""Members a server invents (ids, times): compared as present, not by value."""


def _shape(value: object) -> object:
    if isinstance(value, dict):
        return {k: "*" if k in INVENTED else _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return value


async def _demo_answers(base: str) -> list[object]:
    out: list[object] = []
    async with await A2aClient.connect(base, timeout=10) as client:
        for prefix in DEMO_PREFIXES:
            answer = await client.send_message(_send("hello", f"{prefix}-1"))
            out.append(_shape(json.loads(encode(answer))))
        for prefix in ("tck-stream-001", "tck-stream-artifact-chunked", "plain"):
            events = [item async for item in client.send_streaming_message(_send("hello", f"{prefix}-2"))]
            out.append([_shape(json.loads(encode(item.event))) for item in events])
    card = await fetch_card(base)
    out.append(_shape(json.loads(encode(card).replace(base.encode(), b"BASE"))))
    return out


DEMO_PREFIXES = (
    "tck-complete-task",
    "tck-artifact-text",
    "tck-artifact-file",
    "tck-artifact-file-url",
    "tck-artifact-data",
    "tck-message-response",
    "tck-input-required",
    "tck-reject-task",
    "plain-echo",
)


def test_the_python_demo_agent_answers_as_the_rust_one(python_server: str, rust_server: str) -> None:
    """The contract of `python -m agentproto.examples.a2a_server`: the card and the answers
    to the same messages are those of `agentproto serve`, up to invented ids and times."""

    async def main() -> tuple[list[object], list[object]]:
        async with asyncio.timeout(BOUND):
            return await _demo_answers(python_server), await _demo_answers(rust_server)

    ours, theirs = asyncio.run(main())
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a == b, f"answer {i} differs:\n  python {a}\n  rust   {b}"
