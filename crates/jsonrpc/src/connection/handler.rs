//! The application's [`Handler`], the contexts it receives, and the tasks that
//! run it: one task per request, one serial worker for notifications.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::options::ConnectionEvent;
use super::peer::{Peer, IN_NOTIFICATION_HANDLER};
use super::InFlight;
use crate::error::{ErrorCode, ErrorObject};
use crate::id::RequestId;
use crate::message::Message;

/// What the application does with incoming requests and notifications.
///
/// Both methods return `'static` futures: take what you need from `self` (for
/// example clone an `Arc`) before the `async move` block.
pub trait Handler: Send + Sync + 'static {
    /// Handles one request. Requests run concurrently, each in its own task.
    ///
    /// The returned error object is sent as the error response. When the peer
    /// cancels the request, the future is dropped and `-32800` is sent, unless the
    /// handler called [`RequestContext::handle_cancellation`].
    fn request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> BoxFuture<'static, Result<Box<RawValue>, ErrorObject>>;

    /// Handles one notification. Notifications are handled one at a time, in
    /// arrival order.
    fn notification(&self, notification: IncomingNotification, cx: NotificationContext) -> BoxFuture<'static, ()>;

    /// Sees each request as it is read, on the reader task, in read order, before
    /// its handler task is started. Handlers run concurrently and may start in any
    /// order; this is where a layer above records what a later message depends on
    /// (a request that changes the state the next ones are checked against), so
    /// that a handler can tell, by [`RequestContext::index`], what was read before
    /// it. It must be quick and must not block: the next line is read after it
    /// returns. A panic here is reported and the request is still handled. What it
    /// makes of the request (its decoded params, say, so that they are parsed once)
    /// it may leave in [`IncomingRequest::prepared`] for [`Handler::request`]. The
    /// default does nothing.
    fn request_read(&self, request: &mut IncomingRequest, cx: &RequestContext) {
        let _ = (request, cx);
    }
}

/// An incoming request.
#[non_exhaustive]
pub struct IncomingRequest {
    /// Its id.
    pub id: RequestId,
    /// Its method, verbatim.
    pub method: String,
    /// Its params, raw; `None` when absent or `null`.
    pub params: Option<Box<RawValue>>,
    /// What [`Handler::request_read`] made of the request, handed on to
    /// [`Handler::request`] (`None` unless it left something).
    pub prepared: Option<Box<dyn std::any::Any + Send>>,
}

impl IncomingRequest {
    /// A request as read, with nothing prepared yet.
    pub fn new(id: RequestId, method: String, params: Option<Box<RawValue>>) -> IncomingRequest {
        IncomingRequest { id, method, params, prepared: None }
    }
}

impl std::fmt::Debug for IncomingRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IncomingRequest")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("params", &self.params)
            .field("prepared", &self.prepared.is_some())
            .finish()
    }
}

/// An incoming notification.
#[derive(Debug)]
#[non_exhaustive]
pub struct IncomingNotification {
    /// Its method, verbatim.
    pub method: String,
    /// Its params, raw; `None` when absent or `null`.
    pub params: Option<Box<RawValue>>,
}

/// What a request handler gets besides the request.
#[derive(Debug, Clone)]
pub struct RequestContext {
    peer: Peer,
    id: RequestId,
    token: CancellationToken,
    handles_cancellation: Arc<AtomicBool>,
    notifications_before: u64,
    index: u64,
}

impl RequestContext {
    /// The handle to call the peer (for example a permission round trip).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The id of the request being handled.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Fires when the peer cancels the request or the connection shuts down.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.token
    }

    /// How many notifications were read before this request: with
    /// [`NotificationContext::index`], this orders the request among the
    /// notifications, as read (a request with `notifications_before() < n` was read
    /// before notification number `n`).
    pub fn notifications_before(&self) -> u64 {
        self.notifications_before
    }

    /// The request's number in read order among the requests of this connection,
    /// from 1 (every request line counts, also one its handler refuses). With
    /// [`Handler::request_read`], this tells a handler which requests were read
    /// before its own.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Opts out of the default cancellation: the handler keeps running when the
    /// token fires, and its own return value is sent (for example a partial
    /// result). Call it before the first `.await`.
    pub fn handle_cancellation(&self) {
        self.handles_cancellation.store(true, Ordering::SeqCst);
    }
}

/// What a notification handler gets besides the notification.
#[derive(Debug, Clone)]
pub struct NotificationContext {
    peer: Peer,
    index: u64,
    work: Background,
}

/// Where the connection's own tasks run, request handlers and the work notification
/// handlers hand off: on one tracker, so that [`Connection::run`](super::Connection::run)
/// waits for them at shutdown, each stopped at the hard stop when the grace runs out.
#[derive(Debug, Clone, Default)]
pub(super) struct Background {
    pub(super) tracker: TaskTracker,
    pub(super) hard_stop: CancellationToken,
}

impl Background {
    /// Runs `work` on a tracked task that ends at the hard stop if it has not before.
    pub(super) fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        let hard_stop = self.hard_stop.clone();
        self.tracker.spawn(async move {
            tokio::select! {
                () = work => {}
                () = hard_stop.cancelled() => {}
            }
        });
    }
}

