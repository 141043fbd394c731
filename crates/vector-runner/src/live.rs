//! Drives the single-message cases through a live connection.
//!
//! [`crate::run`] checks what [`agentproto_acp::receive::classify`] says about a
//! case; this module checks what a real connection *does* with the same bytes. For
//! each case the receiving side named by `direction` is our real role
//! ([`connect_agent`] or [`connect_client`]) serving a recording application
//! (module `recorder`), over an in-memory pipe whose other end the runner plays with raw
//! lines, as in the flows. The runner first brings the connection to the state the
//! case presupposes, as a real peer would:
//!
//! - `initialize` first, with every capability advertised (so that no gate refuses
//!   what the stateless expectation accepts), unless the case is itself about
//!   `initialize`;
//! - a session opened, when the case's params name one (`session/new`, whose
//!   answer names it);
//! - for a response, our side's own calls outstanding with the ids and methods of
//!   `pending`: our side numbers its calls 0, 1, 2, …, so the runner has it make
//!   filler calls until the counter reaches each id;
//! - for `$/cancel_request`, a request in flight with the id it names.
//!
//! Then it writes the case's bytes and observes: the handler calls (with their
//! params re-encoded), the lines written, how the pending call ended, and the
//! findings reported to the connection's observer; and it proves that nothing
//! else is written with the flows' barrier. Every wait is bounded by
//! [`STEP_TIMEOUT`]; nothing sleeps.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use agentproto_acp::v1::*;
use agentproto_acp::AcpEvent;
use agentproto_jsonrpc::{CallError, ConnectionError, ConnectionEvent, EnvelopeErrorKind};
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::calls::{call_agent, call_client, CallEnd, CallFuture};
use crate::wire::{Wire, BARRIER, STEP_TIMEOUT};
use crate::{compare, compare_bytes, input_bytes, same, Case};

mod recorder;
use recorder::{minimal_params, minimal_result, Record, Recorder, RecordingAgent, RecordingClient, HOLD};

/// How one case went on the live connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The connection did what `expect` says. `note` says what could not be
    /// compared, when something could not.
    Passed {
        /// What was checked only in part, and why.
        note: Option<&'static str>,
    },
    /// The case was not driven, for this reason.
    Skipped(String),
    /// What the connection did differs from `expect`.
    Failed(String),
}

/// The `$/cancel_request` note: the connection acts on it itself (its params go
/// through the surface's generated decoder, as in `classify`, and a refused one
/// cancels nothing), so no handler sees the decoded params to compare.
pub const CANCEL_REQUEST_NOTE: &str = "$/cancel_request is acted on by the connection, not dispatched: checked by its \
                                       effect (the request it names is answered -32800); its decoded params reach no \
                                       handler to compare";

/// Runs cases on one runtime.
pub struct Live {
    runtime: tokio::runtime::Runtime,
}

impl Live {
    /// A runner with a small multi-threaded runtime.
    pub fn new() -> Result<Live, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .map_err(|e| format!("cannot build a runtime: {e}"))?;
        Ok(Live { runtime })
    }

    /// Drives one case.
    pub fn run(&self, case: &Case) -> Verdict {
        self.runtime.block_on(drive(case))
    }
}

/// Which of our roles receives the case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Receiver {
    Agent,
    Client,
}

/// The state a case presupposes, read from the case.
struct Plan {
    receiver: Receiver,
    bytes: Vec<u8>,
    /// `initialize` first.
    preamble: bool,
    /// The session `session/new` answers; opened when `open_session`.
    session: String,
    open_session: bool,
    /// Our side's calls to have outstanding: id, method (sorted by id).
    pending: Vec<(u64, String)>,
    /// The id of a request to keep in flight (for `$/cancel_request`).
    hold: Option<Value>,
}

