//! The hub's per-subscriber queues and the byte budget they share.
//!
//! A subscriber whose reader has stopped (an SSE client that does not read: the socket
//! fills, the server stops polling its stream) keeps whatever was queued for it. A
//! count per queue bounds one subscriber; the [`Budget`] bounds them all together: the
//! bytes of the event bodies queued in one hub. When a new event would take the hub
//! past its budget, the subscriber holding the most is cut off and its queue emptied at
//! once, freeing its events even if its reader never polls again. A cut-off subscriber
//! loses nothing: it reads the log from the store after its cursor when it resumes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

use super::Notice;

/// The bytes of event bodies queued in one hub, against its limit.
#[derive(Debug)]
pub(super) struct Budget {
    limit: usize,
    used: AtomicUsize,
}

impl Budget {
    pub(super) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Budget { limit, used: AtomicUsize::new(0) })
    }

    /// The bytes queued now.
    pub(super) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Whether `bytes` more would pass the limit.
    pub(super) fn would_exceed(&self, bytes: usize) -> bool {
        self.used().saturating_add(bytes) > self.limit
    }
}

/// What a notice weighs against the budget: an event's body; a wake-up nothing.
fn weight(notice: &Notice) -> usize {
    match notice {
        Notice::Event(event) => event.body.len(),
        Notice::Written { .. } => 0,
    }
}

#[derive(Debug, Default)]
struct State {
    items: VecDeque<Notice>,
    /// The weight of `items`.
    bytes: usize,
    /// No more notices will come (the subscriber was cut off or the hub let go).
    closed: bool,
    cut_off: bool,
}

/// One subscriber's queue.
#[derive(Debug)]
pub(super) struct Queue {
    state: Mutex<State>,
    ready: Notify,
    capacity: usize,
    budget: Arc<Budget>,
}

/// Why a notice was not queued.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// The queue holds its capacity: the subscriber is cut off now.
    Full,
    /// The subscriber was already cut off or is gone.
    Closed,
}

impl Queue {
    pub(super) fn new(capacity: usize, budget: Arc<Budget>) -> Arc<Self> {
        Arc::new(Queue { state: Mutex::new(State::default()), ready: Notify::new(), capacity, budget })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it: a poisoned lock still guards a consistent queue.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The bytes this queue holds.
    pub(super) fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Queues `notice`, or cuts the subscriber off when its queue is full.
    pub(super) fn offer(&self, notice: Notice) -> Result<(), Refused> {
        let mut state = self.lock();
        if state.closed {
            return Err(Refused::Closed);
        }
        if state.items.len() >= self.capacity {
            self.close(&mut state, true);
            return Err(Refused::Full);
        }
        let w = weight(&notice);
        state.bytes += w;
        self.budget.used.fetch_add(w, Ordering::AcqRel);
        state.items.push_back(notice);
        drop(state);
        self.ready.notify_one();
        Ok(())
    }

    /// Cuts the subscriber off: its queued notices are dropped (their bytes go back to
    /// the budget) and its reader sees the end of the queue and [`Queue::is_cut_off`].
    pub(super) fn cut_off(&self) {
        let mut state = self.lock();
        self.close(&mut state, true);
    }

    /// No more notices will come (the hub dropped this subscriber's slot); the reader
    /// still gets what is queued.
    pub(super) fn hang_up(&self) {
        let mut state = self.lock();
        state.closed = true;
        drop(state);
        self.ready.notify_one();
    }

    fn close(&self, state: &mut State, cut_off: bool) {
        state.closed = true;
        state.cut_off |= cut_off;
        state.items.clear();
        self.budget.used.fetch_sub(std::mem::take(&mut state.bytes), Ordering::AcqRel);
        self.ready.notify_one();
    }

    /// The next notice, if one is queued; `Err(true)` once the queue is closed and empty.
    pub(super) fn try_take(&self) -> Result<Notice, bool> {
        let mut state = self.lock();
        match state.items.pop_front() {
            Some(notice) => {
                let w = weight(&notice);
                state.bytes -= w;
                self.budget.used.fetch_sub(w, Ordering::AcqRel);
                Ok(notice)
            }
            None => Err(state.closed),
        }
    }

    /// The next notice; `None` once the queue is closed and empty.
    pub(super) async fn take(&self) -> Option<Notice> {
        loop {
            // Registered before the check, so a notice queued in between wakes it.
            let ready = self.ready.notified();
            match self.try_take() {
                Ok(notice) => return Some(notice),
                Err(true) => return None,
                Err(false) => ready.await,
            }
        }
    }

    pub(super) fn is_cut_off(&self) -> bool {
        self.lock().cut_off
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let bytes = std::mem::take(&mut self.lock().bytes);
        self.budget.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}
