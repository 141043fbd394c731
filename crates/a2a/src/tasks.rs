//! Tasks: the state machine, and every change to a task as one store commit that also
//! appends its events, queues their push deliveries and wakes live subscribers.
//!
//! Nothing leaves a terminal state: a change to a terminal task is refused, whoever
//! makes it (the executor, a cancel, another server process). Writers never lock: each
//! change reads the task, applies itself and commits against the version it read; on a
//! conflict it reads again and re-applies, so concurrent writers (an executor and a
//! cancel, or two processes on one database) serialise through the store.
//!
//! Each commit also decides the task's turn lease (`crate::recovery`): a commit made by a
//! running turn that leaves the task SUBMITTED or WORKING sets this replica's lease, any
//! commit that leaves it in another state clears it, and other commits keep it.

use std::sync::Arc;

use agentproto_codec::decode_slice;

use crate::errors::{A2aError, ErrorKind};
use crate::recovery::{Leases, RecoveryOptions};
use crate::store::{
    Commit, EventBody, EventRecord, LeaseChange, PushConfigRecord, Store, StoreError, TaskBody, TaskKey, TaskRecord,
};
use crate::stream::{EventBus, EventHub};
use crate::v1::{
    Artifact, Message, Part, PartContent, Role, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use crate::Timestamp;

/// Completed, failed, canceled and rejected tasks never change again.
pub fn is_terminal(s: TaskState) -> bool {
    matches!(s, TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected)
}

/// Input-required and auth-required tasks wait for the client.
pub fn is_interrupted(s: TaskState) -> bool {
    matches!(s, TaskState::InputRequired | TaskState::AuthRequired)
}

/// Submitted and working tasks have a turn running (or lost: see `crate::recovery`).
pub fn is_active(s: TaskState) -> bool {
    matches!(s, TaskState::Submitted | TaskState::Working)
}

/// Terminal and interrupted states end a turn: the executor has nothing more to do until
/// the client writes again.
pub fn state_ends_turn(s: TaskState) -> bool {
    is_terminal(s) || is_interrupted(s)
}

/// Whether an event ends a turn: a terminal or interrupted status (or the task in such
/// a state). A `SendMessage` waits for it and a streamed send closes after it.
pub fn ends_turn(body: &[u8]) -> bool {
    decode_slice::<StreamResponse>(body, "$").is_ok_and(|d| response_ends_turn(&d.value))
}

/// [`ends_turn`] of a logged event, without decoding one that is still decoded.
pub(crate) fn event_ends_turn(body: &EventBody) -> bool {
    event_of(body).is_some_and(|event| response_ends_turn(&event))
}

/// The event a logged body holds: shared when it is still decoded, decoded here
/// otherwise (`None` for bytes that are not a `StreamResponse`).
pub(crate) fn event_of(body: &EventBody) -> Option<Arc<StreamResponse>> {
    match body.decoded() {
        Some(event) => Some(event.clone()),
        None => decode_slice::<StreamResponse>(&body.bytes().ok()?, "$").ok().map(|d| Arc::new(d.value)),
    }
}

fn response_ends_turn(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::StatusUpdate(u) => state_ends_turn(u.status.state),
        StreamResponse::Task(t) => state_ends_turn(t.status.state),
        StreamResponse::Message(_) => true,
        StreamResponse::ArtifactUpdate(_) => false,
    }
}

/// A change to apply to a task.
#[derive(Debug, Clone)]
pub enum Change {
    /// A new status; its message (if any) joins the history.
    Status(TaskStatus, Option<crate::v1::RawObject>),
    /// An artifact, or a chunk appended to an artifact with the same id.
    Artifact {
        /// The artifact, or the piece of it.
        artifact: Artifact,
        /// Adds the parts to the artifact with the same id instead of replacing it.
        append: bool,
        /// This piece is the artifact's last (the event's `lastChunk`).
        last_chunk: bool,
    },
    /// A message joins the history without an event (the client's follow-ups).
    History(Message),
}

/// Why a change was refused.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// Nothing leaves a terminal state; the task id.
    #[error("task {0} is in a terminal state")]
    Terminal(String),
    /// The store failed or refused the commit.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored task that does not decode (or a value that does not encode).
    #[error("stored task does not decode: {0}")]
    Corrupt(String),
}

