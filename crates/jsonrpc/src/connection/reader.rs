//! The reader loop: frames, decodes and routes every incoming message, with
//! bounded queues and a bounded backlog (see the crate docs on backpressure).

use std::collections::VecDeque;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use tokio::io::AsyncRead;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio::task::{JoinError, JoinHandle};
use tokio_util::sync::CancellationToken;

use super::handler::{
    panic_message, run_request, Background, Handler, IncomingNotification, IncomingRequest, RequestJob,
};
use super::options::{CancelCheck, CancelNotification, ConnectionEvent};
use super::peer::{Delivery, Peer};
use super::InFlight;
use crate::error::{CallError, ErrorCode, ErrorObject};
use crate::frame::{Frame, FrameReader, OversizeLine, OversizeShape};
use crate::id::RequestId;
use crate::message::{DecodeOptions, EnvelopeError, EnvelopeErrorKind, Message};

pub(super) type Input = Box<dyn AsyncRead + Send + Unpin>;

/// Why the reader stopped.
pub(super) enum End {
    Eof,
    ReadFailed(io::Error),
    WriterExited(Result<io::Result<()>, JoinError>),
}

/// What one frame turned into, owned (so the frame buffer can be reused).
enum Received {
    Message(Message),
    Invalid(EnvelopeError, usize),
    Oversize(OversizeLine),
}

pub(super) struct Reader {
    pub(super) frames: FrameReader<Input>,
    pub(super) handler: Arc<dyn Handler>,
    pub(super) peer: Peer,
    pub(super) queue: mpsc::Sender<(u64, IncomingNotification)>,
    pub(super) requests: Arc<Semaphore>,
    /// Where request handlers run (with the notification handlers' hand-off work).
    pub(super) work: Background,
    pub(super) in_flight: Arc<InFlight>,
    pub(super) shutdown: CancellationToken,
    pub(super) deferred_notifications: VecDeque<(u64, IncomingNotification)>,
    pub(super) deferred_requests: VecDeque<RequestJob>,
    pub(super) backlog: usize,
    pub(super) notifications_read: u64,
    pub(super) requests_read: u64,
    pub(super) decode: DecodeOptions,
    pub(super) skip_non_json_lines: bool,
    pub(super) max_message_size: usize,
    pub(super) cancel: Option<CancelNotification>,
}

impl Reader {
    /// Reads until end of input, a read error, or the writer's exit.
    pub(super) async fn read(&mut self, writer: &mut JoinHandle<io::Result<()>>) -> End {
        loop {
            self.dispatch_deferred_now();
            let calls_changed = self.peer.shared.call_registered.notified();
            let deferred = self.deferred_notifications.len() + self.deferred_requests.len();
            // Set messages aside only while calls are pending: then a response may
            // be behind them. Otherwise stop reading (backpressure).
            let may_defer = deferred < self.backlog && self.peer.shared.has_pending_calls();
            let blocked = deferred > 0 && !may_defer;
            let input = tokio::select! {
                biased;
                result = &mut *writer => return End::WriterExited(result),
                permit = self.queue.clone().reserve_owned(),
                    if !self.deferred_notifications.is_empty() =>
                {
                    match (permit, self.deferred_notifications.pop_front()) {
                        (Ok(permit), Some(item)) => {
                            permit.send(item);
                        }
                        // The worker is gone; nothing can handle notifications any more.
                        _ => self.deferred_notifications.clear(),
                    }
                    continue;
                }
                permit = self.requests.clone().acquire_owned(),
                    if !self.deferred_requests.is_empty() =>
                {
                    if let (Ok(permit), Some(job)) = (permit, self.deferred_requests.pop_front()) {
                        self.spawn_request(job, permit);
                    }
                    continue;
                }
                () = calls_changed, if blocked => continue,
                frame = self.frames.next_frame(), if !blocked => match frame {
                    Ok(Some(Frame::Line(line))) => match Message::decode_with(line, &self.decode) {
                        Ok(message) => Received::Message(message),
                        Err(error) => Received::Invalid(error, line.len()),
                    },
                    Ok(Some(Frame::Oversize(line))) => Received::Oversize(line),
                    Ok(None) => return End::Eof,
                    Err(error) => return End::ReadFailed(error),
                },
            };
            match input {
                Received::Message(message) => self.on_message(message),
                Received::Invalid(error, len) => self.on_invalid(error, len).await,
                Received::Oversize(line) => self.on_oversize(line).await,
            }
        }
    }

    /// Dispatches everything set aside, waiting for room (used at shutdown,
    /// under the grace deadline).
    pub(super) async fn dispatch_deferred(&mut self) {
        while let Some(item) = self.deferred_notifications.pop_front() {
            if self.queue.send(item).await.is_err() {
                break;
            }
        }
        while let Some(job) = self.deferred_requests.pop_front() {
            let Ok(permit) = self.requests.clone().acquire_owned().await else {
                break;
            };
            self.spawn_request(job, permit);
        }
    }

    /// Dispatches set-aside messages for which there is room right now.
    fn dispatch_deferred_now(&mut self) {
        while !self.deferred_notifications.is_empty() {
            let Ok(permit) = self.queue.try_reserve() else {
                break;
            };
            if let Some(item) = self.deferred_notifications.pop_front() {
                permit.send(item);
            }
        }
        while !self.deferred_requests.is_empty() {
            let Ok(permit) = self.requests.clone().try_acquire_owned() else {
                break;
            };
            if let Some(job) = self.deferred_requests.pop_front() {
                self.spawn_request(job, permit);
            }
        }
    }

