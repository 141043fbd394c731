//! [`Connection`]: JSON-RPC over any byte stream pair, with a [`Handler`] for
//! incoming messages and a [`Peer`] handle for outgoing ones.

mod handler;
mod options;
mod peer;
mod reader;
mod writer;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::time::{timeout, timeout_at, Instant};
use tokio_util::sync::CancellationToken;

pub use handler::{panic_message, Handler, IncomingNotification, IncomingRequest, NotificationContext, RequestContext};
pub use options::{CancelCheck, CancelNotification, ConnectionEvent, ConnectionOptions, Observer};
pub use peer::{Peer, ResultHook};

use crate::error::ConnectionError;
use crate::frame::{FrameLimits, FrameReader, FrameWriter};
use crate::id::RequestId;
use crate::message::DecodeOptions;
use peer::{Outgoing, Shared};
use reader::{End, Reader};

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

/// One JSON-RPC connection over a byte stream pair: reads newline-delimited
/// messages from the input, dispatches them to the [`Handler`], writes replies
/// and outgoing messages to the output.
///
/// Nothing happens until [`Connection::run`] is awaited (or spawned); it
/// completes when the input reaches end of file. See the crate documentation for
/// ordering, backpressure, cancellation and shutdown.
pub struct Connection {
    input: reader::Input,
    output: writer::Output,
    handler: Arc<dyn Handler>,
    peer: Peer,
    outgoing: mpsc::Receiver<Outgoing>,
    overflow: mpsc::UnboundedReceiver<Outgoing>,
    notifications_done: watch::Sender<u64>,
    options: ConnectionOptions,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection").field("peer", &self.peer).field("options", &self.options).finish_non_exhaustive()
    }
}

