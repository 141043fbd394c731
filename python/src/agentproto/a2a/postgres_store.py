"""The PostgreSQL A2A store, for several server processes (replicas) sharing one database.

Install it with the `postgres` extra (`pip install 'agentproto[postgres]'`: asyncpg).

**Driver.** asyncpg, measured against psycopg 3 (binary, with its pool) on the store's
hot path: see `python/docs/postgres.md` (commits as fast, concurrent task reads ~1.6×
faster, and LISTEN built in).

**Schema.** The Rust PostgreSQL store's (`agentproto.a2a.postgres_schema`): a Python and
a Rust replica can share one database — tasks, logs, push configs, the outbox, leases, and
the notices below are the same rows and payloads. `open` migrates under an advisory lock
and refuses a newer schema.

**Commits.** Each commit is one statement (atomic on its own, one round trip, at READ
COMMITTED): the task row, its events, its outbox rows and its notice. An update applies
only to the version the writer read (`WHERE version = …`): a concurrent commit to the same
task, from this process or another, makes it wait for the row and then find the version
changed, and the writer gets `Conflict` (`TaskNotFound` when the task is gone). Two
creators of one task meet in the primary key (`INSERT … ON CONFLICT DO NOTHING`): the
second gets `TaskExists`. The caller is answered once the statement has committed (the
server's `synchronous_commit` then decides durability; the default makes an acknowledged
task survive a crash). There is no group commit as in the SQLite and Rust stores:
PostgreSQL already flushes concurrent commits' log together.

**NOTIFY.** A commit that appends events runs `pg_notify` on `NOTIFY_CHANNEL` in its
statement (sent if, and when, it commits) with `{"tenant":…,"id":…,"last_seq":N}` — the
Rust store's payload. `agentproto.a2a.postgres_listener` is the receiving side.

**Pool.** asyncpg's pool, at most `max_connections` connections; a call waits at most
`wait_timeout` seconds for one (then `StoreError`). asyncpg prepares each statement once
per connection.

**Leases, outbox, retention.** Lease renewals lock their rows in key order (two renewals
never deadlock); delivery claims take due rows with
`FOR UPDATE SKIP LOCKED` (workers in several processes never claim one delivery twice);
`purge_terminal` deletes old finished tasks in bounded batches the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from agentproto.a2a.codec import decode, encode
from agentproto.a2a.postgres_schema import migrate
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

__all__ = ["CONTROL_CHANNEL", "NOTIFY_CHANNEL", "PostgresStore", "driver"]

NOTIFY_CHANNEL = "agentproto_a2a_events"
"""The channel of the notices commits send (the Rust store's)."""
CONTROL_CHANNEL = "agentproto_a2a_control"
"""The channel of the messages between replicas (cancel requests and answers)."""
MAX_PAYLOAD = 7999
"""PostgreSQL refuses a notice payload of 8,000 bytes or more."""


def driver() -> Any:
    """The asyncpg module (`StoreError` when it is not installed)."""
    try:
        import asyncpg  # type: ignore[import-untyped,unused-ignore]
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise StoreError("the PostgreSQL store needs asyncpg: pip install 'agentproto[postgres]'") from e
    return asyncpg


class PostgresStore:
    """The store on one PostgreSQL database (see the module documentation). Open it with
    `await PostgresStore.open(dsn)`; `close` closes its connections."""

    def __init__(self, pool: Any, dsn: str, wait_timeout: float) -> None:
        """Takes a pool made by `open` (use that)."""
        self._pool = pool
        self.dsn = dsn
        """The connection string (the listener opens its own connection with it)."""
        self._wait = wait_timeout
        self._closed = False

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        max_connections: int = 10,
        wait_timeout: float = 30.0,
        connect_timeout: float = 10.0,
    ) -> PostgresStore:
        """Connects to `dsn` (a `postgres://` or `postgresql://` URL; a Unix socket
        directory goes in `?host=/path`) and brings the schema up to date.

        Raises:
            StoreError: the database cannot be reached, or holds a newer schema.
        """
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        asyncpg = driver()
        try:
            pool = await asyncpg.create_pool(
                dsn, min_size=1, max_size=max_connections, timeout=connect_timeout, server_settings=_SETTINGS
            )
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            raise StoreError(f"postgres: cannot connect: {e or type(e).__name__}") from e
        store = cls(pool, dsn, wait_timeout)
        try:
            async with store._connection() as connection:
                await migrate(connection)
        except BaseException:
            await pool.close()
            raise
        return store

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        """A pooled connection; the backend's failures become `StoreError`."""
        if self._closed:
            raise StoreError("the postgres store is closed")
        asyncpg = driver()
        try:
            async with self._pool.acquire(timeout=self._wait) as connection:
                yield connection
        except StoreError:
            raise
        except TimeoutError as e:
            raise StoreError(f"postgres: no free connection within {self._wait} s") from e
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            raise StoreError(f"postgres: {e}") from e

    async def commit(self, commit: Commit, *, lease_expired_before: int | None = None) -> Committed:
        """`Store.commit`; with `lease_expired_before` (milliseconds), an update applies
        only while the task's lease ended before then (`Conflict` otherwise): the sweep's
        commit does not end a turn whose owner renewed its lease since the sweep read it."""
        body = encode(commit.task)
        bodies = [encode(event) for event, _ in commit.events]
        async with self._connection() as connection:
            return await _commit(connection, commit, body, bodies, lease_expired_before)

    async def get_task(self, key: TaskKey) -> TaskRecord | None:
        async with self._connection() as connection:
            row = await connection.fetchrow(
                f"SELECT {_TASK_COLUMNS} FROM a2a_tasks WHERE tenant = $1 AND id = $2", key.tenant, key.id
            )
        return None if row is None else _task_record(row)

    async def list_tasks(self, tenant: str, query: ListQuery) -> ListPage:
        where = ["tenant = $1"]
        values: list[Any] = [tenant]
        if query.context_id is not None:
            values.append(query.context_id)
            where.append(f"context_id = ${len(values)}")
        if query.state is not None:
            values.append(query.state.value)
            where.append(f"state = ${len(values)}")
        if query.status_after_ms is not None:
            values.append(query.status_after_ms)
            where.append(f"status_ts_ms >= ${len(values)}")
        filtered = " AND ".join(where)
        page_values = list(values)
        paged = filtered
        if query.after is not None:
            page_values += [query.after[0], query.after[1]]
            n = len(page_values)
            paged += f" AND (status_ts_ms, id) < (${n - 1}, ${n})"
        size = max(0, query.page_size)
        page_values.append(size + 1)
        async with self._connection() as connection:
            total = await connection.fetchval(f"SELECT COUNT(*) FROM a2a_tasks WHERE {filtered}", *values)
            rows = await connection.fetch(
                f"SELECT status_ts_ms, {_TASK_COLUMNS} FROM a2a_tasks WHERE {paged}"
                f" ORDER BY status_ts_ms DESC, id DESC LIMIT ${len(page_values)}",
                *page_values,
            )
        more = len(rows) > size
        rows = rows[:size]
        cursor = (rows[-1][0], rows[-1][2]) if more and rows else None
        return ListPage([_task_record(row[1:]) for row in rows], int(total), cursor)

    async def read_events(self, key: TaskKey, after: int, limit: int) -> EventPage:
        # One statement: one snapshot of the task's last number and its log.
        async with self._connection() as connection:
            rows = await connection.fetch(
                "SELECT t.last_seq, (SELECT MIN(seq) FROM a2a_events WHERE tenant = $1 AND task_id = $2),"
                " e.seq, e.last, e.body FROM a2a_tasks t LEFT JOIN LATERAL (SELECT seq, last, body FROM a2a_events"
                " WHERE tenant = $1 AND task_id = $2 AND seq > $3 ORDER BY seq LIMIT $4) e ON TRUE"
                " WHERE t.tenant = $1 AND t.id = $2 ORDER BY e.seq",
                key.tenant,
                key.id,
                after,
                max(0, limit),
            )
        if not rows:
            raise TaskNotFound(f"task {key.id!r} not found")
        events = [EventRecord(row[2], decode("StreamResponse", row[4]), row[3]) for row in rows if row[2] is not None]
        return EventPage(events, rows[0][1] or 0, rows[0][0])

    async def put_push_config(self, record: PushConfigRecord) -> None:
        key = record.key
        async with self._connection() as connection:
            # The task's row is locked (KEY SHARE by the foreign key) while the row goes in.
            inserted = await connection.fetchval(
                "INSERT INTO a2a_push_configs (tenant, task_id, id, body) SELECT tenant, id, $3, $4 FROM a2a_tasks"
                " WHERE tenant = $1 AND id = $2 ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body"
                " RETURNING 1",
                key.tenant,
                key.id,
                record.id,
                encode(record.config),
            )
        if inserted is None:
            raise TaskNotFound(f"task {key.id!r} not found")

    async def get_push_config(self, key: TaskKey, config_id: str) -> PushConfigRecord | None:
        async with self._connection() as connection:
            body = await connection.fetchval(
                "SELECT body FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3",
                key.tenant,
                key.id,
                config_id,
            )
        return None if body is None else PushConfigRecord(key, decode("TaskPushNotificationConfig", body))

    async def list_push_configs(self, key: TaskKey, after: str | None, limit: int) -> list[PushConfigRecord]:
        async with self._connection() as connection:
            rows = await connection.fetch(
                "SELECT body FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND ($3::TEXT IS NULL OR id > $3)"
                " ORDER BY id LIMIT $4",
                key.tenant,
                key.id,
                after,
                max(0, limit),
            )
        return [PushConfigRecord(key, decode("TaskPushNotificationConfig", row[0])) for row in rows]

    async def delete_push_config(self, key: TaskKey, config_id: str) -> bool:
        async with self._connection() as connection, connection.transaction():
            removed = await connection.fetchval(
                "WITH gone AS (DELETE FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3 RETURNING 1)"
                " SELECT COUNT(*) FROM gone",
                key.tenant,
                key.id,
                config_id,
            )
            await connection.execute(
                "DELETE FROM a2a_outbox WHERE tenant = $1 AND task_id = $2 AND config_id = $3",
                key.tenant,
                key.id,
                config_id,
            )
        return bool(removed)

    async def renew_leases(self, owner: str, keys: Sequence[TaskKey], until_ms: int) -> int:
        if not keys:
            return 0
        async with self._connection() as connection:
            status = await connection.execute(
                "WITH locked AS (SELECT t.tenant, t.id FROM a2a_tasks t"
                " JOIN UNNEST($3::TEXT[], $4::TEXT[]) AS k (tenant, id) ON t.tenant = k.tenant AND t.id = k.id"
                " WHERE NOT t.terminal ORDER BY t.tenant, t.id FOR UPDATE OF t)"
                " UPDATE a2a_tasks t SET lease_owner = $1, lease_until_ms = $2"
                " FROM locked l WHERE t.tenant = l.tenant AND t.id = l.id",
                owner,
                until_ms,
                [key.tenant for key in keys],
                [key.id for key in keys],
            )
        return _count(status)

    async def release_lease(self, key: TaskKey, owner: str) -> bool:
        async with self._connection() as connection:
            status = await connection.execute(
                "UPDATE a2a_tasks SET lease_owner = NULL, lease_until_ms = NULL"
                " WHERE tenant = $1 AND id = $2 AND lease_owner = $3 AND lease_until_ms IS NOT NULL",
                key.tenant,
                key.id,
                owner,
            )
        return _count(status) > 0

    async def expired_leases(self, now_ms: int, limit: int) -> list[TaskKey]:
        async with self._connection() as connection:
            rows = await connection.fetch(
                "SELECT tenant, id FROM a2a_tasks WHERE lease_until_ms IS NOT NULL AND lease_until_ms < $1"
                " ORDER BY lease_until_ms, tenant, id LIMIT $2",
                now_ms,
                max(0, limit),
            )
        return [TaskKey(row[0], row[1]) for row in rows]

    async def claim_deliveries(self, now_ms: int, limit: int, lease_ms: int) -> list[Delivery]:
        async with self._connection() as connection:
            rows = await connection.fetch(
                "WITH due AS (SELECT id FROM a2a_outbox WHERE due_ms <= $1 AND lease_until_ms <= $1"
                " ORDER BY due_ms, id LIMIT $2 FOR UPDATE SKIP LOCKED),"
                " claimed AS (UPDATE a2a_outbox o SET lease_until_ms = $3 FROM due WHERE o.id = due.id RETURNING o.*)"
                " SELECT c.id, c.tenant, c.task_id, c.seq, c.attempts, p.body, e.body FROM claimed c"
                " JOIN a2a_push_configs p ON p.tenant = c.tenant AND p.task_id = c.task_id AND p.id = c.config_id"
                " JOIN a2a_events e ON e.tenant = c.tenant AND e.task_id = c.task_id AND e.seq = c.seq"
                " ORDER BY c.due_ms, c.id",
                now_ms,
                max(0, limit),
                now_ms + lease_ms,
            )
        return [
            Delivery(
                row[0],
                TaskKey(row[1], row[2]),
                decode("TaskPushNotificationConfig", row[5]),
                row[3],
                decode("StreamResponse", row[6]),
                row[4],
            )
            for row in rows
        ]

    async def finish_delivery(self, delivery_id: int, retry_at_ms: int | None) -> None:
        async with self._connection() as connection:
            if retry_at_ms is None:
                await connection.execute("DELETE FROM a2a_outbox WHERE id = $1", delivery_id)
            else:
                await connection.execute(
                    "UPDATE a2a_outbox SET attempts = attempts + 1, due_ms = $2, lease_until_ms = 0 WHERE id = $1",
                    delivery_id,
                    retry_at_ms,
                )

    async def purge_terminal(self, before_ms: int, limit: int = 500) -> int:
        """Retention: deletes up to `limit` tasks in a terminal state whose status time is
        before `before_ms`, with their events, push configs and queued deliveries; returns
        how many. Call it again while it returns `limit`. Concurrent purges (several
        replicas) split the work (`SKIP LOCKED`)."""
        async with self._connection() as connection:
            status = await connection.execute(
                "WITH doomed AS (SELECT tenant, id FROM a2a_tasks WHERE terminal AND status_ts_ms < $1"
                " ORDER BY status_ts_ms LIMIT $2 FOR UPDATE SKIP LOCKED)"
                " DELETE FROM a2a_tasks t USING doomed d WHERE t.tenant = d.tenant AND t.id = d.id",
                before_ms,
                max(0, limit),
            )
        return _count(status)

    async def notify_control(self, payload: str) -> None:
        """Sends `payload` on `CONTROL_CHANNEL` at once, to every replica listening."""
        if len(payload.encode()) > MAX_PAYLOAD:
            raise StoreError(f"postgres: a control payload of {len(payload.encode())} bytes is too long")
        async with self._connection() as connection:
            await connection.execute("SELECT pg_notify($1, $2)", CONTROL_CHANNEL, payload)

    async def close(self) -> None:
        """Closes every connection (waiting for the calls that hold one)."""
        if self._closed:
            return
        self._closed = True
        await self._pool.close()


