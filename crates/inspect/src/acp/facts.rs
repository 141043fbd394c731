//! What the monitor reads from a decoded payload beyond its method and session.

use agentproto_acp::v1::{
    self, AgentNotification, AgentResponse, ClientResponse, RequestPermissionOutcome, SessionUpdate, StopReason,
};

/// What the monitor needs to know from a decoded payload, beyond its method and session.
pub(super) trait Facts {
    /// For `session/update`: what kind of update.
    fn update(&self) -> Option<Update<'_>> {
        None
    }
    /// For a `session/prompt` result: whether it says `cancelled`.
    fn prompt_cancelled(&self) -> Option<bool> {
        None
    }
    /// For a `session/request_permission` result: whether the outcome is `cancelled`.
    fn permission_cancelled(&self) -> Option<bool> {
        None
    }
    /// For a `session/new` result: the new session.
    fn created_session(&self) -> Option<&str> {
        None
    }
}

pub(super) struct Update<'a> {
    /// Part of a turn's output (messages, thoughts, tool calls, plans).
    pub(super) turn_content: bool,
    /// A tool call announced, or updated (`true`).
    pub(super) tool_call: Option<(&'a str, bool)>,
}

impl Facts for v1::ClientRequest {}
impl Facts for v1::ClientNotification {}
impl Facts for v1::AgentRequest {}

impl Facts for AgentNotification {
    fn update(&self) -> Option<Update<'_>> {
        let AgentNotification::SessionUpdate(notification) = self else { return None };
        let mut update = Update { turn_content: false, tool_call: None };
        match &notification.update {
            SessionUpdate::AgentMessageChunk(_) | SessionUpdate::AgentThoughtChunk(_) | SessionUpdate::Plan(_) => {
                update.turn_content = true;
            }
            SessionUpdate::ToolCall(call) => {
                update.turn_content = true;
                update.tool_call = Some((call.tool_call_id.as_str(), false));
            }
            SessionUpdate::ToolCallUpdate(call) => {
                update.turn_content = true;
                update.tool_call = Some((call.tool_call_id.as_str(), true));
            }
            _ => {}
        }
        Some(update)
    }
}

impl Facts for AgentResponse {
    fn prompt_cancelled(&self) -> Option<bool> {
        match self {
            AgentResponse::SessionPrompt(response) => Some(response.stop_reason == StopReason::Cancelled),
            _ => None,
        }
    }

    fn created_session(&self) -> Option<&str> {
        match self {
            AgentResponse::SessionNew(response) => Some(response.session_id.as_str()),
            _ => None,
        }
    }
}

impl Facts for ClientResponse {
    fn permission_cancelled(&self) -> Option<bool> {
        match self {
            ClientResponse::SessionRequestPermission(response) => {
                Some(matches!(response.outcome, RequestPermissionOutcome::Cancelled))
            }
            _ => None,
        }
    }
}
