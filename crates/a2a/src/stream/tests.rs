//! Subscriptions over the in-process hub and the memory and SQLite stores.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::timeout;

use super::*;
use crate::store::memory::{MemoryOptions, MemoryStore};
#[cfg(feature = "sqlite")]
use crate::store::sqlite::SqliteStore;
use crate::store::{Commit, TaskRecord};

/// Every wait of these tests is bounded by this.
const WAIT: Duration = Duration::from_secs(5);

fn memory_store(max_events_per_task: usize) -> Arc<dyn Store> {
    Arc::new(MemoryStore::new(MemoryOptions { ttl: None, capacity: 1_000, max_events_per_task }))
}

fn key() -> TaskKey {
    TaskKey::new("", "task")
}

fn record() -> TaskRecord {
    TaskRecord {
        key: key(),
        context_id: "ctx".into(),
        state: "TASK_STATE_WORKING".into(),
        terminal: false,
        status_ts_ms: 0,
        version: 0,
        body: Vec::new().into(),
        lease: None,
    }
}

/// A writer of one task: commits events to the store, then publishes them.
struct Writer {
    store: Arc<dyn Store>,
    bus: EventHub,
    version: Option<u64>,
    next: u64,
}

impl Writer {
    async fn new(store: Arc<dyn Store>, bus: EventHub) -> Self {
        let mut writer = Writer { store, bus, version: None, next: 1 };
        writer.write(0, false, true).await;
        writer
    }

    /// Commits `count` events (the last one final if `end`); publishes them if asked.
    async fn write(&mut self, count: usize, end: bool, publish: bool) -> Vec<EventRecord> {
        let events = (0..count)
            .map(|n| {
                let seq = self.next + n as u64;
                (format!("event {seq}").into_bytes().into(), end && n + 1 == count)
            })
            .collect();
        let commit =
            Commit { task: record(), expected_version: self.version, events, push: false, lease: Default::default() };
        let committed = self.store.commit(commit).await.unwrap();
        self.version = Some(committed.version);
        self.next += count as u64;
        if publish {
            self.bus.publish(&key(), &committed.events);
        }
        committed.events
    }
}

async fn next(subscription: &mut Subscription) -> Option<StreamItem> {
    timeout(WAIT, subscription.next()).await.expect("stream stalled").map(|item| item.unwrap())
}

fn seq(item: Option<StreamItem>) -> u64 {
    match item {
        Some(StreamItem::Event(event)) => {
            assert_eq!(event.body, format!("event {}", event.seq).into_bytes());
            event.seq
        }
        other => panic!("expected an event, got {other:?}"),
    }
}

/// Reads to the end, subscribing again after the last event seen whenever the
/// subscription is cut off. Returns every sequence number received, in order, and the
/// number of times it was cut off.
async fn read_all(hub: EventHub, store: Arc<dyn Store>, after: u64) -> (Vec<u64>, usize) {
    let mut received = Vec::new();
    let mut cut_offs = 0;
    let mut subscription = hub.subscribe(Arc::clone(&store), key(), after);
    loop {
        match next(&mut subscription).await {
            Some(StreamItem::Event(event)) => received.push(event.seq),
            Some(StreamItem::Lagged) => {
                cut_offs += 1;
                let resume = subscription.last_seq();
                subscription = hub.subscribe(Arc::clone(&store), key(), resume);
            }
            Some(gap @ StreamItem::Gap { .. }) => panic!("unexpected {gap:?}"),
            None => return (received, cut_offs),
        }
    }
}

