//! Unit tests of the memory store (the shared contract suite is tests/store_contract.rs).

use super::*;

fn store(ttl: Option<Duration>, capacity: usize, max_events_per_task: usize) -> MemoryStore {
    MemoryStore::new(MemoryOptions { ttl, capacity, max_events_per_task })
}

fn record(id: &str, terminal: bool, status_ts_ms: i64) -> TaskRecord {
    TaskRecord {
        key: TaskKey::new("", id),
        context_id: "ctx".into(),
        state: if terminal { "TASK_STATE_COMPLETED" } else { "TASK_STATE_WORKING" }.into(),
        terminal,
        status_ts_ms,
        version: 0,
        body: Vec::new().into(),
        lease: None,
    }
}

/// Creates (or updates, at the stored version) a task with `events` new events.
fn put(store: &MemoryStore, record: TaskRecord, events: usize, now_ms: i64) -> Committed {
    let expected_version = store.lock().unwrap().tasks.get(&record.key).map(|entry| entry.record.version);
    let events = (0..events).map(|n| (format!("e{n}").into_bytes().into(), false)).collect();
    store
        .commit_at(Commit { task: record, expected_version, events, push: true, lease: LeaseChange::Keep }, now_ms)
        .unwrap()
}

fn ids(store: &MemoryStore) -> Vec<String> {
    let mut ids: Vec<String> = store.lock().unwrap().tasks.keys().map(|key| key.id.clone()).collect();
    ids.sort();
    ids
}

#[test]
fn capacity_evicts_the_oldest_terminal_tasks_first() {
    let store = store(None, 3, 10);
    put(&store, record("done-old", true, 100), 0, 0);
    put(&store, record("live", false, 50), 0, 0);
    put(&store, record("done-new", true, 300), 0, 0);
    put(&store, record("done-mid", true, 200), 0, 0);
    assert_eq!(ids(&store), ["done-mid", "done-new", "live"]);
    put(&store, record("live-2", false, 10), 0, 0);
    assert_eq!(ids(&store), ["done-new", "live", "live-2"]);
}

#[test]
fn store_grows_past_capacity_rather_than_evict_live_tasks() {
    let store = store(Some(Duration::from_millis(1)), 2, 10);
    for n in 0..5 {
        put(&store, record(&format!("live-{n}"), false, n), 0, 1_000_000);
    }
    assert_eq!(store.task_count().unwrap(), 5);
    assert_eq!(store.evict_expired(i64::MAX).unwrap(), 0);
    // Once a task ends it becomes evictable, oldest first.
    put(&store, record("live-3", true, 3), 0, 0);
    put(&store, record("live-1", true, 1), 0, 0);
    assert_eq!(store.task_count().unwrap(), 4, "the task just committed is kept until the next pass");
    assert_eq!(store.evict_expired(0).unwrap(), 1);
    assert_eq!(ids(&store), ["live-0", "live-2", "live-4"]);
}

#[test]
fn ttl_evicts_terminal_tasks_older_than_it() {
    let store = store(Some(Duration::from_secs(10)), 100, 10);
    put(&store, record("done-at-0", true, 0), 0, 0);
    put(&store, record("done-at-5s", true, 5_000), 0, 0);
    put(&store, record("live-at-0", false, 0), 0, 0);
    assert_eq!(store.evict_expired(10_000).unwrap(), 0, "exactly ttl old is not older than it");
    assert_eq!(store.evict_expired(10_001).unwrap(), 1);
    assert_eq!(ids(&store), ["done-at-5s", "live-at-0"]);
    // A commit evicts too.
    put(&store, record("other", false, 0), 0, 15_001);
    assert_eq!(ids(&store), ["live-at-0", "other"]);
}

#[test]
fn eviction_removes_events_push_configs_and_queued_deliveries() {
    let store = store(None, 1, 10);
    let key = TaskKey::new("", "doomed");
    put(&store, record("doomed", false, 0), 0, 0);
    let config = PushConfigRecord { task: key.clone(), id: "cfg".into(), body: b"{}".to_vec() };
    futures::executor::block_on(store.put_push_config(config)).unwrap();
    put(&store, record("doomed", true, 0), 3, 0);
    assert_eq!(store.lock().unwrap().outbox.len(), 3);
    put(&store, record("survivor", false, 1), 0, 0);
    let state = store.lock().unwrap();
    assert!(!state.tasks.contains_key(&key));
    assert!(state.push_configs.is_empty() && state.outbox.is_empty() && state.outbox_by_task.is_empty());
    assert!(state.terminal.is_empty());
    assert_eq!(state.by_tenant.get("").map(BTreeSet::len), Some(1));
    drop(state);
    let missing = futures::executor::block_on(store.read_events(&key, 0, 10)).unwrap_err();
    assert!(matches!(missing, StoreError::NotFound(_)));
}

#[test]
fn log_keeps_the_most_recent_events_and_reports_the_gap() {
    let store = store(None, 10, 4);
    let key = TaskKey::new("", "t");
    put(&store, record("t", false, 0), 3, 0);
    put(&store, record("t", false, 0), 7, 0);
    let page = futures::executor::block_on(store.read_events(&key, 0, 100)).unwrap();
    assert_eq!(page.events.iter().map(|event| event.seq).collect::<Vec<_>>(), [7, 8, 9, 10]);
    assert_eq!((page.first_held, page.last_written), (7, 10));
    let page = futures::executor::block_on(store.read_events(&key, 8, 100)).unwrap();
    assert_eq!(page.events.iter().map(|event| event.seq).collect::<Vec<_>>(), [9, 10]);
    let committed = put(&store, record("t", false, 0), 1, 0);
    assert_eq!(committed.events[0].seq, 11, "numbers are never reused after events are dropped");
}

#[test]
fn deliveries_outlive_the_events_dropped_from_the_log() {
    let store = store(None, 10, 1);
    let key = TaskKey::new("", "t");
    put(&store, record("t", false, 0), 0, 0);
    let config = PushConfigRecord { task: key, id: "cfg".into(), body: b"{}".to_vec() };
    futures::executor::block_on(store.put_push_config(config)).unwrap();
    put(&store, record("t", false, 0), 3, 0);
    let claimed = futures::executor::block_on(store.claim_deliveries(0, 10, 10)).unwrap();
    let events: Vec<_> = claimed.iter().map(|delivery| (delivery.seq, delivery.event.clone())).collect();
    assert_eq!(events, [(1, b"e0".to_vec()), (2, b"e1".to_vec()), (3, b"e2".to_vec())]);
}

#[test]
fn idempotency_keys_are_forgotten_after_the_ttl_and_beyond_capacity() {
    let store = store(Some(Duration::from_secs(1)), 2, 10);
    let claim = |key: &str, now_ms| store.claim_idempotency_now("", key, "fp", now_ms).unwrap();
    assert_eq!(claim("a", 0), IdempotencyClaim::Claimed);
    assert!(matches!(claim("a", 1_000), IdempotencyClaim::Seen { .. }));
    assert_eq!(claim("a", 1_001), IdempotencyClaim::Claimed, "expired, so claimable again");
    assert_eq!(claim("b", 1_002), IdempotencyClaim::Claimed);
    assert_eq!(claim("c", 1_003), IdempotencyClaim::Claimed);
    assert_eq!(store.lock().unwrap().idempotency.len(), 2, "the oldest beyond capacity is forgotten");
    assert_eq!(claim("a", 1_004), IdempotencyClaim::Claimed);
}
