//! Scenario client (`interop/SCENARIO.md`) on the official Rust SDK,
//! `agent-client-protocol` 5.2.0.
//!
//! ```text
//! client -- <agent command> [args...]
//! ```
//!
//! Spawns the agent with the SDK's `AcpAgent`, runs the steps over one connection
//! and one session, and prints one JSON line per step on stdout.

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation, InitializeRequest,
    NewSessionRequest, PromptRequest, PromptResponse, ReadTextFileRequest, ReadTextFileResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionId, SessionNotification, TextContent, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{AcpAgent, AcpAgentConfig, Agent, Client, Error, LineDirection, UntypedMessage};
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

const NAME: &str = "rust-official-scenario-client";
const STEP: Duration = Duration::from_secs(10);
const STEPS: [&str; 10] = [
    "initialize",
    "session_new",
    "prompt_echo",
    "permission",
    "fs",
    "cancel",
    "cancel_permission",
    "cancel_request",
    "error",
    "unknown_update",
];

/// What the application was told about, in arrival order.
#[derive(Clone, Debug)]
enum Event {
    /// A `session/update` the SDK delivered, as JSON.
    Update(Value),
    /// A `session/request_permission` the SDK delivered.
    Permission,
}

/// How the next permission request is answered.
enum Mode {
    Allow,
    /// Held until the script answers it through the sender.
    Hold,
}

#[derive(Default)]
struct Shared {
    events: Mutex<Vec<Event>>,
    arrived: Notify,
    /// `session/update` params' `update`, read from the agent's stdout before the SDK parses it.
    wire_updates: Mutex<Vec<Value>>,
    mode: Mutex<Option<Mode>>,
    held: Mutex<Option<oneshot::Sender<RequestPermissionResponse>>>,
}

impl Shared {
    fn record(&self, event: Event) {
        self.events.lock().expect("events").push(event);
        self.arrived.notify_waiters();
    }

    fn len(&self) -> usize {
        self.events.lock().expect("events").len()
    }

    fn since(&self, from: usize) -> Vec<Event> {
        self.events.lock().expect("events")[from..].to_vec()
    }

    /// Waits (bounded) for an event at index `from` or later that matches.
    async fn wait_for(&self, from: usize, matches: impl Fn(&Event) -> bool, what: &str) -> Result<(), String> {
        bounded(what, async {
            loop {
                let arrived = self.arrived.notified();
                if self.since(from).iter().any(&matches) {
                    return;
                }
                arrived.await;
            }
        })
        .await
    }
}

async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(STEP, future).await.map_err(|_| format!("timed out after 10 s waiting for {what}"))
}

fn is_chunk(event: &Event, text: Option<&str>) -> bool {
    let Event::Update(update) = event else { return false };
    update["sessionUpdate"] == "agent_message_chunk"
        && update["content"]["type"] == "text"
        && text.is_none_or(|t| update["content"]["text"] == t)
}

fn chunk_texts(seen: &[Event]) -> Vec<String> {
    seen.iter()
        .filter(|e| is_chunk(e, None))
        .filter_map(|e| match e {
            Event::Update(u) => u["content"]["text"].as_str().map(str::to_owned),
            Event::Permission => None,
        })
        .collect()
}

fn position(seen: &[Event], matches: impl Fn(&Event) -> bool) -> i64 {
    seen.iter().position(matches).map_or(-1, |i| i64::try_from(i).unwrap_or(i64::MAX))
}

fn is_update(event: &Event, kind: &str, check: impl Fn(&Value) -> bool) -> bool {
    matches!(event, Event::Update(u) if u["sessionUpdate"] == kind && check(u))
}

type Outcome = Result<PromptResponse, Error>;

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Ok(r) => format!("stopReason {}", json!(r.stop_reason).as_str().unwrap_or("?")),
        Err(e) => format!("prompt failed: {} (code {})", e.message, i32::from(e.code)),
    }
}

fn stop_reason_is(outcome: &Outcome, reason: &str) -> bool {
    outcome.as_ref().is_ok_and(|r| json!(r.stop_reason) == reason)
}

