use std::path::PathBuf;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use agentproto_codec::MaybeUndefined;
use agentproto_jsonrpc::{ErrorCode, ErrorObject};

use crate::fs::FsRoots;
use crate::role::AcpError;
use crate::v1::V1;

use super::output::*;
use super::terminals::*;
use super::*;
use crate::v1::*;
use std::future::Future;
use std::sync::atomic::AtomicUsize;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(10);

async fn bounded<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, future).await.expect("timed out")
}

/// A directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("agentproto-terminal-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn text(&self) -> String {
        self.0.to_str().unwrap().to_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SESSION: &str = "s1";

fn sh(script: &str) -> CreateTerminalRequest {
    let mut request = CreateTerminalRequest::new(SESSION, "sh");
    request.args = Some(vec!["-c".to_owned(), script.to_owned()]);
    request
}

fn sleep_30() -> CreateTerminalRequest {
    let mut request = CreateTerminalRequest::new(SESSION, "sleep");
    request.args = Some(vec!["30".to_owned()]);
    request
}

async fn create(terminals: &Terminals, request: CreateTerminalRequest) -> TerminalId {
    bounded(terminals.create(&request)).await.unwrap().terminal_id
}

async fn output(terminals: &Terminals, id: &TerminalId) -> Result<TerminalOutputResponse, ErrorObject> {
    bounded(terminals.output(&TerminalOutputRequest::new(SESSION, id.clone()))).await
}

async fn wait(terminals: &Terminals, id: &TerminalId) -> Result<WaitForTerminalExitResponse, ErrorObject> {
    bounded(terminals.wait_for_exit(&WaitForTerminalExitRequest::new(SESSION, id.clone()))).await
}

async fn kill(terminals: &Terminals, id: &TerminalId) -> Result<KillTerminalResponse, ErrorObject> {
    bounded(terminals.kill(&KillTerminalRequest::new(SESSION, id.clone()))).await
}

async fn release(terminals: &Terminals, id: &TerminalId) -> Result<ReleaseTerminalResponse, ErrorObject> {
    bounded(terminals.release(&ReleaseTerminalRequest::new(SESSION, id.clone()))).await
}

/// Runs `request` to its end and returns the final output.
async fn run(terminals: &Terminals, request: CreateTerminalRequest) -> TerminalOutputResponse {
    let id = create(terminals, request).await;
    wait(terminals, &id).await.unwrap();
    let response = output(terminals, &id).await.unwrap();
    release(terminals, &id).await.unwrap();
    response
}

fn exited(code: u32) -> MaybeUndefined<TerminalExitStatus> {
    MaybeUndefined::Value(TerminalExitStatus {
        exit_code: MaybeUndefined::Value(code),
        signal: MaybeUndefined::Null,
        meta: MaybeUndefined::Undefined,
    })
}

fn data(error: &ErrorObject) -> serde_json::Value {
    serde_json::from_str(error.data.as_ref().map_or("null", |data| data.get())).unwrap()
}

fn assert_invalid(error: &ErrorObject, path: &str, expected_prefix: &str) {
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
    let data = data(error);
    assert_eq!(data["path"], path, "{data}");
    assert!(data["expected"].as_str().unwrap().starts_with(expected_prefix), "{data}");
}

fn assert_not_found(error: &ErrorObject, id: &TerminalId) {
    assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND, "{error:?}");
    assert_eq!(data(error), serde_json::json!({ "terminalId": id.as_str() }));
}

fn buffer(limit: usize, chunks: &[&[u8]]) -> OutputBuffer {
    let mut buffer = OutputBuffer::new(limit);
    for chunk in chunks {
        buffer.push(chunk);
    }
    buffer
}

#[test]
fn output_buffer_keeps_the_tail_on_a_character_boundary() {
    assert_eq!(buffer(8, &[b"abc", b"def"]).snapshot(true), ("abcdef".to_owned(), false));
    assert_eq!(buffer(6, &[b"abc", b"def"]).snapshot(true), ("abcdef".to_owned(), false));
    assert_eq!(buffer(4, &[b"abc", b"def"]).snapshot(true), ("cdef".to_owned(), true));
    // One chunk larger than the limit.
    assert_eq!(buffer(2, &[b"abcdef"]).snapshot(true), ("ef".to_owned(), true));
    // "éé" is C3 A9 C3 A9: the last three bytes start inside the first é.
    assert_eq!(buffer(3, &["éé".as_bytes()]).snapshot(true), ("é".to_owned(), true));
    assert_eq!(buffer(3, &["aé".as_bytes(), "é".as_bytes()]).snapshot(true), ("é".to_owned(), true));
    // A four-byte character cut after its first byte loses its three others.
    assert_eq!(buffer(4, &["x😀".as_bytes(), b"y"]).snapshot(true), ("y".to_owned(), true));
    // Once truncated, always truncated.
    let mut b = buffer(2, &[b"abc"]);
    b.push(b"");
    assert!(b.snapshot(true).1);
}

