//! The agent's side: an [`AgentExecutor`] turns one incoming message into task updates
//! through a [`TaskUpdater`].
//!
//! The first thing the executor does decides the answer: [`TaskUpdater::reply`] answers
//! with a direct message and no task is stored; any other update creates the task
//! (state SUBMITTED, the user's message in its history) and then applies itself. After
//! that, every update is a durable event that subscribers and push receivers see, stored
//! when the executor next waits (see [`TaskUpdater`] for when exactly).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::errors::A2aError;
use crate::recovery::TurnGuard;
use crate::store::TaskKey;
use crate::tasks::{Change, Known, Tasks, Writer};
use crate::v1::{Artifact, Message, Part, PartContent, Role, Task, TaskState, TaskStatus};
use crate::Text;

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
    /// The text of the caller's message (its text parts, joined). A message with one
    /// text part gives that part's [`Text`] itself, shared, not copied.
    pub fn text(&self) -> Text {
        let mut texts = self.message.parts.iter().filter_map(|p| match &p.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        });
        match (texts.next(), texts.next()) {
            (None, _) => Text::default(),
            (Some(only), None) => only.clone(),
            (Some(first), Some(second)) => {
                let mut joined = format!("{first}{second}");
                texts.for_each(|t| joined.push_str(t));
                joined.into()
            }
        }
    }
}

/// Agent logic. `execute` runs once per incoming message.
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
    /// Updates made and not yet stored, in order (see [`TaskUpdater`]).
    pub(crate) held: Vec<Change>,
    /// The thread polling the executor right now, if any: updates made there are held.
    pub(crate) polled_on: Option<std::thread::ThreadId>,
    /// Why the commit of held updates failed, until an update or the turn's end says so.
    pub(crate) failed: Option<A2aError>,
}

impl Pending {
    /// What an execution starts with: `create` to create on its first update (none for a
    /// follow-up to `known`), told to `first`, holding `turn`'s lease.
    pub(crate) fn new(
        create: Option<Task>,
        push: Option<crate::store::PushConfigRecord>,
        first: oneshot::Sender<First>,
        known: Option<Known>,
        turn: Option<TurnGuard>,
    ) -> Pending {
        Pending {
            create,
            push,
            first: Some(first),
            turn_end: None,
            known,
            turn,
            held: Vec::new(),
            polled_on: None,
            failed: None,
        }
    }
}

/// The most updates held at once: the one that reaches it is stored with them, so an
/// executor that makes many without ever waiting (reading a channel that is never empty)
/// keeps neither them nor its subscribers waiting without bound.
pub const MAX_HELD: usize = 64;

/// Updates one task. Cheap to clone; all clones update the same task, and their updates
/// are stored in the order they are made.
///
/// **When an update is stored.** Updates the executor makes while it runs without
/// waiting are held, and stored together in one commit when it next waits (its future
/// returns pending: for a model's answer, a tool, a timer) or returns, with the first
/// update that ends the turn (a terminal or interrupted state), or when [`MAX_HELD`] are
/// held. Subscribers and push receivers see them then, in order; an agent that sends
/// WORKING, an artifact and COMPLETED in one go pays one commit, not three. An update
/// made from elsewhere (another task the executor spawned, [`AgentExecutor::cancel`]) is
/// stored before its call returns. [`TaskUpdater::flush`] stores what is held at once. A
/// held update that cannot be stored (the task was canceled meanwhile, the store failed)
/// is reported by the executor's next update, or fails the turn.
#[derive(Clone)]
pub struct TaskUpdater {
    tasks: Arc<Tasks>,
    key: TaskKey,
    context_id: String,
    pending: Arc<Mutex<Pending>>,
    /// Held while a commit of this execution is made, so that commits keep update order.
    writing: Arc<tokio::sync::Mutex<()>>,
}

