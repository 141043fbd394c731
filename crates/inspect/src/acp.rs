//! The ACP v1 monitor: the codec's validation of every message, plus the
//! protocol's state machine, watched from outside the connection.
//!
//! Each line goes through `agentproto_acp::receive::classify` (the same receive
//! path the SDK's connections run) as the receiving side would see it; the
//! monitor then follows the state both peers should agree on: the initialize
//! phase, each side's unanswered requests, the sessions, their prompt turns, tool
//! calls and permission requests.

use std::collections::{HashMap, HashSet};

use agentproto_acp::receive::{classify, AgentV1, CallFailure, ClientV1, Finding as Refusal, Incoming, Role};
use agentproto_acp::rules::{SessionEffect, SessionRule};
use agentproto_acp::v1::{
    self, AgentNotification, AgentResponse, ClientResponse, RequestPermissionOutcome, SessionUpdate, StopReason,
};
use agentproto_acp::{MethodKind, Payload, RequestId, Side, Warning, WarningKind};
use agentproto_jsonrpc::{ErrorCode, ErrorObject, Message};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::engine::{Answer, Monitor, Verdict};
use crate::finding::{Direction, Finding};
use crate::rules::{self, Rule};

/// The ACP v1 state machine. See the module documentation.
#[derive(Debug, Default)]
pub struct AcpMonitor {
    phase: Phase,
    /// Each side's `initialize` message, where the capability paths of the
    /// SDK's gate table start (`Null` until seen).
    client_init: Value,
    agent_init: Value,
    /// Requests from the client the agent has not answered.
    to_agent: HashMap<RequestId, Call>,
    /// Requests from the agent the client has not answered.
    to_client: HashMap<RequestId, Call>,
    sessions: HashMap<String, Session>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    #[default]
    Fresh,
    /// `initialize` sent, not answered yet.
    Initializing,
    Ready,
}

/// An unanswered request.
#[derive(Debug)]
struct Call {
    method: String,
    session: Option<String>,
    index: u64,
    /// `session/load` or `session/resume` of a session this connection did not
    /// know: forgotten again if the call fails.
    opened_session: bool,
}

#[derive(Debug, Default)]
struct Session {
    /// The prompt in flight, and whether `session/cancel` was sent for it.
    prompt: Option<(RequestId, bool)>,
    /// A prompt was answered and no new one started: turn content now is late.
    turn_over: bool,
    tool_calls: HashSet<String>,
    /// Unanswered permission requests: id → cancelled while pending.
    permissions: HashMap<RequestId, bool>,
}

/// What the monitor needs to know from a decoded payload, beyond its method and session.
trait Facts {
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

struct Update<'a> {
    /// Part of a turn's output (messages, thoughts, tool calls, plans).
    turn_content: bool,
    /// A tool call announced, or updated (`true`).
    tool_call: Option<(&'a str, bool)>,
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

/// Findings of one message, with its index and direction filled in.
struct Report<'a> {
    index: u64,
    direction: Direction,
    verdict: &'a mut Verdict,
}

impl Report<'_> {
    fn add(
        &mut self,
        rule: &'static Rule,
        method: Option<&str>,
        session: Option<&str>,
        message: String,
    ) -> &mut Finding {
        let mut finding = Finding::new(rule, self.index, Some(self.direction), message).session(session);
        finding.method = method.map(str::to_owned);
        self.verdict.findings.push(finding);
        self.verdict.findings.last_mut().expect("just pushed")
    }

    fn warnings(&mut self, method: &str, session: Option<&str>, warnings: &[Warning]) {
        for warning in warnings {
            let rule = match warning.kind {
                WarningKind::Salvaged => &rules::LENIENT_VALUE_DROPPED,
                WarningKind::UnknownVariant => &rules::UNKNOWN_VARIANT,
            };
            self.add(rule, Some(method), session, warning.message.clone()).path = Some(warning.path.clone());
        }
    }
}

