"""The schema of the PostgreSQL A2A store and its migrations (see
`agentproto.a2a.postgres_store`).

**The Rust store's schema, exactly.** The tables, columns, indexes, the version table
(`a2a_schema`) and the advisory lock migrations run under are those of the Rust
PostgreSQL store (`crates/a2a/src/store/postgres/schema.rs`), so Python and Rust server
processes can share one database: each reads what the other writes, sees the same schema
version, and migrates under the same lock. Tables the Python store does not use yet
(`a2a_dead_letters`, `a2a_idempotency`) exist all the same. `make codegen` does not make
this file: a change to the schema is made in both, and `tests/a2a/test_postgres_store.py`
checks that the migration scripts here are the Rust ones, byte for byte.
"""

from __future__ import annotations

from typing import Any

from agentproto.a2a.store import StoreError

__all__ = ["MIGRATION_LOCK", "SCHEMA_VERSION", "migrate"]

MIGRATION_LOCK = 0x6132_6173_6368_656D
"""The advisory lock migrations run under ("a2aschem" in ASCII)."""

_V1 = """
CREATE TABLE a2a_tasks (
    tenant TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    context_id TEXT COLLATE "C" NOT NULL,
    state TEXT COLLATE "C" NOT NULL,
    terminal BOOLEAN NOT NULL,
    status_ts_ms BIGINT NOT NULL,
    version BIGINT NOT NULL,
    last_seq BIGINT NOT NULL DEFAULT 0,
    body BYTEA NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX a2a_tasks_by_status_ts ON a2a_tasks (tenant, status_ts_ms DESC, id DESC);
CREATE INDEX a2a_tasks_by_context ON a2a_tasks (tenant, context_id, status_ts_ms DESC, id DESC);
CREATE TABLE a2a_events (
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    body BYTEA NOT NULL,
    last BOOLEAN NOT NULL,
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE a2a_push_configs (
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    body BYTEA NOT NULL,
    PRIMARY KEY (tenant, task_id, id),
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE a2a_outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    config_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    due_ms BIGINT NOT NULL,
    lease_until_ms BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE INDEX a2a_outbox_by_due ON a2a_outbox (due_ms);
CREATE INDEX a2a_outbox_by_task ON a2a_outbox (tenant, task_id);
CREATE TABLE a2a_dead_letters (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id BIGINT NOT NULL,
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    config_id TEXT COLLATE "C" NOT NULL,
    config BYTEA NOT NULL,
    seq BIGINT NOT NULL,
    event BYTEA NOT NULL,
    attempts BIGINT NOT NULL,
    error TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);
CREATE TABLE a2a_idempotency (
    tenant TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT NOT NULL,
    result BYTEA,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant, key)
);
"""
"""Version 1. Key columns are `COLLATE "C"`: ids compare byte by byte, as the other
stores compare them, so lists come in the same order with the same cursors."""

_V2 = """
ALTER TABLE a2a_tasks ADD COLUMN lease_owner TEXT COLLATE "C", ADD COLUMN lease_until_ms BIGINT;
UPDATE a2a_tasks SET lease_owner = '', lease_until_ms = 0
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
CREATE INDEX a2a_tasks_by_lease ON a2a_tasks (lease_until_ms) WHERE lease_until_ms IS NOT NULL;
CREATE INDEX a2a_tasks_terminal_by_age ON a2a_tasks (status_ts_ms) WHERE terminal;
CREATE INDEX a2a_idempotency_by_age ON a2a_idempotency (created_ms);
CREATE INDEX a2a_dead_letters_by_age ON a2a_dead_letters (at_ms);
"""
"""Version 2: turn leases, and the indexes retention deletes by. Tasks that were live
before leases existed get a lease that has already ended, so the first sweep ends them."""

MIGRATIONS = (_V1, _V2)
"""`MIGRATIONS[n]` takes the schema from version `n` to `n + 1`."""

SCHEMA_VERSION = len(MIGRATIONS)


async def migrate(connection: Any) -> None:
    """Brings the database to `SCHEMA_VERSION` in one transaction under the advisory
    lock (two processes starting at once migrate once); refuses a newer schema.

    Raises:
        StoreError: the database refused, or holds a newer schema.
    """
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        await connection.execute("CREATE TABLE IF NOT EXISTS a2a_schema (version BIGINT NOT NULL)")
        found = await connection.fetchval("SELECT version FROM a2a_schema")
        start = 0 if found is None else int(found)
        if start > SCHEMA_VERSION:
            raise StoreError(f"postgres schema version {start} is newer than this build's ({SCHEMA_VERSION})")
        if start < 0:
            raise StoreError(f"postgres schema version {start} is not a version")
        if start == SCHEMA_VERSION:
            return
        for script in MIGRATIONS[start:]:
            await connection.execute(script)
        if found is None:
            await connection.execute("INSERT INTO a2a_schema (version) VALUES ($1)", SCHEMA_VERSION)
        else:
            await connection.execute("UPDATE a2a_schema SET version = $1", SCHEMA_VERSION)
