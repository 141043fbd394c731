//! The SQLite store, the default one.
//!
//! **Durability.** The database runs in WAL mode with `synchronous=FULL`: a commit is
//! written to the write-ahead log and the log is fsynced before [`Store::commit`]
//! returns, so an acknowledged commit survives a SIGKILL of the process (and a power
//! loss). `busy_timeout` makes a writer wait for another process's write lock instead
//! of failing at once, and foreign keys are on, so that deleting a task removes its
//! events, push configs and queued deliveries with it.
//!
//! **Blocking.** rusqlite is synchronous, so every call runs on
//! [`tokio::task::spawn_blocking`] and never on an async worker thread. A file database
//! has one writer connection and a few reader connections, each behind a
//! [`std::sync::Mutex`]: SQLite admits one writer at a time anyway, and in WAL mode the
//! readers see the last commit without waiting for a write in progress, so a long list
//! or replay never holds up a commit. An in-memory database has a single connection
//! (separate connections would be separate databases).
//! A future dropped after its blocking call started does not stop that call: a cancelled
//! commit may still be stored, so a writer should publish what a commit returns and not
//! cancel commits it has started.
//!
//! **Schema.** `PRAGMA user_version` holds the schema version; [`SqliteStore::open`]
//! migrates from 0 (an empty file) to 1 in one transaction and refuses a newer version.
//!
//! **PostgreSQL.** The SQL is kept portable where that costs nothing (`ON CONFLICT DO
//! NOTHING`, `RETURNING`, explicit column lists, no SQLite-only functions in the
//! queries). A PostgreSQL store for several server processes will differ in these
//! places:
//! - `INTEGER PRIMARY KEY` becomes `BIGINT GENERATED ALWAYS AS IDENTITY`, `BLOB`
//!   becomes `BYTEA`, booleans are `BOOLEAN` rather than 0/1;
//! - ids are compared byte-wise here (SQLite's default `BINARY` collation); PostgreSQL
//!   needs `COLLATE "C"` on the id columns for the same list order and cursors;
//! - `BEGIN IMMEDIATE` has no equivalent: a commit reads the task with
//!   `SELECT … FOR UPDATE` (the update also repeats `WHERE version = $expected`, which
//!   is what keeps a concurrent writer out under READ COMMITTED);
//! - claiming deliveries becomes one `UPDATE outbox … WHERE id IN (SELECT id … FOR
//!   UPDATE SKIP LOCKED) RETURNING …`, so that several workers never wait on each other;
//! - `MAX(a, b)` of two columns is `GREATEST(a, b)`;
//! - the commit also issues `NOTIFY` so that the event bus of other processes learns of
//!   new events (see `crate::stream::EventBus`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, TransactionBehavior};

use super::{
    BoxFuture, Commit, Committed, DeadLetter, Delivery, EventPage, EventRecord, IdempotencyClaim, ListPage, ListQuery,
    PushConfigRecord, Store, StoreError, TaskKey, TaskRecord,
};

/// The schema version this build writes.
const SCHEMA_VERSION: i64 = 1;

/// How long a connection waits for another connection's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Reader connections of a file database.
const READERS: usize = 4;

const SCHEMA_V1: &str = "
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

/// The store on one SQLite database (a file, or memory for tests).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: Arc<Pool>,
}

#[derive(Debug)]
struct Pool {
    writer: Mutex<Connection>,
    /// Empty for an in-memory database: reads then go to the writer.
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
}

/// Which connection a call needs.
#[derive(Clone, Copy)]
enum Access {
    Read,
    Write,
}

fn backend(context: &str, error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("sqlite {context}: {error}"))
}

fn to_i64(value: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::Backend(format!("{what} {value} is out of range")))
}

fn to_u64(value: i64, what: &str) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::Backend(format!("stored {what} {value} is negative")))
}

