//! The schema, its migrations and the settings every connection gets.

use super::*;

/// The schema version this build writes.
pub(super) const SCHEMA_VERSION: i64 = 1;

/// How long a connection waits for another connection's lock before failing.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Reader connections of a file database.
pub(super) const READERS: usize = 4;

pub(super) const SCHEMA_V1: &str = "
CREATE TABLE tasks (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    terminal INTEGER NOT NULL,
    status_ts_ms INTEGER NOT NULL,
    version INTEGER NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0,
    body BLOB NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX tasks_by_status_ts ON tasks (tenant, status_ts_ms DESC, id DESC);
CREATE INDEX tasks_by_context ON tasks (tenant, context_id, status_ts_ms DESC, id DESC);
CREATE TABLE events (
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    last INTEGER NOT NULL,
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
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    due_ms INTEGER NOT NULL,
    lease_until_ms INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    FOREIGN KEY (tenant, task_id) REFERENCES tasks (tenant, id) ON DELETE CASCADE
);
CREATE INDEX outbox_by_due ON outbox (due_ms);
CREATE INDEX outbox_by_task ON outbox (tenant, task_id);
CREATE TABLE dead_letters (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    config BLOB NOT NULL,
    seq INTEGER NOT NULL,
    event BLOB NOT NULL,
    attempts INTEGER NOT NULL,
    error TEXT NOT NULL,
    at_ms INTEGER NOT NULL
);
CREATE TABLE idempotency (
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result BLOB,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (tenant, key)
);
";

pub(super) fn configure(connection: &Connection, reader: bool) -> Result<(), StoreError> {
    connection.busy_timeout(BUSY_TIMEOUT).map_err(|e| backend("set busy_timeout", e))?;
    connection.pragma_update(None, "foreign_keys", "ON").map_err(|e| backend("enable foreign keys", e))?;
    if reader {
        connection.pragma_update(None, "query_only", "ON").map_err(|e| backend("set query_only", e))?;
        return Ok(());
    }
    // An in-memory database answers "memory": there is no log to write ahead.
    let mode: String = connection
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(|e| backend("enable WAL", e))?;
    if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
        return Err(StoreError::Backend(format!("sqlite refused WAL mode (journal_mode is {mode:?})")));
    }
    connection.pragma_update(None, "synchronous", "FULL").map_err(|e| backend("set synchronous", e))?;
    Ok(())
}

pub(super) fn migrate(connection: &Connection) -> Result<(), StoreError> {
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| backend("read user_version", e))?;
    match version {
        SCHEMA_VERSION => Ok(()),
        0 => {
            // One transaction: a crash halfway leaves an empty database at version 0.
            let script = format!("BEGIN IMMEDIATE;\n{SCHEMA_V1}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;");
            connection.execute_batch(&script).map_err(|e| {
                let _ = connection.execute_batch("ROLLBACK");
                backend("create schema", e)
            })
        }
        newer => Err(StoreError::Backend(format!(
            "sqlite schema version {newer} is newer than this build's ({SCHEMA_VERSION})"
        ))),
    }
}