/// Returns how many times readers were cut off.
async fn replay_and_live_lose_and_repeat_nothing(store: Arc<dyn Store>, queue: usize) -> usize {
    const EVENTS: u64 = 1_000;
    let hub = EventHub::new(HubOptions { queue, ..HubOptions::default() });
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let (progress_tx, progress) = tokio::sync::watch::channel(0u64);
    let mut rng = StdRng::seed_from_u64(7);
    let mut readers = Vec::new();
    for _ in 0..24 {
        let start_at = rng.random_range(0..EVENTS);
        // Some readers resume from a point they have seen, some start from the beginning.
        let after_fraction = rng.random_range(0..=2u64);
        let (hub, store, mut progress) = (hub.clone(), Arc::clone(&store), progress.clone());
        readers.push(tokio::spawn(async move {
            let written = *progress.wait_for(|written| *written >= start_at).await.unwrap();
            let after = written * after_fraction / 2;
            (after, read_all(hub, store, after).await)
        }));
    }
    let writing = tokio::spawn(async move {
        let mut written = 0;
        while written < EVENTS {
            let batch = (written % 3 + 1).min(EVENTS - written);
            writer.write(batch as usize, written + batch == EVENTS, true).await;
            written += batch;
            progress_tx.send_replace(written);
            tokio::task::yield_now().await;
        }
    });
    timeout(WAIT, writing).await.expect("writer stalled").unwrap();
    let mut cut_offs = 0;
    for reader in readers {
        let (after, (received, reader_cut_offs)) = timeout(WAIT, reader).await.expect("reader stalled").unwrap();
        assert_eq!(received, (after + 1..=EVENTS).collect::<Vec<_>>(), "reader after {after}");
        cut_offs += reader_cut_offs;
    }
    assert_eq!(hub.subscriber_count(), 0);
    cut_offs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replay_and_live_lose_and_repeat_nothing_under_a_concurrent_writer() {
    replay_and_live_lose_and_repeat_nothing(memory_store(10_000), 256).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replay_and_live_lose_and_repeat_nothing_with_tiny_queues() {
    // A batch of three events overflows a queue of two, so readers are cut off and
    // resume after their last event.
    let cut_offs = replay_and_live_lose_and_repeat_nothing(memory_store(10_000), 2).await;
    assert!(cut_offs > 0);
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replay_and_live_lose_and_repeat_nothing_on_sqlite() {
    replay_and_live_lose_and_repeat_nothing(Arc::new(SqliteStore::open_in_memory().unwrap()), 256).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stalled_subscriber_is_cut_off_while_another_receives_everything() {
    const EVENTS: u64 = 100;
    let store = memory_store(10_000);
    let hub = EventHub::new(HubOptions { queue: 8, ..HubOptions::default() });
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let mut stalled = hub.subscribe(Arc::clone(&store), key(), 0);
    let mut active = hub.subscribe(Arc::clone(&store), key(), 0);
    assert_eq!(hub.subscriber_count(), 2);

    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let reading = tokio::spawn(async move {
        let mut received = Vec::new();
        while let Some(item) = next(&mut active).await {
            let seq = seq(Some(item));
            received.push(seq);
            seen_tx.send(seq).unwrap();
        }
        received
    });
    for n in 1..=EVENTS {
        // `publish` is synchronous: returning at all shows it did not wait for the
        // stalled subscriber. Waiting for the active one keeps it within its queue.
        writer.write(1, n == EVENTS, true).await;
        assert_eq!(timeout(WAIT, seen.recv()).await.expect("active subscriber stalled"), Some(n));
    }
    let received = timeout(WAIT, reading).await.expect("active subscriber stalled").unwrap();
    assert_eq!(received, (1..=EVENTS).collect::<Vec<_>>());
    assert_eq!(hub.subscriber_count(), 0, "cut off, and the finished one dropped");

    assert_eq!(next(&mut stalled).await, Some(StreamItem::Lagged));
    assert_eq!(next(&mut stalled).await, None);
    assert_eq!(stalled.last_seq(), 0, "resume from the start");
    let (resumed, _) = read_all(hub.clone(), store, stalled.last_seq()).await;
    assert_eq!(resumed, (1..=EVENTS).collect::<Vec<_>>());
}

#[tokio::test]
async fn evicted_events_show_as_a_gap() {
    let store = memory_store(10);
    let hub = EventHub::default();
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    writer.write(50, false, true).await;
    let mut subscription = hub.subscribe(Arc::clone(&store), key(), 5);
    assert_eq!(next(&mut subscription).await, Some(StreamItem::Gap { after: 5, resumed_at: 41 }));
    for expected in 41..=50 {
        assert_eq!(seq(next(&mut subscription).await), expected);
    }
    writer.write(1, true, true).await;
    assert_eq!(seq(next(&mut subscription).await), 51);
    assert_eq!(next(&mut subscription).await, None);
    assert_eq!(subscription.last_seq(), 51);
}

#[tokio::test]
async fn stream_ends_after_the_last_event() {
    let store = memory_store(100);
    let hub = EventHub::default();
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    writer.write(2, false, true).await;
    let mut subscription = hub.subscribe(Arc::clone(&store), key(), 0);
    assert_eq!(seq(next(&mut subscription).await), 1);
    writer.write(2, true, true).await;
    assert_eq!(seq(next(&mut subscription).await), 2);
    assert_eq!(seq(next(&mut subscription).await), 3);
    assert_eq!(seq(next(&mut subscription).await), 4);
    assert_eq!(next(&mut subscription).await, None);
    assert_eq!(next(&mut subscription).await, None);
    drop(subscription);
    assert_eq!(hub.subscriber_count(), 0);
}

#[tokio::test]
async fn subscribing_to_a_finished_task_replays_and_ends() {
    let store = memory_store(100);
    let hub = EventHub::default();
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    writer.write(3, true, true).await;
    let mut from_start = hub.subscribe(Arc::clone(&store), key(), 0);
    for expected in 1..=3 {
        assert_eq!(seq(next(&mut from_start).await), expected);
    }
    assert_eq!(next(&mut from_start).await, None);
    // A client that already saw the last event gets an empty stream, not a hang.
    let mut at_end = hub.subscribe(Arc::clone(&store), key(), 3);
    assert_eq!(next(&mut at_end).await, None);
    drop((from_start, at_end));
    assert_eq!(hub.subscriber_count(), 0);
}

#[tokio::test]
async fn live_event_ahead_of_the_cursor_fetches_the_missing_ones() {
    let store = memory_store(100);
    let hub = EventHub::default();
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let mut subscription = hub.subscribe(Arc::clone(&store), key(), 0);
    writer.write(1, false, true).await;
    assert_eq!(seq(next(&mut subscription).await), 1);
    // Event 2 is committed but its announcement never comes (another process, or a
    // writer that announces late); event 3's does.
    writer.write(1, false, false).await;
    writer.write(1, false, true).await;
    assert_eq!(seq(next(&mut subscription).await), 2);
    assert_eq!(seq(next(&mut subscription).await), 3);
    // The late announcement of 2 is skipped.
    let late = store.read_events(&key(), 1, 1).await.unwrap().events;
    hub.publish(&key(), &late);
    writer.write(1, true, true).await;
    assert_eq!(seq(next(&mut subscription).await), 4);
    assert_eq!(next(&mut subscription).await, None);
}

#[tokio::test]
async fn written_notice_makes_the_subscription_read_the_store() {
    // What a LISTEN/NOTIFY bus would send: no bodies, only how far the log goes.
    struct NoticeOnly(EventHub);
    impl EventBus for NoticeOnly {
        fn publish(&self, _key: &TaskKey, _events: &[EventRecord]) {}
        fn listen(&self, key: &TaskKey) -> Listener {
            self.0.listen(key)
        }
    }
    let store = memory_store(100);
    let hub = EventHub::default();
    let bus = NoticeOnly(hub.clone());
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    writer.write(1, false, false).await;
    let mut subscription = subscribe(&bus, Arc::clone(&store), key(), 0);
    // The replay yields event 1; the subscription then waits for notices.
    assert_eq!(seq(next(&mut subscription).await), 1);
    writer.write(2, true, false).await;
    hub.notify_written(&key(), 3);
    assert_eq!(seq(next(&mut subscription).await), 2);
    assert_eq!(seq(next(&mut subscription).await), 3);
    assert_eq!(next(&mut subscription).await, None);
}

#[tokio::test]
async fn dropped_subscriptions_leave_the_hub() {
    let store = memory_store(100);
    let hub = EventHub::new(HubOptions { queue: 1, ..HubOptions::default() });
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let subscriptions: Vec<_> = (0..10).map(|_| hub.subscribe(Arc::clone(&store), key(), 0)).collect();
    let other = hub.subscribe(Arc::clone(&store), TaskKey::new("", "other"), 0);
    assert_eq!(hub.subscriber_count(), 11);
    drop(subscriptions);
    assert_eq!(hub.subscriber_count(), 1);
    drop(other);
    assert_eq!(hub.subscriber_count(), 0);
    assert!(hub.inner.lock().is_empty(), "no empty entries left behind");
    // Cut-off subscribers leave too, before they are dropped.
    let _lagging: Vec<_> = (0..3).map(|_| hub.subscribe(Arc::clone(&store), key(), 0)).collect();
    writer.write(2, false, true).await;
    assert_eq!(hub.subscriber_count(), 0);
}

#[tokio::test]
async fn a_missed_notice_is_made_good_by_notify_all_without_repeating_anything() {
    let store = memory_store(100);
    let hub = EventHub::default();
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let mut subscription = hub.subscribe(Arc::clone(&store), key(), 0);
    writer.write(1, false, true).await;
    assert_eq!(seq(next(&mut subscription).await), 1);
    // Written elsewhere while the bus was deaf: no publish, no notice.
    writer.write(2, false, false).await;
    hub.notify_all();
    assert_eq!(seq(next(&mut subscription).await), 2);
    assert_eq!(seq(next(&mut subscription).await), 3);
    // Another wake-up finds nothing new: the subscription reads, and keeps waiting.
    hub.notify_all();
    hub.notify_written(&key(), 3);
    assert!(timeout(Duration::from_millis(50), subscription.next()).await.is_err());
    writer.write(1, true, true).await;
    assert_eq!(seq(next(&mut subscription).await), 4);
    assert_eq!(next(&mut subscription).await, None);
    drop(subscription);
    assert_eq!(hub.subscriber_count(), 0);
    // Wake-ups for tasks nobody follows are dropped.
    hub.notify_written(&TaskKey::new("", "other"), 9);
    hub.notify_all();
    assert!(hub.inner.lock().is_empty());
}

#[tokio::test]
async fn a_notice_about_events_already_published_here_delivers_nothing_twice() {
    let store = memory_store(100);
    let hub = EventHub::default();
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let mut subscription = hub.subscribe(Arc::clone(&store), key(), 0);
    // The in-process publish and the database's notice of the same commit, in both
    // orders: the notice may come back before or after the writer publishes.
    writer.write(2, false, true).await;
    hub.notify_written(&key(), 2);
    hub.notify_written(&key(), 3);
    writer.write(1, false, true).await;
    writer.write(1, true, false).await;
    hub.notify_written(&key(), 4);
    let events = writer.store.read_events(&key(), 3, 1).await.unwrap().events;
    hub.publish(&key(), &events);
    let mut received = Vec::new();
    while let Some(item) = next(&mut subscription).await {
        received.push(seq(Some(item)));
    }
    assert_eq!(received, vec![1, 2, 3, 4]);
}

#[tokio::test]
async fn a_full_queue_cuts_a_subscriber_off_on_wake_ups_too() {
    let store = memory_store(100);
    let hub = EventHub::new(HubOptions { queue: 2, ..HubOptions::default() });
    let _writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let mut stalled = hub.subscribe(Arc::clone(&store), key(), 0);
    for last_seq in 1..=3 {
        hub.notify_written(&key(), last_seq);
    }
    assert_eq!(hub.subscriber_count(), 0);
    assert_eq!(next(&mut stalled).await, Some(StreamItem::Lagged));
}

/// A store whose event reads fail while `failing` is set (a database that restarts).
struct Flaky {
    inner: Arc<dyn Store>,
    failing: std::sync::atomic::AtomicBool,
    failures: std::sync::atomic::AtomicUsize,
}

impl Flaky {
    fn failing(&self, on: bool) {
        self.failing.store(on, Ordering::SeqCst);
    }
}

/// Every call goes to the inner store, except event reads while failing.
macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        $(fn $name(&self, $($arg: $ty),*) -> crate::store::BoxFuture<'_, Result<$out, StoreError>> {
            self.inner.$name($($arg),*)
        })*
    };
}

impl Store for Flaky {
    fn read_events(
        &self,
        key: &TaskKey,
        after: u64,
        limit: usize,
    ) -> crate::store::BoxFuture<'_, Result<crate::store::EventPage, StoreError>> {
        if self.failing.load(Ordering::SeqCst) {
            self.failures.fetch_add(1, Ordering::SeqCst);
            return Box::pin(async { Err(StoreError::Backend("connection refused".into())) });
        }
        self.inner.read_events(key, after, limit)
    }

    delegate! {
        commit(commit: Commit) -> crate::store::Committed;
        get_task(key: &TaskKey) -> Option<TaskRecord>;
        list_tasks(tenant: &str, query: crate::store::ListQuery) -> crate::store::ListPage;
        put_push_config(config: crate::store::PushConfigRecord) -> ();
        get_push_config(task: &TaskKey, id: &str) -> Option<crate::store::PushConfigRecord>;
        list_push_configs(task: &TaskKey, after: Option<&str>, limit: usize) -> Vec<crate::store::PushConfigRecord>;
        delete_push_config(task: &TaskKey, id: &str) -> bool;
        claim_deliveries(now_ms: i64, lease_ms: i64, limit: usize) -> Vec<crate::store::Delivery>;
        delivery_done(id: i64) -> ();
        delivery_retry(id: i64, retry_at_ms: i64, error: &str) -> ();
        delivery_dead(id: i64, at_ms: i64, error: &str) -> ();
        dead_letters(limit: usize) -> Vec<crate::store::DeadLetter>;
        next_delivery_due() -> Option<i64>;
        claim_idempotency(tenant: &str, key: &str, fingerprint: &str, now_ms: i64) -> crate::store::IdempotencyClaim;
        complete_idempotency(tenant: &str, key: &str, result: Vec<u8>) -> ();
        release_idempotency(tenant: &str, key: &str) -> ();
        renew_leases(owner: &str, keys: Vec<TaskKey>, until_ms: i64) -> usize;
        release_lease(key: &TaskKey, owner: &str, expire: bool) -> bool;
        expired_leases(now_ms: i64, limit: usize) -> Vec<TaskKey>;
        purge(before_ms: i64, limit: usize) -> crate::store::Purged;
    }
}

