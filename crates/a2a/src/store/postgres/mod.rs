//! The PostgreSQL store, for several server processes sharing one database.
//!
//! It keeps the records of [`Store`] in the same shape as the SQLite store, with the
//! differences that store's module documentation announces: identity columns for the
//! outbox and the dead letters, `BYTEA` bodies, `BOOLEAN` flags, and `COLLATE "C"` on
//! every key column so that ids compare byte by byte, as SQLite and the memory store
//! compare them: the same list order and the same cursors on every backend.
//!
//! **Concurrency.** Transactions run at READ COMMITTED. An update reads its task with
//! `SELECT … FOR UPDATE`, so a concurrent commit to the same task (from this process or
//! another) waits for the first and then sees its version; the store checks it
//! (`crate::store::commit::check`, the check of every store) and the update repeats
//! `WHERE version = $expected`. Two creators of one task meet in the primary key
//! (`INSERT … ON CONFLICT DO NOTHING`): the second waits for the first and gets
//! [`StoreError::Exists`]. Delivery claims take the due outbox rows with
//! `FOR UPDATE SKIP LOCKED`, so workers in several processes never wait on each other and
//! never lease one delivery twice. Idempotency keys are claimed with
//! `INSERT … ON CONFLICT DO NOTHING`.
//!
//! **Group commit.** As in the SQLite store, commits queue up and a committer takes every
//! queued commit (up to [`MAX_BATCH`]) into one transaction, in one or two round trips
//! (`commit.rs`: the locks of the tasks it updates, then every write, one notice and
//! `COMMIT` in one flight); a commit whose statement fails is answered with its error and
//! the rest of the batch runs again without it. Up to
//! [`PostgresOptions::commit_lanes`] committers run at once, each on its own connection,
//! so commits to different tasks are not held behind one connection. A batch locks and
//! writes its tasks sorted by key (a stable sort: one task's commits keep their order),
//! so every transaction takes its row locks in the same order and two batches never
//! deadlock. A create alone is one statement. Each caller is answered once the
//! transaction has committed; if `COMMIT` fails, every commit of the batch fails with it. The committer runs as a task of its own, so a caller that goes
//! away does not stop it: a cancelled commit may still be stored, as with SQLite.
//! [`PostgresStore::commit_batch`] runs a given batch directly.
//!
//! **NOTIFY.** A commit transaction that appends events also runs `pg_notify` on
//! [`NOTIFY_CHANNEL`] inside the transaction (so the notice is sent when, and only if,
//! the transaction commits), once for the whole batch, with the payload
//! `{"tenant":"…","id":"…","last_seq":N}` for one task, or a JSON array of those for
//! several (`N` is the highest sequence number of the task after the batch; a batch too
//! big for one payload sends several). A key too long for
//! PostgreSQL's payload limit (8,000 bytes) is sent as `{"tenant":null,"id":null,
//! "last_seq":N}`: some task has new events, and a listener must re-read every task it
//! follows. [`PgListener`] (`listener.rs`) is the receiving side: one connection per
//! server process, outside the pool, that `LISTEN`s on this channel and on
//! [`CONTROL_CHANNEL`] (messages between replicas, sent with
//! [`PostgresStore::notify_control`]), and reconnects with backoff when the connection
//! drops; the server's replica bus feeds what it hears to live subscribers and to the
//! push worker (`crate::server`).
//!
//! **Schema.** The table `a2a_schema` holds the schema version. [`PostgresStore::connect`]
//! migrates in one transaction under an advisory lock (two processes starting at once
//! migrate once), step by step from the version found to [`SCHEMA_VERSION`], and refuses
//! a newer version. Tables are created in the connection's `search_path` (`public`
//! unless the connection string sets `options=-csearch_path=…`), all named `a2a_*`.
//!
//! **Leases and retention.** Several replicas sweep one database: every replica lists
//! the same expired leases, and the version check of the commit that ends an orphaned
//! turn lets exactly one of them end it (`crate::recovery`). Purges take their rows with
//! `FOR UPDATE SKIP LOCKED`, so concurrent purges split the work (`recovery.rs`).
//!
//! **Pool.** Connections come from a [`deadpool_postgres`] pool: it caches prepared
//! statements per connection (every query here is prepared once per connection, not per
//! call), drops connections that closed, and bounds the wait for a free connection. The
//! store connects without TLS; for TLS build a pool with a TLS connector and use
//! [`PostgresStore::from_pool`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio::sync::{oneshot, Semaphore};
use tokio_postgres::NoTls;

use super::{
    limit_i64, to_i64, to_u64, BoxFuture, Commit, Committed, DeadLetter, Delivery, EventPage, IdempotencyClaim,
    ListPage, ListQuery, Purged, PushConfigRecord, Store, StoreError, TaskKey, TaskRecord,
};

