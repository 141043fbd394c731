//! The schema, its migrations and the settings every connection gets.

use super::*;

/// The schema version this build writes.
pub(super) const SCHEMA_VERSION: i64 = 2;

/// `MIGRATIONS[n]` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [SCHEMA_V1, SCHEMA_V2];

/// How long a connection waits for another connection's lock before failing.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements each connection keeps.
const STATEMENT_CACHE: usize = 64;

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

/// Version 2: turn leases, and the indexes retention deletes by. A task that was
/// SUBMITTED or WORKING when the database was last written by a build without leases
/// had a turn running then, which no process runs now: it gets a lease that has already
/// expired (owner `""`), so the first sweep ends it. (The state names are the stored
/// column, not parsed JSON.)
pub(super) const SCHEMA_V2: &str = "
ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
ALTER TABLE tasks ADD COLUMN lease_until_ms INTEGER;
UPDATE tasks SET lease_owner = '', lease_until_ms = 0
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
CREATE INDEX tasks_by_lease ON tasks (lease_until_ms) WHERE lease_until_ms IS NOT NULL;
CREATE INDEX tasks_terminal_by_age ON tasks (status_ts_ms) WHERE terminal = 1;
CREATE INDEX idempotency_by_age ON idempotency (created_ms);
CREATE INDEX dead_letters_by_age ON dead_letters (at_ms);
";

/// The write-ahead log is cut back to this size after a checkpoint, so a burst of
/// writes does not leave a large log file behind.
pub(super) const JOURNAL_SIZE_LIMIT: i64 = 64 << 20;

pub(super) fn configure(connection: &Connection, reader: bool) -> Result<(), StoreError> {
    connection.busy_timeout(BUSY_TIMEOUT).map_err(|e| backend("set busy_timeout", e))?;
    connection.pragma_update(None, "foreign_keys", "ON").map_err(|e| backend("enable foreign keys", e))?;
    // Room for every statement the store prepares with `prepare_cached` (rusqlite keeps
    // 16 by default; the writer uses about 20), so that none is parsed again per use.
    connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
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
    // The statement journal of each commit's savepoint, and any sort, stay in memory
    // instead of a temporary file.
    connection.pragma_update(None, "temp_store", "MEMORY").map_err(|e| backend("set temp_store", e))?;
    connection
        .pragma_update(None, "journal_size_limit", JOURNAL_SIZE_LIMIT)
        .map_err(|e| backend("set journal_size_limit", e))?;
    Ok(())
}

pub(super) fn migrate(connection: &Connection) -> Result<(), StoreError> {
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(|e| backend("read user_version", e))?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::Backend(format!(
            "sqlite schema version {version} is newer than this build's ({SCHEMA_VERSION})"
        )));
    }
    let from = usize::try_from(version)
        .map_err(|_| StoreError::Backend(format!("sqlite schema version {version} is not a version")))?;
    // One transaction for every step: a crash halfway leaves the database as it was.
    let steps: String = MIGRATIONS[from..].concat();
    let script = format!("BEGIN IMMEDIATE;\n{steps}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;");
    connection.execute_batch(&script).map_err(|e| {
        let _ = connection.execute_batch("ROLLBACK");
        backend(&format!("migrate schema from version {version}"), e)
    })
}
