//! The schema, its migrations and the settings every connection gets.

use super::*;

#[cfg(test)]
pub(super) use crate::generated::store_schema::sqlite::V1 as SCHEMA_V1;
/// The schema version this build writes, and `MIGRATIONS[n]`, which takes the schema from
/// version `n` to `n + 1`: generated from `rules/store/sqlite/` (the Python and
/// TypeScript stores run the same scripts).
pub(super) use crate::generated::store_schema::sqlite::{MIGRATIONS, SCHEMA_VERSION};

/// How long a connection waits for another connection's lock before failing.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements each connection keeps.
const STATEMENT_CACHE: usize = 64;

/// Reader connections of a file database.
pub(super) const READERS: usize = 4;

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
