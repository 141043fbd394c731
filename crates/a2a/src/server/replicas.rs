//! Several server processes on one PostgreSQL database (*replicas*): live events and
//! cancels across them.
//!
//! A server built with [`Builder::postgres`](super::Builder::postgres) (or
//! [`Builder::postgres_store`](super::Builder::postgres_store)) opens, besides its pool,
//! one connection of its own that `LISTEN`s on the store's channels
//! ([`PgListener`](crate::store::postgres::PgListener)). Any replica can then serve any
//! request about any task: the task, its log, its push configs and its lease are in the
//! database, and what follows explains how the live parts cross processes.
//!
//! # Events: the bus
//!
//! - Every commit that appends events sends, inside its transaction, a notice naming the
//!   task and its new last sequence number (never the events). The listener of each
//!   replica turns it into a wake-up for that replica's subscribers of the task, which
//!   read the new events from the store by sequence number. Order and completeness come
//!   from the log: a subscription yields sequence number `n + 1` after `n` and nothing
//!   twice, however the notices arrive (late, coalesced, repeated).
//! - The replica that wrote the events also hands them to its own subscribers directly
//!   (the in-process fast path); the notice of its own commit then finds them up to date
//!   and delivers nothing again.
//! - **No lost notice leaves a subscriber stuck.** Notices can only be lost while the
//!   listening connection is down; each time it listens again (after a PostgreSQL
//!   restart, a network cut, or at start-up), every live subscriber of the replica reads
//!   the log after its last sequence number once, and the push worker looks at the
//!   outbox. A notice that names no task wakes every subscriber the same way.
//! - The sweeper's final FAILED event (`crate::recovery`) is an ordinary commit, so it
//!   reaches live subscribers on every replica through the bus.
//!
//! # Push across replicas
//!
//! Every notice, and every reconnection, also wakes the replica's push worker, so an
//! outbox row written by one replica is claimed at once by whichever worker asks first,
//! not after a worker's poll interval. Claims take rows with `FOR UPDATE SKIP LOCKED`
//! under a lease, so each delivery is held by one worker at a time: each event goes to
//! each config once, unless a delivery outlives its lease or its worker dies mid-attempt
//! (then it is sent again: at least once, see `crate::push`).
//!
//! # Cancel across replicas
//!
//! A turn runs on the replica that took its message, and its task's lease names that
//! replica (`crate::recovery`). `CancelTask` on any replica does this:
//!
//! 1. The task is terminal: TaskNotCancelable, as everywhere.
//! 2. The turn runs on this replica: its cancellation token fires and the executor's
//!    `cancel` runs here.
//! 3. The task's lease is live and names another replica: this replica sends that
//!    replica a cancel request on the control channel (`agentproto_a2a_control`,
//!    `{"kind":"cancel","tenant","id","to","from","request"}`). The owner fires the turn's
//!    token, runs the executor's `cancel` (which moves the task to CANCELED by default)
//!    and answers (`{"kind":"canceled",…}`) with the outcome. The requester waits for the
//!    answer or for the task to reach a terminal state, whichever comes first, then
//!    answers the request as a local cancel would: the task as the executor's `cancel`
//!    left it (CANCELED), TaskNotCancelable if the turn ended in another terminal state
//!    first, or the executor's error.
//! 4. The owner says it has no turn on the task (it ended meanwhile), the lease has
//!    expired, or there is none: the task is canceled here, through an ordinary commit.
//! 5. **No answer within the cancel wait** (5 s by default,
//!    [`Builder::cancel_wait`](super::Builder::cancel_wait)): the owner is cut off from
//!    the database or stuck. The requester cancels the task itself, through an ordinary
//!    commit whose status carries `{"agentproto":{"cancelUnanswered":{"replica":…}}}`
//!    metadata. The task is CANCELED either way; the owner's turn, if it still runs,
//!    has its next update refused (the task is terminal).
//!
//! So the answer is always the Task, CANCELED once the cancel took effect, or an error;
//! and a canceled task's log ends with its CANCELED status event, which every subscriber
//! on every replica receives.
//!
//! # While PostgreSQL is away
//!
//! Requests that need the database fail at once with an error answer (Internal, naming
//! the store error): the pool fails fast when it cannot connect, so nothing hangs. Open
//! streams stay open; once the listener listens again they read what they missed. A
//! stream whose read of the log fails ends with an error event, and its client resumes
//! with `Last-Event-ID` on any replica. Lease renewals, sweeps and push claims log
//! warnings and try again on their next round. The listener reconnects with backoff
//! (100 ms doubling to 2 s by default). A turn whose replica cannot reach the database
//! for longer than its lease loses it (`crate::recovery`).

// Without the `postgres` feature nothing sends or receives control messages yet.
#![cfg_attr(not(feature = "postgres"), allow(dead_code))]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::errors::{A2aError, ErrorKind};
use crate::store::{BoxFuture, ControlChannel, TaskKey};
use crate::stream::{StreamItem, Subscription};
use crate::tasks::Tasks;

