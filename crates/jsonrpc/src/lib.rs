//! The JSON-RPC 2.0 core that every agentproto protocol stands on: request ids,
//! wire errors, a one-pass envelope decoder, NDJSON framing, and a tokio
//! [`Connection`] with ordered delivery, bounded queues and cancellation.
//!
//! The crate knows no protocol's method names. The only method it treats
//! specially is the cancel notification, whose name and params key are options
//! (default `$/cancel_request` with `{"requestId": <id>}`).
//!
//! # Layers
//!
//! * [`id`], [`error`], [`message`]: the wire model. [`Message::decode`] reads
//!   one line in one pass with a hand-written serde visitor into a request,
//!   notification or response whose params and result stay raw
//!   ([`serde_json::value::RawValue`]), so the protocol layer decodes them by
//!   method. A line that is not a valid message yields an [`EnvelopeError`] that
//!   says what to answer (`-32700` with `id: null`, `-32600`, `-32602`), to which
//!   id, at which JSON path, or that it must not be answered (responses and
//!   notifications never are).
//! * [`frame`]: one message per line over any `AsyncRead`/`AsyncWrite`.
//! * [`connection`]: the runtime. [`memory`] builds in-memory pairs for tests.
//!
//! # The connection model
//!
//! A [`Connection`] is driven by one future, [`Connection::run`]. Its reader
//! task frames and decodes the input; a writer task drains a bounded outgoing
//! queue and flushes whenever the queue is empty, so messages are batched under
//! load. The application supplies a [`Handler`] and sends through [`Peer`]
//! handles.
//!
//! **Requests** run concurrently: each incoming request gets its own task, up to
//! [`ConnectionOptions::max_concurrent_requests`] at once. Those tasks may start
//! in any order, so the read order is kept apart: [`Handler::request_read`] sees
//! each request on the reader task as it is read, before its task starts, and the
//! contexts carry the position ([`RequestContext::index`],
//! [`RequestContext::notifications_before`], [`NotificationContext::index`]). A
//! layer above records there what later messages depend on (a request that
//! changes the state the next ones are checked against), so that a handler can
//! wait for what was read before it and give the same answer to the same bytes.
//!
//! **Notifications** are handled one at a time, in arrival order, by a single
//! notification worker fed by a bounded queue
//! ([`ConnectionOptions::notification_queue`]).
//!
//! **Ordering guarantee.** A response is delivered to its caller only after the
//! handlers of all notifications received *before* it have completed. When an
//! agent streams 1000 `session/update` notifications and then answers
//! `session/prompt`, the `prompt` call returns after all 1000 were handled. The
//! reader never waits for this: it stamps each response with the number of
//! notifications read so far, and the caller's future waits until the worker has
//! finished that many.
//!
//! **The notification-handler exception.** A call made from inside a
//! notification handler of the same connection resolves as soon as its response
//! arrives, without that barrier: the worker is serial, so every notification
//! before the running one has finished already, and waiting for the later ones
//! would wait for the handler itself (a deadlock). It is tracked with a tokio
//! task-local, so it applies to the handler's own future only, not to tasks it
//! spawns. A request handler may await calls freely (a prompt awaiting a
//! permission round trip): request handlers never block the reader or the
//! worker.
//!
//! **Backpressure.** Every queue is bounded and nothing is ever dropped. When the
//! notification queue is full, or every request slot is busy, the reader stops
//! reading, so the peer's writes block and memory stays bounded. One exception
//! keeps responses flowing: while calls of this side are pending, the reader may
//! set up to [`ConnectionOptions::backlog`] further notifications and requests
//! aside and keep reading, because the response those handlers wait for may be
//! behind them. Outgoing, [`Peer::call`] and [`Peer::notify`] wait for room in the
//! outgoing queue ([`ConnectionOptions::outgoing_queue`]).
//! The remaining pathological case: a handler awaits a response that the peer
//! sends only after more than `notification_queue + backlog` notifications (or
//! `max_concurrent_requests + backlog` requests). Then the reader stays blocked
//! until a [`ConnectionOptions::call_timeout`] (or the application's own timeout)
//! fails that call. Raise the bounds or set a timeout if a peer behaves so.
//!
//! **Cancellation.** Dropping a [`Peer::call`] future before its response sends
//! the cancel notification for its id, and a late response is discarded (reported
//! as [`ConnectionEvent::LateResponse`]). A per-call timeout does the same and
//! fails with [`CallError::Timeout`]. An incoming cancel fires the request's
//! [`RequestContext::cancellation_token`]; the request is still answered: by
//! default the connection drops the handler future and replies `-32800`
//! "request cancelled"; a handler that called
//! [`RequestContext::handle_cancellation`] keeps running and its own return value
//! is sent (for partial results). A cancel for an unknown id is ignored.
//!
//! **Failures stay local.** A handler error becomes an error response. A handler
//! panic becomes `-32603` (request) or an event (notification), and the
//! connection lives on. Bad input never closes the connection: invalid lines are
//! answered per the JSON-RPC rules, responses are never answered, unmatched and
//! invalid responses are reported, and an invalid response fails its pending
//! call. With [`ConnectionOptions::skip_non_json_lines`] a client tolerates agents
//! that print logs on stdout. Every such event reaches the optional
//! [`ConnectionOptions::observer`] as a typed [`ConnectionEvent`].
//!
//! **Limits.** A line longer than [`ConnectionOptions::max_message_size`]
//! (default 64 MiB) is discarded while it streams by, never buffered whole; the
//! read buffer never exceeds `max_message_size + read_chunk_size`. When the id can
//! be recovered from the line's first 4 KiB, an oversize request is answered
//! `-32600` and an oversize response fails its call with
//! [`CallError::ResponseTooLarge`]. Nesting deeper than
//! [`message::MAX_NESTING_DEPTH`] (128) is a parse error.
//!
//! **Shutdown.** At end of input, pending outgoing calls fail at once with
//! [`CallError::Closed`], and so does every later call. The tokens of in-flight
//! requests are cancelled, queued notifications are still handled, and handlers
//! get [`ConnectionOptions::shutdown_grace`] (default 5 s) before they are
//! dropped; the writer then gets as long to flush, and `run` completes. Dropping
//! the `run` future stops everything the connection spawned; [`Peer`] handles
//! keep nothing alive.
//!
//! # Stdio
//!
//! [`Connection::stdio`] reads stdin and writes stdout. A server that awaits
//! `run` in `main` exits when its client closes stdin:
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use agentproto_jsonrpc::{
//!     Connection, ConnectionOptions, ErrorObject, Handler, IncomingNotification, IncomingRequest,
//!     NotificationContext, RequestContext,
//! };
//! use futures::future::BoxFuture;
//! use serde_json::value::RawValue;
//!
//! struct Echo;
//!
//! impl Handler for Echo {
//!     fn request(&self, request: IncomingRequest, _: RequestContext) -> BoxFuture<'static, Result<Box<RawValue>, ErrorObject>> {
//!         Box::pin(async move { request.params.ok_or_else(|| ErrorObject::method_not_found(&request.method)) })
//!     }
//!
//!     fn notification(&self, _: IncomingNotification, _: NotificationContext) -> BoxFuture<'static, ()> {
//!         Box::pin(async {})
//!     }
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), agentproto_jsonrpc::ConnectionError> {
//!     let (connection, _peer) = Connection::stdio(Arc::new(Echo), ConnectionOptions::default());
//!     connection.run().await
//! }
//! ```
//!
//! # Cargo features
//!
//! None.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod codes;
pub mod connection;
mod decode;
pub mod error;
pub mod frame;
pub mod id;
pub mod memory;
pub mod message;
pub mod syntax;

pub use connection::{
    panic_message, CancelCheck, CancelNotification, Connection, ConnectionEvent, ConnectionOptions, Handler,
    IncomingNotification, IncomingRequest, NotificationContext, Observer, Peer, RequestContext, ResultHook,
};

pub use decode::{decode_call_eager, nesting_exceeds, EagerCall, EagerParams};
pub use error::{CallError, ConnectionError, DecodeError, ErrorCode, ErrorObject};
pub use id::RequestId;
pub use message::{DecodeOptions, EnvelopeError, EnvelopeErrorKind, Message};

/// This crate's README (the one crates.io shows) is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