struct Run {
    agent: ConnectionTo<Agent>,
    shared: Arc<Shared>,
    dir: std::path::PathBuf,
    session: Option<SessionId>,
}

impl Run {
    /// Sends a prompt and returns the index events start at and the pending result.
    fn prompt(&self, text: &str) -> (usize, impl Future<Output = Outcome> + use<>) {
        let from = self.shared.len();
        let session = self.session.clone().unwrap_or_else(|| SessionId::new(""));
        let request = PromptRequest::new(session, vec![ContentBlock::Text(TextContent::new(text))]);
        (from, self.agent.send_request(request).block_task())
    }

    /// Sends a prompt and waits (bounded) for its result and what was seen before it.
    async fn prompt_done(&self, text: &str) -> Result<(Outcome, Vec<Event>), String> {
        let (from, done) = self.prompt(text);
        let outcome = bounded("the prompt result", done).await?;
        Ok((outcome, self.shared.since(from)))
    }

    async fn step(&mut self, name: &str) -> Result<(bool, String), String> {
        match name {
            "initialize" => {
                let fs = FileSystemCapabilities::new().read_text_file(true).write_text_file(true);
                let request = InitializeRequest::new(ProtocolVersion::V1)
                    .client_capabilities(ClientCapabilities::new().fs(fs))
                    .client_info(Implementation::new(NAME, "0.0.0"));
                let r = bounded("initialize", self.agent.send_request(request).block_task())
                    .await?
                    .map_err(|e| format!("error: {}", e.message))?;
                let agent = r.agent_info.as_ref().map_or("?", |i| i.name.as_str()).to_owned();
                Ok((
                    r.protocol_version == ProtocolVersion::V1,
                    format!("protocolVersion {}, agent {agent}", json!(r.protocol_version)),
                ))
            }
            "session_new" => {
                let request = NewSessionRequest::new(self.dir.clone());
                let r = bounded("session/new", self.agent.send_request(request).block_task())
                    .await?
                    .map_err(|e| format!("error: {}", e.message))?;
                let id = r.session_id.to_string();
                self.session = Some(r.session_id);
                Ok((!id.is_empty(), format!("sessionId {id}")))
            }
            "prompt_echo" => {
                let (outcome, seen) = self.prompt_done("echo hello brave world").await?;
                let words = chunk_texts(&seen);
                let ok = words == ["hello", "brave", "world"] && stop_reason_is(&outcome, "end_turn");
                Ok((ok, format!("chunks before result {words:?}, {}", describe(&outcome))))
            }
            "permission" => {
                *self.shared.mode.lock().expect("mode") = Some(Mode::Allow);
                let (outcome, seen) = self.prompt_done("permission").await?;
                let call = position(&seen, |e| is_update(e, "tool_call", |u| u["toolCallId"] == "call-1"));
                let asked = position(&seen, |e| matches!(e, Event::Permission));
                let said = position(&seen, |e| is_chunk(e, Some("permission:allow")));
                let done = position(&seen, |e| is_update(e, "tool_call_update", |u| u["status"] == "completed"));
                let ok = call >= 0 && asked >= 0 && call < said && said < done && stop_reason_is(&outcome, "end_turn");
                let order = format!("tool_call={call} permission={asked} chunk={said} completed={done} (-1: missing)");
                Ok((ok, format!("order {order}, {}", describe(&outcome))))
            }
            "fs" => {
                let input = self.dir.join("in.txt");
                std::fs::write(&input, "abc\n").map_err(|e| format!("write in.txt: {e}"))?;
                let (outcome, seen) = self.prompt_done(&format!("fs {}", input.display())).await?;
                let out = std::fs::read_to_string(self.dir.join("in.txt.out")).ok();
                let chunks = chunk_texts(&seen);
                let ok = out.as_deref() == Some("ABC\n")
                    && chunks.iter().any(|c| c == "read:4")
                    && stop_reason_is(&outcome, "end_turn");
                Ok((ok, format!("in.txt.out {out:?}, chunks {chunks:?}, {}", describe(&outcome))))
            }
            "cancel" => {
                let (from, done) = self.prompt("wait");
                self.shared.wait_for(from, |e| is_chunk(e, Some("waiting")), "chunk 'waiting'").await?;
                self.cancel_session()?;
                let outcome = bounded("the prompt result after session/cancel", done).await?;
                Ok((stop_reason_is(&outcome, "cancelled"), describe(&outcome)))
            }
            "cancel_permission" => {
                *self.shared.mode.lock().expect("mode") = Some(Mode::Hold);
                let (from, done) = self.prompt("permission");
                self.shared.wait_for(from, |e| matches!(e, Event::Permission), "session/request_permission").await?;
                self.cancel_session()?;
                // The SDK leaves the held request pending on session/cancel, so the
                // script answers it as the protocol requires.
                let held = self.shared.held.lock().expect("held").take();
                let by = match held {
                    Some(answer) => {
                        let cancelled = RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled);
                        if answer.send(cancelled).is_ok() { "the script" } else { "nobody (the handler was gone)" }
                    }
                    None => "nobody (no request held)",
                };
                let outcome = bounded("the prompt result after session/cancel", done).await?;
                let chunks = chunk_texts(&self.shared.since(from));
                let ok = chunks.iter().any(|c| c == "permission:cancelled") && stop_reason_is(&outcome, "cancelled");
                let sdk = "the SDK does not answer it on session/cancel";
                Ok((
                    ok,
                    format!("permission answered cancelled by {by} ({sdk}); chunks {chunks:?}, {}", describe(&outcome)),
                ))
            }
            "cancel_request" => {
                let request = UntypedMessage::new("_agentproto/slow", json!({})).map_err(|e| e.message)?;
                let sent = self.agent.send_request(request);
                sent.cancel().map_err(|e| format!("cancel: {}", e.message))?;
                let how = "$/cancel_request sent by the SDK (SentRequest::cancel)";
                match bounded("the answer to _agentproto/slow after $/cancel_request", sent.block_task()).await? {
                    Ok(value) => Ok((false, format!("{how}; request succeeded: {value}"))),
                    Err(e) => {
                        let code = i32::from(e.code);
                        Ok((code == -32800, format!("{how}; request failed with code {code}: {}", e.message)))
                    }
                }
            }
            "error" => {
                let (outcome, _) = self.prompt_done("error").await?;
                match outcome {
                    Ok(r) => Ok((false, format!("prompt succeeded: {}", describe(&Ok(r))))),
                    Err(e) => {
                        let code = i32::from(e.code);
                        let data = e.data.unwrap_or(Value::Null);
                        Ok((code == 4242 && data["reason"] == "scenario", format!("error code {code}, data {data}")))
                    }
                }
            }
            "unknown_update" => {
                let wire_from = self.shared.wire_updates.lock().expect("wire").len();
                let (outcome, seen) = self.prompt_done("unknown-update").await?;
                let unknown = position(&seen, |e| is_update(e, "agentproto_future_update", |_| true));
                let after = position(&seen, |e| is_chunk(e, Some("after-unknown")));
                let on_wire = self.shared.wire_updates.lock().expect("wire")[wire_from..]
                    .iter()
                    .any(|u| u["sessionUpdate"] == "agentproto_future_update");
                let ok = unknown >= 0 && unknown < after && stop_reason_is(&outcome, "end_turn");
                let delivered = match usize::try_from(unknown).ok().and_then(|i| seen.get(i)) {
                    Some(Event::Update(u)) => format!("delivered: {u}"),
                    _ if on_wire => {
                        "not delivered to the application (it was on the wire; the SDK dropped it)".to_owned()
                    }
                    _ => "not delivered to the application (not on the wire either)".to_owned(),
                };
                let after = if after >= 0 { "seen" } else { "missing" };
                Ok((ok, format!("unknown update {delivered}; after-unknown {after}; {}", describe(&outcome))))
            }
            other => Err(format!("unknown step {other}")),
        }
    }

    fn cancel_session(&self) -> Result<(), String> {
        let session = self.session.clone().unwrap_or_else(|| SessionId::new(""));
        self.agent
            .send_notification(CancelNotification::new(session))
            .map_err(|e| format!("session/cancel: {}", e.message))
    }
}

