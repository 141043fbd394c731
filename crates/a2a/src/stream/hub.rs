//! [`EventHub`]: the in-process [`EventBus`], and the wake-ups a bus that spans
//! processes hands it (`notify_written`, `notify_all`).

// Task-keyed maps on the request path hash with foldhash (randomly seeded, much
// cheaper than SipHash for short string keys).
use foldhash::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use super::queue::{Budget, Queue, Refused};
use super::{subscribe, EventBus, Listener, Notice, Subscription};
use crate::store::{EventRecord, Store, TaskKey};

/// The options of an [`EventHub`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubOptions {
    /// The number of notices queued per subscriber before it is cut off.
    pub queue: usize,
    /// The bytes of events queued or held for all subscribers together: queued event
    /// bodies, and the events taken from a queue or read from the store until their
    /// frames are written out (see [`super::Charge`]). An event that would pass it cuts
    /// off the subscriber holding the most, whose queue is emptied at once and whose
    /// connection is closed if it holds frames (it reads the log from the store when it
    /// resumes): subscribers that stopped reading cannot hold more than this, plus one
    /// event larger than the whole budget.
    pub budget_bytes: usize,
}

impl Default for HubOptions {
    /// 256 notices per subscriber, 64 MiB for all of them.
    fn default() -> Self {
        HubOptions { queue: 256, budget_bytes: 64 << 20 }
    }
}

/// The in-process [`EventBus`]. Cloning it gives another handle on the same hub.
///
/// Events committed in this process reach its subscribers through
/// [`EventBus::publish`], with their bodies (the fast path). Events committed by other
/// processes arrive as wake-ups without bodies: [`EventHub::notify_written`] for one task,
/// [`EventHub::notify_all`] when the bus cannot say which tasks changed. A woken
/// subscription reads the log from the store after the last sequence number it
/// produced, so a wake-up about events it already has costs one read at most and
/// delivers nothing twice.
#[derive(Debug, Clone)]
pub struct EventHub {
    pub(super) inner: Arc<HubInner>,
}

#[derive(Debug)]
pub(super) struct HubInner {
    queue: usize,
    budget: Arc<Budget>,
    next_id: AtomicU64,
    subscribers: Mutex<HashMap<TaskKey, Followers>>,
}

/// The subscribers of one task.
#[derive(Debug, Default)]
pub(super) struct Followers {
    slots: Vec<Slot>,
    /// The highest sequence number handed to them by [`EventBus::publish`]: a wake-up
    /// about events up to it has nothing to tell them (each had those events, or
    /// subscribed after they were committed and read them from the store).
    published: u64,
}

#[derive(Debug)]
pub(super) struct Slot {
    id: u64,
    queue: Arc<Queue>,
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
        if let Some(followers) = subscribers.get_mut(&self.key) {
            followers.slots.retain(|slot| {
                let gone = slot.id == self.id;
                if gone {
                    slot.queue.hang_up();
                }
                !gone
            });
            if followers.slots.is_empty() {
                subscribers.remove(&self.key);
            }
        }
    }
}

impl HubInner {
    /// Makes room for `bytes` more under the budget (see [`make_room`]).
    pub(super) fn make_room(&self, bytes: usize) {
        if self.budget.would_exceed(bytes) {
            make_room(&self.budget, &self.lock(), bytes);
        }
    }

