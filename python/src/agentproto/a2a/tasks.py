"""Tasks: the lifecycle rules, every change to a task as one store commit, and following
a task's event log live.

Rules, whoever writes (the executor, a cancel, a follow-up message):
* nothing leaves a terminal state (COMPLETED, FAILED, CANCELED, REJECTED): a change to a
  terminal task is refused with `UNSUPPORTED_OPERATION`;
* events are numbered in commit order by the store, and a commit is made against the
  version the writer read (a conflict re-reads and re-applies), so concurrent writers
  serialise through the store;
* a terminal status is the log's last event: subscribers end there.

Stored `Task` values are shared and never changed in place: a change builds a new task.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from agentproto.a2a.errors import A2aError, ErrorKind
from agentproto.a2a.generated.v1 import (
    Artifact,
    Message,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from agentproto.a2a.store import (
    TERMINAL_STATES,
    Commit,
    Conflict,
    EventRecord,
    Store,
    StoreError,
    StoreFull,
    TaskKey,
    TaskNotFound,
    TaskRecord,
    TurnLease,
)

__all__ = [
    "ArtifactChange",
    "Change",
    "EventHub",
    "Gap",
    "HistoryChange",
    "StatusChange",
    "Tasks",
    "ends_turn",
    "follow",
    "is_active",
    "is_terminal",
    "now_timestamp",
    "store_error",
    "viewed",
]

INTERRUPTED_STATES = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
MAX_RETRIES = 64


def is_terminal(state: TaskState) -> bool:
    return state in TERMINAL_STATES


def is_active(state: TaskState) -> bool:
    """SUBMITTED or WORKING: a turn runs."""
    return state is TaskState.SUBMITTED or state is TaskState.WORKING


def state_ends_turn(state: TaskState) -> bool:
    """Terminal and interrupted states end a turn."""
    return state in TERMINAL_STATES or state in INTERRUPTED_STATES


def ends_turn(event: StreamResponse) -> bool:
    """Whether an event ends a turn: a direct message, or a terminal or interrupted status."""
    if event.status_update is not msgspec.UNSET:
        return state_ends_turn(event.status_update.status.state)
    if event.task is not msgspec.UNSET:
        return state_ends_turn(event.task.status.state)
    return event.message is not msgspec.UNSET


_second: tuple[int, str] = (-1, "")
"""The last second `now_timestamp` formatted, and its text up to the milliseconds."""


def now_timestamp() -> str:
    """Now, as the canonical timestamp text (UTC, milliseconds)."""
    global _second
    second, ns = divmod(time.time_ns(), 1_000_000_000)
    known, prefix = _second
    if second != known:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
        _second = (second, prefix)
    return f"{prefix}{ns // 1_000_000:03d}Z"


@dataclass(frozen=True, slots=True)
class StatusChange:
    """A new status; its message (if any) joins the history."""

    status: TaskStatus
    metadata: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


@dataclass(frozen=True, slots=True)
class ArtifactChange:
    """An artifact, or a piece appended to the artifact with the same id."""

    artifact: Artifact
    append: bool = False
    last_chunk: bool = True


@dataclass(frozen=True, slots=True)
class HistoryChange:
    """A message joins the history, without an event (a client's follow-up)."""

    message: Message


Change = StatusChange | ArtifactChange | HistoryChange


def terminal_error(task_id: str) -> A2aError:
    return A2aError(ErrorKind.UNSUPPORTED_OPERATION, f"task {task_id} is in a terminal state").with_metadata(
        "taskId", task_id
    )


def store_error(e: StoreError, task_id: str) -> A2aError:
    """How the server answers a store failure."""
    if isinstance(e, TaskNotFound):
        return A2aError(ErrorKind.TASK_NOT_FOUND, f"task {task_id} not found").with_metadata("taskId", task_id)
    if isinstance(e, StoreFull):
        return A2aError(ErrorKind.INTERNAL, f"store: {e}")
    return A2aError(ErrorKind.INTERNAL, f"store: {e}")


def apply_change(task: Task, change: Change) -> tuple[Task, StreamResponse | None]:
    """The task after `change`, and the event it makes (none for a history change)."""
    if isinstance(change, StatusChange):
        status = change.status
        if status.timestamp is msgspec.UNSET:
            status = msgspec.structs.replace(status, timestamp=now_timestamp())
        history = task.history if status.message is msgspec.UNSET else [*task.history, status.message]
        new = msgspec.structs.replace(task, status=status, history=history)
        status_event = TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=status, metadata=change.metadata
        )
        return new, StreamResponse(status_update=status_event)
    if isinstance(change, ArtifactChange):
        artifact = change.artifact
        artifacts = list(task.artifacts)
        for i, existing in enumerate(artifacts):
            if existing.artifact_id == artifact.artifact_id:
                artifacts[i] = (
                    msgspec.structs.replace(existing, parts=[*existing.parts, *artifact.parts])
                    if change.append
                    else artifact
                )
                break
        else:
            artifacts.append(artifact)
        new = msgspec.structs.replace(task, artifacts=artifacts)
        artifact_event = TaskArtifactUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            artifact=artifact,
            append=change.append,
            last_chunk=change.last_chunk,
        )
        return new, StreamResponse(artifact_update=artifact_event)
    return msgspec.structs.replace(task, history=[*task.history, change.message]), None