fn limit_i64(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

impl SqliteStore {
    /// Opens (creating it if needed) the database at `path` and migrates it to the
    /// current schema. This blocks while it opens and migrates; call it before serving,
    /// or inside `spawn_blocking`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path: PathBuf = path.as_ref().to_owned();
        let writer = Connection::open(&path).map_err(|e| backend(&format!("open {}", path.display()), e))?;
        configure(&writer, false)?;
        migrate(&writer)?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            // Opened read-write (a read-only connection cannot always map the WAL index)
            // but set to query_only.
            let reader =
                Connection::open(&path).map_err(|e| backend(&format!("open {} for reading", path.display()), e))?;
            configure(&reader, true)?;
            readers.push(Mutex::new(reader));
        }
        Ok(SqliteStore {
            pool: Arc::new(Pool { writer: Mutex::new(writer), readers, next_reader: AtomicUsize::new(0) }),
        })
    }

    /// A fresh database in memory, gone when the store is dropped.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let writer = Connection::open_in_memory().map_err(|e| backend("open in memory", e))?;
        configure(&writer, false)?;
        migrate(&writer)?;
        Ok(SqliteStore {
            pool: Arc::new(Pool { writer: Mutex::new(writer), readers: Vec::new(), next_reader: AtomicUsize::new(0) }),
        })
    }

    /// Runs `work` on a blocking thread with a connection of the given kind.
    fn run<T, F>(&self, access: Access, work: F) -> BoxFuture<'_, Result<T, StoreError>>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let pool = Arc::clone(&self.pool);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || pool.with(access, work))
                .await
                .map_err(|e| StoreError::Backend(format!("sqlite worker thread failed: {e}")))?
        })
    }
}

impl Pool {
    fn with<T>(
        &self,
        access: Access,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        fn poisoned<G>(_: G) -> StoreError {
            StoreError::Backend("sqlite connection lock poisoned".into())
        }
        let connection = match access {
            Access::Read if !self.readers.is_empty() => {
                // A free reader if there is one, else wait for the next in turn.
                let free = self.readers.iter().find_map(|reader| reader.try_lock().ok());
                match free {
                    Some(guard) => guard,
                    None => {
                        let turn = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
                        self.readers[turn].lock().map_err(poisoned)?
                    }
                }
            }
            _ => self.writer.lock().map_err(poisoned)?,
        };
        let mut connection = connection;
        work(&mut connection)
    }
}

