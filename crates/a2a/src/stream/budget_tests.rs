//! The stream budget counts what is held for a subscriber after it left the queue: the
//! charges of yielded events (live or replayed), until dropped; a cut-off subscriber
//! holding some has its connection closed.

use std::time::Duration;

use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::store::memory::{MemoryOptions, MemoryStore};
use crate::store::{Commit, EventRecord, TaskRecord};

const WAIT: Duration = Duration::from_secs(5);

fn store() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new(MemoryOptions { ttl: None, capacity: 1_000, max_events_per_task: 1_000 }))
}

fn event(seq: u64, size: usize) -> EventRecord {
    EventRecord { seq, body: vec![b'x'; size].into(), last: false }
}

/// Commits `sizes.len()` events of these sizes to task `id` without publishing them.
async fn commit(store: &Arc<dyn Store>, id: &str, sizes: &[usize]) -> Vec<EventRecord> {
    let task = TaskRecord {
        key: TaskKey::new("", id),
        context_id: "ctx".into(),
        state: "TASK_STATE_WORKING".into(),
        terminal: false,
        status_ts_ms: 0,
        version: 0,
        body: Vec::new().into(),
        lease: None,
    };
    let events = sizes.iter().map(|size| (vec![b'x'; *size].into(), false)).collect();
    let commit = Commit { task, expected_version: None, events, push: false, lease: Default::default() };
    store.commit(commit).await.unwrap().events
}

async fn next_charged(subscription: &mut Subscription) -> (StreamItem, Charge) {
    let (item, charge) = timeout(WAIT, subscription.next_charged()).await.expect("stream stalled").unwrap();
    (item.unwrap(), charge)
}

#[tokio::test]
async fn one_publish_checks_the_budget_at_each_offer() {
    // Three listeners of one task, an event of 100 bytes, a budget of 250: two copies fit.
    let hub = EventHub::new(HubOptions { queue: 10, budget_bytes: 250 });
    let listeners: Vec<_> = (0..3).map(|_| hub.listen(&TaskKey::new("", "t"))).collect();
    hub.publish(&TaskKey::new("", "t"), &[event(1, 100)]);
    assert_eq!(hub.queued_bytes(), 200);
    assert_eq!(listeners.iter().filter(|l| l.is_cut_off()).count(), 1);
    assert_eq!(hub.subscriber_count(), 2);
}

#[tokio::test]
async fn a_yielded_event_stays_charged_until_dropped_and_a_cut_closes_its_connection() {
    let store = store();
    let hub = EventHub::new(HubOptions { queue: 10, budget_bytes: 1_000 });
    let first = commit(&store, "a", &[600]).await;
    let mut a = hub.subscribe(Arc::clone(&store), TaskKey::new("", "a"), 0);
    // Replayed from the store, and charged as it is yielded.
    let (item, mut charge) = next_charged(&mut a).await;
    assert_eq!(item, StreamItem::Event(first[0].clone()));
    assert_eq!((charge.bytes(), hub.queued_bytes()), (600, 600));
    // The binding makes it the frame's size and binds its connection's closer.
    charge.resize(620);
    let connection = CancellationToken::new();
    charge.bind(&connection);
    assert_eq!(hub.queued_bytes(), 620);

    // Another task's event needs room: the subscriber holding the frame is cut off, and
    // its connection closed, which is what frees the frame.
    let second = commit(&store, "b", &[600]).await;
    let b = hub.listen(&TaskKey::new("", "b"));
    hub.publish(&TaskKey::new("", "b"), &second);
    assert!(connection.is_cancelled());
    assert!(!b.is_cut_off());
    // Counted until the connection lets go of it, but not against the others.
    assert_eq!(hub.queued_bytes(), 1_220);
    drop(charge);
    assert_eq!(hub.queued_bytes(), 600);
    assert_eq!(next_charged(&mut a).await.0, StreamItem::Lagged);
    assert_eq!(a.last_seq(), 1);
    drop(b);
    assert_eq!(hub.queued_bytes(), 0);
}

#[tokio::test]
async fn a_replay_that_cannot_be_charged_ends_lagged_after_what_it_delivered() {
    let store = store();
    let hub = EventHub::new(HubOptions { queue: 10, budget_bytes: 1_000 });
    commit(&store, "a", &[600, 600]).await;
    let mut a = hub.subscribe(Arc::clone(&store), TaskKey::new("", "a"), 0);
    let (_, held) = next_charged(&mut a).await;
    // The first frame not yet written: the second does not fit beside it.
    assert_eq!(next_charged(&mut a).await.0, StreamItem::Lagged);
    assert_eq!(a.last_seq(), 1, "resumes after the one it delivered");
    drop(held);
    assert_eq!(hub.queued_bytes(), 0);
    // Written out in time, the same replay goes through.
    let mut again = hub.subscribe(Arc::clone(&store), TaskKey::new("", "a"), 0);
    for seq in 1..=2 {
        let (item, charge) = next_charged(&mut again).await;
        assert!(matches!(item, StreamItem::Event(e) if e.seq == seq));
        drop(charge);
    }
    assert_eq!(hub.queued_bytes(), 0);
}
