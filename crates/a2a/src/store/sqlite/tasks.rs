//! Tasks and their event logs: the commit transaction, lists and replays.

use super::*;
use crate::store::commit::{check, Checked, Stored};
use rusqlite::types::{ToSqlOutput, ValueRef};

pub(super) const TASK_COLUMNS: &str =
    "tenant, id, context_id, state, terminal, status_ts_ms, version, body, lease_owner, lease_until_ms";

/// The columns of [`TASK_COLUMNS`], read as they are stored.
pub(super) struct TaskRow {
    key: TaskKey,
    context_id: String,
    state: String,
    terminal: bool,
    status_ts_ms: i64,
    version: i64,
    body: Vec<u8>,
    lease_owner: Option<String>,
    lease_until_ms: Option<i64>,
}

pub(super) fn task_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRow> {
    Ok(TaskRow {
        key: TaskKey::new(row.get::<_, String>(0)?, row.get::<_, String>(1)?),
        context_id: row.get(2)?,
        state: row.get(3)?,
        terminal: row.get(4)?,
        status_ts_ms: row.get(5)?,
        version: row.get(6)?,
        body: row.get(7)?,
        lease_owner: row.get(8)?,
        lease_until_ms: row.get(9)?,
    })
}

pub(super) fn task_record(row: TaskRow) -> Result<TaskRecord, StoreError> {
    let lease = match (row.lease_owner, row.lease_until_ms) {
        (owner, Some(until_ms)) => Some(TurnLease { owner: owner.unwrap_or_default(), until_ms }),
        (_, None) => None,
    };
    Ok(TaskRecord {
        key: row.key,
        context_id: row.context_id,
        state: row.state,
        terminal: row.terminal,
        status_ts_ms: row.status_ts_ms,
        version: to_u64(row.version, "version")?,
        body: TaskBody::from_bytes(row.body),
        lease,
    })
}

/// The lease columns a commit writes, and whether it keeps the stored ones instead.
pub(super) fn lease_columns(change: &LeaseChange) -> (bool, Option<&str>, Option<i64>) {
    match change {
        LeaseChange::Keep => (true, None, None),
        LeaseChange::Set(lease) => (false, Some(lease.owner.as_str()), Some(lease.until_ms)),
        LeaseChange::Clear | LeaseChange::ClearExpired(_) => (false, None, None),
    }
}

/// Applies a batch of commits in one transaction: one `COMMIT`, so one fsync, for the
/// whole batch; if it fails, every commit of the batch fails with it. A commit its checks
/// refuse (a version conflict, a missing task) has written nothing and the others stand.
/// A commit that fails halfway through its writes (an I/O error, a constraint) would
/// leave half of itself behind: the transaction is then rolled back and the batch run
/// again with each commit in a savepoint of its own, so that the failing one is rolled
/// back alone. Savepoints only on that path, because a savepoint makes SQLite copy
/// every page a commit touches into a statement journal first (measured: 15 % of the
/// committer's time at 50 connections).
pub(super) fn commit_batch(connection: &mut Connection, commits: Vec<Commit>) -> Vec<Result<Committed, StoreError>> {
    let outcomes = match apply_batch(connection, &commits, Undo::Transaction) {
        Some(outcomes) => outcomes,
        None => apply_batch(connection, &commits, Undo::Savepoint).unwrap_or_else(|| {
            let broken = || StoreError::Backend("sqlite commit: a batch failed even with savepoints".into());
            commits.iter().map(|_| Err(broken())).collect()
        }),
    };
    commits
        .into_iter()
        .zip(outcomes)
        .map(|(commit, outcome)| {
            outcome.map(|checked| {
                let events = commit.events.into_iter().enumerate();
                let events = events.map(|(offset, (body, last))| EventRecord { seq: checked.seq(offset), body, last });
                Committed { version: checked.version, events: events.collect() }
            })
        })
        .collect()
}