impl Monitor for AcpMonitor {
    fn observe(&mut self, index: u64, direction: Direction, line: &[u8]) -> Verdict {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Verdict::default();
        }
        match direction {
            Direction::ToAgent => self.observe_as::<AgentV1>(index, direction, line),
            Direction::ToClient => self.observe_as::<ClientV1>(index, direction, line),
        }
    }

    fn oversize(&mut self, index: u64, direction: Direction, len: usize) -> Verdict {
        let mut verdict = Verdict { findings: Vec::new(), answer: Some(Answer::Drop) };
        Report { index, direction, verdict: &mut verdict }.add(
            &rules::MAX_MESSAGE_BYTES,
            None,
            None,
            format!("a {len}-byte message from the {} was not read", direction.sender()),
        );
        verdict
    }

    fn finish(&mut self, index: u64) -> Vec<Finding> {
        let mut findings = Vec::new();
        let mut left: Vec<(&RequestId, &Call, Direction)> = self
            .to_agent
            .iter()
            .map(|(id, call)| (id, call, Direction::ToAgent))
            .chain(self.to_client.iter().map(|(id, call)| (id, call, Direction::ToClient)))
            .collect();
        left.sort_by_key(|(_, call, _)| call.index);
        for (id, call, direction) in left {
            let session = call.session.as_deref().and_then(|s| self.sessions.get(s));
            let cancelled = session.and_then(|s| s.permissions.get(id)).copied().unwrap_or(false);
            let (rule, message) = if cancelled {
                (
                    &rules::PERMISSION_UNANSWERED_AFTER_CANCEL,
                    format!(
                        "permission request {id} (message #{}) was never answered after its session was cancelled",
                        call.index
                    ),
                )
            } else {
                (
                    &rules::REQUEST_NEVER_ANSWERED,
                    format!(
                        "`{}` request {id} (message #{}) from the {} was never answered",
                        call.method,
                        call.index,
                        direction.sender()
                    ),
                )
            };
            let mut finding = Finding::new(rule, index, Some(direction), message).method(call.method.clone());
            finding.session = call.session.clone();
            findings.push(finding);
        }
        findings
    }
}

impl AcpMonitor {
    fn calls(&mut self, direction: Direction) -> &mut HashMap<RequestId, Call> {
        match direction {
            Direction::ToAgent => &mut self.to_agent,
            Direction::ToClient => &mut self.to_client,
        }
    }

