//! An operation's answer value as the core hands it to a binding: the typed response,
//! or — where a store had only those — its ProtoJSON bytes. The binding encodes it: the
//! JSON-RPC and HTTP+JSON bindings as ProtoJSON ([`Reply::to_json`]), gRPC as protobuf.

use std::io::Write;
use std::sync::Arc;

use super::spliced::Spliced;

use crate::errors::{A2aError, ErrorKind};
use crate::store::{Body, TaskBody};
use crate::tasks::task_event;
use crate::v1::{
    AgentCard, ListTaskPushNotificationConfigsResponse, ListTasksResponse, Message, SendMessageResponse, Task,
    TaskPushNotificationConfig,
};

/// The answer of a unary operation.
#[derive(Clone)]
#[non_exhaustive]
pub enum Reply {
    /// `SendMessage` answered with the task (`SendMessageResponse.task`).
    SendTask(Arc<Task>),
    /// `SendMessage` answered with a direct message (`SendMessageResponse.message`).
    SendMessage(Box<Message>),
    /// `GetTask`, `CancelTask`: the task, as held or as stored.
    Task(TaskBody),
    /// `ListTasks`.
    Tasks(ListTasksResponse),
    /// `CreateTaskPushNotificationConfig`, `GetTaskPushNotificationConfig`: the config,
    /// decoded or as stored.
    PushConfig(Body<TaskPushNotificationConfig>),
    /// `ListTaskPushNotificationConfigs`.
    PushConfigs(ListTaskPushNotificationConfigsResponse),
    /// `GetExtendedAgentCard`.
    Card(Arc<AgentCard>),
    /// `DeleteTaskPushNotificationConfig`: `google.protobuf.Empty`.
    Empty,
}

impl Reply {
    /// `SendMessage`'s answer as a typed response (the task shared, not copied).
    pub fn send_response(response: SendMessageResponse) -> Self {
        match response {
            SendMessageResponse::Task(t) => Reply::SendTask(Arc::new(t)),
            SendMessageResponse::Message(m) => Reply::SendMessage(Box::new(m)),
        }
    }

    /// The answer's ProtoJSON as a body that writes the large texts of a task from the
    /// task as it goes out ([`Spliced`]), or as plain bytes when there is no task.
    pub(crate) fn to_json_spliced(&self) -> Result<Spliced, A2aError> {
        let task = match self {
            Reply::SendTask(task) => Some(&**task),
            Reply::Task(body) => body.decoded().map(|task| &**task),
            _ => None,
        };
        let wrap = matches!(self, Reply::SendTask(_));
        let spliced = task.and_then(|task| {
            Spliced::encode(|w| {
                if wrap {
                    w.write_all(br#"{"task":"#)?;
                }
                serde_json::to_writer(&mut *w, task)?;
                if wrap {
                    w.write_all(b"}")?;
                }
                Ok(())
            })
        });
        match spliced {
            Some(spliced) => Ok(spliced),
            None => self.to_json().map(Spliced::plain),
        }
    }

    /// The answer's ProtoJSON bytes.
    pub fn to_json(&self) -> Result<Vec<u8>, A2aError> {
        let encoded = match self {
            // `{"task":…}` written around the shared task, which may hold megabytes.
            Reply::SendTask(task) => return task_event(task).map_err(A2aError::from),
            Reply::SendMessage(m) => {
                let mut out = Vec::with_capacity(256);
                out.extend_from_slice(br#"{"message":"#);
                serde_json::to_writer(&mut out, m).map(|()| {
                    out.push(b'}');
                    out
                })
            }
            Reply::Task(body) => return Ok(body.bytes()?.to_vec()),
            Reply::Tasks(r) => serde_json::to_vec(r),
            Reply::PushConfig(body) => return Ok(body.bytes()?.to_vec()),
            Reply::PushConfigs(r) => serde_json::to_vec(r),
            Reply::Card(card) => serde_json::to_vec(&**card),
            Reply::Empty => return Ok(b"{}".to_vec()),
        };
        encoded.map_err(|e| A2aError::new(ErrorKind::Internal).with_message(format!("the answer does not encode: {e}")))
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Reply::SendTask(_) => "SendTask",
            Reply::SendMessage(_) => "SendMessage",
            Reply::Task(_) => "Task",
            Reply::Tasks(_) => "Tasks",
            Reply::PushConfig(_) => "PushConfig",
            Reply::PushConfigs(_) => "PushConfigs",
            Reply::Card(_) => "Card",
            Reply::Empty => "Empty",
        };
        f.debug_tuple("Reply").field(&name).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::{Part, PartContent, Role, TaskState, TaskStatus};

    fn task() -> Task {
        let mut t = Task::new("t-1", TaskStatus::new(TaskState::Working));
        t.context_id = "c-1".into();
        t
    }

    #[test]
    fn a_send_answer_encodes_as_the_typed_response_would() {
        let t = task();
        let expected = serde_json::to_vec(&SendMessageResponse::Task(t.clone())).unwrap();
        assert_eq!(Reply::send_response(SendMessageResponse::Task(t)).to_json().unwrap(), expected);
        let m = Message::new("m-1", Role::Agent, vec![Part::new(PartContent::Text("hi".into()))]);
        let expected = serde_json::to_vec(&SendMessageResponse::Message(m.clone())).unwrap();
        assert_eq!(Reply::send_response(SendMessageResponse::Message(m)).to_json().unwrap(), expected);
    }

    #[test]
    fn stored_bytes_go_out_as_they_are() {
        let bytes = br#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}"#.to_vec();
        assert_eq!(Reply::Task(TaskBody::from_bytes(bytes.clone())).to_json().unwrap(), bytes);
        assert_eq!(Reply::Empty.to_json().unwrap(), b"{}");
    }
}
