//! The sweeper: ends orphaned turns and deletes expired tasks.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{duration_ms, Clock, Retention};
use crate::store::{Purged, StoreError};
use crate::tasks::{Swept, Tasks};

/// Orphans looked at per store query.
const ORPHAN_BATCH: usize = 256;

/// The most store queries of each kind one sweep makes: a sweep is bounded even when
/// there is more to do (the next one goes on).
const MAX_ROUNDS: usize = 16;

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Orphaned turns ended: their tasks are FAILED now.
    pub orphans_failed: usize,
    /// Expired leases cleared from tasks that were not SUBMITTED or WORKING.
    pub leases_cleared: usize,
    /// Expired leases found that were renewed, or swept by another replica, before this
    /// sweep could end them.
    pub raced: usize,
    /// Orphans that could not be ended (a store error); logged, and tried again next time.
    pub errors: usize,
    /// What retention deleted.
    pub purged: Purged,
}

/// Sweeps one store for orphaned turns and expired tasks (see the `recovery` module
/// documentation). Cheap to clone.
#[derive(Clone)]
pub struct Sweeper {
    tasks: Arc<Tasks>,
    retention: Retention,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Sweeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sweeper")
            .field("retention", &self.retention)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl Sweeper {
    pub(crate) fn new(tasks: Arc<Tasks>, retention: Retention, clock: Arc<dyn Clock>) -> Self {
        Sweeper { tasks, retention, clock }
    }

    /// One sweep at the clock's current time: orphaned turns first, then retention.
    pub async fn sweep(&self) -> Result<SweepReport, StoreError> {
        let now_ms = self.clock.now_ms();
        let mut report = SweepReport::default();
        self.end_orphans(now_ms, &mut report).await?;
        self.purge(now_ms, &mut report).await?;
        Ok(report)
    }

    async fn end_orphans(&self, now_ms: i64, report: &mut SweepReport) -> Result<(), StoreError> {
        let store = self.tasks.store();
        for _ in 0..MAX_ROUNDS {
            let keys = store.expired_leases(now_ms, ORPHAN_BATCH).await?;
            let full = keys.len() >= ORPHAN_BATCH;
            let mut progress = false;
            for key in keys {
                match self.tasks.sweep_orphan(&key, now_ms).await {
                    Ok(Swept::Failed { owner }) => {
                        progress = true;
                        report.orphans_failed += 1;
                        tracing::warn!(
                            task = %key.id,
                            tenant = %key.tenant,
                            replica = %owner,
                            "the turn of this task was lost with its replica; the task is FAILED"
                        );
                    }
                    Ok(Swept::Cleared) => {
                        progress = true;
                        report.leases_cleared += 1;
                    }
                    Ok(Swept::Live) => report.raced += 1,
                    Err(error) => {
                        report.errors += 1;
                        tracing::warn!(task = %key.id, tenant = %key.tenant, %error, "could not end an orphaned turn");
                    }
                }
            }
            // Another query only when this one was full and freed room: tasks that keep
            // failing stay in front and would fill every batch.
            if !full || !progress {
                break;
            }
        }
        Ok(())
    }

    async fn purge(&self, now_ms: i64, report: &mut SweepReport) -> Result<(), StoreError> {
        let Some(age) = self.retention.terminal_age else { return Ok(()) };
        let before_ms = now_ms.saturating_sub(duration_ms(age));
        let batch = self.retention.batch.max(1);
        for _ in 0..MAX_ROUNDS {
            let purged = self.tasks.store().purge(before_ms, batch).await?;
            report.purged.tasks += purged.tasks;
            report.purged.idempotency_keys += purged.idempotency_keys;
            report.purged.dead_letters += purged.dead_letters;
            if !purged.full(batch) {
                break;
            }
            // Let the commits waiting for the writer in.
            tokio::task::yield_now().await;
        }
        Ok(())
    }

    /// Sweeps now, then every `every`, until `stop` fires.
    pub(crate) async fn run(self, every: Duration, stop: CancellationToken) {
        let every = every.max(Duration::from_millis(1));
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                result = self.sweep() => {
                    if let Err(error) = result {
                        tracing::warn!(%error, "sweep failed");
                    }
                }
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
        }
    }
}
