//! The hub's per-subscriber queues and the byte budget they share.
//!
//! A subscriber whose reader has stopped (an SSE client that does not read: the socket
//! fills, the server stops polling its stream) keeps whatever was queued for it, and
//! the frame its connection was writing when the client stopped. A count per queue
//! bounds one subscriber; the [`Budget`] bounds them all together: the bytes of the
//! event bodies queued in one hub, plus the bytes *held* for its subscribers, events
//! taken from a queue (or read from the store) and not yet dropped, which a [`Charge`]
//! keeps counted until the binding has written them out (it rides along with the
//! encoded frame down to the connection's write buffer).
//!
//! When a new event would take the hub past its budget, the subscriber holding the
//! most is cut off: its queue is emptied at once, and when it holds frames handed to its
//! connection, that connection is closed (the closer a binding bound to its charges),
//! which is what frees them, since a client that does not read never lets them be
//! written. A cut-off subscriber loses nothing: it reads the log from the store after
//! its cursor when it resumes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::Notice;

/// The bytes of event bodies queued or held in one hub, against its limit.
#[derive(Debug)]
pub(super) struct Budget {
    limit: usize,
    /// Queued plus held bytes.
    used: AtomicUsize,
    /// Of `used`, the bytes held by subscribers already cut off, whose connections are
    /// closing: they are freed without cutting anyone else.
    doomed: AtomicUsize,
}

impl Budget {
    pub(super) fn new(limit: usize) -> Arc<Self> {
        Arc::new(Budget { limit, used: AtomicUsize::new(0), doomed: AtomicUsize::new(0) })
    }

    /// The bytes queued or held now.
    pub(super) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Whether `bytes` more would pass the limit (bytes already on their way out aside).
    pub(super) fn would_exceed(&self, bytes: usize) -> bool {
        let live = self.used().saturating_sub(self.doomed.load(Ordering::Acquire));
        live.saturating_add(bytes) > self.limit
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
    /// The bytes of the live [`Charge`]s on this queue.
    held: usize,
    /// Closes the connection the held frames wait in (see [`Charge::bind`]).
    closer: Option<CancellationToken>,
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

    /// The bytes this subscriber queues and holds; 0 once it is cut off (what it still
    /// holds is on its way out).
    pub(super) fn bytes(&self) -> usize {
        let state = self.lock();
        if state.cut_off {
            0
        } else {
            state.bytes + state.held
        }
    }

    /// Whether no more notices will be queued.
    pub(super) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Charges `bytes` held for this subscriber to the budget (without checking it: see
    /// `Listener::charge`); `None` once the subscriber is cut off.
    pub(super) fn charge(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        let mut state = self.lock();
        if state.cut_off {
            return None;
        }
        state.held += bytes;
        self.budget.used.fetch_add(bytes, Ordering::AcqRel);
        Some(Charge { queue: Some(Arc::clone(self)), bytes })
    }

    /// Moves a charge from `from` bytes to `to` bytes.
    fn recharge(&self, from: usize, to: usize) {
        let mut state = self.lock();
        state.held = state.held - from + to;
        self.budget.used.fetch_add(to, Ordering::AcqRel);
        self.budget.used.fetch_sub(from, Ordering::AcqRel);
        if state.cut_off {
            self.budget.doomed.fetch_add(to, Ordering::AcqRel);
            self.budget.doomed.fetch_sub(from, Ordering::AcqRel);
        }
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
    /// When it holds frames handed to its connection, the connection is closed: the
    /// frames are freed when it is dropped, and count as on their way out meanwhile.
    pub(super) fn cut_off(&self) {
        let mut state = self.lock();
        if state.cut_off {
            return;
        }
        self.close(&mut state, true);
        if state.held > 0 {
            self.budget.doomed.fetch_add(state.held, Ordering::AcqRel);
            if let Some(closer) = &state.closer {
                closer.cancel();
            }
        }
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
        // Every charge holds the queue: none is left here, only queued bytes.
        let bytes = std::mem::take(&mut self.lock().bytes);
        self.budget.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// Bytes held for one subscriber, counted in its hub's budget until dropped.
///
/// A subscription charges each event it yields; the binding moves the charge to the
/// frame it encodes ([`Charge::resize`]), attaches it to the frame's bytes, and binds the
/// connection's closer ([`Charge::bind`]): the bytes stay counted while the connection
/// holds them, and a cut closes the connection. A charge of no hub (a bus of the
/// application's, or an answer that is not a subscription) counts nothing.
#[derive(Debug, Default)]
pub struct Charge {
    queue: Option<Arc<Queue>>,
    bytes: usize,
}

impl Charge {
    /// A charge that counts nothing.
    pub fn none() -> Self {
        Charge::default()
    }

    /// The bytes charged.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Charges `bytes` instead (the size of the frame the event became). Not checked
    /// against the budget: a frame is its event and a short envelope.
    pub fn resize(&mut self, bytes: usize) {
        if let Some(queue) = &self.queue {
            queue.recharge(self.bytes, bytes);
        }
        self.bytes = bytes;
    }

    /// Names how to close the connection this subscriber's frames are written to, for
    /// when it is cut off while holding some. The first one bound stays; a subscriber
    /// cut off already has its connection closed at once.
    pub fn bind(&self, closer: &CancellationToken) {
        let Some(queue) = &self.queue else { return };
        let mut state = queue.lock();
        if state.closer.is_none() {
            state.closer = Some(closer.clone());
        }
        if state.cut_off {
            closer.cancel();
        }
    }
}

/// `frame`'s bytes, keeping `charges` counted until hyper (or h2) drops the last of them.
pub(crate) fn ride(frame: bytes::Bytes, charges: Vec<Charge>) -> bytes::Bytes {
    if charges.iter().all(|c| c.bytes == 0) {
        return frame; // nothing counted: no owner needed
    }
    bytes::Bytes::from_owner(Riding { frame, _charges: charges })
}

/// The owner of a charged frame's bytes.
struct Riding {
    frame: bytes::Bytes,
    _charges: Vec<Charge>,
}

impl AsRef<[u8]> for Riding {
    fn as_ref(&self) -> &[u8] {
        &self.frame
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if let Some(queue) = self.queue.take() {
            queue.recharge(self.bytes, 0);
        }
    }
}
