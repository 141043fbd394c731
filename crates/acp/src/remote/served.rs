//! One ACP connection served remotely: its input feed, and the streams its output is
//! routed to.
//!
//! Everything the agent writes goes through the connection's [`LineSink`] into one
//! of the [`Served`] connection's streams: over WebSocket there is one, the socket;
//! over Streamable HTTP the connection-scoped stream and one per session. A response
//! goes where the request it answers came from (the session named by the POST's
//! `Acp-Session-Id`, else the connection stream); a request or notification of the
//! agent goes to the stream of the session its `params.sessionId` names, else the
//! connection stream. One stream carries its messages in the order the connection
//! wrote them, so a `session/update` never overtakes the answer that follows it. Lines
//! queued for a stream nobody has opened yet wait there, within the connection's byte
//! bound.
//!
//! Which sessions a connection has is learnt from its traffic, the same way for an
//! agent of this SDK and for any stdio agent behind `agentproto bridge`: a session id
//! in an answer's `result`, in the agent's own messages, or in a request the agent
//! answered with success.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;
use tokio::sync::{oneshot, Notify};
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

use super::framing::{FeedHandle, LineSink, MessageFeed, Outlet};
use super::limits::ServerLimits;
use super::routing::{scan, IdKey};

/// Attaches a fresh agent to one ACP connection's byte streams: the future runs it
/// until its input ends (then the connection ends).
pub type Attach = Arc<dyn Fn(MessageFeed, LineSink) -> BoxFuture<'static, ()> + Send + Sync>;

/// The lines waiting for one stream (an SSE response or the WebSocket).
#[derive(Default)]
pub(crate) struct OutStream {
    lines: VecDeque<Bytes>,
    pub(crate) attached: bool,
    notify: Arc<Notify>,
}

impl OutStream {
    fn push(&mut self, line: Bytes) {
        self.lines.push_back(line);
        self.notify.notify_one();
    }
}

/// Which stream of a connection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum StreamKey {
    Main,
    Session(String),
}

struct State {
    main: OutStream,
    sessions: HashMap<String, OutStream>,
    known: HashSet<String>,
    /// Request id → the session stream its answer goes to.
    routes: HashMap<IdKey, String>,
    /// Request id → its `params.sessionId` (a session the agent has once it answers).
    asked: HashMap<IdKey, String>,
    initialize: Option<(IdKey, oneshot::Sender<Bytes>)>,
    queued: usize,
    sink: Option<Waker>,
    stall: Option<Pin<Box<Sleep>>>,
    last_activity: Instant,
}

impl State {
    fn stream(&mut self, key: &StreamKey) -> &mut OutStream {
        match key {
            StreamKey::Main => &mut self.main,
            StreamKey::Session(id) => self.sessions.entry(id.clone()).or_default(),
        }
    }
}

/// One ACP connection on the server, from its `initialize` (or WebSocket upgrade) to
/// its end.
pub(crate) struct Served {
    pub(crate) id: String,
    pub(crate) websocket: bool,
    pub(crate) feed: FeedHandle,
    limits: Arc<ServerLimits>,
    state: Mutex<State>,
    ended: CancellationToken,
}

