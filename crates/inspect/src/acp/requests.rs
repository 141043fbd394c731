//! Requests and notifications: the initialize phase, capability gates, sessions,
//! prompt turns, cancels, tool calls and permission requests as they are sent.

use agentproto_acp::rules::Refusal;
use agentproto_acp::rules::SessionEffect;
use agentproto_acp::RequestId;

use super::facts::Facts;
use super::report::Report;
use super::{before_initialize_message, AcpMonitor, Call, Phase, Pipelined, Session};
use crate::finding::Direction;
use crate::rules;

impl AcpMonitor {
    /// The capability findings of request number `index`, through the SDK's
    /// generated rule code on the typed request, as its receiver applies it.
    pub(super) fn check_capabilities(
        &self,
        report: &mut Report<'_>,
        index: u64,
        direction: Direction,
        request: &impl Facts,
        method: &str,
        session: Option<&str>,
    ) {
        let Some(handshake) = &self.handshake else { return };
        let Some(refusal) = request.refusal(handshake) else { return };
        let what = match &refusal {
            Refusal::ValueNotAdvertised { path, .. } => format!("`{method}` at {path}: {}", refusal.reason()),
            _ => match refusal.capability() {
                Some(capability) => format!("`{method}` needs `{capability}`, which was not advertised"),
                None => format!("`{method}`: {}", refusal.reason()),
            },
        };
        report.add_for(index, direction, &rules::CAPABILITY_NOT_ADVERTISED, Some(method), session, what);
    }

    pub(super) fn on_request(
        &mut self,
        report: &mut Report<'_>,
        id: RequestId,
        request: &impl Facts,
        method: &str,
        session: Option<String>,
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
                self.client_init = request.client_initialize().cloned();
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
            let index = report.index;
            if self.phase == Phase::Ready {
                self.check_capabilities(report, index, direction, request, method, session.as_deref());
            } else if let Some(request) = request.client_request() {
                // Pipelined after `initialize` (only the client gets here): JSON-RPC
                // allows it and the agent serves it once `initialize` has finished.
                // What the agent advertises is known from its answer; check then.
                let session = session.clone();
                self.pipelined.push(Pipelined { index, session, request: request.clone() });
            }
            let session_rule = request.session_rule();
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
            if let (Some(gate), Some(session)) = (request.session_gate(), session.as_deref()) {
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