fn report(step: &str, ok: bool, detail: &str) {
    println!("{}", json!({"step": step, "ok": ok, "detail": detail}));
}

/// Runs every step in order, printing each; returns how many were printed.
async fn run(agent: ConnectionTo<Agent>, shared: Arc<Shared>, dir: &Path) -> usize {
    let mut run = Run { agent, shared, dir: dir.to_owned(), session: None };
    let mut skip = false;
    let mut printed = 0;
    for name in STEPS {
        printed += 1;
        if skip {
            report(name, false, "skipped");
            continue;
        }
        let (ok, detail) = run.step(name).await.unwrap_or_else(|e| (false, e));
        report(name, ok, &detail);
        if !ok && (name == "initialize" || name == "session_new") {
            skip = true;
        }
    }
    printed
}

fn temp_dir() -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("acp-interop-rust-official-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the temporary directory");
    dir
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let agent_argv = argv.iter().position(|a| a == "--").map(|i| &argv[i + 1..]).unwrap_or_default();
    let Some((command, args)) = agent_argv.split_first() else {
        eprintln!("usage: client -- <agent command> [args...]");
        return std::process::ExitCode::from(2);
    };
    let shared = Arc::new(Shared::default());
    let tap = shared.clone();
    // The debug callback sees every line: the agent's stderr is passed through, and
    // the agent's stdout is read for `session/update`s (to tell "never sent" apart
    // from "sent but not delivered to the application").
    let agent =
        AcpAgent::new(AcpAgentConfig::new(command).args(args.iter().cloned())).with_debug(move |line, direction| {
            match direction {
                LineDirection::Stderr => eprintln!("{line}"),
                LineDirection::Stdout => {
                    let message: Value = serde_json::from_str(line).unwrap_or(Value::Null);
                    if message["method"] == "session/update" {
                        tap.wire_updates.lock().expect("wire").push(message["params"]["update"].clone());
                    }
                }
                LineDirection::Stdin => {}
            }
        });
    let dir = temp_dir();
    let (on_update, on_permission) = (shared.clone(), shared.clone());
    let steps = shared.clone();
    let printed = Arc::new(Mutex::new(0));
    let count = printed.clone();
    let result = Client
        .v1()
        .name(NAME)
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                on_update.record(Event::Update(json!(notification.update)));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |_: RequestPermissionRequest, responder, cx: ConnectionTo<Agent>| {
                on_permission.record(Event::Permission);
                let hold = matches!(on_permission.mode.lock().expect("mode").take(), Some(Mode::Hold));
                if !hold {
                    let allow = SelectedPermissionOutcome::new("allow");
                    return responder
                        .respond(RequestPermissionResponse::new(RequestPermissionOutcome::Selected(allow)));
                }
                let (answer, answered) = oneshot::channel();
                *on_permission.held.lock().expect("held") = Some(answer);
                cx.spawn(async move {
                    match answered.await {
                        Ok(response) => responder.respond(response),
                        Err(_) => responder.respond_with_internal_error("the script dropped the held request"),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |request: ReadTextFileRequest, responder, _cx| match std::fs::read_to_string(&request.path) {
                Ok(content) => responder.respond(ReadTextFileResponse::new(content)),
                Err(e) => responder.respond_with_internal_error(e),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |request: WriteTextFileRequest, responder, _cx| match std::fs::write(&request.path, &request.content)
            {
                Ok(()) => responder.respond(WriteTextFileResponse::new()),
                Err(e) => responder.respond_with_internal_error(e),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(agent, async |connection: ConnectionTo<Agent>| {
            *count.lock().expect("count") = run(connection, steps, &dir).await;
            Ok(())
        })
        .await;
    // connect_with also fails when the connection broke during the run (the agent
    // died, say); that only matters if steps went unreported. Leaving it closed the
    // agent's stdin and waited, bounded, for it to exit.
    if let Err(e) = &result {
        eprintln!("[{NAME}] connection error: {e:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    if *printed.lock().expect("count") == STEPS.len() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
