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
//! [`EventHub`] is the in-process bus. Several processes sharing a PostgreSQL store add
//! a listener on `LISTEN`/`NOTIFY` (`crate::server`'s replica bus): every commit with
//! events sends a notice naming the task and its new last sequence number (not the
//! events), and the listener turns each into [`EventHub::notify_written`], a
//! [`Notice::Written`] for the subscribers of that task, which read the events from the
//! store. Order and completeness therefore come from the log, never from the notices:
//! a notice that arrives twice, late, merged with another or not at all (then
//! [`EventHub::notify_all`] after the listener reconnects) delivers nothing twice and
//! leaves no gap.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TryRecvError;

use crate::store::{EventRecord, Store, StoreError, TaskKey};

#[cfg(test)]
mod budget_tests;
mod hub;
mod queue;
#[cfg(test)]
mod tests;

pub use hub::{EventHub, HubOptions};
#[cfg(feature = "server")]
pub(crate) use queue::ride;
pub use queue::Charge;

/// How many events a subscription reads from the store at a time.
const REPLAY_PAGE: usize = 256;

/// How long a subscription keeps trying a store whose reads fail (a database restarting)
/// before its stream ends with the error.
pub const STORE_OUTAGE_LIMIT: Duration = Duration::from_secs(60);
/// The first wait before a failed read is tried again; it doubles up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// What a bus tells a listener about one task.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// An event that was just committed.
    Event(EventRecord),
    /// Events up to this sequence number were committed; read them from the store.
    Written {
        /// The highest sequence number committed.
        last_seq: u64,
    },
}

/// One listener's end of an [`EventBus`]: a bounded queue of notices for one task.
///
/// Dropping it unregisters the listener.
pub struct Listener {
    source: Source,
    _registration: Box<dyn Any + Send + Sync>,
}

