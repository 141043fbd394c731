"""The store contract (`agentproto.a2a.store.Store`), run against every store: add a
factory to `STORES` and the whole suite runs on it (the SQLite store runs on a fresh
temporary file per test, PostgreSQL on a fresh database of one server started for the
session, skipped only when PostgreSQL is not installed)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from agentproto.a2a.generated.v1 import (
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from agentproto.a2a.memory_store import MemoryStore
from agentproto.a2a.postgres_store import PostgresStore
from agentproto.a2a.sqlite_store import SqliteStore
from agentproto.a2a.store import (
    Commit,
    Conflict,
    ListQuery,
    PushConfigRecord,
    Store,
    StoreFull,
    TaskExists,
    TaskKey,
    TaskNotFound,
    TurnLease,
)
from tests.a2a import postgres_cluster
from tests.a2a.postgres_cluster import postgres_session  # noqa: F401  (stops the server at the end)

StoreFactory = Callable[[], Awaitable[Store]]


async def memory() -> Store:
    return MemoryStore()


_FILES = tempfile.TemporaryDirectory(prefix="agentproto-a2a-store-")
"""Removed when the test process ends; each SQLite store gets a file of its own in it."""
_opened = 0


async def sqlite() -> Store:
    global _opened
    _opened += 1
    return await SqliteStore.open(f"{_FILES.name}/tasks-{_opened}.db")


async def postgres() -> Store:
    """A fresh database on the session's PostgreSQL server (`postgres_cluster`)."""
    return await PostgresStore.open(postgres_cluster.database(), max_connections=4)


STORES: dict[str, StoreFactory] = {"memory": memory, "sqlite": sqlite, "postgres": postgres}


def run(body: Callable[[Store], Coroutine[Any, Any, None]]) -> Callable[[str], None]:
    """A test body run once per store, on a fresh store, bounded."""

    def test(store_name: str) -> None:
        async def main() -> None:
            store = await STORES[store_name]()
            try:
                async with asyncio.timeout(10):
                    await body(store)
            finally:
                await store.close()

        asyncio.run(main())

    return test


@pytest.fixture(params=sorted(STORES))
def store_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def task(id: str, state: TaskState = TaskState.WORKING, ts: str = "2026-01-01T00:00:00.000Z", ctx: str = "c") -> Task:
    return Task(id=id, context_id=ctx, status=TaskStatus(state=state, timestamp=ts))


def event(state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(state=state))
    )


K = TaskKey("", "t")


async def create(store: Store, key: TaskKey = K, value: Task | None = None) -> int:
    value = value or task(key.id)
    committed = await store.commit(Commit(key, value, None, [(StreamResponse(task=value), False)]))
    return committed.version


async def _versions_and_conflicts(store: Store) -> None:
    assert await create(store) == 1
    with pytest.raises(TaskExists):
        await create(store)
    done = await store.commit(Commit(K, task("t"), 1, [(event(TaskState.WORKING), False)]))
    assert done.version == 2 and [e.seq for e in done.events] == [2]
    with pytest.raises(Conflict):
        await store.commit(Commit(K, task("t"), 1, []))
    with pytest.raises(TaskNotFound):
        await store.commit(Commit(TaskKey("", "nope"), task("nope"), 1, []))
    record = await store.get_task(K)
    assert record is not None and record.version == 2 and record.last_seq == 2


test_versions_and_conflicts = run(_versions_and_conflicts)


async def _event_log(store: Store) -> None:
    await create(store)
    events = [(event(TaskState.WORKING), False), (event(TaskState.COMPLETED), True)]
    await store.commit(Commit(K, task("t", TaskState.COMPLETED), 1, events))
    page = await store.read_events(K, 0, 10)
    assert [e.seq for e in page.events] == [1, 2, 3] and page.events[-1].last
    assert page.first_held == 1 and page.last_written == 3
    assert [e.seq for e in (await store.read_events(K, 1, 1)).events] == [2]
    assert (await store.read_events(K, 3, 10)).events == []
    with pytest.raises(TaskNotFound):
        await store.read_events(TaskKey("", "nope"), 0, 10)


test_event_log = run(_event_log)


