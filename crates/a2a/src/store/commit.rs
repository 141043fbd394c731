//! The check every store makes before it writes a [`Commit`]: one pure function, so that
//! the memory, SQLite and PostgreSQL stores refuse exactly the same commits with exactly
//! the same errors. Each store reads what it holds of the task (under its own lock or
//! transaction), hands it to [`check`], and writes only what the check lets through.

use super::{Commit, LeaseChange, StoreError};

/// What a store holds of a task that a commit's check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stored {
    /// The stored version.
    pub(crate) version: u64,
    /// The highest sequence number of the task's log (0 when none).
    pub(crate) last_seq: u64,
    /// The stored lease's deadline, when the task has a lease.
    pub(crate) lease_until_ms: Option<i64>,
}

/// A commit the check let through: what the store writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Checked {
    /// The version the commit gives the task.
    pub(crate) version: u64,
    /// The sequence number the commit's events follow (its first event is `last_seq + 1`).
    pub(crate) last_seq: u64,
    /// Whether the commit creates the task.
    pub(crate) creating: bool,
}

impl Checked {
    /// The sequence number of the commit's event number `offset` (from 0).
    pub(crate) fn seq(&self, offset: usize) -> u64 {
        self.last_seq + offset as u64 + 1
    }
}

/// Whether `commit` may be written over `stored` (`None`: the task does not exist):
///
/// - a create (`expected_version: None`) needs the task absent, else [`StoreError::Exists`];
/// - an update needs the task present ([`StoreError::NotFound`]) at the version it expects
///   ([`StoreError::Conflict`]: someone committed in between, a stale writer);
/// - a [`LeaseChange::ClearExpired`] commit needs a stored lease whose deadline is before
///   its instant, else [`StoreError::LeaseLive`]: a sweeper never ends a live turn;
/// - the new version and the last event's sequence number must fit a stored `BIGINT`.
pub(crate) fn check(commit: &Commit, stored: Option<Stored>) -> Result<Checked, StoreError> {
    let key = &commit.task.key;
    let (version, last_seq) = match (stored, commit.expected_version) {
        (Some(_), None) => return Err(StoreError::Exists(key.clone())),
        (None, Some(_)) => return Err(StoreError::NotFound(key.clone())),
        (Some(stored), Some(expected)) => {
            if stored.version != expected {
                return Err(StoreError::Conflict { key: key.clone(), expected, found: stored.version });
            }
            if let LeaseChange::ClearExpired(before_ms) = commit.lease {
                if stored.lease_until_ms.is_none_or(|until_ms| until_ms >= before_ms) {
                    return Err(StoreError::LeaseLive(key.clone()));
                }
            }
            (expected.checked_add(1), stored.last_seq)
        }
        (None, None) => (Some(1), 0),
    };
    let version = version.filter(|&v| v <= i64::MAX as u64).ok_or_else(|| {
        StoreError::Backend(format!("task {key:?}: version {} has no successor a store can keep", version_of(stored)))
    })?;
    let last = (last_seq.checked_add(commit.events.len() as u64)).filter(|&s| s <= i64::MAX as u64);
    if last.is_none() {
        return Err(StoreError::Backend(format!(
            "task {key:?}: {} more events after sequence number {last_seq} overflow the log",
            commit.events.len()
        )));
    }
    Ok(Checked { version, last_seq, creating: stored.is_none() })
}

