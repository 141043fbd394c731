//! The SQLite store, the default one.
//!
//! **Durability.** The database runs in WAL mode with `synchronous=FULL`: a commit is
//! written to the write-ahead log and the log is fsynced before [`Store::commit`]
//! returns, so an acknowledged commit survives a SIGKILL of the process (and a power
//! loss).
//!
//! **Group commit.** Commits queue up in the order [`Store::commit`] is called, and one
//! thread of the store's own, the committer, takes every queued commit (up to
//! [`MAX_BATCH`]) into one transaction, and pays one fsync for all of them. Each caller
//! is answered only after that transaction is durable, so "acknowledged means durable"
//! holds for every commit of a batch. Under load the batch is whatever arrived during
//! the previous fsync; a lone commit is a batch of one and waits for nobody. One
//! long-lived thread, rather than a blocking task per commit, matters under load: the
//! callers of a batch never queue up as parked threads on the writer's lock (hundreds
//! were spawned, and woken for nothing, at 50 connections). The committer starts with
//! the first commit and ends, after answering what is queued, when the last clone of
//! the store is dropped. `busy_timeout` makes a writer wait for another process's write lock instead
//! of failing at once, and foreign keys are on, so that deleting a task removes its
//! events, push configs and queued deliveries with it.
//!
//! **Large commits.** A commit is encoded on its caller's thread before it is queued, so
//! many large ones at once (tasks holding megabytes of text) would all be encoded and
//! waiting together. A commit of `LARGE_COMMIT` (1 MiB) or more first waits for room in
//! a budget of such bytes in flight (`LARGE_IN_FLIGHT_KIB`), held until it is committed:
//! backpressure, not refusal. Its place in the queue is then taken when it gets room,
//! not when it is called (callers await each commit before the next one of a task).
//!
//! **Checkpoints** never run inside a commit: the writer has `wal_autocheckpoint = 0`,
//! and a checkpointer thread of the store's own copies the log into the database file
//! and keeps the log bounded (`checkpoint.rs`). It ends with the committer.
//!
//! A commit its checks refuse (a version conflict, a missing task) has written nothing
//! and the other commits of its batch stand. One that fails halfway through its writes
//! makes the committer roll the transaction back and run the batch again with each
//! commit in a savepoint, so that only that one is undone: savepoints on every commit
//! would make SQLite copy each page a commit touches into a statement journal first.
//!
//! **Blocking.** rusqlite is synchronous, so every call other than a commit runs on
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
//! migrates from the version found (0 for an empty file) to the current one (2: turn
//! leases and the retention indexes) in one transaction, and refuses a newer version.
//!
//! **Leases and retention.** Renewing and releasing a turn lease and purging expired
//! tasks take the writer connection like any write, outside the commit queue
//! (`recovery.rs`). A purge deletes a bounded batch per transaction; the pages it frees
//! are reused, so the file stops growing once tasks expire as fast as they are made.
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
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, TransactionBehavior};

use super::{
    limit_i64, to_i64, to_u64, BoxFuture, Commit, Committed, DeadLetter, Delivery, EventPage, EventRecord,
    IdempotencyClaim, LeaseChange, ListPage, ListQuery, Purged, PushConfigRecord, Store, StoreError, TaskBody, TaskKey,
    TaskRecord, TurnLease,
};

mod checkpoint;
mod claims;
mod recovery;
mod schema;
mod tasks;
#[cfg(test)]
mod tests;

use checkpoint::{Checkpointer, Checkpoints, Limits, LIMITS, PAGES_PER_BATCH, PAGES_PER_COMMIT, ROW_BYTES};
use claims::*;
use recovery::*;
use schema::*;
use tasks::*;

/// The store on one SQLite database (a file, or memory for tests).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: Arc<Pool>,
    committer: Arc<Committer>,
    /// The bytes of large commits encoded and not yet committed (see "Large commits").
    large: Arc<tokio::sync::Semaphore>,
}

