//! Checkpoints of the write-ahead log, off the commit path.
//!
//! A checkpoint copies the pages commits appended to the log into the database file and
//! fsyncs that file. Left to SQLite (`wal_autocheckpoint`), it runs inside the `COMMIT`
//! that takes the log past 1000 pages, so a caller of [`Store::commit`] waits for other
//! commits' pages to be copied (a 4 MiB message: 8 MiB and an fsync). Here the writer
//! connection never checkpoints (`wal_autocheckpoint = 0`): the committer counts what
//! each batch (and each write outside the queue) gave the log and, past
//! [`Limits::after`], wakes a thread of the store's own that checkpoints on its own
//! connection:
//!
//! - `PASSIVE` first: it copies what no reader still needs and waits for nobody;
//!   commits go on meanwhile.
//! - Then `RESTART`, holding the writer connection's lock (so between two batches of
//!   the committer): it copies what was committed during the `PASSIVE` one (commits wait
//!   that long: the short tail, not the whole log), and so makes the next commit write
//!   the log from its beginning again. A `PASSIVE` checkpoint alone
//!   would not: the log starts again only at a transaction that finds it wholly copied,
//!   and under a steady stream a commit is always under way when one ends.
//! - `TRUNCATE` once no commit came for [`Limits::idle`]: the log file is cut to zero
//!   bytes.
//!
//! **Bound.** So the log holds about [`Limits::after`] plus what is committed during one
//! `PASSIVE` checkpoint; it grows past that only while a reader keeps an old snapshot
//! open longer than [`CHECKPOINTER_BUSY`], or another process writes to the same file
//! (reads here are short transactions; the next round tries again), and
//! `journal_size_limit` cuts a log file that grew past it back when the log starts again.
//!
//! Durability is unchanged: a commit is durable once its log frames are fsynced (WAL,
//! `synchronous=FULL`); a checkpoint only moves durable pages into the database file.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, InterruptHandle};

use super::{backend, Pool, StoreError};

/// When the store checkpoints its log.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Bytes given to the log and not yet checkpointed that wake the checkpointer.
    pub after: u64,
    /// How long without a commit before the log file is truncated.
    pub idle: Duration,
}

/// The limits of a file database: a checkpoint every 4 MiB of log (SQLite's own
/// `wal_autocheckpoint` is 1000 pages), the log truncated after half a second without a
/// commit.
pub(super) const LIMITS: Limits = Limits { after: 4 << 20, idle: Duration::from_millis(500) };

/// How long a `RESTART` or `TRUNCATE` checkpoint waits for a reader or a writer before
/// giving up (commits that arrive while one waits wait at most this, plus its copy).
pub(super) const CHECKPOINTER_BUSY: Duration = Duration::from_millis(100);

/// Log bytes counted for a commit besides its bodies, and for a batch besides its
/// commits: the pages of index entries and of the trees above them (an estimate; it only
/// decides when to checkpoint, and each checkpoint reports the log's real size).
pub(super) const PAGES_PER_COMMIT: u64 = 4096;
pub(super) const PAGES_PER_BATCH: u64 = 8 * 4096;
/// Log bytes counted per row a write outside the commit queue changes (a purge's
/// deletes: the pages they free and the index entries they remove).
pub(super) const ROW_BYTES: u64 = 1024;

/// The state the committer and the checkpointer share.
#[derive(Debug)]
pub(super) struct Checkpoints {
    limits: Limits,
    state: Mutex<State>,
    /// Signalled when there is work for the checkpointer or the store closes.
    wake: Condvar,
    /// Signalled after every checkpoint (tests wait on it).
    done: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Bytes given to the log so far (estimated per batch, see `log_bytes`).
    written: u64,
    /// Bytes of log not yet copied into the database file: as SQLite reported after the
    /// last checkpoint, plus what was written since.
    unchecked: u64,
    /// Batches committed so far: the checkpointer tells idleness by it not moving.
    batches: u64,
    /// Whether the idle `TRUNCATE` was tried since the last batch.
    truncated: bool,
    /// Whether the last round copied nothing (it waits for a batch rather than spin).
    stalled: bool,
    closed: bool,
    stats: Stats,
}

/// What the checkpoints did (the tests read it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Stats {
    /// Rounds of `PASSIVE` then `RESTART` checkpoints.
    pub rounds: u64,
    /// Rounds whose `RESTART` finished (the next commit starts the log again).
    pub restarted: u64,
    /// `TRUNCATE` checkpoints that truncated the log.
    pub truncated: u64,
    /// The last checkpoint that failed, if any.
    pub last_error: Option<String>,
}