impl From<ChangeError> for A2aError {
    fn from(e: ChangeError) -> Self {
        match e {
            ChangeError::Terminal(id) => A2aError::new(ErrorKind::UnsupportedOperation)
                .with_message(format!("task {id} is in a terminal state"))
                .with("taskId", id),
            ChangeError::Store(s) => s.into(),
            ChangeError::Corrupt(m) => A2aError::new(ErrorKind::Internal).with_message(m),
        }
    }
}

/// The task half of a server: store, live hub, push wake-up and this replica's turn
/// leases.
pub struct Tasks {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) hub: Arc<EventHub>,
    pub(crate) on_push: Option<Arc<dyn Fn() + Send + Sync>>,
    pub(crate) push_enabled: bool,
    pub(crate) leases: Arc<Leases>,
}

/// A task as this process last committed it, and the version that commit gave it. A
/// writer holding one (a running turn) applies its next change to it instead of reading
/// and decoding the stored task again; if someone else committed in between, the commit
/// loses to a conflict and the change is applied to the stored task instead.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    pub(crate) task: Arc<Task>,
    pub(crate) version: u64,
}

/// Who makes a change, which decides what it does to the turn lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writer {
    /// A running turn of this replica.
    Turn,
    /// Anyone else (a cancel without a running turn, a client's follow-up message).
    Other,
}

/// What sweeping one expired lease did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Swept {
    /// The task was SUBMITTED or WORKING: it is FAILED now. `owner` held the lease.
    Failed { owner: String },
    /// The task was in another state: only its lease was removed.
    Cleared,
    /// The lease was renewed, released or swept by someone else first.
    Live,
}

/// How many times a change is re-applied after losing a race before giving up.
const MAX_RETRIES: usize = 64;

impl Tasks {
    /// Tasks on `store` and `hub`, with leases of a fresh replica id (see
    /// [`RecoveryOptions::default`]); nothing renews them unless the server does.
    pub fn new(store: Arc<dyn Store>, hub: Arc<EventHub>) -> Self {
        let leases = Leases::new(store.clone(), &RecoveryOptions::default(), Default::default());
        Tasks { store, hub, on_push: None, push_enabled: false, leases: Arc::new(leases) }
    }

    /// This replica's turn leases.
    pub fn leases(&self) -> &Arc<Leases> {
        &self.leases
    }

    /// The store tasks are committed to.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The hub live subscribers listen on.
    pub fn hub(&self) -> &Arc<EventHub> {
        &self.hub
    }

    /// Reads a task as stored, without decoding it.
    pub async fn get_record(&self, key: &TaskKey) -> Result<Option<TaskRecord>, ChangeError> {
        Ok(self.store.get_task(key).await?)
    }

    /// Reads and decodes a task.
    pub async fn get(&self, key: &TaskKey) -> Result<Option<(Task, TaskRecord)>, ChangeError> {
        Ok(self.get_shared(key).await?.map(|(task, rec)| (Arc::unwrap_or_clone(task), rec)))
    }

    /// Reads a task, decoded unless the store holds it decoded (then it is shared).
    pub(crate) async fn get_shared(&self, key: &TaskKey) -> Result<Option<(Arc<Task>, TaskRecord)>, ChangeError> {
        match self.store.get_task(key).await? {
            None => Ok(None),
            Some(rec) => Ok(Some((task_of(&rec.body)?, rec))),
        }
    }

    /// Stores a new task and its first event (the task itself). A push config given with
    /// the task is stored between the two, so that its receiver gets that first event too.
    pub async fn create(
        &self,
        tenant: &str,
        task: Task,
        push: Option<PushConfigRecord>,
    ) -> Result<(TaskRecord, Vec<EventRecord>), ChangeError> {
        let key = TaskKey::new(tenant, task.id.clone());
        let (known, events) = self.create_as(tenant, task, push, Writer::Other, &[]).await?;
        Ok((TaskRecord { version: known.version, ..record(&key, known.task) }, events))
    }

