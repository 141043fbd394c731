//! Tasks and their event logs: the commit transaction, lists and replays.

use deadpool_postgres::{Object, Transaction};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use super::{
    limit_i64, pg, to_i64, to_u64, Commit, Committed, EventPage, ListPage, ListQuery, StoreError, TaskKey, TaskRecord,
    NOTIFY_CHANNEL,
};
use crate::store::commit::{check, Checked, Stored};
use crate::store::{EventRecord, LeaseChange, TaskBody, TurnLease};

const TASK_COLUMNS: &str =
    "tenant, id, context_id, state, terminal, status_ts_ms, version, body, lease_owner, lease_until_ms";

const LOCK_TASK: &str =
    "SELECT version, last_seq, lease_until_ms FROM a2a_tasks WHERE tenant = $1 AND id = $2 FOR UPDATE";

const INSERT_TASK: &str = "INSERT INTO a2a_tasks \
     (tenant, id, context_id, state, terminal, status_ts_ms, version, last_seq, body, lease_owner, lease_until_ms) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (tenant, id) DO NOTHING";

/// `$11` true keeps the stored lease; otherwise `$12` and `$13` replace it.
const UPDATE_TASK: &str = "UPDATE a2a_tasks SET context_id = $3, state = $4, terminal = $5, status_ts_ms = $6, \
     version = $7, last_seq = $8, body = $9, lease_owner = CASE WHEN $11 THEN lease_owner ELSE $12 END, \
     lease_until_ms = CASE WHEN $11 THEN lease_until_ms ELSE $13 END \
     WHERE tenant = $1 AND id = $2 AND version = $10";

const INSERT_EVENTS: &str = "INSERT INTO a2a_events (tenant, task_id, seq, body, last) \
     SELECT $1::TEXT, $2::TEXT, e.seq, e.body, e.last FROM UNNEST($3::BIGINT[], $4::BYTEA[], $5::BOOLEAN[]) AS e (seq, body, last)";

/// One delivery per event and config, event-major, so that the identity column (the
/// claim order) follows the sequence numbers for each config.
const QUEUE_DELIVERIES: &str =
    "INSERT INTO a2a_outbox (tenant, task_id, config_id, seq, attempts, due_ms, lease_until_ms) \
     SELECT p.tenant, p.task_id, p.id, e.seq, 0, 0, 0 \
     FROM UNNEST($3::BIGINT[]) AS e (seq) CROSS JOIN a2a_push_configs p \
     WHERE p.tenant = $1 AND p.task_id = $2 ORDER BY e.seq, p.id";

const NOTIFY: &str = "SELECT pg_notify($1, $2)";

/// PostgreSQL refuses a notification payload of 8,000 bytes or more.
pub(super) const MAX_PAYLOAD: usize = 7_999;

/// How many times a batch is tried when PostgreSQL aborts its transaction for a reason a
/// retry can cure (see [`retryable`](super::retryable)).
const ATTEMPTS: u32 = 5;

/// What one commit of a batch wrote: the version it gave the task and the task's last
/// sequence number before it (its events follow).
type Written = (u64, u64);

/// Applies a batch of commits in one transaction (see "Group commit" in the module
/// documentation) and returns their outcomes in the order given.
///
/// A transaction that PostgreSQL aborts as a deadlock victim or for a serialization
/// failure kept nothing, so the whole batch is run again (up to [`ATTEMPTS`] times): a
/// caller never sees those errors unless they persist. Row locks are taken in key order
/// by every writer, so deadlocks should not happen; the retry covers lock orders this
/// code does not control.
pub(super) async fn commit_batch(client: &mut Object, commits: Vec<Commit>) -> Vec<Result<Committed, StoreError>> {
    let mut attempt = 1;
    let written = loop {
        match try_batch(client, &commits).await {
            Ok(written) => break written,
            Err(error) if super::retryable(&error) && attempt < ATTEMPTS => attempt += 1,
            Err(error) => return commits.iter().map(|_| Err(same(&error))).collect(),
        }
    };
    commits
        .into_iter()
        .zip(written)
        .map(|(commit, written)| {
            written.map(|(version, last_seq)| Committed {
                version,
                events: (commit.events.into_iter().enumerate())
                    .map(|(offset, (body, last))| EventRecord { seq: last_seq + offset as u64 + 1, body, last })
                    .collect(),
            })
        })
        .collect()
}