#[tokio::test]
async fn a_subscription_rides_out_a_store_that_fails_for_a_while() {
    let inner = memory_store(100);
    let flaky = Arc::new(Flaky {
        inner: Arc::clone(&inner),
        failing: std::sync::atomic::AtomicBool::new(false),
        failures: std::sync::atomic::AtomicUsize::new(0),
    });
    let store: Arc<dyn Store> = flaky.clone();
    let hub = EventHub::default();
    let mut writer = Writer::new(Arc::clone(&inner), hub.clone()).await;
    writer.write(1, false, false).await;
    let mut subscription = hub.subscribe(Arc::clone(&store), key(), 0);
    assert_eq!(seq(next(&mut subscription).await), 1);
    // The database goes away; a notice makes the subscription read, and fail.
    flaky.failing(true);
    writer.write(2, false, false).await;
    hub.notify_written(&key(), 3);
    let reading = tokio::spawn(async move {
        let first = next(&mut subscription).await;
        (first, subscription)
    });
    // It keeps trying (a notice retries at once) and yields nothing meanwhile.
    while flaky.failures.load(Ordering::SeqCst) < 3 {
        hub.notify_all();
        tokio::task::yield_now().await;
    }
    assert!(!reading.is_finished());
    // Back: it goes on from where it was, without an error, a gap or a repeat.
    flaky.failing(false);
    hub.notify_all();
    let (first, mut subscription) = timeout(WAIT, reading).await.expect("stalled").unwrap();
    assert_eq!(seq(first), 2);
    assert_eq!(seq(next(&mut subscription).await), 3);
    writer.write(1, true, true).await;
    assert_eq!(seq(next(&mut subscription).await), 4);
    assert_eq!(next(&mut subscription).await, None);
}

