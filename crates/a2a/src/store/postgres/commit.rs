//! The commit transaction: a batch of queued commits in one or two round trips.
//!
//! 1. When the batch updates tasks: `BEGIN` and a `SELECT … FOR UPDATE` of each of those
//!    tasks (in key order), sent together. A create needs no lock: its `INSERT … ON CONFLICT DO
//!    NOTHING` finds a task already there. The store then checks each commit against what
//!    it read, in queue order (`crate::store::commit::check`, the same check as the other
//!    stores; a task committed twice in one batch is checked the second time against the
//!    first commit's result).
//! 2. One statement per commit the check let through (the task row, its events and their
//!    push deliveries in one statement of data-modifying CTEs), one `pg_notify` for the
//!    whole batch, and `COMMIT` (after `BEGIN`, when step 1 did not run), sent together.
//!
//! A create alone (a sequential SendMessage) is a single statement, its own transaction,
//! with its notice inside it: one round trip. A create that loses to a concurrent creator
//! of the same id inside a batch may still be named in the batch's notice; a notice only
//! tells listeners to read the log, which then holds the winner's events.
//!
//! tokio-postgres sends a request when its future is first polled and writes everything
//! queued before it flushes, so requests polled one after the other in one task leave in
//! one flight and PostgreSQL runs them in that order ([`in_order`]). The statements are
//! prepared once per connection (deadpool's statement cache), all in one flight.
//!
//! A statement that fails aborts the transaction, and `COMMIT` then rolls it back: the
//! commit whose statement failed first is answered with its error and the rest of the
//! batch runs again without it, so one commit PostgreSQL refuses does not fail the
//! others. A deadlock victim or serialization failure runs the whole batch again
//! ([`ATTEMPTS`]); a failing `COMMIT` (a deferred constraint) fails the whole batch.
//!
//! If the caller goes away between `BEGIN` and the end of the transaction, the connection
//! is taken out of the pool and closed (PostgreSQL rolls the transaction back), rather
//! than returned to the pool inside an open transaction.

use std::collections::BTreeMap;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use deadpool_postgres::Object;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Statement};

use super::{pg, retryable, to_i64, to_u64, Commit, Committed, Stats, StoreError, TaskKey, NOTIFY_CHANNEL};
use crate::store::commit::{check, Checked, Stored};
use crate::store::{EventRecord, LeaseChange};

/// One task to update, locked. A batch sends one per task, in key order, all in one flight:
/// PostgreSQL runs them in that order, so batches never deadlock on each other. (One
/// statement joining the keys to the table gets a generic plan that scans the table.)
const LOCK_TASK: &str =
    "SELECT version, last_seq, lease_until_ms FROM a2a_tasks WHERE tenant = $1 AND id = $2 FOR UPDATE";

/// A new task and its events, and, when `$16` is not null, the notice `$16` on channel
/// `$15` (a create alone sends its own). No push delivery: a push config needs its task to
/// exist. One row per task created: with `ON CONFLICT DO NOTHING`, none when a concurrent
/// creator won, and then nothing is written and no notice sent.
const CREATE: &str = "WITH t AS (INSERT INTO a2a_tasks \
     (tenant, id, context_id, state, terminal, status_ts_ms, version, last_seq, body, lease_owner, lease_until_ms) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (tenant, id) DO NOTHING RETURNING tenant, id), \
     ev AS (INSERT INTO a2a_events (tenant, task_id, seq, body, last) \
     SELECT t.tenant, t.id, e.seq, e.body, e.last FROM t, UNNEST($12::BIGINT[], $13::BYTEA[], $14::BOOLEAN[]) AS e (seq, body, last)) \
     SELECT CASE WHEN $16::TEXT IS NULL THEN NULL ELSE pg_notify($15, $16) END FROM t";

