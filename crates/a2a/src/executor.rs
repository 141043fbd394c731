//! The agent's side: an [`AgentExecutor`] turns one incoming message into task updates
//! through a [`TaskUpdater`].
//!
//! The first thing the executor does decides the answer: [`TaskUpdater::reply`] answers
//! with a direct message and no task is stored; any other update creates the task
//! (state SUBMITTED, the user's message in its history) and then applies itself. After
//! that, every update is a durable event that subscribers and push receivers see.

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::errors::A2aError;
use crate::recovery::TurnGuard;
use crate::store::TaskKey;
use crate::tasks::{Change, Known, Tasks, Writer};
use crate::v1::{Artifact, Message, Part, PartContent, Role, Task, TaskState, TaskStatus};

/// What the executor is asked to do. Built by the server only; fields may be added.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RequestContext {
    /// The caller's message.
    pub message: Message,
    /// The task this message continues, if it names one (its state before this message).
    pub task: Option<Task>,
    /// The task this message belongs to: the one it names, or a new id.
    pub task_id: String,
    /// The context: the message's, the task's, or a new id.
    pub context_id: String,
    /// The tenant the call was made for (`""` for the default one).
    pub tenant: String,
    /// `SendMessageRequest.metadata`.
    pub metadata: Option<crate::v1::RawObject>,
    /// Extensions the client activated (`A2A-Extensions`).
    pub extensions: Vec<String>,
    /// Fires when the task is canceled (or the server shuts down).
    pub cancelled: CancellationToken,
}

impl RequestContext {
    /// The text of the caller's message (its text parts, joined).
    pub fn text(&self) -> String {
        self.message
            .parts
            .iter()
            .filter_map(|p| match &p.content {
                PartContent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }
}

/// Agent logic. `execute` runs once per incoming message, on its own tokio task.
///
/// Returning `Err` fails the task (or answers the error when no task exists yet);
/// returning `Ok` with the task still active leaves it for later messages.
///
/// While `execute` runs (and while any clone of its [`TaskUpdater`] is alive) the server
/// holds a lease on the task and renews it; if the server dies, the lease runs out and
/// another server, or this one after a restart, marks the task FAILED. Turns are never
/// run again after such a loss (see [`crate::recovery`]).
pub trait AgentExecutor: Send + Sync + 'static {
    /// Handles one incoming message `cx`, reporting through `task` (see the trait's
    /// documentation for what the result means).
    fn execute(&self, cx: RequestContext, task: TaskUpdater) -> impl Future<Output = Result<(), A2aError>> + Send;

    /// Called by `CancelTask` while `execute` may still run (its `cancelled` token has
    /// fired). The default moves the task to CANCELED.
    fn cancel(&self, task: TaskUpdater) -> impl Future<Output = Result<(), A2aError>> + Send {
        async move { task.cancel().await }
    }
}

/// Which piece of an artifact an update carries (see [`TaskUpdater::artifact_chunk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    /// The whole artifact in one event.
    Whole,
    /// The first piece of an artifact that later pieces extend.
    First,
    /// A further piece, appended to what was sent; more follow.
    More,
    /// The final piece, appended to what was sent.
    Last,
}

impl Chunk {
    /// The piece number `index` (from 0) of an artifact sent in `count` pieces:
    /// `Whole` when there is one piece, otherwise `First`, then `More`, then `Last`.
    pub fn nth(index: usize, count: usize) -> Chunk {
        match (index, count) {
            (_, 0 | 1) => Chunk::Whole,
            (0, _) => Chunk::First,
            (i, n) if i + 1 >= n => Chunk::Last,
            _ => Chunk::More,
        }
    }
}

/// What the first update of an execution was, for the request waiting on it.
#[derive(Debug)]
pub(crate) enum First {
    /// A direct message; no task.
    Message(Message),
    /// The task exists; its creation event has this sequence number.
    Task { seq: u64 },
    /// The executor failed before it did anything.
    Failed(A2aError),
}

