//! The ACP v1 monitor: the codec's validation of every message, plus the
//! protocol's state machine, watched from outside the connection.
//!
//! Each line goes through `agentproto_acp::receive::classify` (the same receive
//! path the SDK's connections run) as the receiving side would see it; the
//! monitor then follows the state both peers should agree on: the initialize
//! phase, each side's unanswered requests, the sessions, their prompt turns, tool
//! calls and permission requests.
//!
//! `facts` says what the monitor reads from a decoded payload, `report` collects one
//! message's findings, and the state machine is split by what arrives: `requests`
//! (requests and notifications), `answers` (responses and strays) and `refusals`
//! (lines the receiver refuses or ignores); `lines` reads members of raw lines.

mod answers;
mod facts;
mod lines;
mod refusals;
mod report;
mod requests;

use std::collections::{HashMap, HashSet};

use agentproto_acp::receive::{classify, AgentV1, CallFailure, ClientV1, Incoming, Role};
use agentproto_acp::v1::{self, V1};
use agentproto_acp::{Handshake, Payload, RequestId, Side};
use agentproto_jsonrpc::frame::OversizeShape;
use agentproto_jsonrpc::{ErrorCode, ErrorObject, Message};

use crate::engine::{Answer, Monitor, Verdict};
use crate::finding::{Direction, Finding};
use crate::rules;
use facts::Facts;
use lines::recover_id;
use report::Report;

/// How many ids of refused non-requests (`refused_ids`) are remembered per direction:
/// a peer that sends such lines without end cannot grow the monitor without end.
const MAX_REFUSED_IDS: usize = 1024;

/// The ACP v1 state machine. See the module documentation.
#[derive(Debug, Default)]
pub struct AcpMonitor {
    phase: Phase,
    /// The client's `initialize` params, until the agent's answer completes the
    /// handshake the SDK's generated rule code reads.
    client_init: Option<v1::InitializeRequest>,
    handshake: Option<Handshake<V1>>,
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
    /// By direction of travel: ids of lines the receiver refuses although they are
    /// no request (`{"jsonrpc":"2.0","id":17}`: an id and no method), which it
    /// answers with an error carrying that id. At most [`MAX_REFUSED_IDS`] each.
    refused_ids: [HashSet<RequestId>; 2],
    /// Requests the client pipelined after `initialize`, before its answer:
    /// their capabilities are checked once the agent's answer says what it has.
    pipelined: Vec<Pipelined>,
}

/// A request sent while `initialize` was unanswered, kept for the capability checks.
#[derive(Debug)]
struct Pipelined {
    index: u64,
    session: Option<String>,
    request: v1::ClientRequest,
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
    /// What the latest answer that created or opened the session announced (the
    /// members the session gates read, e.g. `modes`); `None` until such an answer.
    announced: Option<Vec<&'static str>>,
}

/// The side that handles a request travelling `direction` (its receiver).
fn receiver(direction: Direction) -> Side {
    match direction {
        Direction::ToAgent => Side::Agent,
        Direction::ToClient => Side::Client,
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
                self.on_request(&mut report, id, &request.value, &method, session);
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
                    self.on_response(&mut report, &id, call, result);
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
}
