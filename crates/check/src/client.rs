//! `check client`: a scripted agent played against a client command.
//!
//! The scripted agent answers `initialize` (version 1, no optional
//! capabilities), creates sessions, and runs a script during each prompt turn.
//! The first turn of a connection starts with probes: an update carrying
//! unknown `_meta`, an update of a kind v1 does not define, an unknown
//! extension notification (each followed by a ping that shows whether the
//! client still answers), and a request for a method that does not exist.
//! The rest of a turn depends on the prompt's first word, so that the interop
//! scenario clients (`interop/SCENARIO.md`) can drive every part of it
//! (`echo`, `permission`, `fs <path>`, `wait`, `error`, `unknown-update`);
//! any other prompt gets the default script: a tool call with a permission
//! request, a permission request withdrawn with `$/cancel_request`, and file
//! reads and writes in a scratch directory if the client advertised them.
//!
//! The run ends when the client closes the connection, or when it has been
//! silent for the timeout with no turn running. Requirements the client never
//! gave a chance to judge (e.g. it never cancelled a turn) are reported as not
//! exercised.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agentproto_acp::v1::{
    ClientCapabilities, ClientNotification, ClientRequest, ClientResponse, ContentBlock, RequestPermissionOutcome,
};
use agentproto_acp::DispatchError;
use agentproto_jsonrpc::message::{encode_notification, encode_request, encode_response};
use agentproto_jsonrpc::{ErrorCode, ErrorObject, Message, RequestId};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::relay::{substitute, Listener};
use crate::report::{Ledger, Progress, Report, Subject};
use crate::requirement::{Requirement, CLIENT};
use crate::wire::{excerpt, Exit, Inbox, Outbox, Program, Wire};
use crate::{ClientCheck, TempDir};

type Answer = Result<Box<RawValue>, ErrorObject>;

/// How a request of the scripted agent ended.
#[derive(Debug)]
enum Reply {
    Answer(Answer),
    Timeout,
    Closed,
}

/// What a pending request of the scripted agent was for.
#[derive(Debug, Clone)]
enum Purpose {
    /// Judged by its caller only.
    Plain,
    /// A permission request: its answer must pick one of `offered`.
    Permission { session: String, offered: Vec<String> },
    /// A permission request withdrawn with `$/cancel_request`: any answer will do.
    Withdrawn,
}

struct Pending {
    method: String,
    purpose: Purpose,
    tx: oneshot::Sender<Answer>,
}

struct Turn {
    prompt: RequestId,
    cancel: CancellationToken,
}

#[derive(Default)]
struct State {
    seen: usize,
    initialized: bool,
    capabilities: Option<ClientCapabilities>,
    sessions: HashSet<String>,
    session_count: usize,
    turns: HashMap<String, Turn>,
    probed: bool,
    /// Permission requests that were pending when their session was cancelled.
    must_cancel: HashSet<RequestId>,
    /// The `_agentproto/slow` requests of the interop scenario, answered on `$/cancel_request`.
    slow: HashSet<RequestId>,
    requests: usize,
    prompts: usize,
}

/// The client's name and version, and the protocol version it asked for.
type PeerInfo = (Option<(String, String)>, Option<u16>);

struct Shared {
    out: Outbox,
    timeout: Duration,
    next_id: AtomicI64,
    state: Mutex<State>,
    ledger: Mutex<Ledger>,
    notes: Mutex<Vec<String>>,
    pending: Mutex<HashMap<RequestId, Pending>>,
    peer: Mutex<PeerInfo>,
    scratch: TempDir,
    progress: Box<dyn Fn(&str) + Send + Sync>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn raw(value: &Value) -> Box<RawValue> {
    RawValue::from_string(value.to_string()).expect("valid JSON")
}

fn describe(error: &ErrorObject) -> String {
    format!("error {} {:?}", error.code.0, error.message)
}

impl Shared {
    fn pass(&self, id: &str) {
        lock(&self.ledger).pass(id);
    }

    fn fail(&self, id: &str, detail: impl Into<String>) {
        lock(&self.ledger).fail(id, detail);
    }

    fn check(&self, id: &str, ok: bool, detail: impl FnOnce() -> String) {
        lock(&self.ledger).check(id, ok, detail);
    }

    fn skip(&self, id: &str, reason: &str) {
        lock(&self.ledger).skip(id, reason);
    }

    fn note(&self, text: String) {
        lock(&self.notes).push(text);
    }

    async fn send(&self, line: Vec<u8>) {
        // A failed write means the client is gone; the reader sees that too.
        let _ = self.out.send(&line).await;
    }

    async fn respond(&self, id: &RequestId, answer: Result<Value, ErrorObject>) {
        let mut line = Vec::new();
        match answer {
            Ok(value) => encode_response(&mut line, id, Ok(&raw(&value))),
            Err(error) => encode_response(&mut line, id, Err(&error)),
        }
        self.send(line).await;
    }

    async fn notify(&self, method: &str, params: Value) {
        let mut line = Vec::new();
        encode_notification(&mut line, method, Some(&raw(&params)));
        self.send(line).await;
    }

