"""The store contract of the A2A server: where tasks, their event logs, push configs and
turn leases live.

Every change to a task is one `Store.commit`: the new task, the events the change made
(each given the next sequence number of the task's log) and what happens to the task's
turn lease, applied atomically and only if the stored version is the one the writer read
(optimistic concurrency: a `Conflict` makes the writer read again and re-apply). Readers
follow a task's log by sequence number (`read_events`), which is what resuming a stream
with `Last-Event-ID` reads.

Push deliveries: a commit's events are queued, in the same atomic change, once for each
push config the task has at that moment (the outbox); a push worker claims due deliveries
(`claim_deliveries`, under a lease so that a crashed worker's claims come due again) and
records each outcome (`finish_delivery`). Deleting a config drops its queued deliveries.

A store keeps typed values (`Task`, `StreamResponse`); a database store encodes them with
`agentproto.a2a.encode` and decodes them back. Stores never apply protocol rules: the
task layer (`agentproto.a2a.tasks`) does.

The records every commit passes through (`TaskKey`, `TurnLease`, `TaskRecord`,
`EventRecord`, `Commit`, `Committed`) are frozen msgspec Structs that the garbage collector
does not track: they are made several times a request and held for every task, and hold
only values that cannot refer back to them (`msgspec.structs.replace` makes a changed copy).

Implementations: `agentproto.a2a.memory_store.MemoryStore` (bounded, one process),
`agentproto.a2a.sqlite_store.SqliteStore` (durable, one SQLite file) and
`agentproto.a2a.postgres_store.PostgresStore` (several processes on one database). The contract tests
(`tests/a2a/test_store_contract.py`) run against every store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol

from msgspec import Struct

from agentproto.a2a.generated.v1 import StreamResponse, Task, TaskPushNotificationConfig, TaskState

__all__ = [
    "TERMINAL_STATES",
    "Commit",
    "Committed",
    "Conflict",
    "Delivery",
    "EventPage",
    "EventRecord",
    "ListPage",
    "ListQuery",
    "PushConfigRecord",
    "Store",
    "StoreError",
    "StoreFull",
    "TaskExists",
    "TaskKey",
    "TaskNotFound",
    "TaskRecord",
    "TurnLease",
    "status_ms",
    "timestamp_ms",
]

TERMINAL_STATES = frozenset({TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED})
"""States a task never leaves (a store may evict only tasks in them)."""


class TaskKey(Struct, frozen=True, order=True, gc=False):
    """A task's identity: its tenant (`""` for the default one) and its id."""

    tenant: str
    id: str


class TurnLease(Struct, frozen=True, gc=False):
    """Which server process runs a task's turn, and until when it is presumed alive
    (milliseconds since the Unix epoch); the owner renews it while the turn runs."""

    owner: str
    until_ms: int


class TaskRecord(Struct, frozen=True, gc=False):
    """One task as stored. The `task` value is shared: never change it in place."""

    key: TaskKey
    task: Task
    version: int
    """Incremented by every commit; the first commit stores version 1."""
    last_seq: int
    """The sequence number of the task's last event when this version was committed: a
    snapshot of the task followed by the log after `last_seq` misses nothing."""
    lease: TurnLease | None = None

    @property
    def terminal(self) -> bool:
        return self.task.status.state in TERMINAL_STATES


class EventRecord(Struct, frozen=True, gc=False):
    """One event of a task's log."""

    seq: int
    """Per task, from 1, strictly increasing, never reused."""
    event: StreamResponse
    last: bool
    """The task's last event (a terminal status): a subscriber's stream ends after it."""


class Commit(Struct, frozen=True, gc=False):
    """One change to one task."""

    key: TaskKey
    task: Task
    expected_version: int | None
    """`None`: the task must not exist yet (`TaskExists` otherwise); a number: the stored
    version must be that one (`Conflict` otherwise)."""
    events: Sequence[tuple[StreamResponse, bool]] = ()
    """The events, in order, each with whether it is the log's last."""
    lease: Literal["keep", "set", "clear"] = "keep"
    lease_value: TurnLease | None = None
    """The lease stored when `lease` is `set`."""


class Committed(Struct, frozen=True, gc=False):
    """What a commit stored: the task's new version and the events with their numbers."""

    version: int
    events: list[EventRecord]


@dataclass(frozen=True, slots=True)
class EventPage:
    """A page of a task's log."""

    events: list[EventRecord]
    first_held: int
    """The lowest sequence number still held (0 when none): greater than `after + 1` means
    the reader missed evicted events."""
    last_written: int
    """The highest sequence number written so far (0 when none)."""


@dataclass(frozen=True, slots=True)
class ListQuery:
    """The filter and page of `ListTasks`. Order: status timestamp descending, then id
    descending; `after` is the `(status_ms, id)` of the previous page's last task."""

    context_id: str | None = None
    state: TaskState | None = None
    status_after_ms: int | None = None
    page_size: int = 50
    after: tuple[int, str] | None = None


@dataclass(frozen=True, slots=True)
class ListPage:
    tasks: list[TaskRecord]
    total_size: int
    """How many tasks match the filter, before paging."""
    next: tuple[int, str] | None
    """The cursor of the next page; `None` on the last page."""


