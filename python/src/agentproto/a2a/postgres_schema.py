"""The schema of the PostgreSQL A2A store and its migrations (see
`agentproto.a2a.postgres_store`).

**One schema for every language.** The tables, columns, indexes, the version table
(`a2a_schema`) and the advisory lock migrations run under are those of the Rust
PostgreSQL store: the scripts live once, in `rules/store/postgres/`, and `make codegen`
writes them into `agentproto.a2a.generated.store_schema`, which this module runs. So
Python and Rust server processes can share one database: each reads what the other
writes, sees the same schema version, and migrates under the same lock. Tables the
Python store does not use yet (`a2a_dead_letters`, `a2a_idempotency`) exist all the same.
"""

from __future__ import annotations

from typing import Any

from agentproto.a2a.generated.store_schema import (
    POSTGRES_MIGRATION_LOCK,
    POSTGRES_MIGRATIONS,
    POSTGRES_SCHEMA_VERSION,
)
from agentproto.a2a.store import StoreError

__all__ = ["MIGRATION_LOCK", "SCHEMA_VERSION", "migrate"]

MIGRATION_LOCK = POSTGRES_MIGRATION_LOCK
"""The advisory lock migrations run under ("a2aschem" in ASCII)."""

MIGRATIONS = POSTGRES_MIGRATIONS
"""`MIGRATIONS[n]` takes the schema from version `n` to `n + 1`."""

SCHEMA_VERSION = POSTGRES_SCHEMA_VERSION


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