fn configure(connection: &Connection, reader: bool) -> Result<(), StoreError> {
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

fn migrate(connection: &Connection) -> Result<(), StoreError> {
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

const TASK_COLUMNS: &str = "tenant, id, context_id, state, terminal, status_ts_ms, version, body";

/// The columns of [`TASK_COLUMNS`], read as they are stored.
type TaskRow = (TaskKey, String, String, bool, i64, i64, Vec<u8>);

fn task_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRow> {
    Ok((
        TaskKey::new(row.get::<_, String>(0)?, row.get::<_, String>(1)?),
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
    ))
}

fn task_record(row: TaskRow) -> Result<TaskRecord, StoreError> {
    let (key, context_id, state, terminal, status_ts_ms, version, body) = row;
    Ok(TaskRecord { key, context_id, state, terminal, status_ts_ms, version: to_u64(version, "version")?, body })
}

fn commit_tx(connection: &mut Connection, commit: Commit) -> Result<Committed, StoreError> {
    let tx =
        connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| backend("begin commit", e))?;
    let key = commit.task.key.clone();
    let current: Option<(i64, i64)> = tx
        .query_row(
            "SELECT version, last_seq FROM tasks WHERE tenant = ?1 AND id = ?2",
            params![key.tenant, key.id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()
        .map_err(|e| backend("read task version", e))?;
    let record = &commit.task;
    let (version, last_seq) = match (current, commit.expected_version) {
        (Some(_), None) => return Err(StoreError::Exists(key)),
        (None, Some(_)) => return Err(StoreError::NotFound(key)),
        (Some((found, last_seq)), Some(expected)) => {
            let found = to_u64(found, "version")?;
            if found != expected {
                return Err(StoreError::Conflict { key, expected, found });
            }
            let version = expected.checked_add(1).ok_or_else(|| StoreError::Backend("task version overflow".into()))?;
            (version, to_u64(last_seq, "sequence number")?)
        }
        (None, None) => (1, 0),
    };
    let creating = current.is_none();
    let new_last_seq = last_seq + commit.events.len() as u64;
    let version_sql = to_i64(version, "version")?;
    let last_seq_sql = to_i64(new_last_seq, "sequence number")?;
    if creating {
        tx.execute(
            "INSERT INTO tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, last_seq, body) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                key.tenant,
                key.id,
                record.context_id,
                record.state,
                record.terminal,
                record.status_ts_ms,
                version_sql,
                last_seq_sql,
                record.body
            ],
        )
        .map_err(|e| backend("insert task", e))?;
    } else {
        let updated = tx
            .execute(
                "UPDATE tasks SET context_id = ?3, state = ?4, terminal = ?5, status_ts_ms = ?6, version = ?7, \
                 last_seq = ?8, body = ?9 WHERE tenant = ?1 AND id = ?2 AND version = ?10",
                params![
                    key.tenant,
                    key.id,
                    record.context_id,
                    record.state,
                    record.terminal,
                    record.status_ts_ms,
                    version_sql,
                    last_seq_sql,
                    record.body,
                    version_sql - 1
                ],
            )
            .map_err(|e| backend("update task", e))?;
        if updated != 1 {
            return Err(StoreError::Backend(format!("task {key:?} vanished during its commit")));
        }
    }

    let mut appended = Vec::with_capacity(commit.events.len());
    {
        let mut insert = tx
            .prepare_cached("INSERT INTO events (tenant, task_id, seq, body, last) VALUES (?1, ?2, ?3, ?4, ?5)")
            .map_err(|e| backend("prepare event insert", e))?;
        for (offset, (body, last)) in commit.events.into_iter().enumerate() {
            let seq = last_seq + offset as u64 + 1;
            insert
                .execute(params![key.tenant, key.id, to_i64(seq, "sequence number")?, body, last])
                .map_err(|e| backend("insert event", e))?;
            appended.push(EventRecord { seq, body, last });
        }
    }

    if commit.push && !appended.is_empty() {
        let config_ids: Vec<String> = {
            let mut select = tx
                .prepare_cached("SELECT id FROM push_configs WHERE tenant = ?1 AND task_id = ?2 ORDER BY id")
                .map_err(|e| backend("prepare push config query", e))?;
            let rows = select
                .query_map(params![key.tenant, key.id], |row| row.get(0))
                .map_err(|e| backend("read push configs", e))?;
            rows.collect::<Result<_, _>>().map_err(|e| backend("read push configs", e))?
        };
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO outbox (tenant, task_id, config_id, seq, attempts, due_ms, lease_until_ms) \
                 VALUES (?1, ?2, ?3, ?4, 0, 0, 0)",
            )
            .map_err(|e| backend("prepare outbox insert", e))?;
        for event in &appended {
            let seq = to_i64(event.seq, "sequence number")?;
            for config_id in &config_ids {
                insert
                    .execute(params![key.tenant, key.id, config_id, seq])
                    .map_err(|e| backend("queue delivery", e))?;
            }
        }
    }
    tx.commit().map_err(|e| backend("commit", e))?;
    Ok(Committed { version, events: appended })
}

fn list_tasks_tx(connection: &mut Connection, tenant: &str, query: &ListQuery) -> Result<ListPage, StoreError> {
    let tx = connection.transaction().map_err(|e| backend("begin read", e))?;
    let mut filter = String::from("tenant = ?");
    let mut values = vec![Value::Text(tenant.to_owned())];
    if let Some(context_id) = &query.context_id {
        filter.push_str(" AND context_id = ?");
        values.push(Value::Text(context_id.clone()));
    }
    if let Some(state) = &query.state {
        filter.push_str(" AND state = ?");
        values.push(Value::Text(state.clone()));
    }
    if let Some(after_ms) = query.status_after_ms {
        filter.push_str(" AND status_ts_ms >= ?");
        values.push(Value::Integer(after_ms));
    }
    let total: i64 = tx
        .query_row(&format!("SELECT COUNT(*) FROM tasks WHERE {filter}"), params_from_iter(values.iter()), |row| {
            row.get(0)
        })
        .map_err(|e| backend("count tasks", e))?;

    let mut tasks = Vec::new();
    let mut more = false;
    if query.page_size > 0 {
        let mut page_values = values;
        let mut page_filter = filter;
        if let Some((cursor_ts, cursor_id)) = &query.after {
            page_filter.push_str(" AND (status_ts_ms < ? OR (status_ts_ms = ? AND id < ?))");
            page_values.push(Value::Integer(*cursor_ts));
            page_values.push(Value::Integer(*cursor_ts));
            page_values.push(Value::Text(cursor_id.clone()));
        }
        // One row more than the page tells whether a next page exists.
        page_values.push(Value::Integer(limit_i64(query.page_size).saturating_add(1)));
        let sql =
            format!("SELECT {TASK_COLUMNS} FROM tasks WHERE {page_filter} ORDER BY status_ts_ms DESC, id DESC LIMIT ?");
        let mut select = tx.prepare(&sql).map_err(|e| backend("prepare task list", e))?;
        let rows = select
            .query_map(params_from_iter(page_values.iter()), task_from_row)
            .map_err(|e| backend("list tasks", e))?;
        for row in rows {
            let record = task_record(row.map_err(|e| backend("list tasks", e))?)?;
            if tasks.len() == query.page_size {
                more = true;
                break;
            }
            tasks.push(record);
        }
    }
    let next = match tasks.last() {
        Some(last) if more => Some((last.status_ts_ms, last.key.id.clone())),
        _ => None,
    };
    Ok(ListPage { tasks, total_size: to_u64(total, "count")?, next })
}

fn read_events_tx(
    connection: &mut Connection,
    key: &TaskKey,
    after: u64,
    limit: usize,
) -> Result<EventPage, StoreError> {
    let tx = connection.transaction().map_err(|e| backend("begin read", e))?;
    let last_written: Option<i64> = tx
        .query_row("SELECT last_seq FROM tasks WHERE tenant = ?1 AND id = ?2", params![key.tenant, key.id], |row| {
            row.get(0)
        })
        .optional()
        .map_err(|e| backend("read task", e))?;
    let Some(last_written) = last_written else { return Err(StoreError::NotFound(key.clone())) };
    let first_held: Option<i64> = tx
        .query_row(
            "SELECT MIN(seq) FROM events WHERE tenant = ?1 AND task_id = ?2",
            params![key.tenant, key.id],
            |row| row.get(0),
        )
        .map_err(|e| backend("read first event", e))?;
    let after_sql = i64::try_from(after).unwrap_or(i64::MAX);
    let mut select = tx
        .prepare_cached(
            "SELECT seq, body, last FROM events WHERE tenant = ?1 AND task_id = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4",
        )
        .map_err(|e| backend("prepare event read", e))?;
    let rows = select
        .query_map(params![key.tenant, key.id, after_sql, limit_i64(limit)], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, Vec<u8>>(1)?, row.get::<_, bool>(2)?))
        })
        .map_err(|e| backend("read events", e))?;
    let mut events = Vec::new();
    for row in rows {
        let (seq, body, last) = row.map_err(|e| backend("read events", e))?;
        events.push(EventRecord { seq: to_u64(seq, "sequence number")?, body, last });
    }
    Ok(EventPage {
        events,
        first_held: to_u64(first_held.unwrap_or(0), "sequence number")?,
        last_written: to_u64(last_written, "sequence number")?,
    })
}