/// A commit from this size on (its task and events as ProtoJSON) is a large one.
const LARGE_COMMIT: usize = 1 << 20;
/// How many bytes of large commits may be encoded and waiting for the committer at once,
/// in KiB (the semaphore's unit). A larger commit waits for all of it.
const LARGE_IN_FLIGHT_KIB: u32 = 24 << 10;

/// The most commits one transaction takes from the queue.
pub const MAX_BATCH: usize = 256;

/// A commit waiting for the writer, and where its outcome goes.
type Queued = (Commit, oneshot::Sender<Result<Committed, StoreError>>);

#[derive(Debug)]
struct Pool {
    writer: Mutex<Connection>,
    /// Empty for an in-memory database: reads then go to the writer.
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    /// Commits not yet taken into a transaction (see "Group commit").
    queue: Mutex<Vec<Queued>>,
    /// Signalled when a commit is queued or the store is closed.
    queued: Condvar,
    /// Set when the last clone of the store is dropped: the committer stops once the
    /// queue is empty.
    closed: AtomicBool,
    /// Batches committed so far (the tests read it).
    transactions: AtomicU64,
    /// What the committer tells the checkpointer (a file database only; see
    /// `checkpoint.rs`).
    checkpoints: Option<Arc<Checkpoints>>,
}