/// The same failure again, for each commit of a failed batch.
fn same(error: &StoreError) -> StoreError {
    match error {
        StoreError::Backend(text) => StoreError::Backend(text.clone()),
        other => StoreError::Backend(other.to_string()),
    }
}

/// One try of a batch. `Err` means the transaction failed as a whole and nothing of the
/// batch was kept.
async fn try_batch(client: &mut Object, commits: &[Commit]) -> Result<Vec<Result<Written, StoreError>>, StoreError> {
    let count = commits.len();
    // Row locks in key order in every transaction: batches never deadlock. The sort is
    // stable, so one task's commits keep their queue order.
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by(|&a, &b| commits[a].task.key.cmp(&commits[b].task.key));

    let tx = client.transaction().await.map_err(|e| pg("begin commit", e))?;
    let savepoints = count > 1;
    let mut results: Vec<Option<Result<Written, StoreError>>> = (0..count).map(|_| None).collect();
    for index in order {
        let commit = &commits[index];
        let result = if savepoints { in_savepoint(&tx, commit).await? } else { write_commit(&tx, commit).await };
        match result {
            // Aborted (a lone commit) or about to be run again anyway: drop it all.
            Err(error) if super::retryable(&error) => return Err(error),
            result => results[index] = Some(result),
        }
    }
    let results: Vec<Result<Written, StoreError>> = results
        .into_iter()
        .map(|result| result.unwrap_or_else(|| Err(StoreError::Backend("commit skipped".into()))))
        .collect();
    if results.iter().all(Result::is_err) {
        // Nothing to keep (and a lone commit that failed left the transaction aborted).
        tx.rollback().await.map_err(|e| pg("roll back", e))?;
        return Ok(results);
    }
    tx.commit().await.map_err(|e| pg("commit", e))?;
    Ok(results)
}

/// One commit inside a savepoint. The outer `Err` means the transaction itself failed.
async fn in_savepoint(tx: &Transaction<'_>, commit: &Commit) -> Result<Result<Written, StoreError>, StoreError> {
    tx.batch_execute("SAVEPOINT a2a_commit").await.map_err(|e| pg("begin savepoint", e))?;
    match write_commit(tx, commit).await {
        Ok(written) => {
            tx.batch_execute("RELEASE SAVEPOINT a2a_commit").await.map_err(|e| pg("release savepoint", e))?;
            Ok(Ok(written))
        }
        Err(refused) => {
            tx.batch_execute("ROLLBACK TO SAVEPOINT a2a_commit; RELEASE SAVEPOINT a2a_commit")
                .await
                .map_err(|e| pg("roll back savepoint", e))?;
            Ok(Err(refused))
        }
    }
}

