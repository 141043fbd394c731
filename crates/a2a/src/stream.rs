//! Live fan-out of task events with replay from the log.
//!
//! A writer commits a task's events to the [`Store`] and then announces them on an
//! [`EventBus`]. A [`Subscription`] joins the two: it starts listening on the bus first,
//! then replays the task's log from the store, then follows the live announcements. Any
//! sequence number at or below the last one it produced is skipped, so nothing is lost or
//! repeated in the window between replay and live. A live event that arrives ahead of
//! the next expected sequence number (the subscriber started listening between two
//! commits, or two writers announced out of order) makes it read the missing ones from
//! the store first.
//!
//! The bus never waits for a subscriber: each has a bounded queue, and one whose queue is
//! full when an event is announced is cut off; its stream then says
//! [`StreamItem::Lagged`] and ends, and the client resumes from the last sequence number
//! it saw. Everything here is bytes: no protocol type is parsed.
//!
//! [`EventHub`] is the in-process bus, enough for one server process. Several processes
//! sharing a PostgreSQL store would use a bus on `LISTEN`/`NOTIFY` instead: the commit
//! issues a `NOTIFY` carrying the task key and its new last sequence number (payloads are
//! small, so not the events), `publish` does nothing, and each listener is fed
//! [`Notice::Written`], which makes the subscription read the events from the store.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use futures::Stream;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::{TryRecvError, TrySendError};

use crate::store::{EventRecord, Store, StoreError, TaskKey};

/// How many events a subscription reads from the store at a time.
const REPLAY_PAGE: usize = 256;

/// What a bus tells a listener about one task.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// An event that was just committed.
    Event(EventRecord),
    /// Events up to this sequence number were committed; read them from the store.
    Written { last_seq: u64 },
}

/// One listener's end of an [`EventBus`]: a bounded queue of notices for one task.
///
/// Dropping it unregisters the listener.
pub struct Listener {
    receiver: mpsc::Receiver<Notice>,
    cut_off: Arc<AtomicBool>,
    _registration: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener").field("cut_off", &self.is_cut_off()).finish_non_exhaustive()
    }
}

impl Listener {
    /// A listener on `receiver`. The bus sets `cut_off` before it drops the sender of a
    /// listener that fell behind; `registration` is dropped with the listener, which is
    /// how a bus learns that the listener is gone.
    pub fn new(
        receiver: mpsc::Receiver<Notice>,
        cut_off: Arc<AtomicBool>,
        registration: impl Any + Send + Sync,
    ) -> Self {
        Listener { receiver, cut_off, _registration: Box::new(registration) }
    }

    /// The next notice; `None` once the bus dropped this listener (see
    /// [`Listener::is_cut_off`]) or shut down.
    pub async fn recv(&mut self) -> Option<Notice> {
        self.receiver.recv().await
    }

    /// The next notice if one is queued.
    pub fn try_recv(&mut self) -> Result<Notice, TryRecvError> {
        self.receiver.try_recv()
    }

    /// Whether the bus cut this listener off because its queue was full.
    pub fn is_cut_off(&self) -> bool {
        self.cut_off.load(Ordering::Acquire)
    }
}

/// Where committed events are announced to the subscriptions of their task.
pub trait EventBus: Send + Sync + 'static {
    /// Announces events that were just committed (call it after the commit succeeded,
    /// with the events in sequence order). Never waits for a listener.
    fn publish(&self, key: &TaskKey, events: &[EventRecord]);
    /// Starts listening to the announcements for one task.
    fn listen(&self, key: &TaskKey) -> Listener;
}

/// The options of an [`EventHub`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubOptions {
    /// The number of notices queued per subscriber before it is cut off.
    pub queue: usize,
}

impl Default for HubOptions {
    /// 256 notices per subscriber.
    fn default() -> Self {
        HubOptions { queue: 256 }
    }
}

/// The in-process [`EventBus`]. Cloning it gives another handle on the same hub.
#[derive(Debug, Clone)]
pub struct EventHub {
    inner: Arc<HubInner>,
}

#[derive(Debug)]
struct HubInner {
    queue: usize,
    next_id: AtomicU64,
    subscribers: Mutex<HashMap<TaskKey, Vec<Slot>>>,
}

#[derive(Debug)]
struct Slot {
    id: u64,
    sender: mpsc::Sender<Notice>,
    cut_off: Arc<AtomicBool>,
}