impl NotificationContext {
    /// The handle to call or notify the peer. A call made from the handler itself
    /// resolves without waiting for later notifications (see the crate docs).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The notification's number in read order, from 1 (cancel notifications
    /// consumed by the connection are not counted). See
    /// [`RequestContext::notifications_before`].
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Runs `work` on a task of its own, for what the handler must not wait for inline
    /// (notifications are handled one at a time, in read order, so waiting here holds up
    /// the ones read after). Unlike a bare `tokio::spawn`, the connection keeps track of
    /// it: [`Connection::run`](super::Connection::run) returns only once it has ended,
    /// within [`shutdown_grace`](super::ConnectionOptions::shutdown_grace) after end of
    /// input, when it is dropped like an unfinished request handler.
    pub fn spawn(&self, work: impl Future<Output = ()> + Send + 'static) {
        self.work.spawn(work);
    }
}

/// The text of a caught panic's payload (a handler's, or anything else a caller
/// catches with `catch_unwind`).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Everything a request task needs.
pub(super) struct RequestJob {
    pub(super) request: IncomingRequest,
    /// Built as the request is read; its `notifications_before` is the barrier:
    /// the handler starts once the worker has handled that many notifications, so
    /// a request never overtakes the notifications sent before it (a permission
    /// request after its tool call).
    pub(super) cx: RequestContext,
    pub(super) generation: u64,
}

impl RequestJob {
    /// A job for a request just read: the `index`-th request, after `barrier` notifications.
    pub(super) fn new(
        request: IncomingRequest,
        peer: Peer,
        token: CancellationToken,
        generation: u64,
        barrier: u64,
        index: u64,
    ) -> RequestJob {
        let cx = RequestContext {
            peer,
            id: request.id.clone(),
            token,
            handles_cancellation: Arc::new(AtomicBool::new(false)),
            notifications_before: barrier,
            index,
        };
        RequestJob { request, cx, generation }
    }
}

/// Runs one request handler to its reply and sends the reply.
pub(super) async fn run_request(handler: Arc<dyn Handler>, peer: Peer, in_flight: Arc<InFlight>, job: RequestJob) {
    let RequestJob { request, cx, generation } = job;
    let barrier = cx.notifications_before;
    let token = cx.token.clone();
    if barrier > 0 {
        let mut done = peer.shared.notifications_done.clone();
        // An error means the worker is gone: nothing is left to wait for.
        tokio::select! {
            _ = done.wait_for(|done| *done >= barrier) => {}
            () = token.cancelled() => {}
        }
    }
    let id = request.id.clone();
    let method = request.method.clone();
    let handles_cancellation = cx.handles_cancellation.clone();
    let reply = match std::panic::catch_unwind(AssertUnwindSafe(|| handler.request(request, cx))) {
        Err(payload) => Err(payload),
        Ok(future) => {
            let mut future = AssertUnwindSafe(future).catch_unwind();
            tokio::select! {
                biased;
                outcome = &mut future => outcome,
                () = token.cancelled() => {
                    if handles_cancellation.load(Ordering::SeqCst) {
                        future.await
                    } else {
                        Ok(Err(ErrorObject::request_cancelled()))
                    }
                }
            }
        }
    };
    let reply = match reply {
        Ok(reply) => {
            if let Err(error) = &reply {
                report_internal_error(&method, &id, error);
            }
            reply
        }
        Err(payload) => {
            let message = panic_message(&*payload);
            tracing::error!(
                target: "agentproto_jsonrpc",
                method = %method,
                id = %id,
                panic = %message,
                "request handler panicked; answered -32603"
            );
            peer.shared.report(ConnectionEvent::RequestHandlerPanicked { id: id.clone(), method, message });
            Err(ErrorObject::internal_error("internal error: request handler panicked"))
        }
    };
    in_flight.finish(&id, generation);
    // If the writer is gone, the connection is over and nobody can be answered.
    let _ = peer.send(Message::response(id, reply)).await;
}

/// A handler's own error answer is a normal outcome, except `-32603`: an internal
/// error is a fault of this side's program, so it is reported as a `tracing` error
/// event besides the answer (the peer sees only the answer).
fn report_internal_error(method: &str, id: &RequestId, error: &ErrorObject) {
    if error.code == ErrorCode::INTERNAL_ERROR {
        tracing::error!(
            target: "agentproto_jsonrpc",
            method = %method,
            id = %id,
            code = error.code.0,
            error = %error.message,
            "request handler failed with an internal error; answered -32603"
        );
    }
}

/// Handles queued notifications one at a time, publishing how many are done.
pub(super) async fn notification_worker(
    handler: Arc<dyn Handler>,
    peer: Peer,
    mut queue: mpsc::Receiver<(u64, IncomingNotification)>,
    done: watch::Sender<u64>,
    work: Background,
) {
    let number = peer.shared.number;
    while let Some((sequence, notification)) = queue.recv().await {
        let method = notification.method.clone();
        let cx = NotificationContext { peer: peer.clone(), index: sequence, work: work.clone() };
        #[cfg(feature = "tracing")]
        let span = tracing::debug_span!("jsonrpc.notification", method = %method, index = sequence);
        let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| handler.notification(notification, cx))) {
            Ok(future) => {
                let future = IN_NOTIFICATION_HANDLER.scope(number, AssertUnwindSafe(future).catch_unwind());
                #[cfg(feature = "tracing")]
                let future = tracing::Instrument::instrument(future, span);
                future.await
            }
            Err(payload) => Err(payload),
        };
        if let Err(payload) = outcome {
            let message = panic_message(&*payload);
            tracing::error!(
                target: "agentproto_jsonrpc",
                method = %method,
                panic = %message,
                "notification handler panicked; the worker goes on with the next notification"
            );
            peer.shared.report(ConnectionEvent::NotificationHandlerPanicked { method, message });
        }
        done.send_replace(sequence);
    }
    done.send_replace(u64::MAX);
}