#[test]
fn output_buffer_with_limit_zero_keeps_nothing() {
    assert_eq!(buffer(0, &[]).snapshot(true), (String::new(), false));
    assert_eq!(buffer(0, &[b"", b""]).snapshot(true), (String::new(), false));
    assert_eq!(buffer(0, &[b"a"]).snapshot(true), (String::new(), true));
}

#[test]
fn snapshot_holds_back_an_incomplete_character_while_running() {
    let mut b = buffer(16, &[b"a\xC3"]);
    assert_eq!(b.snapshot(false), ("a".to_owned(), false));
    assert_eq!(b.snapshot(true), ("a\u{FFFD}".to_owned(), false));
    b.push(b"\xA9");
    assert_eq!(b.snapshot(false), ("aé".to_owned(), false));
    // Bytes that can never be a character are replaced at once.
    assert_eq!(buffer(16, &[b"a\xFFb\xC3"]).snapshot(false), ("a\u{FFFD}b".to_owned(), false));
    // Replacement characters never push the text past the limit.
    let (text, truncated) = buffer(4, &[b"\xFF\xFF\xFF\xFF"]).snapshot(true);
    assert_eq!((text.as_str(), truncated), ("\u{FFFD}", true));
}

#[tokio::test]
async fn runs_a_command_and_captures_its_output() {
    let terminals = Terminals::new();
    let id = create(&terminals, sh("printf hi")).await;
    assert_eq!(terminals.len(), 1);
    let exit = wait(&terminals, &id).await.unwrap();
    assert_eq!((exit.exit_code, exit.signal), (MaybeUndefined::Value(0), MaybeUndefined::Null));
    let response = output(&terminals, &id).await.unwrap();
    assert_eq!((response.output.as_str(), response.truncated), ("hi", false));
    assert_eq!(response.exit_status, exited(0));
    // Waiting again answers the same.
    assert_eq!(wait(&terminals, &id).await.unwrap().exit_code, MaybeUndefined::Value(0));
    release(&terminals, &id).await.unwrap();
    assert!(terminals.is_empty());
}

#[tokio::test]
async fn reports_exit_codes() {
    let terminals = Terminals::new();
    for code in [1, 3, 255] {
        let id = create(&terminals, sh(&format!("exit {code}"))).await;
        assert_eq!(wait(&terminals, &id).await.unwrap().exit_code, MaybeUndefined::Value(code));
        assert_eq!(output(&terminals, &id).await.unwrap().exit_status, exited(code));
    }
    let id = create(&terminals, sh("kill -TERM $$")).await;
    let exit = wait(&terminals, &id).await.unwrap();
    assert_eq!((exit.exit_code, exit.signal.value().map(String::as_str)), (MaybeUndefined::Null, Some("SIGTERM")));
}

#[tokio::test]
async fn captures_stderr_into_the_same_buffer() {
    let terminals = Terminals::new();
    let response = run(&terminals, sh("printf out; printf err >&2")).await;
    // The two pipes are read concurrently, so only their contents are certain.
    assert_eq!(response.output.len(), 6, "{:?}", response.output);
    assert!(response.output.contains("out") && response.output.contains("err"), "{:?}", response.output);
}