/// What undoes a commit that fails halfway through its writes.
#[derive(Clone, Copy, PartialEq)]
enum Undo {
    /// Rolling the whole transaction back (no commit of the batch is stored).
    Transaction,
    /// Rolling back to the savepoint each commit runs in.
    Savepoint,
}

/// One transaction over `commits`, committed; `None` (rolled back) when a commit failed
/// halfway through its writes and `undo` is the whole transaction.
fn apply_batch(
    connection: &mut Connection,
    commits: &[Commit],
    undo: Undo,
) -> Option<Vec<Result<Checked, StoreError>>> {
    let tx = match connection.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => return Some(commits.iter().map(|_| Err(backend("begin commit", &e))).collect()),
    };
    let mut outcomes = Vec::with_capacity(commits.len());
    for commit in commits {
        let outcome = match undo {
            Undo::Savepoint => in_savepoint(&tx, |tx| apply_commit(tx, commit).map_err(Failed::into_error)),
            Undo::Transaction => match apply_commit(&tx, commit) {
                Ok(checked) => Ok(checked),
                Err(Failed::Refused(e)) => Err(e),
                // Dropping `tx` rolls it back.
                Err(Failed::Writing(_)) => return None,
            },
        };
        outcomes.push(outcome);
    }
    match tx.commit() {
        Ok(()) => Some(outcomes),
        Err(e) => Some(outcomes.into_iter().map(|outcome| outcome.and_then(|_| Err(backend("commit", &e)))).collect()),
    }
}