impl Plan {
    fn of(case: &Case) -> Result<Plan, Verdict> {
        let receiver = match case.direction.as_str() {
            "client_to_agent" => Receiver::Agent,
            "agent_to_client" => Receiver::Client,
            other => return Err(Verdict::Failed(format!("unknown direction {other:?}"))),
        };
        let bytes = input_bytes(case).map_err(Verdict::Failed)?;
        let message: Option<Value> = serde_json::from_slice(&bytes).ok();
        let method = message.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str);
        let params = message.as_ref().and_then(|m| m.get("params"));
        let named = params.and_then(|p| p.get("sessionId")).and_then(Value::as_str);
        let mut pending = Vec::new();
        for (key, method) in &case.pending {
            let id = serde_json::from_str::<Value>(key).ok().and_then(|id| id.as_u64()).ok_or_else(|| {
                Verdict::Skipped(format!(
                    "pending id {key} is not one our side can pick: it numbers its own calls 0, 1, 2, …"
                ))
            })?;
            pending.push((id, method.clone()));
        }
        pending.sort();
        let preamble = match receiver {
            // An agent is not ready before `initialize`: a case about it is sent first.
            Receiver::Agent => method != Some("initialize"),
            Receiver::Client => !pending.iter().any(|(_, m)| m == "initialize"),
        };
        let open_session = named.is_some() && preamble;
        let used = match receiver {
            Receiver::Agent => 0,
            Receiver::Client => u64::from(preamble) + u64::from(open_session),
        };
        if let Some((id, method)) = pending.iter().find(|(id, _)| *id < used) {
            return Err(Verdict::Skipped(format!(
                "pending id {id} ({method}) is taken by the calls that set the connection up"
            )));
        }
        let cancel = case.expect.get("outcome") == Some(&json!("notification"))
            && case.expect.get("method") == Some(&json!("$/cancel_request"));
        let hold = if cancel { params.and_then(|p| p.get("requestId")).cloned() } else { None };
        Ok(Plan {
            receiver,
            bytes,
            preamble,
            session: named.unwrap_or("sess-live").to_owned(),
            open_session,
            pending,
            hold,
        })
    }
}

/// Our role's handle to the runner's side.
enum Handle {
    Agent(ClientConnection<V1>),
    Client(AgentConnection<V1>),
}

/// One live connection and the runner's view of it.
struct Connected {
    wire: Wire,
    recorder: Arc<Recorder>,
    events: Arc<Mutex<Vec<AcpEvent>>>,
    handle: Handle,
    run: JoinHandle<Result<(), ConnectionError>>,
    /// How many calls our side has made (the id of its next call).
    calls_made: u64,
    ready: bool,
    /// Our side's outstanding calls: id, method, the call.
    calls: Vec<(u64, String, JoinHandle<CallEnd>)>,
    /// The runner closed its output (the case's line had no terminator).
    closed: bool,
}

async fn drive(case: &Case) -> Verdict {
    let plan = match Plan::of(case) {
        Ok(plan) => plan,
        Err(verdict) => return verdict,
    };
    let mut connected = Connected::start(&plan);
    let result = connected.drive(case, &plan).await;
    let ended = connected.finish().await;
    match (result, ended) {
        (Ok(note), Ok(())) => Verdict::Passed { note },
        (Ok(_), Err(why)) | (Err(why), _) => {
            let events = connected.events.lock().map(|e| format!("{e:?}")).unwrap_or_default();
            Verdict::Failed(format!("{why}\n  events of our side after the setup: {events}"))
        }
    }
}

impl Connected {
    fn start(plan: &Plan) -> Connected {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (input, output) = tokio::io::split(ours);
        let events = Arc::new(Mutex::new(Vec::new()));
        let log = events.clone();
        let options = AcpOptions::default().strict(true).observer(move |event: &AcpEvent| {
            if let Ok(mut log) = log.lock() {
                log.push(event.clone());
            }
        });
        let recorder = Recorder::new(&plan.session);
        let (connection, handle) = match plan.receiver {
            Receiver::Agent => {
                let (connection, client) = connect_agent(RecordingAgent(recorder.clone()), input, output, options);
                (connection, Handle::Agent(client))
            }
            Receiver::Client => {
                let (connection, agent) = connect_client(RecordingClient(recorder.clone()), input, output, options);
                (connection, Handle::Client(agent))
            }
        };
        Connected {
            wire: Wire::new(theirs),
            recorder,
            events,
            handle,
            run: tokio::spawn(connection.run()),
            calls_made: 0,
            ready: false,
            calls: Vec::new(),
            closed: false,
        }
    }

