//! Lines the receiver refuses (bad JSON, bad envelope, unknown method, invalid
//! params) or ignores (invalid or unknown notifications, stray responses).

use agentproto_acp::receive::Finding as Refusal;
use agentproto_acp::v1;
use agentproto_acp::Side;
use agentproto_jsonrpc::Message;

use super::lines::{non_empty, preview, raw_member, string_member};
use super::report::Report;
use super::{receiver, slot, AcpMonitor, Call, MAX_REFUSED_IDS};
use crate::engine::Answer;
use crate::finding::Direction;
use crate::rules;

impl AcpMonitor {
    /// A request the receiver refuses as it stands (bad JSON, bad envelope,
    /// unknown method, invalid params).
    pub(super) fn on_refused(&mut self, report: &mut Report<'_>, reply: &Message, refusal: &Refusal, line: &[u8]) {
        let direction = report.direction;
        let method = string_member(line, "method");
        let session = raw_member(line, "params").and_then(|p| string_member(p.get().as_bytes(), "sessionId"));
        match refusal {
            Refusal::BadEnvelope { code, path, message } => {
                let rule = match (*code, direction) {
                    (-32700, Direction::ToClient) => &rules::NON_JSON_OUTPUT,
                    (-32700, Direction::ToAgent) => &rules::PARSE_ERROR,
                    _ => &rules::INVALID_REQUEST,
                };
                let message = if rule == &rules::NON_JSON_OUTPUT {
                    format!("the agent printed a line that is not JSON: {}", preview(line))
                } else {
                    message.clone()
                };
                report.add(rule, method.as_deref(), None, message).path = non_empty(path);
            }
            Refusal::MethodNotFound(name) => self.unknown_method(report, name, session.as_deref()),
            Refusal::InvalidParams(error) => {
                report.add(&rules::INVALID_PARAMS, method.as_deref(), session.as_deref(), error.message.clone()).path =
                    non_empty(&error.path);
            }
            other => {
                report.add(&rules::INVALID_REQUEST, method.as_deref(), None, format!("{other:?}"));
            }
        }
        // The receiver answers it with an error: that answer must match a request.
        if let Message::Response { id, .. } = reply {
            if !id.is_null() && !self.calls(direction).contains_key(id) {
                match method {
                    Some(method) => {
                        let call = Call { method, session, index: report.index, opened_session: false, unread: false };
                        self.calls(direction).insert(id.clone(), call);
                    }
                    // No method: not a request, yet its error answer carries its id.
                    None => {
                        let refused = &mut self.refused_ids[slot(direction)];
                        if refused.len() < MAX_REFUSED_IDS {
                            refused.insert(id.clone());
                        }
                    }
                }
            }
        }
        // When the receiver cannot tell the line's id, its error answer has `id: null`.
        if let Message::Response { id, .. } = reply {
            if id.is_null() {
                self.null_replies_owed[slot(direction.reverse())] += 1;
            }
        }
    }

    pub(super) fn on_ignored(&mut self, report: &mut Report<'_>, refusal: &Refusal, line: &[u8]) {
        let dropped = match refusal {
            Refusal::InvalidNotification(error) => {
                let method = string_member(line, "method");
                let session = raw_member(line, "params").and_then(|p| string_member(p.get().as_bytes(), "sessionId"));
                report.add(&rules::INVALID_PARAMS, method.as_deref(), session.as_deref(), error.message.clone()).path =
                    non_empty(&error.path);
                true
            }
            Refusal::UnknownNotification(name) => {
                // An unknown `_` extension notification is fine: receivers ignore it.
                if !name.starts_with('_') {
                    self.unknown_method(report, name, None);
                }
                !name.starts_with('_')
            }
            Refusal::UnmatchedResponse(id) => self.unmatched(report, id, line),
            Refusal::InvalidResponse(message) => {
                report.add(&rules::INVALID_RESPONSE, None, None, message.clone());
                true
            }
            other => {
                report.add(&rules::INVALID_REQUEST, None, None, format!("{other:?}"));
                true
            }
        };
        if dropped {
            report.verdict.answer = Some(Answer::Drop);
        }
    }

    fn unknown_method(&self, report: &mut Report<'_>, name: &str, session: Option<&str>) {
        let receiver = receiver(report.direction);
        let known = v1::method::ALL.iter().find(|info| info.name == name);
        match known {
            Some(info) if info.side != receiver => {
                report.add(
                    &rules::WRONG_DIRECTION,
                    Some(name),
                    session,
                    format!("`{name}` is sent to the {}, not by it", info_side(info.side)),
                );
            }
            _ if name.starts_with('_') => {}
            _ => {
                report.add(
                    &rules::UNKNOWN_METHOD,
                    Some(name),
                    session,
                    format!("`{name}` is not an ACP v1 method and not an `_` extension"),
                );
            }
        }
    }
}

fn info_side(side: Side) -> &'static str {
    match side {
        Side::Agent => "agent",
        Side::Client => "client",
        Side::Protocol | Side::Proxy => "other side",
    }
}
