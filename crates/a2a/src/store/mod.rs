//! Where tasks, their event logs, push configurations, the push outbox and
//! idempotency keys live.
//!
//! The store never parses protocol JSON: a task is kept as a [`TaskBody`] next to the few
//! columns the store must index or order by (tenant, id, context, state, status
//! timestamp), and an event as an [`EventBody`] with a per-task sequence number. Either
//! body is its ProtoJSON bytes or the decoded value they are written from; a database
//! store asks for the bytes, the memory store keeps what it is given. The typed layer
//! above (`crate::tasks`) decodes. This keeps one store
//! implementation per backend (memory, SQLite, PostgreSQL) small, and lets
//! several server processes share one database: every write that changes a task is one
//! [`Store::commit`], which also appends the task's events and queues their push
//! deliveries in the same transaction, with optimistic concurrency on the task version.
//!
//! Two more things keep a durable store from filling up with the dead: a task whose turn
//! is running carries a [`TurnLease`] (renewed by the replica running the turn; a task
//! whose lease ran out lost its turn, see `crate::recovery`), and [`Store::purge`]
//! deletes terminal tasks past their retention, with everything that belongs to them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::v1::{StreamResponse, Task};

pub(crate) mod commit;
pub mod memory;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sqlite")]
pub mod sqlite;

/// A sequence number or version as the SQL stores keep it (`BIGINT`).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn to_i64(value: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::Backend(format!("{what} {value} is out of range")))
}

/// A stored `BIGINT` read back as a sequence number or version.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn to_u64(value: i64, what: &str) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::Backend(format!("stored {what} {value} is negative")))
}

/// A page size as an SQL `LIMIT`.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn limit_i64(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// A boxed future, so that `Arc<dyn Store>` works.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A task's identity: the tenant it belongs to (`""` for the default tenant) and its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskKey {
    /// The tenant (`""` for the default one).
    pub tenant: String,
    /// The task id, unique within its tenant.
    pub id: String,
}

impl TaskKey {
    /// The key of task `id` in `tenant`.
    pub fn new(tenant: impl Into<String>, id: impl Into<String>) -> Self {
        TaskKey { tenant: tenant.into(), id: id.into() }
    }
}

/// One task as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// Which task this is.
    pub key: TaskKey,
    /// The context the task belongs to (the `ListTasks` filter).
    pub context_id: String,
    /// The proto enum name of the current state (`TASK_STATE_WORKING`).
    pub state: String,
    /// Whether `state` is terminal; terminal tasks are the only ones a store may evict.
    pub terminal: bool,
    /// The status timestamp in milliseconds since the Unix epoch: the list order.
    pub status_ts_ms: i64,
    /// Incremented by every commit; the first commit stores version 1.
    pub version: u64,
    /// The whole task (history and artifacts included), as ProtoJSON bytes or decoded.
    pub body: TaskBody,
    /// The lease of the turn running on the task, if one is (as stored; a commit writes
    /// what [`Commit::lease`] says, not this field).
    pub lease: Option<TurnLease>,
}

/// A value as a store holds it: its ProtoJSON bytes, the decoded value those bytes are
/// written from when asked for, or both. Cheap to clone (shared).
///
/// A database store asks for the bytes when it commits ([`Commit::encoded`]); the
/// in-memory store keeps what it is given, so a task written often and read rarely (each
/// update of a running turn) is not encoded at each write nor decoded when read back, and
/// an event nobody streams or pushes is never encoded, its text still shared with the
/// task it was made from ([`crate::Text`]).
#[derive(Clone)]
pub struct Body<T>(Repr<T>);

#[derive(Clone)]
enum Repr<T> {
    Bytes(bytes::Bytes),
    Decoded(Arc<T>),
    /// Encoded for readers, still decoded for whoever looks inside (the server tells
    /// whether an event ends a turn without decoding it again).
    Both(Arc<T>, bytes::Bytes),
}

/// A task as a store holds it (see [`Body`]).
pub type TaskBody = Body<Task>;

/// One `StreamResponse` of a task's log as a store holds it (see [`Body`]).
pub type EventBody = Body<StreamResponse>;

impl<T: serde::Serialize> Body<T> {
    /// A body that is these ProtoJSON bytes.
    pub fn from_bytes(bytes: impl Into<bytes::Bytes>) -> Self {
        Body(Repr::Bytes(bytes.into()))
    }

