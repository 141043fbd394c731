//! [`ConnectionOptions`] and the [`ConnectionEvent`]s reported to an observer.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;

use crate::error::ErrorObject;
use crate::frame::{OversizeLine, DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_READ_CHUNK_SIZE};
use crate::id::RequestId;
use crate::message::EnvelopeError;

/// A callback that receives every noteworthy [`ConnectionEvent`].
///
/// It runs inline on the connection's tasks: keep it short and non-blocking.
pub type Observer = Arc<dyn Fn(&ConnectionEvent) + Send + Sync>;

/// The limits and conventions of a [`Connection`](crate::Connection).
///
/// Build it with [`ConnectionOptions::default`] and the setters.
#[derive(Clone)]
#[non_exhaustive]
pub struct ConnectionOptions {
    /// The maximum length of one incoming line without its LF. Longer lines are
    /// discarded as they stream by and reported. Default 64 MiB.
    pub max_message_size: usize,
    /// How many bytes are read at once. Default 64 KiB. The read buffer never
    /// exceeds `max_message_size + read_chunk_size`.
    pub read_chunk_size: usize,
    /// Whether incoming requests may carry `"id": null` (ACP v1). Default `false`.
    pub allow_null_id: bool,
    /// Report lines that are not JSON as [`ConnectionEvent::NonJsonLineSkipped`]
    /// instead of answering `-32700` (for clients of agents that log to stdout).
    /// Default `false`.
    pub skip_non_json_lines: bool,
    /// Capacity of the queue between the reader and the serial notification
    /// worker. When it is full the reader stops reading. Default 64.
    pub notification_queue: usize,
    /// The most request handlers running at once. When all are busy the reader
    /// stops reading. Default 64.
    pub max_concurrent_requests: usize,
    /// How many notifications or requests the reader may set aside, while its
    /// queues are full, in order to keep reading responses to calls that are
    /// pending. Default 1024. See the crate documentation on backpressure.
    pub backlog: usize,
    /// Capacity of the outgoing message queue; senders wait for room. Default 64.
    pub outgoing_queue: usize,
    /// A timeout applied to every [`Peer::call`](crate::Peer::call). Default none.
    pub call_timeout: Option<Duration>,
    /// How long in-flight handlers may run after the input closed, and how long
    /// the writer may take to flush afterwards. Default 5 s.
    pub shutdown_grace: Duration,
    /// The cancel notification: method name and the params key holding the id.
    /// Default `$/cancel_request` with `requestId`; `None` disables it both ways.
    pub cancel_notification: Option<CancelNotification>,
    /// Receives every [`ConnectionEvent`]. Default none.
    pub observer: Option<Observer>,
}

/// The method and params key of the cancel notification (`{"requestId": <id>}`).
#[derive(Debug, Clone)]
pub struct CancelNotification {
    /// The method name, e.g. `$/cancel_request`.
    pub method: String,
    /// The params key holding the id of the request to cancel, e.g. `requestId`.
    pub id_key: String,
    /// Judges the whole params (absent when the notification had none) before the
    /// id is read: params it refuses cancel nothing and are reported as
    /// [`ConnectionEvent::InvalidCancel`]. A protocol sets it to its own decoder of
    /// the notification, so that the connection acts on exactly the cancel
    /// notifications that decoder accepts. Default none: any params with a valid
    /// id under [`CancelNotification::id_key`] act.
    pub check: Option<CancelCheck>,
}

/// See [`CancelNotification::check`]: whether the params of a cancel notification are valid.
pub type CancelCheck = fn(Option<&RawValue>) -> bool;

impl PartialEq for CancelNotification {
    /// Checks compare by address: the same function is the same check.
    fn eq(&self, other: &CancelNotification) -> bool {
        let same_check = match (self.check, other.check) {
            (Some(a), Some(b)) => std::ptr::fn_addr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        self.method == other.method && self.id_key == other.id_key && same_check
    }
}

impl Eq for CancelNotification {}

impl Default for CancelNotification {
    fn default() -> CancelNotification {
        CancelNotification { method: "$/cancel_request".to_owned(), id_key: "requestId".to_owned(), check: None }
    }
}

impl Default for ConnectionOptions {
    fn default() -> ConnectionOptions {
        ConnectionOptions {
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            read_chunk_size: DEFAULT_READ_CHUNK_SIZE,
            allow_null_id: false,
            skip_non_json_lines: false,
            notification_queue: 64,
            max_concurrent_requests: 64,
            backlog: 1024,
            outgoing_queue: 64,
            call_timeout: None,
            shutdown_grace: Duration::from_secs(5),
            cancel_notification: Some(CancelNotification::default()),
            observer: None,
        }
    }
}

impl ConnectionOptions {
    /// Sets [`ConnectionOptions::max_message_size`] (at least 1).
    pub fn max_message_size(mut self, bytes: usize) -> ConnectionOptions {
        self.max_message_size = bytes.max(1);
        self
    }