impl Served {
    /// A connection and the reading end of its feed.
    pub(crate) fn new(limits: Arc<ServerLimits>, websocket: bool) -> (Arc<Served>, MessageFeed) {
        let (reader, feed) = MessageFeed::new(limits.max_queued_bytes);
        let state = State {
            main: OutStream::default(),
            sessions: HashMap::new(),
            known: HashSet::new(),
            routes: HashMap::new(),
            asked: HashMap::new(),
            initialize: None,
            queued: 0,
            sink: None,
            stall: None,
            last_activity: Instant::now(),
        };
        let id = uuid::Uuid::new_v4().simple().to_string();
        let served = Served { id, websocket, feed, limits, state: Mutex::new(state), ended: CancellationToken::new() };
        (Arc::new(served), reader)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Ends the connection: its input ends (handlers get the connection's grace), then
    /// its streams end once what was written is sent.
    pub(crate) fn close(&self) {
        self.feed.close();
    }

    /// The connection's runtime ended: every stream is told, the `initialize` waiter too.
    pub(crate) fn end(&self) {
        self.feed.close();
        self.ended.cancel();
        let mut state = self.state();
        state.initialize = None;
        state.main.notify.notify_one();
        for stream in state.sessions.values() {
            stream.notify.notify_one();
        }
        if let Some(waker) = state.sink.take() {
            waker.wake();
        }
    }

    pub(crate) fn is_ended(&self) -> bool {
        self.ended.is_cancelled()
    }

    pub(crate) fn touch(&self) {
        self.state().last_activity = Instant::now();
    }

    /// How long without a request or an open stream (zero while a stream is open).
    pub(crate) fn idle_for(&self, now: Instant) -> std::time::Duration {
        let state = self.state();
        if state.main.attached || state.sessions.values().any(|s| s.attached) {
            return std::time::Duration::ZERO;
        }
        now.saturating_duration_since(state.last_activity)
    }

    /// Whether `session` is one of this connection's.
    pub(crate) fn knows_session(&self, session: &str) -> bool {
        self.state().known.contains(session)
    }

    /// What a POSTed request says about routing: its answer goes to the stream of
    /// `session` (when the POST named one), and a session it names becomes this
    /// connection's once the agent answers it with success.
    pub(crate) fn incoming(&self, message: &[u8], session: Option<&str>) {
        let Some(head) = scan(message) else { return };
        let (true, Some(id)) = (head.is_request(), head.id) else { return };
        let mut state = self.state();
        if let Some(named) = head.session {
            state.asked.insert(id.clone(), named);
        }
        if let Some(session) = session {
            state.routes.insert(id, session.to_owned());
        }
    }

    /// The answer to the request `id` is returned to the caller, not streamed.
    pub(crate) fn expect_answer(&self, id: IdKey) -> oneshot::Receiver<Bytes> {
        let (send, receive) = oneshot::channel();
        self.state().initialize = Some((id, send));
        receive
    }

    /// Claims a stream for a reader; `false` when one is already attached.
    pub(crate) fn attach(&self, key: &StreamKey) -> bool {
        let mut state = self.state();
        let stream = state.stream(key);
        if stream.attached {
            return false;
        }
        stream.attached = true;
        true
    }

    pub(crate) fn detach(&self, key: &StreamKey) {
        let mut state = self.state();
        state.stream(key).attached = false;
        state.last_activity = Instant::now();
    }

    /// Everything queued on a stream, in order (the connection's bound is released),
    /// and what to wait on for more.
    pub(crate) fn take(&self, key: &StreamKey) -> (Vec<Bytes>, Arc<Notify>) {
        let mut state = self.state();
        let stream = state.stream(key);
        let lines: Vec<Bytes> = stream.lines.drain(..).collect();
        let notify = stream.notify.clone();
        let size: usize = lines.iter().map(Bytes::len).sum();
        state.queued -= size;
        if size > 0 {
            if let Some(waker) = state.sink.take() {
                waker.wake();
            }
        }
        (lines, notify)
    }

    /// Waits until lines are queued on `key`, the connection ended, or `timeout`
    /// passed; returns what is queued (empty: ended or timed out).
    pub(crate) async fn next(&self, key: &StreamKey, timeout: Option<std::time::Duration>) -> Vec<Bytes> {
        let (lines, notify) = self.take(key);
        if !lines.is_empty() || self.is_ended() {
            return lines;
        }
        let wait = async {
            tokio::select! {
                () = notify.notified() => {}
                () = self.ended.cancelled() => {}
            }
        };
        match timeout {
            Some(timeout) => {
                let _ = tokio::time::timeout(timeout, wait).await;
            }
            None => wait.await,
        }
        self.take(key).0
    }
}

impl Outlet for Served {
    fn deliver(&self, line: Bytes) {
        let mut state = self.state();
        let key = if self.websocket && state.initialize.is_none() {
            StreamKey::Main
        } else {
            let head = scan(&line).unwrap_or_default();
            if head.response {
                if let (Some(id), Some((waiting, _))) = (&head.id, &state.initialize) {
                    if id == waiting {
                        if let Some((_, answer)) = state.initialize.take() {
                            let _ = answer.send(line);
                        }
                        return;
                    }
                }
            }
            if let Some(session) = &head.result_session {
                state.known.insert(session.clone());
            }
            let session = if head.response {
                let id = head.id.as_ref();
                let asked = id.and_then(|id| state.asked.remove(id));
                if let (true, Some(asked)) = (head.success, asked) {
                    state.known.insert(asked);
                }
                id.and_then(|id| state.routes.remove(id))
            } else {
                if let Some(session) = &head.session {
                    state.known.insert(session.clone());
                }
                head.session
            };
            match session {
                Some(session) if !self.websocket => StreamKey::Session(session),
                _ => StreamKey::Main,
            }
        };
        state.queued += line.len();
        state.stream(&key).push(line);
    }

    fn poll_room(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = self.state();
        if self.is_ended() {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the remote connection ended")));
        }
        if state.queued <= self.limits.max_queued_bytes {
            state.stall = None;
            return Poll::Ready(Ok(()));
        }
        state.sink = Some(cx.waker().clone());
        let timeout = self.limits.stall_timeout;
        let stall = state.stall.get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if stall.as_mut().poll(cx).is_ready() {
            drop(state);
            self.end();
            let message = format!("nothing was sent for {timeout:?}");
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, message)));
        }
        Poll::Pending
    }
}

/// Starts the runtime of a new served connection: `attach` gets its streams; when its
/// future ends the connection ends and `on_end` runs.
pub(crate) fn start(
    limits: Arc<ServerLimits>,
    websocket: bool,
    attach: &Attach,
    on_end: impl FnOnce(&str) + Send + 'static,
) -> Arc<Served> {
    let (served, reader) = Served::new(limits, websocket);
    let sink = LineSink::new(served.clone());
    let run = attach(reader, sink);
    let task = served.clone();
    tokio::spawn(async move {
        run.await;
        task.end();
        on_end(&task.id);
    });
    served
}