async def _tenants_are_apart(store: Store) -> None:
    await create(store, TaskKey("a", "t"))
    assert await store.get_task(TaskKey("b", "t")) is None
    assert (await store.list_tasks("b", ListQuery())).total_size == 0
    assert (await store.list_tasks("a", ListQuery())).total_size == 1


test_tenants_are_apart = run(_tenants_are_apart)


async def _list_pages_newest_first(store: Store) -> None:
    for i in range(5):
        await create(
            store, TaskKey("", f"t{i}"), task(f"t{i}", ts=f"2026-01-01T00:00:0{i}.000Z", ctx="x" if i else "y")
        )
    seen: list[str] = []
    after = None
    while True:
        page = await store.list_tasks("", ListQuery(context_id="x", page_size=2, after=after))
        assert page.total_size == 4
        seen += [r.key.id for r in page.tasks]
        if page.next is None:
            break
        after = page.next
    assert seen == ["t4", "t3", "t2", "t1"]
    only = await store.list_tasks("", ListQuery(state=TaskState.COMPLETED))
    assert only.total_size == 0
    recent = await store.list_tasks("", ListQuery(status_after_ms=1767225603000))
    assert [r.key.id for r in recent.tasks] == ["t4", "t3"]


test_list_pages_newest_first = run(_list_pages_newest_first)


async def _push_configs(store: Store) -> None:
    config = TaskPushNotificationConfig(id="b", task_id="t", url="https://example.com/h")
    with pytest.raises(TaskNotFound):
        await store.put_push_config(PushConfigRecord(K, config))
    await create(store)
    for config_id in ("b", "a", "c"):
        await store.put_push_config(PushConfigRecord(K, TaskPushNotificationConfig(id=config_id, task_id="t", url="u")))
    assert [r.id for r in await store.list_push_configs(K, None, 10)] == ["a", "b", "c"]
    assert [r.id for r in await store.list_push_configs(K, "a", 1)] == ["b"]
    found = await store.get_push_config(K, "b")
    assert found is not None and found.config.url == "u"
    assert await store.delete_push_config(K, "b")
    assert not await store.delete_push_config(K, "b")
    assert await store.get_push_config(K, "b") is None


test_push_configs = run(_push_configs)


async def _leases(store: Store) -> None:
    await store.commit(Commit(K, task("t"), None, [], "set", TurnLease("me", 1000)))
    record = await store.get_task(K)
    assert record is not None and record.lease == TurnLease("me", 1000)
    assert await store.expired_leases(2000, 10) == [K]
    assert await store.renew_leases("me", [K, TaskKey("", "nope")], 5000) == 1
    assert await store.expired_leases(2000, 10) == []
    assert not await store.release_lease(K, "someone else")
    assert await store.release_lease(K, "me")
    record = await store.get_task(K)
    assert record is not None and record.lease is None
    await store.commit(Commit(K, task("t"), 1, [], "set", TurnLease("me", 1)))
    await store.commit(Commit(K, task("t", TaskState.COMPLETED), 2, [], "clear"))
    assert await store.expired_leases(2000, 10) == []
    assert await store.renew_leases("me", [K], 5000) == 0


test_leases = run(_leases)


async def _concurrent_writers(store: Store) -> None:
    creates = [create(store, TaskKey("", f"t{i}")) for i in range(40)]
    assert await asyncio.gather(*creates) == [1] * 40
    updates = [
        store.commit(Commit(TaskKey("", "t0"), task("t0"), 1, [(event(TaskState.WORKING), False)])) for _ in range(5)
    ]
    outcomes = await asyncio.gather(*updates, return_exceptions=True)
    assert sum(1 for o in outcomes if isinstance(o, Conflict)) == 4
    page = await store.read_events(TaskKey("", "t0"), 0, 10)
    assert [e.seq for e in page.events] == [1, 2]
    assert (await store.list_tasks("", ListQuery(page_size=100))).total_size == 40


test_concurrent_writers = run(_concurrent_writers)