/// What an execution's updater starts with, and keeps between updates.
pub(crate) struct Pending {
    /// The task to create on the first update (None once created).
    pub(crate) create: Option<Task>,
    /// A push config sent with the message, stored with the task.
    pub(crate) push: Option<crate::store::PushConfigRecord>,
    /// Told what the first update was.
    pub(crate) first: Option<oneshot::Sender<First>>,
    /// Given the task when an update ends the turn (a terminal or interrupted state);
    /// set by [`TaskUpdater::turn_end`].
    pub(crate) turn_end: Option<oneshot::Sender<Arc<Task>>>,
    /// The task as this execution last committed it: the next update applies to it
    /// without reading the store (see `crate::tasks::Known`).
    pub(crate) known: Option<Known>,
    /// Present when the updater belongs to a running turn: it holds the turn's lease,
    /// which ends when the last clone of the updater is dropped.
    pub(crate) turn: Option<TurnGuard>,
}

/// Updates one task. Cheap to clone; all clones update the same task.
#[derive(Clone)]
pub struct TaskUpdater {
    tasks: Arc<Tasks>,
    key: TaskKey,
    context_id: String,
    pending: Arc<Mutex<Pending>>,
}

impl TaskUpdater {
    pub(crate) fn new(tasks: Arc<Tasks>, key: TaskKey, context_id: String, start: Pending) -> Self {
        TaskUpdater { tasks, key, context_id, pending: Arc::new(Mutex::new(start)) }
    }

    /// Whether two updaters are clones of one another (one execution).
    pub(crate) fn same(&self, other: &TaskUpdater) -> bool {
        Arc::ptr_eq(&self.pending, &other.pending)
    }

    pub(crate) fn key(&self) -> &TaskKey {
        &self.key
    }

    /// The id of the task this updater writes.
    pub fn task_id(&self) -> &str {
        &self.key.id
    }

    /// The context of that task.
    pub fn context_id(&self) -> &str {
        &self.context_id
    }

    /// A message from the agent, in this task's context.
    pub fn agent_message(&self, parts: Vec<Part>) -> Message {
        let mut m = Message::new(uuid::Uuid::new_v4().to_string(), Role::Agent, parts);
        m.context_id = self.context_id.clone();
        m.task_id = self.key.id.clone();
        m
    }

    /// A text message from the agent.
    pub fn text(&self, text: impl Into<String>) -> Message {
        self.agent_message(vec![Part::new(PartContent::Text(text.into()))])
    }

    /// Answers with a direct message and no task. Only valid as the first update.
    pub async fn reply(&self, mut message: Message) -> Result<(), A2aError> {
        let sender = {
            let mut p = self.lock();
            if p.create.is_none() {
                return Err(A2aError::new(crate::errors::ErrorKind::InvalidAgentResponse)
                    .with_message("a direct reply must be the first thing an executor sends"));
            }
            p.create = None;
            p.first.take()
        };
        message.task_id.clear();
        if message.context_id.is_empty() {
            message.context_id = self.context_id.clone();
        }
        if let Some(tx) = sender {
            let _ = tx.send(First::Message(message));
        }
        Ok(())
    }

    /// Moves the task to `state`, with an optional status message.
    pub async fn status(&self, state: TaskState, message: Option<Message>) -> Result<(), A2aError> {
        let mut status = TaskStatus::new(state);
        status.message = message;
        self.change(Change::Status(status, None)).await
    }

    /// Moves the task to WORKING.
    pub async fn working(&self, message: Option<Message>) -> Result<(), A2aError> {
        self.status(TaskState::Working, message).await
    }

    /// Moves the task to COMPLETED (terminal), usually with the answer as `message`.
    pub async fn complete(&self, message: Option<Message>) -> Result<(), A2aError> {
        self.status(TaskState::Completed, message).await
    }

    /// Moves the task to FAILED (terminal).
    pub async fn fail(&self, message: Option<Message>) -> Result<(), A2aError> {
        self.status(TaskState::Failed, message).await
    }

    /// Moves the task to REJECTED (terminal): the agent will not do it.
    pub async fn reject(&self, message: Option<Message>) -> Result<(), A2aError> {
        self.status(TaskState::Rejected, message).await
    }

    /// Moves the task to INPUT_REQUIRED: the turn ends, and the next message on the task
    /// starts another.
    pub async fn input_required(&self, message: Option<Message>) -> Result<(), A2aError> {
        self.status(TaskState::InputRequired, message).await
    }

    /// Moves the task to AUTH_REQUIRED: the turn ends until the caller has authenticated.
    pub async fn auth_required(&self, message: Option<Message>) -> Result<(), A2aError> {
        self.status(TaskState::AuthRequired, message).await
    }

