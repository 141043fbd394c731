//! `SendMessage` and `SendStreamingMessage`: the steps of one send, each named.
//!
//! 1. [`Core::send`]: checks the message, and with an `Idempotency-Key` answers a repeat
//!    from the stored answer ([`Core::replay_idempotent`]).
//! 2. [`Core::target`]: the task the message goes to (an existing one, checked, or new
//!    ids) — the message gets its task and context ids.
//! 3. [`Core::inline_push`]: the push config the send carries, checked.
//! 4. [`Core::open_turn`]: the new task, or the follow-up message recorded on the
//!    existing one; what the executor's first update applies to.
//! 5. [`Core::start_turn`]: the executor's run as a [`Turn`] on this request's task.
//! 6. [`Core::answer`]: the first thing the agent said, as the operation's answer (a
//!    message, the task when the turn ends or at once, or the stream of its events).

use std::sync::Arc;

use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use tracing::Instrument;

use super::core::{
    event_out, hex, item_out, new_id, now_ms, snapshot, Answer, CallContext, Core, Reply, Running, StreamOut,
};
use super::turn::{unwinding, Turn};
use crate::errors::{A2aError, ErrorKind};
use crate::executor::{AgentExecutor, First, Pending, RequestContext, TaskUpdater};
use crate::store::{BoxFuture, EventBody, IdempotencyClaim, PushConfigRecord, TaskKey};
use crate::stream::StreamItem;
use crate::tasks::{event_ends_turn, is_terminal, viewed, Change, Known, Writer};
use crate::v1::{
    Message, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState,
    TaskStatus,
};

/// The task a message goes to.
struct Target {
    key: TaskKey,
    context_id: String,
    /// The task as it was before this message, when the message continues one.
    existing: Option<Known>,
}