@dataclass(frozen=True, slots=True)
class PushConfigRecord:
    """A task's push config as stored (its `id` assigned)."""

    key: TaskKey
    config: TaskPushNotificationConfig

    @property
    def id(self) -> str:
        return self.config.id


@dataclass(frozen=True, slots=True)
class Delivery:
    """One event to send to one push config (what `claim_deliveries` hands out)."""

    id: int
    key: TaskKey
    config: TaskPushNotificationConfig
    seq: int
    event: StreamResponse
    attempts: int
    """Attempts already made (0 for the first)."""


@dataclass(slots=True)
class StoreError(Exception):
    """A store operation failed. The subclasses are answers the caller acts on; this
    class itself is the backend failing (the message says how)."""

    message: str = field(default="")

    def __str__(self) -> str:
        return self.message


@dataclass(slots=True)
class TaskExists(StoreError):
    """A create found the task already there."""


@dataclass(slots=True)
class TaskNotFound(StoreError):
    """The task does not exist (or was evicted)."""


@dataclass(slots=True)
class Conflict(StoreError):
    """The stored version is not the one the commit expected: someone committed in between."""


@dataclass(slots=True)
class StoreFull(StoreError):
    """A bounded store holds as many live tasks as it may; nothing can be evicted."""


class Store(Protocol):
    """What the A2A server keeps, and how (see the module documentation). Every method
    may raise `StoreError`."""

    async def commit(self, commit: Commit) -> Committed:
        """Applies one change atomically (see `Commit`)."""
        ...

    async def get_task(self, key: TaskKey) -> TaskRecord | None:
        """The task, or `None`."""
        ...

    async def list_tasks(self, tenant: str, query: ListQuery) -> ListPage:
        """One page of the tenant's tasks matching `query`."""
        ...

    async def read_events(self, key: TaskKey, after: int, limit: int) -> EventPage:
        """Events with `seq > after`, at most `limit`, in order; `TaskNotFound` when the
        task does not exist."""
        ...

    async def put_push_config(self, record: PushConfigRecord) -> None:
        """Inserts or replaces a config; `TaskNotFound` when the task does not exist. A
        task's configs go with it."""
        ...

    async def get_push_config(self, key: TaskKey, config_id: str) -> PushConfigRecord | None: ...

    async def list_push_configs(self, key: TaskKey, after: str | None, limit: int) -> list[PushConfigRecord]:
        """The task's configs ordered by id, those with `id > after`, at most `limit`."""
        ...

    async def delete_push_config(self, key: TaskKey, config_id: str) -> bool:
        """Whether a config was removed."""
        ...

    async def renew_leases(self, owner: str, keys: Sequence[TaskKey], until_ms: int) -> int:
        """Gives each existing, non-terminal task of `keys` the lease `(owner, until_ms)`;
        returns how many. Not a commit: no version change, no event."""
        ...

    async def release_lease(self, key: TaskKey, owner: str) -> bool:
        """Removes `owner`'s lease from the task; whether it held one. Not a commit."""
        ...

    async def expired_leases(self, now_ms: int, limit: int) -> list[TaskKey]:
        """Tasks whose lease ended before `now_ms`, earliest first, at most `limit`."""
        ...

    async def claim_deliveries(self, now_ms: int, limit: int, lease_ms: int) -> list[Delivery]:
        """Up to `limit` deliveries due at `now_ms` and not claimed by a live lease,
        earliest due first, each now claimed until `now_ms + lease_ms`."""
        ...

    async def finish_delivery(self, delivery_id: int, retry_at_ms: int | None) -> None:
        """Records an attempt: `None` removes the delivery (sent, or given up); a time
        makes it due again then, one attempt more, unclaimed."""
        ...

    async def close(self) -> None:
        """Releases what the store holds (connections, threads)."""
        ...


def status_ms(task: Task) -> int:
    """The task's status timestamp in milliseconds since the Unix epoch (0 when unset):
    the order of `ListTasks`."""
    text = task.status.timestamp
    if not isinstance(text, str):
        return 0
    return timestamp_ms(text)


_known_second: tuple[str, int] = ("\x00", 0)
"""The text up to the milliseconds (`YYYY-MM-DDTHH:MM:SS.`) of the last canonical timestamp
`timestamp_ms` read, and its whole seconds in microseconds since the Unix epoch."""


def timestamp_ms(text: str) -> int:
    """A timestamp's text in milliseconds since the Unix epoch (0 when unreadable)."""
    global _known_second
    prefix, micros = _known_second
    canonical = len(text) == 24 and text[23] == "Z" and text[20:23].isascii() and text[20:23].isdigit()
    if canonical and text.startswith(prefix):
        # What the general path computes (`datetime.timestamp` divides whole microseconds by
        # 10**6), without parsing the date again.
        return int((micros + int(text[20:23]) * 1000) / 10**6 * 1000)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return 0
    if canonical and text[19] == ".":
        whole = moment.replace(microsecond=0) - _EPOCH
        _known_second = (text[:20], (whole.days * 86400 + whole.seconds) * 10**6)
    return int(moment.timestamp() * 1000)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