_SETTINGS = {"application_name": "agentproto-a2a-py"}

_TASK_COLUMNS = "tenant, id, version, last_seq, lease_owner, lease_until_ms, body"


def _task_record(row: Sequence[Any]) -> TaskRecord:
    tenant, id, version, last_seq, lease_owner, lease_until_ms, body = row
    lease = None if lease_owner is None or lease_until_ms is None else TurnLease(lease_owner, lease_until_ms)
    return TaskRecord(TaskKey(tenant, id), decode("Task", body), version, last_seq, lease)


def _count(status: str) -> int:
    """The row count of a command tag (`UPDATE 3`, `DELETE 0`)."""
    try:
        return int(status.rsplit(" ", 1)[-1])
    except ValueError:
        return 0


_NOTICE = (
    "(SELECT pg_notify('" + NOTIFY_CHANNEL + "', CASE WHEN octet_length($1) + octet_length($2) < 7900"
    " THEN json_build_object('tenant', $1::TEXT, 'id', $2::TEXT, 'last_seq', t.base + $12)"
    " ELSE json_build_object('tenant', NULL, 'id', NULL, 'last_seq', t.base + $12) END::TEXT) FROM t WHERE $12 > 0)"
)
"""The notice of a commit with events, built where the task's last number is known:
`{"tenant": …, "id": …, "last_seq": N}`, the Rust store's payload; a key too long for a
payload (8,000 bytes) names no task (`null`s): a listener then re-reads every task it follows."""