    /// Sends a request; the receiver gets its answer.
    async fn request(&self, method: &str, params: Value, purpose: Purpose) -> (RequestId, oneshot::Receiver<Answer>) {
        let id = RequestId::number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), Pending { method: method.to_owned(), purpose, tx });
        let mut line = Vec::new();
        encode_request(&mut line, &id, method, Some(&raw(&params)));
        self.send(line).await;
        (id, rx)
    }

    async fn wait(&self, rx: oneshot::Receiver<Answer>) -> Reply {
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(answer)) => Reply::Answer(answer),
            Ok(Err(_)) => Reply::Closed,
            Err(_) => Reply::Timeout,
        }
    }

    async fn call(&self, method: &str, params: Value, purpose: Purpose) -> Reply {
        let (_, rx) = self.request(method, params, purpose).await;
        self.wait(rx).await
    }

    async fn update(&self, session: &str, update: Value) {
        self.notify("session/update", json!({"sessionId": session, "update": update})).await;
    }

    async fn chunk(&self, session: &str, text: &str) {
        let update = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}});
        self.update(session, update).await;
    }

    fn capabilities(&self) -> (bool, bool) {
        let state = lock(&self.state);
        state.capabilities.as_ref().map_or((false, false), |c| (c.fs.read_text_file, c.fs.write_text_file))
    }
}

