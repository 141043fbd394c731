"""The in-memory A2A store: one process, bounded.

At most `max_tasks` tasks are kept: creating one more evicts the terminal task with the
oldest status timestamp (its events and push configs with it), and when every task is
live the create fails with `StoreFull`. Each task's log keeps its `max_events` newest
events; a reader resuming before them sees `first_held` beyond what it asked for.
Queued push deliveries are bounded too: past `max_deliveries` the oldest is dropped (and
counted in `dropped_deliveries`). Every method runs without awaiting anything, so each is
atomic on the event loop.
"""

from __future__ import annotations

import bisect
import heapq
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace

import msgspec

from agentproto.a2a.store import (
    Commit,
    Committed,
    Conflict,
    Delivery,
    EventPage,
    EventRecord,
    ListPage,
    ListQuery,
    PushConfigRecord,
    StoreFull,
    TaskExists,
    TaskKey,
    TaskNotFound,
    TaskRecord,
    TurnLease,
    status_ms,
)

__all__ = ["MemoryStore"]


@dataclass(slots=True)
class _Pending:
    delivery: Delivery
    due_ms: int = 0
    lease_until_ms: int = 0


class _Entry(msgspec.Struct, gc=False):
    """One task held. Untracked by the garbage collector, as what it holds is (no cycle runs
    through it), and a terminal task's log is a tuple, which the collector untracks too: a
    task held costs a collection only the lists inside its values."""

    record: TaskRecord
    events: deque[EventRecord] | tuple[EventRecord, ...] = ()
    configs: dict[str, PushConfigRecord] = msgspec.field(default_factory=dict)