    /// The subscriber table. No code panics while holding the lock, so a poisoned lock
    /// still guards a consistent table and is used as it is.
    pub(super) fn lock(&self) -> MutexGuard<'_, HashMap<TaskKey, Followers>> {
        self.subscribers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl EventHub {
    /// A hub with no subscribers.
    pub fn new(options: HubOptions) -> Self {
        EventHub {
            inner: Arc::new(HubInner {
                queue: options.queue.max(1),
                budget: Budget::new(options.budget_bytes),
                next_id: AtomicU64::new(0),
                subscribers: Mutex::new(HashMap::default()),
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
        self.inner.lock().values().map(|followers| followers.slots.len()).sum()
    }

    /// The bytes of events queued or held for subscribers now (at most
    /// [`HubOptions::budget_bytes`], plus the one event being delivered and what cut-off
    /// subscribers' closing connections still hold).
    pub fn queued_bytes(&self) -> usize {
        self.inner.budget.used()
    }

    /// Tells the subscribers of `key` that its log holds events up to `last_seq` (written
    /// by another process): each one behind that reads them from the store. Nothing is
    /// sent when this hub published events up to `last_seq` itself (the notice of a
    /// commit made in this process). Never waits; a subscriber whose queue is full is cut
    /// off, as by [`EventBus::publish`].
    pub fn notify_written(&self, key: &TaskKey, last_seq: u64) {
        let mut subscribers = self.inner.lock();
        let Some(followers) = subscribers.get_mut(key) else { return };
        if last_seq <= followers.published {
            return;
        }
        followers.slots.retain(|slot| offer(slot, Notice::Written { last_seq }));
        if followers.slots.is_empty() {
            subscribers.remove(key);
        }
    }

    /// Makes every subscriber of every task read the log after its cursor once: for a
    /// bus that may have missed notices (its connection was down) or got one that names
    /// no task.
    pub fn notify_all(&self) {
        let mut subscribers = self.inner.lock();
        subscribers.retain(|_, followers| {
            followers.slots.retain(|slot| offer(slot, Notice::Written { last_seq: u64::MAX }));
            !followers.slots.is_empty()
        });
    }
}

/// Queues `notice` for one subscriber; false when the slot is to be dropped (its
/// subscriber is gone, or its queue was full and it is cut off now).
fn offer(slot: &Slot, notice: Notice) -> bool {
    match slot.queue.offer(notice) {
        Ok(()) => true,
        Err(Refused::Full | Refused::Closed) => false,
    }
}

/// Makes room for `bytes` more under the hub's budget: while it would be passed, the
/// subscriber holding the most (of every task, queued and held) is cut off, its queue
/// emptied and its connection closed if it holds frames. Its slot is dropped from the
/// table by the next offer to it (it refuses as closed).
fn make_room(budget: &Budget, subscribers: &HashMap<TaskKey, Followers>, bytes: usize) {
    while budget.would_exceed(bytes) {
        let fattest = subscribers
            .values()
            .flat_map(|f| f.slots.iter())
            .map(|slot| (slot.queue.bytes(), slot))
            .filter(|(held, _)| *held > 0)
            .max_by_key(|(held, _)| *held);
        match fattest {
            Some((_, slot)) => slot.queue.cut_off(),
            // Nothing queued to free: the event alone is larger than the budget.
            None => return,
        }
    }
}

impl Default for EventHub {
    fn default() -> Self {
        EventHub::new(HubOptions::default())
    }
}

impl EventBus for EventHub {
    fn publish(&self, key: &TaskKey, events: &[EventRecord]) {
        if events.is_empty() || !self.inner.lock().contains_key(key) {
            return;
        }
        // A store may hand over decoded events: encoded once here, outside the lock, for
        // every subscriber (one that cannot be is left as it is; its reader reports it).
        let events: Vec<EventRecord> = events
            .iter()
            .map(|e| {
                let mut e = e.clone();
                let _ = e.body.encode();
                e
            })
            .collect();
        let events = &events[..];
        let mut subscribers = self.inner.lock();
        let Some(queues) =
            subscribers.get(key).map(|f| f.slots.iter().map(|s| Arc::clone(&s.queue)).collect::<Vec<_>>())
        else {
            return;
        };
        // The budget checked at each offer: room made for one subscriber's copy may cut
        // off another of the same task (its own earlier copies count too).
        for queue in &queues {
            for event in events {
                let bytes = event.body.len();
                if self.inner.budget.would_exceed(bytes) {
                    make_room(&self.inner.budget, &subscribers, bytes);
                }
                if queue.offer(Notice::Event(event.clone())).is_err() {
                    break;
                }
            }
        }
        let Some(followers) = subscribers.get_mut(key) else { return };
        if let Some(last) = events.last() {
            followers.published = followers.published.max(last.seq);
        }
        followers.slots.retain(|slot| !slot.queue.is_closed());
        if followers.slots.is_empty() {
            subscribers.remove(key);
        }
    }

    fn listen(&self, key: &TaskKey) -> Listener {
        let queue = Queue::new(self.inner.queue, Arc::clone(&self.inner.budget));
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let slot = Slot { id, queue: Arc::clone(&queue) };
        self.inner.lock().entry(key.clone()).or_default().slots.push(slot);
        Listener::on_queue(
            queue,
            Arc::downgrade(&self.inner),
            Registration { hub: Arc::downgrade(&self.inner), key: key.clone(), id },
        )
    }
}