    async fn drive(&mut self, case: &Case, plan: &Plan) -> Result<Option<&'static str>, String> {
        self.set_up(plan).await.map_err(|e| format!("setting the connection up: {e}"))?;
        self.wire.send_bytes(&plan.bytes).await?;
        if !plan.bytes.ends_with(b"\n") {
            // The line ends where the input ends.
            self.wire.close().await?;
            self.closed = true;
        }
        let outcome = case.expect.get("outcome").and_then(Value::as_str).unwrap_or_default();
        let mut evidence = Evidence::default();
        if matches!(outcome, "request" | "reply_error") || plan.hold.is_some() {
            evidence.reply = Some(self.wire.next_message().await?.0);
        }
        if matches!(outcome, "response" | "error_reply" | "call_failed") {
            let id = case.expect.get("id").and_then(Value::as_u64);
            let Some(index) = self.calls.iter().position(|(call, _, _)| Some(*call) == id) else {
                return Err(format!("no outstanding call of our side has the id {:?}", case.expect.get("id")));
            };
            let (id, method, call) = self.calls.remove(index);
            evidence.call = Some((id, method, finish_call(call).await?));
        }
        self.quiet().await?;
        evidence.records = self.recorder.take();
        evidence.events = self.events.lock().map(|e| e.clone()).unwrap_or_default();
        let note = if plan.hold.is_some() {
            self.check_cancelled(case, plan, &evidence)?;
            Some(CANCEL_REQUEST_NOTE)
        } else {
            let (observed, encoded) = evidence.observe()?;
            compare(&case.expect, &observed)?;
            if let (Some(actual), Some(golden)) = (encoded, &case.canonical) {
                compare_bytes(golden, &actual)?;
            }
            None
        };
        if outcome == "ignored" {
            self.still_pending(plan).await?;
        }
        Ok(note)
    }

    /// `initialize`, a session, the outstanding calls, the held request.
    async fn set_up(&mut self, plan: &Plan) -> Result<(), String> {
        let session = plan.session.as_str();
        if plan.preamble {
            let params = minimal_params("initialize", session);
            match plan.receiver {
                Receiver::Agent => self.request_ours("live-initialize", "initialize", params).await.map(drop)?,
                Receiver::Client => {
                    let answer = Ok(minimal_result("initialize", session));
                    self.call_answered("initialize", params, answer).await?.map_err(|e| e.to_string())?;
                }
            }
            self.ready = true;
        }
        if plan.open_session {
            let params = minimal_params("session/new", session);
            let opened = match plan.receiver {
                Receiver::Agent => self.request_ours("live-session", "session/new", params).await?,
                Receiver::Client => {
                    let answer = Ok(minimal_result("session/new", session));
                    self.call_answered("session/new", params, answer).await?.map_err(|e| e.to_string())?.value()
                }
            };
            if opened.get("sessionId").and_then(Value::as_str) != Some(session) {
                return Err(format!("session/new answered {opened}, not session {session}"));
            }
        }
        for (id, method) in &plan.pending {
            while self.calls_made < *id {
                if self.ready {
                    self.call_answered("_live/filler", Value::Null, Ok(json!({}))).await?.map_err(|e| e.to_string())?;
                } else {
                    // Our client is not initialized: an `initialize` the runner refuses uses an id.
                    let params = minimal_params("initialize", session);
                    let refusal = Err(json!({"code": -32603, "message": "not this time"}));
                    if self.call_answered("initialize", params, refusal).await?.is_ok() {
                        return Err("a refused initialize call succeeded".to_owned());
                    }
                }
            }
            let call = self.call(method, &minimal_params(method, session)).await?;
            self.calls.push((*id, method.clone(), call));
        }
        if let Some(id) = &plan.hold {
            self.wire.send(&json!({"jsonrpc": "2.0", "id": id, "method": HOLD})).await?;
        }
        self.recorder.take();
        if let Ok(mut events) = self.events.lock() {
            events.clear();
        }
        Ok(())
    }

    /// Sends a request to our side (an agent) and returns its result.
    async fn request_ours(&mut self, id: &str, method: &str, params: Value) -> Result<Value, String> {
        self.wire.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        let (answer, line) = self.wire.next_message().await?;
        match answer.get("result") {
            Some(result) if answer.get("id") == Some(&json!(id)) => Ok(result.clone()),
            _ => Err(format!("expected the result of {method} (id {id:?}), got {line}")),
        }
    }

    /// Has our side make a call; reads the request it writes (which must carry the
    /// next id) and leaves it unanswered.
    async fn call(&mut self, method: &str, params: &Value) -> Result<JoinHandle<CallEnd>, String> {
        let future: CallFuture = match &self.handle {
            Handle::Agent(client) => call_client(client.clone(), method, params)?,
            Handle::Client(agent) => call_agent(agent.clone(), method, params)?,
        };
        let call = tokio::spawn(future);
        let (request, line) = self.wire.next_message().await.map_err(|e| format!("our {method} call: {e}"))?;
        let id = self.calls_made;
        if request.get("method") != Some(&json!(method)) || request.get("id") != Some(&json!(id)) {
            call.abort();
            return Err(format!("expected our side's {method} call with id {id}, got {line}"));
        }
        self.calls_made += 1;
        Ok(call)
    }

    /// A call of our side that the runner answers with a result or an error object.
    async fn call_answered(
        &mut self,
        method: &str,
        params: Value,
        answer: Result<Value, Value>,
    ) -> Result<CallEnd, String> {
        let call = self.call(method, &params).await?;
        let id = self.calls_made - 1;
        let response = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        self.wire.send(&response).await?;
        finish_call(call).await
    }

    /// Nothing more is written: up to the barrier's answer, or, once the runner
    /// closed its output, until our side closes its own.
    async fn quiet(&mut self) -> Result<(), String> {
        if self.closed {
            self.wire.end_of_output().await
        } else {
            self.wire.silence().await
        }
    }

    /// `$/cancel_request`: the held request was answered -32800, nothing else happened.
    fn check_cancelled(&self, case: &Case, plan: &Plan, evidence: &Evidence) -> Result<(), String> {
        let reply = evidence.reply.as_ref().cloned().unwrap_or(Value::Null);
        let held = plan.hold.as_ref().cloned().unwrap_or(Value::Null);
        let cancelled = reply.get("id").is_some_and(|id| same(id, &held))
            && reply.pointer("/error/code").and_then(Value::as_i64) == Some(-32800);
        if !cancelled {
            return Err(format!(
                "expected {} to cancel the request {held} in flight (answered -32800), our side wrote {reply}",
                case.expect
            ));
        }
        if !evidence.records.is_empty() || !evidence.findings().is_empty() {
            return Err(format!(
                "$/cancel_request also dispatched {:?} or reported {:?}",
                evidence.records,
                evidence.findings()
            ));
        }
        Ok(())
    }

    /// After an ignored line, the calls it did not answer are still outstanding:
    /// the runner answers each now, and each must end with that answer.
    async fn still_pending(&mut self, plan: &Plan) -> Result<(), String> {
        for (id, method, call) in std::mem::take(&mut self.calls) {
            let sentinel = minimal_result(&method, &plan.session);
            self.wire.send(&json!({"jsonrpc": "2.0", "id": id, "result": sentinel})).await?;
            match finish_call(call).await? {
                Ok(answer) if same(&answer.value(), &sentinel) => {}
                other => return Err(format!("the call {id} ({method}) was resolved by the ignored line: {other:?}")),
            }
        }
        Ok(())
    }

    /// Ends the connection: the runner's end of the pipe closes, so our side reads
    /// end of file and its connection must end.
    async fn finish(&mut self) -> Result<(), String> {
        for (_, _, call) in self.calls.drain(..) {
            call.abort();
        }
        if !self.closed {
            self.wire.close().await?;
        }
        match tokio::time::timeout(STEP_TIMEOUT, &mut self.run).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(format!("the connection ended with an error: {e}")),
            Ok(Err(e)) => Err(format!("the connection's task failed: {e}")),
            Err(_) => {
                self.run.abort();
                Err(format!("the connection did not end within {STEP_TIMEOUT:?} of its input closing"))
            }
        }
    }
}