/// Runs `check client`.
pub(crate) async fn run(options: &ClientCheck, progress: &dyn Progress) -> Report {
    let mut ledger = Ledger::new(CLIENT);
    let mut notes = Vec::new();
    progress.step("starting the client");
    let started = start(options).await;
    let (mut program, out, inbox) = match started {
        Ok(started) => started,
        Err(reason) => {
            ledger.fail("ACP-CLIENT-INIT-001", reason);
            return Report {
                subject: Subject::Client,
                command: options.command.clone(),
                peer: None,
                protocol_version: None,
                results: ledger.finish(|r: &Requirement| options.selects(r.id)),
                notes,
                stderr_tail: Vec::new(),
            };
        }
    };
    // The progress callback must outlive spawned turn tasks, so steps are
    // collected as text and shown by this task.
    let (steps_tx, mut steps_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let shared = Arc::new(Shared {
        out,
        timeout: options.timeout,
        next_id: AtomicI64::new(0),
        state: Mutex::new(State::default()),
        ledger: Mutex::new(ledger),
        notes: Mutex::new(Vec::new()),
        pending: Mutex::new(HashMap::new()),
        peer: Mutex::new((None, None)),
        scratch: TempDir::new("client"),
        progress: Box::new(move |text| {
            let _ = steps_tx.send(text.to_owned());
        }),
    });
    let mut turns = Vec::new();
    {
        let router = route(shared.clone(), inbox, &mut turns);
        tokio::pin!(router);
        loop {
            tokio::select! {
                () = &mut router => break,
                Some(step) = steps_rx.recv() => progress.step(&step),
            }
        }
    }
    progress.step("closing the client");
    shared.out.close().await;
    {
        let state = lock(&shared.state);
        for turn in state.turns.values() {
            turn.cancel.cancel();
        }
    }
    lock(&shared.pending).clear();
    for mut turn in turns {
        if tokio::time::timeout(options.timeout, &mut turn).await.is_err() {
            turn.abort();
        }
    }
    let exit = program.finish(options.exit_grace).await;
    if exit == Exit::Killed {
        notes.push(format!("the client was still running {:?} after the run ended (killed)", options.exit_grace));
    }
    conclude(&shared);
    notes.extend(std::mem::take(&mut *lock(&shared.notes)));
    let (peer, version) = std::mem::take(&mut *lock(&shared.peer));
    let ledger = std::mem::replace(&mut *lock(&shared.ledger), Ledger::new(CLIENT));
    Report {
        subject: Subject::Client,
        command: options.command.clone(),
        peer,
        protocol_version: version,
        results: ledger.finish(|r: &Requirement| options.selects(r.id)),
        notes,
        stderr_tail: program.stderr_tail(),
    }
}

/// Starts the client: on its own stdio, or with the relay in place of `{agent}`.
async fn start(options: &ClientCheck) -> Result<(Program, Outbox, Inbox), String> {
    let shown = options.command.join(" ");
    let cannot = |e: std::io::Error| format!("cannot start `{shown}`: {e}");
    if !options.command.iter().any(|arg| arg.contains("{agent}")) {
        return Program::spawn_linked(&options.command, options.stderr, options.max_message_size, options.timeout)
            .map_err(cannot);
    }
    if options.relay.is_empty() {
        return Err("the command line has {agent} but no relay command was configured".to_owned());
    }
    let listener = Listener::bind().await.map_err(|e| format!("cannot listen on loopback: {e}"))?;
    let mut relay = options.relay.clone();
    relay.extend(listener.relay_args().map_err(|e| e.to_string())?);
    let command = substitute(&options.command, &relay).unwrap_or_else(|| options.command.clone());
    let mut program = Program::spawn_detached(&command, options.stderr).map_err(cannot)?;
    let accepted = tokio::select! {
        accepted = tokio::time::timeout(options.timeout, listener.accept()) => accepted,
        () = program.exited() => return Err("the client exited without starting its agent command".to_owned()),
    };
    match accepted {
        Ok(Ok(stream)) => {
            let _ = stream.set_nodelay(true);
            let (read, write) = stream.into_split();
            let (out, inbox) = crate::wire::link(read, write, options.max_message_size, options.timeout);
            Ok((program, out, inbox))
        }
        Ok(Err(e)) => Err(format!("accepting the relay's connection failed: {e}")),
        Err(_) => Err(format!("the client did not start its agent command ({{agent}}) within {:?}", options.timeout)),
    }
}

/// Reads the client's messages until it closes the connection or stays silent
/// for the timeout with no turn running.
async fn route(shared: Arc<Shared>, mut inbox: Inbox, turns: &mut Vec<tokio::task::JoinHandle<()>>) {
    loop {
        let deadline = Instant::now() + shared.timeout;
        let Some(wire) = inbox.next_until(deadline).await else {
            if lock(&shared.state).turns.is_empty() {
                (shared.progress)("the client has been silent for the timeout; ending the run");
                return;
            }
            continue;
        };
        let message = match wire {
            Wire::Message(message) => message,
            Wire::Invalid { excerpt, error } => {
                shared.fail(
                    "ACP-CLIENT-WIRE-001",
                    format!("wrote a line that is not a JSON-RPC message ({error}): {excerpt:?}"),
                );
                continue;
            }
            Wire::Oversize(len) => {
                shared.fail("ACP-CLIENT-WIRE-001", format!("wrote a line of {len} bytes, over the bound"));
                continue;
            }
            Wire::Closed => return,
            Wire::Failed(e) => {
                shared.note(format!("reading from the client failed: {e}"));
                return;
            }
        };
        shared.pass("ACP-CLIENT-WIRE-001");
        let first = {
            let mut state = lock(&shared.state);
            state.seen += 1;
            state.seen == 1
        };
        if first {
            let is_initialize = matches!(&message, Message::Request { method, .. } if method == "initialize");
            shared.check("ACP-CLIENT-INIT-001", is_initialize, || match &message {
                Message::Request { method, .. } | Message::Notification { method, .. } => {
                    format!("the first message was {method:?}")
                }
                Message::Response { id, .. } => format!("the first message was a response (id {id})"),
            });
        }
        match message {
            Message::Request { id, method, params } => {
                if let Some(turn) = on_request(&shared, id, &method, params.as_deref()).await {
                    turns.push(turn);
                }
            }
            Message::Notification { method, params } => on_notification(&shared, &method, params.as_deref()).await,
            Message::Response { id, result } => on_response(&shared, id, result),
        }
    }
}

async fn on_request(
    shared: &Arc<Shared>,
    id: RequestId,
    method: &str,
    params: Option<&RawValue>,
) -> Option<tokio::task::JoinHandle<()>> {
    lock(&shared.state).requests += 1;
    let decoded = match ClientRequest::decode(method, params) {
        Ok(decoded) => decoded,
        Err(DispatchError::Invalid(e)) => {
            shared.fail("ACP-CLIENT-WIRE-002", format!("sent an invalid {method} request: {e}"));
            if method == "initialize" {
                shared.fail("ACP-CLIENT-INIT-002", format!("invalid initialize params: {e}"));
            }
            shared.respond(&id, Err(agentproto_acp::invalid_params(&e))).await;
            return None;
        }
        Err(_) => {
            shared.fail("ACP-CLIENT-CAP-001", format!("called {method:?}, which is not an agent method of ACP v1"));
            shared.respond(&id, Err(ErrorObject::method_not_found(method))).await;
            return None;
        }
    };
    match crate::common::warnings(method, &decoded.warnings) {
        Some(text) => shared.fail("ACP-CLIENT-WIRE-002", text),
        None => shared.pass("ACP-CLIENT-WIRE-002"),
    }
    if let Some(session) = agentproto_acp::Payload::session_id(&decoded.value) {
        let known = lock(&shared.state).sessions.contains(session);
        if !known {
            shared.fail(
                "ACP-CLIENT-SESSION-002",
                format!("{method} named session {session:?}, which the agent never created"),
            );
            let data = raw(&json!({"sessionId": session}));
            let error = ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "unknown session").with_data(data);
            shared.respond(&id, Err(error)).await;
            return None;
        }
        shared.pass("ACP-CLIENT-SESSION-002");
    }
    let initialized = lock(&shared.state).initialized;
    if !initialized && !matches!(decoded.value, ClientRequest::Initialize(_)) {
        let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, "initialize first");
        shared.respond(&id, Err(error)).await;
        return None;
    }
    match decoded.value {
        ClientRequest::Initialize(request) => {
            if initialized {
                shared.fail("ACP-CLIENT-INIT-003", "sent initialize a second time");
                shared.respond(&id, Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, "already initialized"))).await;
                return None;
            }
            shared.pass("ACP-CLIENT-INIT-003");
            let version = request.protocol_version;
            shared.check("ACP-CLIENT-INIT-002", version >= 1, || format!("asked for protocolVersion {version}"));
            *lock(&shared.peer) =
                (request.client_info.value().map(|info| (info.name.clone(), info.version.clone())), Some(version));
            {
                let mut state = lock(&shared.state);
                state.initialized = true;
                state.capabilities = Some(request.client_capabilities);
            }
            (shared.progress)("initialize answered");
            shared.respond(&id, Ok(crate::common::initialize_response())).await;
        }
        ClientRequest::SessionNew(request) => {
            let absolute = std::path::Path::new(&request.cwd).is_absolute();
            shared.check("ACP-CLIENT-SESSION-001", absolute, || {
                format!("session/new cwd {:?} is not absolute", request.cwd)
            });
            let session = {
                let mut state = lock(&shared.state);
                state.session_count += 1;
                let session = format!("check-session-{}", state.session_count);
                state.sessions.insert(session.clone());
                session
            };
            (shared.progress)(&format!("session {session} created"));
            shared.respond(&id, Ok(json!({"sessionId": session}))).await;
        }
        ClientRequest::SessionPrompt(request) => {
            let session = request.session_id.0.clone();
            let mut accepted = true;
            for block in &request.prompt {
                let kind = match block {
                    ContentBlock::Text(_) | ContentBlock::ResourceLink(_) => continue,
                    ContentBlock::Image(_) => "image",
                    ContentBlock::Audio(_) => "audio",
                    ContentBlock::Resource(_) => "embedded resource",
                    ContentBlock::Unknown(_) => "unknown",
                };
                accepted = false;
                shared.fail(
                    "ACP-CLIENT-CAP-002",
                    format!("a prompt carried {kind} content although the agent advertised no such capability"),
                );
            }
            if accepted {
                shared.pass("ACP-CLIENT-CAP-002");
            }
            let text = request.prompt.iter().find_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            });
            let cancel = CancellationToken::new();
            let busy = {
                let mut state = lock(&shared.state);
                state.prompts += 1;
                let busy = state.turns.contains_key(&session);
                if !busy {
                    state.turns.insert(session.clone(), Turn { prompt: id.clone(), cancel: cancel.clone() });
                }
                busy
            };
            if busy {
                shared.fail("ACP-CLIENT-PROMPT-001", format!("a second prompt on {session:?} while one was running"));
                let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, "a prompt is already running on this session");
                shared.respond(&id, Err(error)).await;
                return None;
            }
            shared.pass("ACP-CLIENT-PROMPT-001");
            (shared.progress)(&format!("prompt turn on {session}"));
            let shared = shared.clone();
            return Some(tokio::spawn(async move {
                turn(shared, session, id, text.unwrap_or_default(), cancel).await;
            }));
        }
        ClientRequest::Ext(ext) if ext.method == "_agentproto/slow" => {
            lock(&shared.state).slow.insert(id);
        }
        ClientRequest::Ext(_) => shared.respond(&id, Err(ErrorObject::method_not_found(method))).await,
        _ => {
            shared.fail("ACP-CLIENT-CAP-001", format!("called {method}, which the agent did not advertise"));
            shared.respond(&id, Err(ErrorObject::method_not_found(method))).await;
        }
    }
    None
}

