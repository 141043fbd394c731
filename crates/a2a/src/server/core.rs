//! The binding-neutral server: one decoded request in, one answer (a value or a stream
//! of events) out. The JSON-RPC and HTTP+JSON bindings only translate to and from it.

// Task-keyed maps on the request path hash with foldhash (randomly seeded, much
// cheaper than SipHash for short string keys).
use foldhash::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::replicas::Replicas;
use super::turn::{unwinding, Turn};
use crate::errors::{A2aError, ErrorKind};
use crate::executor::{AgentExecutor, First, Pending, RequestContext, TaskUpdater};
use crate::push::SsrfGuard;
use crate::store::{BoxFuture, EventRecord, IdempotencyClaim, ListQuery, TaskKey};
use crate::stream::{StreamItem, Subscription};
use crate::tasks::{
    encode, event_ends_turn, event_of, is_terminal, task_answer, task_of, view, viewed, Change, Known, Tasks, Writer,
};
use crate::v1::{
    AgentCard, GetTaskRequest, ListTasksRequest, ListTasksResponse, Request, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task, TaskState, TaskStatus,
};

/// Who is calling and on whose behalf, as the binding and the authenticator found it.
/// Fields may be added: build one from `CallContext::default()`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CallContext {
    /// The tenant every key of this call is scoped to (`""`: the default tenant).
    pub tenant: String,
    /// The authenticated principal, if any.
    pub principal: Option<crate::server::auth::Principal>,
    /// `Last-Event-ID` of a subscription (the sequence number of the last event seen).
    pub last_event_id: Option<u64>,
    /// The `Idempotency-Key` header of a SendMessage.
    pub idempotency_key: Option<String>,
    /// Extensions activated through `A2A-Extensions`.
    pub extensions: Vec<String>,
}

/// One item of a streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamOut {
    /// An event; `seq` is its place in the task's log (`None` for a direct message).
    Event {
        /// The event's sequence number (the SSE `id:`), if it has one.
        seq: Option<u64>,
        /// The `StreamResponse` ProtoJSON bytes.
        body: Bytes,
    },
    /// Events after `after` up to `resumed_at` are no longer in the log.
    Gap {
        /// The last sequence number the reader had.
        after: u64,
        /// The first one still held, where the stream goes on.
        resumed_at: u64,
    },
    /// The stream was cut off because its reader fell behind; resume with the last id.
    Lagged,
    /// An error after the stream started.
    Error(A2aError),
}

/// A streamed answer: items until the task's last event, an error, or a cut.
pub type EventStream = Pin<Box<dyn Stream<Item = StreamOut> + Send>>;

/// An operation's answer.
pub enum Answer {
    /// The response message's ProtoJSON bytes.
    Value(Vec<u8>),
    /// The events of a streaming operation.
    Stream(EventStream),
}

/// Options of the protocol core.
#[derive(Clone)]
pub struct CoreOptions {
    /// The public agent card.
    pub card: AgentCard,
    /// The card served to authenticated callers by `GetExtendedAgentCard`, if any.
    pub extended_card: Option<AgentCard>,
    /// Media types the agent accepts in `raw`/`url` parts (`None`: anything). A part
    /// whose `mediaType` is not in the list is refused with ContentTypeNotSupported.
    pub accepted_media_types: Option<Vec<String>>,
    /// Largest serialized `metadata` object accepted in a request, in bytes.
    pub max_metadata_bytes: usize,
    /// Answer every `SendMessage` as if `returnImmediately` were set (A2A 0.3's default;
    /// a2a-tck revisions from before 1.0 expect it). Off: 1.0 semantics, a send waits.
    pub return_immediately_by_default: bool,
    /// The SSRF guard push URLs are checked against when a config is set (the one the
    /// push worker delivers with), so that a config it would refuse is refused at once.
    pub push_guard: SsrfGuard,
    /// How long that check may wait for DNS; a name that does not resolve in time is
    /// accepted (the worker checks again at every delivery).
    pub push_resolve_timeout: std::time::Duration,
    /// Checks run on every call, in order, once its operation and caller are known.
    pub interceptors: Vec<Arc<dyn crate::server::layers::Interceptor>>,
}

