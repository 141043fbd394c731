"""Several A2A servers on one PostgreSQL database: live events and cancels cross from one
to another (LISTEN/NOTIFY), and a server killed mid-turn has its turn failed by another
once its lease expires. The servers here are `Core`s on stores of their own in this
process (each with its own pool and listening connection: to the database they are
separate replicas), and, for the kill, a child `a2a_server` process; last, a Python and a Rust server
process on one database."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import pytest

from agentproto.a2a.client import A2aClient
from agentproto.a2a.demo import card
from agentproto.a2a.executor import RequestContext, TaskUpdater
from agentproto.a2a.generated.v1 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Operation,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskStatus,
)
from agentproto.a2a.postgres_store import PostgresStore
from agentproto.a2a.server import ServerOptions
from agentproto.a2a.server.core import CallContext, StreamEvent
from agentproto.a2a.server.turns import Core
from agentproto.a2a.store import Commit, EventPage, TaskKey
from agentproto.a2a.tasks import now_timestamp
from tests.a2a import postgres_cluster
from tests.a2a.postgres_cluster import postgres_session  # noqa: F401  (stops the server at the end)
from tests.a2a.test_interop import ROOT, Child, _scenario

BOUND = 10.0


class Gated:
    """Starts working, then completes once `go` is set (or is cancelled)."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.cancelled = 0

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.working("working")
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        await updater.complete("done")


@asynccontextmanager
async def replicas(
    dsn: str, agent: Any, n: int, turn_lease: float = 30.0, cancel_wait: float = 5.0
) -> AsyncIterator[list[Core]]:
    cores: list[Core] = []
    try:
        for _ in range(n):
            store = await PostgresStore.open(dsn, max_connections=4)
            core = Core(
                agent,
                card("http://127.0.0.1:1"),
                store,
                ServerOptions(turn_lease=turn_lease, cancel_wait=cancel_wait, push_delivery=None),
            )
            cores.append(core)
            core.start()
            assert core.replicas.listener is not None
            await asyncio.wait_for(core.replicas.listener.ready.wait(), BOUND)
        yield cores
    finally:
        for core in cores:
            await core.shutdown()
            await core.store.close()


def send_request(text: str, message_id: str = "m1") -> SendMessageRequest:
    message = Message(message_id=message_id, role=Role.USER, parts=[Part(text=text)])
    return SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=True))


async def test_a_subscriber_on_one_replica_sees_a_turn_running_on_another() -> None:
    agent = Gated()
    async with replicas(postgres_cluster.database(), agent, 2) as (a, b):
        sent = await b.handle(CallContext(), Operation.SEND_MESSAGE, send_request("hello"))
        task_id = sent.task.id
        # A reads the log, finds nothing new, and then waits: only B's notice can wake it.
        empty_read = asyncio.Event()
        read = a.store.read_events

        async def spy(key: TaskKey, after: int, limit: int) -> EventPage:
            page = await read(key, after, limit)
            if not page.events:
                empty_read.set()
            return page

        a.store.read_events = spy  # type: ignore[method-assign]
        stream = await a.handle(CallContext(), Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task_id))
        first = await anext(stream)
        assert isinstance(first, StreamEvent) and isinstance(first.event.task, Task)
        assert first.event.task.status.state is TaskState.WORKING

        async def rest() -> list[Any]:
            return [item async for item in stream]

        reading = asyncio.create_task(rest())
        await asyncio.wait_for(empty_read.wait(), BOUND)
        agent.go.set()
        items = await asyncio.wait_for(reading, BOUND)
        states = [i.event.status_update.status.state for i in items if i.event.status_update is not None]
        assert states[-1] is TaskState.COMPLETED
        seqs = [i.seq for i in items]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


async def test_a_message_on_one_replica_while_the_turn_runs_on_another_gets_a_turn_there() -> None:
    agent = Gated()
    async with replicas(postgres_cluster.database(), agent, 2) as (a, b):
        sent = await b.handle(CallContext(), Operation.SEND_MESSAGE, send_request("hello"))
        key = TaskKey("", sent.task.id)
        # Taken on A as the Rust server takes it: recorded, and a turn of its own runs on A.
        follow_up = Message(message_id="m2", role=Role.USER, parts=[Part(text="more")], task_id=key.id)
        config = SendMessageConfiguration(return_immediately=True)
        answer = await asyncio.wait_for(
            a.handle(
                CallContext(), Operation.SEND_MESSAGE, SendMessageRequest(message=follow_up, configuration=config)
            ),
            BOUND,
        )
        assert [m.message_id for m in answer.task.history if m.role is Role.USER] == ["m1", "m2"]
        turns = [a.running[key].turn, b.running[key].turn]
        agent.go.set()
        await asyncio.wait_for(asyncio.wait(turns), BOUND)
        task = await a.handle(CallContext(), Operation.GET_TASK, GetTaskRequest(id=key.id))
        assert task.status.state is TaskState.COMPLETED
        assert key not in a.running and key not in b.running


