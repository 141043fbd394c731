//! Push notifications: the outbox worker, its retry policy and the SSRF guard.
//!
//! A commit that produces events queues one outbox row per (event, push config of the
//! task) in the same transaction as the events (see [`crate::store`]). The
//! [`PushWorker`] drains that outbox: it claims due deliveries under a lease, POSTs each
//! event to its config's URL, and records the outcome — done, retry at a later instant,
//! or dead letter.
//!
//! # Guarantees
//!
//! - **At least once.** A delivery leaves the outbox only when a receiver answered 2xx
//!   or it was given up on (dead letter). A worker that crashes or stops mid-attempt
//!   leaves its claimed deliveries leased; they become due again when the lease ends and
//!   whichever worker claims them next sends them again. Receivers therefore see
//!   duplicates and must be idempotent (the spec says they SHOULD be); the event body
//!   identifies the task and the `(task, event)` pair is stable across retries.
//! - **Every event.** Each event of a commit made with `push: true` is delivered to each
//!   config the task had at commit time, not just the latest state.
//! - **Ordered per config, best effort.** Deliveries of one `(task, config)` held by a
//!   worker are attempted one at a time in sequence order, never concurrently. A failed
//!   attempt goes back to the outbox with a delay while the later events of the same
//!   config are still attempted, so a retry can arrive after events that followed it;
//!   two workers (two processes on one database) can likewise interleave. A receiver
//!   that needs order should order by the event itself (status timestamps) rather than
//!   by arrival. Strict head-of-line ordering was not chosen: one failing event would
//!   hold up every later event for up to the whole retry schedule.
//! - **Bounded effort.** An attempt is bounded by [`PushOptions::request_timeout`]; a
//!   delivery is given up after `max_attempts` of [`PushOptions::retry`] attempts, or at
//!   once on a permanent failure (below). The delay between attempts follows that
//!   [`RetryPolicy`], the same type the client retries with (deliveries count as
//!   [`Repeat::Harmless`](crate::retry::Repeat::Harmless): receivers deduplicate).
//!
//! # What counts as what
//!
//! | Result of an attempt | Outcome |
//! |---|---|
//! | 2xx | delivered |
//! | 408, 429, 5xx, timeout, connection or I/O error | retried after a backoff delay, or the `Retry-After` seconds of a 429/503 (capped at `max_backoff`) |
//! | any other 4xx | dead letter at once |
//! | 3xx | dead letter at once: redirects are not followed |
//! | a config that does not decode, an unusable token or credentials, a target the SSRF guard refuses, a non-http(s) URL | dead letter at once |
//!
//! Every dead letter is also logged (the `log` crate, target `agentproto_a2a::push`,
//! level warn), a refusal by the SSRF guard named as such. The server checks a
//! config's URL against the same guard when the config is set and refuses it then
//! (`InvalidParams`), so a refusal here means the name resolves elsewhere than it did.
//!
//! Other 4xx answers are permanent because the receiver understood the request and
//! rejected it (bad token, unknown task, endpoint gone): the same bytes would get the
//! same answer, so retrying would only load the receiver and hide for up to the whole
//! retry schedule the dead letter an operator needs to see. 408 and 429 are the two 4xx
//! codes that say "later" rather than "no". The dead letter keeps the error of the last
//! attempt, with a short excerpt of the receiver's answer.
//!
//! The request is `POST {url}` with `Content-Type: application/a2a+json`,
//! `A2A-Version: 1.0`, the event bytes exactly as stored as the body, the config's token
//! (if any) in both `X-A2A-Notification-Token` and `A2A-Notification-Token` (the SDKs
//! disagree on the name), and `Authorization: {scheme} {credentials}` when the config
//! has authentication.
//! - **SSRF guard on by default.** See [`SsrfGuard`]; redirects are never followed and
//!   system proxies are not used (a proxy would dial the target on our behalf, out of the
//!   guard's sight).

mod guard;
mod send;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::{watch, Notify};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use crate::retry::RetryPolicy;
pub use guard::{classify, AddressClass, Cidr, CidrError, GuardedResolver, Refused, SsrfGuard};
pub use send::{CONTENT_TYPE_A2A, TOKEN_HEADER, TOKEN_HEADER_X, VERSION_HEADER};

use crate::store::{Delivery, Store, TaskKey};
use send::Attempt;

