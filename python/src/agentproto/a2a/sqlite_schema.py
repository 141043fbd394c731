"""The schema of the SQLite A2A store, its migrations, and the settings of its
connections (see `agentproto.a2a.sqlite_store`).

**One schema for every language.** The migrations are those of the Rust and TypeScript
SQLite stores: they live once, in `rules/store/sqlite/`, and `make codegen` writes them
into `agentproto.a2a.generated.store_schema`, which this module runs. So a file written
by a server in any of the three languages opens in the others. `PRAGMA user_version`
holds the schema version: 0 is an empty file, `SCHEMA_VERSION` is what this build writes.
Opening a file runs every missing step in one transaction (a crash halfway leaves the
file as it was) and refuses a file newer than this build, or one written by the
pre-release Python or TypeScript stores (their own layouts, never released), rather
than misread it. Values are stored as their canonical A2A JSON (`agentproto.a2a.encode`);
the columns beside them are what the queries filter and order by. Tables this store does
not use yet (`dead_letters`, `idempotency`) exist all the same.
"""

from __future__ import annotations

import sqlite3

from agentproto.a2a.generated.store_schema import SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION
from agentproto.a2a.store import StoreError

__all__ = ["SCHEMA_VERSION", "connect", "migrate"]

SCHEMA_VERSION = SQLITE_SCHEMA_VERSION
"""The schema version this build writes; `SQLITE_MIGRATIONS[n]` takes a file from version
`n` to `n + 1`."""

BUSY_TIMEOUT_S = 5.0
"""How long a connection waits for another connection's lock before failing."""


def connect(path: str, *, reader: bool) -> sqlite3.Connection:
    """A connection to `path` with the store's settings: autocommit mode (the store
    begins its own transactions), foreign keys on; the writer turns on WAL and
    `synchronous=FULL` (a commit is fsynced before it returns); readers are query-only."""
    try:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as e:
        raise StoreError(f"sqlite: cannot open {path!r}: {e}") from e
    try:
        connection.execute("PRAGMA foreign_keys = ON")
        if reader:
            connection.execute("PRAGMA query_only = ON")
            return connection
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() not in ("wal", "memory"):
            raise StoreError(f"sqlite refused WAL mode (journal_mode is {mode!r})")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA temp_store = MEMORY")
    except sqlite3.Error as e:
        connection.close()
        raise StoreError(f"sqlite: cannot configure {path!r}: {e}") from e
    except StoreError:
        connection.close()
        raise
    return connection


def migrate(connection: sqlite3.Connection) -> None:
    """Brings the schema to `SCHEMA_VERSION` (see the module documentation)."""
    try:
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error as e:
        raise StoreError(f"sqlite: cannot read the schema version: {e}") from e
    if version == SCHEMA_VERSION:
        _refuse_pre_release(connection, version)
        return
    if version > SCHEMA_VERSION:
        raise StoreError(f"sqlite schema version {version} is newer than this build's ({SCHEMA_VERSION})")
    _refuse_pre_release(connection, version)
    steps = "".join(SQLITE_MIGRATIONS[version:])
    try:
        connection.executescript(f"BEGIN IMMEDIATE;\n{steps}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;")
    except sqlite3.Error as e:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise StoreError(f"sqlite: cannot migrate the schema from version {version}: {e}") from e


def _refuse_pre_release(connection: sqlite3.Connection, version: int) -> None:
    """Refuses a file in a layout of the pre-release Python or TypeScript stores, whose
    version numbers overlap the shared ones: Python's kept the status time in
    `tasks.status_ms`; TypeScript's version 1 already had the lease columns of version 2."""
    try:
        columns = {row[1] for row in connection.execute("PRAGMA table_info(tasks)")}
    except sqlite3.Error as e:
        raise StoreError(f"sqlite: cannot read the tasks table's columns: {e}") from e
    if "status_ms" in columns:
        raise StoreError(
            f"sqlite: this file was written by a pre-release Python store (schema version {version} with"
            " tasks.status_ms), a layout no release reads; start from a new file"
        )
    if version == 1 and "lease_owner" in columns:
        raise StoreError(
            "sqlite: this file was written by a pre-release TypeScript store (schema version 1 with"
            " tasks.lease_owner), a layout no release reads; start from a new file"
        )