    /// A body that is this value, encoded only when its bytes are asked for.
    pub fn from_value(value: impl Into<Arc<T>>) -> Self {
        Body(Repr::Decoded(value.into()))
    }

    /// The ProtoJSON bytes: shared, or encoded now for a body made from a value.
    pub fn bytes(&self) -> Result<bytes::Bytes, StoreError> {
        match &self.0 {
            Repr::Bytes(bytes) | Repr::Both(_, bytes) => Ok(bytes.clone()),
            Repr::Decoded(value) => serde_json::to_vec(&**value)
                .map(bytes::Bytes::from)
                .map_err(|e| StoreError::Backend(format!("a stored value does not encode: {e}"))),
        }
    }

    /// Gives this body its bytes, when it has none yet: the value is encoded now (and
    /// stays decoded beside them).
    pub fn encode(&mut self) -> Result<(), StoreError> {
        if let Repr::Decoded(value) = &self.0 {
            self.0 = Repr::Both(value.clone(), self.bytes()?);
        }
        Ok(())
    }

    /// Gives this body its bytes when they come to at most `limit`: a value is encoded
    /// once, and left decoded (the bytes written so far dropped) as soon as it passes the
    /// limit. Whether the body has its bytes now.
    #[cfg(feature = "sqlite")]
    pub(crate) fn encode_within(&mut self, limit: usize) -> Result<bool, StoreError> {
        let Repr::Decoded(value) = &self.0 else { return Ok(true) };
        let mut out = Capped { bytes: Vec::new(), limit };
        match serde_json::to_writer(&mut out, &**value) {
            Ok(()) => {
                self.0 = Repr::Both(value.clone(), out.bytes.into());
                Ok(true)
            }
            Err(e) if e.io_error_kind() == Some(std::io::ErrorKind::FileTooLarge) => Ok(false),
            Err(e) => Err(StoreError::Backend(format!("a stored value does not encode: {e}"))),
        }
    }

    /// Whether the body has its bytes (made from them, or encoded since).
    #[cfg(feature = "sqlite")]
    pub(crate) fn is_encoded(&self) -> bool {
        !matches!(self.0, Repr::Decoded(_))
    }

    /// The decoded value, when this body was made from one (no copy, no decode).
    pub fn decoded(&self) -> Option<&Arc<T>> {
        match &self.0 {
            Repr::Bytes(_) => None,
            Repr::Decoded(value) | Repr::Both(value, _) => Some(value),
        }
    }

    /// The length of the bytes, counted without keeping them for a decoded value.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Bytes(bytes) | Repr::Both(_, bytes) => bytes.len(),
            Repr::Decoded(value) => {
                let mut counter = Counter(0);
                serde_json::to_writer(&mut counter, &**value).map_or(0, |()| counter.0)
            }
        }
    }

    /// Whether the bytes are empty (never, for a task or an event).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl TaskBody {
    /// A body that is this task, encoded only when its bytes are asked for.
    pub fn from_task(task: Arc<Task>) -> Self {
        Body::from_value(task)
    }
}

impl EventBody {
    /// A body that is this event, encoded only when its bytes are asked for.
    pub fn from_event(event: impl Into<Arc<StreamResponse>>) -> Self {
        Body::from_value(event)
    }
}

/// A writer that counts what it is given.
/// Bytes written up to a limit: past it, a write fails (`FileTooLarge`).
#[cfg(feature = "sqlite")]
struct Capped {
    bytes: Vec<u8>,
    limit: usize,
}

#[cfg(feature = "sqlite")]
impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.limit {
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<T: serde::Serialize> From<Vec<u8>> for Body<T> {
    fn from(bytes: Vec<u8>) -> Self {
        Body::from_bytes(bytes)
    }
}

impl<T: serde::Serialize + PartialEq> PartialEq for Body<T> {
    /// Bodies are equal when they encode to the same bytes.
    fn eq(&self, other: &Self) -> bool {
        match (self.decoded(), other.decoded()) {
            (Some(a), Some(b)) => a == b,
            _ => matches!((self.bytes(), other.bytes()), (Ok(a), Ok(b)) if a == b),
        }
    }
}

impl<T: serde::Serialize> PartialEq<[u8]> for Body<T> {
    fn eq(&self, other: &[u8]) -> bool {
        matches!(self.bytes(), Ok(b) if b == other)
    }
}

impl<T: serde::Serialize> PartialEq<Vec<u8>> for Body<T> {
    fn eq(&self, other: &Vec<u8>) -> bool {
        *self == **other
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Body<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Repr::Bytes(bytes) | Repr::Both(_, bytes) => write!(f, "Body({})", String::from_utf8_lossy(bytes)),
            Repr::Decoded(value) => write!(f, "Body({value:?})"),
        }
    }
}