/// A task's new row (`$11` true keeps the stored lease, otherwise `$12` and `$13` replace
/// it), its events and, when `$17`, one delivery per event and push config, event-major so
/// that the outbox's identity column (the claim order) follows the sequence numbers for
/// each config.
const UPDATE: &str = "WITH t AS (UPDATE a2a_tasks SET context_id = $3, state = $4, terminal = $5, \
     status_ts_ms = $6, version = $7, last_seq = $8, body = $9, \
     lease_owner = CASE WHEN $11 THEN lease_owner ELSE $12 END, \
     lease_until_ms = CASE WHEN $11 THEN lease_until_ms ELSE $13 END \
     WHERE tenant = $1 AND id = $2 AND version = $10 RETURNING tenant, id), \
     ev AS (INSERT INTO a2a_events (tenant, task_id, seq, body, last) \
     SELECT t.tenant, t.id, e.seq, e.body, e.last FROM t, UNNEST($14::BIGINT[], $15::BYTEA[], $16::BOOLEAN[]) AS e (seq, body, last)), \
     dl AS (INSERT INTO a2a_outbox (tenant, task_id, config_id, seq, attempts, due_ms, lease_until_ms) \
     SELECT p.tenant, p.task_id, p.id, e.seq, 0, 0, 0 \
     FROM t JOIN a2a_push_configs p ON p.tenant = t.tenant AND p.task_id = t.id \
     CROSS JOIN UNNEST($14::BIGINT[]) AS e (seq) WHERE $17 ORDER BY e.seq, p.id) \
     SELECT COUNT(*) FROM t";

/// Every notice of a batch in one statement.
const NOTIFY_ALL: &str = "SELECT pg_notify($1, p) FROM UNNEST($2::TEXT[]) AS p";

/// PostgreSQL refuses a notification payload of 8,000 bytes or more.
pub(super) const MAX_PAYLOAD: usize = 7_999;

/// How many times a batch is tried when PostgreSQL aborts its transaction for a reason a
/// retry can cure (see [`retryable`]).
const ATTEMPTS: u32 = 5;

/// PostgreSQL's answer to one request of a flight, to come.
type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + Send + 'a>>;

/// The statements of a commit transaction, prepared on this connection.
struct Prepared {
    lock: Statement,
    create: Statement,
    update: Statement,
    notify: Statement,
}

/// How one try of a batch failed.
enum Failed {
    /// The statement of the batch's commit number `.0` failed, and with it the
    /// transaction: that commit gets the error, the others may be tried again.
    Commit(usize, StoreError),
    /// The transaction failed as a whole; nothing of the batch was kept.
    Batch(StoreError),
}

/// A connection with a commit transaction possibly open on it. Dropped while open (the
/// caller went away mid-transaction), it takes the connection out of the pool and closes
/// it, so that PostgreSQL rolls the transaction back.
struct Session<'a> {
    client: Option<Object>,
    open: AtomicBool,
    stats: &'a Stats,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if self.open.load(Ordering::Relaxed) {
            if let Some(client) = self.client.take() {
                drop(Object::take(client));
            }
        }
    }
}