/// The binding-neutral server: runs the eleven operations for an executor `E` on a
/// task layer. Bindings decode requests into [`Request`] values and call
/// [`Core::handle`].
pub struct Core<E> {
    pub(crate) executor: Arc<E>,
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) options: CoreOptions,
    running: Mutex<HashMap<TaskKey, Running>>,
    pub(crate) shutdown: CancellationToken,
    /// The other server processes on the same database, when there are any to reach.
    pub(crate) replicas: Option<Arc<Replicas>>,
}

pub(crate) struct Running {
    pub(crate) cancel: CancellationToken,
    pub(crate) updater: TaskUpdater,
}

impl<E: AgentExecutor> Core<E> {
    /// A core for one process; `shutdown` cancels its running executions. Most servers
    /// are built with [`crate::server::A2aServer::builder`] instead, which also starts the
    /// background work.
    pub fn new(executor: Arc<E>, tasks: Arc<Tasks>, options: CoreOptions, shutdown: CancellationToken) -> Arc<Self> {
        Self::with_replicas(executor, tasks, options, shutdown, None)
    }

    pub(crate) fn with_replicas(
        executor: Arc<E>,
        tasks: Arc<Tasks>,
        options: CoreOptions,
        shutdown: CancellationToken,
        replicas: Option<Arc<Replicas>>,
    ) -> Arc<Self> {
        Arc::new(Core { executor, tasks, options, running: Mutex::new(HashMap::default()), shutdown, replicas })
    }