impl Pool {
    fn new(writer: Connection, readers: Vec<Mutex<Connection>>, checkpoints: Option<Arc<Checkpoints>>) -> Pool {
        Pool {
            checkpoints,
            writer: Mutex::new(writer),
            readers,
            next_reader: AtomicUsize::new(0),
            queue: Mutex::new(Vec::new()),
            queued: Condvar::new(),
            closed: AtomicBool::new(false),
            transactions: AtomicU64::new(0),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Vec<Queued>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The committer thread: commits what is queued whenever there is some, until the
    /// store is closed and nothing is left.
    fn commit_until_closed(&self) {
        loop {
            {
                let mut queue = self.queue();
                while queue.is_empty() && !self.closed.load(Ordering::Acquire) {
                    queue = self.queued.wait(queue).unwrap_or_else(PoisonError::into_inner);
                }
                if queue.is_empty() {
                    return;
                }
            }
            self.commit_queued();
        }
    }

    /// Takes the writer and commits what is queued, a batch per transaction, until the
    /// queue is empty.
    fn commit_queued(&self) {
        loop {
            let Ok(mut writer) = self.writer.lock() else {
                for (_, reply) in self.queue().drain(..) {
                    let _ = reply.send(Err(StoreError::Backend("sqlite connection lock poisoned".into())));
                }
                return;
            };
            let batch: Vec<Queued> = {
                let mut queue = self.queue();
                let take = queue.len().min(MAX_BATCH);
                queue.drain(..take).collect()
            };
            if batch.is_empty() {
                return;
            }
            let (commits, replies): (Vec<Commit>, Vec<_>) = batch.into_iter().unzip();
            let logged = commits.iter().map(log_bytes).fold(PAGES_PER_BATCH, u64::saturating_add);
            let results = commit_batch(&mut writer, commits);
            self.transactions.fetch_add(1, Ordering::Relaxed);
            drop(writer);
            for (reply, result) in replies.into_iter().zip(results) {
                // A caller that went away still had its commit stored (see "Blocking").
                let _ = reply.send(result);
            }
            if let Some(checkpoints) = &self.checkpoints {
                checkpoints.wrote(logged);
            }
        }
    }
}

/// About the bytes a commit gives the write-ahead log (it decides only when to
/// checkpoint).
fn log_bytes(commit: &Commit) -> u64 {
    let bodies = commit.task.body.len() + commit.events.iter().map(|(body, _)| body.len()).sum::<usize>();
    u64::try_from(bodies).unwrap_or(u64::MAX).saturating_add(PAGES_PER_COMMIT)
}

/// Starts the committer thread with the first commit, and stops it when the last clone
/// of the store goes (and then the checkpointer, if there is one).
#[derive(Debug)]
struct Committer {
    pool: Arc<Pool>,
    thread: OnceLock<std::io::Result<JoinHandle<()>>>,
    /// Dropped after the committer thread is joined (fields drop after `drop` runs).
    _checkpointer: Option<Checkpointer>,
}

impl Committer {
    /// Whether the committer thread runs (started now if it was not); `false` only when
    /// the system refused a thread.
    fn running(&self) -> bool {
        let started = self.thread.get_or_init(|| {
            let pool = Arc::clone(&self.pool);
            std::thread::Builder::new()
                .name("agentproto-sqlite-commit".into())
                .spawn(move || pool.commit_until_closed())
        });
        started.is_ok()
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        {
            // Under the queue's lock, so that the committer cannot miss it between its
            // check and its wait.
            let _queue = self.pool.queue();
            self.pool.closed.store(true, Ordering::Release);
        }
        self.pool.queued.notify_all();
        if let Some(Ok(thread)) = self.thread.take() {
            // Quick: it answers what is queued (every caller is gone or answered by
            // then) and returns. Joined so that the writer connection is closed when
            // the store is dropped.
            let _ = thread.join();
        }
    }
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

impl SqliteStore {
    /// Opens (creating it if needed) the database at `path` and migrates it to the
    /// current schema. This blocks while it opens and migrates; call it before serving,
    /// or inside `spawn_blocking`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        SqliteStore::open_with(path.as_ref(), LIMITS)
    }

    /// [`SqliteStore::open`] with the given checkpoint limits.
    fn open_with(path: &Path, limits: Limits) -> Result<Self, StoreError> {
        let path: PathBuf = path.to_owned();
        let open = |purpose: &str| {
            Connection::open(&path).map_err(|e| backend(&format!("open {}{purpose}", path.display()), e))
        };
        let writer = open("")?;
        configure(&writer, false)?;
        migrate(&writer)?;
        // Checkpoints are the checkpointer's (checkpoint.rs), never inside a commit.
        writer.pragma_update(None, "wal_autocheckpoint", 0).map_err(|e| backend("set wal_autocheckpoint", e))?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            // Opened read-write (a read-only connection cannot always map the WAL index)
            // but set to query_only.
            let reader = open(" for reading")?;
            configure(&reader, true)?;
            readers.push(Mutex::new(reader));
        }
        let checkpoints = Arc::new(Checkpoints::new(limits));
        let pool = Arc::new(Pool::new(writer, readers, Some(Arc::clone(&checkpoints))));
        let checkpointer = Checkpointer::start(checkpoints, Arc::clone(&pool), open(" for checkpoints")?)?;
        Ok(SqliteStore::with_pool(pool, Some(checkpointer)))
    }

    /// A fresh database in memory, gone when the store is dropped.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let writer = Connection::open_in_memory().map_err(|e| backend("open in memory", e))?;
        configure(&writer, false)?;
        migrate(&writer)?;
        Ok(SqliteStore::with_pool(Arc::new(Pool::new(writer, Vec::new(), None)), None))
    }

    fn with_pool(pool: Arc<Pool>, checkpointer: Option<Checkpointer>) -> Self {
        let committer =
            Arc::new(Committer { pool: Arc::clone(&pool), thread: OnceLock::new(), _checkpointer: checkpointer });
        let large = Arc::new(tokio::sync::Semaphore::new(LARGE_IN_FLIGHT_KIB as usize));
        SqliteStore { pool, committer, large }
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
        let Some(checkpoints) = self.checkpoints.as_ref().filter(|_| matches!(access, Access::Write)) else {
            return work(&mut connection);
        };
        // A write outside the commit queue (a lease, a push config, a purge) grows the
        // log too: it counts like a batch of commits.
        let changes = connection.total_changes();
        let done = work(&mut connection);
        let rows = connection.total_changes().saturating_sub(changes);
        checkpoints.wrote(PAGES_PER_BATCH.saturating_add(rows.saturating_mul(ROW_BYTES)));
        done
    }
}