/// Runs `work` in a savepoint: what it wrote stays if it succeeds and is rolled back
/// if it fails, the rest of the transaction untouched. The statements are prepared once
/// per connection (rusqlite's `Savepoint` parses them at every use).
fn in_savepoint<T>(tx: &Connection, work: impl FnOnce(&Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
    let run = |sql: &str, context: &str| -> Result<(), StoreError> {
        tx.prepare_cached(sql)
            .and_then(|mut statement| statement.execute([]))
            .map(drop)
            .map_err(|e| backend(context, e))
    };
    run("SAVEPOINT one_commit", "begin savepoint")?;
    match work(tx).and_then(|done| run("RELEASE one_commit", "release savepoint").map(|()| done)) {
        Ok(done) => Ok(done),
        Err(error) => {
            // Rolled back to the savepoint, which is then released: the transaction goes
            // on as if this commit had not been tried.
            run("ROLLBACK TO one_commit", "roll back savepoint")?;
            run("RELEASE one_commit", "release savepoint")?;
            Err(error)
        }
    }
}

/// How a commit failed.
enum Failed {
    /// Its checks refused it before it wrote anything.
    Refused(StoreError),
    /// It failed after writing part of itself.
    Writing(StoreError),
}

impl Failed {
    fn into_error(self) -> StoreError {
        match self {
            Failed::Refused(e) | Failed::Writing(e) => e,
        }
    }
}

/// One commit, inside a transaction the caller opened: its checks (the version, the
/// lease), then its writes (the task row, its events and their push deliveries).
fn apply_commit(tx: &Connection, commit: &Commit) -> Result<Checked, Failed> {
    let checked = check_commit(tx, commit).map_err(Failed::Refused)?;
    let body = TaskBytes::of(&commit.task.body).map_err(Failed::Refused)?;
    write_commit(tx, commit, &body, &checked).map_err(Failed::Writing)?;
    Ok(checked)
}

/// The task's version, log and lease as stored, read in the transaction, and the check
/// every store makes ([`check`]).
fn check_commit(tx: &Connection, commit: &Commit) -> Result<Checked, StoreError> {
    let key = &commit.task.key;
    let current: Option<(i64, i64, Option<i64>)> = tx
        .prepare_cached("SELECT version, last_seq, lease_until_ms FROM tasks WHERE tenant = ?1 AND id = ?2")
        .and_then(|mut select| {
            select.query_row(params![key.tenant, key.id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        })
        .optional()
        .map_err(|e| backend("read task version", e))?;
    let stored = match current {
        Some((version, last_seq, lease_until_ms)) => Some(Stored {
            version: to_u64(version, "version")?,
            last_seq: to_u64(last_seq, "sequence number")?,
            lease_until_ms,
        }),
        None => None,
    };
    check(commit, stored)
}

/// Bodies from this size on are written into their row in place (incremental blob I/O),
/// not bound: a bound blob is copied once into SQLite and once more into the record it
/// builds, two more copies of a task holding megabytes of text.
const IN_PLACE: usize = 64 << 10;

fn in_place(body: &[u8]) -> bool {
    body.len() >= IN_PLACE && i32::try_from(body.len()).is_ok()
}

/// A body as a statement parameter: as it is, or as zeros of its length that [`fill`]
/// then overwrites in place.
fn bound(body: &[u8]) -> ToSqlOutput<'_> {
    match i32::try_from(body.len()) {
        Ok(len) if in_place(body) => ToSqlOutput::ZeroBlob(len),
        _ => ToSqlOutput::Borrowed(ValueRef::Blob(body)),
    }
}

/// Writes a body bound by [`bound`] as zeros into its row of `table`.
fn fill(tx: &Connection, table: &str, rowid: i64, body: &[u8]) -> Result<(), StoreError> {
    if !in_place(body) {
        return Ok(());
    }
    let mut blob = tx.blob_open("main", table, "body", rowid, false).map_err(|e| backend("open a body in place", e))?;
    blob.write_at(body, 0).map_err(|e| backend("write a body in place", e))
}

/// A task's body as the committer writes it: its bytes, or a large task the caller left
/// decoded (`SqliteStore::queue_commit`), of a length counted first, serialized straight
/// into its row: never a whole encoded copy in memory.
enum TaskBytes {
    Bytes(bytes::Bytes),
    Streamed(std::sync::Arc<crate::v1::Task>, i32),
}

impl TaskBytes {
    fn of(body: &TaskBody) -> Result<TaskBytes, StoreError> {
        if let (false, Some(task)) = (body.is_encoded(), body.decoded()) {
            if let Ok(len) = i32::try_from(body.len()) {
                return Ok(TaskBytes::Streamed(std::sync::Arc::clone(task), len));
            }
        }
        body.bytes().map(TaskBytes::Bytes)
    }

    fn in_place(&self) -> bool {
        match self {
            TaskBytes::Bytes(bytes) => in_place(bytes),
            TaskBytes::Streamed(..) => true,
        }
    }

    fn bound(&self) -> ToSqlOutput<'_> {
        match self {
            TaskBytes::Bytes(bytes) => bound(bytes),
            TaskBytes::Streamed(_, len) => ToSqlOutput::ZeroBlob(*len),
        }
    }

    /// Writes the body into the task's row (`rowid`) when it was bound as zeros.
    fn fill(&self, tx: &Connection, rowid: i64) -> Result<(), StoreError> {
        let (task, len) = match self {
            TaskBytes::Bytes(bytes) => return fill(tx, "tasks", rowid, bytes),
            TaskBytes::Streamed(task, len) => (task, *len),
        };
        let blob =
            tx.blob_open("main", "tasks", "body", rowid, false).map_err(|e| backend("open a body in place", e))?;
        let mut out = std::io::BufWriter::with_capacity(64 << 10, Counted { blob, written: 0 });
        serde_json::to_writer(&mut out, &**task).map_err(|e| backend("write a task in place", e))?;
        let written = out.into_inner().map_err(|e| backend("write a task in place", e.error()))?.written;
        if written != len as usize {
            return Err(StoreError::Backend(format!("a task encoded to {written} bytes, not the {len} counted")));
        }
        Ok(())
    }
}

/// A blob written in order, counting what it was given.
struct Counted<'a> {
    blob: rusqlite::blob::Blob<'a>,
    written: usize,
}

impl std::io::Write for Counted<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = self.blob.write(bytes)?;
        if n < bytes.len() {
            return Err(std::io::Error::new(std::io::ErrorKind::WriteZero, "the task outgrew its counted length"));
        }
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.blob.flush()
    }
}

