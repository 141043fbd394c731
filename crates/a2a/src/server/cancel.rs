//! `CancelTask`: on the turn running here, on a turn another replica runs (see the
//! rules in `replicas.rs`), or on a task with no turn running.

use std::sync::Arc;

use super::core::{Answer, CallContext, Core, Reply};
use super::replicas::{RemoteCancel, Replicas, TurnCanceler};
use crate::errors::{A2aError, ErrorKind};
use crate::executor::AgentExecutor;
use crate::store::{BoxFuture, TaskBody, TaskKey, TaskRecord};
use crate::tasks::{is_terminal, Change};
use crate::v1::{CancelTaskRequest, RawObject, TaskState, TaskStatus};

impl<E: AgentExecutor> Core<E> {
    pub(super) async fn cancel_task(&self, cx: &CallContext, r: CancelTaskRequest) -> Result<Answer, A2aError> {
        let key = TaskKey::new(cx.tenant.clone(), r.id.clone());
        let (task, record) = self.tasks.get(&key).await?.ok_or_else(|| A2aError::task_not_found(&r.id))?;
        if is_terminal(task.status.state) {
            return Err(not_cancelable(&r.id, format!("task {} is already {}", r.id, task.status.state.as_str())));
        }
        let mut remote = false;
        let result = if let Some(result) = self.cancel_turn_here(&key).await {
            result
        } else if let Some((replicas, owner)) = self.remote_owner(&record) {
            remote = true;
            match replicas.cancel_remote(&self.tasks, &key, &owner).await? {
                RemoteCancel::Done(result) => result,
                RemoteCancel::Ended => Ok(()),
                RemoteCancel::NoTurn => self.cancel_without_turn(&key, None).await,
                RemoteCancel::Unanswered => {
                    tracing::warn!(
                        task = %key.id,
                        tenant = %key.tenant,
                        replica = %owner,
                        "the replica running this task's turn did not answer a cancel; the task is canceled here"
                    );
                    let metadata = serde_json::json!({"agentproto": {"cancelUnanswered": {"replica": owner}}});
                    self.cancel_without_turn(&key, RawObject::from_value(&metadata).ok()).await
                }
            }
        } else {
            self.cancel_without_turn(&key, None).await
        };
        match result {
            Ok(()) => {}
            // Lost a race with the task finishing: report it as not cancelable.
            Err(e) if e.kind == ErrorKind::UnsupportedOperation => {
                return Err(not_cancelable(&r.id, format!("task {} finished before it could be canceled", r.id)));
            }
            Err(e) => return Err(e),
        }
        let (task, _) = self.tasks.get(&key).await?.ok_or_else(|| A2aError::task_not_found(&r.id))?;
        if remote && is_terminal(task.status.state) && task.status.state != TaskState::Canceled {
            return Err(not_cancelable(&r.id, format!("task {} finished before it could be canceled", r.id)));
        }
        Ok(Answer::Value(Reply::Task(TaskBody::from_task(Arc::new(task)))))
    }

    /// Cancels the turn of `key` running on this replica: its token fires and the
    /// executor's `cancel` runs. `None` when no turn of the task runs here.
    async fn cancel_turn_here(&self, key: &TaskKey) -> Option<Result<(), A2aError>> {
        let (token, updater) = self.running().get(key).map(|r| (r.cancel.clone(), r.updater.clone()))?;
        token.cancel();
        Some(self.executor.cancel(updater).await)
    }

    /// The replica whose live lease the task carries, when it is another one and this
    /// server can reach it.
    fn remote_owner(&self, record: &TaskRecord) -> Option<(&Arc<Replicas>, String)> {
        let replicas = self.replicas.as_ref()?;
        let lease = record.lease.as_ref()?;
        self.tasks.leases().held_elsewhere(lease).then(|| (replicas, lease.owner.clone()))
    }

    /// Moves a task whose turn runs nowhere (or cannot be reached) to CANCELED.
    async fn cancel_without_turn(&self, key: &TaskKey, metadata: Option<RawObject>) -> Result<(), A2aError> {
        let change = Change::Status(TaskStatus::new(TaskState::Canceled), metadata);
        self.tasks.apply(key, change).await.map(|_| ()).map_err(A2aError::from)
    }
}

impl<E: AgentExecutor> TurnCanceler for Core<E> {
    fn cancel_turn(&self, key: TaskKey) -> BoxFuture<'_, Option<Result<(), A2aError>>> {
        Box::pin(async move { self.cancel_turn_here(&key).await })
    }
}

fn not_cancelable(id: &str, message: String) -> A2aError {
    A2aError::new(ErrorKind::TaskNotCancelable).with_message(message).with("taskId", id)
}