async fn on_notification(shared: &Arc<Shared>, method: &str, params: Option<&RawValue>) {
    let decoded = match ClientNotification::decode(method, params) {
        Ok(decoded) => decoded,
        Err(DispatchError::Invalid(e)) => {
            shared.fail("ACP-CLIENT-WIRE-002", format!("sent an invalid {method} notification: {e}"));
            return;
        }
        Err(_) => {
            shared.fail(
                "ACP-CLIENT-WIRE-002",
                format!("sent notification {method:?}, which v1 does not define for clients"),
            );
            return;
        }
    };
    match crate::common::warnings(method, &decoded.warnings) {
        Some(text) => shared.fail("ACP-CLIENT-WIRE-002", text),
        None => shared.pass("ACP-CLIENT-WIRE-002"),
    }
    match decoded.value {
        ClientNotification::SessionCancel(cancel) => {
            let session = cancel.session_id.0;
            let known = lock(&shared.state).sessions.contains(&session);
            if !known {
                shared.fail(
                    "ACP-CLIENT-SESSION-002",
                    format!("session/cancel named {session:?}, which the agent never created"),
                );
                return;
            }
            (shared.progress)(&format!("session/cancel on {session}"));
            let pending: Vec<RequestId> = lock(&shared.pending)
                .iter()
                .filter(|(_, p)| matches!(&p.purpose, Purpose::Permission { session: s, .. } if *s == session))
                .map(|(id, _)| id.clone())
                .collect();
            let mut state = lock(&shared.state);
            state.must_cancel.extend(pending);
            if let Some(turn) = state.turns.get(&session) {
                turn.cancel.cancel();
            }
        }
        ClientNotification::CancelRequest(cancel) => {
            let target = cancel.request_id;
            let slow = lock(&shared.state).slow.remove(&target);
            if slow {
                shared.respond(&target, Err(ErrorObject::request_cancelled())).await;
                return;
            }
            let state = lock(&shared.state);
            if let Some(turn) = state.turns.values().find(|t| t.prompt == target) {
                turn.cancel.cancel();
            }
        }
        ClientNotification::Ext(_) => {}
    }
}