pub use deadpool_postgres;
pub use tokio_postgres;

mod claims;
mod commit;
mod listener;
mod recovery;
mod schema;
mod tasks;

pub use listener::{ListenOptions, ListenStatus, NoticeSink, PgListener, APPLICATION_NAME, CONTROL_CHANNEL};
pub use schema::SCHEMA_VERSION;

/// The most commits one transaction takes from the queue.
pub const MAX_BATCH: usize = 256;

/// The channel of the notices a commit sends (see "NOTIFY" above).
pub const NOTIFY_CHANNEL: &str = "agentproto_a2a_events";

/// The settings of a [`PostgresStore`].
#[derive(Debug, Clone, PartialEq)]
pub struct PostgresOptions {
    /// Connections the pool opens at most.
    pub max_connections: usize,
    /// Commit transactions that run at once (at least 1, at most `max_connections`).
    pub commit_lanes: usize,
    /// How long a call waits for a free connection before failing.
    pub wait_timeout: Duration,
    /// How long opening a connection may take.
    pub connect_timeout: Duration,
}

impl Default for PostgresOptions {
    /// 16 connections, 4 commit lanes, 30 s to get a connection, 10 s to open one.
    fn default() -> Self {
        PostgresOptions {
            max_connections: 16,
            commit_lanes: 4,
            wait_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// The store on one PostgreSQL database. Cloning it gives another handle on the same
/// pool and commit queue.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

/// A commit waiting for a committer, and where its outcome goes.
type Queued = (Commit, oneshot::Sender<Result<Committed, StoreError>>);

#[derive(Debug)]
struct Inner {
    pool: Pool,
    /// Commits not yet taken into a transaction (see "Group commit").
    queue: Mutex<Vec<Queued>>,
    /// One permit per commit lane.
    lanes: Semaphore,
    /// What the store asked of PostgreSQL.
    stats: Stats,
}

/// What a [`PostgresStore`] has asked of PostgreSQL since it was made: counts that time
/// does not blur, for benchmarks (`bench/a2a/pg_cost.py`) and tests. Read with
/// [`PostgresStore::stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PgStats {
    /// Commits applied or refused ([`Store::commit`] and [`PostgresStore::commit_batch`]).
    pub commits: u64,
    /// Transactions the commits ran in (a batch of commits shares one).
    pub transactions: u64,
    /// Exchanges with PostgreSQL the commits waited for: the statements sent together in
    /// one flight count once, and so do the statements prepared on a new connection.
    pub round_trips: u64,
    /// Statements the commits ran (`BEGIN` and `COMMIT` included).
    pub statements: u64,
    /// Every other call of the store (reads, push configs, deliveries, idempotency keys,
    /// leases, purges): a statement or a few each.
    pub other_calls: u64,
}

/// The counters behind [`PgStats`].
#[derive(Debug, Default)]
pub(super) struct Stats {
    commits: AtomicU64,
    transactions: AtomicU64,
    round_trips: AtomicU64,
    statements: AtomicU64,
    other_calls: AtomicU64,
}

impl Stats {
    /// One round trip carrying `statements` statements.
    pub(super) fn flight(&self, statements: usize) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        self.statements.fetch_add(statements as u64, Ordering::Relaxed);
    }

    pub(super) fn transaction(&self) {
        self.transactions.fetch_add(1, Ordering::Relaxed);
    }

    fn read(&self) -> PgStats {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        PgStats {
            commits: get(&self.commits),
            transactions: get(&self.transactions),
            round_trips: get(&self.round_trips),
            statements: get(&self.statements),
            other_calls: get(&self.other_calls),
        }
    }
}

pub(super) fn backend(context: &str, error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("postgres {context}: {error}"))
}

/// A driver error with the server's message and SQLSTATE when there is one (the
/// driver's own `Display` says only "db error").
fn pg(context: &str, error: tokio_postgres::Error) -> StoreError {
    match error.as_db_error() {
        Some(db) => backend(context, format_args!("{} (SQLSTATE {})", db.message(), db.code().code())),
        None => backend(context, error),
    }
}

/// Whether `error` is PostgreSQL aborting a transaction that may well succeed if run
/// again: a deadlock victim (SQLSTATE 40P01) or a serialization failure (40001). Read
/// from the text [`pg`] writes, which always ends with the SQLSTATE of a server error.
fn retryable(error: &StoreError) -> bool {
    match error {
        StoreError::Backend(text) => text.ends_with("(SQLSTATE 40P01)") || text.ends_with("(SQLSTATE 40001)"),
        _ => false,
    }
}

