//! Requests and notifications: the initialize phase, capability gates, sessions,
//! prompt turns, cancels, tool calls and permission requests as they are sent.

use agentproto_acp::rules::SessionEffect;
use agentproto_acp::v1;
use agentproto_acp::RequestId;
use serde_json::value::RawValue;

use super::facts::Facts;
use super::lines::{member, raw_member};
use super::report::Report;
use super::{before_initialize_message, receiver, AcpMonitor, Call, Phase, Pipelined, Session};
use crate::finding::Direction;
use crate::rules;

impl AcpMonitor {
    /// The capability findings of request number `index`, against the
    /// receiver's `initialize` message, through the SDK's generated gate table as
    /// the receiving role applies it.
    pub(super) fn check_capabilities(
        &self,
        report: &mut Report<'_>,
        index: u64,
        direction: Direction,
        method: &str,
        session: Option<&str>,
        params: Option<&RawValue>,
    ) {
        let init = match direction {
            Direction::ToAgent => &self.agent_init,
            Direction::ToClient => &self.client_init,
        };
        let row = agentproto_acp::rules::request(v1::method::ALL, receiver(direction), method);
        if let Some(gate) = row.and_then(|row| row.gate) {
            if !gate.is_open(init, params) {
                let capability = gate.describe(params);
                report.add_for(
                    index,
                    direction,
                    &rules::CAPABILITY_NOT_ADVERTISED,
                    Some(method),
                    session,
                    format!("`{method}` needs `{capability}`, which was not advertised"),
                );
            }
        }
        // Prompt content and MCP server kinds: each item against the receiver's capabilities.
        if let Some(refused) = row.and_then(|row| agentproto_acp::rules::refused_value(row, init, params)) {
            report.add_for(
                index,
                direction,
                &rules::CAPABILITY_NOT_ADVERTISED,
                Some(method),
                session,
                format!("`{method}` at {}: {}", refused.path, refused.reason()),
            );
        }
    }