    pub(crate) fn running(&self) -> std::sync::MutexGuard<'_, HashMap<TaskKey, Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Handles one request, in a `tracing` span `a2a_request` naming the operation and
    /// the tenant (free when no subscriber is installed).
    ///
    /// The future is boxed: an operation's state is kilobytes, and a binding's request
    /// future that held it inline would be copied whole each time it moves.
    pub fn handle(self: &Arc<Self>, cx: CallContext, req: Request) -> BoxFuture<'_, Result<Answer, A2aError>> {
        let span = tracing::debug_span!("a2a_request", operation = req.operation().name(), tenant = %cx.tenant);
        for interceptor in &self.options.interceptors {
            if let Err(e) = interceptor.before(&cx, &req) {
                return Box::pin(std::future::ready(Err(e)));
            }
        }
        Box::pin(self.dispatch(cx, req).instrument(span))
    }

    async fn dispatch(self: &Arc<Self>, cx: CallContext, req: Request) -> Result<Answer, A2aError> {
        match req {
            Request::SendMessage(r) => self.send(cx, r, false).await,
            Request::SendStreamingMessage(r) => {
                self.require_streaming()?;
                self.send(cx, r, true).await
            }
            Request::GetTask(r) => self.get_task(&cx, r).await,
            Request::ListTasks(r) => self.list_tasks(&cx, r).await,
            Request::CancelTask(r) => self.cancel_task(&cx, r).await,
            Request::SubscribeToTask(r) => {
                self.require_streaming()?;
                self.subscribe(&cx, r).await
            }
            Request::CreateTaskPushNotificationConfig(r) => self.create_push(&cx, r).await,
            Request::GetTaskPushNotificationConfig(r) => self.get_push(&cx, r).await,
            Request::ListTaskPushNotificationConfigs(r) => self.list_push(&cx, r).await,
            Request::DeleteTaskPushNotificationConfig(r) => self.delete_push(&cx, r).await,
            Request::GetExtendedAgentCard(_) => self.extended_card(&cx),
        }
    }

    fn require_streaming(&self) -> Result<(), A2aError> {
        if self.options.card.capabilities.streaming == Some(true) {
            Ok(())
        } else {
            Err(A2aError::new(ErrorKind::UnsupportedOperation)
                .with_message("this agent does not stream (capabilities.streaming is not true)"))
        }
    }

    pub(super) fn require_push(&self) -> Result<(), A2aError> {
        if self.options.card.capabilities.push_notifications == Some(true) {
            Ok(())
        } else {
            Err(A2aError::new(ErrorKind::PushNotificationNotSupported))
        }
    }

    fn check_message(&self, req: &SendMessageRequest) -> Result<(), A2aError> {
        let meta_len = |m: &Option<crate::v1::RawObject>| {
            m.as_ref().map(|r| serde_json::to_vec(r).map(|v| v.len()).unwrap_or(0)).unwrap_or(0)
        };
        if meta_len(&req.metadata) > self.options.max_metadata_bytes
            || meta_len(&req.message.metadata) > self.options.max_metadata_bytes
        {
            return Err(A2aError::new(ErrorKind::InvalidParams)
                .with_message(format!("metadata is larger than the limit of {} bytes", self.options.max_metadata_bytes))
                .with("path", "$.params.metadata"));
        }
        if let Some(accepted) = &self.options.accepted_media_types {
            for (i, part) in req.message.parts.iter().enumerate() {
                if !part.media_type.is_empty() && !accepted.iter().any(|a| media_matches(a, &part.media_type)) {
                    return Err(A2aError::new(ErrorKind::ContentTypeNotSupported)
                        .with_message(format!(
                            "part {i} has media type {:?}, which this agent does not accept",
                            part.media_type
                        ))
                        .with("path", format!("$.params.message.parts[{i}].mediaType"))
                        .with("mediaType", part.media_type.clone()));
                }
            }
        }
        Ok(())
    }

    async fn send(
        self: &Arc<Self>,
        cx: CallContext,
        req: SendMessageRequest,
        streaming: bool,
    ) -> Result<Answer, A2aError> {
        self.check_message(&req)?;
        let Some(idem) = cx.idempotency_key.clone().filter(|_| !streaming) else {
            return self.send_once(cx, req, streaming).await;
        };
        let fingerprint = hex(&Sha256::digest(serde_json::to_vec(&req).unwrap_or_default()));
        let store = self.tasks.store();
        match store.claim_idempotency(&cx.tenant, &idem, &fingerprint, now_ms()).await? {
            IdempotencyClaim::Claimed => {}
            IdempotencyClaim::Seen { fingerprint: f, .. } if f != fingerprint => {
                return Err(A2aError::new(ErrorKind::InvalidRequest)
                    .with_message("Idempotency-Key was already used for a different request")
                    .with("idempotencyKey", idem));
            }
            IdempotencyClaim::Seen { result: Some(bytes), .. } => {
                return self.replay_idempotent(&cx, bytes, &req).await
            }
            IdempotencyClaim::Seen { result: None, .. } => {
                return Err(A2aError::new(ErrorKind::InvalidRequest)
                    .with_message("a request with this Idempotency-Key is still being processed; retry later")
                    .with("idempotencyKey", idem));
            }
        }
        match self.send_once(cx.clone(), req, false).await {
            Ok(Answer::Value(bytes)) => {
                store.complete_idempotency(&cx.tenant, &idem, bytes.clone()).await?;
                Ok(Answer::Value(bytes))
            }
            Ok(other) => Ok(other),
            Err(e) => {
                store.release_idempotency(&cx.tenant, &idem).await?;
                Err(e)
            }
        }
    }

    /// A repeated idempotent send: the stored answer, refreshed when it was a task.
    async fn replay_idempotent(
        &self,
        cx: &CallContext,
        bytes: Vec<u8>,
        req: &SendMessageRequest,
    ) -> Result<Answer, A2aError> {
        let prior = agentproto_codec::decode_slice::<SendMessageResponse>(&bytes, "$")
            .map_err(|e| A2aError::new(ErrorKind::Internal).with_message(e.to_string()))?
            .value;
        if let SendMessageResponse::Task(t) = prior {
            if let Some((task, _)) = self.tasks.get(&TaskKey::new(cx.tenant.clone(), t.id.clone())).await? {
                let h = req.configuration.as_ref().and_then(|c| c.history_length);
                return Ok(Answer::Value(encode(&SendMessageResponse::Task(view(task, h, true)))?));
            }
        }
        Ok(Answer::Value(bytes))
    }

    async fn send_once(
        self: &Arc<Self>,
        cx: CallContext,
        req: SendMessageRequest,
        streaming: bool,
    ) -> Result<Answer, A2aError> {
        let mut message = req.message;
        let existing = if message.task_id.is_empty() {
            None
        } else {
            let key = TaskKey::new(cx.tenant.clone(), message.task_id.clone());
            let Some((task, rec)) = self.tasks.get_shared(&key).await? else {
                return Err(A2aError::task_not_found(&message.task_id));
            };
            if is_terminal(task.status.state) {
                return Err(A2aError::new(ErrorKind::UnsupportedOperation)
                    .with_message(format!("task {} is in a terminal state ({})", task.id, task.status.state.as_str()))
                    .with("taskId", task.id.clone()));
            }
            if !message.context_id.is_empty() && message.context_id != task.context_id {
                return Err(A2aError::new(ErrorKind::InvalidParams)
                    .with_message(format!(
                        "contextId {:?} does not match task {}'s context {:?}",
                        message.context_id, task.id, task.context_id
                    ))
                    .with("path", "$.params.message.contextId"));
            }
            // What the follow-up's first update applies to (see `Known`).
            Some(Known { task, version: rec.version })
        };
        let (task_id, context_id) = match &existing {
            Some(k) => (k.task.id.clone(), k.task.context_id.clone()),
            None => {
                let ctx = if message.context_id.is_empty() { new_id() } else { message.context_id.clone() };
                (new_id(), ctx)
            }
        };
        message.task_id = task_id.clone();
        message.context_id = context_id.clone();
        let key = TaskKey::new(cx.tenant.clone(), task_id.clone());
        let config = req.configuration.clone().unwrap_or_default();
        let inline_push = match config.task_push_notification_config.clone() {
            Some(mut pc) => {
                self.require_push()?;
                pc.task_id = task_id.clone();
                Some(self.push_record(&cx, pc, "$.params.configuration.taskPushNotificationConfig.url").await?.1)
            }
            None => None,
        };

        let (first_tx, mut first_rx) = oneshot::channel();
        let mut known = None;
        let create = if existing.is_none() {
            let mut status = TaskStatus::new(TaskState::Submitted);
            status.timestamp = Some(crate::Timestamp::from_millis(now_ms()));
            let mut t = Task::new(task_id.clone(), status);
            t.context_id = context_id.clone();
            t.history.push(message.clone());
            Some(t)
        } else {
            if let Some(pc) = inline_push.clone() {
                self.tasks.store().put_push_config(pc).await?;
            }
            let change = Change::History(message.clone());
            known = Some(self.tasks.apply_as(&key, &[change], Writer::Other, existing.clone()).await?.0);
            None
        };
        let turn = Some(self.tasks.leases().start_turn(key.clone()));
        let start = Pending::new(create, inline_push, first_tx, known, turn);
        let updater = TaskUpdater::new(self.tasks.clone(), key.clone(), context_id.clone(), start);
        let cancel = self.shutdown.child_token();
        // The message moves into the executor's context; the task's history has its copy.
        let rcx = RequestContext {
            message,
            task: existing.as_ref().map(|k| (*k.task).clone()),
            task_id: task_id.clone(),
            context_id: context_id.clone(),
            tenant: cx.tenant.clone(),
            metadata: req.metadata.clone(),
            extensions: cx.extensions.clone(),
            cancelled: cancel.clone(),
        };
        let mut turn_end = updater.turn_end();
        self.running().insert(key.clone(), Running { cancel: cancel.clone(), updater: updater.clone() });
        let core = self.clone();
        let span = tracing::debug_span!("a2a_task", task = %key.id, context = %context_id, tenant = %key.tenant);
        // Runs on this request's task while the request waits for it (see `super::turn`).
        let mut turn = Turn::new(async move {
            // Boxed once here: the executor's future is kilobytes, and the layers that wrap
            // it (the panic catch, the updater's run, this turn) would each hold and copy it.
            let execute: BoxFuture<'_, Result<(), A2aError>> =
                Box::pin(core.executor.execute(rcx, updater.clone()).instrument(span));
            let result = updater.run(unwinding(execute)).await;
            match result {
                Err(e) => {
                    if !updater.fail_before_start(e.clone()) {
                        let msg = updater.text(format!("agent failed: {}", e.message));
                        let _ = updater.fail(Some(msg)).await;
                    }
                }
                Ok(()) => {
                    if !updater.started() {
                        updater.fail_before_start(
                            A2aError::new(ErrorKind::InvalidAgentResponse)
                                .with_message("the agent finished without answering"),
                        );
                    }
                }
            }
            let mut running = core.running();
            // A later message to the same task may have replaced this execution's entry.
            if running.get(updater.key()).is_some_and(|r| r.updater.same(&updater)) {
                running.remove(updater.key());
            }
        });

        let first = turn.until(&mut first_rx).await;
        let blocking = !(streaming || config.return_immediately || self.options.return_immediately_by_default);
        if !blocking {
            // The turn goes on on a task of its own.
            turn.detach();
        }
        match first {
            Err(_) => Err(A2aError::new(ErrorKind::Internal).with_message("the agent stopped before answering")),
            Ok(First::Failed(e)) => Err(e),
            Ok(First::Message(m)) => {
                if streaming {
                    let body = encode(&StreamResponse::Message(m))?;
                    Ok(Answer::Stream(Box::pin(futures::stream::iter([StreamOut::Event {
                        seq: None,
                        body: body.into(),
                    }]))))
                } else {
                    Ok(Answer::Value(encode(&SendMessageResponse::Message(m))?))
                }
            }
            Ok(First::Task { seq }) => {
                let history = config.history_length;
                if streaming {
                    let sub =
                        self.tasks.hub().subscribe(self.tasks.store().clone(), key.clone(), seq.saturating_sub(1));
                    let mut prefix = Vec::new();
                    if existing.is_some() {
                        if let Some((t, _)) = self.tasks.get(&key).await? {
                            let t = view(t, history, true);
                            prefix.push(StreamOut::Event { seq: None, body: encode(&StreamResponse::Task(t))?.into() });
                        }
                    }
                    // A streamed send ends with its turn: at a terminal or interrupted state.
                    // Ends right after the event that ends the turn, without waiting for
                    // another item.
                    let turn = futures::stream::unfold(
                        (Box::pin(sub.into_stream()), false),
                        move |(mut s, ended)| async move {
                            if ended {
                                return None;
                            }
                            Some(match s.next().await? {
                                Ok(StreamItem::Event(ev)) => {
                                    let end = event_ends_turn(&ev.body);
                                    (event_out(ev, history), (s, end))
                                }
                                other => (item_out(other), (s, false)),
                            })
                        },
                    );
                    return Ok(Answer::Stream(Box::pin(futures::stream::iter(prefix).chain(turn))));
                }
                if blocking {
                    // The executor says when the turn ends, with the task as it left it;
                    // the executor's end counts too (then the task is read back).
                    if let Some(task) = turn.until_or_end(&mut turn_end).await {
                        return Ok(Answer::Value(task_answer(task, history)?));
                    }
                }
                let (task, _) = self.tasks.get_shared(&key).await?.ok_or_else(|| A2aError::task_not_found(&key.id))?;
                Ok(Answer::Value(task_answer(task, history)?))
            }
        }
    }

    async fn get_task(&self, cx: &CallContext, r: GetTaskRequest) -> Result<Answer, A2aError> {
        if r.history_length.is_some_and(|h| h < 0) {
            return Err(invalid("$.params.historyLength", "a non-negative integer"));
        }
        let key = TaskKey::new(cx.tenant.clone(), r.id.clone());
        if r.history_length.is_none() {
            // The task as stored: its bytes, or encoded as it is held (no copy first).
            let rec = self.tasks.get_record(&key).await?.ok_or_else(|| A2aError::task_not_found(&r.id))?;
            return Ok(Answer::Value(rec.body.bytes()?.to_vec()));
        }
        let (task, _) = self.tasks.get_shared(&key).await?.ok_or_else(|| A2aError::task_not_found(&r.id))?;
        Ok(Answer::Value(encode(&*viewed(task, r.history_length))?))
    }

    async fn list_tasks(&self, cx: &CallContext, r: ListTasksRequest) -> Result<Answer, A2aError> {
        let page_size = r.page_size.unwrap_or(50);
        if !(1..=100).contains(&page_size) {
            return Err(invalid("$.params.pageSize", "an integer from 1 to 100"));
        }
        if r.history_length.is_some_and(|h| h < 0) {
            return Err(invalid("$.params.historyLength", "a non-negative integer"));
        }
        let after = if r.page_token.is_empty() {
            None
        } else {
            Some(
                parse_page_token(&r.page_token)
                    .ok_or_else(|| invalid("$.params.pageToken", "a token from a previous ListTasks answer"))?,
            )
        };
        let query = ListQuery {
            context_id: (!r.context_id.is_empty()).then(|| r.context_id.clone()),
            state: r.status.map(|s| s.as_str().to_owned()),
            status_after_ms: r.status_timestamp_after.map(|t| t.as_millis()),
            page_size: page_size as usize,
            after,
        };
        let page = self.tasks.store().list_tasks(&cx.tenant, query).await?;
        let mut tasks_out = Vec::with_capacity(page.tasks.len());
        for rec in &page.tasks {
            let t = Arc::unwrap_or_clone(task_of(&rec.body)?);
            tasks_out.push(view(t, r.history_length, r.include_artifacts.unwrap_or(false)));
        }
        // `pageSize` is the page size used for this answer (the request's, or the
        // default), not the number of tasks on the page: a2a.proto says so, and so does
        // the current TCK (an RC-era revision expected the count).
        let resp = ListTasksResponse::new(
            tasks_out,
            page.next.map(|(ts, id)| page_token(ts, &id)).unwrap_or_default(),
            page_size,
            page.total_size.min(i32::MAX as u64) as i32,
        );
        Ok(Answer::Value(encode(&resp)?))
    }

    async fn subscribe(&self, cx: &CallContext, r: SubscribeToTaskRequest) -> Result<Answer, A2aError> {
        let key = TaskKey::new(cx.tenant.clone(), r.id.clone());
        if let Some(after) = cx.last_event_id {
            // A resume continues the log after the last event the client saw, even when
            // the task has ended since (the missing events are what it came for). It
            // still starts with the Task (§3.1.6), read after the subscription is
            // registered and sent at once; it carries no `id:`, since it is no place in
            // the log and must not move the client's Last-Event-ID past what it missed.
            let sub = self.tasks.hub().subscribe(self.tasks.store().clone(), key.clone(), after);
            let (task, _) = self.tasks.get(&key).await?.ok_or_else(|| A2aError::task_not_found(&r.id))?;
            let first = StreamOut::Event { seq: None, body: encode(&StreamResponse::Task(task))?.into() };
            return Ok(Answer::Stream(Box::pin(futures::stream::iter([first]).chain(events(sub)))));
        }
        // The last written sequence number first, then the task: the snapshot is at least
        // that recent, so following the log after it loses nothing.
        let last = self.tasks.store().read_events(&key, u64::MAX, 0).await?.last_written;
        let (task, _) = self.tasks.get(&key).await?.ok_or_else(|| A2aError::task_not_found(&r.id))?;
        if is_terminal(task.status.state) {
            return Err(A2aError::new(ErrorKind::UnsupportedOperation)
                .with_message(format!(
                    "task {} is in a terminal state ({}); there is nothing to subscribe to",
                    r.id,
                    task.status.state.as_str()
                ))
                .with("taskId", r.id.clone()));
        }
        let sub = self.tasks.hub().subscribe(self.tasks.store().clone(), key, last);
        let first = StreamOut::Event { seq: Some(last), body: encode(&StreamResponse::Task(task))?.into() };
        Ok(Answer::Stream(Box::pin(futures::stream::iter([first]).chain(events(sub)))))
    }

    fn extended_card(&self, cx: &CallContext) -> Result<Answer, A2aError> {
        if self.options.card.capabilities.extended_agent_card != Some(true) {
            return Err(A2aError::new(ErrorKind::UnsupportedOperation)
                .with_message("this agent declares no extended agent card"));
        }
        if cx.principal.is_none() {
            return Err(A2aError::new(ErrorKind::Unauthenticated)
                .with_message("the extended agent card requires authentication"));
        }
        let card = self
            .options
            .extended_card
            .as_ref()
            .ok_or_else(|| A2aError::new(ErrorKind::ExtendedAgentCardNotConfigured))?;
        Ok(Answer::Value(encode(card)?))
    }
}