_EVENTS = (
    "INSERT INTO a2a_events (tenant, task_id, seq, body, last) SELECT $1, $2, t.base + e.n, e.body, e.last"
    " FROM t, UNNEST($13::BYTEA[], $14::BOOLEAN[]) WITH ORDINALITY AS e (body, last, n)"
)

_CREATE = (
    "WITH t AS (INSERT INTO a2a_tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, last_seq,"
    " body, lease_owner, lease_until_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $12, $8, $9, $10)"
    " ON CONFLICT (tenant, id) DO NOTHING RETURNING 0::BIGINT AS base, $11::BOOLEAN AS unused),"
    f" ev AS ({_EVENTS}), nt AS {_NOTICE}"
    " SELECT t.base, (SELECT COUNT(*) FROM nt) FROM t"
)
"""A create in one statement: the row (or nothing, when the key is taken), its events, the
notice. It takes the update's parameters; `$11` (whether the lease changes) is only typed."""

_UPDATE = (
    "WITH t AS (UPDATE a2a_tasks SET context_id = $3, state = $4, terminal = $5, status_ts_ms = $6,"
    " version = version + 1, last_seq = last_seq + $12, body = $8,"
    " lease_owner = CASE WHEN $11 THEN $9 ELSE lease_owner END,"
    " lease_until_ms = CASE WHEN $11 THEN $10 ELSE lease_until_ms END"
    " WHERE tenant = $1 AND id = $2 AND version = $7 - 1"
    " AND ($15::BIGINT IS NULL OR lease_until_ms < $15) RETURNING last_seq - $12 AS base),"
    f" ev AS ({_EVENTS}),"
    " ob AS (INSERT INTO a2a_outbox (tenant, task_id, config_id, seq, due_ms)"
    " SELECT p.tenant, p.task_id, p.id, t.base + s.n, 0 FROM t, a2a_push_configs p, generate_series(1, $12) AS s (n)"
    " WHERE p.tenant = $1 AND p.task_id = $2 ORDER BY s.n, p.id),"
    f" nt AS {_NOTICE}"
    " SELECT t.base, (SELECT COUNT(*) FROM nt) FROM t"
)
"""An update in one statement, applied only to the expected version: the row, its events,
the outbox (each event once per config, due at once: due time 0, as SQLite writes it), and
the notice. A concurrent update of the row makes this one wait, then find the version
changed and update nothing."""