    /// Sets [`ConnectionOptions::read_chunk_size`] (at least 1).
    pub fn read_chunk_size(mut self, bytes: usize) -> ConnectionOptions {
        self.read_chunk_size = bytes.max(1);
        self
    }

    /// Sets [`ConnectionOptions::allow_null_id`].
    pub fn allow_null_id(mut self, allow: bool) -> ConnectionOptions {
        self.allow_null_id = allow;
        self
    }

    /// Sets [`ConnectionOptions::skip_non_json_lines`].
    pub fn skip_non_json_lines(mut self, skip: bool) -> ConnectionOptions {
        self.skip_non_json_lines = skip;
        self
    }

    /// Sets [`ConnectionOptions::notification_queue`] (at least 1).
    pub fn notification_queue(mut self, capacity: usize) -> ConnectionOptions {
        self.notification_queue = capacity.max(1);
        self
    }

    /// Sets [`ConnectionOptions::max_concurrent_requests`] (at least 1).
    pub fn max_concurrent_requests(mut self, limit: usize) -> ConnectionOptions {
        self.max_concurrent_requests = limit.max(1);
        self
    }

    /// Sets [`ConnectionOptions::backlog`].
    pub fn backlog(mut self, capacity: usize) -> ConnectionOptions {
        self.backlog = capacity;
        self
    }

    /// Sets [`ConnectionOptions::outgoing_queue`] (at least 1).
    pub fn outgoing_queue(mut self, capacity: usize) -> ConnectionOptions {
        self.outgoing_queue = capacity.max(1);
        self
    }

    /// Sets [`ConnectionOptions::call_timeout`].
    pub fn call_timeout(mut self, timeout: Option<Duration>) -> ConnectionOptions {
        self.call_timeout = timeout;
        self
    }

    /// Sets [`ConnectionOptions::shutdown_grace`].
    pub fn shutdown_grace(mut self, grace: Duration) -> ConnectionOptions {
        self.shutdown_grace = grace;
        self
    }

    /// Sets [`ConnectionOptions::cancel_notification`].
    pub fn cancel_notification(mut self, cancel: Option<CancelNotification>) -> ConnectionOptions {
        self.cancel_notification = cancel;
        self
    }

    /// Sets [`ConnectionOptions::observer`].
    pub fn observer(mut self, observer: impl Fn(&ConnectionEvent) + Send + Sync + 'static) -> ConnectionOptions {
        self.observer = Some(Arc::new(observer));
        self
    }
}

impl fmt::Debug for ConnectionOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionOptions")
            .field("max_message_size", &self.max_message_size)
            .field("read_chunk_size", &self.read_chunk_size)
            .field("allow_null_id", &self.allow_null_id)
            .field("skip_non_json_lines", &self.skip_non_json_lines)
            .field("notification_queue", &self.notification_queue)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field("backlog", &self.backlog)
            .field("outgoing_queue", &self.outgoing_queue)
            .field("call_timeout", &self.call_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("cancel_notification", &self.cancel_notification)
            .field("observer", &self.observer.as_ref().map(|_| "Fn"))
            .finish()
    }
}

/// Something noteworthy that happened on a connection. May expand over time.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ConnectionEvent {
    /// A line that is not JSON was skipped without a reply
    /// ([`ConnectionOptions::skip_non_json_lines`]).
    NonJsonLineSkipped {
        /// The line's length in bytes.
        len: usize,
    },
    /// An incoming line was not a valid message. It was answered when
    /// [`EnvelopeError::is_answered`] says so.
    InvalidMessage {
        /// What was wrong.
        error: EnvelopeError,
        /// Whether a pending call was failed with it (invalid responses only).
        failed_call: bool,
    },
    /// A line over [`ConnectionOptions::max_message_size`] was discarded. A call
    /// shape with an id was answered `-32600`; a response shape with a pending id
    /// failed that call.
    OversizeMessage {
        /// What was learnt about the line.
        line: OversizeLine,
    },
    /// A response arrived for an id that is not pending.
    UnmatchedResponse {
        /// Its id.
        id: RequestId,
    },
    /// A response arrived for a call that was cancelled or timed out; discarded.
    LateResponse {
        /// Its id.
        id: RequestId,
    },
    /// The peer sent an error response with `"id": null` (it could not read
    /// something this side sent).
    ErrorWithoutId {
        /// The peer's error.
        error: ErrorObject,
    },
    /// A request handler panicked; the request was answered `-32603`.
    RequestHandlerPanicked {
        /// The request's id.
        id: RequestId,
        /// The request's method.
        method: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// A notification handler panicked; the worker went on with the next one.
    NotificationHandlerPanicked {
        /// The notification's method.
        method: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The result hook of a call (see [`Peer::call_observing`](super::Peer::call_observing))
    /// panicked; the call still received its answer.
    ResultHookPanicked {
        /// The call's id.
        id: RequestId,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// A cancel notification whose params do not name a request id.
    InvalidCancel,
    /// The input reached end of file; the connection is shutting down.
    InputClosed,
}