fn on_response(shared: &Arc<Shared>, id: RequestId, answer: Answer) {
    let Some(pending) = lock(&shared.pending).remove(&id) else {
        if id.is_null() {
            let what = match &answer {
                Ok(_) => "a result".to_owned(),
                Err(error) => describe(error),
            };
            shared.note(format!(
                "the client sent a response with id null ({what}): it could not read a line of the agent"
            ));
        } else {
            shared.fail("ACP-CLIENT-WIRE-003", format!("a response with id {id} answers no request the agent sent"));
        }
        return;
    };
    let method = pending.method.as_str();
    if let Ok(result) = &answer {
        match ClientResponse::decode(method, Some(result)) {
            Ok(decoded) => {
                match crate::common::warnings(&format!("{method} result"), &decoded.warnings) {
                    Some(text) => shared.fail("ACP-CLIENT-WIRE-003", text),
                    None => shared.pass("ACP-CLIENT-WIRE-003"),
                }
                if let (ClientResponse::SessionRequestPermission(response), Purpose::Permission { offered, .. }) =
                    (&decoded.value, &pending.purpose)
                {
                    judge_permission(shared, &id, Some(&response.outcome), offered, None);
                }
            }
            Err(DispatchError::Invalid(e)) => {
                shared.fail("ACP-CLIENT-WIRE-003", format!("invalid {method} result: {e}"));
                if let Purpose::Permission { offered, .. } = &pending.purpose {
                    judge_permission(shared, &id, None, offered, Some(format!("an invalid result ({e})")));
                }
            }
            Err(_) => shared.pass("ACP-CLIENT-WIRE-003"),
        }
    } else {
        shared.pass("ACP-CLIENT-WIRE-003");
        if let (Err(error), Purpose::Permission { offered, .. }) = (&answer, &pending.purpose) {
            judge_permission(shared, &id, None, offered, Some(describe(error)));
        }
    }
    let _ = pending.tx.send(answer);
}

/// ACP-CLIENT-PERM-001/002 for one permission answer.
fn judge_permission(
    shared: &Shared,
    id: &RequestId,
    outcome: Option<&RequestPermissionOutcome>,
    offered: &[String],
    failure: Option<String>,
) {
    let after_cancel = lock(&shared.state).must_cancel.remove(id);
    if after_cancel {
        let cancelled = matches!(outcome, Some(RequestPermissionOutcome::Cancelled));
        shared.check("ACP-CLIENT-PERM-002", cancelled, || match (outcome, &failure) {
            (_, Some(text)) => format!("after session/cancel, a pending permission request was answered with {text}"),
            (Some(RequestPermissionOutcome::Selected(s)), _) => format!(
                "after session/cancel, a pending permission request was answered \"selected\" ({:?}) instead of \"cancelled\"",
                s.option_id.0
            ),
            _ => "after session/cancel, a pending permission request was not answered \"cancelled\"".to_owned(),
        });
        return;
    }
    match (outcome, failure) {
        (_, Some(text)) => shared.fail("ACP-CLIENT-PERM-001", format!("a permission request was answered with {text}")),
        (Some(RequestPermissionOutcome::Cancelled), _) => shared.pass("ACP-CLIENT-PERM-001"),
        (Some(RequestPermissionOutcome::Selected(selected)), _) => {
            let option = &selected.option_id.0;
            shared.check("ACP-CLIENT-PERM-001", offered.contains(option), || {
                format!("a permission request was answered with optionId {option:?}, which was not offered")
            });
        }
        (Some(RequestPermissionOutcome::Unknown(raw)), _) => {
            shared.fail("ACP-CLIENT-PERM-001", format!("a permission outcome v1 does not define: {}", raw.get()))
        }
        (None, None) => {}
    }
}