fn version_of(stored: Option<Stored>) -> u64 {
    stored.map_or(0, |stored| stored.version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{EventBody, TaskBody, TaskKey, TaskRecord, TurnLease};

    fn commit(expected_version: Option<u64>, lease: LeaseChange, events: usize) -> Commit {
        Commit {
            task: TaskRecord {
                key: TaskKey::new("acme", "t1"),
                context_id: "c".into(),
                state: "TASK_STATE_WORKING".into(),
                terminal: false,
                status_ts_ms: 0,
                version: 0,
                body: TaskBody::from_bytes(&b"{}"[..]),
                lease: None,
            },
            expected_version,
            events: (0..events).map(|_| (EventBody::from_bytes(&b"{}"[..]), false)).collect(),
            push: false,
            lease,
        }
    }

    fn stored(version: u64, last_seq: u64, lease_until_ms: Option<i64>) -> Option<Stored> {
        Some(Stored { version, last_seq, lease_until_ms })
    }

    #[test]
    fn a_create_of_an_absent_task_gets_version_1_and_sequence_numbers_from_1() {
        let checked = check(&commit(None, LeaseChange::Keep, 2), None).unwrap();
        assert_eq!(checked, Checked { version: 1, last_seq: 0, creating: true });
        assert_eq!((checked.seq(0), checked.seq(1)), (1, 2));
    }

    #[test]
    fn a_create_of_a_present_task_is_refused_as_existing() {
        let refused = check(&commit(None, LeaseChange::Keep, 0), stored(1, 0, None));
        assert!(matches!(refused, Err(StoreError::Exists(key)) if key == TaskKey::new("acme", "t1")));
    }

    #[test]
    fn an_update_of_an_absent_task_is_refused_as_not_found() {
        assert!(matches!(check(&commit(Some(1), LeaseChange::Keep, 0), None), Err(StoreError::NotFound(_))));
    }

    #[test]
    fn an_update_at_the_stored_version_follows_the_stored_log() {
        let checked = check(&commit(Some(4), LeaseChange::Keep, 1), stored(4, 9, None)).unwrap();
        assert_eq!(checked, Checked { version: 5, last_seq: 9, creating: false });
        assert_eq!(checked.seq(0), 10);
    }

    #[test]
    fn a_stale_writer_is_refused_with_both_versions() {
        let refused = check(&commit(Some(3), LeaseChange::Set(lease(99)), 1), stored(4, 9, Some(50)));
        assert!(matches!(refused, Err(StoreError::Conflict { expected: 3, found: 4, .. })), "{refused:?}");
    }

    fn lease(until_ms: i64) -> TurnLease {
        TurnLease { owner: "r1".into(), until_ms }
    }

    #[test]
    fn clearing_an_expired_lease_needs_a_deadline_before_the_instant() {
        let clear = commit(Some(2), LeaseChange::ClearExpired(100), 0);
        assert!(check(&clear, stored(2, 0, Some(99))).is_ok(), "expired: the sweeper ends the turn");
        assert!(matches!(check(&clear, stored(2, 0, Some(100))), Err(StoreError::LeaseLive(_))), "at the instant");
        assert!(matches!(check(&clear, stored(2, 0, Some(150))), Err(StoreError::LeaseLive(_))), "live");
        assert!(matches!(check(&clear, stored(2, 0, None)), Err(StoreError::LeaseLive(_))), "no lease");
    }

    #[test]
    fn the_version_is_checked_before_the_lease() {
        let refused = check(&commit(Some(1), LeaseChange::ClearExpired(100), 0), stored(2, 0, Some(150)));
        assert!(matches!(refused, Err(StoreError::Conflict { expected: 1, found: 2, .. })), "{refused:?}");
    }

    #[test]
    fn versions_and_sequence_numbers_stay_within_a_bigint() {
        let top = i64::MAX as u64;
        let refused = check(&commit(Some(top), LeaseChange::Keep, 0), stored(top, 0, None));
        assert!(matches!(&refused, Err(StoreError::Backend(text)) if text.contains("no successor")), "{refused:?}");
        let refused = check(&commit(Some(u64::MAX), LeaseChange::Keep, 0), stored(u64::MAX, 0, None));
        assert!(matches!(refused, Err(StoreError::Backend(_))));
        let refused = check(&commit(Some(1), LeaseChange::Keep, 2), stored(1, top - 1, None));
        assert!(matches!(&refused, Err(StoreError::Backend(text)) if text.contains("overflow")), "{refused:?}");
        assert!(check(&commit(Some(1), LeaseChange::Keep, 1), stored(1, top - 1, None)).is_ok());
    }
}