/// How a [`PushWorker`] delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushOptions {
    /// Attempts per delivery (the first included) before it goes to the dead letters,
    /// and the waits between them.
    pub retry: RetryPolicy,
    /// The whole request, connection included, must finish within this.
    pub request_timeout: Duration,
    /// Establishing the TCP connection must finish within this.
    pub connect_timeout: Duration,
    /// How long a claimed delivery stays hidden from other claimers. It should exceed
    /// `request_timeout`; when it runs out before the attempt is recorded, another worker
    /// may send the same event again (a duplicate, never a loss).
    pub lease: Duration,
    /// The most deliveries a worker holds (claimed and not yet recorded) at once.
    pub batch: usize,
    /// The most requests in flight at once.
    pub max_in_flight: usize,
    /// The longest the worker sleeps without looking at the store. A server wakes its
    /// worker ([`PushWorkerHandle::wake`]) after its own commits and, on PostgreSQL, after
    /// every commit of another server on the same database (the replica bus); this
    /// interval is the safety net for anything else that queues deliveries.
    pub poll_interval: Duration,
    /// Networks the SSRF guard lets through even though they are not public.
    pub allow: Vec<Cidr>,
    /// Let loopback targets (`127.0.0.0/8`, `::1`) through; for tests and local setups.
    pub allow_loopback: bool,
}

impl Default for PushOptions {
    /// 8 attempts, backoff from 1 s up to 5 min, 10 s per request (5 s to connect), 60 s
    /// lease, 64 held and 16 in flight, a 5 s store poll, the guard with an empty allow
    /// list.
    fn default() -> Self {
        PushOptions {
            retry: RetryPolicy {
                max_attempts: 8,
                initial_backoff: Duration::from_secs(1),
                max_backoff: Duration::from_secs(300),
            },
            request_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            lease: Duration::from_secs(60),
            batch: 64,
            max_in_flight: 16,
            poll_interval: Duration::from_secs(5),
            allow: Vec::new(),
            allow_loopback: false,
        }
    }
}

impl PushOptions {
    /// The address policy of these options.
    pub fn guard(&self) -> SsrfGuard {
        let guard = SsrfGuard::new(self.allow.clone());
        if self.allow_loopback {
            guard.with_loopback()
        } else {
            guard
        }
    }
}

/// Counters of what a worker did, for metrics and for tests that wait on progress.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushStats {
    /// Attempts answered 2xx.
    pub delivered: u64,
    /// Failed attempts rescheduled.
    pub retried: u64,
    /// Deliveries moved to the dead letters.
    pub dead: u64,
    /// Store calls that failed (claims, outcome records). A delivery whose outcome could
    /// not be recorded comes back after its lease.
    pub store_errors: u64,
    /// The text of the most recent failure of any kind.
    pub last_error: Option<String>,
}

/// Why a worker stopped other than by its shutdown token.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The HTTP client could not be built (TLS roots, resolver).
    #[error("cannot build the push HTTP client: {0}")]
    Client(String),
    /// The worker's task panicked or was aborted.
    #[error("the push worker task failed: {0}")]
    Worker(String),
}

/// Starts push workers.
#[derive(Debug)]
pub struct PushWorker;

impl PushWorker {
    /// Spawns a worker on the current tokio runtime. It runs until `shutdown` is
    /// cancelled; it then starts no new attempt, waits for those in flight (each bounded
    /// by the request timeout), and ends. Deliveries it held but had not started come
    /// back to any worker when their lease ends.
    pub fn spawn(store: Arc<dyn Store>, opts: PushOptions, shutdown: CancellationToken) -> PushWorkerHandle {
        let notify = Arc::new(Notify::new());
        let (stats_tx, stats_rx) = watch::channel(PushStats::default());
        let guard = Arc::new(opts.guard());
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver::new(Arc::clone(&guard))))
            .timeout(opts.request_timeout)
            .connect_timeout(opts.connect_timeout)
            .user_agent(concat!("agentproto-a2a/", env!("CARGO_PKG_VERSION"), " push"))
            .build();
        let task = match client {
            Ok(client) => {
                let worker = Worker {
                    store,
                    policy: opts.retry,
                    opts,
                    client,
                    guard,
                    notify: Arc::clone(&notify),
                    shutdown,
                    stats: stats_tx,
                    held: HashSet::new(),
                    groups: HashMap::new(),
                    ready: VecDeque::new(),
                    running: JoinSet::new(),
                    tasks: HashMap::new(),
                };
                tokio::spawn(async move {
                    worker.run().await;
                    Ok(())
                })
            }
            Err(e) => {
                let message = e.to_string();
                tokio::spawn(async move { Err(PushError::Client(message)) })
            }
        };
        PushWorkerHandle { waker: PushWaker { notify }, stats: stats_rx, task }
    }
}