def viewed(task: Task, history_length: int | None, include_artifacts: bool = True) -> Task:
    """The task as a caller asked to see it: at most `history_length` recent messages
    (none for 0), artifacts only when asked."""
    if history_length is not None and len(task.history) > history_length:
        task = msgspec.structs.replace(task, history=task.history[len(task.history) - history_length :])
    if not include_artifacts and task.artifacts:
        task = msgspec.structs.replace(task, artifacts=[])
    return task


class EventHub:
    """Wakes the readers of a task's log when a commit appends to it. One process; a
    shared store's notifications (part 3: PostgreSQL `LISTEN`) call `publish` too."""

    def __init__(self) -> None:
        self._waiters: dict[TaskKey, set[asyncio.Future[None]]] = {}
        self.closed = False
        self.listeners: list[Callable[[TaskKey], None]] = []
        """Called at every `publish` (the push worker looks at the outbox then)."""

    def waiter(self, key: TaskKey) -> asyncio.Future[None]:
        """A future done at the next `publish(key)` (or `close`); `drop` it when unused."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.closed:
            future.set_result(None)
        else:
            self._waiters.setdefault(key, set()).add(future)
        return future

    def drop(self, key: TaskKey, future: asyncio.Future[None]) -> None:
        waiters = self._waiters.get(key)
        if waiters is not None:
            waiters.discard(future)
            if not waiters:
                del self._waiters[key]
        if not future.done():
            future.cancel()

    @property
    def waiting(self) -> int:
        """How many readers wait for a commit (all tasks)."""
        return sum(len(w) for w in self._waiters.values())

    def publish(self, key: TaskKey) -> None:
        for listener in self.listeners:
            listener(key)
        for future in self._waiters.pop(key, ()):
            if not future.done():
                future.set_result(None)

    def wake_all(self) -> None:
        """Wakes every reader once (a notice naming no task; the replica listener
        listening again after missing notices)."""
        for key in list(self._waiters):
            self.publish(key)

    def close(self) -> None:
        """Wakes every reader for good (server shutdown)."""
        self.closed = True
        for key in list(self._waiters):
            self.publish(key)


@dataclass(frozen=True, slots=True)
class Gap:
    """Events after `after` up to `resumed_at` are no longer in the log (a bounded store
    dropped them); the reader goes on at `resumed_at`."""

    after: int
    resumed_at: int


async def follow(
    store: Store, hub: EventHub, key: TaskKey, after: int, *, until_turn_ends: bool = False, page: int = 256
) -> AsyncIterator[EventRecord | Gap]:
    """The task's events after sequence number `after`, as they are committed, until the
    log's last event (or, with `until_turn_ends`, the first event that ends a turn); a
    `Gap` where the log no longer holds what comes next. Ends early when the hub closes.
    Raises `StoreError` (`TaskNotFound` for an evicted task)."""
    while True:
        waiter = hub.waiter(key)
        try:
            found = await store.read_events(key, after, page)
            events = found.events
            if events and events[0].seq > after + 1:
                yield Gap(after, events[0].seq)
            for record in events:
                yield record
                after = record.seq
                if record.last or (until_turn_ends and ends_turn(record.event)):
                    return
            if not events:
                if hub.closed:
                    return
                await waiter
        finally:
            hub.drop(key, waiter)


class Tasks:
    """Changes to tasks, each one commit on `store`, its events published on `hub`."""

    def __init__(self, store: Store, hub: EventHub, owner: str, lease_ms: int = 30_000) -> None:
        self.store = store
        self.hub = hub
        self.owner = owner
        """This server process's id (the owner of the turn leases it sets)."""
        self.lease_ms = lease_ms

    def _lease(self) -> TurnLease:
        return TurnLease(self.owner, int(time.time() * 1000) + self.lease_ms)

    async def create(
        self, key: TaskKey, task: Task, changes: Sequence[Change] = ()
    ) -> tuple[TaskRecord, list[EventRecord]]:
        """Stores a new task: its first event is the task itself, then the events of
        `changes`, applied in the same commit."""
        events: list[tuple[StreamResponse, bool]] = [(StreamResponse(task=task), is_terminal(task.status.state))]
        task = self._apply_all(task, changes, events)
        lease: Literal["keep", "set", "clear"] = "set" if is_active(task.status.state) else "clear"
        commit = Commit(key, task, None, events, lease, self._lease() if lease == "set" else None)
        committed = await self.store.commit(commit)
        self.hub.publish(key)
        return TaskRecord(key, task, committed.version, committed.events[-1].seq), committed.events

    async def apply(
        self, key: TaskKey, changes: Sequence[Change], known: TaskRecord | None = None, *, turn: bool = False
    ) -> tuple[TaskRecord, list[EventRecord]]:
        """Applies `changes` in one commit to `known` (the task as this writer last saw it)
        or to the stored task; a stale `known` loses to a conflict and the changes apply
        again to the stored task. `turn`: the writer is the task's running turn (it keeps
        the turn's lease while the task is active)."""
        for _ in range(MAX_RETRIES):
            record = known if known is not None else await self.store.get_task(key)
            known = None
            if record is None:
                raise TaskNotFound(f"task {key.id!r} not found")
            if changes and record.terminal:
                raise _Terminal(key.id)
            events: list[tuple[StreamResponse, bool]] = []
            task = self._apply_all(record.task, changes, events)
            lease: Literal["keep", "set", "clear"] = "clear"
            if is_active(task.status.state):
                lease = "set" if turn else "keep"
            commit = Commit(key, task, record.version, events, lease, self._lease() if lease == "set" else None)
            try:
                committed = await self.store.commit(commit)
            except Conflict:
                continue
            if committed.events:
                self.hub.publish(key)
            last_seq = committed.events[-1].seq if committed.events else record.last_seq
            return TaskRecord(key, task, committed.version, last_seq), committed.events
        raise StoreError(f"task {key.id!r}: too many concurrent writers")

    def _apply_all(self, task: Task, changes: Sequence[Change], events: list[tuple[StreamResponse, bool]]) -> Task:
        for change in changes:
            if is_terminal(task.status.state):
                raise _Terminal(task.id)
            task, event = apply_change(task, change)
            if event is not None:
                last = event.status_update is not msgspec.UNSET and is_terminal(event.status_update.status.state)
                events.append((event, last))
        return task


class _Terminal(StoreError):
    """A change to a terminal task (answered `UNSUPPORTED_OPERATION`)."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task {task_id} is in a terminal state")
        self.task_id = task_id


def change_error(e: StoreError, task_id: str) -> A2aError:
    """The answer to a change that failed."""
    if isinstance(e, _Terminal):
        return terminal_error(e.task_id)
    return store_error(e, task_id)