#[tokio::test]
async fn a_subscription_to_a_task_that_is_gone_ends_with_the_error_at_once() {
    let store = memory_store(100);
    let hub = EventHub::default();
    let mut subscription = hub.subscribe(store, TaskKey::new("", "never"), 0);
    assert!(matches!(next_raw(&mut subscription).await, Some(Err(StoreError::NotFound(_)))));
    assert_eq!(next(&mut subscription).await, None);
}

async fn next_raw(subscription: &mut Subscription) -> Option<Result<StreamItem, StoreError>> {
    timeout(WAIT, subscription.next()).await.expect("stream stalled")
}

#[tokio::test]
async fn the_notice_of_a_commit_published_here_sends_nothing() {
    let store = memory_store(100);
    let hub = EventHub::new(HubOptions { queue: 2, ..HubOptions::default() });
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let mut subscription = hub.subscribe(Arc::clone(&store), key(), 0);
    writer.write(1, false, true).await;
    // Were these queued, the queue of two would overflow and cut the subscriber off.
    for _ in 0..3 {
        hub.notify_written(&key(), 1);
    }
    assert_eq!(hub.subscriber_count(), 1);
    assert_eq!(seq(next(&mut subscription).await), 1);
    writer.write(1, true, false).await;
    hub.notify_written(&key(), 2);
    assert_eq!(seq(next(&mut subscription).await), 2);
    assert_eq!(next(&mut subscription).await, None);
}

