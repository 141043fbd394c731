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
use agentproto_jsonrpc::frame::{Frame, FrameLimits, FrameReader, OversizeShape};
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
    /// By direction of travel ([`slot`]): error responses with `id: null` the
    /// receiver of an unparsable or invalid line may send back (JSON-RPC
    /// answers such a line with a null id when it cannot tell the line's id).
    null_replies_owed: [u32; 2],
    /// By direction of travel: lines over the size limit whose id could not be
    /// read from their head. The other side may answer each of them once with
    /// an id this monitor never saw.
    unread_lines: [u32; 2],
    /// Requests the client pipelined after `initialize`, before its answer:
    /// their capabilities are checked once the agent's answer says what it has.
    pipelined: Vec<Pipelined>,
}

/// A request sent while `initialize` was unanswered, kept for the capability checks.
#[derive(Debug)]
struct Pipelined {
    index: u64,
    method: String,
    session: Option<String>,
    params: Option<Box<RawValue>>,
}

/// What [`rules::MESSAGE_BEFORE_INITIALIZE`] says about `method`.
fn before_initialize_message(direction: Direction, method: &str) -> String {
    match direction {
        Direction::ToAgent => format!("the client sent `{method}` before `initialize`"),
        Direction::ToClient => format!("the agent sent `{method}` before answering `initialize`"),
    }
}

/// The index of a direction in the per-direction counters.
fn slot(direction: Direction) -> usize {
    match direction {
        Direction::ToAgent => 0,
        Direction::ToClient => 1,
    }
}

/// Takes one from a counter; `false` when it was zero.
fn take_one(counter: &mut u32) -> bool {
    let had = *counter > 0;
    *counter = counter.saturating_sub(1);
    had
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
    /// A request over the size limit whose id was read from its head: any
    /// answer settles it (an error for the size, or a result if the receiver's
    /// limit is larger); its method and params were never seen.
    unread: bool,
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
        let (index, direction) = (self.index, self.direction);
        self.add_for(index, direction, rule, method, session, message)
    }

    /// A finding about an earlier message, number `index`, that travelled `direction`.
    fn add_for(
        &mut self,
        index: u64,
        direction: Direction,
        rule: &'static Rule,
        method: Option<&str>,
        session: Option<&str>,
        message: String,
    ) -> &mut Finding {
        let mut finding = Finding::new(rule, index, Some(direction), message).session(session);
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

    fn oversize(&mut self, index: u64, direction: Direction, len: u64, head: &[u8]) -> Verdict {
        let mut verdict = Verdict { findings: Vec::new(), answer: Some(Answer::Drop) };
        Report { index, direction, verdict: &mut verdict }.add(
            &rules::MAX_MESSAGE_BYTES,
            None,
            None,
            format!("a {len}-byte message from the {} was not read", direction.sender()),
        );
        // Its answer must not read as a stray: remember what its head says.
        match recover_id(head) {
            Some((OversizeShape::Call, Some(id))) => {
                let call = Call { method: String::new(), session: None, index, opened_session: false, unread: true };
                self.calls(direction).entry(id).or_insert(call);
            }
            Some((OversizeShape::Response, Some(id))) if !id.is_null() => {
                if let Some(call) = self.calls(direction.reverse()).remove(&id) {
                    self.settle_unread_answer(&id, &call);
                }
            }
            _ => self.unread_lines[slot(direction)] += 1,
        }
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
            let (rule, message) = if call.unread {
                (
                    &rules::REQUEST_NEVER_ANSWERED,
                    format!(
                        "request {id} (message #{}, over the size limit) from the {} was never answered",
                        call.index,
                        direction.sender()
                    ),
                )
            } else if cancelled {
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
            let mut finding = Finding::new(rule, index, Some(direction), message);
            finding.method = (!call.unread).then(|| call.method.clone());
            finding.session = call.session.clone();
            findings.push(finding);
        }
        findings
    }
}

impl AcpMonitor {
    /// Whether a message travelling `direction` now comes before its sender's
    /// part of `initialize`: the client's before it sent `initialize`, the agent's
    /// before it answered it. A request the client pipelines after `initialize`,
    /// before the answer, is not: the agent waits for `initialize` to finish and
    /// then serves it.
    fn before_initialize(&self, direction: Direction) -> bool {
        match direction {
            Direction::ToAgent => self.phase == Phase::Fresh,
            Direction::ToClient => self.phase != Phase::Ready,
        }
    }