/// Wakes a worker; cheap to clone and keep next to whatever commits.
#[derive(Debug, Clone)]
pub struct PushWaker {
    notify: Arc<Notify>,
}

impl PushWaker {
    /// Tells the worker that deliveries may be due now. Wake-ups that arrive while the
    /// worker is busy are not lost: the next wait returns at once.
    pub fn wake(&self) {
        self.notify.notify_one();
    }
}

/// A running worker.
#[derive(Debug)]
pub struct PushWorkerHandle {
    waker: PushWaker,
    stats: watch::Receiver<PushStats>,
    task: JoinHandle<Result<(), PushError>>,
}

impl PushWorkerHandle {
    /// Wakes the worker, to be called after a commit that queued deliveries.
    pub fn wake(&self) {
        self.waker.wake();
    }

    /// A clonable waker for the same worker.
    pub fn waker(&self) -> PushWaker {
        self.waker.clone()
    }

    /// A view of the worker's counters that can be awaited (`wait_for`).
    pub fn stats(&self) -> watch::Receiver<PushStats> {
        self.stats.clone()
    }

    /// Waits for the worker to end (after its shutdown token is cancelled).
    pub async fn join(self) -> Result<(), PushError> {
        match self.task.await {
            Ok(result) => result,
            Err(e) => Err(PushError::Worker(e.to_string())),
        }
    }
}

/// The deliveries of one push config of one task: attempted one at a time.
type GroupKey = (TaskKey, String);

#[derive(Debug, Default)]
struct Group {
    /// Held and not yet started, in sequence order.
    queue: VecDeque<Delivery>,
    /// An attempt of this group is in flight.
    busy: bool,
}

/// What a finished attempt task reports to the loop.
struct Finished {
    group: GroupKey,
    id: i64,
    outcome: Outcome,
    store_error: Option<String>,
}

enum Outcome {
    Delivered,
    Retried { error: String, retry_at_ms: i64 },
    Dead { error: String },
}

/// When nothing could be claimed although the store said something was due, look again
/// after this rather than spin.
const STALL_WAIT: Duration = Duration::from_millis(100);
/// After a failed claim, wait this long before trying the store again.
const STORE_ERROR_WAIT: Duration = Duration::from_millis(500);

struct Worker {
    store: Arc<dyn Store>,
    opts: PushOptions,
    policy: RetryPolicy,
    client: reqwest::Client,
    guard: Arc<SsrfGuard>,
    notify: Arc<Notify>,
    shutdown: CancellationToken,
    stats: watch::Sender<PushStats>,
    /// Ids of the deliveries claimed and not yet recorded.
    held: HashSet<i64>,
    groups: HashMap<GroupKey, Group>,
    /// Groups with a queued delivery and nothing in flight, waiting for a slot.
    ready: VecDeque<GroupKey>,
    running: JoinSet<Finished>,
    /// The group and delivery of each running attempt task, to clean up after a panic.
    tasks: HashMap<tokio::task::Id, (GroupKey, i64)>,
}