impl Checkpoints {
    pub(super) fn new(limits: Limits) -> Self {
        Checkpoints { limits, state: Mutex::default(), wake: Condvar::new(), done: Condvar::new() }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The committer gave the log about `bytes`.
    pub(super) fn wrote(&self, bytes: u64) {
        let mut state = self.state();
        state.written = state.written.saturating_add(bytes);
        state.unchecked = state.unchecked.saturating_add(bytes);
        state.batches += 1;
        state.truncated = false;
        state.stalled = false;
        drop(state);
        // Woken at every batch: a checkpoint past `after`, or a new idle deadline.
        self.wake.notify_one();
    }

    /// Records a checkpoint that started when `before` bytes had been written.
    fn settle(&self, state: &mut State, before: u64, outcome: Result<Checkpointed, StoreError>) {
        let since = state.written.saturating_sub(before);
        match outcome {
            Ok(done) if !done.known => {}
            Ok(done) => {
                state.unchecked = done.left.saturating_add(since);
            }
            Err(error) => {
                tracing::warn!(%error, "sqlite checkpoint failed; the next one retries");
                state.stats.last_error = Some(error.to_string());
            }
        }
        self.done.notify_all();
    }

    /// The checkpointer thread: checkpoints on `connection` as described in the module
    /// until the store closes.
    fn run(&self, connection: &Connection, writer: &Mutex<Connection>) {
        let mut state = self.state();
        loop {
            if state.closed {
                return;
            }
            if state.unchecked >= self.limits.after && !state.stalled {
                let (before, unchecked) = (state.written, state.unchecked);
                drop(state);
                // The bulk without blocking anyone, then the tail and the restart.
                let outcome = checkpoint(connection, "PASSIVE").and_then(|_| {
                    // With the writer's lock, so that the committer does not start its
                    // next batch while this waits for the write lock.
                    let _writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
                    checkpoint(connection, "RESTART")
                });
                state = self.state();
                state.stats.rounds += 1;
                if matches!(outcome, Ok(Checkpointed { busy: false, known: true, .. })) {
                    state.stats.restarted += 1;
                }
                self.settle(&mut state, before, outcome);
                state.stalled = state.unchecked >= unchecked;
                continue;
            }
            if state.truncated || state.stalled || state.batches == 0 {
                state = self.wake.wait(state).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            let (seen, before) = (state.batches, state.written);
            let (next, waited) =
                self.wake.wait_timeout(state, self.limits.idle).unwrap_or_else(PoisonError::into_inner);
            state = next;
            if !waited.timed_out() || state.batches != seen || state.closed {
                continue;
            }
            drop(state);
            // What is left first, without blocking anyone, then the cut.
            let outcome = checkpoint(connection, "PASSIVE").and_then(|_| checkpoint(connection, "TRUNCATE"));
            state = self.state();
            if matches!(outcome, Ok(Checkpointed { busy: false, known: true, .. })) {
                state.stats.truncated += 1;
            }
            // Tried once per idle period, cut or not: a `TRUNCATE` that a reader kept
            // from finishing is tried again after the next batch, not in a loop.
            state.truncated = true;
            self.settle(&mut state, before, outcome);
        }
    }

    /// What the checkpoints did so far.
    #[cfg(test)]
    pub(super) fn stats(&self) -> Stats {
        self.state().stats.clone()
    }

    /// Waits (at most `timeout`) until `until` holds of the stats; whether it does.
    #[cfg(test)]
    pub(super) fn wait_for(&self, timeout: Duration, until: impl Fn(&Stats) -> bool) -> bool {
        let state = self.state();
        let (state, _) = self
            .done
            .wait_timeout_while(state, timeout, |state| !until(&state.stats))
            .unwrap_or_else(PoisonError::into_inner);
        until(&state.stats)
    }
}

/// What a checkpoint did.
struct Checkpointed {
    /// It found a reader or a writer in its way (`TRUNCATE`), or another checkpoint
    /// under way, and did not finish.
    busy: bool,
    /// Whether SQLite reported the log's size (not when another checkpoint ran).
    known: bool,
    /// Bytes of log it left uncopied.
    left: u64,
}

/// Runs a checkpoint in `mode`.
fn checkpoint(connection: &Connection, mode: &str) -> Result<Checkpointed, StoreError> {
    let (busy, log, copied): (i64, i64, i64) = connection
        .query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .map_err(|e| backend(&format!("checkpoint ({mode})"), e))?;
    let page_size: i64 =
        connection.query_row("PRAGMA page_size", [], |row| row.get(0)).map_err(|e| backend("read page_size", e))?;
    let bytes = |pages: i64| u64::try_from(pages.max(0).saturating_mul(page_size)).unwrap_or(0);
    Ok(Checkpointed { busy: busy != 0, known: log >= 0, left: bytes(log.saturating_sub(copied)) })
}

/// The checkpointer thread of a file database, ended when this is dropped.
pub(super) struct Checkpointer {
    checkpoints: Arc<Checkpoints>,
    interrupt: InterruptHandle,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Checkpointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpointer").field("checkpoints", &self.checkpoints).finish_non_exhaustive()
    }
}

impl Checkpointer {
    /// Starts the thread on `connection` (its own, on the same file).
    pub(super) fn start(
        checkpoints: Arc<Checkpoints>,
        pool: Arc<Pool>,
        connection: Connection,
    ) -> Result<Checkpointer, StoreError> {
        connection.busy_timeout(CHECKPOINTER_BUSY).map_err(|e| backend("set busy_timeout", e))?;
        connection.pragma_update(None, "wal_autocheckpoint", 0).map_err(|e| backend("set wal_autocheckpoint", e))?;
        let interrupt = connection.get_interrupt_handle();
        let shared = Arc::clone(&checkpoints);
        let thread = std::thread::Builder::new()
            .name("agentproto-sqlite-checkpoint".into())
            .spawn(move || shared.run(&connection, &pool.writer))
            .map_err(|e| StoreError::Backend(format!("sqlite checkpointer thread could not be started: {e}")))?;
        Ok(Checkpointer { checkpoints, interrupt, thread: Some(thread) })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.checkpoints.state().closed = true;
        self.checkpoints.wake.notify_all();
        // A checkpoint under way stops at its next page instead of copying the rest.
        self.interrupt.interrupt();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