fn event(seq: u64, size: usize) -> EventRecord {
    EventRecord { seq, body: vec![b'x'; size].into(), last: false }
}

#[tokio::test]
async fn the_hub_budget_bounds_what_stalled_listeners_hold_and_frees_it_at_once() {
    // 20 listeners on 20 tasks that never read, 10 events of 200 bytes each: 40,000
    // bytes would be queued; the budget is 10,000.
    let hub = EventHub::new(HubOptions { queue: 1_000, budget_bytes: 10_000 });
    let keys: Vec<_> = (0..20).map(|t| TaskKey::new("", format!("task-{t}"))).collect();
    let mut listeners: Vec<_> = keys.iter().map(|k| hub.listen(k)).collect();
    for seq in 1..=10 {
        for k in &keys {
            hub.publish(k, &[event(seq, 200)]);
            assert!(hub.queued_bytes() <= 10_000, "{} bytes queued", hub.queued_bytes());
        }
    }
    let cut: Vec<_> = listeners.iter().map(Listener::is_cut_off).collect();
    assert!(cut.iter().any(|c| *c) && !cut.iter().all(|c| *c), "{cut:?}");
    for (listener, was_cut) in listeners.iter_mut().zip(&cut) {
        if *was_cut {
            // Emptied when it was cut off, not when its reader comes back.
            assert_eq!(listener.try_recv(), Err(TryRecvError::Disconnected));
        } else {
            // The others hold their events in order, nothing missing.
            let seqs: Vec<u64> = std::iter::from_fn(|| match listener.try_recv() {
                Ok(Notice::Event(e)) => Some(e.seq),
                _ => None,
            })
            .collect();
            assert_eq!(seqs.first(), Some(&1), "{seqs:?}");
            assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
        }
    }
    assert_eq!(hub.queued_bytes(), 0, "every queued byte was taken or freed");
    drop(listeners);
    assert_eq!(hub.queued_bytes(), 0);
}