    pub(super) fn on_request(
        &mut self,
        report: &mut Report<'_>,
        id: RequestId,
        method: &str,
        session: Option<String>,
        line: &[u8],
    ) {
        let direction = report.direction;
        let sender = direction.sender();
        if self.calls(direction).contains_key(&id) {
            report.add(
                &rules::DUPLICATE_REQUEST_ID,
                Some(method),
                session.as_deref(),
                format!("the {sender} reused id {id} while its earlier request with that id is unanswered"),
            );
            return;
        }
        let mut opened_session = false;
        if method == "initialize" {
            if self.phase == Phase::Fresh {
                self.phase = Phase::Initializing;
                self.client_init = member(line, &["params"]);
            } else {
                report.add(
                    &rules::DUPLICATE_INITIALIZE,
                    Some(method),
                    None,
                    "`initialize` was already sent on this connection".to_owned(),
                );
            }
        } else if self.before_initialize(direction) {
            report.add(
                &rules::MESSAGE_BEFORE_INITIALIZE,
                Some(method),
                session.as_deref(),
                before_initialize_message(direction, method),
            );
        } else {
            let row = agentproto_acp::rules::request(v1::method::ALL, receiver(direction), method);
            // The raw params are read again only for a method whose rule row looks at them.
            let gated = row.is_some_and(|row| row.gate.is_some() || !row.values.is_empty());
            let params = if gated { raw_member(line, "params") } else { None };
            let index = report.index;
            if self.phase == Phase::Ready {
                self.check_capabilities(report, index, direction, method, session.as_deref(), params.as_deref());
            } else {
                // Pipelined after `initialize` (only the client gets here): JSON-RPC
                // allows it and the agent serves it once `initialize` has finished.
                // What the agent advertises is known from its answer; check then.
                let session = session.clone();
                self.pipelined.push(Pipelined { index, method: method.to_owned(), session, params });
            }
            let session_rule = row.and_then(|row| row.session);
            if let Some(session) = &session {
                if !self.sessions.contains_key(session) {
                    if session_rule.is_some_and(|rule| rule.unseen_ok) {
                        opened_session =
                            session_rule.and_then(|rule| rule.effect) == Some(SessionEffect::OpenedByParams);
                        if opened_session {
                            // Updates replaying the session's history may arrive before the answer.
                            self.sessions.insert(session.clone(), Session::default());
                        }
                    } else {
                        report.add(
                            &rules::UNKNOWN_SESSION,
                            Some(method),
                            Some(session),
                            format!("session `{session}` was never created, loaded or resumed on this connection"),
                        );
                    }
                }
            }
            // The session gates of the SDK's table: `session/set_mode` for a session
            // whose opening answer carried no `modes`.
            if let (Some(gate), Some(session)) = (row.and_then(|row| row.session_gate), session.as_deref()) {
                let announced = self.sessions.get(session).and_then(|state| state.announced.as_ref());
                if announced.is_some_and(|members| !members.contains(&gate.member)) {
                    report
                        .add(
                            &rules::SESSION_NOT_ANNOUNCED,
                            Some(method),
                            Some(session),
                            format!(
                                "`{method}` needs `{}`, which the answer that opened session `{session}` did not announce",
                                gate.member
                            ),
                        )
                        .path = Some("$.params.sessionId".to_owned());
                }
            }
            if let Some(state) = session.as_deref().and_then(|s| self.sessions.get_mut(s)) {
                match method {
                    "session/prompt" => {
                        for (permission, cancelled) in state.permissions.drain() {
                            if cancelled {
                                report.add(
                                    &rules::PERMISSION_UNANSWERED_AFTER_CANCEL,
                                    Some("session/request_permission"),
                                    session.as_deref(),
                                    format!("a new prompt started while permission request {permission} of the cancelled turn is unanswered"),
                                );
                                self.to_client.remove(&permission);
                            }
                        }
                        if let Some((running, _)) = &state.prompt {
                            report.add(
                                &rules::PROMPT_ALREADY_IN_FLIGHT,
                                Some(method),
                                session.as_deref(),
                                format!("prompt {running} of this session is still unanswered"),
                            );
                        } else {
                            state.prompt = Some((id.clone(), false));
                            state.turn_over = false;
                        }
                    }
                    "session/request_permission" => {
                        state.permissions.insert(id.clone(), false);
                    }
                    _ => {}
                }
            }
        }
        let call = Call { method: method.to_owned(), session, index: report.index, opened_session, unread: false };
        self.calls(direction).insert(id, call);
    }

    pub(super) fn on_notification(
        &mut self,
        report: &mut Report<'_>,
        method: &str,
        session: Option<&str>,
        payload: &impl Facts,
    ) {
        if method == "$/cancel_request" {
            return;
        }
        let direction = report.direction;
        if self.before_initialize(direction) {
            report.add(
                &rules::MESSAGE_BEFORE_INITIALIZE,
                Some(method),
                session,
                before_initialize_message(direction, method),
            );
            return;
        }
        let Some(session) = session else { return };
        let Some(state) = self.sessions.get_mut(session) else {
            report.add(
                &rules::UNKNOWN_SESSION,
                Some(method),
                Some(session),
                format!("session `{session}` was never created, loaded or resumed on this connection"),
            );
            return;
        };
        if method == "session/cancel" {
            if let Some((_, cancelled)) = &mut state.prompt {
                *cancelled = true;
            }
            for cancelled in state.permissions.values_mut() {
                *cancelled = true;
            }
            return;
        }
        let Some(update) = payload.update() else { return };
        if update.turn_content && state.turn_over {
            report.add(
                &rules::UPDATE_AFTER_PROMPT_RESPONSE,
                Some(method),
                Some(session),
                "turn content arrived after the session's prompt was answered".to_owned(),
            );
        }
        match update.tool_call {
            Some((id, false)) => {
                state.tool_calls.insert(id.to_owned());
            }
            Some((id, true)) if !state.tool_calls.contains(id) => {
                report
                    .add(
                        &rules::UNKNOWN_TOOL_CALL,
                        Some(method),
                        Some(session),
                        format!("`tool_call_update` for `{id}`, which no `tool_call` announced"),
                    )
                    .path = Some("$.params.update.toolCallId".to_owned());
            }
            _ => {}
        }
    }
}