async fn finish_call(call: JoinHandle<CallEnd>) -> Result<CallEnd, String> {
    match tokio::time::timeout(STEP_TIMEOUT, call).await {
        Ok(Ok(end)) => Ok(end),
        Ok(Err(e)) => Err(format!("the call's task failed: {e}")),
        Err(_) => Err(format!("the call did not end within {STEP_TIMEOUT:?}")),
    }
}

/// What the connection did with the case's line.
#[derive(Default)]
struct Evidence {
    /// The line it answered with, when the case expects one.
    reply: Option<Value>,
    /// How the call the line answers ended.
    call: Option<(u64, String, CallEnd)>,
    /// Handler calls.
    records: Vec<Record>,
    /// What the observer was told.
    events: Vec<AcpEvent>,
}

impl Evidence {
    /// The finding codes of the events (those about the barrier left out).
    fn findings(&self) -> Vec<&'static str> {
        self.events.iter().filter_map(finding).collect()
    }

    /// The salvage warnings reported, as paths.
    fn warnings(&self) -> Value {
        let paths: BTreeSet<String> = self
            .events
            .iter()
            .filter_map(|event| match event {
                AcpEvent::Salvaged { method, warnings } if method != BARRIER => Some(warnings),
                _ => None,
            })
            .flatten()
            .map(|w| w.path.clone())
            .collect();
        paths.into_iter().map(Value::String).collect()
    }

    /// The outcome in the vector format, from whatever happened, with the bytes
    /// of a decoded payload.
    fn observe(&self) -> Result<(Value, Option<Vec<u8>>), String> {
        let findings = self.findings();
        if let [record] = self.records.as_slice() {
            if !findings.is_empty() {
                return Err(format!("dispatched {record:?}, but also reported {findings:?}"));
            }
            let mut observed = json!({
                "outcome": if record.id.is_some() { "request" } else { "notification" },
                "method": record.method,
                "type": record.type_name,
                "params": record.params(),
                "warnings": self.warnings(),
            });
            if let Some(id) = &record.id {
                observed["id"] = serde_json::to_value(id).unwrap_or(Value::Null);
                // The request must have been answered with the handler's result.
                let reply = self.reply.as_ref().cloned().unwrap_or(Value::Null);
                if reply.get("result").is_none() || !reply.get("id").is_some_and(|r| same(r, &observed["id"])) {
                    return Err(format!("dispatched {record:?}, but answered {reply}"));
                }
            }
            return Ok((observed, Some(record.bytes.clone())));
        }
        if !self.records.is_empty() {
            return Err(format!("one line dispatched {} handler calls: {:?}", self.records.len(), self.records));
        }
        if let Some((id, method, end)) = &self.call {
            return Ok(match end.as_ref().map_err(Box::as_ref) {
                Ok(answer) => (
                    json!({
                        "outcome": "response",
                        "id": id,
                        "method": method,
                        "type": answer.type_name,
                        "result": answer.value(),
                        "warnings": self.warnings(),
                    }),
                    Some(answer.bytes.clone()),
                ),
                Err(AcpError::Rpc { error, .. }) => (
                    json!({"outcome": "error_reply", "id": id, "error": {"code": error.code.0, "message": error.message}}),
                    None,
                ),
                Err(AcpError::InvalidResult { error, .. }) => {
                    (json!({"outcome": "call_failed", "id": id, "path": error.path, "kind": error.kind.as_str()}), None)
                }
                Err(AcpError::Connection { error, .. }) => match error.as_ref() {
                    CallError::InvalidResponse(e) => {
                        let path = if e.path().is_empty() { "$" } else { e.path() };
                        (json!({"outcome": "call_failed", "id": id, "path": path}), None)
                    }
                    other => return Err(format!("the call failed on its own: {other}")),
                },
                Err(other) => return Err(format!("the call failed on its own: {other:?}")),
            });
        }
        if let Some(reply) = &self.reply {
            let Some(error) = reply.get("error") else {
                return Err(format!("answered {reply} without dispatching anything"));
            };
            let mut observed_error = json!({
                "code": error.get("code").cloned().unwrap_or(Value::Null),
                "message": error.get("message").cloned().unwrap_or(Value::Null),
                "path": error.pointer("/data/path").cloned().unwrap_or(Value::Null),
            });
            crate::error_texts(&mut observed_error, error.get("data").unwrap_or(&Value::Null));
            let observed = json!({
                "outcome": "reply_error",
                "id": reply.get("id").cloned().unwrap_or(Value::Null),
                "error": observed_error,
            });
            return Ok((observed, None));
        }
        match findings.as_slice() {
            [finding] => Ok((json!({"outcome": "ignored", "finding": finding}), None)),
            [] => Ok((json!({"outcome": "nothing: no dispatch, no answer, no finding"}), None)),
            more => Err(format!("one line reported several findings: {more:?}")),
        }
    }
}

