"""One SQLite file, several languages: a file the Rust server (`agentproto serve --db
FILE`) wrote opens in the Python store with its tasks read, and a task the Python store
wrote is served by the Rust server. (The three stores run the same generated migrations
of `rules/store/sqlite/`.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentproto.a2a.client import A2aClient
from agentproto.a2a.generated.v1 import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
)
from agentproto.a2a.sqlite_store import SqliteStore
from agentproto.a2a.store import Commit, TaskKey
from agentproto.a2a.tasks import now_timestamp
from tests.a2a.test_interop import ROOT, Child

BOUND = 10.0


def test_a_file_written_by_the_rust_server_is_read_by_the_python_store_and_back(tmp_path: Path) -> None:
    binary = ROOT / "target/debug/agentproto"
    assert binary.exists(), "build the Rust server first: cargo build -p agentproto-cli"
    path = str(tmp_path / "shared.db")

    async def rust_writes(url: str) -> str:
        async with await A2aClient.connect(url, timeout=BOUND) as client:
            message = Message(message_id="tck-complete-task-1", role=Role.USER, parts=[Part(text="x")])
            done = await client.send_message(SendMessageRequest(message=message))
            assert isinstance(done.task, Task) and done.task.status.state is TaskState.COMPLETED
            return done.task.id

    rust = Child([str(binary), "serve", "--addr", "127.0.0.1:0", "--db", path], ROOT)
    try:
        written = asyncio.run(asyncio.wait_for(rust_writes(rust.url()), BOUND))
    finally:
        rust.stop()

    async def python_reads_and_writes() -> None:
        async with asyncio.timeout(BOUND):
            store = await SqliteStore.open(path)
            try:
                record = await store.get_task(TaskKey("", written))
                assert record is not None and record.terminal
                assert record.task.status.state is TaskState.COMPLETED
                events = await store.read_events(TaskKey("", written), 0, 100)
                assert events.events, "the Rust server's events are read too"
                # Stamped now: the Rust server's retention would delete a finished task of 1970.
                status = TaskStatus(state=TaskState.COMPLETED, timestamp=now_timestamp())
                mine = Task(id="py-1", context_id="c", status=status)
                await store.commit(Commit(TaskKey("", "py-1"), mine, None, [(StreamResponse(task=mine), True)]))
            finally:
                await store.close()

    asyncio.run(python_reads_and_writes())

    async def rust_reads(url: str) -> None:
        async with await A2aClient.connect(url, timeout=BOUND) as client:
            got = await client.get_task(GetTaskRequest(id="py-1"))
            assert got.status.state is TaskState.COMPLETED
            again = await client.get_task(GetTaskRequest(id=written))
            assert again.status.state is TaskState.COMPLETED

    rust = Child([str(binary), "serve", "--addr", "127.0.0.1:0", "--db", path], ROOT)
    try:
        asyncio.run(asyncio.wait_for(rust_reads(rust.url()), BOUND))
    finally:
        rust.stop()