impl Worker {
    async fn run(mut self) {
        let batch = self.opts.batch.max(1);
        let max_in_flight = self.opts.max_in_flight.max(1);
        // Whether the store should be asked for due deliveries.
        let mut poll = true;
        // When to ask it next if nothing else happens first.
        let mut deadline: Option<Instant> = None;
        loop {
            if self.shutdown.is_cancelled() {
                break;
            }
            if poll && self.held.len() < batch {
                let limit = batch - self.held.len();
                let lease_ms = duration_ms(self.opts.lease);
                match self.store.claim_deliveries(now_ms(), lease_ms, limit).await {
                    Ok(claimed) => {
                        let full = claimed.len() >= limit;
                        let fresh = self.take(claimed);
                        // A full claim may have left due deliveries behind: claim again as
                        // soon as there is room.
                        poll = full;
                        deadline = if full { None } else { Some(self.next_deadline(fresh).await) };
                    }
                    Err(e) => {
                        self.note_store_error(format!("claiming push deliveries: {e}"));
                        poll = false;
                        deadline = Some(Instant::now() + STORE_ERROR_WAIT);
                    }
                }
            }
            while self.running.len() < max_in_flight {
                let Some(group) = self.ready.pop_front() else { break };
                self.start(group);
            }
            let sleep_at = deadline;
            let sleep = async move {
                match sleep_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = self.shutdown.cancelled() => break,
                Some(joined) = self.running.join_next(), if !self.running.is_empty() => {
                    match joined {
                        Ok(finished) => {
                            if let Some(retry_at) = self.finish(finished) {
                                let at = instant_at(retry_at);
                                deadline = Some(deadline.map_or(at, |d| d.min(at)));
                            }
                        }
                        // An attempt task panicked: its delivery comes back when the lease
                        // ends, and its group moves on.
                        Err(e) => {
                            if let Some((group, id)) = self.tasks.remove(&e.id()) {
                                self.release(&group, id);
                            }
                            self.note_failure(format!("push attempt task failed: {e}"));
                        }
                    }
                }
                () = self.notify.notified() => poll = true,
                () = sleep => {
                    deadline = None;
                    poll = true;
                }
            }
        }
        // Let the attempts in flight finish and record their outcome; each is bounded by
        // the request timeout.
        while let Some(joined) = self.running.join_next().await {
            if let Ok(finished) = joined {
                self.finish(finished);
            }
        }
    }

    /// Queues newly claimed deliveries under their groups; returns how many were new
    /// (a delivery this worker already holds comes back when its lease ran out while it
    /// waited in its group's queue; claiming it again renewed the lease).
    fn take(&mut self, claimed: Vec<Delivery>) -> usize {
        let mut fresh = 0;
        for delivery in claimed {
            if !self.held.insert(delivery.id) {
                continue;
            }
            fresh += 1;
            let key = (delivery.task.clone(), delivery.config_id.clone());
            let group = self.groups.entry(key.clone()).or_default();
            let at = group.queue.iter().position(|queued| queued.seq > delivery.seq).unwrap_or(group.queue.len());
            group.queue.insert(at, delivery);
            if !group.busy && group.queue.len() == 1 {
                self.ready.push_back(key);
            }
        }
        fresh
    }

    /// When to look at the store next, after a claim that took everything due.
    async fn next_deadline(&mut self, fresh: usize) -> Instant {
        let now = Instant::now();
        let poll = now + self.opts.poll_interval;
        match self.store.next_delivery_due().await {
            Ok(Some(due_ms)) => {
                let at = instant_at(due_ms);
                if at <= now && fresh == 0 {
                    // The store says something is due but gave nothing: do not spin.
                    (now + STALL_WAIT).min(poll)
                } else {
                    at.min(poll)
                }
            }
            Ok(None) => poll,
            Err(e) => {
                self.note_store_error(format!("reading the next push due time: {e}"));
                (now + STORE_ERROR_WAIT).min(poll)
            }
        }
    }

    /// Starts the next delivery of `key`.
    fn start(&mut self, key: GroupKey) {
        let Some(group) = self.groups.get_mut(&key) else { return };
        let Some(delivery) = group.queue.pop_front() else { return };
        group.busy = true;
        let store = Arc::clone(&self.store);
        let client = self.client.clone();
        let guard = Arc::clone(&self.guard);
        let policy = self.policy;
        let task_key = key.clone();
        let id = delivery.id;
        let handle = self.running.spawn(async move {
            let attempt = send::attempt(&client, &guard, &delivery).await;
            let (outcome, recorded) = record(&*store, &policy, &delivery, attempt).await;
            Finished { group: task_key, id: delivery.id, outcome, store_error: recorded.err() }
        });
        self.tasks.insert(handle.id(), (key, id));
    }