    /// Moves the task to CANCELED (terminal).
    pub async fn cancel(&self) -> Result<(), A2aError> {
        self.status(TaskState::Canceled, None).await
    }

    /// Adds a whole artifact in one event (an artifact with the same id is replaced).
    pub async fn artifact(&self, artifact: Artifact) -> Result<(), A2aError> {
        self.artifact_chunk(artifact, Chunk::Whole).await
    }

    /// Sends one piece of an artifact streamed in several events; `chunk` says which
    /// (the event's `append` and `lastChunk`). The pieces of one artifact share its
    /// `artifactId`; each [`Chunk::More`] or [`Chunk::Last`] adds its parts to those
    /// already sent.
    pub async fn artifact_chunk(&self, artifact: Artifact, chunk: Chunk) -> Result<(), A2aError> {
        let (append, last_chunk) = match chunk {
            Chunk::Whole => (false, true),
            Chunk::First => (false, false),
            Chunk::More => (true, false),
            Chunk::Last => (true, true),
        };
        self.change(Change::Artifact { artifact, append, last_chunk }).await
    }

    /// A signal for the first update that leaves the task terminal or interrupted, with
    /// the task as that update left it: what a blocking `SendMessage` waits for and
    /// answers with, without following the task's event stream or reading the store.
    pub(crate) fn turn_end(&self) -> oneshot::Receiver<Arc<Task>> {
        let (tx, rx) = oneshot::channel();
        self.lock().turn_end = Some(tx);
        rx
    }

    /// Keeps what an update committed for the next one, or hands it to the request
    /// waiting for the end of the turn when the update ended it.
    fn settle(&self, mut known: Known) {
        let state = known.task.status.state;
        let mut p = self.lock();
        if crate::tasks::is_terminal(state) || crate::tasks::is_interrupted(state) {
            if let Some(tx) = p.turn_end.take() {
                match tx.send(known.task) {
                    // The waiter owns the task now; a later update reads the store.
                    Ok(()) => return,
                    Err(task) => known.task = task,
                }
            }
        }
        if p.known.as_ref().is_none_or(|k| k.version < known.version) {
            p.known = Some(known);
        }
    }

    /// Whether the first update happened (the task exists or a reply was sent).
    pub(crate) fn started(&self) -> bool {
        self.lock().first.is_none()
    }

    /// Reports a failure to the waiting request when nothing was sent yet.
    pub(crate) fn fail_before_start(&self, e: A2aError) -> bool {
        let sender = {
            let mut p = self.lock();
            p.create = None;
            p.first.take()
        };
        match sender {
            Some(tx) => {
                let _ = tx.send(First::Failed(e));
                true
            }
            None => false,
        }
    }

    async fn change(&self, change: Change) -> Result<(), A2aError> {
        let (create, first, writer, known) = {
            let mut p = self.lock();
            let writer = if p.turn.is_some() { Writer::Turn } else { Writer::Other };
            (p.create.take().map(|t| (t, p.push.take())), p.first.take(), writer, p.known.take())
        };
        // The first update creates the task and applies itself in the same commit; on a
        // follow-up to an existing task it is an ordinary update.
        let result = match create {
            Some((task, push)) => self.tasks.create_as(&self.key.tenant, task, push, writer, Some(&change)).await,
            None => self.tasks.apply_as(&self.key, change, writer, known).await,
        };
        match result {
            Ok((known, events)) => {
                if let Some(tx) = first {
                    let _ = tx.send(First::Task { seq: events.first().map(|e| e.seq).unwrap_or(0) });
                }
                self.settle(known);
                Ok(())
            }
            Err(e) => {
                let err: A2aError = e.into();
                if let Some(tx) = first {
                    let _ = tx.send(First::Failed(err.clone()));
                }
                Err(err)
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::Chunk;

    #[test]
    fn pieces_are_numbered_first_more_last_or_whole() {
        assert_eq!(Chunk::nth(0, 1), Chunk::Whole);
        assert_eq!(Chunk::nth(0, 0), Chunk::Whole);
        let three: Vec<Chunk> = (0..3).map(|i| Chunk::nth(i, 3)).collect();
        assert_eq!(three, [Chunk::First, Chunk::More, Chunk::Last]);
        assert_eq!(Chunk::nth(1, 2), Chunk::Last);
    }
}
