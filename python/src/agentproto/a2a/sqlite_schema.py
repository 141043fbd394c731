"""The schema of the SQLite A2A store, its migrations, and the settings of its
connections (see `agentproto.a2a.sqlite_store`).

`PRAGMA user_version` holds the schema version: 0 is an empty file, `SCHEMA_VERSION` is
what this build writes. Opening a file runs every missing step in one transaction (a
crash halfway leaves the file as it was) and refuses a file newer than this build.
Values are stored as their canonical A2A JSON (`agentproto.a2a.encode`); the columns
beside them are what the queries filter and order by.
"""

from __future__ import annotations

import sqlite3

from agentproto.a2a.store import StoreError

__all__ = ["SCHEMA_VERSION", "connect", "migrate"]

_V1 = """
CREATE TABLE tasks (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    terminal INTEGER NOT NULL,
    status_ms INTEGER NOT NULL,
    version INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until_ms INTEGER,
    body BLOB NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX tasks_by_status ON tasks (tenant, status_ms DESC, id DESC);
CREATE INDEX tasks_by_context ON tasks (tenant, context_id, status_ms DESC, id DESC);
CREATE INDEX tasks_by_lease ON tasks (lease_until_ms) WHERE lease_until_ms IS NOT NULL;
CREATE TABLE events (
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    last INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE push_configs (
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (tenant, task_id, id),
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
"""

_V2 = """
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    due_ms INTEGER NOT NULL DEFAULT 0,
    lease_until_ms INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
CREATE INDEX outbox_by_due ON outbox (due_ms, id);
CREATE INDEX outbox_by_config ON outbox (tenant, task_id, config_id);
CREATE INDEX tasks_terminal_by_age ON tasks (status_ms) WHERE terminal = 1;
"""
"""Version 2: the outbox of push deliveries (one row per event and config), and the index
retention deletes by."""

_MIGRATIONS = (_V1, _V2)
"""`_MIGRATIONS[n]` takes the schema from version `n` to `n + 1`."""

SCHEMA_VERSION = len(_MIGRATIONS)

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
        return
    if version > SCHEMA_VERSION:
        raise StoreError(f"sqlite schema version {version} is newer than this build's ({SCHEMA_VERSION})")
    steps = "".join(_MIGRATIONS[version:])
    try:
        connection.executescript(f"BEGIN IMMEDIATE;\n{steps}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;")
    except sqlite3.Error as e:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise StoreError(f"sqlite: cannot migrate the schema from version {version}: {e}") from e