    /// Books a finished attempt and readies its group's next delivery. Returns the
    /// instant a retried delivery is due.
    fn finish(&mut self, finished: Finished) -> Option<i64> {
        self.release(&finished.group, finished.id);
        if let Some(error) = finished.store_error {
            self.note_store_error(error);
        }
        match finished.outcome {
            Outcome::Delivered => {
                self.stats.send_modify(|s| s.delivered += 1);
                None
            }
            Outcome::Retried { error, retry_at_ms } => {
                self.stats.send_modify(|s| {
                    s.retried += 1;
                    s.last_error = Some(error);
                });
                Some(retry_at_ms)
            }
            Outcome::Dead { error } => {
                self.stats.send_modify(|s| {
                    s.dead += 1;
                    s.last_error = Some(error);
                });
                None
            }
        }
    }

    /// Forgets a delivery that is no longer in flight and readies its group's next one.
    fn release(&mut self, key: &GroupKey, id: i64) {
        self.held.remove(&id);
        self.tasks.retain(|_, (_, held)| *held != id);
        if let Some(group) = self.groups.get_mut(key) {
            group.busy = false;
            if group.queue.is_empty() {
                self.groups.remove(key);
            } else {
                self.ready.push_back(key.clone());
            }
        }
    }

    fn note_store_error(&self, error: String) {
        self.stats.send_modify(|s| {
            s.store_errors += 1;
            s.last_error = Some(error);
        });
    }

    fn note_failure(&self, error: String) {
        self.stats.send_modify(|s| s.last_error = Some(error));
    }
}

/// Decides what an attempt means for its delivery and writes it to the store.
async fn record(
    store: &dyn Store,
    policy: &RetryPolicy,
    delivery: &Delivery,
    attempt: Attempt,
) -> (Outcome, Result<(), String>) {
    let number = delivery.attempts.saturating_add(1);
    let now = now_ms();
    match attempt {
        Attempt::Delivered => {
            let result = store.delivery_done(delivery.id).await;
            (Outcome::Delivered, result.map_err(|e| format!("recording push delivery {}: {e}", delivery.id)))
        }
        Attempt::Refused { error } => {
            // Configs are checked when they are set; a name that resolves elsewhere
            // since, or a config stored before the check or by another server, ends here.
            warn_dead(delivery, &error, "push delivery refused by the SSRF guard");
            let result = store.delivery_dead(delivery.id, now, &error).await;
            (Outcome::Dead { error }, result.map_err(|e| format!("dead-lettering push delivery {}: {e}", delivery.id)))
        }
        Attempt::Permanent { error } => {
            warn_dead(delivery, &error, "push delivery dead-lettered");
            let result = store.delivery_dead(delivery.id, now, &error).await;
            (Outcome::Dead { error }, result.map_err(|e| format!("dead-lettering push delivery {}: {e}", delivery.id)))
        }
        Attempt::Retry { error, retry_after } => {
            if !policy.may_retry(number) {
                let error = format!("gave up after {number} attempts: {error}");
                warn_dead(delivery, &error, "push delivery dead-lettered");
                let result = store.delivery_dead(delivery.id, now, &error).await;
                return (
                    Outcome::Dead { error },
                    result.map_err(|e| format!("dead-lettering push delivery {}: {e}", delivery.id)),
                );
            }
            let delay = match retry_after {
                Some(asked) => policy.retry_after(asked),
                None => policy.backoff(number, &mut rand::rng()),
            };
            let retry_at_ms = now.saturating_add(duration_ms(delay));
            let result = store.delivery_retry(delivery.id, retry_at_ms, &error).await;
            (
                Outcome::Retried { error, retry_at_ms },
                result.map_err(|e| format!("rescheduling push delivery {}: {e}", delivery.id)),
            )
        }
    }
}

/// Milliseconds since the Unix epoch by the system clock, the store's time base.
fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)).unwrap_or(0)
}

fn duration_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// The monotonic instant of a store time, one millisecond late so that a store checking
/// `due <= now` with its own clock reading finds it due.
fn instant_at(at_ms: i64) -> Instant {
    let ahead = at_ms.saturating_sub(now_ms()).saturating_add(1).max(0);
    let ahead = Duration::from_millis(u64::try_from(ahead).unwrap_or(0)).min(Duration::from_secs(86_400));
    Instant::now() + ahead
}

/// A delivery that will not be retried, as a `tracing` warning with its identity.
fn warn_dead(delivery: &Delivery, error: &str, what: &'static str) {
    tracing::warn!(
        delivery = delivery.id,
        task = %delivery.task.id,
        config = %delivery.config_id,
        event = delivery.seq,
        error,
        "{what}"
    );
}