/// One commit's writes: the version check, the task row, its events, their push
/// deliveries and the notice. A statement that fails fails the commit; the caller rolls
/// its savepoint (or the whole transaction) back.
async fn write_commit(tx: &Transaction<'_>, commit: &Commit) -> Result<Written, StoreError> {
    let key = commit.task.key.clone();
    let lock = tx.prepare_cached(LOCK_TASK).await.map_err(|e| pg("prepare task lock", e))?;
    let current = tx.query_opt(&lock, &[&key.tenant, &key.id]).await.map_err(|e| pg("lock task", e))?;
    let current: Option<(i64, i64, Option<i64>)> = match current {
        Some(row) => Some((
            row.try_get(0).map_err(|e| pg("read task version", e))?,
            row.try_get(1).map_err(|e| pg("read task version", e))?,
            row.try_get(2).map_err(|e| pg("read task lease", e))?,
        )),
        None => None,
    };
    let stored = match current {
        Some((version, last_seq, lease_until_ms)) => Some(Stored {
            version: to_u64(version, "version")?,
            last_seq: to_u64(last_seq, "sequence number")?,
            lease_until_ms,
        }),
        None => None,
    };
    let Checked { version, last_seq, .. } = check(commit, stored)?;
    let record = &commit.task;
    let new_last_seq = last_seq + commit.events.len() as u64;
    let version_sql = to_i64(version, "version")?;
    let last_seq_sql = to_i64(new_last_seq, "sequence number")?;
    let (keep_lease, lease_owner, lease_until_ms): (bool, Option<&str>, Option<i64>) = match &commit.lease {
        LeaseChange::Keep => (true, None, None),
        LeaseChange::Set(lease) => (false, Some(lease.owner.as_str()), Some(lease.until_ms)),
        LeaseChange::Clear | LeaseChange::ClearExpired(_) => (false, None, None),
    };
    let body = record.body.bytes()?;
    let body: &[u8] = &body;
    let columns: [&(dyn ToSql + Sync); 9] = [
        &key.tenant,
        &key.id,
        &record.context_id,
        &record.state,
        &record.terminal,
        &record.status_ts_ms,
        &version_sql,
        &last_seq_sql,
        &body,
    ];
    if current.is_none() {
        let mut params = columns.to_vec();
        params.extend_from_slice(&[&lease_owner, &lease_until_ms]);
        let insert = tx.prepare_cached(INSERT_TASK).await.map_err(|e| pg("prepare task insert", e))?;
        let inserted = tx.execute(&insert, &params).await.map_err(|e| pg("insert task", e))?;
        if inserted != 1 {
            // Created by a concurrent commit since the lock found nothing.
            return Err(StoreError::Exists(key));
        }
    } else {
        let expected_sql = version_sql - 1;
        let mut params = columns.to_vec();
        params.extend_from_slice(&[&expected_sql, &keep_lease, &lease_owner, &lease_until_ms]);
        let update = tx.prepare_cached(UPDATE_TASK).await.map_err(|e| pg("prepare task update", e))?;
        let updated = tx.execute(&update, &params).await.map_err(|e| pg("update task", e))?;
        if updated != 1 {
            return Err(StoreError::Backend(format!("task {key:?} changed during its commit")));
        }
    }

    if !commit.events.is_empty() {
        let seqs = (1..=commit.events.len() as u64)
            .map(|offset| to_i64(last_seq + offset, "sequence number"))
            .collect::<Result<Vec<_>, _>>()?;
        let encoded = commit.events.iter().map(|(body, _)| body.bytes()).collect::<Result<Vec<_>, _>>()?;
        let bodies: Vec<&[u8]> = encoded.iter().map(|body| &body[..]).collect();
        let lasts: Vec<bool> = commit.events.iter().map(|&(_, last)| last).collect();
        let insert = tx.prepare_cached(INSERT_EVENTS).await.map_err(|e| pg("prepare event insert", e))?;
        tx.execute(&insert, &[&key.tenant, &key.id, &seqs, &bodies, &lasts])
            .await
            .map_err(|e| pg("insert events", e))?;
        if commit.push {
            let queue = tx.prepare_cached(QUEUE_DELIVERIES).await.map_err(|e| pg("prepare outbox insert", e))?;
            tx.execute(&queue, &[&key.tenant, &key.id, &seqs]).await.map_err(|e| pg("queue deliveries", e))?;
        }
        let payload = notice(&key, new_last_seq);
        let notify = tx.prepare_cached(NOTIFY).await.map_err(|e| pg("prepare notify", e))?;
        tx.execute(&notify, &[&NOTIFY_CHANNEL, &payload]).await.map_err(|e| pg("notify", e))?;
    }
    Ok((version, last_seq))
}

/// The payload of the notice of a commit (see "NOTIFY" in the module documentation).
pub(super) fn notice(key: &TaskKey, last_seq: u64) -> String {
    let payload = serde_json::json!({ "tenant": key.tenant, "id": key.id, "last_seq": last_seq }).to_string();
    if payload.len() <= MAX_PAYLOAD {
        return payload;
    }
    serde_json::json!({ "tenant": null, "id": null, "last_seq": last_seq }).to_string()
}

