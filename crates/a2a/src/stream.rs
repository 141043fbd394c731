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