async def _commit(
    connection: Any, commit: Commit, body: bytes, bodies: list[bytes], lease_expired_before: int | None
) -> Committed:
    """One commit as one statement (atomic on its own; one round trip): the version check
    is the `WHERE` of the update (or the primary key of the create)."""
    key = commit.key
    task = commit.task
    state = task.status.state
    lease = commit.lease_value if commit.lease == "set" else None
    version = 1 if commit.expected_version is None else commit.expected_version + 1
    values = (
        key.tenant,
        key.id,
        task.context_id,
        getattr(state, "value", str(state)),
        state in TERMINAL_STATES,
        status_ms(task),
        version,
        body,
        None if lease is None else lease.owner,
        None if lease is None else lease.until_ms,
        commit.lease != "keep",
        len(bodies),
        bodies,
        [last for _, last in commit.events],
    )
    if commit.expected_version is None:
        row = await connection.fetchrow(_CREATE, *values)
    else:
        row = await connection.fetchrow(_UPDATE, *values, lease_expired_before)
    if row is None:
        if commit.expected_version is None:
            raise TaskExists(f"task {key.id!r} already exists")
        found = await connection.fetchval(
            "SELECT version FROM a2a_tasks WHERE tenant = $1 AND id = $2", key.tenant, key.id
        )
        if found is None:
            raise TaskNotFound(f"task {key.id!r} not found")
        if found == commit.expected_version:
            raise Conflict(f"task {key.id!r}: its turn's lease was renewed")
        raise Conflict(
            f"task {key.id!r} changed concurrently (expected version {commit.expected_version}, found {found})"
        )
    base = int(row[0])
    return Committed(version, [EventRecord(base + i + 1, event, last) for i, (event, last) in enumerate(commit.events)])