/// The events of a subscription as stream items; the stream ends after the last event.
fn events(sub: Subscription) -> impl Stream<Item = StreamOut> + Send {
    sub.into_stream().map(item_out)
}

/// One item of a subscription as a stream item.
fn item_out(item: Result<StreamItem, crate::store::StoreError>) -> StreamOut {
    match item {
        Ok(StreamItem::Event(ev)) => event_out(ev, None),
        Ok(StreamItem::Gap { after, resumed_at }) => StreamOut::Gap { after, resumed_at },
        Ok(StreamItem::Lagged) => StreamOut::Lagged,
        Err(e) => StreamOut::Error(e.into()),
    }
}

/// A logged event as a stream item, a `Task` event shown as the caller asked
/// (`historyLength`), looked into without decoding when the event is still decoded.
fn event_out(ev: EventRecord, history: Option<i32>) -> StreamOut {
    if history.is_some() {
        if let Some(StreamResponse::Task(t)) = event_of(&ev.body).as_deref() {
            if let Ok(body) = encode(&StreamResponse::Task(view(t.clone(), history, true))) {
                return StreamOut::Event { seq: Some(ev.seq), body: body.into() };
            }
        }
    }
    match ev.body.bytes() {
        Ok(body) => StreamOut::Event { seq: Some(ev.seq), body },
        Err(e) => StreamOut::Error(A2aError::from(crate::tasks::ChangeError::from(e))),
    }
}