/// Applies a batch of commits (see the module documentation) and returns their outcomes
/// in the order given.
pub(super) async fn commit_batch(
    client: Object,
    commits: Vec<Commit>,
    stats: &Stats,
) -> Vec<Result<Committed, StoreError>> {
    let session = Session { client: Some(client), open: AtomicBool::new(false), stats };
    let mut outcomes: Vec<Option<Result<Checked, StoreError>>> = commits.iter().map(|_| None).collect();
    // The commits still to run, by index; a commit whose statement failed leaves it.
    let mut pending: Vec<usize> = (0..commits.len()).collect();
    let mut attempt = 1;
    while !pending.is_empty() {
        let batch: Vec<&Commit> = pending.iter().map(|&index| &commits[index]).collect();
        match session.run(&batch).await {
            Ok(done) => {
                for (index, outcome) in pending.iter().zip(done) {
                    outcomes[*index] = Some(outcome);
                }
                break;
            }
            Err(Failed::Commit(at, error)) => {
                outcomes[pending.remove(at)] = Some(Err(error));
            }
            Err(Failed::Batch(error)) if retryable(&error) && attempt < ATTEMPTS => attempt += 1,
            Err(Failed::Batch(error)) => {
                for index in pending.drain(..) {
                    outcomes[index] = Some(Err(same(&error)));
                }
            }
        }
    }
    commits
        .into_iter()
        .zip(outcomes)
        .map(|(commit, outcome)| {
            let checked = outcome.unwrap_or_else(|| Err(StoreError::Backend("postgres commit skipped".into())))?;
            Ok(Committed {
                version: checked.version,
                events: (commit.events.into_iter().enumerate())
                    .map(|(offset, (body, last))| EventRecord { seq: checked.seq(offset), body, last })
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

impl Session<'_> {
    fn client(&self) -> Result<&Object, Failed> {
        self.client.as_ref().ok_or_else(|| Failed::Batch(StoreError::Backend("postgres connection closed".into())))
    }

    /// The statements, prepared in one flight on a connection that has not yet cached them.
    async fn prepare(&self) -> Result<Prepared, Failed> {
        let client = self.client()?;
        let cached = client.statement_cache.size();
        let (lock, create, update, notify) = futures::join!(
            client.prepare_cached(LOCK_TASK),
            client.prepare_cached(CREATE),
            client.prepare_cached(UPDATE),
            client.prepare_cached(NOTIFY_ALL),
        );
        if client.statement_cache.size() > cached {
            self.stats.flight(0);
        }
        let failed = |e| Failed::Batch(pg("prepare the commit statements", e));
        Ok(Prepared {
            lock: lock.map_err(failed)?,
            create: create.map_err(failed)?,
            update: update.map_err(failed)?,
            notify: notify.map_err(failed)?,
        })
    }

    /// One try of a batch: the outcome of each commit that ran, in the order given.
    async fn run(&self, commits: &[&Commit]) -> Result<Vec<Result<Checked, StoreError>>, Failed> {
        let prepared = self.prepare().await?;
        let client = self.client()?;

        // Flight 1, when the batch updates tasks: BEGIN and the locks of those tasks. A
        // create needs no lock: its INSERT finds a task already there.
        let mut keys: Vec<&TaskKey> = (commits.iter())
            .filter(|commit| commit.expected_version.is_some())
            .map(|commit| &commit.task.key)
            .collect();
        keys.sort();
        keys.dedup();
        let mut stored: BTreeMap<(&str, &str), Stored> = BTreeMap::new();
        let rows = if keys.is_empty() {
            Vec::new()
        } else {
            let params: Vec<[&(dyn ToSql + Sync); 2]> =
                keys.iter().map(|key| [&key.tenant as _, &key.id as _]).collect();
            let mut flight: Vec<Answer<'_, Vec<Row>>> = Vec::with_capacity(keys.len() + 1);
            flight.push(Box::pin(async move { client.batch_execute("BEGIN").await.map(|()| Vec::new()) }));
            let lock = &prepared.lock;
            for params in &params {
                flight.push(Box::pin(async move { client.query(lock, params).await }));
            }
            self.stats.flight(flight.len());
            self.stats.transaction();
            self.open.store(true, Ordering::Relaxed);
            let mut rows = Vec::with_capacity(keys.len());
            for answer in in_order(flight).await {
                match answer {
                    Ok(found) => rows.push(found),
                    Err(e) => return Err(self.abandon(pg("lock the batch's tasks", e)).await),
                }
            }
            rows.remove(0); // BEGIN's
            rows
        };
        let in_transaction = !keys.is_empty();
        for (key, found) in keys.iter().zip(&rows) {
            match found.first().map(stored_row).transpose() {
                Ok(Some(found)) => stored.insert((key.tenant.as_str(), key.id.as_str()), found),
                Ok(None) => None,
                Err(error) => return Err(self.abandon(error).await),
            };
        }

        // The checks, in queue order; a commit sees the commits before it in the batch.
        let mut outcomes: Vec<Result<Checked, StoreError>> = Vec::with_capacity(commits.len());
        for commit in commits {
            let slot = (commit.task.key.tenant.as_str(), commit.task.key.id.as_str());
            let outcome = check(commit, stored.get(&slot).copied());
            if let Ok(checked) = &outcome {
                let lease_until_ms = match &commit.lease {
                    LeaseChange::Keep => stored.get(&slot).and_then(|s| s.lease_until_ms),
                    LeaseChange::Set(lease) => Some(lease.until_ms),
                    LeaseChange::Clear | LeaseChange::ClearExpired(_) => None,
                };
                let last_seq = checked.last_seq + commit.events.len() as u64;
                stored.insert(slot, Stored { version: checked.version, last_seq, lease_until_ms });
            }
            outcomes.push(outcome);
        }

        // The last flight: the writes (in key order, one task's commits in queue order),
        // the notices and COMMIT (after BEGIN, when flight 1 did not send it). A create
        // alone is one statement, its own transaction, with its notice inside.
        let mut order: Vec<usize> = (0..commits.len()).filter(|&index| outcomes[index].is_ok()).collect();
        order.sort_by(|&a, &b| commits[a].task.key.cmp(&commits[b].task.key));
        let mut writes = Vec::with_capacity(order.len());
        for &index in &order {
            let Ok(checked) = &outcomes[index] else { continue };
            match Write::new(commits[index], checked) {
                Ok(write) => writes.push((index, write)),
                Err(error) => outcomes[index] = Err(error),
            }
        }
        if writes.is_empty() && !in_transaction {
            return Ok(outcomes);
        }
        let alone = !in_transaction && writes.len() == 1 && writes[0].1.creating;
        let notices = notices(
            writes.iter().filter(|(_, write)| !write.seqs.is_empty()).map(|(_, write)| (&write.key, write.last_seq)),
        );
        let own_notice: Option<&str> = if alone { notices.first().map(String::as_str) } else { None };
        let bodies: Vec<(&[u8], Vec<&[u8]>)> = (writes.iter())
            .map(|(_, write)| (&write.body[..], write.bodies.iter().map(|body| &body[..]).collect()))
            .collect();
        let params: Vec<Vec<&(dyn ToSql + Sync)>> = (writes.iter().zip(&bodies))
            .map(|((_, write), (body, events))| write.params(body, events, &own_notice as &(dyn ToSql + Sync)))
            .collect();
        let notify: [&(dyn ToSql + Sync); 2] = [&NOTIFY_CHANNEL, &notices];
        let mut flight: Vec<Answer<'_, u64>> = Vec::with_capacity(writes.len() + 3);
        let begin = !in_transaction && !alone;
        if begin {
            flight.push(Box::pin(async move { client.batch_execute("BEGIN").await.map(|()| 0) }));
        }
        let (create, update) = (&prepared.create, &prepared.update);
        for ((_, write), params) in writes.iter().zip(&params) {
            if write.creating {
                // One row per task created: none when a concurrent creator won.
                flight.push(Box::pin(async move { Ok(client.query(create, params).await?.len() as u64) }));
            } else {
                flight.push(Box::pin(async move {
                    let row = client.query_one(update, params).await?;
                    row.try_get::<_, i64>(0).map(|count| count as u64)
                }));
            }
        }
        if !alone && !notices.is_empty() {
            flight.push(Box::pin(client.execute(&prepared.notify, &notify)));
        }
        if !alone {
            flight.push(Box::pin(async move { client.batch_execute("COMMIT").await.map(|()| 0) }));
        }
        self.stats.flight(flight.len());
        if !in_transaction {
            self.stats.transaction();
        }
        self.open.store(!alone, Ordering::Relaxed);
        let mut done = in_order(flight).await;
        self.open.store(false, Ordering::Relaxed);

        let committed = if alone { Ok(0) } else { done.pop().unwrap_or(Ok(0)) };
        if begin && !done.is_empty() {
            if let Err(e) = done.remove(0) {
                return Err(Failed::Batch(pg("begin commit", e)));
            }
        }
        // A failed statement aborted the transaction (and COMMIT rolled it back): the
        // first failure is the culprit, the later ones only say the transaction was aborted.
        if let Some(at) = done.iter().position(Result::is_err) {
            let error = match done.swap_remove(at) {
                Err(e) => pg("write commit", e),
                Ok(_) => StoreError::Backend("postgres write commit failed".into()),
            };
            if at < writes.len() && !retryable(&error) {
                return Err(Failed::Commit(writes[at].0, error));
            }
            return Err(Failed::Batch(error));
        }
        committed.map_err(|e| Failed::Batch(pg("commit", e)))?;
        for ((index, write), count) in writes.iter().zip(done) {
            if count.unwrap_or(0) != 1 {
                outcomes[*index] = Err(if write.creating {
                    // Created by a concurrent commit: the INSERT found it there.
                    StoreError::Exists(write.key.clone())
                } else {
                    StoreError::Backend(format!("task {:?} changed during its commit", write.key))
                });
            }
        }
        Ok(outcomes)
    }

    /// Ends a transaction that went wrong before its writes: `ROLLBACK`, or, if even that
    /// fails, the connection is dropped from the pool.
    async fn abandon(&self, error: StoreError) -> Failed {
        if let Some(client) = &self.client {
            self.stats.flight(1);
            if client.batch_execute("ROLLBACK").await.is_ok() {
                self.open.store(false, Ordering::Relaxed);
            }
        }
        Failed::Batch(error)
    }
}

/// What the check reads of a locked task.
fn stored_row(row: &Row) -> Result<Stored, StoreError> {
    let read = |e| pg("read task version", e);
    Ok(Stored {
        version: to_u64(row.try_get(0).map_err(read)?, "version")?,
        last_seq: to_u64(row.try_get(1).map_err(read)?, "sequence number")?,
        lease_until_ms: row.try_get(2).map_err(read)?,
    })
}

/// One commit's statement parameters, owned.
struct Write {
    key: TaskKey,
    creating: bool,
    version: i64,
    expected: i64,
    last_seq: u64,
    last_seq_sql: i64,
    body: bytes::Bytes,
    seqs: Vec<i64>,
    bodies: Vec<bytes::Bytes>,
    lasts: Vec<bool>,
    keep_lease: bool,
    lease_owner: Option<String>,
    lease_until_ms: Option<i64>,
    push: bool,
    context_id: String,
    state: String,
    terminal: bool,
    status_ts_ms: i64,
}

impl Write {
    fn new(commit: &Commit, checked: &Checked) -> Result<Write, StoreError> {
        let (keep_lease, lease_owner, lease_until_ms) = match &commit.lease {
            LeaseChange::Keep => (true, None, None),
            LeaseChange::Set(lease) => (false, Some(lease.owner.clone()), Some(lease.until_ms)),
            LeaseChange::Clear | LeaseChange::ClearExpired(_) => (false, None, None),
        };
        let last_seq = checked.last_seq + commit.events.len() as u64;
        let record = &commit.task;
        Ok(Write {
            key: record.key.clone(),
            creating: checked.creating,
            version: to_i64(checked.version, "version")?,
            expected: to_i64(checked.version - 1, "version")?,
            last_seq,
            last_seq_sql: to_i64(last_seq, "sequence number")?,
            body: record.body.bytes()?,
            seqs: (0..commit.events.len())
                .map(|offset| to_i64(checked.seq(offset), "sequence number"))
                .collect::<Result<_, _>>()?,
            bodies: commit.events.iter().map(|(body, _)| body.bytes()).collect::<Result<_, _>>()?,
            lasts: commit.events.iter().map(|&(_, last)| last).collect(),
            keep_lease,
            lease_owner,
            lease_until_ms,
            push: commit.push,
            context_id: record.context_id.clone(),
            state: record.state.clone(),
            terminal: record.terminal,
            status_ts_ms: record.status_ts_ms,
        })
    }

    /// The parameters of [`CREATE`] or [`UPDATE`]: `body` is the task's bytes, `bodies`
    /// its events', `notice` the notice of a create alone.
    fn params<'a>(
        &'a self,
        body: &'a (dyn ToSql + Sync),
        bodies: &'a (dyn ToSql + Sync),
        notice: &'a (dyn ToSql + Sync),
    ) -> Vec<&'a (dyn ToSql + Sync)> {
        let row: [&'a (dyn ToSql + Sync); 9] = [
            &self.key.tenant,
            &self.key.id,
            &self.context_id,
            &self.state,
            &self.terminal,
            &self.status_ts_ms,
            &self.version,
            &self.last_seq_sql,
            body,
        ];
        let mut params = row.to_vec();
        if self.creating {
            params.extend_from_slice(&[
                &self.lease_owner,
                &self.lease_until_ms,
                &self.seqs,
                bodies,
                &self.lasts,
                &NOTIFY_CHANNEL,
                notice,
            ]);
        } else {
            params.extend_from_slice(&[
                &self.expected,
                &self.keep_lease,
                &self.lease_owner,
                &self.lease_until_ms,
                &self.seqs,
                bodies,
                &self.lasts,
                &self.push,
            ]);
        }
        params
    }
}

/// Polls `futures` in their order until every one is done and returns their outputs in
/// that order. tokio-postgres sends a request when its future is first polled, so the
/// requests leave in this order, in one flight, and PostgreSQL runs them in this order.
async fn in_order<T>(mut futures: Vec<Pin<Box<dyn Future<Output = T> + Send + '_>>>) -> Vec<T> {
    let mut outputs: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    poll_fn(|cx| {
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                if let Poll::Ready(value) = future.as_mut().poll(cx) {
                    *output = Some(value);
                }
            }
        }
        if outputs.iter().all(Option::is_some) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// The notices of a batch (see "NOTIFY" in the module documentation of the store): one
/// entry per task that got events (a task's commits in a row give one entry, the last),
/// packed into as few payloads under PostgreSQL's limit
/// as they fit in; a payload of one entry is that entry alone, as a single commit sends it.
pub(super) fn notices<'a>(entries: impl Iterator<Item = (&'a TaskKey, u64)>) -> Vec<String> {
    let mut payloads = Vec::new();
    let mut group: Vec<String> = Vec::new();
    let mut group_len = 1; // the closing bracket
    let mut previous: Option<&TaskKey> = None;
    for (key, last_seq) in entries {
        let entry = notice(key, last_seq);
        if previous == Some(key) {
            // The same task again (commits in a row to one task): its last entry says it all.
            if let Some(replaced) = group.pop() {
                group_len -= 1 + replaced.len();
            }
        }
        previous = Some(key);
        if !group.is_empty() && group_len + 1 + entry.len() > MAX_PAYLOAD {
            payloads.push(pack(std::mem::take(&mut group)));
            group_len = 1;
        }
        group_len += 1 + entry.len();
        group.push(entry);
    }
    if !group.is_empty() {
        payloads.push(pack(group));
    }
    payloads
}

fn pack(mut group: Vec<String>) -> String {
    match group.len() {
        1 => group.pop().unwrap_or_default(),
        _ => format!("[{}]", group.join(",")),
    }
}

/// The notice of one task's commit: `{"tenant","id","last_seq"}`, or, for a key too long
/// for a payload, the same with no key.
pub(super) fn notice(key: &TaskKey, last_seq: u64) -> String {
    let payload = serde_json::json!({ "tenant": key.tenant, "id": key.id, "last_seq": last_seq }).to_string();
    if payload.len() <= MAX_PAYLOAD {
        return payload;
    }
    serde_json::json!({ "tenant": null, "id": null, "last_seq": last_seq }).to_string()
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

    #[test]
    fn a_batch_notifies_once_with_every_task_it_wrote() {
        let (a, b) = (TaskKey::new("", "a"), TaskKey::new("t", "b"));
        let payloads = notices([(&a, 2), (&b, 5)].into_iter());
        assert_eq!(payloads.len(), 1);
        let payload: serde_json::Value = serde_json::from_str(&payloads[0]).unwrap();
        assert_eq!(
            payload,
            serde_json::json!([{"tenant": "", "id": "a", "last_seq": 2}, {"tenant": "t", "id": "b", "last_seq": 5}])
        );
        assert_eq!(notices([(&a, 2)].into_iter()), [notice(&a, 2)], "one task: its notice alone");
        assert_eq!(notices([(&a, 2), (&a, 4)].into_iter()), [notice(&a, 4)], "one task twice: its last notice");
        assert!(notices(std::iter::empty()).is_empty());
    }

    #[test]
    fn a_batch_too_big_for_one_payload_is_split_and_loses_no_task() {
        let keys: Vec<TaskKey> = (0..400).map(|n| TaskKey::new("tenant", format!("task-{n:05}"))).collect();
        let payloads = notices(keys.iter().map(|key| (key, 1)));
        assert!(payloads.len() > 1, "{} payloads", payloads.len());
        let mut seen = Vec::new();
        for payload in &payloads {
            assert!(payload.len() <= MAX_PAYLOAD, "{} bytes", payload.len());
            let value: serde_json::Value = serde_json::from_str(payload).unwrap();
            let entries = value.as_array().cloned().unwrap_or_else(|| vec![value]);
            seen.extend(entries.into_iter().map(|entry| entry["id"].as_str().unwrap().to_owned()));
        }
        assert_eq!(seen, keys.iter().map(|key| key.id.clone()).collect::<Vec<_>>());
    }
}