/// The writes of a commit its checks let through.
fn write_commit(tx: &Connection, commit: &Commit, body: &TaskBytes, checked: &Checked) -> Result<(), StoreError> {
    let key = &commit.task.key;
    let record = &commit.task;
    let version_sql = to_i64(checked.version, "version")?;
    let last_seq_sql = to_i64(checked.last_seq + commit.events.len() as u64, "sequence number")?;
    let (keep_lease, lease_owner, lease_until_ms) = lease_columns(&commit.lease);
    if checked.creating {
        tx.prepare_cached(
            "INSERT INTO tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, last_seq, body, \
             lease_owner, lease_until_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .and_then(|mut insert| {
            insert.execute(params![
                key.tenant,
                key.id,
                record.context_id,
                record.state,
                record.terminal,
                record.status_ts_ms,
                version_sql,
                last_seq_sql,
                body.bound(),
                lease_owner,
                lease_until_ms
            ])
        })
        .map_err(|e| backend("insert task", e))?;
        body.fill(tx, tx.last_insert_rowid())?;
    } else {
        let updated = tx
            .prepare_cached(
                "UPDATE tasks SET context_id = ?3, state = ?4, terminal = ?5, status_ts_ms = ?6, version = ?7, \
                 last_seq = ?8, body = ?9, lease_owner = CASE WHEN ?11 THEN lease_owner ELSE ?12 END, \
                 lease_until_ms = CASE WHEN ?11 THEN lease_until_ms ELSE ?13 END \
                 WHERE tenant = ?1 AND id = ?2 AND version = ?10",
            )
            .and_then(|mut update| {
                update.execute(params![
                    key.tenant,
                    key.id,
                    record.context_id,
                    record.state,
                    record.terminal,
                    record.status_ts_ms,
                    version_sql,
                    last_seq_sql,
                    body.bound(),
                    version_sql - 1,
                    keep_lease,
                    lease_owner,
                    lease_until_ms
                ])
            })
            .map_err(|e| backend("update task", e))?;
        if updated != 1 {
            return Err(StoreError::Backend(format!("task {key:?} vanished during its commit")));
        }
        if body.in_place() {
            let rowid = tx
                .prepare_cached("SELECT rowid FROM tasks WHERE tenant = ?1 AND id = ?2")
                .and_then(|mut select| select.query_row(params![key.tenant, key.id], |row| row.get(0)))
                .map_err(|e| backend("find the task's row", e))?;
            body.fill(tx, rowid)?;
        }
    }

    {
        let mut insert = tx
            .prepare_cached("INSERT INTO events (tenant, task_id, seq, body, last) VALUES (?1, ?2, ?3, ?4, ?5)")
            .map_err(|e| backend("prepare event insert", e))?;
        for (offset, (body, last)) in commit.events.iter().enumerate() {
            let seq = to_i64(checked.seq(offset), "sequence number")?;
            let body = body.bytes()?;
            insert
                .execute(params![key.tenant, key.id, seq, bound(&body), last])
                .map_err(|e| backend("insert event", e))?;
            fill(tx, "events", tx.last_insert_rowid(), &body)?;
        }
    }

    if commit.push && !commit.events.is_empty() {
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
        for offset in 0..commit.events.len() {
            let seq = to_i64(checked.seq(offset), "sequence number")?;
            for config_id in &config_ids {
                insert
                    .execute(params![key.tenant, key.id, config_id, seq])
                    .map_err(|e| backend("queue delivery", e))?;
            }
        }
    }
    Ok(())
}

pub(super) fn list_tasks_tx(
    connection: &mut Connection,
    tenant: &str,
    query: &ListQuery,
) -> Result<ListPage, StoreError> {
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

pub(super) fn read_events_tx(
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
        events.push(EventRecord { seq: to_u64(seq, "sequence number")?, body: body.into(), last });
    }
    Ok(EventPage {
        events,
        first_held: to_u64(first_held.unwrap_or(0), "sequence number")?,
        last_written: to_u64(last_written, "sequence number")?,
    })
}
