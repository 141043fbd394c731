//! What the monitor reads from a decoded payload beyond its method and session.

use agentproto_acp::rules::{Refusal, RequestRules, ResponseRules, SessionGate, SessionRule};
use agentproto_acp::v1::{
    self, AgentNotification, AgentResponse, ClientRequest, ClientResponse, RequestPermissionOutcome, SessionUpdate,
    StopReason, V1,
};
use agentproto_acp::Handshake;

/// What the monitor needs to know from a decoded payload, beyond its method and session.
/// The protocol rules' parts come from the SDK's generated rule code on the typed value.
pub(super) trait Facts {
    /// For a request: why its receiver, given both `initialize` messages, must refuse it.
    fn refusal(&self, handshake: &Handshake<V1>) -> Option<Refusal> {
        let _ = handshake;
        None
    }
    /// For a request: what a success does to the known sessions.
    fn session_rule(&self) -> Option<SessionRule> {
        None
    }
    /// For a request: what the answer that opened its session must have announced.
    fn session_gate(&self) -> Option<SessionGate> {
        None
    }
    /// For a request the client sends: itself (kept while `initialize` is unanswered).
    fn client_request(&self) -> Option<&ClientRequest> {
        None
    }
    /// For `initialize` sent by the client: its params.
    fn client_initialize(&self) -> Option<&v1::InitializeRequest> {
        None
    }
    /// For the agent's `initialize` result: the result.
    fn agent_initialize(&self) -> Option<&v1::InitializeResponse> {
        None
    }
    /// For a result that creates or opens a session: what it announces for it.
    fn announced(&self) -> Vec<&'static str> {
        Vec::new()
    }
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

/// The rule parts every request has, from the SDK's generated `RequestRules`.
macro_rules! request_rules {
    () => {
        fn refusal(&self, handshake: &Handshake<V1>) -> Option<Refusal> {
            RequestRules::refusal(self, handshake)
        }
        fn session_rule(&self) -> Option<SessionRule> {
            RequestRules::session_rule(self)
        }
        fn session_gate(&self) -> Option<SessionGate> {
            RequestRules::session_gate(self)
        }
    };
}

impl Facts for ClientRequest {
    request_rules!();
    fn client_request(&self) -> Option<&ClientRequest> {
        Some(self)
    }
    fn client_initialize(&self) -> Option<&v1::InitializeRequest> {
        RequestRules::initialize(self)
    }
}

impl Facts for v1::ClientNotification {}

impl Facts for v1::AgentRequest {
    request_rules!();
}

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
        ResponseRules::created_session(self)
    }

    fn agent_initialize(&self) -> Option<&v1::InitializeResponse> {
        ResponseRules::initialize(self)
    }

    fn announced(&self) -> Vec<&'static str> {
        ResponseRules::announced(self)
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