/// How long a cancel waits for the replica running the turn by default.
pub const DEFAULT_CANCEL_WAIT: Duration = Duration::from_secs(5);

/// The server of this replica, as the control messages see it.
pub(crate) trait TurnCanceler: Send + Sync + 'static {
    /// Cancels the turn of `key` running here, as a local `CancelTask` would; `None` when
    /// no turn of that task runs here.
    fn cancel_turn(&self, key: TaskKey) -> BoxFuture<'_, Option<Result<(), A2aError>>>;
}

/// What the owner of a turn answered a cancel request with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// No turn of the task runs there.
    NoTurn,
    /// The executor's `cancel` ran there, with this outcome.
    Done(Result<(), A2aError>),
}

/// How a cancel sent to another replica came out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RemoteCancel {
    /// The owner canceled its turn (or its executor's `cancel` failed).
    Done(Result<(), A2aError>),
    /// The task reached a terminal state before the owner answered.
    Ended,
    /// The owner has no turn on the task.
    NoTurn,
    /// The owner did not answer within the cancel wait.
    Unanswered,
}

/// One message on the control channel.
#[derive(Debug, Clone, PartialEq)]
enum Message {
    Cancel { key: TaskKey, to: String, from: String, request: String },
    Canceled { to: String, request: String, reply: Reply },
}

impl Message {
    fn encode(&self) -> String {
        match self {
            Message::Cancel { key, to, from, request } => json!({
                "kind": "cancel", "tenant": key.tenant, "id": key.id, "to": to, "from": from, "request": request,
            }),
            Message::Canceled { to, request, reply } => {
                let mut value = json!({"kind": "canceled", "to": to, "request": request});
                match reply {
                    Reply::NoTurn => value["handled"] = json!(false),
                    Reply::Done(Ok(())) => value["handled"] = json!(true),
                    Reply::Done(Err(error)) => {
                        value["handled"] = json!(true);
                        value["error"] = json!({"reason": error.reason(), "message": error.message});
                    }
                }
                value
            }
        }
        .to_string()
    }

    /// `None` for a payload that is not a message of this version (ignored).
    fn decode(payload: &str) -> Option<Message> {
        let value: Value = serde_json::from_str(payload).ok()?;
        let text = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
        match value.get("kind")?.as_str()? {
            "cancel" => Some(Message::Cancel {
                key: TaskKey::new(text("tenant")?, text("id")?),
                to: text("to")?,
                from: text("from")?,
                request: text("request")?,
            }),
            "canceled" => {
                let reply = if !value.get("handled")?.as_bool()? {
                    Reply::NoTurn
                } else if let Some(error) = value.get("error") {
                    let kind = error
                        .get("reason")
                        .and_then(Value::as_str)
                        .and_then(ErrorKind::from_reason)
                        .unwrap_or(ErrorKind::Internal);
                    let message = error.get("message").and_then(Value::as_str).unwrap_or_default();
                    Reply::Done(Err(A2aError::new(kind).with_message(message)))
                } else {
                    Reply::Done(Ok(()))
                };
                Some(Message::Canceled { to: text("to")?, request: text("request")?, reply })
            }
            _ => None,
        }
    }
}

/// This replica's end of the control channel.
pub(crate) struct Replicas {
    replica: String,
    channel: Arc<dyn ControlChannel>,
    cancel_wait: Duration,
    /// Cancel requests sent and not answered yet, by request id.
    pending: Mutex<HashMap<String, oneshot::Sender<Reply>>>,
    /// The server that runs this replica's turns (set once it is built).
    canceler: OnceLock<Weak<dyn TurnCanceler>>,
}

impl std::fmt::Debug for Replicas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replicas")
            .field("replica", &self.replica)
            .field("cancel_wait", &self.cancel_wait)
            .finish_non_exhaustive()
    }
}

/// Forgets a pending request when its cancel ends, however it ends.
struct Forget<'a> {
    replicas: &'a Replicas,
    request: String,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.replicas.pending().remove(&self.request);
    }
}

impl Replicas {
    pub(crate) fn new(replica: impl Into<String>, channel: Arc<dyn ControlChannel>, cancel_wait: Duration) -> Self {
        Replicas {
            replica: replica.into(),
            channel,
            cancel_wait,
            pending: Mutex::new(HashMap::new()),
            canceler: OnceLock::new(),
        }
    }

