//! [`Peer`]: the clonable handle that sends calls and notifications, and the
//! state it shares with the connection's tasks.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, watch, Notify};
use tokio_util::sync::CancellationToken;

use super::options::{CancelNotification, ConnectionEvent, Observer};
use crate::error::{raw_from_vec, CallError, DecodeError};
use crate::id::RequestId;
use crate::message::{write_json_string, Message};

tokio::task_local! {
    /// Set while a notification handler of the connection with this number runs.
    pub(super) static IN_NOTIFICATION_HANDLER: u64;
}

/// How many ids of cancelled calls are remembered to recognise late responses.
const REMEMBERED_CANCELS: usize = 1024;

/// An item for the writer task.
pub(super) enum Outgoing {
    Message(Message),
    Flush(oneshot::Sender<()>),
}

/// What the reader hands to a waiting caller.
pub(super) struct Delivery {
    pub(super) result: Result<Box<RawValue>, CallError>,
    /// The number of notifications read before the response.
    pub(super) barrier: u64,
}

/// Runs on the reader task the moment a successful answer to its call is read,
/// before any later message is read or dispatched. See [`Peer::call_observing`].
pub type ResultHook = Box<dyn FnOnce(&RawValue) + Send>;

/// A registered call: where its answer goes, and what runs when it is read.
struct Waiter {
    caller: oneshot::Sender<Delivery>,
    on_result: Option<ResultHook>,
}

#[derive(Default)]
pub(super) struct PendingCalls {
    calls: HashMap<RequestId, Waiter>,
    cancelled: VecDeque<RequestId>,
}

/// State shared by the peer handles and the connection's tasks.
pub(super) struct Shared {
    /// Tells connections apart for the notification-handler exception.
    pub(super) number: u64,
    pub(super) outgoing: mpsc::Sender<Outgoing>,
    /// Unbounded, for cancel notifications sent from `Drop` when the bounded
    /// queue is full; each entry stands for a call that went through the bounded queue.
    pub(super) overflow: mpsc::UnboundedSender<Outgoing>,
    pending: Mutex<PendingCalls>,
    closed: AtomicBool,
    next_id: AtomicI64,
    pub(super) notifications_done: watch::Receiver<u64>,
    /// Woken when a call is registered (the reader may then use its backlog).
    pub(super) call_registered: Notify,
    pub(super) call_timeout: Option<Duration>,
    pub(super) cancel: Option<CancelNotification>,
    pub(super) observer: Option<Observer>,
}

impl Shared {
    #[allow(clippy::too_many_arguments)] // Internal constructor with one caller.
    pub(super) fn new(
        number: u64,
        outgoing: mpsc::Sender<Outgoing>,
        overflow: mpsc::UnboundedSender<Outgoing>,
        notifications_done: watch::Receiver<u64>,
        call_timeout: Option<Duration>,
        cancel: Option<CancelNotification>,
        observer: Option<Observer>,
    ) -> Shared {
        Shared {
            number,
            outgoing,
            overflow,
            pending: Mutex::new(PendingCalls::default()),
            closed: AtomicBool::new(false),
            next_id: AtomicI64::new(0),
            notifications_done,
            call_registered: Notify::new(),
            call_timeout,
            cancel,
            observer,
        }
    }