pub(super) fn invalid(path: &str, expected: &str) -> A2aError {
    A2aError::new(ErrorKind::InvalidParams)
        .with_message(format!("Invalid parameters at {path}: expected {expected}"))
        .with("path", path)
        .with("expected", expected)
}

fn media_matches(pattern: &str, media: &str) -> bool {
    let media = media.split(';').next().unwrap_or("").trim();
    pattern == "*/*"
        || pattern.eq_ignore_ascii_case(media)
        || pattern
            .strip_suffix("/*")
            .is_some_and(|p| media.split('/').next().is_some_and(|m| m.eq_ignore_ascii_case(p)))
}

pub(crate) fn now_ms() -> i64 {
    crate::Timestamp::now().as_millis()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A page token: the `(status timestamp, id)` cursor, base64url so it is opaque.
fn page_token(ts: i64, id: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{ts}:{id}"))
}

fn parse_page_token(token: &str) -> Option<(i64, String)> {
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (ts, id) = text.split_once(':')?;
    Some((ts.parse().ok()?, id.to_owned()))
}

/// A new task or context id: a version 7 UUID, which starts with its creation time in
/// milliseconds. Ids made close in time sort close together, so a database store inserts
/// the tasks, events and index entries of concurrent turns into the same few pages instead
/// of one random page each (SQLite at 50 connections: 2.6 times fewer page writes per
/// request than with version 4 ids). The rest is random, so ids stay unguessable.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