impl<E: AgentExecutor> Core<E> {
    pub(super) async fn send(
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
            Ok(Answer::Value(reply)) => {
                store.complete_idempotency(&cx.tenant, &idem, reply.to_json()?).await?;
                Ok(Answer::Value(reply))
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
        if let SendMessageResponse::Task(t) = &prior {
            if let Some((task, _)) = self.tasks.get_shared(&TaskKey::new(cx.tenant.clone(), t.id.clone())).await? {
                let h = req.configuration.as_ref().and_then(|c| c.history_length);
                return Ok(Answer::Value(Reply::SendTask(viewed(task, h))));
            }
        }
        Ok(Answer::Value(Reply::send_response(prior)))
    }

    /// One send, the steps in order.
    async fn send_once(
        self: &Arc<Self>,
        cx: CallContext,
        req: SendMessageRequest,
        streaming: bool,
    ) -> Result<Answer, A2aError> {
        let SendMessageRequest { mut message, configuration, metadata, .. } = req;
        let target = self.target(&cx, &mut message).await?;
        let config = configuration.unwrap_or_default();
        let inline_push = self.inline_push(&cx, &config, &target.key.id).await?;
        let (first_tx, mut first_rx) = oneshot::channel();
        let (start, before) = self.open_turn(&target, &message, inline_push, first_tx, streaming).await?;
        let updater = TaskUpdater::new(self.tasks.clone(), target.key.clone(), target.context_id.clone(), start);
        let mut turn_end = updater.turn_end();
        let mut turn = self.start_turn(&cx, &target, message, metadata, updater);

        let first = turn.until(&mut first_rx).await;
        let blocking = !(streaming || config.return_immediately || self.options.return_immediately_by_default);
        if !blocking {
            // The turn goes on on a task of its own.
            turn.detach();
        }
        let first = match first {
            Err(_) => return Err(A2aError::new(ErrorKind::Internal).with_message("the agent stopped before answering")),
            Ok(First::Failed(e)) => return Err(e),
            Ok(first) => first,
        };
        if streaming {
            return self.stream_answer(first, &target.key, before, config.history_length);
        }
        if blocking {
            if let First::Task { .. } = first {
                // The executor says when the turn ends, with the task as it left it;
                // the executor's end counts too (then the task is read back).
                if let Some(task) = turn.until_or_end(&mut turn_end).await {
                    return Ok(Answer::Value(Reply::SendTask(viewed(task, config.history_length))));
                }
            }
        }
        self.answer(first, &target.key, config.history_length).await
    }

    /// Step 2: the existing task a message names (which must be live, in the message's
    /// context), or new task and context ids; the message is given both.
    async fn target(&self, cx: &CallContext, message: &mut Message) -> Result<Target, A2aError> {
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
        message.task_id.clone_from(&task_id);
        message.context_id.clone_from(&context_id);
        Ok(Target { key: TaskKey::new(cx.tenant.clone(), task_id), context_id, existing })
    }

    /// Step 3: the push config a send carries in its configuration, for this task.
    async fn inline_push(
        &self,
        cx: &CallContext,
        config: &SendMessageConfiguration,
        task_id: &str,
    ) -> Result<Option<PushConfigRecord>, A2aError> {
        let Some(mut pc) = config.task_push_notification_config.clone() else {
            return Ok(None);
        };
        self.require_push()?;
        pc.task_id = task_id.to_owned();
        Ok(Some(self.push_record(cx, pc, "$.params.configuration.taskPushNotificationConfig.url").await?.1))
    }

    /// Step 4: what the turn starts from. A new task is created by the executor's first
    /// update (`Pending` holds it, submitted, with the message as its history); on an
    /// existing task the message and the push config are recorded now, and with `keep`
    /// the task as that left it is returned: what a streamed follow-up shows before the
    /// turn's events (kept only then: a second holder makes the turn's first update copy
    /// the task).
    async fn open_turn(
        &self,
        target: &Target,
        message: &Message,
        inline_push: Option<PushConfigRecord>,
        first: oneshot::Sender<First>,
        keep: bool,
    ) -> Result<(Pending, Option<Arc<Task>>), A2aError> {
        if target.existing.is_none() {
            let mut status = TaskStatus::new(TaskState::Submitted);
            status.timestamp = Some(crate::Timestamp::from_millis(now_ms()));
            let mut task = Task::new(target.key.id.clone(), status);
            task.context_id.clone_from(&target.context_id);
            task.history.push(message.clone());
            let lease = Some(self.tasks.leases().start_turn(target.key.clone()));
            return Ok((Pending::new(Some(task), inline_push, first, None, lease), None));
        }
        if let Some(pc) = inline_push.clone() {
            self.tasks.store().put_push_config(pc).await?;
        }
        let change = Change::History(message.clone());
        let known = self.tasks.apply_as(&target.key, &[change], Writer::Other, target.existing.clone()).await?.0;
        let before = keep.then(|| known.task.clone());
        let lease = Some(self.tasks.leases().start_turn(target.key.clone()));
        Ok((Pending::new(None, inline_push, first, Some(known), lease), before))
    }

    /// Step 5: the executor's run for this message, registered as the task's running
    /// turn. It runs on this request's task while the request waits for it (see
    /// `super::turn`); the message moves into the executor's context.
    fn start_turn(
        self: &Arc<Self>,
        cx: &CallContext,
        target: &Target,
        message: Message,
        metadata: Option<crate::v1::RawObject>,
        updater: TaskUpdater,
    ) -> Turn {
        let cancel = self.shutdown.child_token();
        let rcx = RequestContext {
            message,
            task: target.existing.as_ref().map(|k| (*k.task).clone()),
            task_id: target.key.id.clone(),
            context_id: target.context_id.clone(),
            tenant: cx.tenant.clone(),
            metadata,
            extensions: cx.extensions.clone(),
            cancelled: cancel.clone(),
        };
        self.running().insert(target.key.clone(), Running { cancel, updater: updater.clone() });
        let core = self.clone();
        let key = &target.key;
        let span = tracing::debug_span!("a2a_task", task = %key.id, context = %target.context_id, tenant = %key.tenant);
        Turn::new(async move {
            // Boxed once here: the executor's future is kilobytes, and the layers that wrap
            // it (the panic catch, the updater's run, this turn) would each hold and copy it.
            let execute: BoxFuture<'_, Result<(), A2aError>> =
                Box::pin(core.executor.execute(rcx, updater.clone()).instrument(span));
            match updater.run(unwinding(execute)).await {
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
        })
    }

    /// Step 6, unary: a direct message, or the task as it is now.
    async fn answer(&self, first: First, key: &TaskKey, history: Option<i32>) -> Result<Answer, A2aError> {
        match first {
            First::Message(m) => Ok(Answer::Value(Reply::SendMessage(Box::new(m)))),
            First::Task { .. } => {
                let (task, _) = self.tasks.get_shared(key).await?.ok_or_else(|| A2aError::task_not_found(&key.id))?;
                Ok(Answer::Value(Reply::SendTask(viewed(task, history))))
            }
            First::Failed(e) => Err(e),
        }
    }

    /// Step 6, streaming: a direct message as the only event, or the task's events from
    /// the first one this turn made, until the event that ends the turn. A follow-up
    /// starts with the task as the message left it (`before`), before any of the turn's
    /// events: read after the turn ran, it would show their outcome ahead of them.
    fn stream_answer(
        &self,
        first: First,
        key: &TaskKey,
        before: Option<Arc<Task>>,
        history: Option<i32>,
    ) -> Result<Answer, A2aError> {
        let seq = match first {
            First::Message(m) => {
                let only = StreamOut::event(None, EventBody::from_event(StreamResponse::Message(m)));
                return Ok(Answer::Stream(Box::pin(futures::stream::iter([only]))));
            }
            First::Failed(e) => return Err(e),
            First::Task { seq } => seq,
        };
        let sub = self.tasks.hub().subscribe(self.tasks.store().clone(), key.clone(), seq.saturating_sub(1));
        let prefix = before.map(|t| snapshot(&sub, None, Arc::unwrap_or_clone(viewed(t, history))));
        // Ends right after the event that ends the turn, without waiting for another item.
        let turn =
            futures::stream::unfold((Box::pin(sub.into_charged_stream()), false), move |(mut s, ended)| async move {
                if ended {
                    return None;
                }
                Some(match s.next().await? {
                    (Ok(StreamItem::Event(ev)), charge) => {
                        let end = event_ends_turn(&ev.body);
                        (event_out(ev, history, charge), (s, end))
                    }
                    (other, charge) => (item_out(other, charge), (s, false)),
                })
            });
        Ok(Answer::Stream(Box::pin(futures::stream::iter(prefix).chain(turn))))
    }
}
