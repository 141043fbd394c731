"""What the SQLite store adds to the store contract (which `test_store_contract.py` runs on
it): durability across reopening and a SIGKILL, group commit, bounded queueing, the schema
version, and a refused commit leaving the rest of its batch standing."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from agentproto.a2a.codec import encode
from agentproto.a2a.generated.store_schema import SQLITE_MIGRATIONS
from agentproto.a2a.generated.v1 import (
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
)
from agentproto.a2a.sqlite_schema import SCHEMA_VERSION
from agentproto.a2a.sqlite_store import SqliteStore
from agentproto.a2a.store import Commit, Conflict, PushConfigRecord, StoreError, TaskKey, TaskNotFound, TurnLease


def task(id: str, state: TaskState = TaskState.WORKING) -> Task:
    return Task(id=id, context_id="c", status=TaskStatus(state=state, timestamp="2026-01-01T00:00:00.000Z"))


def create(id: str, lease: TurnLease | None = None) -> Commit:
    value = task(id)
    return Commit(TaskKey("", id), value, None, [(StreamResponse(task=value), False)], "set", lease)


def run(body: Coroutine[Any, Any, None]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(20):
            await body

    asyncio.run(bounded())


def test_what_was_committed_is_read_back_after_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "a.db")

    async def main() -> None:
        store = await SqliteStore.open(path)
        await store.commit(create("t", TurnLease("me", 123)))
        done = task("t", TaskState.COMPLETED)
        await store.commit(Commit(TaskKey("", "t"), done, 1, [(StreamResponse(task=done), True)]))
        config = TaskPushNotificationConfig(id="p", task_id="t", url="https://example.com/hook")
        await store.put_push_config(PushConfigRecord(TaskKey("", "t"), config))
        await store.close()

        again = await SqliteStore.open(path)
        try:
            record = await again.get_task(TaskKey("", "t"))
            assert record is not None and record.task == done and record.version == 2 and record.last_seq == 2
            assert record.lease == TurnLease("me", 123)
            page = await again.read_events(TaskKey("", "t"), 0, 10)
            assert [(e.seq, e.last) for e in page.events] == [(1, False), (2, True)]
            found = await again.get_push_config(TaskKey("", "t"), "p")
            assert found is not None and found.config == config
            # The version check holds across reopening.
            with pytest.raises(Conflict):
                await again.commit(Commit(TaskKey("", "t"), done, 1, []))
        finally:
            await again.close()

    run(main())


def test_concurrent_commits_share_transactions_and_a_refused_one_leaves_its_batch_standing(tmp_path: Path) -> None:
    async def main() -> None:
        store = await SqliteStore.open(str(tmp_path / "b.db"), max_queued=8)
        try:
            await store.commit(create("base"))
            before = store.transactions
            stale = Commit(TaskKey("", "base"), task("base"), 7, [])
            commits = [store.commit(create(f"t{i}")) for i in range(100)]
            outcomes = await asyncio.gather(store.commit(stale), *commits, return_exceptions=True)
            assert isinstance(outcomes[0], Conflict)
            assert all(not isinstance(o, BaseException) for o in outcomes[1:])
            # At most 8 wait at a time, and those are taken together: far fewer fsyncs.
            assert store.transactions - before < 60
            for i in range(100):
                assert await store.get_task(TaskKey("", f"t{i}")) is not None
        finally:
            await store.close()

    run(main())


def test_a_closed_store_refuses_and_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "c.db")

    async def main() -> None:
        store = await SqliteStore.open(path)
        await store.close()
        with pytest.raises(StoreError):
            await store.commit(create("t"))
        with pytest.raises(StoreError):
            await store.get_task(TaskKey("", "t"))
        connection = sqlite3.connect(path)
        try:
            assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
            connection.commit()
        finally:
            connection.close()
        with pytest.raises(StoreError, match="newer"):
            await SqliteStore.open(path)

    run(main())


_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from agentproto.a2a.generated.v1 import StreamResponse, Task, TaskState, TaskStatus
    from agentproto.a2a.sqlite_store import SqliteStore
    from agentproto.a2a.store import Commit, TaskKey

    async def main() -> None:
        store = await SqliteStore.open(sys.argv[1])
        async def one(i: int) -> None:
            value = Task(id=f"t{i}", context_id="c", status=TaskStatus(state=TaskState.WORKING))
            await store.commit(Commit(TaskKey("", f"t{i}"), value, None, [(StreamResponse(task=value), False)]))
            sys.stdout.write(f"t{i}\\n")
            sys.stdout.flush()
        i = 0
        while True:  # until killed
            await asyncio.gather(*(one(i + j) for j in range(8)))
            i += 8

    asyncio.run(main())
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_every_acknowledged_commit_survives_a_sigkill(tmp_path: Path) -> None:
    path = str(tmp_path / "d.db")
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ)
    )
    acknowledged: list[str] = []
    errors = b""
    # A child that hangs is killed after 30 s, which ends the reads below.
    watchdog = threading.Timer(30, child.kill)
    watchdog.start()
    try:
        assert child.stdout is not None
        while len(acknowledged) < 200:
            line = child.stdout.readline()
            if not line:
                break
            acknowledged.append(line.decode().strip())
        child.send_signal(signal.SIGKILL)
        # Lines the child wrote before dying are acknowledged too.
        rest, errors = child.communicate(timeout=10)
        acknowledged += rest.decode().split()
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
    assert len(acknowledged) >= 200, errors.decode()

    async def main() -> None:
        store = await SqliteStore.open(path)
        try:
            for id in acknowledged:
                record = await store.get_task(TaskKey("", id))
                assert record is not None, id
                assert len((await store.read_events(TaskKey("", id), 0, 10)).events) == 1
        finally:
            await store.close()

    run(main())


def test_a_version_1_file_is_migrated_with_its_tasks_kept(tmp_path: Path) -> None:
    path = str(tmp_path / "e.db")
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.executescript(f"BEGIN; {SQLITE_MIGRATIONS[0]} PRAGMA user_version = 1; COMMIT;")
        connection.execute(
            "INSERT INTO tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, last_seq, body)"
            " VALUES ('', 'old', 'c', 'TASK_STATE_COMPLETED', 1, 0, 3, 0, ?)",
            (encode(task("old", TaskState.COMPLETED)),),
        )
        connection.execute(
            "INSERT INTO tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, last_seq, body)"
            " VALUES ('', 'live', 'c', 'TASK_STATE_WORKING', 0, 0, 1, 0, ?)",
            (encode(task("live")),),
        )
    finally:
        connection.close()

    async def main() -> None:
        store = await SqliteStore.open(path)
        try:
            record = await store.get_task(TaskKey("", "old"))
            assert record is not None and record.version == 3 and record.terminal and record.lease is None
            # A turn that was running before leases existed gets one that has already ended.
            live = await store.get_task(TaskKey("", "live"))
            assert live is not None and live.lease == TurnLease("", 0)
            assert await store.expired_leases(1, 10) == [TaskKey("", "live")]
            assert await store.claim_deliveries(0, 10, 10) == []
        finally:
            await store.close()

    run(main())
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("layout", "who"),
    [
        # The pre-release Python store's version 2: the status time in `status_ms`.
        ("CREATE TABLE tasks (tenant TEXT, id TEXT, status_ms INTEGER, body BLOB); PRAGMA user_version = 2;", "Python"),
        # The pre-release TypeScript store's version 1: the lease columns already there.
        (
            "CREATE TABLE tasks (tenant TEXT, id TEXT, status_ts_ms INTEGER, lease_owner TEXT, lease_until_ms INTEGER)"
            + "; PRAGMA user_version = 1;",
            "TypeScript",
        ),
    ],
)
def test_a_file_of_a_pre_release_layout_is_refused(tmp_path: Path, layout: str, who: str) -> None:
    path = str(tmp_path / "old.db")
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.executescript(layout)
    finally:
        connection.close()

    async def main() -> None:
        with pytest.raises(StoreError, match=f"pre-release {who} store"):
            await SqliteStore.open(path)

    run(main())


def test_queued_push_deliveries_outlive_the_process(tmp_path: Path) -> None:
    path = str(tmp_path / "f.db")

    async def main() -> None:
        store = await SqliteStore.open(path)
        await store.commit(create("t"))
        config = TaskPushNotificationConfig(id="p", task_id="t", url="https://example.com/hook")
        await store.put_push_config(PushConfigRecord(TaskKey("", "t"), config))
        done = task("t", TaskState.COMPLETED)
        await store.commit(Commit(TaskKey("", "t"), done, 1, [(StreamResponse(task=done), True)]))
        # Claimed by a worker that then dies: the claim runs out and it is due again.
        assert len(await store.claim_deliveries(1000, 10, 500)) == 1
        await store.close()
        again = await SqliteStore.open(path)
        try:
            assert await again.claim_deliveries(1200, 10, 500) == []
            [delivery] = await again.claim_deliveries(1500, 10, 500)
            assert delivery.config == config and delivery.seq == 2 and delivery.event == StreamResponse(task=done)
        finally:
            await again.close()

    run(main())


def test_retention_purges_old_finished_tasks_with_what_hangs_off_them(tmp_path: Path) -> None:
    async def main() -> None:
        store = await SqliteStore.open(str(tmp_path / "g.db"))
        try:
            for id, state, ts in (
                ("old-done", TaskState.COMPLETED, "2026-01-01T00:00:00.000Z"),
                ("old-live", TaskState.WORKING, "2026-01-01T00:00:00.000Z"),
                ("new-done", TaskState.FAILED, "2026-03-01T00:00:00.000Z"),
            ):
                value = Task(id=id, context_id="c", status=TaskStatus(state=state, timestamp=ts))
                await store.commit(Commit(TaskKey("", id), value, None, [(StreamResponse(task=value), True)]))
                config = TaskPushNotificationConfig(id="p", task_id=id, url="https://example.com/hook")
                await store.put_push_config(PushConfigRecord(TaskKey("", id), config))
                await store.commit(Commit(TaskKey("", id), value, 1, [(StreamResponse(task=value), True)]))
            before = 1_767_225_600_000 + 86_400_000  # 2026-01-02
            assert await store.purge_terminal(before) == 1
            assert await store.get_task(TaskKey("", "old-done")) is None
            with pytest.raises(TaskNotFound):
                await store.read_events(TaskKey("", "old-done"), 0, 10)
            assert await store.get_push_config(TaskKey("", "old-done"), "p") is None
            left = await store.claim_deliveries(1 << 60, 10, 10)
            assert sorted(d.key.id for d in left) == ["new-done", "old-live"]
            assert await store.purge_terminal(before) == 0
        finally:
            await store.close()

    run(main())