    fn observe_as<R>(&mut self, index: u64, direction: Direction, line: &[u8]) -> Verdict
    where
        R: Role,
        R::Request: Facts,
        R::Notification: Facts,
        R::Response: Facts,
    {
        let incoming = {
            // Responses in this direction answer the other side's requests.
            let pending = self.calls(direction.reverse());
            classify::<R>(line, |id| pending.get(id).map(|call| call.method.clone()))
        };
        let mut verdict = Verdict::default();
        let mut report = Report { index, direction, verdict: &mut verdict };
        match incoming {
            Incoming::Request { id, request } => {
                let method = request.value.method().to_owned();
                let session = request.value.session_id().map(str::to_owned);
                report.warnings(&method, session.as_deref(), &request.warnings);
                self.on_request(&mut report, id, &method, session, line);
            }
            Incoming::Notification(notification) => {
                let method = notification.value.method().to_owned();
                let session = notification.value.session_id().map(str::to_owned);
                report.warnings(&method, session.as_deref(), &notification.warnings);
                self.on_notification(&mut report, &method, session.as_deref(), &notification.value);
            }
            Incoming::Response { id, method, result } => {
                let call = self.calls(direction.reverse()).remove(&id);
                if let Ok(decoded) = &result {
                    report.warnings(&method, None, &decoded.warnings);
                }
                if let Some(call) = call {
                    let result = result.as_ref().map(|decoded| &decoded.value);
                    self.on_response(&mut report, &id, call, result, line);
                }
            }
            Incoming::CallFailed { id, method, error } => {
                let call = self.calls(direction.reverse()).remove(&id);
                let session = call.as_ref().and_then(|call| call.session.clone());
                if let Some(call) = call {
                    self.forget_failed_open(&call);
                }
                let (rule, what) = match &error {
                    CallFailure::InvalidResult(e) => (&rules::INVALID_RESULT, e.message.clone()),
                    CallFailure::InvalidResponse { message, .. } => (&rules::INVALID_RESPONSE, message.clone()),
                };
                report.add(rule, Some(&method), session.as_deref(), what).path = Some(error.path().to_owned());
                let error = ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!(
                        "the {} sent an invalid answer to `{method}`; the inspector withheld it",
                        direction.sender()
                    ),
                );
                report.verdict.answer = Some(Answer::ToReceiver(Message::response(id, Err(error)).to_vec()));
            }
            Incoming::Reply { reply, finding } => {
                self.on_refused(&mut report, &reply, &finding, line);
                report.verdict.answer = Some(Answer::ToSender(reply.to_vec()));
            }
            Incoming::Ignored(finding) => {
                self.on_ignored(&mut report, &finding, line);
            }
        }
        verdict
    }

    fn on_request(
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
        } else if self.phase != Phase::Ready {
            report.add(
                &rules::INITIALIZE_NOT_FIRST,
                Some(method),
                session.as_deref(),
                format!("the {sender} sent `{method}` before `initialize` was answered"),
            );
        } else {
            let (handler, init) = match direction {
                Direction::ToAgent => (Side::Agent, &self.agent_init),
                Direction::ToClient => (Side::Client, &self.client_init),
            };
            // The SDK's generated gate table, as the receiving role applies it.
            let row = agentproto_acp::rules::request(v1::method::ALL, handler, method);
            if let Some(gate) = row.and_then(|row| row.gate) {
                let params = raw_member(line, "params");
                if !gate.is_open(init, params.as_deref()) {
                    let capability = gate.describe(params.as_deref());
                    report.add(
                        &rules::CAPABILITY_NOT_ADVERTISED,
                        Some(method),
                        session.as_deref(),
                        format!("`{method}` needs `{capability}`, which was not advertised"),
                    );
                }
            }
            // Prompt content and MCP server kinds: each item against the receiver's capabilities.
            if let Some(refused) = row.and_then(|row| {
                let params = raw_member(line, "params");
                agentproto_acp::rules::refused_value(row, init, params.as_deref())
            }) {
                report.add(
                    &rules::CAPABILITY_NOT_ADVERTISED,
                    Some(method),
                    session.as_deref(),
                    format!("`{method}` at {}: {}", refused.path, refused.reason()),
                );
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
        let call = Call { method: method.to_owned(), session, index: report.index, opened_session };
        self.calls(direction).insert(id, call);
    }

    fn on_notification(&mut self, report: &mut Report<'_>, method: &str, session: Option<&str>, payload: &impl Facts) {
        if method == "$/cancel_request" {
            return;
        }
        if self.phase != Phase::Ready {
            report.add(
                &rules::INITIALIZE_NOT_FIRST,
                Some(method),
                session,
                format!("the {} sent `{method}` before `initialize` was answered", report.direction.sender()),
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

    fn on_response(
        &mut self,
        report: &mut Report<'_>,
        id: &RequestId,
        call: Call,
        result: Result<&impl Facts, &ErrorObject>,
        line: &[u8],
    ) {
        let session = call.session.as_deref();
        match (call.method.as_str(), &result) {
            ("initialize", Ok(_)) => {
                self.phase = Phase::Ready;
                self.agent_init = member(line, &["result"]);
            }
            ("initialize", Err(_)) => self.phase = Phase::Fresh,
            (method, Ok(payload)) => match session_rule(method).and_then(|rule| rule.effect) {
                Some(SessionEffect::CreatedByResult) => {
                    if let Some(created) = payload.created_session() {
                        self.sessions.entry(created.to_owned()).or_default();
                    }
                }
                Some(SessionEffect::Removed) => {
                    if let Some(session) = session {
                        self.sessions.remove(session);
                    }
                }
                // Opened when the request was seen, so that replayed history counts.
                Some(SessionEffect::OpenedByParams) | None => {}
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
    fn forget_failed_open(&mut self, call: &Call) {
        if call.opened_session {
            if let Some(session) = &call.session {
                self.sessions.remove(session);
            }
        }
    }

    /// A request the receiver refuses as it stands (bad JSON, bad envelope,
    /// unknown method, invalid params).
    fn on_refused(&mut self, report: &mut Report<'_>, reply: &Message, refusal: &Refusal, line: &[u8]) {
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
        if let (Message::Response { id, .. }, Some(method)) = (reply, method) {
            if !id.is_null() && !self.calls(direction).contains_key(id) {
                let call = Call { method, session, index: report.index, opened_session: false };
                self.calls(direction).insert(id.clone(), call);
            }
        }
    }

    fn on_ignored(&mut self, report: &mut Report<'_>, refusal: &Refusal, line: &[u8]) {
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
            Refusal::UnmatchedResponse(id) => {
                report.add(
                    &rules::UNKNOWN_RESPONSE_ID,
                    None,
                    None,
                    format!("the {} answered id {id}, which no unanswered request has", report.direction.sender()),
                );
                true
            }
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
        let receiver = match report.direction {
            Direction::ToAgent => Side::Agent,
            Direction::ToClient => Side::Client,
        };
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

fn non_empty(path: &str) -> Option<String> {
    (!path.is_empty()).then(|| path.to_owned())
}

/// The start of a line, for messages.
fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
    if line.len() > 60 {
        format!("{text:?}…")
    } else {
        format!("{text:?}")
    }
}

/// A member of the line's top-level object, raw (only used on rare paths).
fn raw_member(line: &[u8], key: &str) -> Option<Box<RawValue>> {
    let members: HashMap<String, Box<RawValue>> = serde_json::from_slice(line).ok()?;
    members.into_iter().find_map(|(k, v)| (k == key).then_some(v))
}

fn string_member(line: &[u8], key: &str) -> Option<String> {
    raw_member(line, key).and_then(|raw| serde_json::from_str(raw.get()).ok())
}

/// The value at `path` in the line (`Null` when absent).
/// The session rule of a request (the session methods are the agent's in v1).
fn session_rule(method: &str) -> Option<SessionRule> {
    v1::method::ALL.iter().find(|m| m.name == method && m.kind == MethodKind::Request).and_then(|m| m.session)
}

fn member(line: &[u8], path: &[&str]) -> Value {
    let Ok(value) = serde_json::from_slice::<Value>(line) else { return Value::Null };
    path.iter().try_fold(&value, |value, key| value.get(key)).cloned().unwrap_or(Value::Null)
}
