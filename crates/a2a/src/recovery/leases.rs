//! The turn leases one replica holds: which of its tasks have a turn running, renewing
//! their leases, and letting them go when the turns end.

// Task-keyed maps on the request path hash with foldhash (randomly seeded, much
// cheaper than SipHash for short string keys).
use foldhash::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{duration_ms, Clock, RecoveryOptions};
use crate::store::{LeaseChange, Store, StoreError, TaskKey, TurnLease};

/// This replica's turn leases.
pub struct Leases {
    store: Arc<dyn Store>,
    owner: String,
    lease: Duration,
    clock: Arc<dyn Clock>,
    turns: Mutex<HashMap<TaskKey, Turns>>,
    /// Fires when the server shuts down: a turn that ends after it leaves its lease
    /// expired rather than released (see the module documentation of `recovery`).
    shutdown: CancellationToken,
}

impl std::fmt::Debug for Leases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leases").field("owner", &self.owner).field("lease", &self.lease).finish_non_exhaustive()
    }
}

/// The turns of one task running here.
#[derive(Debug, Default)]
struct Turns {
    live: usize,
    /// Whether the last commit made here left a lease on the task.
    held: bool,
}

/// Held by a running turn (inside its updater); dropping the last one ends the turn.
pub(crate) struct TurnGuard {
    leases: Arc<Leases>,
    key: TaskKey,
}

impl Drop for TurnGuard {
    fn drop(&mut self) {
        self.leases.end_turn(&self.key);
    }
}

impl Leases {
    pub(crate) fn new(store: Arc<dyn Store>, options: &RecoveryOptions, shutdown: CancellationToken) -> Self {
        Leases {
            store,
            owner: options.replica_id.clone(),
            lease: options.lease,
            clock: Arc::clone(&options.clock),
            turns: Mutex::new(HashMap::default()),
            shutdown,
        }
    }

    /// This replica's id.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// How long a lease lasts after its last renewal.
    pub fn lease_duration(&self) -> Duration {
        self.lease
    }

    /// The number of tasks with a turn running here.
    pub fn running(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TaskKey, Turns>> {
        // Nothing panics while holding the lock: a poisoned table is still consistent.
        self.turns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A lease held by this replica from now on.
    pub(crate) fn lease(&self) -> TurnLease {
        TurnLease { owner: self.owner.clone(), until_ms: self.clock.now_ms().saturating_add(duration_ms(self.lease)) }
    }

    /// Whether `lease` is held by another replica and still live by this replica's clock:
    /// that replica runs the task's turn.
    pub(crate) fn held_elsewhere(&self, lease: &TurnLease) -> bool {
        !lease.owner.is_empty() && lease.owner != self.owner && lease.until_ms >= self.clock.now_ms()
    }

    pub(crate) fn start_turn(self: &Arc<Self>, key: TaskKey) -> TurnGuard {
        self.lock().entry(key.clone()).or_default().live += 1;
        TurnGuard { leases: Arc::clone(self), key }
    }

    /// Notes what a commit made here did to a task's lease.
    pub(crate) fn committed(&self, key: &TaskKey, change: &LeaseChange) {
        let mut turns = self.lock();
        let Some(entry) = turns.get_mut(key) else { return };
        match change {
            LeaseChange::Keep => {}
            LeaseChange::Set(_) => entry.held = true,
            LeaseChange::Clear | LeaseChange::ClearExpired(_) => entry.held = false,
        }
    }

    fn end_turn(self: &Arc<Self>, key: &TaskKey) {
        let held = {
            let mut turns = self.lock();
            let Some(entry) = turns.get_mut(key) else { return };
            entry.live = entry.live.saturating_sub(1);
            if entry.live > 0 {
                return;
            }
            let held = entry.held;
            turns.remove(key);
            held
        };
        if !held {
            return;
        }
        // The task is still SUBMITTED or WORKING under this replica's lease. Without a
        // runtime the lease simply runs out, and the next sweep takes the task.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let (store, key, owner) = (Arc::clone(&self.store), key.clone(), self.owner.clone());
        let expire = self.shutdown.is_cancelled();
        drop(runtime.spawn(async move {
            if let Err(error) = store.release_lease(&key, &owner, expire).await {
                tracing::warn!(task = %key.id, tenant = %key.tenant, %error, "could not release a turn lease; it will expire");
            }
        }));
    }

    /// Renews the lease of every task with a turn running here (one store call); returns
    /// how many the store renewed. A lease cleared meanwhile by a commit made elsewhere
    /// is set again, so a turn that runs keeps its task covered; the sweeper leaves a
    /// task that is not SUBMITTED or WORKING alone whatever its lease says.
    pub async fn renew(&self) -> Result<usize, StoreError> {
        let keys: Vec<TaskKey> =
            self.lock().iter().filter(|(_, turns)| turns.held).map(|(key, _)| key.clone()).collect();
        if keys.is_empty() {
            return Ok(0);
        }
        let TurnLease { owner, until_ms } = self.lease();
        self.store.renew_leases(&owner, keys, until_ms).await
    }

    /// Renews every third of the lease until `stop` fires.
    pub(crate) async fn run(self: Arc<Self>, every: Duration, stop: CancellationToken) {
        let every = every.max(Duration::from_millis(1));
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            if let Err(error) = self.renew().await {
                tracing::warn!(%error, "could not renew turn leases");
            }
        }
    }
}