fn pool_error(error: deadpool_postgres::PoolError) -> StoreError {
    match error {
        deadpool_postgres::PoolError::Backend(error) => pg("connect", error),
        other => backend("connection pool", other),
    }
}

impl PostgresStore {
    /// Connects to the database `config` names (a `postgresql://` URL or a
    /// `key=value` string, as libpq takes them; a `host` that is a directory means a
    /// Unix socket there) and migrates it to the current schema.
    pub async fn connect(config: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = config.parse().map_err(|e| backend("read the connection string", e))?;
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(options.max_connections.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.connect_timeout))
            .build()
            .map_err(|e| backend("build the connection pool", e))?;
        Self::from_pool(pool, options.commit_lanes).await
    }

    /// A store on a pool built by the caller (for TLS, or other pool settings); migrates
    /// the database like [`PostgresStore::connect`]. `commit_lanes` is clamped to
    /// `1..=` the pool's size.
    pub async fn from_pool(pool: Pool, commit_lanes: usize) -> Result<Self, StoreError> {
        let mut client = pool.get().await.map_err(pool_error)?;
        schema::migrate(&mut client).await?;
        drop(client);
        let lanes = commit_lanes.clamp(1, pool.status().max_size.max(1));
        let inner =
            Inner { pool, queue: Mutex::new(Vec::new()), lanes: Semaphore::new(lanes), stats: Stats::default() };
        Ok(PostgresStore { inner: Arc::new(inner) })
    }

    /// The pool the store runs on.
    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// Commit transactions run so far (a batch is one, unless one of its commits failed a
    /// statement and the rest ran again), through [`Store::commit`] and
    /// [`PostgresStore::commit_batch`] alike.
    pub fn commit_transactions(&self) -> u64 {
        self.inner.stats.transactions.load(Ordering::Relaxed)
    }

    /// What the store has asked of PostgreSQL so far (see [`PgStats`]).
    pub fn stats(&self) -> PgStats {
        self.inner.stats.read()
    }

    /// Applies several commits in one transaction (see "Group commit") and returns their
    /// outcomes in the order given. A commit that fails is answered alone and the others
    /// are still stored; if the transaction itself fails, every commit fails.
    pub async fn commit_batch(&self, commits: Vec<Commit>) -> Vec<Result<Committed, StoreError>> {
        self.inner.commit_batch(commits).await
    }
}

impl Inner {
    fn queue(&self) -> std::sync::MutexGuard<'_, Vec<Queued>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A connection for a call other than a commit (counted as one).
    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.stats.other_calls.fetch_add(1, Ordering::Relaxed);
        self.pool.get().await.map_err(pool_error)
    }

    async fn commit_batch(&self, commits: Vec<Commit>) -> Vec<Result<Committed, StoreError>> {
        self.stats.commits.fetch_add(commits.len() as u64, Ordering::Relaxed);
        match self.pool.get().await {
            Ok(client) => commit::commit_batch(client, commits, &self.stats).await,
            Err(error) => {
                let message = match pool_error(error) {
                    StoreError::Backend(text) => text,
                    other => other.to_string(),
                };
                commits.iter().map(|_| Err(StoreError::Backend(message.clone()))).collect()
            }
        }
    }

    /// Takes a commit lane and commits what is queued, a batch per transaction, until the
    /// queue is empty (at once, if other committers took everything). Every commit is
    /// queued before its committer is started, and each committer empties the queue, so
    /// every queued commit is taken by someone.
    async fn commit_queued(self: Arc<Self>) {
        let Ok(_lane) = self.lanes.acquire().await else { return };
        loop {
            let batch: Vec<Queued> = {
                let mut queue = self.queue();
                let take = queue.len().min(MAX_BATCH);
                queue.drain(..take).collect()
            };
            if batch.is_empty() {
                return;
            }
            let (commits, replies): (Vec<Commit>, Vec<_>) = batch.into_iter().unzip();
            let results = self.commit_batch(commits).await;
            for (reply, result) in replies.into_iter().zip(results) {
                // A caller that went away still had its commit stored.
                let _ = reply.send(result);
            }
        }
    }
}