/// Who runs a task's turn, and until when it is presumed alive: the replica renews the
/// deadline while the turn runs. Deadlines are milliseconds since the Unix epoch by the
/// writers' clocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnLease {
    /// The replica holding the lease (`""` for a task written before leases existed).
    pub owner: String,
    /// The deadline, in milliseconds since the Unix epoch.
    pub until_ms: i64,
}

/// What a commit does to the task's [`TurnLease`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LeaseChange {
    /// Leaves the stored lease as it is (none, for a new task).
    #[default]
    Keep,
    /// Stores this lease.
    Set(TurnLease),
    /// Removes the lease.
    Clear,
    /// Removes the lease, and refuses the whole commit with [`StoreError::LeaseLive`]
    /// unless the stored task has a lease whose deadline is before this instant: how a
    /// sweeper ends an orphaned turn without ever touching a live one.
    ClearExpired(i64),
}

/// One event of a task's log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// Per task, starting at 1, strictly increasing with no reuse.
    pub seq: u64,
    /// The event: one `StreamResponse`, as ProtoJSON bytes or decoded.
    pub body: EventBody,
    /// The last event of the task: a subscriber's stream ends after it.
    pub last: bool,
}

/// A change to one task: its new record and the events it produces.
#[derive(Debug, Clone)]
pub struct Commit {
    /// The new record. Its `version` field is ignored: the store assigns it.
    pub task: TaskRecord,
    /// `None`: the task must not exist yet (create). `Some(v)`: the stored version must
    /// be `v` (update), otherwise [`StoreError::Conflict`].
    pub expected_version: Option<u64>,
    /// The events (one `StreamResponse` each) and whether each is the last one.
    pub events: Vec<(EventBody, bool)>,
    /// Queue a push delivery of each event for every push config of the task.
    pub push: bool,
    /// What happens to the task's turn lease.
    pub lease: LeaseChange,
}

impl Commit {
    /// The commit with its task and events as bytes, which a database store writes: it
    /// encodes them on the caller's thread, before the commit is queued.
    /// A large text the task and its events share (the message of the task's history
    /// and of its first event) is escaped once for all of them.
    pub fn encoded(mut self) -> Result<Commit, StoreError> {
        crate::text::escaping_once(|| {
            self.task.body.encode()?;
            for (body, _) in &mut self.events {
                body.encode()?;
            }
            Ok(())
        })?;
        Ok(self)
    }
}

/// What a commit stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    /// The version the commit gave the task.
    pub version: u64,
    /// The sequence number given to each event, in order.
    pub events: Vec<EventRecord>,
}

/// A page of a task's log.
#[derive(Debug, Clone, PartialEq)]
pub struct EventPage {
    /// The events of the page, by increasing sequence number.
    pub events: Vec<EventRecord>,
    /// The lowest sequence number still held (0 when the log is empty). When it is
    /// greater than `after + 1`, events were evicted and the reader has a gap.
    pub first_held: u64,
    /// The highest sequence number written so far (0 when none).
    pub last_written: u64,
}

/// The filter and page of `ListTasks`. Order: status timestamp descending, then id
/// descending; the cursor is the `(status_ts_ms, id)` of the last task of the previous
/// page, and the page holds the tasks strictly after it in that order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListQuery {
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state (its proto enum name).
    pub state: Option<String>,
    /// Only tasks whose status timestamp is at or after this instant (ms).
    pub status_after_ms: Option<i64>,
    /// At most this many tasks; 0 returns none (only `total_size`).
    pub page_size: usize,
    /// The cursor: the `(status_ts_ms, id)` of the previous page's last task.
    pub after: Option<(i64, String)>,
}

/// One page of `ListTasks`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The tasks of the page, in list order.
    pub tasks: Vec<TaskRecord>,
    /// How many tasks match the filter, counted before paging.
    pub total_size: u64,
    /// The cursor of the next page, `None` on the last page.
    pub next: Option<(i64, String)>,
}