    /// [`Tasks::create`] by `writer`, with `then`, the first changes, applied in the same
    /// commit: their events follow the task's first one in the log. Nobody can tell the
    /// commits apart from one (the task's id is unknown outside until the commit is
    /// made), and a turn's first updates cost no commit of their own.
    pub(crate) async fn create_as(
        &self,
        tenant: &str,
        mut task: Task,
        push: Option<PushConfigRecord>,
        writer: Writer,
        then: &[Change],
    ) -> Result<(Known, Vec<EventRecord>), ChangeError> {
        let key = TaskKey::new(tenant, task.id.clone());
        let first = StreamResponse::Task(task.clone());
        let mut events = vec![(EventBody::from_event(first), is_terminal(task.status.state))];
        apply_all(&mut task, then, &mut events)?;
        let task = Arc::new(task);
        let rec = record(&key, task.clone());
        let lease = self.lease_change(writer, task.status.state);
        let mut expected_version = None;
        if let Some(config) = push {
            let empty = Commit {
                task: rec.clone(),
                expected_version: None,
                events: Vec::new(),
                push: false,
                lease: lease.clone(),
            };
            expected_version = Some(self.store.commit(empty).await?.version);
            self.store.put_push_config(config).await?;
        }
        let committed = self
            .store
            .commit(Commit { task: rec, expected_version, events, push: self.push_enabled, lease: lease.clone() })
            .await?;
        self.leases.committed(&key, &lease);
        self.after_commit(&key, &committed.events);
        Ok((Known { task, version: committed.version }, committed.events))
    }

    /// Applies a change; returns the new task and the events it produced.
    pub async fn apply(&self, key: &TaskKey, change: Change) -> Result<(Task, Vec<EventRecord>), ChangeError> {
        let (known, events) = self.apply_as(key, &[change], Writer::Other, None).await?;
        Ok((Arc::unwrap_or_clone(known.task), events))
    }