async def test_a_cancel_on_one_replica_ends_the_turn_running_on_another() -> None:
    agent = Gated()
    async with replicas(postgres_cluster.database(), agent, 2) as (a, b):
        sent = await b.handle(CallContext(), Operation.SEND_MESSAGE, send_request("hello"))
        key = TaskKey("", sent.task.id)
        turn = b.running[key].turn
        assert key not in a.running
        canceled = await asyncio.wait_for(
            a.handle(CallContext(), Operation.CANCEL_TASK, CancelTaskRequest(id=key.id)), BOUND
        )
        assert canceled.status.state is TaskState.CANCELED
        await asyncio.wait_for(asyncio.wait([turn]), BOUND)
        assert turn.done() and agent.cancelled == 1 and key not in b.running
        record = await a.store.get_task(key)
        assert record is not None and record.task.status.state is TaskState.CANCELED and record.lease is None


async def test_a_replica_killed_mid_turn_has_its_turn_failed_by_another_after_its_lease() -> None:
    dsn = postgres_cluster.database()
    argv = [sys.executable, "-m", "agentproto.examples.a2a_server", "--addr", "127.0.0.1:0", "--db", dsn]
    argv += ["--turn-lease", "1", "--delay", "60"]
    child = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(child.stdout.readline(), BOUND)
        base = line.decode().split("listening on ")[1].split()[0]
        # The demo agent's delayed scenario: WORKING, then 60 s before it completes.
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "tck-delayed-complete-1", "role": "ROLE_USER", "parts": [{"text": "x"}]},
                "configuration": {"returnImmediately": True},
            },
        }
        request = urllib.request.Request(
            base + "/",
            json.dumps(body).encode(),
            {"Content-Type": "application/json", "A2A-Version": "1.0"},
        )

        def post() -> Any:
            with urllib.request.urlopen(request, timeout=BOUND) as answer:
                return json.loads(answer.read())

        answer = await asyncio.to_thread(post)
        task_id = answer["result"]["task"]["id"]
        os.killpg(child.pid, signal.SIGKILL)
        await asyncio.wait_for(child.wait(), BOUND)

        async with replicas(dsn, Gated(), 1, turn_lease=1.0) as (survivor,):
            # Resumed from the start of the log: the sweep may already have ended the task.
            stream = await survivor.handle(
                CallContext(last_event_id=0), Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task_id)
            )
            items = await asyncio.wait_for(_all(stream), BOUND)
            last = items[-1].event.status_update
            assert last.status.state is TaskState.FAILED
            assert "interrupted" in last.status.message.parts[0].text
            assert survivor.replicas.swept == 1
            record = await survivor.store.get_task(TaskKey("", task_id))
            assert record is not None and record.lease is None
    finally:
        if child.returncode is None:
            os.killpg(child.pid, signal.SIGKILL)
            await asyncio.wait_for(child.wait(), BOUND)


async def _all(stream: Any) -> list[Any]:
    return [item async for item in stream]


def test_a_python_and_a_rust_server_share_one_database() -> None:
    """Tasks written by one are read by the other; a subscriber on the Python server sees
    a turn running on the Rust server; a cancel on either ends a turn running on the other."""
    binary = ROOT / "target/debug/agentproto"
    assert binary.exists(), "build the Rust server first: cargo build -p agentproto-cli"
    dsn = postgres_cluster.database()
    rust = Child([str(binary), "serve", "--addr", "127.0.0.1:0", "--db", dsn, "--delay", "30"], ROOT)
    python = None
    try:
        rust_url = rust.url()
        python = Child(
            [
                sys.executable,
                "-m",
                "agentproto.examples.a2a_server",
                "--addr",
                "127.0.0.1:0",
                "--db",
                dsn,
                "--delay",
                "30",
            ],
            ROOT,
        )
        python_url = python.url()
        asyncio.run(asyncio.wait_for(_mixed(python_url, rust_url), BOUND * 2))
    finally:
        rust.stop()
        if python is not None:
            python.stop()


async def _mixed(python_url: str, rust_url: str) -> None:
    async with (
        await A2aClient.connect(python_url, timeout=BOUND) as py,
        await A2aClient.connect(rust_url, timeout=BOUND) as rs,
    ):
        # Written by one, read by the other.
        done = await py.send_message(_message("tck-complete-task-1"))
        assert isinstance(done.task, Task)
        assert (await rs.get_task(GetTaskRequest(id=done.task.id))).status.state is TaskState.COMPLETED
        # A turn on Rust, followed and canceled from Python.
        working = await rs.send_message(_message("tck-delayed-complete-1", immediately=True))
        assert isinstance(working.task, Task)
        subscription = py.subscribe_to_task(SubscribeToTaskRequest(id=working.task.id))
        snapshot = await anext(subscription)
        assert isinstance(snapshot.event.task, Task)
        canceled = await py.cancel_task(CancelTaskRequest(id=working.task.id))
        assert canceled.status.state is TaskState.CANCELED
        rest = [item async for item in subscription]
        assert rest[-1].event.status_update.status.state is TaskState.CANCELED  # type: ignore[union-attr]
        # A turn on Python, canceled from Rust.
        working = await py.send_message(_message("tck-delayed-complete-2", immediately=True))
        assert isinstance(working.task, Task)
        canceled = await rs.cancel_task(CancelTaskRequest(id=working.task.id))
        assert canceled.status.state is TaskState.CANCELED
        got = await py.get_task(GetTaskRequest(id=working.task.id))
        assert got.status.state is TaskState.CANCELED