/// Removes its slot from the hub when the listener is dropped.
struct Registration {
    hub: Weak<HubInner>,
    key: TaskKey,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some(hub) = self.hub.upgrade() else { return };
        let mut subscribers = hub.lock();
        if let Some(slots) = subscribers.get_mut(&self.key) {
            slots.retain(|slot| slot.id != self.id);
            if slots.is_empty() {
                subscribers.remove(&self.key);
            }
        }
    }
}

impl HubInner {
    /// The subscriber table. No code panics while holding the lock, so a poisoned lock
    /// still guards a consistent table and is used as it is.
    fn lock(&self) -> MutexGuard<'_, HashMap<TaskKey, Vec<Slot>>> {
        self.subscribers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl EventHub {
    /// A hub with no subscribers.
    pub fn new(options: HubOptions) -> Self {
        EventHub {
            inner: Arc::new(HubInner {
                queue: options.queue.max(1),
                next_id: AtomicU64::new(0),
                subscribers: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Follows a task's events after sequence number `after` (0 for all of them): see
    /// [`subscribe`].
    pub fn subscribe(&self, store: Arc<dyn Store>, key: TaskKey, after: u64) -> Subscription {
        subscribe(self, store, key, after)
    }

    /// The number of live subscribers over all tasks.
    pub fn subscriber_count(&self) -> usize {
        self.inner.lock().values().map(Vec::len).sum()
    }
}

impl Default for EventHub {
    fn default() -> Self {
        EventHub::new(HubOptions::default())
    }
}

impl EventBus for EventHub {
    fn publish(&self, key: &TaskKey, events: &[EventRecord]) {
        if events.is_empty() {
            return;
        }
        let mut subscribers = self.inner.lock();
        let Some(slots) = subscribers.get_mut(key) else { return };
        slots.retain(|slot| {
            for event in events {
                match slot.sender.try_send(Notice::Event(event.clone())) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => {
                        // Set before the sender is dropped, so the subscriber that sees
                        // its queue close also sees why.
                        slot.cut_off.store(true, Ordering::Release);
                        return false;
                    }
                    Err(TrySendError::Closed(_)) => return false,
                }
            }
            true
        });
        if slots.is_empty() {
            subscribers.remove(key);
        }
    }

    fn listen(&self, key: &TaskKey) -> Listener {
        let (sender, receiver) = mpsc::channel(self.inner.queue);
        let cut_off = Arc::new(AtomicBool::new(false));
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        self.inner.lock().entry(key.clone()).or_default().push(Slot { id, sender, cut_off: Arc::clone(&cut_off) });
        Listener::new(receiver, cut_off, Registration { hub: Arc::downgrade(&self.inner), key: key.clone(), id })
    }
}

/// What a subscription yields.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamItem {
    /// The next event of the task.
    Event(EventRecord),
    /// The events with sequence numbers strictly between `after` and `resumed_at` were
    /// evicted from the log before they could be read; the stream goes on at `resumed_at`.
    Gap { after: u64, resumed_at: u64 },
    /// The subscriber fell behind and was cut off; the stream ends here. Subscribe again
    /// after the last sequence number received.
    Lagged,
}

/// Follows one task's events: the log after `after`, then live ones.
///
/// The listener is registered on `bus` before anything is read from the store; the
/// replay itself happens as the subscription is polled.
pub fn subscribe(bus: &dyn EventBus, store: Arc<dyn Store>, key: TaskKey, after: u64) -> Subscription {
    let listener = bus.listen(&key);
    Subscription {
        store,
        key,
        listener,
        cursor: after,
        delivered: after,
        pending: VecDeque::new(),
        catching_up: true,
        replayed: false,
        done: false,
    }
}

/// One subscriber's stream of a task's events. Dropping it unsubscribes.
pub struct Subscription {
    store: Arc<dyn Store>,
    key: TaskKey,
    listener: Listener,
    /// The highest sequence number taken (yielded or waiting in `pending`): anything at
    /// or below it is a duplicate.
    cursor: u64,
    /// The sequence number of the last event yielded (or `after`).
    delivered: u64,
    /// Items read from the store, not yet yielded.
    pending: VecDeque<StreamItem>,
    /// Reading from the store rather than from the live queue.
    catching_up: bool,
    /// Whether the first page of the replay was read.
    replayed: bool,
    done: bool,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("key", &self.key)
            .field("delivered", &self.delivered)
            .field("catching_up", &self.catching_up)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    /// The task followed.
    pub fn key(&self) -> &TaskKey {
        &self.key
    }

    /// The sequence number of the last event yielded (the `after` given at subscription
    /// before the first): where to resume after [`StreamItem::Lagged`] or an error.
    pub fn last_seq(&self) -> u64 {
        self.delivered
    }

    /// The next item; `None` after the task's last event, after [`StreamItem::Lagged`] and
    /// after an error (a store error ends the stream too).
    pub async fn next(&mut self) -> Option<Result<StreamItem, StoreError>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                if let StreamItem::Event(event) = &item {
                    self.delivered = event.seq;
                    if event.last {
                        self.finish();
                    }
                }
                return Some(Ok(item));
            }
            if self.done {
                return None;
            }
            if self.listener.is_cut_off() {
                self.finish();
                return Some(Ok(StreamItem::Lagged));
            }
            if self.catching_up {
                // Every queued notice is about an event already committed, so the read
                // below covers it: drop them rather than let the queue fill up.
                while self.listener.try_recv().is_ok() {}
                if let Err(error) = self.read_from_store().await {
                    self.finish();
                    return Some(Err(error));
                }
                continue;
            }
            match self.listener.recv().await {
                Some(Notice::Event(event)) if event.seq <= self.cursor => {}
                Some(Notice::Event(event)) if event.seq == self.cursor + 1 => {
                    self.cursor = event.seq;
                    self.pending.push_back(StreamItem::Event(event));
                }
                // Ahead of the next expected one: fetch what lies between from the store.
                Some(Notice::Event(_)) => self.catching_up = true,
                Some(Notice::Written { last_seq }) => self.catching_up = last_seq > self.cursor,
                None => {
                    // Cut off, or the bus is gone: either way no live event will come.
                    self.finish();
                    return Some(Ok(StreamItem::Lagged));
                }
            }
        }
    }