fn claim_tx(
    connection: &mut Connection,
    now_ms: i64,
    lease_ms: i64,
    limit: usize,
) -> Result<Vec<Delivery>, StoreError> {
    let tx =
        connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| backend("begin claim", e))?;
    let candidates: Vec<i64> = {
        // Insertion order: a task's deliveries to one config go out in event order.
        let mut select = tx
            .prepare_cached("SELECT id FROM outbox WHERE due_ms <= ?1 AND lease_until_ms <= ?1 ORDER BY id LIMIT ?2")
            .map_err(|e| backend("prepare claim", e))?;
        let rows = select
            .query_map(params![now_ms, limit_i64(limit)], |row| row.get(0))
            .map_err(|e| backend("find due deliveries", e))?;
        rows.collect::<Result<_, _>>().map_err(|e| backend("find due deliveries", e))?
    };
    let mut claimed = Vec::with_capacity(candidates.len());
    {
        let mut read = tx
            .prepare_cached(
                "SELECT o.tenant, o.task_id, o.config_id, o.seq, o.attempts, p.body, e.body \
                 FROM outbox o \
                 LEFT JOIN push_configs p ON p.tenant = o.tenant AND p.task_id = o.task_id AND p.id = o.config_id \
                 LEFT JOIN events e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq \
                 WHERE o.id = ?1",
            )
            .map_err(|e| backend("prepare delivery read", e))?;
        let mut lease = tx
            .prepare_cached("UPDATE outbox SET lease_until_ms = ?2 WHERE id = ?1")
            .map_err(|e| backend("prepare lease", e))?;
        let mut drop_row =
            tx.prepare_cached("DELETE FROM outbox WHERE id = ?1").map_err(|e| backend("prepare delete", e))?;
        for id in candidates {
            type Row = (String, String, String, i64, i64, Option<Vec<u8>>, Option<Vec<u8>>);
            let row: Row = read
                .query_row(params![id], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?))
                })
                .map_err(|e| backend("read delivery", e))?;
            let (tenant, task_id, config_id, seq, attempts, config, event) = row;
            let (Some(config), Some(event)) = (config, event) else {
                // The config was deleted (or the event pruned) since it was queued.
                drop_row.execute(params![id]).map_err(|e| backend("drop orphaned delivery", e))?;
                continue;
            };
            lease.execute(params![id, now_ms.saturating_add(lease_ms)]).map_err(|e| backend("lease delivery", e))?;
            claimed.push(Delivery {
                id,
                task: TaskKey::new(tenant, task_id),
                config_id,
                config,
                seq: to_u64(seq, "sequence number")?,
                event,
                attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
            });
        }
    }
    tx.commit().map_err(|e| backend("commit claim", e))?;
    Ok(claimed)
}