def _message(message_id: str, *, immediately: bool = False) -> SendMessageRequest:
    message = Message(message_id=message_id, role=Role.USER, parts=[Part(text="x")])
    if not immediately:
        return SendMessageRequest(message=message)
    return SendMessageRequest(message=message, configuration=SendMessageConfiguration(return_immediately=True))


async def test_retention_deletes_terminal_tasks_past_the_window() -> None:
    store = await PostgresStore.open(postgres_cluster.database(), max_connections=2)
    options = ServerOptions(retain_terminal=3600.0, push_delivery=None)
    core = Core(Gated(), card("http://127.0.0.1:1"), store, options)
    try:
        old, new = TaskKey("", "old"), TaskKey("", "new")
        for key, ts in ((old, "2020-01-01T00:00:00Z"), (new, None)):
            done = Task(
                id=key.id, context_id="c", status=TaskStatus(state=TaskState.COMPLETED, timestamp=ts or now_timestamp())
            )
            await store.commit(Commit(key, done, None, [(StreamResponse(task=done), True)]))
        working = Task(
            id="live", context_id="c", status=TaskStatus(state=TaskState.WORKING, timestamp="2020-01-01T00:00:00Z")
        )
        await store.commit(Commit(TaskKey("", "live"), working, None))
        assert await core.replicas.retain() == 1
        assert await store.get_task(old) is None
        assert await store.get_task(new) is not None and await store.get_task(TaskKey("", "live")) is not None
    finally:
        await store.close()


async def test_a_listener_cut_off_listens_again_and_its_readers_catch_up() -> None:
    agent = Gated()
    async with replicas(postgres_cluster.database(), agent, 2) as (a, b):
        listener = a.replicas.listener
        assert listener is not None
        again = asyncio.Event()
        woken = listener.on_listening

        def listening() -> None:
            woken()
            again.set()

        listener.on_listening = listening
        store = a.store
        assert isinstance(store, PostgresStore)
        async with store._connection() as connection:  # the test cuts the listener off
            cut = await connection.fetchval(
                "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = 'agentproto-a2a-py-listener' AND pid = $1",
                listener._connection.get_server_pid(),
            )
        assert cut == 1
        await asyncio.wait_for(again.wait(), BOUND)
        sent = await b.handle(CallContext(), Operation.SEND_MESSAGE, send_request("hello"))
        stream = await a.handle(CallContext(), Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=sent.task.id))
        await anext(stream)
        reading = asyncio.create_task(_all(stream))
        agent.go.set()
        items = await asyncio.wait_for(reading, BOUND)
        assert items[-1].event.status_update.status.state is TaskState.COMPLETED


async def test_a_cancel_the_owner_does_not_answer_in_time_is_made_by_the_requester() -> None:
    agent = Gated()
    async with replicas(postgres_cluster.database(), agent, 2, cancel_wait=0.3) as (a, b):
        sent = await b.handle(CallContext(), Operation.SEND_MESSAGE, send_request("hello"))
        listener = b.replicas.listener
        assert listener is not None
        await listener.close()  # B no longer hears the control channel (cut off, or stuck)
        canceled = await asyncio.wait_for(
            a.handle(CallContext(), Operation.CANCEL_TASK, CancelTaskRequest(id=sent.task.id)), BOUND
        )
        assert canceled.status.state is TaskState.CANCELED
        assert agent.cancelled == 0  # B's turn still runs; its next update is refused (the task is terminal)
        page = await a.store.read_events(TaskKey("", sent.task.id), 0, 100)
        last = page.events[-1].event.status_update
        assert last is not msgspec.UNSET and last.status.state is TaskState.CANCELED
        unanswered = json.loads(bytes(last.metadata))["agentproto"]["cancelUnanswered"]  # type: ignore[arg-type]
        assert unanswered == {"replica": b.tasks.owner}


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_python_server_on_postgres_passes_the_client_scenario(binding: str) -> None:
    """The interop scenario (sends, a stream, subscribe, cancel, resume with Last-Event-ID)
    against `a2a_server --db postgres://…`."""
    argv = [sys.executable, "-m", "agentproto.examples.a2a_server", "--addr", "127.0.0.1:0"]
    child = Child([*argv, "--db", postgres_cluster.database()], ROOT)
    try:
        asyncio.run(asyncio.wait_for(_scenario(child.url(), binding), BOUND))
    finally:
        child.stop()
