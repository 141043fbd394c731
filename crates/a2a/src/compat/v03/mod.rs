//! Converters between the A2A 0.3 JSON shapes and the 1.0 ProtoJSON shapes.
//!
//! Every conversion is JSON in, JSON out, and goes both ways through the same table:
//! [`to_v1`] and [`to_v03`] for single types, [`Method`] for the params and results of
//! each 0.3 JSON-RPC method. Bad input is an InvalidParams [`A2aError`] whose message and
//! `path` metadata name the JSON path of the offending value.
//!
//! What 1.0 cannot say is dropped on the way up (0.3 `metadata` on query params, all but
//! the first push authentication scheme, all but one OAuth flow, `stateTransitionHistory`,
//! `final`), and what 0.3 cannot say is dropped on the way down (`tenant`, `mediaType` and
//! `filename` on text and data parts, `pkceRequired`, device-code flows). A 1.0 data part
//! whose value is not an object becomes `{"value": …}`, since 0.3 data parts hold objects.
//!
//! `blocking`: the 0.3 schema gives no default and the 0.3 SDKs blocked unless told
//! `blocking: false`, which is also 1.0's default (`returnImmediately: false`). So an
//! absent `blocking` stays absent, and a present one becomes `returnImmediately: !blocking`
//! (written even when false, so that the round trip keeps it).

mod custom;
mod engine;
#[cfg(test)]
mod tests;

use serde_json::Value;

use self::engine::convert;
pub use self::engine::Direction;
use crate::errors::A2aError;
use crate::generated::v03 as g;
use crate::generated::v03::Shape;
pub use crate::generated::v03::{Method, METHODS};
use crate::v1::Operation;

/// The A2A types the converters know, named as in 0.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Type {
    /// 0.3 `Message` ↔ 1.0 `Message`.
    Message,
    /// 0.3 `Part` (`kind`-tagged) ↔ 1.0 `Part`.
    Part,
    /// 0.3 `Artifact` ↔ 1.0 `Artifact`.
    Artifact,
    /// 0.3 `TaskStatus` ↔ 1.0 `TaskStatus`.
    TaskStatus,
    /// 0.3 `Task` ↔ 1.0 `Task`.
    Task,
    /// 0.3 `TaskStatusUpdateEvent` ↔ 1.0 `TaskStatusUpdateEvent`.
    TaskStatusUpdateEvent,
    /// 0.3 `TaskArtifactUpdateEvent` ↔ 1.0 `TaskArtifactUpdateEvent`.
    TaskArtifactUpdateEvent,
    /// One event of a 0.3 stream (Task, Message, status or artifact update) ↔ 1.0
    /// `StreamResponse`.
    StreamEvent,
    /// The result of `message/send` (Task or Message) ↔ 1.0 `SendMessageResponse`.
    SendMessageResult,
    /// 0.3 `PushNotificationConfig` ↔ 1.0 `TaskPushNotificationConfig` without a task id.
    PushNotificationConfig,
    /// 0.3 `TaskPushNotificationConfig {taskId, pushNotificationConfig}` ↔ the flat 1.0 one.
    TaskPushNotificationConfig,
    /// 0.3 `MessageSendParams` ↔ 1.0 `SendMessageRequest`.
    MessageSendParams,
    /// 0.3 `AgentCard` ↔ 1.0 `AgentCard`.
    AgentCard,
}

impl Type {
    fn shape(self) -> &'static Shape {
        match self {
            Type::Message => &g::MESSAGE,
            Type::Part => &g::PART,
            Type::Artifact => &g::ARTIFACT,
            Type::TaskStatus => &g::TASK_STATUS,
            Type::Task => &g::TASK,
            Type::TaskStatusUpdateEvent => &g::TASK_STATUS_UPDATE_EVENT,
            Type::TaskArtifactUpdateEvent => &g::TASK_ARTIFACT_UPDATE_EVENT,
            Type::StreamEvent => &g::STREAM_EVENT,
            Type::SendMessageResult => &g::SEND_MESSAGE_RESULT,
            Type::PushNotificationConfig => &g::PUSH_NOTIFICATION_CONFIG,
            Type::TaskPushNotificationConfig => &g::TASK_PUSH_NOTIFICATION_CONFIG,
            Type::MessageSendParams => &g::MESSAGE_SEND_PARAMS,
            Type::AgentCard => &g::AGENT_CARD,
        }
    }
}

/// Converts a 0.3 value of type `ty` to its 1.0 ProtoJSON form (error paths start at `$`).
pub fn to_v1(ty: Type, value: &Value) -> Result<Value, A2aError> {
    convert(ty.shape(), Direction::ToV1, value, "$")
}

/// Converts a 1.0 ProtoJSON value of type `ty` to its 0.3 form (error paths start at `$`).
pub fn to_v03(ty: Type, value: &Value) -> Result<Value, A2aError> {
    convert(ty.shape(), Direction::ToV03, value, "$")
}

/// Converts in either direction, with error paths starting at `root`.
pub fn convert_at(ty: Type, dir: Direction, value: &Value, root: &str) -> Result<Value, A2aError> {
    convert(ty.shape(), dir, value, root)
}

impl std::fmt::Debug for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Method").field("name", &self.name).field("operation", &self.operation).finish()
    }
}

/// The 0.3 method with this name.
pub fn method(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|m| m.name == name)
}

/// The 0.3 method of a 1.0 operation (`None` for ListTasks).
pub fn method_for(op: Operation) -> Option<&'static Method> {
    METHODS.iter().find(|m| m.operation == op)
}

/// The 1.0 operation a 0.3 method name denotes.
pub fn operation(name: &str) -> Option<Operation> {
    method(name).map(|m| m.operation)
}

impl Method {
    /// 0.3 params → 1.0 request (paths start at `$.params`; absent params are `null`).
    pub fn params_to_v1(&self, params: &Value) -> Result<Value, A2aError> {
        convert(self.params, Direction::ToV1, params, "$.params")
    }

    /// 1.0 request → 0.3 params.
    pub fn params_to_v03(&self, params: &Value) -> Result<Value, A2aError> {
        convert(self.params, Direction::ToV03, params, "$.params")
    }

    /// 1.0 response → 0.3 result; for the streaming methods, one event.
    pub fn result_to_v03(&self, result: &Value) -> Result<Value, A2aError> {
        convert(self.result, Direction::ToV03, result, "$.result")
    }

    /// 0.3 result → 1.0 response; for the streaming methods, one event.
    pub fn result_to_v1(&self, result: &Value) -> Result<Value, A2aError> {
        convert(self.result, Direction::ToV1, result, "$.result")
    }

    /// Whether the answer is a stream of events.
    pub fn streaming(&self) -> bool {
        self.operation.streaming()
    }
}

/// Whether a 0.3 stream event closes the stream: a status update whose `final` is true,
/// or whose state is terminal or interrupted.
pub fn is_final_event(event: &Value) -> bool {
    event.get("kind").and_then(Value::as_str) == Some("status-update")
        && (event.get("final").and_then(Value::as_bool) == Some(true)
            || event
                .pointer("/status/state")
                .and_then(Value::as_str)
                .is_some_and(|s| custom::FINAL_STATES.contains(&s)))
}