fn dead_tx(connection: &mut Connection, id: i64, at_ms: i64, error: &str) -> Result<(), StoreError> {
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| backend("begin dead letter", e))?;
    tx.execute(
        "INSERT INTO dead_letters (delivery_id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms) \
         SELECT o.id, o.tenant, o.task_id, o.config_id, COALESCE(p.body, X''), o.seq, COALESCE(e.body, X''), \
                o.attempts + 1, ?2, ?3 \
         FROM outbox o \
         LEFT JOIN push_configs p ON p.tenant = o.tenant AND p.task_id = o.task_id AND p.id = o.config_id \
         LEFT JOIN events e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq \
         WHERE o.id = ?1",
        params![id, error, at_ms],
    )
    .map_err(|e| backend("insert dead letter", e))?;
    tx.execute("DELETE FROM outbox WHERE id = ?1", params![id]).map_err(|e| backend("delete delivery", e))?;
    tx.commit().map_err(|e| backend("commit dead letter", e))
}

fn dead_letters_read(connection: &mut Connection, limit: usize) -> Result<Vec<DeadLetter>, StoreError> {
    let mut select = connection
        .prepare_cached(
            "SELECT delivery_id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms \
             FROM dead_letters ORDER BY id LIMIT ?1",
        )
        .map_err(|e| backend("prepare dead letter read", e))?;
    type Row = (i64, String, String, String, Vec<u8>, i64, Vec<u8>, i64, String, i64);
    let rows = select
        .query_map(params![limit_i64(limit)], |row| -> rusqlite::Result<Row> {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
                row.get(7)?,
                row.get(8)?,
                row.get(9)?,
            ))
        })
        .map_err(|e| backend("read dead letters", e))?;
    let mut letters = Vec::new();
    for row in rows {
        let (id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms) =
            row.map_err(|e| backend("read dead letters", e))?;
        letters.push(DeadLetter {
            delivery: Delivery {
                id,
                task: TaskKey::new(tenant, task_id),
                config_id,
                config,
                seq: to_u64(seq, "sequence number")?,
                event,
                attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
            },
            error,
            at_ms,
        });
    }
    Ok(letters)
}

