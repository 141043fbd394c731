//! Recovery and retention: what ends a turn whose server died, and what deletes tasks
//! nobody can ask about any more.
//!
//! # Turn leases
//!
//! An executor's turn (one `execute` call, and whatever clones of its
//! [`TaskUpdater`](crate::executor::TaskUpdater) it hands on) runs in one server process,
//! the *replica*. While the turn runs, the task carries a lease in the store: the
//! replica's id ([`RecoveryOptions::replica_id`], random per server instance) and a
//! deadline ([`RecoveryOptions::lease`] after the last renewal). The turn's commits set
//! it, the replica renews it every third of the lease, a commit that leaves the task
//! anything but SUBMITTED or WORKING clears it, and so does the end of the turn. A
//! replica that dies (SIGKILL, power loss, a lost container) renews nothing, so its
//! leases run out.
//!
//! # The orphan rule
//!
//! **A task that is SUBMITTED or WORKING and whose lease deadline has passed is
//! orphaned: its turn was lost with the replica that ran it.** Every server sweeps for
//! orphans when it starts and then every half lease ([`Sweeper`]). The sweep marks each
//! orphan FAILED, with an agent message saying that the turn was interrupted (the server
//! restarted or the replica running it was lost) and metadata
//! `{"agentproto":{"interrupted":{"replica":…,"leaseUntilMs":…}}}` on the status event.
//! That status event is appended through the ordinary commit path (the same versions, the
//! same log, push deliveries queued as for any event), so it is the task's last event:
//! a subscriber following the task live, or one resuming with `Last-Event-ID`, receives
//! it and its stream ends; a blocking `SendMessage` on the task has died with its
//! replica.
//!
//! - Turns are **not re-run**: an executor's turn may have had effects (messages sent,
//!   tools called) that running it again would repeat, and nothing says which. A client
//!   that wants the work done sends a new message, which starts a new task.
//! - **A live turn is never swept** while its replica's renewals reach the store (a
//!   replica cut off from its database for longer than a lease loses its turns, and
//!   their later writes are refused). The sweeper's commit is conditional on the lease
//!   still being expired when it is written ([`LeaseChange::ClearExpired`]), checked in
//!   the same transaction as the version: a renewal that lands first makes the sweep a
//!   no-op. If the owner's own commit lands first, the sweep's version check fails and it
//!   reads the task again; if the sweep lands first, the owner's next change is refused
//!   as a change to a terminal task. Either way the log has exactly one final event.
//! - **Several replicas** on one PostgreSQL database all sweep; each lists the same
//!   expired leases, and the version check lets exactly one of them fail each orphan.
//!   Only expired leases are listed, so the turns of live replicas are left alone.
//!   The final event reaches live subscribers on every replica: on the one that wins
//!   through its in-process hub, on the others through the replica bus
//!   (`crate::server`'s `replicas` module).
//! - A task that was SUBMITTED or WORKING when its database was written by a build
//!   without leases gets an expired lease from the schema migration, so the first sweep
//!   ends it too.
//! - A turn that ends (the executor returned and dropped every updater) while its task
//!   is still SUBMITTED or WORKING releases the lease: the executor chose to leave the
//!   task for later messages, and that is not a lost turn. While the server is shutting
//!   down the lease is left expired instead, so the next sweep (the next start, or
//!   another replica) ends the turn the shutdown interrupted.
//! - A lease on a task that is no longer SUBMITTED or WORKING (left by a replica that
//!   died between two writes) is cleared by the sweep without an event.
//! - Leases compare deadlines written by several machines' clocks: keep them
//!   synchronised to well within the lease (NTP does).
//!
//! # Retention
//!
//! [`Retention`]: terminal tasks whose status timestamp is older than
//! [`Retention::terminal_age`] (24 h by default) are deleted with their event log, push
//! configs and queued push deliveries, and idempotency keys and dead letters older than
//! that go too; active and interrupted tasks are never deleted. The sweeper deletes in
//! batches of [`Retention::batch`] rows, one transaction each. A terminal task can be
//! read, listed and resumed with `Last-Event-ID` until it expires; after that it is
//! `TaskNotFound`. [`Retention::resume_window`] is how long after a task ends clients are
//! promised they may still resume its stream: a retention shorter than that is refused.

mod leases;
mod sweeper;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use leases::Leases;
pub(crate) use leases::TurnGuard;
pub use sweeper::{SweepReport, Sweeper};

#[cfg(doc)]
use crate::store::LeaseChange;