    /// The capability findings of request number `index`, against the
    /// receiver's `initialize` message, through the SDK's generated gate table as
    /// the receiving role applies it.
    fn check_capabilities(
        &self,
        report: &mut Report<'_>,
        index: u64,
        direction: Direction,
        method: &str,
        session: Option<&str>,
        params: Option<&RawValue>,
    ) {
        let (handler, init) = match direction {
            Direction::ToAgent => (Side::Agent, &self.agent_init),
            Direction::ToClient => (Side::Client, &self.client_init),
        };
        let row = agentproto_acp::rules::request(v1::method::ALL, handler, method);
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
            // An over-limit request's answer is taken apart from its method
            // (never seen): it reaches `unmatched`.
            let pending = self.calls(direction.reverse());
            classify::<R>(line, |id| pending.get(id).filter(|call| !call.unread).map(|call| call.method.clone()))
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
        } else if self.before_initialize(direction) {
            report.add(
                &rules::MESSAGE_BEFORE_INITIALIZE,
                Some(method),
                session.as_deref(),
                before_initialize_message(direction, method),
            );
        } else {
            let handler = match direction {
                Direction::ToAgent => Side::Agent,
                Direction::ToClient => Side::Client,
            };
            let row = agentproto_acp::rules::request(v1::method::ALL, handler, method);
            let params = raw_member(line, "params");
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

    fn on_notification(&mut self, report: &mut Report<'_>, method: &str, session: Option<&str>, payload: &impl Facts) {
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
                for request in std::mem::take(&mut self.pipelined) {
                    let Pipelined { index, method, session, params } = request;
                    let (session, params) = (session.as_deref(), params.as_deref());
                    self.check_capabilities(report, index, Direction::ToAgent, &method, session, params);
                }
            }
            ("initialize", Err(_)) => {
                self.phase = Phase::Fresh;
                // The agent refuses what was pipelined after a failed `initialize`.
                self.pipelined.clear();
            }
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
                let call = Call { method, session, index: report.index, opened_session: false, unread: false };
                self.calls(direction).insert(id.clone(), call);
            }
        }
        // When the receiver cannot tell the line's id, its error answer has `id: null`.
        if let Message::Response { id, .. } = reply {
            if id.is_null() {
                self.null_replies_owed[slot(direction.reverse())] += 1;
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

    /// A response whose id no request seen is waiting for; `true` when a strict
    /// proxy drops it. Three kinds of answer are expected although their id was
    /// never seen: the answer to an over-limit request (its id read from the
    /// head, or not at all), and a `null`-id error after an unparsable or
    /// invalid line. An error with `id: null` that follows no such line is
    /// reported as unprompted (a warning: valid JSON-RPC, and it settles
    /// nothing, but the peer refused something the inspector saw as fine, or
    /// saw nothing of); any other stray is an unknown id.
    fn unmatched(&mut self, report: &mut Report<'_>, id: &RequestId, line: &[u8]) -> bool {
        let direction = report.direction;
        let asker = direction.reverse();
        if self.calls(asker).get(id).is_some_and(|call| call.unread) {
            self.calls(asker).remove(id);
            return false;
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
    fn settle_unread_answer(&mut self, id: &RequestId, call: &Call) {
        let Some(state) = call.session.as_deref().and_then(|s| self.sessions.get_mut(s)) else { return };
        if state.prompt.as_ref().is_some_and(|(running, _)| running == id) {
            state.prompt = None;
            state.turn_over = true;
        }
        state.permissions.remove(id);
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

/// The session rule of a request (the session methods are the agent's in v1).
fn session_rule(method: &str) -> Option<SessionRule> {
    v1::method::ALL.iter().find(|m| m.name == method && m.kind == MethodKind::Request).and_then(|m| m.session)
}

/// The value at `path` in the line (`Null` when absent).
fn member(line: &[u8], path: &[&str]) -> Value {
    let Ok(value) = serde_json::from_slice::<Value>(line) else { return Value::Null };
    path.iter().try_fold(&value, |value, key| value.get(key)).cloned().unwrap_or(Value::Null)
}

/// The id and shape the JSON-RPC framing recovers from the head of an
/// oversize line: the best-effort scan an SDK connection makes before it
/// answers an oversize request `-32600`. The head is run through
/// `agentproto-jsonrpc`'s own frame reader with a limit of one byte, so the
/// inspector expects exactly the id a receiver on that framing recovers.
fn recover_id(head: &[u8]) -> Option<(OversizeShape, Option<RequestId>)> {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let limits = FrameLimits { max_message_size: 1, read_chunk_size: head.len().max(1) };
    let mut reader = FrameReader::with_limits(head, limits);
    let mut next = std::pin::pin!(reader.next_frame());
    // Reading from a byte slice never waits, so one poll finishes.
    match next.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(Some(Frame::Oversize(line)))) => Some((line.shape, line.id.clone())),
        _ => None,
    }
}