fn claim_idempotency_tx(
    connection: &mut Connection,
    tenant: &str,
    key: &str,
    fingerprint: &str,
    now_ms: i64,
) -> Result<IdempotencyClaim, StoreError> {
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| backend("begin idempotency claim", e))?;
    let inserted = tx
        .execute(
            "INSERT INTO idempotency (tenant, key, fingerprint, result, created_ms) VALUES (?1, ?2, ?3, NULL, ?4) \
             ON CONFLICT (tenant, key) DO NOTHING",
            params![tenant, key, fingerprint, now_ms],
        )
        .map_err(|e| backend("claim idempotency key", e))?;
    let claim = if inserted == 1 {
        IdempotencyClaim::Claimed
    } else {
        let (fingerprint, result) = tx
            .query_row(
                "SELECT fingerprint, result FROM idempotency WHERE tenant = ?1 AND key = ?2",
                params![tenant, key],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(|e| backend("read idempotency key", e))?;
        IdempotencyClaim::Seen { fingerprint, result }
    };
    tx.commit().map_err(|e| backend("commit idempotency claim", e))?;
    Ok(claim)
}

impl Store for SqliteStore {
    fn commit(&self, commit: Commit) -> BoxFuture<'_, Result<Committed, StoreError>> {
        self.run(Access::Write, move |connection| commit_tx(connection, commit))
    }

    fn get_task(&self, key: &TaskKey) -> BoxFuture<'_, Result<Option<TaskRecord>, StoreError>> {
        let key = key.clone();
        self.run(Access::Read, move |connection| {
            let row = connection
                .query_row(
                    &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE tenant = ?1 AND id = ?2"),
                    params![key.tenant, key.id],
                    task_from_row,
                )
                .optional()
                .map_err(|e| backend("read task", e))?;
            row.map(task_record).transpose()
        })
    }

    fn list_tasks(&self, tenant: &str, query: ListQuery) -> BoxFuture<'_, Result<ListPage, StoreError>> {
        let tenant = tenant.to_owned();
        self.run(Access::Read, move |connection| list_tasks_tx(connection, &tenant, &query))
    }

    fn read_events(&self, key: &TaskKey, after: u64, limit: usize) -> BoxFuture<'_, Result<EventPage, StoreError>> {
        let key = key.clone();
        self.run(Access::Read, move |connection| read_events_tx(connection, &key, after, limit))
    }

    fn put_push_config(&self, config: PushConfigRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        self.run(Access::Write, move |connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| backend("begin push config write", e))?;
            let exists = tx
                .query_row(
                    "SELECT 1 FROM tasks WHERE tenant = ?1 AND id = ?2",
                    params![config.task.tenant, config.task.id],
                    |_| Ok(()),
                )
                .optional()
                .map_err(|e| backend("read task", e))?;
            if exists.is_none() {
                return Err(StoreError::NotFound(config.task));
            }
            tx.execute(
                "INSERT INTO push_configs (tenant, task_id, id, body) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body",
                params![config.task.tenant, config.task.id, config.id, config.body],
            )
            .map_err(|e| backend("write push config", e))?;
            tx.commit().map_err(|e| backend("commit push config", e))
        })
    }

    fn get_push_config(&self, task: &TaskKey, id: &str) -> BoxFuture<'_, Result<Option<PushConfigRecord>, StoreError>> {
        let (task, id) = (task.clone(), id.to_owned());
        self.run(Access::Read, move |connection| {
            let body: Option<Vec<u8>> = connection
                .query_row(
                    "SELECT body FROM push_configs WHERE tenant = ?1 AND task_id = ?2 AND id = ?3",
                    params![task.tenant, task.id, id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|e| backend("read push config", e))?;
            Ok(body.map(|body| PushConfigRecord { task, id, body }))
        })
    }

    fn list_push_configs(
        &self,
        task: &TaskKey,
        after: Option<&str>,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<PushConfigRecord>, StoreError>> {
        let (task, after) = (task.clone(), after.map(str::to_owned));
        self.run(Access::Read, move |connection| {
            let mut select = connection
                .prepare_cached(
                    "SELECT id, body FROM push_configs WHERE tenant = ?1 AND task_id = ?2 AND (?3 IS NULL OR id > ?3) \
                     ORDER BY id LIMIT ?4",
                )
                .map_err(|e| backend("prepare push config list", e))?;
            let rows = select
                .query_map(params![task.tenant, task.id, after, limit_i64(limit)], |row| {
                    Ok(PushConfigRecord { task: task.clone(), id: row.get(0)?, body: row.get(1)? })
                })
                .map_err(|e| backend("list push configs", e))?;
            rows.collect::<Result<_, _>>().map_err(|e| backend("list push configs", e))
        })
    }

    fn delete_push_config(&self, task: &TaskKey, id: &str) -> BoxFuture<'_, Result<bool, StoreError>> {
        let (task, id) = (task.clone(), id.to_owned());
        self.run(Access::Write, move |connection| {
            let removed = connection
                .execute(
                    "DELETE FROM push_configs WHERE tenant = ?1 AND task_id = ?2 AND id = ?3",
                    params![task.tenant, task.id, id],
                )
                .map_err(|e| backend("delete push config", e))?;
            Ok(removed > 0)
        })
    }

    fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<Delivery>, StoreError>> {
        self.run(Access::Write, move |connection| claim_tx(connection, now_ms, lease_ms, limit))
    }

    fn delivery_done(&self, id: i64) -> BoxFuture<'_, Result<(), StoreError>> {
        self.run(Access::Write, move |connection| {
            connection
                .execute("DELETE FROM outbox WHERE id = ?1", params![id])
                .map_err(|e| backend("delete delivery", e))?;
            Ok(())
        })
    }

    fn delivery_retry(&self, id: i64, retry_at_ms: i64, error: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let error = error.to_owned();
        self.run(Access::Write, move |connection| {
            connection
                .execute(
                    "UPDATE outbox SET attempts = attempts + 1, due_ms = ?2, lease_until_ms = 0, last_error = ?3 \
                     WHERE id = ?1",
                    params![id, retry_at_ms, error],
                )
                .map_err(|e| backend("reschedule delivery", e))?;
            Ok(())
        })
    }

    fn delivery_dead(&self, id: i64, at_ms: i64, error: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let error = error.to_owned();
        self.run(Access::Write, move |connection| dead_tx(connection, id, at_ms, &error))
    }

    fn dead_letters(&self, limit: usize) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        self.run(Access::Read, move |connection| dead_letters_read(connection, limit))
    }

    fn next_delivery_due(&self) -> BoxFuture<'_, Result<Option<i64>, StoreError>> {
        self.run(Access::Read, |connection| {
            // A leased delivery comes back when its lease ends.
            connection
                .query_row("SELECT MIN(MAX(due_ms, lease_until_ms)) FROM outbox", [], |row| row.get(0))
                .map_err(|e| backend("read next due delivery", e))
        })
    }

    fn claim_idempotency(
        &self,
        tenant: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
    ) -> BoxFuture<'_, Result<IdempotencyClaim, StoreError>> {
        let (tenant, key, fingerprint) = (tenant.to_owned(), key.to_owned(), fingerprint.to_owned());
        self.run(Access::Write, move |connection| claim_idempotency_tx(connection, &tenant, &key, &fingerprint, now_ms))
    }

    fn complete_idempotency(&self, tenant: &str, key: &str, result: Vec<u8>) -> BoxFuture<'_, Result<(), StoreError>> {
        let (tenant, key) = (tenant.to_owned(), key.to_owned());
        self.run(Access::Write, move |connection| {
            connection
                .execute(
                    "UPDATE idempotency SET result = ?3 WHERE tenant = ?1 AND key = ?2",
                    params![tenant, key, result],
                )
                .map_err(|e| backend("store idempotent result", e))?;
            Ok(())
        })
    }

    fn release_idempotency(&self, tenant: &str, key: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let (tenant, key) = (tenant.to_owned(), key.to_owned());
        self.run(Access::Write, move |connection| {
            connection
                .execute("DELETE FROM idempotency WHERE tenant = ?1 AND key = ?2", params![tenant, key])
                .map_err(|e| backend("release idempotency key", e))?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> TaskRecord {
        TaskRecord {
            key: TaskKey::new("", id),
            context_id: "ctx".into(),
            state: "TASK_STATE_WORKING".into(),
            terminal: false,
            status_ts_ms: 7,
            version: 0,
            body: b"{}".to_vec(),
        }
    }

    fn pragma(connection: &Connection, name: &str) -> String {
        connection
            .query_row(&format!("PRAGMA {name}"), [], |row| row.get::<_, rusqlite::types::Value>(0))
            .map(|value| match value {
                Value::Integer(n) => n.to_string(),
                Value::Text(text) => text,
                other => format!("{other:?}"),
            })
            .unwrap()
    }

    #[test]
    fn open_creates_schema_1_in_wal_mode_with_full_sync() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("a2a.db")).unwrap();
        let writer = store.pool.writer.lock().unwrap();
        assert_eq!(pragma(&writer, "journal_mode"), "wal");
        assert_eq!(pragma(&writer, "synchronous"), "2", "FULL");
        assert_eq!(pragma(&writer, "foreign_keys"), "1");
        assert_eq!(pragma(&writer, "user_version"), SCHEMA_VERSION.to_string());
        assert_eq!(pragma(&writer, "busy_timeout"), "5000");
        assert_eq!(store.pool.readers.len(), READERS);
        for reader in &store.pool.readers {
            let reader = reader.lock().unwrap();
            assert_eq!(pragma(&reader, "query_only"), "1");
            assert_eq!(pragma(&reader, "foreign_keys"), "1");
        }
    }

    #[tokio::test]
    async fn committed_tasks_and_events_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a2a.db");
        {
            let store = SqliteStore::open(&path).unwrap();
            let commit = Commit {
                task: record("t1"),
                expected_version: None,
                events: vec![(b"e1".to_vec(), false), (b"e2".to_vec(), true)],
                push: false,
            };
            store.commit(commit).await.unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        let task = store.get_task(&TaskKey::new("", "t1")).await.unwrap().unwrap();
        assert_eq!(task, TaskRecord { version: 1, ..record("t1") });
        let page = store.read_events(&TaskKey::new("", "t1"), 0, 10).await.unwrap();
        assert_eq!(
            page.events.iter().map(|event| (event.seq, event.last)).collect::<Vec<_>>(),
            [(1, false), (2, true)]
        );
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a2a.db");
        Connection::open(&path).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        let error = SqliteStore::open(&path).unwrap_err();
        assert!(matches!(error, StoreError::Backend(_)), "{error:?}");
    }

    #[test]
    fn migration_from_0_is_all_or_nothing() {
        let connection = Connection::open_in_memory().unwrap();
        // A table in the way makes the schema script fail halfway.
        connection.execute_batch("CREATE TABLE dead_letters (x INTEGER)").unwrap();
        assert!(migrate(&connection).is_err());
        assert_eq!(pragma(&connection, "user_version"), "0");
        let tasks: i64 = connection
            .query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'tasks'", [], |row| row.get(0))
            .unwrap();
        assert_eq!(tasks, 0, "the tables created before the failure were rolled back");
    }

    #[test]
    fn garbage_in_the_database_is_an_error_not_a_panic() {
        let store = SqliteStore::open_in_memory().unwrap();
        {
            let writer = store.pool.writer.lock().unwrap();
            writer
                .execute(
                    "INSERT INTO tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, body) \
                     VALUES ('', 'bad', 'c', 's', 0, 0, -1, X'')",
                    [],
                )
                .unwrap();
        }
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let error = runtime.block_on(store.get_task(&TaskKey::new("", "bad"))).unwrap_err();
        assert!(matches!(error, StoreError::Backend(_)), "{error:?}");
    }
}