    /// Applies changes, in order and in one commit, to `known` when given (the task as
    /// this writer last committed it), otherwise to the task as stored. A stale `known`
    /// loses the commit to a conflict, and the changes are applied again to the stored
    /// task.
    pub(crate) async fn apply_as(
        &self,
        key: &TaskKey,
        changes: &[Change],
        writer: Writer,
        mut known: Option<Known>,
    ) -> Result<(Known, Vec<EventRecord>), ChangeError> {
        for _ in 0..MAX_RETRIES {
            let Known { mut task, version } = match known.take() {
                Some(known) => known,
                None => match self.get_shared(key).await? {
                    Some((task, rec)) => Known { task, version: rec.version },
                    None => return Err(StoreError::NotFound(key.clone()).into()),
                },
            };
            // Refused before the copy-on-write below copies a task held elsewhere.
            if !changes.is_empty() && is_terminal(task.status.state) {
                return Err(ChangeError::Terminal(task.id.clone()));
            }
            let mut events = Vec::with_capacity(changes.len());
            apply_all(Arc::make_mut(&mut task), changes, &mut events)?;
            let new_rec = record(key, task.clone());
            let lease = self.lease_change(writer, task.status.state);
            let commit = Commit {
                task: new_rec,
                expected_version: Some(version),
                events,
                push: self.push_enabled,
                lease: lease.clone(),
            };
            match self.store.commit(commit).await {
                Ok(committed) => {
                    self.leases.committed(key, &lease);
                    self.after_commit(key, &committed.events);
                    return Ok((Known { task, version: committed.version }, committed.events));
                }
                Err(StoreError::Conflict { .. }) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(ChangeError::Store(StoreError::Backend(format!("task {}: too many concurrent writers", key.id))))
    }

    fn lease_change(&self, writer: Writer, state: TaskState) -> LeaseChange {
        match writer {
            _ if !is_active(state) => LeaseChange::Clear,
            Writer::Turn => LeaseChange::Set(self.leases.lease()),
            Writer::Other => LeaseChange::Keep,
        }
    }

    /// Ends the turn of a task whose lease expired before `now_ms`: a SUBMITTED or WORKING
    /// task becomes FAILED, with a final event; any other task only loses its lease. The
    /// commit is conditional on the lease still being expired (see `crate::recovery`).
    pub(crate) async fn sweep_orphan(&self, key: &TaskKey, now_ms: i64) -> Result<Swept, ChangeError> {
        for _ in 0..MAX_RETRIES {
            let Some(rec) = self.store.get_task(key).await? else { return Ok(Swept::Live) };
            let Some(lease) = rec.lease.clone().filter(|lease| lease.until_ms < now_ms) else {
                return Ok(Swept::Live);
            };
            let expired = LeaseChange::ClearExpired(now_ms);
            let mut task = match task_of(&rec.body) {
                Ok(task) if is_active(task.status.state) => Arc::unwrap_or_clone(task),
                // Nothing to end (or a body that does not decode, which no status can be
                // written into): the lease goes, and the task stays as it is.
                _ => {
                    let version = rec.version;
                    let clear = Commit {
                        task: rec,
                        expected_version: Some(version),
                        events: Vec::new(),
                        push: false,
                        lease: expired,
                    };
                    match self.store.commit(clear).await {
                        Ok(_) => return Ok(Swept::Cleared),
                        Err(StoreError::Conflict { .. }) => continue,
                        Err(StoreError::LeaseLive(_)) => return Ok(Swept::Live),
                        Err(e) => return Err(e.into()),
                    }
                }
            };
            let change = interrupted(&task, &lease);
            let event = apply_change(&mut task, &change);
            let events = event.map(|ev| (EventBody::from_event(ev), true)).into_iter().collect();
            let commit = Commit {
                task: record(key, Arc::new(task)),
                expected_version: Some(rec.version),
                events,
                push: self.push_enabled,
                lease: expired.clone(),
            };
            match self.store.commit(commit).await {
                Ok(committed) => {
                    self.leases.committed(key, &expired);
                    self.after_commit(key, &committed.events);
                    return Ok(Swept::Failed { owner: lease.owner });
                }
                Err(StoreError::Conflict { .. }) => continue,
                Err(StoreError::LeaseLive(_)) => return Ok(Swept::Live),
                Err(e) => return Err(e.into()),
            }
        }
        Err(ChangeError::Store(StoreError::Backend(format!("task {}: too many concurrent writers", key.id))))
    }

    fn after_commit(&self, key: &TaskKey, events: &[EventRecord]) {
        if events.is_empty() {
            return;
        }
        self.hub.publish(key, events);
        if self.push_enabled {
            if let Some(wake) = &self.on_push {
                wake();
            }
        }
    }
}

/// Applies `changes` to `task` in order, adding their events to `events`; refused when the
/// task is terminal before one of them.
fn apply_all(task: &mut Task, changes: &[Change], events: &mut Vec<(EventBody, bool)>) -> Result<(), ChangeError> {
    for change in changes {
        if is_terminal(task.status.state) {
            return Err(ChangeError::Terminal(task.id.clone()));
        }
        if let Some(event) = apply_change(task, change) {
            events.push(log_entry(event));
        }
    }
    Ok(())
}

/// The FAILED status that ends a turn lost with its replica.
fn interrupted(task: &Task, lease: &crate::store::TurnLease) -> Change {
    let text = "The turn working on this task was interrupted: the server running it stopped (a restart, or a \
                lost replica) before it finished. Turns are not run again; send the request again to start a new \
                task.";
    let mut message =
        Message::new(uuid::Uuid::new_v4().to_string(), Role::Agent, vec![Part::new(PartContent::Text(text.into()))]);
    message.context_id = task.context_id.clone();
    message.task_id = task.id.clone();
    let mut status = TaskStatus::new(TaskState::Failed);
    status.message = Some(message);
    let metadata = serde_json::json!({
        "agentproto": {"interrupted": {"replica": lease.owner, "leaseUntilMs": lease.until_ms}}
    });
    Change::Status(status, crate::v1::RawObject::from_value(&metadata).ok())
}

/// Applies `change` to `task`; returns the event it produces.
pub fn apply_change(task: &mut Task, change: &Change) -> Option<StreamResponse> {
    match change {
        Change::Status(status, metadata) => {
            let mut status = status.clone();
            if status.timestamp.is_none() {
                status.timestamp = Some(Timestamp::from_millis(Timestamp::now().as_millis()));
            }
            if let Some(m) = &status.message {
                task.history.push(m.clone());
            }
            task.status = status.clone();
            let mut ev = TaskStatusUpdateEvent::new(task.id.clone(), task.context_id.clone(), status);
            ev.metadata = metadata.clone();
            Some(StreamResponse::StatusUpdate(ev))
        }
        Change::Artifact { artifact, append, last_chunk } => {
            match task.artifacts.iter_mut().find(|a| a.artifact_id == artifact.artifact_id) {
                Some(existing) if *append => existing.parts.extend(artifact.parts.iter().cloned()),
                Some(existing) => *existing = artifact.clone(),
                None => task.artifacts.push(artifact.clone()),
            }
            let mut ev = TaskArtifactUpdateEvent::new(task.id.clone(), task.context_id.clone(), artifact.clone());
            ev.append = *append;
            ev.last_chunk = *last_chunk;
            Some(StreamResponse::ArtifactUpdate(ev))
        }
        Change::History(m) => {
            task.history.push(m.clone());
            None
        }
    }
}

/// The store record of a task (its body is the task itself: a store that needs bytes
/// encodes it, see [`TaskBody`]).
pub fn record(key: &TaskKey, task: Arc<Task>) -> TaskRecord {
    TaskRecord {
        key: key.clone(),
        context_id: task.context_id.clone(),
        state: task.status.state.as_str().to_owned(),
        terminal: is_terminal(task.status.state),
        status_ts_ms: task.status.timestamp.map(|t| t.as_millis()).unwrap_or(0),
        version: 0,
        body: TaskBody::from_task(task),
        lease: None,
    }
}

/// The task a stored body holds: shared when the store kept it decoded, decoded here
/// otherwise.
pub fn task_of(body: &TaskBody) -> Result<Arc<Task>, ChangeError> {
    match body.decoded() {
        Some(task) => Ok(task.clone()),
        None => Ok(Arc::new(decode_task(&body.bytes()?)?)),
    }
}

/// `{"task":<task>}`, the `StreamResponse` (and `SendMessageResponse`) of a whole task:
/// the same bytes as encoding `StreamResponse::Task`, without building one around the
/// task (whose history may hold megabytes of text).
pub fn task_event(task: &Task) -> Result<Vec<u8>, ChangeError> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"task":"#);
    serde_json::to_writer(&mut out, task).map_err(|e| ChangeError::Corrupt(e.to_string()))?;
    out.push(b'}');
    Ok(out)
}

/// An event as the log holds it (decoded: a store encodes it if it must), and whether it
/// is the log's last. The log ends at a terminal state only: an interrupted task goes on
/// (a follow-up message, a cancel), and its subscribers with it.
fn log_entry(event: StreamResponse) -> (EventBody, bool) {
    let last = matches!(&event, StreamResponse::StatusUpdate(u) if is_terminal(u.status.state));
    (EventBody::from_event(event), last)
}

/// The task with at most `history_length` recent messages (as [`view`] with all
/// artifacts), copied only when messages must go and someone else still holds it.
pub(crate) fn viewed(task: Arc<Task>, history_length: Option<i32>) -> Arc<Task> {
    let keep = match history_length {
        Some(n) if task.history.len() > n.max(0) as usize => n.max(0) as usize,
        _ => return task,
    };
    match Arc::try_unwrap(task) {
        Ok(task) => Arc::new(view(task, history_length, true)),
        // Shared: only the messages shown are copied.
        Err(task) => Arc::new(Task {
            id: task.id.clone(),
            context_id: task.context_id.clone(),
            status: task.status.clone(),
            artifacts: task.artifacts.clone(),
            history: task.history[task.history.len() - keep..].to_vec(),
            metadata: task.metadata.clone(),
        }),
    }
}

/// Decodes a stored task's ProtoJSON bytes.
pub fn decode_task(body: &[u8]) -> Result<Task, ChangeError> {
    decode_slice::<Task>(body, "$").map(|d| d.value).map_err(|e| ChangeError::Corrupt(e.to_string()))
}

/// Encodes a protocol value as ProtoJSON bytes.
pub fn encode<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, ChangeError> {
    serde_json::to_vec(v).map_err(|e| ChangeError::Corrupt(e.to_string()))
}

/// The task as a caller asked to see it: at most `history_length` recent messages
/// (none for 0, all when unset) and, unless `artifacts`, no artifacts.
pub(crate) fn view(mut task: Task, history_length: Option<i32>, artifacts: bool) -> Task {
    if let Some(n) = history_length {
        let n = n.max(0) as usize;
        let len = task.history.len();
        if len > n {
            task.history.drain(..len - n);
        }
    }
    if !artifacts {
        task.artifacts.clear();
    }
    task
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::{MemoryOptions, MemoryStore};
    use crate::stream::{EventHub, HubOptions};
    use crate::v1::{Part, PartContent, Role};

    fn tasks() -> Tasks {
        Tasks::new(Arc::new(MemoryStore::new(MemoryOptions::default())), Arc::new(EventHub::new(HubOptions::default())))
    }

    fn new_task(id: &str) -> Task {
        let mut t = Task::new(id, TaskStatus::new(TaskState::Submitted));
        t.context_id = "c".into();
        t
    }

    #[test]
    fn a_task_event_is_the_encoding_of_stream_response_task() {
        let mut task = new_task("t1");
        task.history.push(crate::v1::Message::new(
            "m1",
            Role::User,
            vec![Part::new(PartContent::Text("hi \u{1F600}".into()))],
        ));
        assert_eq!(task_event(&task).unwrap(), encode(&StreamResponse::Task(task)).unwrap());
    }

    #[test]
    fn a_viewed_task_event_is_the_encoding_of_the_viewed_response() {
        let mut task = new_task("t1");
        for i in 0..3 {
            let text = format!("message {i} \u{1F600}");
            task.history.push(Message::new(
                format!("m{i}"),
                Role::User,
                vec![Part::new(PartContent::Text(text.into()))],
            ));
        }
        task.artifacts.push(Artifact::new("a", vec![Part::new(PartContent::Text("x".into()))]));
        for history in [None, Some(-1), Some(0), Some(2), Some(3), Some(9)] {
            let expected = encode(&crate::v1::SendMessageResponse::Task(view(task.clone(), history, true))).unwrap();
            assert_eq!(task_event(&viewed(Arc::new(task.clone()), history)).unwrap(), expected, "{history:?}");
            let shared = Arc::new(task.clone());
            let _other = shared.clone();
            assert_eq!(task_event(&viewed(shared, history)).unwrap(), expected, "{history:?}, shared");
        }
    }

    #[tokio::test]
    async fn a_first_change_made_with_the_creation_is_one_commit_with_both_events() {
        let t = tasks();
        let key = TaskKey::new("", "t1");
        let working = Change::Status(TaskStatus::new(TaskState::Working), None);
        let (known, events) =
            t.create_as("", new_task("t1"), None, Writer::Turn, std::slice::from_ref(&working)).await.unwrap();
        assert_eq!((known.version, known.task.status.state), (1, TaskState::Working));
        assert_eq!(events.iter().map(|e| (e.seq, e.last)).collect::<Vec<_>>(), [(1, false), (2, false)]);
        // The first event is the task as created, the second the change.
        let first = decode_slice::<StreamResponse>(&events[0].body.bytes().unwrap(), "$").unwrap().value;
        assert!(matches!(first, StreamResponse::Task(ref task) if task.status.state == TaskState::Submitted));
        let second = decode_slice::<StreamResponse>(&events[1].body.bytes().unwrap(), "$").unwrap().value;
        assert!(matches!(second, StreamResponse::StatusUpdate(ref u) if u.status.state == TaskState::Working));
        let (stored, rec) = t.get(&key).await.unwrap().unwrap();
        assert_eq!((rec.version, &stored), (1, &*known.task));
        // A first change that ends the task ends the log too.
        let done = Change::Status(TaskStatus::new(TaskState::Completed), None);
        let (_, events) =
            t.create_as("", new_task("t2"), None, Writer::Turn, std::slice::from_ref(&done)).await.unwrap();
        assert_eq!(events.iter().map(|e| e.last).collect::<Vec<_>>(), [false, true]);
    }

    #[tokio::test]
    async fn a_change_to_a_stale_known_task_is_applied_again_to_the_stored_one() {
        let t = tasks();
        let key = TaskKey::new("", "t1");
        let (known, _) = t.create_as("", new_task("t1"), None, Writer::Turn, &[]).await.unwrap();
        // Someone else writes in between: what the turn knows is one version behind.
        let m = Message::new("m", Role::User, vec![Part::new(PartContent::Text("follow-up".into()))]);
        t.apply(&key, Change::History(m)).await.unwrap();
        let working = Change::Status(TaskStatus::new(TaskState::Working), None);
        let (now, events) = t.apply_as(&key, &[working], Writer::Turn, Some(known.clone())).await.unwrap();
        assert_eq!((now.version, now.task.history.len(), events[0].seq), (3, 1, 2));
        assert_eq!(now.task.status.state, TaskState::Working);
        let (stored, rec) = t.get(&key).await.unwrap().unwrap();
        assert_eq!((rec.version, &stored), (3, &*now.task));
        // A known task that is current is used as it is, and the store agrees with it.
        let done = Change::Status(TaskStatus::new(TaskState::Completed), None);
        let (after, _) = t.apply_as(&key, &[done], Writer::Turn, Some(now)).await.unwrap();
        assert_eq!(after.version, 4);
        assert_eq!(t.get(&key).await.unwrap().unwrap().0, *after.task);
        // A stale known task that is not terminal cannot bring a terminal one back.
        let again = Change::Status(TaskStatus::new(TaskState::Working), None);
        assert!(matches!(t.apply_as(&key, &[again], Writer::Turn, Some(known)).await, Err(ChangeError::Terminal(_))));
    }

    #[tokio::test]
    async fn nothing_leaves_a_terminal_state() {
        let t = tasks();
        let key = TaskKey::new("", "t1");
        t.create("", new_task("t1"), None).await.unwrap();
        t.apply(&key, Change::Status(TaskStatus::new(TaskState::Working), None)).await.unwrap();
        let (task, events) = t.apply(&key, Change::Status(TaskStatus::new(TaskState::Completed), None)).await.unwrap();
        assert_eq!(task.status.state, TaskState::Completed);
        assert!(events[0].last);
        assert!(ends_turn(&events[0].body.bytes().unwrap()));
        for s in [TaskState::Working, TaskState::Canceled, TaskState::Completed] {
            assert!(matches!(
                t.apply(&key, Change::Status(TaskStatus::new(s), None)).await,
                Err(ChangeError::Terminal(_))
            ));
        }
        let art = Artifact::new("a", vec![Part::new(PartContent::Text("x".into()))]);
        assert!(matches!(
            t.apply(&key, Change::Artifact { artifact: art, append: false, last_chunk: true }).await,
            Err(ChangeError::Terminal(_))
        ));
    }

    #[tokio::test]
    async fn appended_chunks_extend_the_artifact_and_events_are_numbered() {
        let t = tasks();
        let key = TaskKey::new("", "t2");
        let (_, first) = t.create("", new_task("t2"), None).await.unwrap();
        let chunk = |s: &str| Artifact::new("a", vec![Part::new(PartContent::Text(s.into()))]);
        let (_, e1) = t
            .apply(&key, Change::Artifact { artifact: chunk("one "), append: false, last_chunk: false })
            .await
            .unwrap();
        let (task, e2) =
            t.apply(&key, Change::Artifact { artifact: chunk("two"), append: true, last_chunk: true }).await.unwrap();
        assert_eq!(task.artifacts.len(), 1);
        assert_eq!(task.artifacts[0].parts.len(), 2);
        assert_eq!((first[0].seq, e1[0].seq, e2[0].seq), (1, 2, 3));
        let m = Message::new("m", Role::User, vec![Part::new(PartContent::Text("hi".into()))]);
        let (task, none) = t.apply(&key, Change::History(m)).await.unwrap();
        assert!(none.is_empty());
        assert_eq!(task.history.len(), 1);
        assert_eq!(view(task.clone(), Some(0), false).history.len(), 0);
        assert!(view(task, None, false).artifacts.is_empty());
    }
}