    /// The subscription as a [`Stream`].
    pub fn into_stream(self) -> impl Stream<Item = Result<StreamItem, StoreError>> + Send {
        futures::stream::unfold(self, |mut subscription| async move {
            let item = subscription.next().await?;
            Some((item, subscription))
        })
    }

    fn finish(&mut self) {
        self.done = true;
        self.catching_up = false;
    }

    /// Reads the next page of the log after the cursor into `pending`; leaves the
    /// catch-up once the end of the log is reached.
    async fn read_from_store(&mut self) -> Result<(), StoreError> {
        let page = self.store.read_events(&self.key, self.cursor, REPLAY_PAGE).await?;
        let full_page = page.events.len() >= REPLAY_PAGE;
        if page.first_held > self.cursor.saturating_add(1) && page.last_written > self.cursor {
            self.pending.push_back(StreamItem::Gap { after: self.cursor, resumed_at: page.first_held });
            self.cursor = page.first_held - 1;
        }
        let first_read = !self.replayed;
        self.replayed = true;
        if first_read && page.events.is_empty() && page.last_written > 0 && self.cursor >= page.last_written {
            // Nothing to replay: the subscriber may have seen the whole stream already.
            let tail = self.store.read_events(&self.key, page.last_written - 1, 1).await?;
            if tail.events.first().is_some_and(|event| event.seq == page.last_written && event.last) {
                self.finish();
                return Ok(());
            }
        }
        for event in page.events {
            if event.seq <= self.cursor {
                continue;
            }
            self.cursor = event.seq;
            let last = event.last;
            self.pending.push_back(StreamItem::Event(event));
            if last {
                self.catching_up = false;
                return Ok(());
            }
        }
        if !full_page {
            self.catching_up = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
            body: Vec::new(),
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
                    (format!("event {seq}").into_bytes(), end && n + 1 == count)
                })
                .collect();
            let commit = Commit {
                task: record(),
                expected_version: self.version,
                events,
                push: false,
                lease: Default::default(),
            };
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
        let hub = EventHub::new(HubOptions { queue });
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
        let hub = EventHub::new(HubOptions { queue: 8 });
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
        for slot in hub.inner.lock().get(&key()).into_iter().flatten() {
            slot.sender.try_send(Notice::Written { last_seq: 3 }).unwrap();
        }
        assert_eq!(seq(next(&mut subscription).await), 2);
        assert_eq!(seq(next(&mut subscription).await), 3);
        assert_eq!(next(&mut subscription).await, None);
    }

    #[tokio::test]
    async fn dropped_subscriptions_leave_the_hub() {
        let store = memory_store(100);
        let hub = EventHub::new(HubOptions { queue: 1 });
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
}