pub(super) async fn get_task(client: &Object, key: &TaskKey) -> Result<Option<TaskRecord>, StoreError> {
    let select = client
        .prepare_cached(&format!("SELECT {TASK_COLUMNS} FROM a2a_tasks WHERE tenant = $1 AND id = $2"))
        .await
        .map_err(|e| pg("prepare task read", e))?;
    let row = client.query_opt(&select, &[&key.tenant, &key.id]).await.map_err(|e| pg("read task", e))?;
    row.as_ref().map(|row| task_record_at(row, 0)).transpose()
}

/// The count and the page in one statement, so both come from one snapshot.
pub(super) async fn list_tasks(client: &Object, tenant: &str, query: &ListQuery) -> Result<ListPage, StoreError> {
    let mut filter = String::from("tenant = $1");
    let mut params: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(tenant.to_owned())];
    if let Some(context_id) = &query.context_id {
        params.push(Box::new(context_id.clone()));
        filter.push_str(&format!(" AND context_id = ${}", params.len()));
    }
    if let Some(state) = &query.state {
        params.push(Box::new(state.clone()));
        filter.push_str(&format!(" AND state = ${}", params.len()));
    }
    if let Some(after_ms) = query.status_after_ms {
        params.push(Box::new(after_ms));
        filter.push_str(&format!(" AND status_ts_ms >= ${}", params.len()));
    }
    let count = format!("SELECT COUNT(*) AS total FROM a2a_tasks WHERE {filter}");
    let sql = if query.page_size == 0 {
        count
    } else {
        let mut page_filter = filter;
        if let Some((cursor_ts, cursor_id)) = &query.after {
            params.push(Box::new(*cursor_ts));
            params.push(Box::new(cursor_id.clone()));
            let (ts, id) = (params.len() - 1, params.len());
            page_filter.push_str(&format!(" AND (status_ts_ms, id) < (${ts}, ${id})"));
        }
        // One row more than the page tells whether a next page exists.
        params.push(Box::new(limit_i64(query.page_size).saturating_add(1)));
        format!(
            "SELECT c.total, p.* FROM ({count}) c LEFT JOIN LATERAL (SELECT {TASK_COLUMNS} FROM a2a_tasks \
             WHERE {page_filter} ORDER BY status_ts_ms DESC, id DESC LIMIT ${}) p ON TRUE \
             ORDER BY p.status_ts_ms DESC, p.id DESC",
            params.len()
        )
    };
    let select = client.prepare_cached(&sql).await.map_err(|e| pg("prepare task list", e))?;
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|param| &**param as &(dyn ToSql + Sync)).collect();
    let rows = client.query(&select, &refs).await.map_err(|e| pg("list tasks", e))?;

    let mut total = 0;
    let mut tasks = Vec::new();
    let mut more = false;
    for row in &rows {
        total = row.try_get::<_, i64>(0).map_err(|e| pg("count tasks", e))?;
        if query.page_size == 0 {
            break;
        }
        let id: Option<String> = row.try_get(2).map_err(|e| pg("list tasks", e))?;
        if id.is_none() {
            // The page is empty: the lateral join gave one row of NULLs.
            break;
        }
        if tasks.len() == query.page_size {
            more = true;
            break;
        }
        tasks.push(task_record_at(row, 1)?);
    }
    let next = match tasks.last() {
        Some(last) if more => Some((last.status_ts_ms, last.key.id.clone())),
        _ => None,
    };
    Ok(ListPage { tasks, total_size: to_u64(total, "count")?, next })
}