/// One prompt turn of the scripted agent.
async fn turn(shared: Arc<Shared>, session: String, prompt: RequestId, text: String, cancel: CancellationToken) {
    let probe = {
        let mut state = lock(&shared.state);
        !std::mem::replace(&mut state.probed, true)
    };
    let mut outcome = Ok(());
    if probe {
        outcome = probes(&shared, &session).await;
    }
    let mut words = text.split_whitespace();
    let stop = match outcome {
        Err(()) => None,
        Ok(()) => match words.next().unwrap_or_default() {
            "echo" => {
                for word in words {
                    shared.chunk(&session, word).await;
                }
                Some("end_turn")
            }
            "permission" => Some(permission_turn(&shared, &session, &cancel).await),
            "fs" => {
                let path = text.trim_start().trim_start_matches("fs").trim();
                scenario_fs(&shared, &session, path).await;
                Some("end_turn")
            }
            "wait" => {
                shared.chunk(&session, "waiting").await;
                tokio::select! {
                    () = cancel.cancelled() => Some("cancelled"),
                    () = tokio::time::sleep(shared.timeout) => {
                        shared.note("a `wait` turn was never cancelled; it ended after the timeout".to_owned());
                        Some("end_turn")
                    }
                }
            }
            "error" => {
                let error = ErrorObject::new(ErrorCode(4242), "deliberate failure")
                    .with_data(raw(&json!({"reason": "scenario"})));
                finish_turn(&shared, &session, &prompt, Err(error)).await;
                return;
            }
            "unknown-update" => {
                shared.update(&session, json!({"sessionUpdate": "agentproto_future_update", "detail": {"n": 1}})).await;
                shared.chunk(&session, "after-unknown").await;
                Some("end_turn")
            }
            _ => Some(default_turn(&shared, &session, &cancel).await),
        },
    };
    let stop = if cancel.is_cancelled() { "cancelled" } else { stop.unwrap_or("end_turn") };
    finish_turn(&shared, &session, &prompt, Ok(json!({"stopReason": stop}))).await;
}

async fn finish_turn(shared: &Shared, session: &str, prompt: &RequestId, answer: Result<Value, ErrorObject>) {
    lock(&shared.state).turns.remove(session);
    shared.respond(prompt, answer).await;
}

/// Sends a ping; judges `id` on whether the client still answers, and
/// ACP-CLIENT-RPC-001 on how. `Err` when the client is gone.
async fn alive(shared: &Shared, id: &str, after: &str) -> Result<(), ()> {
    match shared.call("_agentproto.check/ping", json!({}), Purpose::Plain).await {
        Reply::Answer(answer) => {
            shared.pass(id);
            judge_unknown(shared, "ACP-CLIENT-RPC-001", "_agentproto.check/ping", answer);
            Ok(())
        }
        Reply::Timeout => {
            shared.fail(id, format!("after {after}, the client did not answer a request within {:?}", shared.timeout));
            Ok(())
        }
        Reply::Closed => {
            shared.fail(id, format!("after {after}, the client closed the connection"));
            Err(())
        }
    }
}

/// Judges an answer that must be -32601.
fn judge_unknown(shared: &Shared, id: &str, method: &str, answer: Answer) {
    match answer {
        Err(error) => shared.check(id, error.code == ErrorCode::METHOD_NOT_FOUND, || {
            format!("{method} was answered {} instead of -32601", describe(&error))
        }),
        Ok(result) => {
            shared.fail(id, format!("{method} was answered with a result: {}", excerpt(result.get().as_bytes())))
        }
    }
}

/// The probes of a connection's first turn.
async fn probes(shared: &Shared, session: &str) -> Result<(), ()> {
    (shared.progress)("probing extensions");
    let meta = json!({"agentproto.check/probe": {"nested": [1, {"deep": true}]}});
    let update = json!({
        "sessionUpdate": "agent_thought_chunk",
        "content": {"type": "text", "text": "agentproto check: probing how this client handles extensions", "_meta": meta},
        "_meta": meta,
    });
    shared.notify("session/update", json!({"sessionId": session, "update": update, "_meta": meta})).await;
    alive(shared, "ACP-CLIENT-EXT-002", "an update carrying unknown _meta").await?;
    let future = json!({"sessionUpdate": "agentproto_check_future_update", "detail": {"n": 1}});
    shared.update(session, future).await;
    alive(shared, "ACP-CLIENT-EXT-003", "an update of an unknown kind").await?;
    shared.notify("_agentproto.check/notice", json!({"detail": "this notification should be ignored"})).await;
    alive(shared, "ACP-CLIENT-EXT-001", "an unknown extension notification").await?;
    match shared.call("agentproto.check/no_such_method", json!({}), Purpose::Plain).await {
        Reply::Answer(answer) => judge_unknown(shared, "ACP-CLIENT-RPC-002", "agentproto.check/no_such_method", answer),
        Reply::Timeout => shared.fail(
            "ACP-CLIENT-RPC-002",
            format!("agentproto.check/no_such_method got no answer within {:?}", shared.timeout),
        ),
        Reply::Closed => {
            shared.fail("ACP-CLIENT-RPC-002", "the client closed the connection instead of answering");
            return Err(());
        }
    }
    Ok(())
}

fn permission_params(session: &str, call: &str) -> (Value, Vec<String>) {
    let params = json!({
        "sessionId": session,
        "toolCall": {"toolCallId": call},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ],
    });
    (params, vec!["allow".to_owned(), "reject".to_owned()])
}