async def _values_come_back_whole(store: Store) -> None:
    value = task("t", TaskState.INPUT_REQUIRED, ctx="ctx-é")
    await create(store, K, value)
    record = await store.get_task(K)
    assert record is not None and record.task == value and record.key == K
    page = await store.read_events(K, 0, 10)
    assert page.events[0].event == StreamResponse(task=value)
    listed = await store.list_tasks("", ListQuery(state=TaskState.INPUT_REQUIRED, context_id="ctx-é"))
    assert [r.task for r in listed.tasks] == [value]


test_values_come_back_whole = run(_values_come_back_whole)


async def _push_deliveries(store: Store) -> None:
    await create(store)
    for config_id in ("a", "b"):
        config = TaskPushNotificationConfig(id=config_id, task_id="t", url=f"https://example.com/{config_id}")
        await store.put_push_config(PushConfigRecord(K, config))
    events = [(event(TaskState.WORKING), False), (event(TaskState.COMPLETED), True)]
    await store.commit(Commit(K, task("t", TaskState.COMPLETED), 1, events))
    claimed = await store.claim_deliveries(1000, 10, 100)
    assert [(d.seq, d.config.id, d.attempts) for d in claimed] == [(2, "a", 0), (2, "b", 0), (3, "a", 0), (3, "b", 0)]
    assert claimed[0].event == events[0][0] and claimed[0].key == K
    assert claimed[1].config.url == "https://example.com/b"
    assert await store.claim_deliveries(1050, 10, 100) == []  # still claimed
    await store.finish_delivery(claimed[0].id, None)
    await store.finish_delivery(claimed[1].id, 2000)
    await store.finish_delivery(claimed[2].id, None)
    # The claim on the fourth ran out: it is due again; the second waits for its time.
    assert [d.id for d in await store.claim_deliveries(1500, 10, 100)] == [claimed[3].id]
    await store.finish_delivery(claimed[3].id, None)
    again = await store.claim_deliveries(2000, 10, 100)
    assert [(d.id, d.attempts) for d in again] == [(claimed[1].id, 1)]
    await store.finish_delivery(again[0].id, None)
    assert await store.claim_deliveries(10_000, 10, 100) == []
    # A deleted config's queued deliveries go with it.
    await store.commit(Commit(K, task("t", TaskState.COMPLETED), 2, [(event(TaskState.COMPLETED), True)]))
    assert await store.delete_push_config(K, "a")
    assert [d.config.id for d in await store.claim_deliveries(10_000, 10, 100)] == ["b"]


test_push_deliveries = run(_push_deliveries)


def test_the_memory_store_evicts_terminal_tasks_first_and_refuses_when_all_are_live() -> None:
    async def main() -> None:
        store = MemoryStore(max_tasks=2, max_events=2)
        await create(store, TaskKey("", "old"), task("old", TaskState.COMPLETED, "2026-01-01T00:00:00.000Z"))
        await create(store, TaskKey("", "live"), task("live"))
        await create(store, TaskKey("", "new"), task("new"))
        assert await store.get_task(TaskKey("", "old")) is None
        with pytest.raises(StoreFull):
            await create(store, TaskKey("", "more"), task("more"))
        key = TaskKey("", "live")
        await store.commit(Commit(key, task("live"), 1, [(event(TaskState.WORKING), False)] * 3))
        page = await store.read_events(key, 0, 10)
        assert [e.seq for e in page.events] == [3, 4] and page.first_held == 3

    asyncio.run(main())


def test_the_memory_store_evicts_the_oldest_terminal_status_whenever_it_became_terminal() -> None:
    async def main() -> None:
        store = MemoryStore(max_tasks=3, max_events=2)
        await create(store, TaskKey("", "a"), task("a", TaskState.COMPLETED, "2026-01-01T00:00:03.000Z"))
        await create(store, TaskKey("", "b"), task("b"))  # terminal later, with the oldest time
        await store.commit(Commit(TaskKey("", "b"), task("b", TaskState.FAILED, "2026-01-01T00:00:01.000Z"), 1, []))
        await create(store, TaskKey("", "c"), task("c", TaskState.CANCELED, "2026-01-01T00:00:02.000Z"))
        # "c" is committed again, terminal with a newer time: its first place is stale
        await store.commit(Commit(TaskKey("", "c"), task("c", TaskState.CANCELED, "2026-01-01T00:00:09.000Z"), 1, []))
        await create(store, TaskKey("", "d"), task("d"))
        assert await store.get_task(TaskKey("", "b")) is None
        await create(store, TaskKey("", "e"), task("e"))
        assert await store.get_task(TaskKey("", "a")) is None
        assert await store.get_task(TaskKey("", "c")) is not None
        with pytest.raises(StoreFull):  # "c" is the last terminal one, then all are live
            await create(store, TaskKey("", "f"), task("f"))
            await create(store, TaskKey("", "g"), task("g"))
        assert await store.get_task(TaskKey("", "c")) is None

    asyncio.run(main())