#[tokio::test]
async fn over_budget_the_stalled_subscriber_is_cut_off_and_resumes_from_the_store() {
    let store = memory_store(1_000);
    // Events are ~10 bytes ("event N"): 30 fit.
    let hub = EventHub::new(HubOptions { queue: 1_000, budget_bytes: 300 });
    let mut writer = Writer::new(Arc::clone(&store), hub.clone()).await;
    let mut stalled = hub.subscribe(Arc::clone(&store), key(), 0);
    let mut reading = hub.subscribe(Arc::clone(&store), key(), 0);
    for round in 0..10 {
        writer.write(5, round == 9, true).await;
        // The reader keeps up; the stalled one only accumulates.
        for _ in 0..5 {
            seq(next(&mut reading).await);
        }
        assert!(hub.queued_bytes() <= 300 + 5 * 10, "{}", hub.queued_bytes());
    }
    assert_eq!(next(&mut reading).await, None, "the reader got all 50 and the end");
    assert_eq!(next(&mut stalled).await, Some(StreamItem::Lagged));
    // Resumed after its last event (none): it gets all 50 from the store.
    let (received, _) = read_all(hub.clone(), Arc::clone(&store), stalled.last_seq()).await;
    assert_eq!(received, (1..=50).collect::<Vec<u64>>());
}