/// A tool call and its permission request; the option picked, `cancelled`, or `None`.
async fn ask_permission(shared: &Shared, session: &str, call: &str) -> Option<String> {
    let tool_call = json!({"sessionUpdate": "tool_call", "toolCallId": call, "title": "Pretend edit", "kind": "edit", "status": "pending"});
    shared.update(session, tool_call).await;
    let (params, offered) = permission_params(session, call);
    let purpose = Purpose::Permission { session: session.to_owned(), offered };
    let (id, rx) = shared.request("session/request_permission", params, purpose).await;
    match shared.wait(rx).await {
        Reply::Answer(Ok(raw)) => {
            let value: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            let outcome = &value["outcome"];
            Some(match outcome["outcome"].as_str() {
                Some("selected") => outcome["optionId"].as_str().unwrap_or_default().to_owned(),
                _ => "cancelled".to_owned(),
            })
        }
        Reply::Answer(Err(_)) | Reply::Closed => None,
        Reply::Timeout => {
            let after_cancel = lock(&shared.state).must_cancel.remove(&id);
            let (req, when) = if after_cancel {
                ("ACP-CLIENT-PERM-002", " after session/cancel")
            } else {
                ("ACP-CLIENT-PERM-001", "")
            };
            shared.fail(req, format!("a permission request was not answered within {:?}{when}", shared.timeout));
            None
        }
    }
}

/// The interop scenario's `permission` turn.
async fn permission_turn(shared: &Shared, session: &str, cancel: &CancellationToken) -> &'static str {
    let picked = ask_permission(shared, session, "call-1").await;
    let picked = picked.unwrap_or_else(|| "cancelled".to_owned());
    shared.chunk(session, &format!("permission:{picked}")).await;
    let status = if picked == "allow" { "completed" } else { "failed" };
    shared
        .update(session, json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": status}))
        .await;
    if picked == "cancelled" || cancel.is_cancelled() {
        "cancelled"
    } else {
        "end_turn"
    }
}

/// Judges an fs answer: the result (valid, and what it should be) or an error.
fn judge_fs(shared: &Shared, what: &str, reply: Reply, content: impl FnOnce(&Value) -> Result<(), String>) {
    match reply {
        Reply::Answer(Ok(raw)) => {
            shared.pass("ACP-CLIENT-FS-001");
            let value: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            match content(&value) {
                Ok(()) => shared.pass("ACP-CLIENT-FS-002"),
                Err(text) => shared.fail("ACP-CLIENT-FS-002", format!("{what}: {text}")),
            }
        }
        Reply::Answer(Err(error)) => {
            shared.pass("ACP-CLIENT-FS-001");
            shared.skip("ACP-CLIENT-FS-002", &format!("the client refused {what} with {}", describe(&error)));
        }
        Reply::Timeout => shared.fail("ACP-CLIENT-FS-001", format!("{what}: no answer within {:?}", shared.timeout)),
        Reply::Closed => shared.fail("ACP-CLIENT-FS-001", format!("{what}: the client closed the connection")),
    }
}

/// Reads `path` through the client and compares with the file on disk; then,
/// if `write` is given, writes it through the client and checks the file.
async fn fs_round(shared: &Shared, session: &str, read: Option<&str>, write: Option<(&str, &str)>) -> Option<String> {
    let (can_read, can_write) = shared.capabilities();
    if !can_read && !can_write {
        let reason = "the client advertised no file-system capability";
        shared.skip("ACP-CLIENT-FS-001", reason);
        shared.skip("ACP-CLIENT-FS-002", reason);
    }
    let mut text = None;
    if let (true, Some(path)) = (can_read, read) {
        let expected = std::fs::read_to_string(path).ok();
        let reply = shared.call("fs/read_text_file", json!({"sessionId": session, "path": path}), Purpose::Plain).await;
        if let Reply::Answer(Ok(raw)) = &reply {
            let value: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            text = value["content"].as_str().map(str::to_owned);
        }
        judge_fs(shared, &format!("reading {path}"), reply, |value| match (&expected, value["content"].as_str()) {
            (Some(expected), Some(got)) if got == expected => Ok(()),
            (Some(_), Some(got)) => {
                Err(format!("returned {:?}, which is not the file's text", excerpt(got.as_bytes())))
            }
            (None, _) => Ok(()),
            (_, None) => Err("no content".to_owned()),
        });
    }
    if let (true, Some((path, content))) = (can_write, write) {
        let params = json!({"sessionId": session, "path": path, "content": content});
        let reply = shared.call("fs/write_text_file", params, Purpose::Plain).await;
        judge_fs(shared, &format!("writing {path}"), reply, |_| match std::fs::read_to_string(path) {
            Ok(stored) if stored == content => Ok(()),
            Ok(stored) => Err(format!("the file holds {:?}, not what was sent", excerpt(stored.as_bytes()))),
            Err(e) => Err(format!("the file cannot be read back ({e})")),
        });
    }
    text
}

