//! Responses: what an answer settles (initialize, sessions, prompt turns,
//! permission requests), and answers whose id no request seen is waiting for.

use agentproto_acp::rules::{self as rules_of_acp, SessionEffect};
use agentproto_acp::v1;
use agentproto_acp::{Handshake, RequestId};
use agentproto_jsonrpc::ErrorObject;

use super::facts::Facts;
use super::lines::{member, raw_member};
use super::report::Report;
use super::{receiver, slot, take_one, AcpMonitor, Call, Phase, Pipelined};
use crate::finding::Direction;
use crate::rules;

impl AcpMonitor {
    pub(super) fn on_response(
        &mut self,
        report: &mut Report<'_>,
        id: &RequestId,
        call: Call,
        result: Result<&impl Facts, &ErrorObject>,
    ) {
        let session = call.session.as_deref();
        // The answer travels back: the request was handled by its sender.
        let handler = receiver(report.direction.reverse());
        match (call.method.as_str(), &result) {
            ("initialize", Ok(_)) => {
                self.phase = Phase::Ready;
                let agent = result.as_ref().ok().and_then(|result| result.agent_initialize()).cloned();
                self.handshake = agent.zip(self.client_init.take()).map(|(agent, client)| Handshake { client, agent });
                for request in std::mem::take(&mut self.pipelined) {
                    let Pipelined { index, session, request } = request;
                    let method = request.method().to_owned();
                    self.check_capabilities(report, index, Direction::ToAgent, &request, &method, session.as_deref());
                }
            }
            ("initialize", Err(_)) => {
                self.phase = Phase::Fresh;
                // The agent refuses what was pipelined after a failed `initialize`.
                self.pipelined.clear();
            }
            (method, Ok(payload)) => match rules_of_acp::session_effect(v1::method::ALL, handler, method) {
                Some(SessionEffect::CreatedByResult) => {
                    if let Some(created) = payload.created_session() {
                        self.sessions.entry(created.to_owned()).or_default().announced = Some(payload.announced());
                    }
                }
                Some(SessionEffect::Removed) => {
                    if let Some(session) = session {
                        self.sessions.remove(session);
                    }
                }
                // Opened when the request was seen, so that replayed history counts;
                // what the answer announced replaces what an earlier one did.
                Some(SessionEffect::OpenedByParams) => {
                    if let Some(state) = session.and_then(|s| self.sessions.get_mut(s)) {
                        state.announced = Some(payload.announced());
                    }
                }
                None => {}
            },
            (_, Err(_)) => self.forget_failed_open(&call),
        }
        let Some(state) = session.and_then(|s| self.sessions.get_mut(s)) else { return };
        match call.method.as_str() {
            "session/prompt" => {
                let Some((running, cancelled)) = state.prompt.take() else { return };
                if &running != id {
                    state.prompt = Some((running, cancelled));
                    return;
                }
                state.turn_over = true;
                let honoured = matches!(result, Ok(payload) if payload.prompt_cancelled() == Some(true));
                if cancelled && !honoured {
                    let ended = match result {
                        Ok(_) => "with another stop reason".to_owned(),
                        Err(error) => format!("with error {}", error.code.0),
                    };
                    report.add(
                        &rules::CANCEL_NOT_HONOURED,
                        Some("session/prompt"),
                        session,
                        format!("the prompt was cancelled but ended {ended}, not `stopReason: \"cancelled\"`"),
                    );
                }
            }
            "session/request_permission" => {
                if let Some(true) = state.permissions.remove(id) {
                    if let Ok(payload) = result {
                        if payload.permission_cancelled() == Some(false) {
                            report.add(
                                &rules::PERMISSION_NOT_CANCELLED,
                                Some("session/request_permission"),
                                session,
                                format!("permission request {id} was answered with a selection after its session was cancelled"),
                            )
                            .path = Some("$.result.outcome".to_owned());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// A failed `session/load`/`resume` of a session this connection did not know.
    pub(super) fn forget_failed_open(&mut self, call: &Call) {
        if call.opened_session {
            if let Some(session) = &call.session {
                self.sessions.remove(session);
            }
        }
    }

    /// A response whose id no request seen is waiting for; `true` when a strict
    /// proxy drops it. Four kinds of answer are expected although no request
    /// with their id was seen: the answer to an over-limit request (its id read
    /// from the head, or not at all), the error answering a line with an id but
    /// no method, and a `null`-id error after an unparsable or invalid line. An error with `id: null` that follows no such line is
    /// reported as unprompted (a warning: valid JSON-RPC, and it settles
    /// nothing, but the peer refused something the inspector saw as fine, or
    /// saw nothing of); any other stray is an unknown id.
    pub(super) fn unmatched(&mut self, report: &mut Report<'_>, id: &RequestId, line: &[u8]) -> bool {
        let direction = report.direction;
        let asker = direction.reverse();
        if self.calls(asker).get(id).is_some_and(|call| call.unread) {
            self.calls(asker).remove(id);
            return false;
        }
        if self.refused_ids[slot(asker)].remove(id) {
            return false; // the answer to a line that was no request
        }
        let null_error = id.is_null() && raw_member(line, "error").is_some();
        if null_error && take_one(&mut self.null_replies_owed[slot(direction)]) {
            return false;
        }
        if take_one(&mut self.unread_lines[slot(asker)]) {
            return false;
        }
        if null_error {
            let code = member(line, &["error", "code"]);
            report.add(
                &rules::UNPROMPTED_NULL_ID_ERROR,
                None,
                None,
                format!(
                    "the {} sent error {code} with id null, but no line it received was unparsable, invalid or over the size limit",
                    direction.sender()
                ),
            );
            return false;
        }
        report.add(
            &rules::UNKNOWN_RESPONSE_ID,
            None,
            None,
            format!("the {} answered id {id}, which no unanswered request has", direction.sender()),
        );
        true
    }

    /// A call whose answer was over the size limit: the call is over, what the
    /// answer said is unknown.
    pub(super) fn settle_unread_answer(&mut self, id: &RequestId, call: &Call) {
        let Some(state) = call.session.as_deref().and_then(|s| self.sessions.get_mut(s)) else { return };
        if state.prompt.as_ref().is_some_and(|(running, _)| running == id) {
            state.prompt = None;
            state.turn_over = true;
        }
        state.permissions.remove(id);
    }
}