impl Store for PostgresStore {
    fn commit(&self, commit: Commit) -> BoxFuture<'_, Result<Committed, StoreError>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            // Encoded by the caller, not by the committer that takes the batch.
            let commit = commit.encoded()?;
            let (reply, outcome) = oneshot::channel();
            inner.queue().push((commit, reply));
            // Not awaited: the answer comes through `outcome` from whichever committer
            // takes this commit.
            drop(tokio::spawn(inner.commit_queued()));
            outcome.await.map_err(|_| StoreError::Backend("postgres commit lost: its committer failed".into()))?
        })
    }

    fn get_task(&self, key: &TaskKey) -> BoxFuture<'_, Result<Option<TaskRecord>, StoreError>> {
        let key = key.clone();
        Box::pin(async move {
            let client = self.inner.client().await?;
            tasks::get_task(&client, &key).await
        })
    }

    fn list_tasks(&self, tenant: &str, query: ListQuery) -> BoxFuture<'_, Result<ListPage, StoreError>> {
        let tenant = tenant.to_owned();
        Box::pin(async move {
            let client = self.inner.client().await?;
            tasks::list_tasks(&client, &tenant, &query).await
        })
    }

    fn read_events(&self, key: &TaskKey, after: u64, limit: usize) -> BoxFuture<'_, Result<EventPage, StoreError>> {
        let key = key.clone();
        Box::pin(async move {
            let client = self.inner.client().await?;
            tasks::read_events(&client, &key, after, limit).await
        })
    }

    fn put_push_config(&self, config: PushConfigRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::put_push_config(&client, config).await
        })
    }

    fn get_push_config(&self, task: &TaskKey, id: &str) -> BoxFuture<'_, Result<Option<PushConfigRecord>, StoreError>> {
        let (task, id) = (task.clone(), id.to_owned());
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::get_push_config(&client, task, id).await
        })
    }

    fn list_push_configs(
        &self,
        task: &TaskKey,
        after: Option<&str>,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<PushConfigRecord>, StoreError>> {
        let (task, after) = (task.clone(), after.map(str::to_owned));
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::list_push_configs(&client, &task, after.as_deref(), limit).await
        })
    }

    fn delete_push_config(&self, task: &TaskKey, id: &str) -> BoxFuture<'_, Result<bool, StoreError>> {
        let (task, id) = (task.clone(), id.to_owned());
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::delete_push_config(&client, &task, &id).await
        })
    }

    fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<Delivery>, StoreError>> {
        Box::pin(async move {
            let mut client = self.inner.client().await?;
            claims::claim_deliveries(&mut client, now_ms, lease_ms, limit).await
        })
    }

    fn delivery_done(&self, id: i64) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::delivery_done(&client, id).await
        })
    }

    fn delivery_retry(&self, id: i64, retry_at_ms: i64, error: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let error = error.to_owned();
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::delivery_retry(&client, id, retry_at_ms, &error).await
        })
    }

    fn delivery_dead(&self, id: i64, at_ms: i64, error: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let error = error.to_owned();
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::delivery_dead(&client, id, at_ms, &error).await
        })
    }

    fn dead_letters(&self, limit: usize) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::dead_letters(&client, limit).await
        })
    }

    fn next_delivery_due(&self) -> BoxFuture<'_, Result<Option<i64>, StoreError>> {
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::next_delivery_due(&client).await
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
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::claim_idempotency(&client, &tenant, &key, &fingerprint, now_ms).await
        })
    }

    fn complete_idempotency(&self, tenant: &str, key: &str, result: Vec<u8>) -> BoxFuture<'_, Result<(), StoreError>> {
        let (tenant, key) = (tenant.to_owned(), key.to_owned());
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::complete_idempotency(&client, &tenant, &key, &result).await
        })
    }

    fn release_idempotency(&self, tenant: &str, key: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let (tenant, key) = (tenant.to_owned(), key.to_owned());
        Box::pin(async move {
            let client = self.inner.client().await?;
            claims::release_idempotency(&client, &tenant, &key).await
        })
    }

    fn renew_leases(&self, owner: &str, keys: Vec<TaskKey>, until_ms: i64) -> BoxFuture<'_, Result<usize, StoreError>> {
        let owner = owner.to_owned();
        Box::pin(async move {
            let client = self.inner.client().await?;
            recovery::renew_leases(&client, &owner, &keys, until_ms).await
        })
    }

    fn release_lease(&self, key: &TaskKey, owner: &str, expire: bool) -> BoxFuture<'_, Result<bool, StoreError>> {
        let (key, owner) = (key.clone(), owner.to_owned());
        Box::pin(async move {
            let client = self.inner.client().await?;
            recovery::release_lease(&client, &key, &owner, expire).await
        })
    }

    fn expired_leases(&self, now_ms: i64, limit: usize) -> BoxFuture<'_, Result<Vec<TaskKey>, StoreError>> {
        Box::pin(async move {
            let client = self.inner.client().await?;
            recovery::expired_leases(&client, now_ms, limit).await
        })
    }

    fn purge(&self, before_ms: i64, limit: usize) -> BoxFuture<'_, Result<Purged, StoreError>> {
        Box::pin(async move {
            let client = self.inner.client().await?;
            recovery::purge(&client, before_ms, limit).await
        })
    }
}