impl Connection {
    /// A connection reading `input` and writing `output`, and the [`Peer`]
    /// handle to send to the other side.
    pub fn new<R, W>(input: R, output: W, handler: Arc<dyn Handler>, options: ConnectionOptions) -> (Connection, Peer)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        Connection::from_boxed(Box::new(input), Box::new(output), handler, options)
    }

    /// A connection over this process's stdin and stdout (the ACP agent side).
    ///
    /// [`Connection::run`] completes when stdin closes, so a server whose `main`
    /// awaits it exits when its client closes the pipe. Write logs to stderr.
    pub fn stdio(handler: Arc<dyn Handler>, options: ConnectionOptions) -> (Connection, Peer) {
        Connection::new(tokio::io::stdin(), tokio::io::stdout(), handler, options)
    }

    fn from_boxed(
        input: reader::Input,
        output: writer::Output,
        handler: Arc<dyn Handler>,
        options: ConnectionOptions,
    ) -> (Connection, Peer) {
        let (outgoing_sender, outgoing) = mpsc::channel(options.outgoing_queue.max(1));
        let (overflow_sender, overflow) = mpsc::unbounded_channel();
        let (notifications_done, done_receiver) = watch::channel(0);
        let shared = Shared::new(
            NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed),
            outgoing_sender,
            overflow_sender,
            done_receiver,
            options.call_timeout,
            options.cancel_notification.clone(),
            options.observer.clone(),
        );
        let peer = Peer { shared: Arc::new(shared) };
        let connection =
            Connection { input, output, handler, peer: peer.clone(), outgoing, overflow, notifications_done, options };
        (connection, peer)
    }

    /// Another handle to the peer.
    pub fn peer(&self) -> Peer {
        self.peer.clone()
    }

    /// Runs the connection until the input closes (`Ok`) or the transport fails.
    ///
    /// On end of input: pending outgoing calls fail with
    /// [`CallError::Closed`](crate::CallError::Closed) at once, later calls fail
    /// the same way, the tokens of in-flight requests are cancelled, queued
    /// notifications are still handled, and handlers get
    /// [`shutdown_grace`](ConnectionOptions::shutdown_grace) to finish before they
    /// are dropped; the writer then gets the same grace to flush.
    ///
    /// Dropping this future stops everything the connection spawned.
    pub async fn run(self) -> Result<(), ConnectionError> {
        let Connection { input, output, handler, peer, outgoing, overflow, notifications_done, options } = self;
        let shared = peer.shared.clone();
        let writer_stop = CancellationToken::new();
        let mut writer = tokio::spawn(writer::run(FrameWriter::new(output), outgoing, overflow, writer_stop.clone()));
        let (queue, queue_receiver) = mpsc::channel(options.notification_queue.max(1));
        let work = handler::Background::default();
        let mut worker = tokio::spawn(handler::notification_worker(
            handler.clone(),
            peer.clone(),
            queue_receiver,
            notifications_done,
            work.clone(),
        ));
        let _guard = RunGuard {
            shared: shared.clone(),
            hard_stop: work.hard_stop.clone(),
            writer: writer.abort_handle(),
            worker: worker.abort_handle(),
        };
        let mut reader = Reader {
            frames: FrameReader::with_limits(
                input,
                FrameLimits { max_message_size: options.max_message_size, read_chunk_size: options.read_chunk_size },
            ),
            handler,
            peer,
            queue,
            requests: Arc::new(Semaphore::new(options.max_concurrent_requests.max(1))),
            work: work.clone(),
            in_flight: Arc::new(InFlight::default()),
            shutdown: CancellationToken::new(),
            deferred_notifications: VecDeque::new(),
            deferred_requests: VecDeque::new(),
            backlog: options.backlog,
            notifications_read: 0,
            requests_read: 0,
            decode: DecodeOptions::default().allow_null_id(options.allow_null_id),
            skip_non_json_lines: options.skip_non_json_lines,
            max_message_size: options.max_message_size,
            cancel: options.cancel_notification.clone(),
        };
        let end = reader.read(&mut writer).await;

        // Shutdown: no response can arrive any more.
        shared.close();
        reader.shutdown.cancel();
        let mut result = match end {
            End::Eof => {
                shared.report(ConnectionEvent::InputClosed);
                Ok(())
            }
            End::ReadFailed(error) => Err(ConnectionError::Read(error)),
            End::WriterExited(Ok(Err(error))) => Err(ConnectionError::Write(error)),
            End::WriterExited(_) => {
                Err(ConnectionError::Write(std::io::Error::other("writer task ended unexpectedly")))
            }
        };
        let writer_alive = result.is_ok() || matches!(result, Err(ConnectionError::Read(_)));
        let deadline = Instant::now() + options.shutdown_grace;
        let _ = timeout_at(deadline, reader.dispatch_deferred()).await;
        drop(reader);
        let _ = timeout_at(deadline, &mut worker).await;
        work.tracker.close();
        let _ = timeout_at(deadline, work.tracker.wait()).await;
        work.hard_stop.cancel();
        worker.abort();
        writer_stop.cancel();
        if writer_alive {
            match timeout(options.shutdown_grace, &mut writer).await {
                // After end of input the peer may be gone already: a broken pipe
                // while flushing the last replies is expected.
                Ok(Ok(Err(error))) if result.is_ok() && error.kind() != std::io::ErrorKind::BrokenPipe => {
                    result = Err(ConnectionError::Write(error))
                }
                Ok(_) => {}
                Err(_) => writer.abort(),
            }
        }
        result
    }
}

/// Stops everything the connection spawned when `run` ends or is dropped.
struct RunGuard {
    shared: Arc<Shared>,
    hard_stop: CancellationToken,
    writer: tokio::task::AbortHandle,
    worker: tokio::task::AbortHandle,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        self.shared.close();
        self.hard_stop.cancel();
        self.worker.abort();
        self.writer.abort();
    }
}

/// The cancellation tokens of incoming requests that are not answered yet.
#[derive(Default)]
pub(crate) struct InFlight {
    tokens: Mutex<HashMap<RequestId, (u64, CancellationToken)>>,
    generation: AtomicU64,
}

impl InFlight {
    fn tokens(&self) -> MutexGuard<'_, HashMap<RequestId, (u64, CancellationToken)>> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.tokens.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn register(&self, id: &RequestId, token: &CancellationToken) -> u64 {
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        self.tokens().insert(id.clone(), (generation, token.clone()));
        generation
    }

    fn cancel(&self, id: &RequestId) -> bool {
        match self.tokens().get(id) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    fn finish(&self, id: &RequestId, generation: u64) {
        let mut tokens = self.tokens();
        if tokens.get(id).is_some_and(|(current, _)| *current == generation) {
            tokens.remove(id);
        }
    }
}