#[tokio::test]
async fn passes_args_env_and_cwd() {
    let dir = TempDir::new();
    let terminals = Terminals::new();
    let mut request = sh(r#"printf '%s|%s|' "$AGENTPROTO_TEST" "$1"; pwd"#);
    request.args.as_mut().unwrap().extend(["name".to_owned(), "two words".to_owned()]);
    request.env = Some(vec![EnvVariable::new("AGENTPROTO_TEST", "value=1")]);
    request.cwd = MaybeUndefined::Value(dir.text());
    let response = run(&terminals, request).await;
    let canonical = std::fs::canonicalize(&dir.0).unwrap();
    let pwd = response.output.rsplit('|').next().unwrap().trim_end();
    assert!(response.output.starts_with("value=1|two words|"), "{:?}", response.output);
    assert_eq!(std::fs::canonicalize(pwd).unwrap(), canonical);
}

#[tokio::test]
async fn kill_stops_a_running_command_and_keeps_the_terminal() {
    let terminals = Arc::new(Terminals::new());
    let id = create(&terminals, sleep_30()).await;
    let running = output(&terminals, &id).await.unwrap();
    assert!(running.exit_status.is_undefined());
    let waiter = {
        let (terminals, id) = (terminals.clone(), id.clone());
        tokio::spawn(async move { wait(&terminals, &id).await })
    };
    kill(&terminals, &id).await.unwrap();
    let exit = bounded(waiter).await.unwrap().unwrap();
    assert_eq!((exit.exit_code, exit.signal.value().map(String::as_str)), (MaybeUndefined::Null, Some("SIGKILL")));
    // Still valid: output, wait and kill all answer.
    let after = output(&terminals, &id).await.unwrap();
    assert_eq!(after.exit_status.value().and_then(|s| s.signal.value()).map(String::as_str), Some("SIGKILL"));
    assert_eq!(wait(&terminals, &id).await.unwrap().signal.value().map(String::as_str), Some("SIGKILL"));
    kill(&terminals, &id).await.unwrap();
    release(&terminals, &id).await.unwrap();
}

/// The pid a command's background `sleep 30` wrote to `pidfile`, once written.
async fn background_pid(pidfile: &std::path::Path) -> u32 {
    bounded(async {
        loop {
            if let Ok(pid) = std::fs::read_to_string(pidfile).unwrap_or_default().trim().parse() {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

/// Whether `pid` ends within the bound (a zombie counts as ended).
async fn ends(pid: u32) -> bool {
    tokio::time::timeout(WAIT, async {
        while agentproto_process::running(pid) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .is_ok()
}

#[tokio::test]
async fn what_a_command_leaves_running_ends_when_it_exits() {
    let dir = TempDir::new();
    let pidfile = dir.0.join("pid");
    let script = format!("sleep 30 </dev/null >/dev/null 2>&1 & echo $! > '{}'; echo started", pidfile.display());
    let terminals = Terminals::new();
    let id = create(&terminals, sh(&script)).await;
    assert_eq!(wait(&terminals, &id).await.unwrap().exit_code, MaybeUndefined::Value(0));
    let straggler = background_pid(&pidfile).await;
    let gone = ends(straggler).await;
    if !gone {
        let _ = std::process::Command::new("kill").args(["-KILL", &straggler.to_string()]).status();
    }
    assert!(gone, "the background process {straggler} outlived its command");
    release(&terminals, &id).await.unwrap();
}

#[tokio::test]
async fn kill_ends_the_commands_whole_group() {
    let dir = TempDir::new();
    let pidfile = dir.0.join("pid");
    let script = format!("sleep 30 </dev/null >/dev/null 2>&1 & echo $! > '{}'; exec sleep 30", pidfile.display());
    let terminals = Terminals::new();
    let id = create(&terminals, sh(&script)).await;
    let straggler = background_pid(&pidfile).await;
    assert!(agentproto_process::running(straggler));
    kill(&terminals, &id).await.unwrap();
    let gone = ends(straggler).await;
    if !gone {
        let _ = std::process::Command::new("kill").args(["-KILL", &straggler.to_string()]).status();
    }
    assert!(gone, "the background process {straggler} survived terminal/kill");
}

#[tokio::test]
async fn truncates_from_the_start_at_a_character_boundary() {
    let terminals = Terminals::new();
    let mut request = sh("printf 'a\\303\\251\\303\\251'"); // "aéé", 5 bytes
    request.output_byte_limit = MaybeUndefined::Value(3);
    let response = run(&terminals, request).await;
    assert_eq!((response.output.as_str(), response.truncated), ("é", true));

    let mut request = sh("printf abc");
    request.output_byte_limit = MaybeUndefined::Value(3);
    let response = run(&terminals, request).await;
    assert_eq!((response.output.as_str(), response.truncated), ("abc", false));

    let mut request = sh("i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done");
    request.output_byte_limit = MaybeUndefined::Value(100);
    let response = run(&terminals, request).await;
    assert!(response.truncated);
    assert!(response.output.len() <= 100 && response.output.len() > 90, "{:?}", response.output);
    assert!(response.output.ends_with("\nline1999\n"), "{:?}", response.output);
}

#[tokio::test]
async fn output_limits_default_and_cap() {
    let terminals = Terminals::new().with_default_output_limit(2).with_max_output_limit(4);
    let response = run(&terminals, sh("printf abcdef")).await;
    assert_eq!((response.output.as_str(), response.truncated), ("ef", true));
    let mut request = sh("printf abcdef");
    request.output_byte_limit = MaybeUndefined::Value(u64::MAX);
    let response = run(&terminals, request).await;
    assert_eq!((response.output.as_str(), response.truncated), ("cdef", true));
}

#[tokio::test]
async fn release_kills_and_forgets_the_terminal() {
    let terminals = Terminals::new();
    let id = create(&terminals, sleep_30()).await;
    // A wait that is under way (polled once: it has found the terminal) ...
    let request = WaitForTerminalExitRequest::new(SESSION, id.clone());
    let mut waiter = pin!(terminals.wait_for_exit(&request));
    assert!(futures::poll!(waiter.as_mut()).is_pending());
    release(&terminals, &id).await.unwrap();
    assert!(terminals.is_empty());
    // ... sees the kill.
    let exit = bounded(waiter).await.unwrap();
    assert_eq!(exit.signal.value().map(String::as_str), Some("SIGKILL"));
    assert_not_found(&output(&terminals, &id).await.unwrap_err(), &id);
    assert_not_found(&wait(&terminals, &id).await.unwrap_err(), &id);
    assert_not_found(&kill(&terminals, &id).await.unwrap_err(), &id);
    assert_not_found(&release(&terminals, &id).await.unwrap_err(), &id);
}

#[tokio::test]
async fn unknown_terminal_and_other_session_are_not_found() {
    let terminals = Terminals::new();
    let nope = TerminalId::from("nope");
    let error = output(&terminals, &nope).await.unwrap_err();
    assert_not_found(&error, &nope);
    assert_eq!(error.message, "terminal not found: `nope`");
    let id = create(&terminals, sh("printf x")).await;
    let other = TerminalOutputRequest::new("s2", id.clone());
    assert_not_found(&bounded(terminals.output(&other)).await.unwrap_err(), &id);
    let other = ReleaseTerminalRequest::new("s2", id.clone());
    assert_not_found(&bounded(terminals.release(&other)).await.unwrap_err(), &id);
    assert_eq!(terminals.len(), 1);
    release(&terminals, &id).await.unwrap();
}

#[tokio::test]
async fn fresh_ids() {
    let terminals = Terminals::new();
    let a = create(&terminals, sh("true")).await;
    let b = create(&terminals, sh("true")).await;
    assert_ne!(a, b);
    release(&terminals, &a).await.unwrap();
    let c = create(&terminals, sh("true")).await;
    assert!(c != a && c != b);
    release(&terminals, &b).await.unwrap();
    release(&terminals, &c).await.unwrap();
}

#[tokio::test]
async fn cwd_is_confined_to_the_roots() {
    let dir = TempDir::new();
    std::fs::create_dir(dir.0.join("root")).unwrap();
    std::fs::create_dir(dir.0.join("root/sub")).unwrap();
    std::fs::write(dir.0.join("root/file"), "").unwrap();
    let root = std::fs::canonicalize(dir.0.join("root")).unwrap();
    let terminals = Terminals::new().with_roots(FsRoots::new([&root]).unwrap());
    let refused = |cwd: &str| {
        let mut request = sh("pwd");
        request.cwd = MaybeUndefined::Value(cwd.to_owned());
        request
    };
    let cases = [
        (dir.text(), "a directory inside the allowed roots ("),
        ("/".to_owned(), "a directory inside the allowed roots ("),
        ("root".to_owned(), "an absolute path"),
        (format!("{}/sub/..", root.display()), "a path without .. components"),
        (format!("{}/missing", root.display()), "an existing directory"),
        (format!("{}/file", root.display()), "a directory"),
    ];
    for (cwd, expected) in cases {
        let error = bounded(terminals.create(&refused(&cwd))).await.unwrap_err();
        assert_invalid(&error, CWD_PATH, expected);
        assert_eq!(data(&error)["found"], cwd.as_str());
    }
    assert!(terminals.is_empty());
    // Inside the roots, and the default: the first root.
    let response = run(&terminals, refused(&format!("{}/sub", root.display()))).await;
    assert_eq!(response.output.trim_end(), root.join("sub").to_str().unwrap());
    let response = run(&terminals, sh("pwd")).await;
    assert_eq!(response.output.trim_end(), root.to_str().unwrap());
}

#[tokio::test]
async fn cwd_must_be_absolute_without_roots() {
    let terminals = Terminals::new();
    let mut request = sh("pwd");
    request.cwd = MaybeUndefined::Value("relative".to_owned());
    assert_invalid(&bounded(terminals.create(&request)).await.unwrap_err(), CWD_PATH, "an absolute path");
    // `null` reads as absent.
    request.cwd = MaybeUndefined::Null;
    let response = run(&terminals, request).await;
    assert_eq!(response.exit_status, exited(0));
}

#[tokio::test]
async fn invalid_command_fields_are_refused() {
    let terminals = Terminals::new();
    let error = bounded(terminals.create(&CreateTerminalRequest::new(SESSION, ""))).await.unwrap_err();
    assert_invalid(&error, "$.params.command", "a non-empty command");
    let mut request = sh("true");
    request.args.as_mut().unwrap().push("a\0b".to_owned());
    let error = bounded(terminals.create(&request)).await.unwrap_err();
    assert_invalid(&error, "$.params.args[2]", "an argument without NUL bytes");
    let mut request = sh("true");
    request.env = Some(vec![EnvVariable::new("OK", "1"), EnvVariable::new("A=B", "1")]);
    let error = bounded(terminals.create(&request)).await.unwrap_err();
    assert_invalid(&error, "$.params.env[1].name", "a non-empty variable name");
    assert!(terminals.is_empty());
}

#[tokio::test]
async fn a_command_that_cannot_start_is_an_internal_error() {
    let terminals = Terminals::new();
    let request = CreateTerminalRequest::new(SESSION, "/nonexistent/agentproto-no-such-command");
    let error = bounded(terminals.create(&request)).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert!(error.message.contains("/nonexistent/agentproto-no-such-command"), "{}", error.message);
    assert!(terminals.is_empty());
}

#[test]
fn terminal_tool_call_content_encoding() {
    let content = ToolCallContent::Terminal(Terminal::new("term-7"));
    assert_eq!(serde_json::to_string(&content).unwrap(), r#"{"type":"terminal","terminalId":"term-7"}"#);
}

// --- Agent and client over an in-memory pair ---------------------------

/// What the test agent's prompt handler observed.
#[derive(Debug)]
struct Ran {
    terminal_id: TerminalId,
    output: String,
    truncated: bool,
    exit_code: MaybeUndefined<u32>,
}

struct TestAgent {
    ran: mpsc::UnboundedSender<Ran>,
}

fn failed(error: AcpError) -> ErrorObject {
    error.as_rpc().cloned().unwrap_or_else(|| ErrorObject::internal_error(error.to_string()))
}

impl Agent for TestAgent {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("sess-1"))
    }

    async fn prompt(&self, cx: AgentContext, params: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let session = params.session_id.clone();
        let text = match params.prompt.first() {
            Some(ContentBlock::Text(text)) => text.text.clone(),
            _ => String::new(),
        };
        if text == "drop" {
            let mut request = CreateTerminalRequest::new(session, "sleep");
            request.args = Some(vec!["30".to_owned()]);
            let terminal = TerminalHandle::create(cx.peer(), request).await.map_err(failed)?;
            drop(terminal);
            return Ok(PromptResponse::new(StopReason::EndTurn));
        }
        let mut request = CreateTerminalRequest::new(session.clone(), "sh");
        request.args = Some(vec!["-c".to_owned(), "printf 'hello from a terminal'".to_owned()]);
        let terminal = TerminalHandle::create(cx.peer(), request).await.map_err(failed)?;
        assert_eq!(terminal.session_id(), &session);
        let mut call = ToolCall::new("call-1", "Greet");
        call.kind = Some(ToolKind::Execute);
        call.content = Some(vec![terminal.as_tool_call_content()]);
        let update = SessionNotification::new(session.clone(), SessionUpdate::ToolCall(call));
        cx.peer().session_update(update).await.map_err(failed)?;
        let exit = terminal.wait_for_exit().await.map_err(failed)?;
        let output = terminal.output().await.map_err(failed)?;
        let terminal_id = terminal.id().clone();
        terminal.release().await.map_err(failed)?;
        let _ = self.ran.send(Ran {
            terminal_id,
            output: output.output,
            truncated: output.truncated,
            exit_code: exit.exit_code,
        });
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

struct TestClient {
    terminals: Arc<Terminals>,
    updates: mpsc::UnboundedSender<SessionUpdate>,
    released: mpsc::UnboundedSender<TerminalId>,
}

impl Client for TestClient {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        Err(ErrorObject::internal_error("not used in this test"))
    }

    async fn session_update(&self, _: ClientContext, params: SessionNotification) {
        let _ = self.updates.send(params.update);
    }

    async fn create_terminal(
        &self,
        _: ClientContext,
        params: CreateTerminalRequest,
    ) -> Result<CreateTerminalResponse, ErrorObject> {
        self.terminals.create(&params).await
    }

    async fn terminal_output(
        &self,
        _: ClientContext,
        params: TerminalOutputRequest,
    ) -> Result<TerminalOutputResponse, ErrorObject> {
        self.terminals.output(&params).await
    }

    async fn wait_for_terminal_exit(
        &self,
        _: ClientContext,
        params: WaitForTerminalExitRequest,
    ) -> Result<WaitForTerminalExitResponse, ErrorObject> {
        self.terminals.wait_for_exit(&params).await
    }

    async fn kill_terminal(
        &self,
        _: ClientContext,
        params: KillTerminalRequest,
    ) -> Result<KillTerminalResponse, ErrorObject> {
        self.terminals.kill(&params).await
    }

    async fn release_terminal(
        &self,
        _: ClientContext,
        params: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, ErrorObject> {
        let response = self.terminals.release(&params).await;
        let _ = self.released.send(params.terminal_id);
        response
    }
}

struct Pair {
    agent: AgentConnection<V1>,
    session: SessionId,
    terminals: Arc<Terminals>,
    ran: mpsc::UnboundedReceiver<Ran>,
    updates: mpsc::UnboundedReceiver<SessionUpdate>,
    released: mpsc::UnboundedReceiver<TerminalId>,
}

/// An agent and a client connected in memory, initialized (the client
/// advertising `terminal`), with one session.
async fn pair() -> Pair {
    let (ran_tx, ran) = mpsc::unbounded_channel();
    let (updates_tx, updates) = mpsc::unbounded_channel();
    let (released_tx, released) = mpsc::unbounded_channel();
    let terminals = Arc::new(Terminals::new());
    let (agent_end, client_end) = tokio::io::duplex(64 * 1024);
    let (agent_read, agent_write) = tokio::io::split(agent_end);
    let (client_read, client_write) = tokio::io::split(client_end);
    let (agent_connection, _client) =
        connect_agent(TestAgent { ran: ran_tx }, agent_read, agent_write, AcpOptions::default());
    let client = TestClient { terminals: terminals.clone(), updates: updates_tx, released: released_tx };
    let (client_connection, agent) = connect_client(client, client_read, client_write, AcpOptions::default());
    tokio::spawn(agent_connection.run());
    tokio::spawn(client_connection.run());

    let mut initialize = InitializeRequest::new(PROTOCOL_VERSION);
    initialize.client_capabilities.terminal = true;
    bounded(agent.initialize(initialize)).await.unwrap();
    let session = bounded(agent.new_session(NewSessionRequest::new("/", Vec::new()))).await.unwrap().session_id;
    Pair { agent, session, terminals, ran, updates, released }
}

fn prompt(session: &SessionId, text: &str) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new(text))])
}

#[tokio::test]
async fn agent_runs_a_command_through_the_client() {
    let mut pair = pair().await;
    let response = bounded(pair.agent.prompt(prompt(&pair.session, "run"))).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let ran = bounded(pair.ran.recv()).await.unwrap();
    assert_eq!(ran.output, "hello from a terminal");
    assert!(!ran.truncated);
    assert_eq!(ran.exit_code, MaybeUndefined::Value(0));
    // The tool call embedded the terminal, and the terminal was released.
    let update = bounded(pair.updates.recv()).await.unwrap();
    let SessionUpdate::ToolCall(call) = update else { panic!("expected a tool call, got {update:?}") };
    assert_eq!(call.content, Some(vec![ToolCallContent::Terminal(Terminal::new(ran.terminal_id.clone()))]));
    assert_eq!(bounded(pair.released.recv()).await.unwrap(), ran.terminal_id);
    assert!(pair.terminals.is_empty());
}

#[tokio::test]
async fn a_dropped_handle_is_released() {
    let mut pair = pair().await;
    let response = bounded(pair.agent.prompt(prompt(&pair.session, "drop"))).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let released = bounded(pair.released.recv()).await.unwrap();
    assert!(pair.terminals.is_empty());
    let error = bounded(pair.terminals.output(&TerminalOutputRequest::new(pair.session.clone(), released.clone())))
        .await
        .unwrap_err();
    assert_not_found(&error, &released);
}