def test_the_memory_store_keeps_its_terminal_heap_within_twice_its_tasks() -> None:
    async def main() -> None:
        store = MemoryStore(max_tasks=10, max_events=2)
        await create(store, TaskKey("", "a"), task("a", TaskState.COMPLETED, "2026-01-01T00:00:01.000Z"))
        for version in range(1, 500):  # the same terminal task committed again and again
            await store.commit(Commit(TaskKey("", "a"), task("a", TaskState.COMPLETED), version, []))
        assert len(store._terminal) <= 2 * len(store) + 64
        await create(store, TaskKey("", "b"), task("b"))
        assert await store.get_task(TaskKey("", "a")) is not None  # room: nothing evicted

    asyncio.run(main())


def test_the_records_are_frozen_values_the_garbage_collector_does_not_track() -> None:
    import gc

    import msgspec

    from agentproto.a2a.store import EventRecord, TaskRecord

    keys = [TaskKey("b", "1"), TaskKey("a", "2"), TaskKey("a", "1")]
    assert sorted(keys) == [TaskKey("a", "1"), TaskKey("a", "2"), TaskKey("b", "1")]
    assert TaskKey("a", "1") == TaskKey(tenant="a", id="1") and {TaskKey("a", "1"): 1}[TaskKey("a", "1")] == 1
    record = TaskRecord(K, task("t"), 1, 1)
    with pytest.raises(AttributeError):
        record.version = 2  # type: ignore[misc]
    leased = msgspec.structs.replace(record, lease=TurnLease("me", 5))
    assert leased.lease == TurnLease("me", 5) and record.lease is None and not leased.terminal

    async def main() -> None:
        store = MemoryStore()
        done = task("t", TaskState.COMPLETED)
        await store.commit(Commit(K, done, None, [(StreamResponse(task=done), True)]))
        held = await store.get_task(K)
        page = await store.read_events(K, 0, 10)
        assert held is not None and held.terminal
        values: list[object] = [K, held, held.task, held.task.status, page.events[0], page.events[0].event]
        assert [gc.is_tracked(v) for v in values] == [False] * len(values)
        assert isinstance(page.events[0], EventRecord)
        # The entry and a terminal task's log: nothing a collection walks once it has seen them.
        gc.collect()
        entry = store._tasks[K]
        assert not gc.is_tracked(entry) and isinstance(entry.events, tuple) and not gc.is_tracked(entry.events)
        # A commit with events after the terminal one still appends to the log.
        await store.commit(Commit(K, done, 1, [(event(TaskState.COMPLETED), True)]))
        assert [e.seq for e in (await store.read_events(K, 0, 10)).events] == [1, 2]

    asyncio.run(main())


def test_timestamp_ms_reads_canonical_text_as_datetime_does() -> None:
    import random
    from datetime import UTC, datetime, timedelta

    from agentproto.a2a.store import timestamp_ms

    def by_datetime(text: str) -> int:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return 0
        return int(moment.timestamp() * 1000)

    rng = random.Random(7)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    texts = []
    for i in range(20_000):
        step = i if i % 2 else rng.randrange(-(10**12), 10**12)  # runs within a second, and jumps
        t = base + timedelta(milliseconds=step)
        texts.append(f"{t.year:04d}-{t:%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z")
    texts += ["1969-12-31T23:59:59.999Z", "2026-01-01T00:00:00.5+01:00", "2026-01-01T00:00:00Z", "junk", ""]
    texts += ["2026-01-01T00:00:00.12\u0663Z", "2026-01-01T00:00:00.123+"]
    for text in texts:
        assert timestamp_ms(text) == by_datetime(text), text