/// The interop scenario's `fs <path>` turn.
async fn scenario_fs(shared: &Shared, session: &str, path: &str) {
    let (can_read, _) = shared.capabilities();
    if !can_read {
        fs_round(shared, session, None, None).await;
        return;
    }
    let Some(text) = fs_round(shared, session, Some(path), None).await else { return };
    let out = format!("{path}.out");
    fs_round(shared, session, None, Some((&out, &text.to_uppercase()))).await;
    shared.chunk(session, &format!("read:{}", text.encode_utf16().count())).await;
}

/// The default script of a turn.
async fn default_turn(shared: &Shared, session: &str, cancel: &CancellationToken) -> &'static str {
    shared.chunk(session, "agentproto check: a scripted turn. ").await;
    let picked = ask_permission(shared, session, "check-call-1").await;
    let status = if picked.as_deref() == Some("allow") { "completed" } else { "failed" };
    shared
        .update(session, json!({"sessionUpdate": "tool_call_update", "toolCallId": "check-call-1", "status": status}))
        .await;
    if cancel.is_cancelled() {
        return "cancelled";
    }

    let tool_call = json!({"sessionUpdate": "tool_call", "toolCallId": "check-call-2", "title": "Withdrawn edit", "kind": "edit", "status": "pending"});
    shared.update(session, tool_call).await;
    let (params, _) = permission_params(session, "check-call-2");
    let (id, rx) = shared.request("session/request_permission", params, Purpose::Withdrawn).await;
    shared.notify("$/cancel_request", json!({"requestId": id.as_number()})).await;
    match shared.wait(rx).await {
        Reply::Answer(_) => shared.pass("ACP-CLIENT-RPC-003"),
        Reply::Timeout => shared.fail(
            "ACP-CLIENT-RPC-003",
            format!(
                "a permission request withdrawn with $/cancel_request was not answered within {:?}",
                shared.timeout
            ),
        ),
        Reply::Closed => shared.fail("ACP-CLIENT-RPC-003", "the client closed the connection instead of answering"),
    }
    shared
        .update(session, json!({"sessionUpdate": "tool_call_update", "toolCallId": "check-call-2", "status": "failed"}))
        .await;
    if cancel.is_cancelled() {
        return "cancelled";
    }

    let read = shared.scratch.path().join("read-me.txt");
    let written = shared.scratch.path().join("written.txt");
    let _ = std::fs::write(&read, "agentproto check\nsecond line, ünïcödé\n");
    let (read, written) = (read.display().to_string(), written.display().to_string());
    fs_round(shared, session, Some(&read), Some((&written, "written by agentproto check\n"))).await;
    shared.chunk(session, "done.").await;
    if cancel.is_cancelled() {
        "cancelled"
    } else {
        "end_turn"
    }
}

/// Explains what the run never reached.
fn conclude(shared: &Shared) {
    let state = lock(&shared.state);
    let mut ledger = lock(&shared.ledger);
    if state.seen == 0 {
        ledger.fail("ACP-CLIENT-INIT-001", "the client sent nothing");
    }
    if !state.initialized {
        ledger.skip("ACP-CLIENT-INIT-002", "the client never sent initialize");
        ledger.skip("ACP-CLIENT-INIT-003", "the client never sent initialize");
    }
    if state.requests > 0 && !ledger.failed("ACP-CLIENT-CAP-001") {
        ledger.pass("ACP-CLIENT-CAP-001");
    }
    if state.prompts == 0 {
        for id in [
            "ACP-CLIENT-CAP-002",
            "ACP-CLIENT-PROMPT-001",
            "ACP-CLIENT-PERM-001",
            "ACP-CLIENT-PERM-002",
            "ACP-CLIENT-RPC-001",
            "ACP-CLIENT-RPC-002",
            "ACP-CLIENT-RPC-003",
            "ACP-CLIENT-EXT-001",
            "ACP-CLIENT-EXT-002",
            "ACP-CLIENT-EXT-003",
            "ACP-CLIENT-FS-001",
            "ACP-CLIENT-FS-002",
        ] {
            ledger.skip(id, "the client sent no prompt (the scripted agent acts during prompt turns)");
        }
    }
    ledger.skip("ACP-CLIENT-SESSION-001", "the client created no session");
    ledger.skip("ACP-CLIENT-SESSION-002", "the client named no session");
    ledger.skip("ACP-CLIENT-PERM-001", "no permission request of the script was answered");
    ledger.skip("ACP-CLIENT-PERM-002", "the client never sent session/cancel while a permission request was pending");
    ledger.skip("ACP-CLIENT-RPC-003", "no turn ran the default script (prompts starting with a scenario word skip it)");
    let (read, write) =
        state.capabilities.as_ref().map_or((false, false), |c| (c.fs.read_text_file, c.fs.write_text_file));
    if !read && !write {
        ledger.skip("ACP-CLIENT-FS-001", "the client advertised no file-system capability");
        ledger.skip("ACP-CLIENT-FS-002", "the client advertised no file-system capability");
    }
    ledger.skip("ACP-CLIENT-FS-001", "no turn asked for files");
    ledger.skip("ACP-CLIENT-FS-002", "no turn asked for files");
    ledger.skip("ACP-CLIENT-WIRE-003", "the client sent no response");
}
