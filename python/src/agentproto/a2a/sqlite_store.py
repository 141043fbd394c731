"""The durable A2A store on one SQLite file (stdlib `sqlite3`), kept off the event loop.

**Durability.** The file runs in WAL mode with `synchronous=FULL`: a transaction's log
is fsynced before its `COMMIT` returns, and a caller is answered only after that, so an
acknowledged write survives the process being killed (and a power loss).

**Group commit.** Every write (a `commit`, and the push-config and lease writes) is a job
queued for one writer thread of the store's own. The thread takes what is queued, up to
`max_batch` jobs, into one transaction, and pays one fsync for all of them; under load a
batch is whatever arrived during the previous fsync, a lone write is a batch of one.
Each job runs in a savepoint: one the checks refuse (`Conflict`, `TaskExists`,
`TaskNotFound`) or that fails is undone alone and the others of its batch stand.

**Bounded.** At most `max_queued` writes wait for the writer; more callers wait (on the
event loop, without a thread) until there is room.

**Reads** run in the default thread pool on a few query-only connections of their own;
in WAL mode they see the last commit without waiting for a write in progress.

A write whose caller was cancelled after it was queued still happens: publish what a
commit returns, and do not cancel commits. The versioned-commit check is the memory
store's (`agentproto.a2a.memory_store`); unlike that store this one evicts nothing and
keeps every event until `purge_terminal` deletes old finished tasks (retention).
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from agentproto.a2a.codec import decode, encode
from agentproto.a2a.sqlite_schema import connect, migrate
from agentproto.a2a.store import (
    TERMINAL_STATES,
    Commit,
    Committed,
    Conflict,
    Delivery,
    EventPage,
    EventRecord,
    ListPage,
    ListQuery,
    PushConfigRecord,
    StoreError,
    TaskExists,
    TaskKey,
    TaskNotFound,
    TaskRecord,
    TurnLease,
    status_ms,
)

__all__ = ["SqliteStore"]

T = TypeVar("T")
_Job = Callable[[sqlite3.Connection], Any]


@dataclass(slots=True)
class _Queued:
    job: _Job
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class _Writer:
    """The writer thread and its queue (see "Group commit")."""

    def __init__(self, connection: sqlite3.Connection, max_batch: int) -> None:
        self.connection = connection
        self.max_batch = max_batch
        self.transactions = 0
        self._queue: queue.SimpleQueue[_Queued | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="agentproto-a2a-sqlite-writer", daemon=True)
        self._thread.start()

    def put(self, item: _Queued) -> None:
        self._queue.put(item)

    def stop(self) -> None:
        """Commits what is queued, then ends the thread (blocking)."""
        self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch, stop = [first], False
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            outcomes = self._commit(batch)
            for item, (result, error) in zip(batch, outcomes, strict=True):
                try:
                    item.loop.call_soon_threadsafe(_settle, item.future, result, error)
                except RuntimeError:
                    pass  # the caller's loop is closed: nobody waits for the answer
            if stop:
                return

    def _commit(self, batch: list[_Queued]) -> list[tuple[Any, BaseException | None]]:
        connection = self.connection
        outcomes: list[tuple[Any, BaseException | None]] = []
        try:
            connection.execute("BEGIN IMMEDIATE")
            for item in batch:
                connection.execute("SAVEPOINT job")
                try:
                    outcome: tuple[Any, BaseException | None] = (item.job(connection), None)
                except (sqlite3.Error, StoreError) as e:
                    connection.execute("ROLLBACK TO job")
                    outcome = (None, _store_error(e))
                connection.execute("RELEASE job")
                outcomes.append(outcome)
            connection.execute("COMMIT")
        except Exception as e:  # noqa: BLE001 - whatever fails, every caller of the batch is answered
            try:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            failure = _store_error(e)
            return [(None, failure)] * len(batch)
        self.transactions += 1
        return outcomes


def _store_error(e: Exception) -> StoreError:
    if isinstance(e, StoreError):
        return e
    return StoreError(f"sqlite: {e}")


class SqliteStore:
    """The store on one SQLite file (see the module documentation). Open it with
    `await SqliteStore.open(path)`; `close` commits what is queued and releases the
    file."""

    def __init__(
        self,
        writer: sqlite3.Connection,
        readers: Sequence[sqlite3.Connection],
        *,
        max_batch: int = 256,
        max_queued: int = 1024,
    ) -> None:
        """Takes connections made by `open` (use that)."""
        if max_batch < 1 or max_queued < 1 or not readers:
            raise ValueError("max_batch and max_queued must be at least 1, and readers not empty")
        self._writer = _Writer(writer, max_batch)
        self._readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._all_readers = list(readers)
        for reader in readers:
            self._readers.put(reader)
        self._room = asyncio.Semaphore(max_queued)
        self._closed = False

    @classmethod
    async def open(cls, path: str, *, readers: int = 2, max_batch: int = 256, max_queued: int = 1024) -> SqliteStore:
        """Opens (or creates) the file at `path` and brings its schema up to date.

        Raises:
            StoreError: the file cannot be opened, holds a newer schema, or is in a pre-release layout.
        """
        if readers < 1:
            raise ValueError("readers must be at least 1")

        def opened() -> tuple[sqlite3.Connection, list[sqlite3.Connection]]:
            writer = connect(path, reader=False)
            try:
                migrate(writer)
                return writer, [connect(path, reader=True) for _ in range(readers)]
            except BaseException:
                writer.close()
                raise

        writer, reader_connections = await asyncio.to_thread(opened)
        return cls(writer, reader_connections, max_batch=max_batch, max_queued=max_queued)

    @property
    def transactions(self) -> int:
        """Write transactions committed so far (each one fsync)."""
        return self._writer.transactions

    async def _write(self, job: Callable[[sqlite3.Connection], T]) -> T:
        async with self._room:
            if self._closed:
                raise StoreError("the sqlite store is closed")
            loop = asyncio.get_running_loop()
            future: asyncio.Future[T] = loop.create_future()
            self._writer.put(_Queued(job, loop, future))
            # A cancelled caller stops waiting; the write still happens (see the module).
            return await future

    async def _read(self, job: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise StoreError("the sqlite store is closed")

        def run() -> T:
            reader = self._readers.get()
            try:
                reader.execute("BEGIN")
                try:
                    return job(reader)
                finally:
                    reader.execute("COMMIT")
            except StoreError:
                raise
            except Exception as e:  # the backend failing, or a stored value no longer decoding
                raise StoreError(f"sqlite: {e}") from e
            finally:
                self._readers.put(reader)

        return await asyncio.to_thread(run)

    async def commit(self, commit: Commit) -> Committed:
        body = encode(commit.task)
        events = [(encode(event), event, last) for event, last in commit.events]
        return await self._write(lambda connection: _commit(connection, commit, body, events))

    async def get_task(self, key: TaskKey) -> TaskRecord | None:
        return await self._read(lambda connection: _get_task(connection, key))

    async def list_tasks(self, tenant: str, query: ListQuery) -> ListPage:
        return await self._read(lambda connection: _list_tasks(connection, tenant, query))

    async def read_events(self, key: TaskKey, after: int, limit: int) -> EventPage:
        return await self._read(lambda connection: _read_events(connection, key, after, limit))

    async def put_push_config(self, record: PushConfigRecord) -> None:
        body = encode(record.config)
        key = record.key

        def job(connection: sqlite3.Connection) -> None:
            if not _exists(connection, key):
                raise TaskNotFound(f"task {key.id!r} not found")
            connection.execute(
                "INSERT INTO push_configs (tenant, task_id, id, body) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body",
                (key.tenant, key.id, record.id, body),
            )

        await self._write(job)

    async def get_push_config(self, key: TaskKey, config_id: str) -> PushConfigRecord | None:
        def job(connection: sqlite3.Connection) -> PushConfigRecord | None:
            row = connection.execute(
                "SELECT body FROM push_configs WHERE tenant = ? AND task_id = ? AND id = ?",
                (key.tenant, key.id, config_id),
            ).fetchone()
            return None if row is None else PushConfigRecord(key, decode("TaskPushNotificationConfig", row[0]))

        return await self._read(job)

    async def list_push_configs(self, key: TaskKey, after: str | None, limit: int) -> list[PushConfigRecord]:
        def job(connection: sqlite3.Connection) -> list[PushConfigRecord]:
            sql, values = "SELECT body FROM push_configs WHERE tenant = ? AND task_id = ?", [key.tenant, key.id]
            if after is not None:
                sql += " AND id > ?"
                values.append(after)
            rows = connection.execute(f"{sql} ORDER BY id LIMIT ?", [*values, max(0, limit)]).fetchall()
            return [PushConfigRecord(key, decode("TaskPushNotificationConfig", row[0])) for row in rows]

        return await self._read(job)

    async def delete_push_config(self, key: TaskKey, config_id: str) -> bool:
        def job(connection: sqlite3.Connection) -> bool:
            where = (key.tenant, key.id, config_id)
            cursor = connection.execute("DELETE FROM push_configs WHERE tenant = ? AND task_id = ? AND id = ?", where)
            connection.execute("DELETE FROM outbox WHERE tenant = ? AND task_id = ? AND config_id = ?", where)
            return cursor.rowcount > 0

        return await self._write(job)

    async def renew_leases(self, owner: str, keys: Sequence[TaskKey], until_ms: int) -> int:
        wanted = list(keys)

        def job(connection: sqlite3.Connection) -> int:
            renewed = 0
            for key in wanted:
                cursor = connection.execute(
                    "UPDATE tasks SET lease_owner = ?, lease_until_ms = ? WHERE tenant = ? AND id = ? AND terminal = 0",
                    (owner, until_ms, key.tenant, key.id),
                )
                renewed += cursor.rowcount
            return renewed

        return await self._write(job)

    async def release_lease(self, key: TaskKey, owner: str) -> bool:
        def job(connection: sqlite3.Connection) -> bool:
            cursor = connection.execute(
                "UPDATE tasks SET lease_owner = NULL, lease_until_ms = NULL"
                " WHERE tenant = ? AND id = ? AND lease_owner = ?",
                (key.tenant, key.id, owner),
            )
            return cursor.rowcount > 0

        return await self._write(job)

    async def expired_leases(self, now_ms: int, limit: int) -> list[TaskKey]:
        def job(connection: sqlite3.Connection) -> list[TaskKey]:
            rows = connection.execute(
                "SELECT tenant, id FROM tasks WHERE lease_until_ms IS NOT NULL AND lease_until_ms < ?"
                " ORDER BY lease_until_ms, tenant, id LIMIT ?",
                (now_ms, max(0, limit)),
            ).fetchall()
            return [TaskKey(tenant, id) for tenant, id in rows]

        return await self._read(job)

    async def claim_deliveries(self, now_ms: int, limit: int, lease_ms: int) -> list[Delivery]:
        def due(connection: sqlite3.Connection) -> bool:
            found = connection.execute(
                "SELECT 1 FROM outbox WHERE due_ms <= ? AND lease_until_ms <= ? LIMIT 1", (now_ms, now_ms)
            ).fetchone()
            return found is not None

        # An idle worker's polls cost a read, not a write transaction.
        if not await self._read(due):
            return []
        return await self._write(lambda connection: _claim(connection, now_ms, limit, lease_ms))

    async def finish_delivery(self, delivery_id: int, retry_at_ms: int | None) -> None:
        def job(connection: sqlite3.Connection) -> None:
            if retry_at_ms is None:
                connection.execute("DELETE FROM outbox WHERE id = ?", (delivery_id,))
            else:
                connection.execute(
                    "UPDATE outbox SET attempts = attempts + 1, due_ms = ?, lease_until_ms = 0 WHERE id = ?",
                    (retry_at_ms, delivery_id),
                )

        await self._write(job)

    async def purge_terminal(self, before_ms: int, limit: int = 500) -> int:
        """Retention: deletes up to `limit` tasks in a terminal state whose status time is
        before `before_ms`, with their events, push configs and queued deliveries; returns
        how many. Call it again while it returns `limit` (each call is one transaction, so
        commits are never held up for long); SQLite reuses the freed pages."""

        def job(connection: sqlite3.Connection) -> int:
            cursor = connection.execute(
                "DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks WHERE terminal = 1 AND status_ts_ms < ?"
                " ORDER BY status_ts_ms LIMIT ?)",
                (before_ms, max(0, limit)),
            )
            return cursor.rowcount

        return await self._write(job)

    async def close(self) -> None:
        """Commits the writes already queued, ends the writer thread and closes every
        connection. Writes and reads after it fail with `StoreError`."""
        if self._closed:
            return
        self._closed = True
        await asyncio.to_thread(self._writer.stop)

        def close_all() -> None:
            self._writer.connection.close()
            for reader in self._all_readers:
                reader.close()

        await asyncio.to_thread(close_all)


def _exists(connection: sqlite3.Connection, key: TaskKey) -> bool:
    found = connection.execute("SELECT 1 FROM tasks WHERE tenant = ? AND id = ?", (key.tenant, key.id)).fetchone()
    return found is not None


def _commit(
    connection: sqlite3.Connection, commit: Commit, body: bytes, events: list[tuple[bytes, Any, bool]]
) -> Committed:
    """One commit inside the writer's transaction: the version check, then the writes."""
    key = commit.key
    row = connection.execute(
        "SELECT version, last_seq, lease_owner, lease_until_ms FROM tasks WHERE tenant = ? AND id = ?",
        (key.tenant, key.id),
    ).fetchone()
    if commit.expected_version is None:
        if row is not None:
            raise TaskExists(f"task {key.id!r} already exists")
        version, last_seq, lease = 1, 0, None
    else:
        if row is None:
            raise TaskNotFound(f"task {key.id!r} not found")
        if row[0] != commit.expected_version:
            raise Conflict(
                f"task {key.id!r} changed concurrently (expected version {commit.expected_version}, found {row[0]})"
            )
        version, last_seq = row[0] + 1, row[1]
        lease = None if row[2] is None else TurnLease(row[2], row[3])
    if commit.lease == "set":
        lease = commit.lease_value
    elif commit.lease == "clear":
        lease = None
    records = [EventRecord(last_seq + i + 1, event, last) for i, (_, event, last) in enumerate(events)]
    task = commit.task
    state = task.status.state
    values = (
        task.context_id,
        getattr(state, "value", str(state)),
        int(state in TERMINAL_STATES),
        status_ms(task),
        version,
        last_seq + len(records),
        None if lease is None else lease.owner,
        None if lease is None else lease.until_ms,
        body,
        key.tenant,
        key.id,
    )
    if row is None:
        connection.execute(
            "INSERT INTO tasks (context_id, state, terminal, status_ts_ms, version, last_seq, lease_owner,"
            " lease_until_ms, body, tenant, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )
    else:
        connection.execute(
            "UPDATE tasks SET context_id = ?, state = ?, terminal = ?, status_ts_ms = ?, version = ?, last_seq = ?,"
            " lease_owner = ?, lease_until_ms = ?, body = ? WHERE tenant = ? AND id = ?",
            values,
        )
    connection.executemany(
        "INSERT INTO events (tenant, task_id, seq, last, body) VALUES (?, ?, ?, ?, ?)",
        [
            (key.tenant, key.id, r.seq, int(r.last), event_body)
            for r, (event_body, _, _) in zip(records, events, strict=True)
        ],
    )
    if row is not None and records:
        # The outbox, in the same transaction: each event once per config the task has.
        connection.executemany(
            "INSERT INTO outbox (tenant, task_id, config_id, seq, due_ms) SELECT tenant, task_id, id, ?, 0"
            " FROM push_configs"
            " WHERE tenant = ? AND task_id = ? ORDER BY id",
            [(r.seq, key.tenant, key.id) for r in records],
        )
    return Committed(version, records)


_TASK_COLUMNS = "tenant, id, version, last_seq, lease_owner, lease_until_ms, body"


def _task_record(row: tuple[Any, ...]) -> TaskRecord:
    tenant, id, version, last_seq, lease_owner, lease_until_ms, body = row
    lease = None if lease_owner is None else TurnLease(lease_owner, lease_until_ms)
    return TaskRecord(TaskKey(tenant, id), decode("Task", body), version, last_seq, lease)


def _get_task(connection: sqlite3.Connection, key: TaskKey) -> TaskRecord | None:
    row = connection.execute(
        f"SELECT {_TASK_COLUMNS} FROM tasks WHERE tenant = ? AND id = ?", (key.tenant, key.id)
    ).fetchone()
    return None if row is None else _task_record(row)


def _list_tasks(connection: sqlite3.Connection, tenant: str, query: ListQuery) -> ListPage:
    where: list[str] = ["tenant = ?"]
    values: list[str | int] = [tenant]
    if query.context_id is not None:
        where.append("context_id = ?")
        values.append(query.context_id)
    if query.state is not None:
        where.append("state = ?")
        values.append(query.state.value)
    if query.status_after_ms is not None:
        where.append("status_ts_ms >= ?")
        values.append(query.status_after_ms)
    filtered = " AND ".join(where)
    total = connection.execute(f"SELECT COUNT(*) FROM tasks WHERE {filtered}", values).fetchone()[0]
    page_values: list[str | int] = list(values)
    if query.after is not None:
        filtered += " AND (status_ts_ms < ? OR (status_ts_ms = ? AND id < ?))"
        page_values += [query.after[0], query.after[0], query.after[1]]
    rows = connection.execute(
        f"SELECT status_ts_ms, {_TASK_COLUMNS} FROM tasks WHERE {filtered} ORDER BY status_ts_ms DESC, id DESC LIMIT ?",
        [*page_values, max(0, query.page_size) + 1],
    ).fetchall()
    more = len(rows) > query.page_size
    rows = rows[: max(0, query.page_size)]
    cursor = (rows[-1][0], rows[-1][2]) if more and rows else None
    return ListPage([_task_record(row[1:]) for row in rows], total, cursor)


def _read_events(connection: sqlite3.Connection, key: TaskKey, after: int, limit: int) -> EventPage:
    found = connection.execute(
        "SELECT last_seq FROM tasks WHERE tenant = ? AND id = ?", (key.tenant, key.id)
    ).fetchone()
    if found is None:
        raise TaskNotFound(f"task {key.id!r} not found")
    first = connection.execute(
        "SELECT MIN(seq) FROM events WHERE tenant = ? AND task_id = ?", (key.tenant, key.id)
    ).fetchone()[0]
    rows = connection.execute(
        "SELECT seq, last, body FROM events WHERE tenant = ? AND task_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (key.tenant, key.id, after, max(0, limit)),
    ).fetchall()
    events = [EventRecord(seq, decode("StreamResponse", body), bool(last)) for seq, last, body in rows]
    return EventPage(events, first or 0, found[0])


def _claim(connection: sqlite3.Connection, now_ms: int, limit: int, lease_ms: int) -> list[Delivery]:
    rows = connection.execute(
        "SELECT o.id, o.tenant, o.task_id, o.seq, o.attempts, p.body, e.body FROM outbox o"
        " JOIN push_configs p ON p.tenant = o.tenant AND p.task_id = o.task_id AND p.id = o.config_id"
        " JOIN events e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq"
        " WHERE o.due_ms <= ? AND o.lease_until_ms <= ? ORDER BY o.due_ms, o.id LIMIT ?",
        (now_ms, now_ms, max(0, limit)),
    ).fetchall()
    connection.executemany(
        "UPDATE outbox SET lease_until_ms = ? WHERE id = ?", [(now_ms + lease_ms, row[0]) for row in rows]
    )
    return [
        Delivery(
            id,
            TaskKey(tenant, task_id),
            decode("TaskPushNotificationConfig", config),
            seq,
            decode("StreamResponse", event),
            attempts,
        )
        for id, tenant, task_id, seq, attempts, config, event in rows
    ]
