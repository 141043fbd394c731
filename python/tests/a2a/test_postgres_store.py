"""What the PostgreSQL store does beyond the store contract (`test_store_contract.py` runs
that on it): the Rust store's schema, several store instances on one database, the
notices a commit sends, retention."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentproto.a2a.generated.v1 import StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from agentproto.a2a.postgres_schema import MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION
from agentproto.a2a.postgres_store import NOTIFY_CHANNEL, PostgresStore
from agentproto.a2a.store import Commit, Conflict, TaskExists, TaskKey, TurnLease
from tests.a2a import postgres_cluster
from tests.a2a.postgres_cluster import postgres_session  # noqa: F401  (stops the server at the end)

RULES = Path(__file__).resolve().parents[3] / "rules" / "store"


def task(id: str, state: TaskState, ts: str = "2026-01-01T00:00:00Z") -> Task:
    return Task(id=id, context_id="c", status=TaskStatus(state=state, timestamp=ts))


def status(id: str, state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(task_id=id, context_id="c", status=TaskStatus(state=state))
    )


def test_the_schema_is_the_shared_one() -> None:
    # The store runs the generated scripts of rules/store/postgres/, the Rust store's too.
    rules = RULES / "postgres"
    assert tuple((rules / f"v{n}.sql").read_text() for n in range(1, SCHEMA_VERSION + 1)) == MIGRATIONS
    assert MIGRATION_LOCK == 0x6132_6173_6368_656D


async def test_two_stores_on_one_database_commit_each_version_once() -> None:
    dsn = postgres_cluster.database()
    a, b = await PostgresStore.open(dsn), await PostgresStore.open(dsn)  # the second finds the schema migrated
    try:
        key = TaskKey("", "t")
        created = await asyncio.gather(
            a.commit(
                Commit(
                    key,
                    task("t", TaskState.SUBMITTED),
                    None,
                    [(StreamResponse(task=task("t", TaskState.SUBMITTED)), False)],
                )
            ),
            b.commit(Commit(key, task("t", TaskState.SUBMITTED), None)),
            return_exceptions=True,
        )
        assert sum(isinstance(outcome, TaskExists) for outcome in created) == 1
        # 20 writers, each from a different store, all expecting version 1 (or 0 if b won).
        version = (await a.get_task(key)).version  # type: ignore[union-attr]
        writes = [
            (a if i % 2 else b).commit(
                Commit(key, task("t", TaskState.WORKING), version, [(status("t", TaskState.WORKING), False)])
            )
            for i in range(20)
        ]
        outcomes = await asyncio.gather(*writes, return_exceptions=True)
        won = [o for o in outcomes if not isinstance(o, BaseException)]
        assert len(won) == 1 and all(isinstance(o, Conflict) for o in outcomes if o not in won)
        page = await b.read_events(key, 0, 100)
        assert [e.seq for e in page.events] == list(range(1, len(page.events) + 1))
    finally:
        await a.close()
        await b.close()


async def test_a_commit_with_events_notifies_once_it_commits() -> None:
    dsn = postgres_cluster.database()
    store = await PostgresStore.open(dsn)
    heard: asyncio.Queue[str] = asyncio.Queue()
    import asyncpg  # type: ignore[import-untyped,unused-ignore]

    listener = await asyncpg.connect(dsn)
    try:
        await listener.add_listener(NOTIFY_CHANNEL, lambda _c, _pid, _ch, payload: heard.put_nowait(payload))
        key = TaskKey("acme", "n1")
        first = StreamResponse(task=task("n1", TaskState.SUBMITTED))
        await store.commit(Commit(key, task("n1", TaskState.SUBMITTED), None, [(first, False)]))
        assert json.loads(await asyncio.wait_for(heard.get(), 5)) == {"tenant": "acme", "id": "n1", "last_seq": 1}
        # A commit without events (a lease change) sends nothing; the next one with events does.
        await store.commit(Commit(key, task("n1", TaskState.SUBMITTED), 1, []))
        await store.commit(
            Commit(key, task("n1", TaskState.WORKING), 2, [(status("n1", TaskState.WORKING), False)] * 2)
        )
        assert json.loads(await asyncio.wait_for(heard.get(), 5))["last_seq"] == 3
        assert heard.empty()
        # A key too long for a payload: the notice names no task.
        long = TaskKey("acme", "x" * 9000)
        await store.commit(Commit(long, task(long.id, TaskState.SUBMITTED), None, [(first, False)]))
        assert json.loads(await asyncio.wait_for(heard.get(), 5)) == {"tenant": None, "id": None, "last_seq": 1}
    finally:
        await listener.close()
        await store.close()


async def test_retention_purges_old_finished_tasks_only() -> None:
    store = await PostgresStore.open(postgres_cluster.database())
    try:
        for i, state in enumerate([TaskState.COMPLETED, TaskState.WORKING, TaskState.FAILED, TaskState.COMPLETED]):
            ts = "2026-01-01T00:00:00Z" if i < 3 else "2026-06-01T00:00:00Z"
            key = TaskKey("", f"r{i}")
            await store.commit(
                Commit(key, task(key.id, state, ts), None, [(StreamResponse(task=task(key.id, state, ts)), False)])
            )
        before = 1767225600000 + 1000  # 2026-01-01T00:00:01Z
        assert await store.purge_terminal(before, limit=1) == 1
        assert await store.purge_terminal(before) == 1
        assert await store.purge_terminal(before) == 0
        left = [k for k in ("r0", "r1", "r2", "r3") if await store.get_task(TaskKey("", k)) is not None]
        assert left == ["r1", "r3"]
    finally:
        await store.close()


async def test_a_sweep_commit_applies_only_while_the_lease_is_the_expired_one() -> None:
    store = await PostgresStore.open(postgres_cluster.database())
    try:
        key = TaskKey("", "swept")
        first = StreamResponse(task=task("swept", TaskState.WORKING))
        await store.commit(
            Commit(key, task("swept", TaskState.WORKING), None, [(first, False)], "set", TurnLease("b", 1000))
        )
        await store.renew_leases("b", [key], 5000)  # the owner renewed after the sweeper read 1000
        failed = task("swept", TaskState.FAILED)
        with pytest.raises(Conflict):
            await store.commit(
                Commit(key, failed, 1, [(status("swept", TaskState.FAILED), True)], "clear"), lease_expired_before=1001
            )
        committed = await store.commit(
            Commit(key, failed, 1, [(status("swept", TaskState.FAILED), True)], "clear"), lease_expired_before=5001
        )
        assert committed.version == 2 and [e.seq for e in committed.events] == [2]
        record = await store.get_task(key)
        assert record is not None and record.lease is None and record.terminal
    finally:
        await store.close()