/// The finding code an observer event stands for (`vectors/README.md`, "Findings
/// for `ignored`"); state findings that the stateless cases never expect keep
/// their own names, so that a comparison shows them.
fn finding(event: &AcpEvent) -> Option<&'static str> {
    match event {
        AcpEvent::InvalidNotification { method, .. } if method != BARRIER => Some("invalid-notification"),
        AcpEvent::UnknownNotification { method } if method != BARRIER => Some("unknown-notification"),
        AcpEvent::NotificationBeforeInitialize { method } if method != BARRIER => {
            Some("notification-before-initialize")
        }
        AcpEvent::UnknownSession { .. } => Some("unknown-session"),
        AcpEvent::Connection(event) => match event {
            ConnectionEvent::InvalidCancel => Some("invalid-notification"),
            ConnectionEvent::UnmatchedResponse { .. }
            | ConnectionEvent::LateResponse { .. }
            | ConnectionEvent::ErrorWithoutId { .. } => Some("unmatched-response"),
            ConnectionEvent::InvalidMessage { error, failed_call: false } => match error.kind() {
                EnvelopeErrorKind::InvalidNotification => Some("invalid-notification"),
                EnvelopeErrorKind::InvalidResponse => Some("invalid-response"),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case from its JSON text (without a golden file).
    fn case(text: &str) -> Case {
        serde_json::from_str(text).expect("a case")
    }

    fn run(text: &str) -> Verdict {
        Live::new().expect("runtime").run(&case(text))
    }

    fn failed(verdict: &Verdict) -> bool {
        matches!(verdict, Verdict::Failed(_))
    }

    const PROMPT: &str = r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s9","prompt":[{"type":"text","text":"hi"}]}}"#;

    fn prompt_case(expect: &str) -> String {
        format!(
            r#"{{"id":"t/prompt","requirement":"r","protocol":"acp/v1","direction":"client_to_agent","input":{PROMPT},"expect":{expect}}}"#
        )
    }

    #[test]
    fn a_request_is_dispatched_with_its_params_and_differences_are_caught() {
        let params = r#"{"sessionId":"s9","prompt":[{"type":"text","text":"hi"}]}"#;
        let right = format!(
            r#"{{"outcome":"request","method":"session/prompt","id":5,"type":"PromptRequest","params":{params}}}"#
        );
        assert_eq!(run(&prompt_case(&right)), Verdict::Passed { note: None });
        let other_text = right.replace(r#""text":"hi""#, r#""text":"ho""#);
        assert!(failed(&run(&prompt_case(&other_text))));
        let other_id = right.replace(r#""id":5"#, r#""id":6"#);
        assert!(failed(&run(&prompt_case(&other_id))));
        let warned = right.replace(r#""params""#, r#""warnings":["$.params.prompt[0]"],"params""#);
        assert!(failed(&run(&prompt_case(&warned))));
        assert!(failed(&run(&prompt_case(r#"{"outcome":"ignored","finding":"unknown-notification"}"#))));
        assert!(failed(&run(&prompt_case(r#"{"outcome":"reply_error","id":5,"error":{"code":-32602}}"#))));
    }

    #[test]
    fn findings_and_replies_are_compared() {
        let unknown = r#"{"id":"t/n","requirement":"r","protocol":"acp/v1","direction":"client_to_agent",
            "input":{"jsonrpc":"2.0","method":"foo/bar","params":{}},"expect":EXPECT}"#;
        let with = |expect: &str| unknown.replace("EXPECT", expect);
        assert_eq!(
            run(&with(r#"{"outcome":"ignored","finding":"unknown-notification"}"#)),
            Verdict::Passed { note: None }
        );
        assert!(failed(&run(&with(r#"{"outcome":"ignored","finding":"invalid-notification"}"#))));
        let bad = r#"{"id":"t/r","requirement":"r","protocol":"jsonrpc","direction":"client_to_agent",
            "input_text":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"foo/bar\"}\n","expect":EXPECT}"#;
        let with = |expect: &str| bad.replace("EXPECT", expect);
        assert_eq!(
            run(&with(r#"{"outcome":"reply_error","id":3,"error":{"code":-32601}}"#)),
            Verdict::Passed { note: None }
        );
        assert!(failed(&run(&with(r#"{"outcome":"reply_error","id":3,"error":{"code":-32600}}"#))));
        assert!(failed(&run(&with(r#"{"outcome":"reply_error","id":4,"error":{"code":-32601}}"#))));
    }

    #[test]
    fn a_response_resolves_the_call_with_that_id() {
        let response = r#"{"id":"t/resp","requirement":"r","protocol":"acp/v1","direction":"agent_to_client",
            "input":{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s1"}},"pending":{"3":"session/new"},"expect":EXPECT}"#;
        let with = |expect: &str| response.replace("EXPECT", expect);
        let right = r#"{"outcome":"response","id":3,"method":"session/new","type":"NewSessionResponse","result":{"sessionId":"s1"}}"#;
        assert_eq!(run(&with(right)), Verdict::Passed { note: None });
        assert!(failed(&run(&with(&right.replace(r#"{"sessionId":"s1"}}"#, r#"{"sessionId":"s2"}}"#)))));
        assert!(failed(&run(&with(r#"{"outcome":"ignored","finding":"unmatched-response"}"#))));
    }

    #[test]
    fn a_cancel_request_the_decoder_refuses_cancels_nothing() {
        // `receive::classify` refuses both (a repeated key, an integer id written
        // as a fraction); the connection must not act on them either.
        for params in [r#"{\"requestId\":1,\"requestId\":2}"#, r#"{\"requestId\":2.0}"#] {
            let cancel = format!(
                r#"{{"id":"t/c","requirement":"r","protocol":"acp/v1","direction":"client_to_agent",
                "input_text":"{{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{params}}}\n",
                "expect":{{"outcome":"ignored","finding":"invalid-notification"}}}}"#
            );
            assert_eq!(run(&cancel), Verdict::Passed { note: None }, "{params}");
        }
    }
}