class MemoryStore:
    """A bounded store in this process's memory (see the module documentation)."""

    def __init__(self, *, max_tasks: int = 10_000, max_events: int = 1_000, max_deliveries: int = 10_000) -> None:
        if max_tasks < 1 or max_events < 1 or max_deliveries < 1:
            raise ValueError("max_tasks, max_events and max_deliveries must be at least 1")
        self.max_tasks = max_tasks
        self.max_events = max_events
        self.max_deliveries = max_deliveries
        self.dropped_deliveries = 0
        self._tasks: dict[TaskKey, _Entry] = {}
        self._terminal: list[tuple[int, TaskKey]] = []
        """A heap of `(status_ms, key)` pushed by each commit that leaves its task terminal:
        eviction pops the oldest, skipping stale ones (task gone, or committed again since),
        instead of scanning every task; rebuilt when stale ones make it twice the tasks."""
        self._outbox: dict[int, _Pending] = {}
        self._next_delivery = 1

    def __len__(self) -> int:
        return len(self._tasks)

    async def commit(self, commit: Commit) -> Committed:
        entry = self._tasks.get(commit.key)
        if commit.expected_version is None:
            if entry is not None:
                raise TaskExists(f"task {commit.key.id!r} already exists")
            if len(self._tasks) >= self.max_tasks:
                self._evict_one()
            version, last_seq, lease = 1, 0, None
        else:
            if entry is None:
                raise TaskNotFound(f"task {commit.key.id!r} not found")
            if entry.record.version != commit.expected_version:
                raise Conflict(
                    f"task {commit.key.id!r} changed concurrently (expected version "
                    f"{commit.expected_version}, found {entry.record.version})"
                )
            version, last_seq, lease = entry.record.version + 1, entry.record.last_seq, entry.record.lease
        if commit.lease == "set":
            lease = commit.lease_value
        elif commit.lease == "clear":
            lease = None
        records = [EventRecord(seq, event, last) for seq, (event, last) in enumerate(commit.events, last_seq + 1)]
        record = TaskRecord(commit.key, commit.task, version, last_seq + len(records), lease)
        if entry is None:
            entry = _Entry(record)
            self._tasks[commit.key] = entry
        else:
            entry.record = record
        if record.terminal:
            heapq.heappush(self._terminal, (status_ms(record.task), commit.key))
            if len(self._terminal) > 2 * len(self._tasks) + 64:
                self._rebuild_terminal()
        if records:
            held = entry.events
            events = held if isinstance(held, deque) else deque(held)
            events.extend(records)
            while len(events) > self.max_events:
                events.popleft()
            entry.events = events
        if record.terminal and isinstance(entry.events, deque):
            entry.events = tuple(entry.events)  # a terminal task's log is complete
        if entry.configs:
            for r in records:
                for config in entry.configs.values():
                    self._queue(Delivery(self._next_delivery, commit.key, config.config, r.seq, r.event, 0))
        return Committed(version, records)

    def _queue(self, delivery: Delivery) -> None:
        self._outbox[delivery.id] = _Pending(delivery)
        self._next_delivery += 1
        while len(self._outbox) > self.max_deliveries:
            del self._outbox[next(iter(self._outbox))]
            self.dropped_deliveries += 1

    def _rebuild_terminal(self) -> None:
        """The heap of terminal tasks again from the tasks held, without its stale entries
        (terminal tasks committed again, tasks gone): it stays within twice the tasks."""
        self._terminal = [(status_ms(e.record.task), k) for k, e in self._tasks.items() if e.record.terminal]
        heapq.heapify(self._terminal)

    def _evict_one(self) -> None:
        while self._terminal:
            ms, oldest = heapq.heappop(self._terminal)
            entry = self._tasks.get(oldest)
            if entry is None or not entry.record.terminal or status_ms(entry.record.task) != ms:
                continue  # stale: evicted already, or a later commit pushed its own entry
            del self._tasks[oldest]
            if self._outbox:
                self._outbox = {i: p for i, p in self._outbox.items() if p.delivery.key != oldest}
            return
        raise StoreFull(f"the memory store holds {self.max_tasks} live tasks; none can be evicted")

    async def get_task(self, key: TaskKey) -> TaskRecord | None:
        entry = self._tasks.get(key)
        return None if entry is None else entry.record

    async def list_tasks(self, tenant: str, query: ListQuery) -> ListPage:
        matching: list[tuple[int, str, TaskRecord]] = []
        for key, entry in self._tasks.items():
            task = entry.record.task
            if key.tenant != tenant:
                continue
            if query.context_id is not None and task.context_id != query.context_id:
                continue
            if query.state is not None and task.status.state is not query.state:
                continue
            ms = status_ms(task)
            if query.status_after_ms is not None and ms < query.status_after_ms:
                continue
            matching.append((ms, key.id, entry.record))
        total = len(matching)
        after = query.after
        candidates = (m for m in matching if after is None or (m[0], m[1]) < after)
        page = heapq.nlargest(query.page_size + 1, candidates, key=lambda m: (m[0], m[1]))
        more = len(page) > query.page_size
        page = page[: query.page_size]
        cursor = (page[-1][0], page[-1][1]) if more and page else None
        return ListPage([m[2] for m in page], total, cursor)

    async def read_events(self, key: TaskKey, after: int, limit: int) -> EventPage:
        entry = self._tasks.get(key)
        if entry is None:
            raise TaskNotFound(f"task {key.id!r} not found")
        events = entry.events
        if not events:
            return EventPage([], 0, entry.record.last_seq)
        first = events[0].seq
        start = max(0, after + 1 - first)
        if start >= len(events) or limit <= 0:
            return EventPage([], first, entry.record.last_seq)
        page = [events[i] for i in range(start, min(len(events), start + limit))]
        return EventPage(page, first, entry.record.last_seq)

    def _entry(self, key: TaskKey) -> _Entry:
        entry = self._tasks.get(key)
        if entry is None:
            raise TaskNotFound(f"task {key.id!r} not found")
        return entry

    async def put_push_config(self, record: PushConfigRecord) -> None:
        self._entry(record.key).configs[record.id] = record

    async def get_push_config(self, key: TaskKey, config_id: str) -> PushConfigRecord | None:
        entry = self._tasks.get(key)
        return None if entry is None else entry.configs.get(config_id)

    async def list_push_configs(self, key: TaskKey, after: str | None, limit: int) -> list[PushConfigRecord]:
        entry = self._tasks.get(key)
        if entry is None:
            return []
        ids = sorted(entry.configs)
        start = 0 if after is None else bisect.bisect_right(ids, after)
        return [entry.configs[i] for i in ids[start : start + max(0, limit)]]

    async def delete_push_config(self, key: TaskKey, config_id: str) -> bool:
        entry = self._tasks.get(key)
        if entry is None or entry.configs.pop(config_id, None) is None:
            return False
        self._outbox = {
            i: p for i, p in self._outbox.items() if not (p.delivery.key == key and p.delivery.config.id == config_id)
        }
        return True

    async def claim_deliveries(self, now_ms: int, limit: int, lease_ms: int) -> list[Delivery]:
        due = [p for p in self._outbox.values() if p.due_ms <= now_ms and p.lease_until_ms <= now_ms]
        due.sort(key=lambda p: (p.due_ms, p.delivery.id))
        claimed = due[: max(0, limit)]
        for pending in claimed:
            pending.lease_until_ms = now_ms + lease_ms
        return [p.delivery for p in claimed]

    async def finish_delivery(self, delivery_id: int, retry_at_ms: int | None) -> None:
        pending = self._outbox.get(delivery_id)
        if pending is None:
            return
        if retry_at_ms is None:
            del self._outbox[delivery_id]
            return
        pending.delivery = replace(pending.delivery, attempts=pending.delivery.attempts + 1)
        pending.due_ms, pending.lease_until_ms = retry_at_ms, 0

    async def renew_leases(self, owner: str, keys: Sequence[TaskKey], until_ms: int) -> int:
        renewed = 0
        for key in keys:
            entry = self._tasks.get(key)
            if entry is not None and not entry.record.terminal:
                entry.record = msgspec.structs.replace(entry.record, lease=TurnLease(owner, until_ms))
                renewed += 1
        return renewed

    async def release_lease(self, key: TaskKey, owner: str) -> bool:
        entry = self._tasks.get(key)
        if entry is None or entry.record.lease is None or entry.record.lease.owner != owner:
            return False
        entry.record = msgspec.structs.replace(entry.record, lease=None)
        return True

    async def expired_leases(self, now_ms: int, limit: int) -> list[TaskKey]:
        expired = [
            (e.record.lease.until_ms, k)
            for k, e in self._tasks.items()
            if e.record.lease is not None and e.record.lease.until_ms < now_ms
        ]
        return [k for _, k in sorted(expired)[: max(0, limit)]]

    async def close(self) -> None:
        self._tasks.clear()
        self._terminal.clear()
        self._outbox.clear()