    fn pending(&self) -> MutexGuard<'_, PendingCalls> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn report(&self, event: ConnectionEvent) {
        #[cfg(feature = "tracing")]
        tracing::debug!(?event, "jsonrpc connection event");
        if let Some(observer) = &self.observer {
            observer(&event);
        }
    }

    pub(super) fn has_pending_calls(&self) -> bool {
        !self.pending().calls.is_empty()
    }

    /// Marks the connection closed and fails every pending call with `Closed`.
    pub(super) fn close(&self) {
        let calls = {
            let mut pending = self.pending();
            self.closed.store(true, Ordering::SeqCst);
            std::mem::take(&mut pending.calls)
        };
        for (_, Waiter { caller, .. }) in calls {
            let _ = caller.send(Delivery { result: Err(CallError::Closed), barrier: 0 });
        }
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Resolves a pending call. `Err(true)` when the id belonged to a call that
    /// was cancelled, `Err(false)` when it is unknown.
    pub(super) fn resolve(&self, id: &RequestId, delivery: Delivery) -> Result<(), bool> {
        let mut pending = self.pending();
        match pending.calls.remove(id) {
            Some(Waiter { caller, on_result }) => {
                drop(pending);
                if let (Some(on_result), Ok(result)) = (on_result, &delivery.result) {
                    // The hook is the caller's code running on the reader task:
                    // a panic in it must not end the connection.
                    let result: &RawValue = result;
                    if let Err(payload) = std::panic::catch_unwind(AssertUnwindSafe(|| on_result(result))) {
                        let message = super::handler::panic_message(&*payload);
                        tracing::error!(
                            target: "agentproto_jsonrpc",
                            id = %id,
                            panic = %message,
                            "the result hook of a call panicked; the call still gets its answer"
                        );
                        self.report(ConnectionEvent::ResultHookPanicked { id: id.clone(), message });
                    }
                }
                // The caller may have gone in the meantime; then nobody waits.
                let _ = caller.send(delivery);
                Ok(())
            }
            None => Err(pending.cancelled.contains(id)),
        }
    }

    /// Forgets a pending call whose future was dropped; `true` if it was still pending.
    fn abandon(&self, id: &RequestId) -> bool {
        let mut pending = self.pending();
        if pending.calls.remove(id).is_none() {
            return false;
        }
        if pending.cancelled.len() == REMEMBERED_CANCELS {
            pending.cancelled.pop_front();
        }
        pending.cancelled.push_back(id.clone());
        true
    }

    /// The cancel notification for `id`, if cancel notifications are enabled.
    fn cancel_message(&self, id: &RequestId) -> Option<Message> {
        let cancel = self.cancel.as_ref()?;
        let mut params = Vec::with_capacity(cancel.id_key.len() + 24);
        params.push(b'{');
        write_json_string(&mut params, &cancel.id_key);
        params.push(b':');
        id.write_json(&mut params);
        params.push(b'}');
        Some(Message::notification(cancel.method.clone(), Some(raw_from_vec(params))))
    }
}

/// A clonable handle to send calls and notifications to the peer.
///
/// Handles stay usable after the connection ended: calls then fail with
/// [`CallError::Closed`] at once. Holding handles does not keep the connection's
/// tasks alive.
#[derive(Clone)]
pub struct Peer {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("connection", &self.shared.number)
            .field("closed", &self.shared.is_closed())
            .finish()
    }
}

impl Peer {
    /// Sends a request and waits for its response, with the connection's default
    /// [`call_timeout`](super::ConnectionOptions::call_timeout).
    ///
    /// Dropping the future before the response arrives sends the cancel
    /// notification for its id; a late response is then discarded. The result is
    /// returned only after every notification received before the response has
    /// been handled, except when called from inside a notification handler of
    /// this connection (see the crate documentation).
    pub async fn call(&self, method: &str, params: Option<Box<RawValue>>) -> Result<Box<RawValue>, CallError> {
        match self.shared.call_timeout {
            Some(timeout) => self.call_with_timeout(method, params, timeout).await,
            None => self.call_inner(method, params, None, None).await,
        }
    }

    /// [`Peer::call`] with its own timeout: after it, the call fails with
    /// [`CallError::Timeout`] and the cancel notification is sent.
    pub async fn call_with_timeout(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        timeout: Duration,
    ) -> Result<Box<RawValue>, CallError> {
        match tokio::time::timeout(timeout, self.call_inner(method, params, None, None)).await {
            Ok(result) => result,
            Err(_) => Err(CallError::Timeout(timeout)),
        }
    }

    /// [`Peer::call`] that can be cancelled without being abandoned: when `cancel`
    /// fires, the cancel notification is sent and the call keeps waiting for the
    /// peer's answer (which the receiver must still send: a partial result or
    /// `-32800`). The connection's call timeout still applies.
    pub async fn call_cancellable(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        cancel: &CancellationToken,
    ) -> Result<Box<RawValue>, CallError> {
        self.call_observing(method, params, Some(cancel), None).await
    }