impl TaskUpdater {
    pub(crate) fn new(tasks: Arc<Tasks>, key: TaskKey, context_id: String, start: Pending) -> Self {
        let writing = Arc::new(tokio::sync::Mutex::new(()));
        TaskUpdater { tasks, key, context_id, pending: Arc::new(Mutex::new(start)), writing }
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
    pub fn text(&self, text: impl Into<Text>) -> Message {
        self.agent_message(vec![Part::new(PartContent::Text(text.into()))])
    }

    /// Answers with a direct message and no task. Only valid as the first update.
    pub async fn reply(&self, mut message: Message) -> Result<(), A2aError> {
        let sender = {
            let mut p = self.lock();
            if p.create.is_none() || !p.held.is_empty() {
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
        if crate::tasks::state_ends_turn(state) {
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

    /// Applies `change`: held until the executor next waits when it is made while the
    /// turn's executor is being polled on this thread and does not end the turn, stored
    /// now otherwise (see [`TaskUpdater`]).
    async fn change(&self, change: Change) -> Result<(), A2aError> {
        let hold = {
            let mut p = self.lock();
            if let Some(e) = p.failed.take() {
                return Err(e);
            }
            let ends_turn = matches!(&change, Change::Status(status, _) if crate::tasks::state_ends_turn(status.state));
            p.held.push(change);
            !ends_turn && p.held.len() < MAX_HELD && p.polled_on == Some(std::thread::current().id())
        };
        if hold {
            return Ok(());
        }
        self.flush_boxed().await
    }

    /// [`flush`](Self::flush) with its state on the heap. A commit's state is kilobytes:
    /// held inline, it would make every update's future (and so the executor's) that
    /// large, copied whole at each `await` even when the update is only held.
    async fn flush_boxed(&self) -> Result<(), A2aError> {
        Box::pin(self.flush()).await
    }

    /// Stores the updates made so far and not yet stored, in one commit, and waits until
    /// it is durable. The server calls it when the executor waits and when it returns; an
    /// executor calls it when something outside the task must see an update before the
    /// executor's next wait. Reports the failure of an earlier held update's commit that
    /// no update has reported yet.
    pub async fn flush(&self) -> Result<(), A2aError> {
        // Commits of one execution are made one at a time, in the order of their updates.
        let _in_order = self.writing.lock().await;
        let (create, first, writer, known, changes) = {
            let mut p = self.lock();
            if let Some(e) = p.failed.take() {
                return Err(e);
            }
            if p.held.is_empty() {
                return Ok(());
            }
            let writer = if p.turn.is_some() { Writer::Turn } else { Writer::Other };
            let create = p.create.take().map(|t| (t, p.push.take()));
            (create, p.first.take(), writer, p.known.take(), std::mem::take(&mut p.held))
        };
        // The first updates create the task and apply themselves in the same commit; on a
        // follow-up to an existing task they are an ordinary update.
        let result = match create {
            Some((task, push)) => self.tasks.create_as(&self.key.tenant, task, push, writer, &changes).await,
            None => self.tasks.apply_as(&self.key, &changes, writer, known).await,
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

    /// Runs the executor's future `execute`: updates it makes while polled are held,
    /// and stored (in one commit) whenever it waits with some held, and when it returns.
    /// A held update whose commit fails is reported to the executor's next update, or
    /// as the outcome when it returned `Ok`.
    pub(crate) async fn run(&self, execute: impl Future<Output = Result<(), A2aError>>) -> Result<(), A2aError> {
        let mut execute = std::pin::pin!(execute);
        let mut flushing: Option<Pin<Box<dyn Future<Output = ()> + Send>>> = None;
        let outcome = std::future::poll_fn(|cx| {
            if flushing.as_mut().is_some_and(|flush| flush.as_mut().poll(cx).is_ready()) {
                flushing = None;
            }
            self.lock().polled_on = Some(std::thread::current().id());
            let polled = execute.as_mut().poll(cx);
            let held = {
                let mut p = self.lock();
                p.polled_on = None;
                !p.held.is_empty()
            };
            if polled.is_pending() && held && flushing.is_none() {
                let updater = self.clone();
                let mut flush: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(async move {
                    if let Err(e) = updater.flush().await {
                        updater.lock().failed.get_or_insert(e);
                    }
                });
                if flush.as_mut().poll(cx).is_pending() {
                    flushing = Some(flush);
                }
            }
            polled
        })
        .await;
        if let Some(flush) = flushing {
            flush.await;
        }
        let flushed = self.flush_boxed().await;
        outcome.and(flushed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::errors::ErrorKind;
    use crate::store::memory::{MemoryOptions, MemoryStore};
    use crate::stream::{EventHub, HubOptions};

    const BOUND: Duration = Duration::from_secs(10);

    /// An updater creating task `t1` on its first update, and what it tells of that update.
    fn updater() -> (TaskUpdater, oneshot::Receiver<First>) {
        let store = Arc::new(MemoryStore::new(MemoryOptions::default()));
        let tasks = Arc::new(Tasks::new(store, Arc::new(EventHub::new(HubOptions::default()))));
        let mut task = Task::new("t1", TaskStatus::new(TaskState::Submitted));
        task.context_id = "c1".into();
        let (first_tx, first_rx) = oneshot::channel();
        let start = Pending::new(Some(task), None, first_tx, None, None);
        (TaskUpdater::new(tasks, TaskKey::new("", "t1"), "c1".into(), start), first_rx)
    }

    /// The task's stored state and version, and the sequence numbers of its events.
    async fn stored(updater: &TaskUpdater) -> (TaskState, u64, Vec<u64>) {
        let store = updater.tasks.store();
        let record = store.get_task(&updater.key).await.unwrap().expect("the task is stored");
        let task = crate::tasks::task_of(&record.body).unwrap();
        let events = store.read_events(&updater.key, 0, 1000).await.unwrap().events;
        (task.status.state, record.version, events.iter().map(|e| e.seq).collect())
    }

    fn echo() -> Artifact {
        Artifact::new("echo", vec![Part::new(PartContent::Text("hi".into()))])
    }

    #[tokio::test]
    async fn updates_made_without_waiting_are_one_commit() {
        let (u, _first) = updater();
        let outcome = u
            .run(async {
                u.working(None).await?;
                u.artifact(echo()).await?;
                u.complete(None).await
            })
            .await;
        assert!(outcome.is_ok(), "{outcome:?}");
        // Created, WORKING, the artifact and COMPLETED: four events, one version.
        assert_eq!(stored(&u).await, (TaskState::Completed, 1, vec![1, 2, 3, 4]));
    }

    #[tokio::test]
    async fn an_executor_that_never_waits_has_its_updates_stored_every_max_held() {
        let (u, _first) = updater();
        let outcome = u
            .run(async {
                for i in 0..100 {
                    u.artifact_chunk(echo(), Chunk::nth(i, 100)).await?;
                }
                u.complete(None).await
            })
            .await;
        assert!(outcome.is_ok(), "{outcome:?}");
        // The 64th update is stored with the 63 before it; the rest end with the turn.
        let (state, version, events) = stored(&u).await;
        assert_eq!((state, version, events.len()), (TaskState::Completed, 2, 102));
    }

    #[tokio::test]
    async fn held_updates_are_stored_when_the_executor_waits() {
        let (u, mut first) = updater();
        let (go_tx, go_rx) = oneshot::channel::<()>();
        let run = u.run(async {
            u.working(None).await?;
            let _ = go_rx.await;
            u.artifact(echo()).await?;
            u.complete(None).await
        });
        let mut run = std::pin::pin!(run);
        // The task exists (the first update's signal follows its commit) while the
        // executor still waits.
        let first = tokio::time::timeout(BOUND, async {
            tokio::select! {
                first = &mut first => first,
                _ = &mut run => panic!("the executor ended while it waited"),
            }
        });
        assert!(matches!(first.await.unwrap(), Ok(First::Task { seq: 1 })));
        assert_eq!(stored(&u).await, (TaskState::Working, 1, vec![1, 2]));
        go_tx.send(()).unwrap();
        assert!(tokio::time::timeout(BOUND, run).await.unwrap().is_ok());
        assert_eq!(stored(&u).await, (TaskState::Completed, 2, vec![1, 2, 3, 4]));
    }

    #[tokio::test]
    async fn a_held_update_that_cannot_be_stored_is_reported_by_the_next_one() {
        let (u, first) = updater();
        let (go_tx, go_rx) = oneshot::channel::<()>();
        let (then_tx, then_rx) = oneshot::channel::<()>();
        let executor = u.clone();
        let run = tokio::spawn(async move {
            let u = &executor;
            u.run(async {
                u.working(None).await?;
                let _ = go_rx.await;
                // Held, and stored while the executor waits: the task was canceled
                // meanwhile, which that commit finds.
                u.artifact(echo()).await?;
                let _ = then_rx.await;
                u.complete(None).await
            })
            .await
        });
        assert!(matches!(tokio::time::timeout(BOUND, first).await.unwrap(), Ok(First::Task { .. })));
        let cancel = crate::tasks::Change::Status(TaskStatus::new(TaskState::Canceled), None);
        u.tasks.apply(&u.key, cancel).await.unwrap();
        go_tx.send(()).unwrap();
        tokio::time::timeout(BOUND, async {
            while u.lock().failed.is_none() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the held artifact's commit failed");
        then_tx.send(()).unwrap();
        let outcome = tokio::time::timeout(BOUND, run).await.unwrap().unwrap();
        assert_eq!(outcome.unwrap_err().kind, ErrorKind::UnsupportedOperation);
        // Canceled stays; the held artifact was refused, and the completion was not tried.
        assert_eq!(stored(&u).await, (TaskState::Canceled, 2, vec![1, 2, 3]));
        assert!(u.lock().failed.is_none(), "reported once");
    }

    #[tokio::test]
    async fn an_update_made_outside_the_executors_poll_is_stored_before_it_returns() {
        let (u, _first) = updater();
        let outcome = u
            .run(async {
                let other = u.clone();
                let seen = tokio::spawn(async move {
                    other.working(None).await?;
                    Ok::<_, A2aError>(stored(&other).await)
                });
                let seen = seen.await.unwrap()?;
                assert_eq!(seen, (TaskState::Working, 1, vec![1, 2]));
                u.complete(None).await
            })
            .await;
        assert!(outcome.is_ok(), "{outcome:?}");
        assert_eq!(stored(&u).await, (TaskState::Completed, 2, vec![1, 2, 3]));
    }

    #[tokio::test]
    async fn flush_stores_what_is_held_at_once() {
        let (u, _first) = updater();
        let outcome = u
            .run(async {
                u.working(None).await?;
                u.flush().await?;
                assert_eq!(stored(&u).await, (TaskState::Working, 1, vec![1, 2]));
                u.complete(None).await
            })
            .await;
        assert!(outcome.is_ok(), "{outcome:?}");
        assert_eq!(stored(&u).await, (TaskState::Completed, 2, vec![1, 2, 3]));
    }

    #[tokio::test]
    async fn a_direct_reply_after_a_held_update_is_refused() {
        let (u, _first) = updater();
        let outcome = u
            .run(async {
                u.working(None).await?;
                u.reply(u.text("too late")).await
            })
            .await;
        assert_eq!(outcome.unwrap_err().kind, ErrorKind::InvalidAgentResponse);
        // The held update is stored all the same.
        assert_eq!(stored(&u).await, (TaskState::Working, 1, vec![1, 2]));
    }

    #[test]
    fn pieces_are_numbered_first_more_last_or_whole() {
        assert_eq!(Chunk::nth(0, 1), Chunk::Whole);
        assert_eq!(Chunk::nth(0, 0), Chunk::Whole);
        let three: Vec<Chunk> = (0..3).map(|i| Chunk::nth(i, 3)).collect();
        assert_eq!(three, [Chunk::First, Chunk::More, Chunk::Last]);
        assert_eq!(Chunk::nth(1, 2), Chunk::Last);
    }
}