    fn spawn_request(&self, job: RequestJob, permit: OwnedSemaphorePermit) {
        let handler = self.handler.clone();
        let peer = self.peer.clone();
        let in_flight = self.in_flight.clone();
        #[cfg(feature = "tracing")]
        let span = tracing::debug_span!("jsonrpc.request", id = ?job.request.id, method = %job.request.method);
        let task = async move {
            let _permit = permit;
            run_request(handler, peer, in_flight, job).await;
        };
        #[cfg(feature = "tracing")]
        let task = tracing::Instrument::instrument(task, span);
        self.work.spawn(task);
    }

    fn on_message(&mut self, message: Message) {
        match message {
            Message::Request { id, method, params } => {
                let token = self.shutdown.child_token();
                let generation = self.in_flight.register(&id, &token);
                self.requests_read += 1;
                let mut job = RequestJob::new(
                    IncomingRequest::new(id, method, params),
                    self.peer.clone(),
                    token,
                    generation,
                    self.notifications_read,
                    self.requests_read,
                );
                let handler = &self.handler;
                if let Err(payload) =
                    std::panic::catch_unwind(AssertUnwindSafe(|| handler.request_read(&mut job.request, &job.cx)))
                {
                    self.peer.shared.report(ConnectionEvent::RequestHandlerPanicked {
                        id: job.request.id.clone(),
                        method: job.request.method.clone(),
                        message: panic_message(&*payload),
                    });
                }
                if self.deferred_requests.is_empty() {
                    if let Ok(permit) = self.requests.clone().try_acquire_owned() {
                        self.spawn_request(job, permit);
                        return;
                    }
                }
                self.deferred_requests.push_back(job);
            }
            Message::Notification { method, params } => {
                if let Some(cancel) = &self.cancel {
                    if method == cancel.method {
                        let (id_key, check) = (cancel.id_key.clone(), cancel.check);
                        self.on_cancel(params.as_deref(), &id_key, check);
                        return;
                    }
                }
                self.notifications_read += 1;
                let item = (self.notifications_read, IncomingNotification { method, params });
                if self.deferred_notifications.is_empty() {
                    match self.queue.try_send(item) {
                        Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => {}
                        Err(mpsc::error::TrySendError::Full(item)) => {
                            self.deferred_notifications.push_back(item);
                        }
                    }
                } else {
                    self.deferred_notifications.push_back(item);
                }
            }
            Message::Response { id, result } => {
                let shared = &self.peer.shared;
                if id.is_null() {
                    match result {
                        Err(error) => shared.report(ConnectionEvent::ErrorWithoutId { error }),
                        Ok(_) => shared.report(ConnectionEvent::UnmatchedResponse { id }),
                    }
                    return;
                }
                let delivery = Delivery { result: result.map_err(CallError::Rpc), barrier: self.notifications_read };
                match shared.resolve(&id, delivery) {
                    Ok(()) => {}
                    Err(true) => shared.report(ConnectionEvent::LateResponse { id }),
                    Err(false) => shared.report(ConnectionEvent::UnmatchedResponse { id }),
                }
            }
        }
    }

    fn on_cancel(&mut self, params: Option<&serde_json::value::RawValue>, id_key: &str, check: Option<CancelCheck>) {
        if check.is_some_and(|valid| !valid(params)) {
            self.peer.shared.report(ConnectionEvent::InvalidCancel);
            return;
        }
        let id = params
            .and_then(|params| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(params.get()).ok())
            .and_then(|mut params| params.remove(id_key))
            .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
        match id {
            // A cancel for an unknown (or finished) request is ignored.
            Some(id) => {
                self.in_flight.cancel(&id);
            }
            None => self.peer.shared.report(ConnectionEvent::InvalidCancel),
        }
    }

    async fn on_invalid(&mut self, error: EnvelopeError, len: usize) {
        let shared = &self.peer.shared;
        if error.kind() == EnvelopeErrorKind::Parse && self.skip_non_json_lines {
            shared.report(ConnectionEvent::NonJsonLineSkipped { len });
            return;
        }
        if error.kind() == EnvelopeErrorKind::InvalidResponse {
            let failed_call = match error.id() {
                Some(id) if !id.is_null() => shared
                    .resolve(
                        id,
                        Delivery {
                            result: Err(CallError::InvalidResponse(error.clone())),
                            barrier: self.notifications_read,
                        },
                    )
                    .is_ok(),
                _ => false,
            };
            shared.report(ConnectionEvent::InvalidMessage { error, failed_call });
            return;
        }
        let reply = error.reply();
        shared.report(ConnectionEvent::InvalidMessage { error, failed_call: false });
        if let Some(reply) = reply {
            let _ = self.peer.send(reply).await;
        }
    }

    async fn on_oversize(&mut self, line: OversizeLine) {
        let shared = &self.peer.shared;
        shared.report(ConnectionEvent::OversizeMessage { line: line.clone() });
        match (line.shape, line.id) {
            (OversizeShape::Call, Some(id)) => {
                let error = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "invalid request: message of {} bytes exceeds the maximum of {} bytes",
                        line.len, self.max_message_size
                    ),
                );
                let _ = self.peer.send(Message::response(id, Err(error))).await;
            }
            (OversizeShape::Response, Some(id)) if !id.is_null() => {
                let _ = shared.resolve(
                    &id,
                    Delivery { result: Err(CallError::ResponseTooLarge(line.len)), barrier: self.notifications_read },
                );
            }
            _ => {}
        }
    }
}