/// The task of a row whose [`TASK_COLUMNS`] start at column `first`.
fn task_record_at(row: &Row, first: usize) -> Result<TaskRecord, StoreError> {
    let read = |e| pg("read task", e);
    Ok(TaskRecord {
        key: TaskKey::new(
            row.try_get::<_, String>(first).map_err(read)?,
            row.try_get::<_, String>(first + 1).map_err(read)?,
        ),
        context_id: row.try_get(first + 2).map_err(read)?,
        state: row.try_get(first + 3).map_err(read)?,
        terminal: row.try_get(first + 4).map_err(read)?,
        status_ts_ms: row.try_get(first + 5).map_err(read)?,
        version: to_u64(row.try_get(first + 6).map_err(read)?, "version")?,
        body: TaskBody::from_bytes(row.try_get::<_, Vec<u8>>(first + 7).map_err(read)?),
        lease: {
            let owner: Option<String> = row.try_get(first + 8).map_err(read)?;
            let until_ms: Option<i64> = row.try_get(first + 9).map_err(read)?;
            until_ms.map(|until_ms| TurnLease { owner: owner.unwrap_or_default(), until_ms })
        },
    })
}

/// The task's last sequence number, the first event held and the page, in one
/// statement (one snapshot).
const READ_EVENTS: &str = "SELECT t.last_seq, \
         (SELECT MIN(seq) FROM a2a_events WHERE tenant = $1 AND task_id = $2), e.seq, e.body, e.last \
     FROM a2a_tasks t LEFT JOIN LATERAL (SELECT seq, body, last FROM a2a_events \
         WHERE tenant = t.tenant AND task_id = t.id AND seq > $3 ORDER BY seq LIMIT $4) e ON TRUE \
     WHERE t.tenant = $1 AND t.id = $2 ORDER BY e.seq";

pub(super) async fn read_events(
    client: &Object,
    key: &TaskKey,
    after: u64,
    limit: usize,
) -> Result<EventPage, StoreError> {
    let select = client.prepare_cached(READ_EVENTS).await.map_err(|e| pg("prepare event read", e))?;
    let after_sql = i64::try_from(after).unwrap_or(i64::MAX);
    let rows = client
        .query(&select, &[&key.tenant, &key.id, &after_sql, &limit_i64(limit)])
        .await
        .map_err(|e| pg("read events", e))?;
    let Some(first) = rows.first() else { return Err(StoreError::NotFound(key.clone())) };
    let read = |e| pg("read events", e);
    let last_written: i64 = first.try_get(0).map_err(read)?;
    let first_held: Option<i64> = first.try_get(1).map_err(read)?;
    let mut events = Vec::with_capacity(rows.len());
    for row in &rows {
        let seq: Option<i64> = row.try_get(2).map_err(read)?;
        let Some(seq) = seq else { break };
        events.push(EventRecord {
            seq: to_u64(seq, "sequence number")?,
            body: row.try_get::<_, Vec<u8>>(3).map_err(read)?.into(),
            last: row.try_get(4).map_err(read)?,
        });
    }
    Ok(EventPage {
        events,
        first_held: to_u64(first_held.unwrap_or(0), "sequence number")?,
        last_written: to_u64(last_written, "sequence number")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notice_names_the_task_and_its_last_sequence_number() {
        let payload: serde_json::Value = serde_json::from_str(&notice(&TaskKey::new("acme", "t\"1"), 7)).unwrap();
        assert_eq!(payload, serde_json::json!({"tenant": "acme", "id": "t\"1", "last_seq": 7}));
    }

    #[test]
    fn notice_of_a_key_too_long_for_a_payload_omits_the_key() {
        let long = "x".repeat(MAX_PAYLOAD);
        let payload = notice(&TaskKey::new("", long), 3);
        assert!(payload.len() <= MAX_PAYLOAD);
        let payload: serde_json::Value = serde_json::from_str(&payload).unwrap();
        assert_eq!(payload, serde_json::json!({"tenant": null, "id": null, "last_seq": 3}));
        let edge = "y".repeat(MAX_PAYLOAD - notice(&TaskKey::new("", ""), 3).len());
        assert_eq!(notice(&TaskKey::new("", edge.clone()), 3).len(), MAX_PAYLOAD, "a payload at the limit is kept");
    }

    #[test]
    fn backend_errors_name_their_context() {
        assert_eq!(super::super::backend("lock task", "gone").to_string(), "store backend: postgres lock task: gone");
    }
}