/// Where lease deadlines and retention ages are read from: milliseconds since the Unix
/// epoch. [`SystemClock`] in a server; [`ManualClock`] in tests.
pub trait Clock: std::fmt::Debug + Send + Sync + 'static {
    /// The current time, in milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    /// A clock reading `now_ms` until moved.
    pub fn new(now_ms: i64) -> Self {
        ManualClock { now_ms: AtomicI64::new(now_ms) }
    }

    /// A manual clock that starts at the system clock's time.
    pub fn starting_now() -> Self {
        ManualClock::new(SystemClock.now_ms())
    }

    /// Sets the time.
    pub fn set(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.now_ms.fetch_add(duration_ms(by), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

pub(crate) fn duration_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// The shortest lease accepted.
pub const MIN_LEASE: Duration = Duration::from_millis(30);

/// How a server keeps and sweeps turn leases (see the module documentation).
#[derive(Debug, Clone)]
pub struct RecoveryOptions {
    /// This server instance's id in the leases it holds; unique per instance (the
    /// default is 128 random bits in hex).
    pub replica_id: String,
    /// How long a turn is presumed alive after its last renewal. Renewals run every third
    /// of it and sweeps every half, so an orphan is failed within about one and a half
    /// leases of its replica's death.
    pub lease: Duration,
    /// Lease deadlines and retention ages are read from this clock.
    pub clock: Arc<dyn Clock>,
    /// Renew and sweep on background tasks (the default). Off, nothing runs by itself:
    /// the application (or a test) calls [`Leases::renew`] and [`Sweeper::sweep`].
    pub background: bool,
}

impl Default for RecoveryOptions {
    /// A random replica id, a 30 s lease, the system clock, background work on.
    fn default() -> Self {
        RecoveryOptions {
            replica_id: new_replica_id(),
            lease: Duration::from_secs(30),
            clock: Arc::new(SystemClock),
            background: true,
        }
    }
}

impl RecoveryOptions {
    /// Checks the options: a lease of at least [`MIN_LEASE`] and a replica id.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.lease < MIN_LEASE {
            return Err(ConfigError::LeaseTooShort { lease: self.lease, minimum: MIN_LEASE });
        }
        if self.replica_id.is_empty() {
            return Err(ConfigError::EmptyReplicaId);
        }
        Ok(())
    }

    /// How often the replica renews its leases.
    pub fn renew_every(&self) -> Duration {
        self.lease / 3
    }

    /// How often the sweeper runs.
    pub fn sweep_every(&self) -> Duration {
        self.lease / 2
    }
}

/// A fresh replica id: 128 random bits in hex.
pub fn new_replica_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// How long terminal tasks are kept (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// Terminal tasks whose status timestamp is older than this are deleted with
    /// everything that belongs to them; idempotency keys and dead letters older than this
    /// go too. `None` keeps everything.
    pub terminal_age: Option<Duration>,
    /// How long after a task ends a client may still resume its stream with
    /// `Last-Event-ID`. `terminal_age` may not be shorter.
    pub resume_window: Duration,
    /// Rows deleted per transaction (at least 1).
    pub batch: usize,
}

impl Default for Retention {
    /// 24 h, a resume window of 5 min, batches of 500.
    fn default() -> Self {
        Retention {
            terminal_age: Some(Duration::from_secs(24 * 60 * 60)),
            resume_window: Duration::from_secs(5 * 60),
            batch: 500,
        }
    }
}

impl Retention {
    /// Keeps every task for ever.
    pub fn forever() -> Self {
        Retention { terminal_age: None, ..Retention::default() }
    }

    /// Refuses a retention shorter than the resume window.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self.terminal_age {
            Some(age) if age < self.resume_window => {
                Err(ConfigError::RetentionShorterThanResumeWindow { retention: age, resume_window: self.resume_window })
            }
            _ => Ok(()),
        }
    }
}

/// A recovery or retention setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Terminal tasks would be deleted before clients stop being allowed to resume
    /// their streams.
    #[error(
        "terminal tasks would be deleted after {retention:?}, before the {resume_window:?} in which clients may \
         resume their streams"
    )]
    RetentionShorterThanResumeWindow {
        /// The retention asked for.
        retention: Duration,
        /// The resume window it must not be shorter than.
        resume_window: Duration,
    },
    /// The lease is shorter than [`MIN_LEASE`].
    #[error("a turn lease of {lease:?} is too short (at least {minimum:?})")]
    LeaseTooShort {
        /// The lease asked for.
        lease: Duration,
        /// The shortest allowed.
        minimum: Duration,
    },
    /// The replica id is empty, so leases could not say who holds them.
    #[error("the replica id is empty")]
    EmptyReplicaId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_may_not_be_shorter_than_the_resume_window() {
        let short = Retention { terminal_age: Some(Duration::from_secs(60)), ..Retention::default() };
        assert!(matches!(short.validate(), Err(ConfigError::RetentionShorterThanResumeWindow { .. })));
        let equal = Retention { terminal_age: Some(Duration::from_secs(300)), ..Retention::default() };
        assert_eq!(equal.validate(), Ok(()));
        assert_eq!(Retention::forever().validate(), Ok(()));
        assert_eq!(Retention::default().validate(), Ok(()));
    }

    #[test]
    fn leases_have_a_floor_and_replica_ids_are_unique() {
        let options = RecoveryOptions { lease: Duration::from_millis(5), ..RecoveryOptions::default() };
        assert!(matches!(options.validate(), Err(ConfigError::LeaseTooShort { .. })));
        let (a, b) = (new_replica_id(), new_replica_id());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(RecoveryOptions::default().validate().is_ok());
    }

    #[test]
    fn a_manual_clock_moves_when_told() {
        let clock = ManualClock::new(1_000);
        clock.advance(Duration::from_millis(250));
        assert_eq!(clock.now_ms(), 1_250);
        clock.set(7);
        assert_eq!(clock.now_ms(), 7);
    }
}