/// A push configuration as stored: the ProtoJSON bytes of one
/// `TaskPushNotificationConfig` (with its assigned `id`).
#[derive(Debug, Clone, PartialEq)]
pub struct PushConfigRecord {
    /// The task the config belongs to.
    pub task: TaskKey,
    /// The config id, unique within its task.
    pub id: String,
    /// The config's ProtoJSON bytes.
    pub body: Vec<u8>,
}

/// One queued push delivery: an event to POST to one config's URL.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The delivery's row id in the outbox.
    pub id: i64,
    /// The task whose event this is.
    pub task: TaskKey,
    /// The push config it goes to.
    pub config_id: String,
    /// The config's bytes at the time the delivery was claimed.
    pub config: Vec<u8>,
    /// The event's sequence number in the task's log.
    pub seq: u64,
    /// The event's bytes, the body of the POST.
    pub event: Vec<u8>,
    /// Attempts made before this one.
    pub attempts: u32,
}

/// A delivery that was given up on. Its `delivery.attempts` counts every attempt made,
/// the last failed one included.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadLetter {
    /// The delivery given up on.
    pub delivery: Delivery,
    /// Why: the error of the last attempt.
    pub error: String,
    /// When it was given up on, in milliseconds since the Unix epoch.
    pub at_ms: i64,
}

/// The outcome of claiming an idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum IdempotencyClaim {
    /// The key was free and is now held by the caller.
    Claimed,
    /// The key was claimed before, for a request with this fingerprint; `result` is the
    /// stored response once the first request finished (`None` while it runs).
    Seen {
        /// The fingerprint of the request that claimed the key first.
        fingerprint: String,
        /// Its stored response, once it finished.
        result: Option<Vec<u8>>,
    },
}

/// What one [`Store::purge`] deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    /// Terminal tasks, each with its events, push configs and queued deliveries.
    pub tasks: usize,
    /// Idempotency keys older than the retention.
    pub idempotency_keys: usize,
    /// Dead letters older than the retention.
    pub dead_letters: usize,
}

impl Purged {
    /// Whether any kind of row filled a batch of `limit` (so more may be due).
    pub fn full(&self, limit: usize) -> bool {
        self.tasks >= limit || self.idempotency_keys >= limit || self.dead_letters >= limit
    }
}

/// A store operation that failed. The first four are answers the caller acts on;
/// `Backend` is the database failing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A create found the task already there.
    #[error("task {0:?} already exists")]
    Exists(TaskKey),
    /// The task does not exist (or was evicted).
    #[error("task {0:?} not found")]
    NotFound(TaskKey),
    /// An update found another version than it read: someone committed in between.
    #[error("task {key:?} changed concurrently (expected version {expected}, found {found})")]
    Conflict {
        /// The task.
        key: TaskKey,
        /// The version the commit expected.
        expected: u64,
        /// The version stored.
        found: u64,
    },
    /// A [`LeaseChange::ClearExpired`] commit found the lease alive (or absent).
    #[error("task {0:?} has a live turn lease (or none), so its turn was not lost")]
    LeaseLive(TaskKey),
    /// The database failed (I/O, connection, corruption); the text says how.
    #[error("store backend: {0}")]
    Backend(String),
}

