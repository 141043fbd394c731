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

mod fs;
mod messages;
mod router;
mod turn;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agentproto_acp::v1::ClientCapabilities;
use agentproto_jsonrpc::message::{encode_notification, encode_request, encode_response};
use agentproto_jsonrpc::{ErrorObject, RequestId};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use self::router::route;
use crate::relay::{substitute, Listener};
use crate::report::{Ledger, Progress, Report, Subject};
use crate::requirement::{Requirement, CLIENT};
use crate::wire::{Exit, Inbox, Outbox, Program};
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

    /// Notes the variants v1 does not list in a decoded payload, once each.
    fn note_unknown_variants(&self, what: &str, warnings: &[agentproto_acp::Warning]) {
        crate::common::note_once(&mut lock(&self.notes), crate::common::unknown_variants(what, warnings));
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
    let [address, token] = listener.relay_args().map_err(|e| e.to_string())?;
    let mut relay = options.relay.clone();
    relay.extend([address.clone(), token.clone()]);
    let command = substitute(&options.command, &options.relay[0], &relay).unwrap_or_else(|| options.command.clone());
    let env = (crate::relay::ENV, format!("{address} {token}"));
    let mut program = Program::spawn_detached(&command, options.stderr, &[env]).map_err(cannot)?;
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