impl SqliteStore {
    /// A commit, held back first while large commits fill their room (see "Large
    /// commits").
    fn gated_commit(&self, mut commit: Commit) -> BoxFuture<'_, Result<Committed, StoreError>> {
        // Each body is encoded here once, unless it passes LARGE_COMMIT on the way: then
        // only a large body's length is counted (a pass without keeping the bytes). A large
        // task is left decoded: the committer writes it straight into its row.
        let small = crate::text::escaping_once(|| {
            for (body, _) in &mut commit.events {
                body.encode_within(LARGE_COMMIT)?;
            }
            commit.task.body.encode_within(LARGE_COMMIT)
        });
        let stream_task = match small {
            Ok(small) => !small,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let size = commit.task.body.len() + commit.events.iter().map(|(body, _)| body.len()).sum::<usize>();
        if size >= LARGE_COMMIT {
            // Waits for room among the large commits before it is encoded: backpressure,
            // not refusal (see "Large commits").
            let kib = u32::try_from(size.div_ceil(1024)).unwrap_or(u32::MAX).min(LARGE_IN_FLIGHT_KIB);
            let large = Arc::clone(&self.large);
            return Box::pin(async move {
                let _room = large
                    .acquire_many_owned(kib)
                    .await
                    .map_err(|_| StoreError::Backend("sqlite large-commit gate closed".into()))?;
                self.queue_commit(commit, stream_task).await
            });
        }
        self.queue_commit(commit, stream_task)
    }

    /// Encodes `commit` and queues it for the committer (in the order of these calls);
    /// a `stream_task` commit's task is left decoded, for the committer to write into
    /// its row as it encodes it (`tasks.rs`), never whole in memory.
    fn queue_commit(&self, mut commit: Commit, stream_task: bool) -> BoxFuture<'_, Result<Committed, StoreError>> {
        // Encoded here, on the caller's thread, so that the one committer thread does
        // only what must be serial.
        let encoded = crate::text::escaping_once(|| {
            if !stream_task {
                commit.task.body.encode()?;
            }
            for (body, _) in &mut commit.events {
                body.encode()?;
            }
            Ok::<_, StoreError>(())
        });
        if let Err(e) = encoded {
            return Box::pin(std::future::ready(Err(e)));
        }
        if !self.committer.running() {
            let refused = StoreError::Backend("sqlite committer thread could not be started".into());
            return Box::pin(std::future::ready(Err(refused)));
        }
        // Queued now, not when the future is first polled: commits are taken in the
        // order of these calls.
        let (reply, outcome) = oneshot::channel();
        self.pool.queue().push((commit, reply));
        self.pool.queued.notify_one();
        Box::pin(async move {
            outcome.await.map_err(|_| StoreError::Backend("sqlite commit lost: its committer failed".into()))?
        })
    }
}

impl Store for SqliteStore {
    fn commit(&self, commit: Commit) -> BoxFuture<'_, Result<Committed, StoreError>> {
        self.gated_commit(commit)
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

    fn renew_leases(&self, owner: &str, keys: Vec<TaskKey>, until_ms: i64) -> BoxFuture<'_, Result<usize, StoreError>> {
        let owner = owner.to_owned();
        self.run(Access::Write, move |connection| renew_leases_tx(connection, &owner, &keys, until_ms))
    }

    fn release_lease(&self, key: &TaskKey, owner: &str, expire: bool) -> BoxFuture<'_, Result<bool, StoreError>> {
        let (key, owner) = (key.clone(), owner.to_owned());
        self.run(Access::Write, move |connection| release_lease_tx(connection, &key, &owner, expire))
    }

    fn expired_leases(&self, now_ms: i64, limit: usize) -> BoxFuture<'_, Result<Vec<TaskKey>, StoreError>> {
        self.run(Access::Read, move |connection| expired_leases_read(connection, now_ms, limit))
    }

    fn purge(&self, before_ms: i64, limit: usize) -> BoxFuture<'_, Result<Purged, StoreError>> {
        self.run(Access::Write, move |connection| purge_tx(connection, before_ms, limit))
    }
}