/// Everything a server keeps. Implementations must be safe to share between tasks and,
/// for database backends, between processes.
pub trait Store: Send + Sync + 'static {
    /// Applies one change atomically: the task record, its events and their queued push
    /// deliveries.
    fn commit(&self, commit: Commit) -> BoxFuture<'_, Result<Committed, StoreError>>;
    /// The task, or `None` when it does not exist.
    fn get_task(&self, key: &TaskKey) -> BoxFuture<'_, Result<Option<TaskRecord>, StoreError>>;
    /// One page of the tenant's tasks matching `query` (see [`ListQuery`]).
    fn list_tasks(&self, tenant: &str, query: ListQuery) -> BoxFuture<'_, Result<ListPage, StoreError>>;
    /// Events with `seq > after`, at most `limit` of them, in order.
    /// [`StoreError::NotFound`] when the task does not exist (or was evicted).
    fn read_events(&self, key: &TaskKey, after: u64, limit: usize) -> BoxFuture<'_, Result<EventPage, StoreError>>;

    /// Inserts or replaces a push config. The task must exist ([`StoreError::NotFound`]
    /// otherwise); a task's configs go when the task does.
    fn put_push_config(&self, config: PushConfigRecord) -> BoxFuture<'_, Result<(), StoreError>>;
    /// One push config of a task, or `None`.
    fn get_push_config(&self, task: &TaskKey, id: &str) -> BoxFuture<'_, Result<Option<PushConfigRecord>, StoreError>>;
    /// Configs of a task ordered by id, those with `id > after`, at most `limit`.
    fn list_push_configs(
        &self,
        task: &TaskKey,
        after: Option<&str>,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<PushConfigRecord>, StoreError>>;
    /// Returns whether a config was removed.
    fn delete_push_config(&self, task: &TaskKey, id: &str) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// Takes up to `limit` deliveries due at `now_ms`, hiding them from other claimers for
    /// `lease_ms` (a crashed worker's deliveries come back when the lease ends).
    /// Deliveries are taken in the order they were queued, so one config receives a
    /// task's events in sequence order; a new delivery is due at once. A delivery whose
    /// config was deleted since it was queued is dropped instead of returned.
    fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<Delivery>, StoreError>>;
    /// Removes a delivery that succeeded. Here and in the two calls below, an unknown id
    /// (already done, or its task evicted) is not an error.
    fn delivery_done(&self, id: i64) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Records a failed attempt; the delivery is due again at `retry_at_ms`.
    fn delivery_retry(&self, id: i64, retry_at_ms: i64, error: &str) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Moves a delivery to the dead letters.
    fn delivery_dead(&self, id: i64, at_ms: i64, error: &str) -> BoxFuture<'_, Result<(), StoreError>>;
    /// The oldest dead letters first.
    fn dead_letters(&self, limit: usize) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>>;
    /// The earliest instant a queued delivery is due, if any (for the worker's sleep); a
    /// leased delivery counts as due when its lease ends.
    fn next_delivery_due(&self) -> BoxFuture<'_, Result<Option<i64>, StoreError>>;

    /// Atomically claims `(tenant, key)` for a request with `fingerprint`.
    fn claim_idempotency(
        &self,
        tenant: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
    ) -> BoxFuture<'_, Result<IdempotencyClaim, StoreError>>;
    /// Stores the response of the request that claimed the key.
    fn complete_idempotency(&self, tenant: &str, key: &str, result: Vec<u8>) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Frees a claim whose request failed before it created anything.
    fn release_idempotency(&self, tenant: &str, key: &str) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Gives each of `keys` that exists and is not terminal the lease `(owner,
    /// until_ms)`, whatever lease it had (a replica renews the tasks it runs turns of);
    /// returns how many it did. Not a commit: the version does not change, and no event
    /// is written.
    fn renew_leases(&self, owner: &str, keys: Vec<TaskKey>, until_ms: i64) -> BoxFuture<'_, Result<usize, StoreError>>;
    /// Ends `owner`'s lease on a task: removed, or with `expire` kept with a deadline of
    /// 0, so that the next sweep takes the task at once. Nothing changes when the task
    /// has no lease or another owner's; returns whether `owner` held it. Not a commit.
    fn release_lease(&self, key: &TaskKey, owner: &str, expire: bool) -> BoxFuture<'_, Result<bool, StoreError>>;
    /// The tasks whose lease deadline is before `now_ms`, earliest deadline first, at
    /// most `limit`.
    fn expired_leases(&self, now_ms: i64, limit: usize) -> BoxFuture<'_, Result<Vec<TaskKey>, StoreError>>;
    /// Deletes up to `limit` terminal tasks whose status timestamp is before `before_ms`,
    /// oldest first, each with its events, push configs and queued deliveries; and up to
    /// `limit` idempotency keys claimed before `before_ms` and as many dead letters
    /// recorded before it. Non-terminal tasks are never deleted.
    fn purge(&self, before_ms: i64, limit: usize) -> BoxFuture<'_, Result<Purged, StoreError>>;
}

/// Where the replicas of one service send each other control messages (the PostgreSQL
/// store sends them on its control channel; the server's replica bus reads them).
pub trait ControlChannel: Send + Sync + 'static {
    /// Sends `payload` to every replica; returns once it is sent.
    fn send(&self, payload: String) -> BoxFuture<'_, Result<(), StoreError>>;
}

/// How the server answers a store's failure: a missing task is `TaskNotFound`, anything
/// else an internal error.
impl From<StoreError> for crate::errors::A2aError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(k) => crate::errors::A2aError::task_not_found(&k.id),
            other => {
                crate::errors::A2aError::new(crate::errors::ErrorKind::Internal).with_message(format!("store: {other}"))
            }
        }
    }
}