/// Where a listener's notices come from.
enum Source {
    /// A bus of the application's ([`Listener::new`]).
    Channel { receiver: mpsc::Receiver<Notice>, cut_off: Arc<AtomicBool> },
    /// An [`EventHub`] queue, which the hub can empty (its byte budget).
    Hub(Arc<queue::Queue>, std::sync::Weak<hub::HubInner>),
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
        Listener { source: Source::Channel { receiver, cut_off }, _registration: Box::new(registration) }
    }

    /// A listener on a hub queue.
    fn on_queue(
        queue: Arc<queue::Queue>,
        hub: std::sync::Weak<hub::HubInner>,
        registration: impl Any + Send + Sync,
    ) -> Self {
        Listener { source: Source::Hub(queue, hub), _registration: Box::new(registration) }
    }

    /// Charges `bytes` held for this listener's subscriber to its hub's budget, making
    /// room first as an offer does (the subscriber holding the most is cut off, which
    /// may be this one). `None` when this subscriber is cut off; a charge of nothing on
    /// a bus of the application's.
    fn charge(&self, bytes: usize) -> Option<Charge> {
        match &self.source {
            Source::Channel { .. } => Some(Charge::none()),
            Source::Hub(queue, hub) => {
                if let Some(hub) = hub.upgrade() {
                    hub.make_room(bytes);
                }
                queue.charge(bytes)
            }
        }
    }

    /// The next notice; `None` once the bus dropped this listener (see
    /// [`Listener::is_cut_off`]) or shut down.
    pub async fn recv(&mut self) -> Option<Notice> {
        match &mut self.source {
            Source::Channel { receiver, .. } => receiver.recv().await,
            Source::Hub(queue, _) => queue.take().await,
        }
    }

    /// The next notice if one is queued.
    pub fn try_recv(&mut self) -> Result<Notice, TryRecvError> {
        match &mut self.source {
            Source::Channel { receiver, .. } => receiver.try_recv(),
            Source::Hub(queue, _) => {
                queue.try_take().map_err(|closed| if closed { TryRecvError::Disconnected } else { TryRecvError::Empty })
            }
        }
    }

    /// Whether the bus cut this listener off: its queue was full, or (on an
    /// [`EventHub`]) it held the most of a hub over its byte budget.
    pub fn is_cut_off(&self) -> bool {
        match &self.source {
            Source::Channel { cut_off, .. } => cut_off.load(Ordering::Acquire),
            Source::Hub(queue, _) => queue.is_cut_off(),
        }
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

/// What a subscription yields.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamItem {
    /// The next event of the task.
    Event(EventRecord),
    /// The events with sequence numbers strictly between `after` and `resumed_at` were
    /// evicted from the log before they could be read; the stream goes on at `resumed_at`.
    Gap {
        /// The last sequence number the subscriber had.
        after: u64,
        /// The first one still held.
        resumed_at: u64,
    },
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
        failing_since: None,
        retry_in: RETRY_FIRST,
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
    /// When the store's reads started failing, while they fail.
    failing_since: Option<tokio::time::Instant>,
    /// The wait before the next attempt after a failed read.
    retry_in: Duration,
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
    /// after an error.
    ///
    /// A read of the store that fails for a backend reason (a database that restarts, a
    /// lost connection) is tried again, at once when a notice arrives (the bus listens
    /// again) and otherwise after a wait that doubles from 100 ms up to 2 s; nothing is
    /// skipped meanwhile, since the cursor only moves with what was read. After
    /// [`STORE_OUTAGE_LIMIT`] of failures, or at once for a task that no longer exists,
    /// the error is yielded and the stream ends.
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
                match self.read_from_store().await {
                    Ok(()) => {
                        self.failing_since = None;
                        self.retry_in = RETRY_FIRST;
                    }
                    Err(error) if self.may_retry(&error) => self.wait_to_retry().await,
                    Err(error) => {
                        self.finish();
                        return Some(Err(error));
                    }
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

    /// The next item with the charge of what it holds: an event is charged to the hub's
    /// budget (see [`Charge`]) before it is yielded, whether it came live or from the
    /// store. A subscriber that cannot be charged (cut off to make room) gets
    /// [`StreamItem::Lagged`] instead of the event, and its stream ends.
    pub async fn next_charged(&mut self) -> Option<(Result<StreamItem, StoreError>, Charge)> {
        let before = self.delivered;
        let item = self.next().await?;
        let Ok(StreamItem::Event(event)) = &item else { return Some((item, Charge::none())) };
        match self.listener.charge(event.body.len()) {
            Some(charge) => Some((item, charge)),
            None => {
                self.delivered = before;
                self.pending.clear();
                self.finish();
                Some((Ok(StreamItem::Lagged), Charge::none()))
            }
        }
    }

    /// Charges `bytes` held for this subscriber besides its events (the task a stream
    /// starts with), making room as for an event; a charge of nothing if the subscriber
    /// was cut off meanwhile (its stream says so next).
    pub fn charge(&self, bytes: usize) -> Charge {
        self.listener.charge(bytes).unwrap_or_default()
    }

    /// The subscription as a [`Stream`] of charged items ([`Subscription::next_charged`]).
    pub fn into_charged_stream(self) -> impl Stream<Item = (Result<StreamItem, StoreError>, Charge)> + Send {
        futures::stream::unfold(self, |mut subscription| async move {
            let item = subscription.next_charged().await?;
            Some((item, subscription))
        })
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

    /// Whether a failed read is worth trying again (see [`Subscription::next`]).
    fn may_retry(&mut self, error: &StoreError) -> bool {
        if !matches!(error, StoreError::Backend(_)) {
            return false;
        }
        let since = *self.failing_since.get_or_insert_with(tokio::time::Instant::now);
        since.elapsed() < STORE_OUTAGE_LIMIT
    }

    /// Waits for a notice or the retry delay, whichever comes first.
    async fn wait_to_retry(&mut self) {
        let delay = self.retry_in;
        self.retry_in = (delay * 2).min(RETRY_MAX);
        let noticed = tokio::select! {
            notice = self.listener.recv() => notice.is_some(),
            () = tokio::time::sleep(delay) => true,
        };
        if !noticed {
            // The bus dropped this listener: nothing will wake it, so wait the delay out
            // (the next round reports a cut-off as `Lagged`).
            tokio::time::sleep(delay).await;
        }
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
        if first_read && page.events.is_empty() && page.last_written > 0 && self.cursor >= page.last_written {
            // Nothing to replay: the subscriber may have seen the whole stream already.
            let tail = self.store.read_events(&self.key, page.last_written - 1, 1).await?;
            if tail.events.first().is_some_and(|event| event.seq == page.last_written && event.last) {
                self.finish();
                return Ok(());
            }
        }
        // Only once the reads above succeeded: a failed one is made again in full.
        self.replayed = true;
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