    pub(crate) fn set_canceler(&self, canceler: Weak<dyn TurnCanceler>) {
        let _ = self.canceler.set(canceler);
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<Reply>>> {
        // Nothing panics while holding the lock: a poisoned map is still consistent.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks `owner` to cancel its turn on `key` and waits for the outcome (rule 3 and 5
    /// of the module documentation).
    pub(crate) async fn cancel_remote(
        &self,
        tasks: &Tasks,
        key: &TaskKey,
        owner: &str,
    ) -> Result<RemoteCancel, A2aError> {
        // Follow the log from its current end first, so that a turn ending while the
        // request travels is seen.
        let store = Arc::clone(tasks.store());
        let last = store.read_events(key, u64::MAX, 0).await?.last_written;
        let mut log = tasks.hub().subscribe(store, key.clone(), last);
        let request = uuid::Uuid::new_v4().simple().to_string();
        let (reply_to, reply) = oneshot::channel();
        self.pending().insert(request.clone(), reply_to);
        let _forget = Forget { replicas: self, request: request.clone() };
        let message = Message::Cancel { key: key.clone(), to: owner.to_owned(), from: self.replica.clone(), request };
        self.channel.send(message.encode()).await?;
        Ok(tokio::select! {
            reply = reply => match reply {
                Ok(Reply::NoTurn) => RemoteCancel::NoTurn,
                Ok(Reply::Done(result)) => RemoteCancel::Done(result),
                Err(_) => RemoteCancel::Unanswered,
            },
            () = ended(&mut log) => RemoteCancel::Ended,
            () = tokio::time::sleep(self.cancel_wait) => RemoteCancel::Unanswered,
        })
    }

    /// Handles one message of the control channel; messages for other replicas are
    /// ignored. Never waits: work is spawned.
    pub(crate) fn on_control(self: &Arc<Self>, payload: &str) {
        match Message::decode(payload) {
            Some(Message::Cancel { key, to, from, request }) if to == self.replica => {
                let Some(canceler) = self.canceler.get().and_then(Weak::upgrade) else { return };
                let replicas = Arc::clone(self);
                tokio::spawn(async move {
                    let reply = match canceler.cancel_turn(key.clone()).await {
                        None => Reply::NoTurn,
                        Some(result) => Reply::Done(result),
                    };
                    let answer = Message::Canceled { to: from, request, reply }.encode();
                    if let Err(error) = replicas.channel.send(answer).await {
                        tracing::warn!(task = %key.id, tenant = %key.tenant, %error, "could not answer a cancel request");
                    }
                });
            }
            Some(Message::Canceled { to, request, reply }) if to == self.replica => {
                if let Some(waiting) = self.pending().remove(&request) {
                    let _ = waiting.send(reply);
                }
            }
            Some(_) => {}
            None => tracing::debug!(payload, "ignored a control message that does not parse"),
        }
    }
}

/// Returns once the subscription has yielded the log's last event (or found it already
/// written); never if it is cut off or fails, so that the other branches decide.
async fn ended(log: &mut Subscription) {
    loop {
        match log.next().await {
            Some(Ok(StreamItem::Event(_) | StreamItem::Gap { .. })) => {}
            None => return,
            Some(Ok(StreamItem::Lagged) | Err(_)) => return std::future::pending().await,
        }
    }
}

/// The server's side of the PostgreSQL listener: notices wake subscribers and the push
/// worker, control messages go to [`Replicas`].
#[cfg(feature = "postgres")]
pub(crate) struct ReplicaBus {
    pub(crate) replicas: Arc<Replicas>,
    pub(crate) hub: Arc<crate::stream::EventHub>,
    pub(crate) push: Option<crate::push::PushWaker>,
}

#[cfg(feature = "postgres")]
impl crate::store::postgres::NoticeSink for ReplicaBus {
    fn events_written(&self, key: Option<TaskKey>, last_seq: u64) {
        match key {
            Some(key) => self.hub.notify_written(&key, last_seq),
            None => self.hub.notify_all(),
        }
        if let Some(push) = &self.push {
            push.wake();
        }
    }

    fn control(&self, payload: &str) {
        self.replicas.on_control(payload);
    }

    fn listening(&self) {
        self.hub.notify_all();
        if let Some(push) = &self.push {
            push.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_messages_read_back() {
        let messages = [
            Message::Cancel { key: TaskKey::new("t", "a"), to: "b".into(), from: "c".into(), request: "r".into() },
            Message::Canceled { to: "c".into(), request: "r".into(), reply: Reply::NoTurn },
            Message::Canceled { to: "c".into(), request: "r".into(), reply: Reply::Done(Ok(())) },
            Message::Canceled {
                to: "c".into(),
                request: "r".into(),
                reply: Reply::Done(Err(A2aError::new(ErrorKind::UnsupportedOperation).with_message("finished"))),
            },
        ];
        for message in messages {
            assert_eq!(Message::decode(&message.encode()), Some(message));
        }
        for other in ["", "{}", r#"{"kind":"reboot"}"#, r#"{"kind":"cancel","tenant":"t"}"#] {
            assert_eq!(Message::decode(other), None, "{other:?}");
        }
    }
}
