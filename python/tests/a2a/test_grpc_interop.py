"""gRPC interop over real loopback HTTP/2, each peer in its own process:

* the official `a2a-sdk` 1.3.0 client (`interop/official/a2a-python/client.py --binding
  GRPC`) against our Python server (`python -m agentproto.examples.a2a_server
  --grpc-listen`);
* our gRPC client against the official SDK's gRPC server
  (`interop/official/a2a-python/server.py --grpc-port`), and against our Rust server
  (`target/debug/agentproto serve --grpc-listen`; build it with `cargo build -p
  agentproto-cli`).

Every child process is ended on every path; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from agentproto.a2a.client import A2aClient, PeerError, fetch_card
from agentproto.a2a.client.grpc_client import A2aGrpcClient
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

from .test_interop import BOUND, ROOT, Child


def _line(child: Child, pattern: str) -> re.Match[str]:
    """The first stdout line of `child` matching `pattern` (bounded wait)."""
    while True:
        try:
            line = child.lines.get(timeout=BOUND)
        except queue.Empty:
            raise AssertionError(f"no line matching {pattern!r} within the bound") from None
        if line is None:
            err = child.process.stderr.read().decode() if child.process.stderr else ""
            raise AssertionError(f"the server exited before printing {pattern!r}: {err[-2000:]}")
        found = re.search(pattern, line)
        if found:
            return found


@pytest.fixture(scope="module")
def python_grpc_server() -> Iterator[tuple[str, str]]:
    """Our Python server with gRPC: (its base URL, its gRPC address)."""
    argv = [
        sys.executable,
        "-m",
        "agentproto.examples.a2a_server",
        "--addr",
        "127.0.0.1:0",
        "--memory",
        "--push-allow-private",
        "--grpc-listen",
        "127.0.0.1:0",
    ]
    child = Child(argv, ROOT)
    try:
        found = _line(child, r"listening on (http://\S+) .*gRPC on (\S+?)\)")
        yield found.group(1), found.group(2)
    finally:
        child.stop()


@pytest.fixture(scope="module")
def official_grpc_server() -> Iterator[str]:
    """The official SDK's server with its gRPC binding: its gRPC address."""
    pytest.importorskip("a2a")
    script = ROOT / "interop/official/a2a-python/server.py"
    child = Child([sys.executable, str(script), "--port", "0", "--grpc-port", "0"], ROOT)
    try:
        port = _line(child, r"GRPC (\d+)").group(1)
        _line(child, r"LISTENING \d+")
        yield f"127.0.0.1:{port}"
    finally:
        child.stop()


@pytest.fixture(scope="module")
def rust_grpc_server() -> Iterator[str]:
    """Our Rust server with gRPC: its gRPC address."""
    binary = ROOT / "target/debug/agentproto"
    assert binary.exists(), "build the Rust server first: cargo build -p agentproto-cli"
    argv = [str(binary), "serve", "--memory", "--addr", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"]
    child = Child(argv, ROOT)
    try:
        yield _line(child, r"gRPC on (\S+?)[,)]").group(1)
    finally:
        child.stop()


def test_the_official_client_against_our_python_grpc_server(python_grpc_server: tuple[str, str]) -> None:
    base, _ = python_grpc_server
    script = ROOT / "interop/official/a2a-python/client.py"
    argv = [sys.executable, str(script), "--card-url", base, "--binding", "GRPC", "--timeout", "10"]
    done = subprocess.run(argv, capture_output=True, timeout=120, check=False)
    steps = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    failed = [s for s in steps if not s.get("ok", True)]
    assert done.returncode == 0 and not failed, f"{failed or steps}\n{done.stderr.decode()[-2000:]}"
    names = {s["step"] for s in steps}
    assert {"send", "send-message", "get", "stream", "cancel", "subscribe", "push-config"} <= names
    assert {"cancel-terminal", "get-missing"} <= names


def test_the_card_names_the_grpc_interface_and_connect_finds_it(python_grpc_server: tuple[str, str]) -> None:
    base, at = python_grpc_server

    async def main() -> None:
        card = await fetch_card(base, timeout=10)
        grpc = [i for i in card.supported_interfaces if i.protocol_binding == "GRPC"]
        assert [(i.url, i.protocol_version) for i in grpc] == [(at, "1.0")]
        async with await A2aClient.connect(base, binding="GRPC", timeout=10) as client:
            assert isinstance(client, A2aGrpcClient) and client.url == at
            sent = await client.send_message(_send("hello", "m-connect"))
            assert isinstance(sent.task, Task) and sent.task.status.state is TaskState.COMPLETED

    asyncio.run(asyncio.wait_for(main(), BOUND))


def _send(text: str, message_id: str) -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=message_id, role=Role.USER, parts=[Part(text=text)]))


async def _scenario(target: str) -> None:
    """What both our servers and the official one answer alike (the TCK prefix contract)."""
    async with A2aGrpcClient(target, timeout=10) as client:
        sent = await client.send_message(_send("hello", "tck-complete-task-1"))
        assert isinstance(sent.task, Task) and sent.task.status.state is TaskState.COMPLETED
        direct = await client.send_message(_send("hello", "tck-message-response-1"))
        assert isinstance(direct.message, Message)
        got = await client.get_task(GetTaskRequest(id=sent.task.id))
        assert got.id == sent.task.id and got.status.state is TaskState.COMPLETED
        events = [item.event async for item in client.send_streaming_message(_send("s", "tck-stream-001-1"))]
        assert events and events[-1].status_update.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
        waiting = await client.send_message(_send("more", "tck-input-required-1"))
        assert isinstance(waiting.task, Task) and waiting.task.status.state is TaskState.INPUT_REQUIRED
        subscription = client.subscribe_to_task(SubscribeToTaskRequest(id=waiting.task.id))
        first = await anext(subscription)
        assert isinstance(first.event.task, Task) and first.event.task.id == waiting.task.id
        canceled = await client.cancel_task(CancelTaskRequest(id=waiting.task.id))
        assert canceled.status.state is TaskState.CANCELED
        rest = [item.event async for item in subscription]
        assert rest[-1].status_update.status.state is TaskState.CANCELED  # type: ignore[union-attr]
        with pytest.raises(PeerError) as missing:
            await client.get_task(GetTaskRequest(id="no-such-task"))
        assert missing.value.kind is ErrorKind.TASK_NOT_FOUND and missing.value.status == "NOT_FOUND"
        with pytest.raises(PeerError) as not_cancelable:
            await client.cancel_task(CancelTaskRequest(id=sent.task.id))
        assert not_cancelable.value.kind is ErrorKind.TASK_NOT_CANCELABLE


def test_our_grpc_client_against_our_python_grpc_server(python_grpc_server: tuple[str, str]) -> None:
    asyncio.run(asyncio.wait_for(_scenario(python_grpc_server[1]), BOUND))


def test_our_grpc_client_against_the_official_grpc_server(official_grpc_server: str) -> None:
    asyncio.run(asyncio.wait_for(_scenario(official_grpc_server), BOUND))


def test_our_grpc_client_against_the_rust_grpc_server(rust_grpc_server: str) -> None:
    asyncio.run(asyncio.wait_for(_scenario(rust_grpc_server), BOUND))