    /// [`Peer::call`], or [`Peer::call_cancellable`] when `cancel` is given, that
    /// also runs `on_result` on a successful answer the moment the reader reads
    /// it: before any message after it is read, dispatched or handled.
    ///
    /// This is for state that later messages depend on, such as a session that
    /// exists once a `session/new` answer was read: when the caller's own
    /// continuation applied it, a request read right after the answer could be
    /// checked first. The hook runs on the reader task, so it must be quick and
    /// must not block; a panic in it is reported, and the call still resolves.
    pub async fn call_observing(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        cancel: Option<&CancellationToken>,
        on_result: Option<ResultHook>,
    ) -> Result<Box<RawValue>, CallError> {
        match self.shared.call_timeout {
            Some(timeout) => {
                match tokio::time::timeout(timeout, self.call_inner(method, params, cancel, on_result)).await {
                    Ok(result) => result,
                    Err(_) => Err(CallError::Timeout(timeout)),
                }
            }
            None => self.call_inner(method, params, cancel, on_result).await,
        }
    }

    /// [`Peer::call`] over typed params and result.
    pub async fn call_typed<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, CallError> {
        let params = serde_json::value::to_raw_value(params)
            .map_err(|error| CallError::Decode(DecodeError::encode(method, error)))?;
        let result = self.call(method, Some(params)).await?;
        serde_json::from_str(result.get()).map_err(|error| CallError::Decode(DecodeError::decode(method, error)))
    }

    /// Sends a notification once there is room in the outgoing queue.
    pub async fn notify(&self, method: &str, params: Option<Box<RawValue>>) -> Result<(), CallError> {
        self.send(Message::notification(method, params)).await
    }

    /// [`Peer::notify`] over typed params.
    pub async fn notify_typed<P: Serialize>(&self, method: &str, params: &P) -> Result<(), CallError> {
        let params = serde_json::value::to_raw_value(params)
            .map_err(|error| CallError::Decode(DecodeError::encode(method, error)))?;
        self.notify(method, Some(params)).await
    }

    /// Waits until every message queued before this call has been written and the
    /// output flushed.
    pub async fn flush(&self) -> Result<(), CallError> {
        let (done, flushed) = oneshot::channel();
        self.shared.outgoing.send(Outgoing::Flush(done)).await.map_err(|_| CallError::Closed)?;
        flushed.await.map_err(|_| CallError::Closed)
    }

    /// Whether the connection is closed (calls fail at once).
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    pub(super) async fn send(&self, message: Message) -> Result<(), CallError> {
        self.shared.outgoing.send(Outgoing::Message(message)).await.map_err(|_| CallError::Closed)
    }

    async fn call_inner(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        cancel: Option<&CancellationToken>,
        on_result: Option<ResultHook>,
    ) -> Result<Box<RawValue>, CallError> {
        let shared = &self.shared;
        let id = RequestId::number(shared.next_id.fetch_add(1, Ordering::Relaxed));
        let (caller, answer) = oneshot::channel();
        {
            let mut pending = shared.pending();
            if shared.is_closed() {
                return Err(CallError::Closed);
            }
            pending.calls.insert(id.clone(), Waiter { caller, on_result });
        }
        let mut guard = PendingGuard { shared, id: Some(id.clone()), sent: false };
        shared.call_registered.notify_waiters();
        self.send(Message::request(id.clone(), method, params)).await?;
        guard.sent = true;
        let mut answer = answer;
        let delivery = match cancel {
            None => answer.await,
            Some(cancel) => tokio::select! {
                biased;
                delivery = &mut answer => delivery,
                () = cancel.cancelled() => {
                    if let Some(message) = shared.cancel_message(&id) {
                        self.send(message).await?;
                    }
                    answer.await
                }
            },
        }
        .map_err(|_| CallError::Closed)?;
        guard.id = None;
        let in_notification_handler =
            IN_NOTIFICATION_HANDLER.try_with(|number| *number == shared.number).unwrap_or(false);
        if !in_notification_handler && delivery.barrier > 0 {
            let mut done = shared.notifications_done.clone();
            // An error means the worker is gone: nothing is left to wait for.
            let _ = done.wait_for(|done| *done >= delivery.barrier).await;
        }
        delivery.result
    }
}

/// Cleans up a call whose future is dropped before its response arrived.
struct PendingGuard<'a> {
    shared: &'a Shared,
    /// `None` once the response was received.
    id: Option<RequestId>,
    /// Whether the request was handed to the writer.
    sent: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if !self.shared.abandon(&id) || !self.sent {
            return;
        }
        if let Some(cancel) = self.shared.cancel_message(&id) {
            if let Err(mpsc::error::TrySendError::Full(cancel)) =
                self.shared.outgoing.try_send(Outgoing::Message(cancel))
            {
                let _ = self.shared.overflow.send(cancel);
            }
        }
    }
}
