//! Runs the flow vectors under `vectors/acp/v1/flows/` against the real ACP roles.
//!
//! A flow is an ordered list of steps (format in `vectors/README.md`, "Flows"). The
//! side under test is our agent role ([`agentproto_acp::v1::connect_agent`]) or
//! client role ([`agentproto_acp::v1::connect_client`]) serving one of the small
//! deterministic applications below, connected through an in-memory duplex pipe.
//! The runner plays the other side with raw NDJSON lines. Every wait is bounded
//! by [`STEP_TIMEOUT`]; nothing sleeps.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::v1::*;
use agentproto_acp::RawJson;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long any single wait of a flow may take before the flow fails.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(5);

/// The folder of the flows, relative to `vectors/`.
pub const FLOWS_DIR: &str = "acp/v1/flows";

/// The method of the barrier behind `expect_silence` (a notification and a request).
const BARRIER: &str = "_flow/barrier";

/// One flow file, as written.
#[derive(Debug, Deserialize)]
pub struct Flow {
    /// `acp/v1/flows/<name>`: its path under `vectors/` without `.json`.
    pub id: String,
    /// The requirement it checks.
    pub requirement: String,
    /// One sentence.
    pub description: String,
    /// `agent` (our agent role is under test) or `client`.
    pub role: String,
    /// What the application under test advertises and does.
    #[serde(default)]
    pub setup: Value,
    /// The steps, in order.
    pub steps: Vec<Value>,
}

/// Reads every flow under `root/acp/v1/flows` (sorted by file name).
pub fn load_flows(root: &Path) -> Result<Vec<(PathBuf, Flow)>, String> {
    let dir = root.join(FLOWS_DIR);
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.extension().is_some_and(|e| e == "json") {
            paths.push(path);
        }
    }
    paths.sort();
    let mut flows = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let flow: Flow = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        flows.push((path, flow));
    }
    Ok(flows)
}

/// The message of every panic the test applications raise on purpose.
const DELIBERATE_PANIC: &str = "deliberate panic of the test application";

/// Keeps the deliberate panics of the test applications out of the test output;
/// every other panic is reported by the previous hook as usual.
fn quiet_deliberate_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&DELIBERATE_PANIC) {
                previous(info);
            }
        }));
    });
}

/// Runs one flow on its own runtime; `Err` names the step and what differed.
pub fn run_flow(flow: &Flow) -> Result<(), String> {
    quiet_deliberate_panics();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .map_err(|e| format!("{}: cannot build a runtime: {e}", flow.id))?;
    let events = Arc::new(Mutex::new(Vec::new()));
    let result = runtime.block_on(run_steps(flow, events.clone()));
    // Handlers still pending (a prompt left waiting) are dropped with the runtime.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result.map_err(|failure| {
        let events = events.lock().map(|e| e.join("\n    ")).unwrap_or_default();
        if events.is_empty() {
            format!("{}: {failure}", flow.id)
        } else {
            format!("{}: {failure}\n  events of our side:\n    {events}", flow.id)
        }
    })
}

async fn run_steps(flow: &Flow, events: Arc<Mutex<Vec<String>>>) -> Result<(), String> {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (input, output) = tokio::io::split(ours);
    let log = events.clone();
    let options = AcpOptions::default().strict(true).observer(move |event| {
        if let Ok(mut log) = log.lock() {
            log.push(format!("{event:?}"));
        }
    });
    let agent = match flow.role.as_str() {
        "agent" => {
            let app = TestAgent::new(&flow.setup).map_err(|e| format!("setup: {e}"))?;
            let (connection, _client) = connect_agent(app, input, output, options);
            tokio::spawn(connection.run());
            None
        }
        "client" => {
            let app = TestClient::new(&flow.setup).map_err(|e| format!("setup: {e}"))?;
            let (connection, agent) = connect_client(app, input, output, options);
            tokio::spawn(connection.run());
            Some(agent)
        }
        other => return Err(format!("unknown role {other:?}")),
    };
    let (read, write) = tokio::io::split(theirs);
    let mut run = Run {
        lines: BufReader::new(read).lines(),
        write,
        vars: BTreeMap::new(),
        calls: Vec::new(),
        barriers: 0,
        agent,
        client_caps: flow.setup.get("clientCapabilities").cloned(),
    };
    for (index, step) in flow.steps.iter().enumerate() {
        run.step(step).await.map_err(|e| format!("step {index}: {e}"))?;
    }
    Ok(())
}

/// A typed call the client application made, and how it ended.
type CallOutcome = Result<Value, Box<AcpError>>;

struct Call {
    method: String,
    handle: Option<JoinHandle<CallOutcome>>,
}

/// The flow side of the pipe and the flow's state.
struct Run {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
    vars: BTreeMap<String, Value>,
    calls: Vec<Call>,
    barriers: u64,
    /// Client role: the application's handle to the agent (the flow).
    agent: Option<AgentConnection<V1>>,
    client_caps: Option<Value>,
}

impl Run {
    async fn step(&mut self, step: &Value) -> Result<(), String> {
        let Some((kind, body)) = step.as_object().and_then(|o| o.iter().next()) else {
            return Err(format!("a step is an object with one member, found {step}"));
        };
        match kind.as_str() {
            "send" => {
                let message = substitute(body, &self.vars)?;
                self.send(&message).await
            }
            "expect" => {
                let line = self.next_line().await.map_err(|e| format!("expected {body}, but {e}"))?;
                self.expect(body, &line)
            }
            "expect_unordered" => self.expect_unordered(body).await,
            "expect_silence" => self.silence().await,
            "call" => self.call(body),
            "expect_call" => self.expect_call(body).await,
            other => Err(format!("unknown step kind {other:?}")),
        }
    }

    async fn send(&mut self, message: &Value) -> Result<(), String> {
        let mut line = serde_json::to_string(message).map_err(|e| e.to_string())?;
        line.push('\n');
        let write = async {
            self.write.write_all(line.as_bytes()).await?;
            self.write.flush().await
        };
        match tokio::time::timeout(STEP_TIMEOUT, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("cannot send {message}: {e}")),
            Err(_) => Err(format!("sending {message} did not complete within {STEP_TIMEOUT:?}")),
        }
    }

    /// The next line our side writes.
    async fn next_line(&mut self) -> Result<String, String> {
        match tokio::time::timeout(STEP_TIMEOUT, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => Ok(line),
            Ok(Ok(None)) => Err("our side closed its output".to_owned()),
            Ok(Err(e)) => Err(format!("reading our side failed: {e}")),
            Err(_) => Err(format!("nothing was written within {STEP_TIMEOUT:?}")),
        }
    }

    fn expect(&mut self, pattern: &Value, line: &str) -> Result<(), String> {
        let actual: Value = serde_json::from_str(line)
            .map_err(|e| format!("expected {pattern}, got a line that is not JSON ({e}): {line}"))?;
        let mut vars = self.vars.clone();
        match matches(pattern, &actual, &mut vars, "$") {
            Ok(()) => {
                self.vars = vars;
                Ok(())
            }
            Err(why) => Err(format!("{why}\n  expected: {pattern}\n  actual:   {line}")),
        }
    }

    /// The next `patterns.len()` lines, each matching a different pattern.
    async fn expect_unordered(&mut self, patterns: &Value) -> Result<(), String> {
        let patterns = patterns.as_array().ok_or("expect_unordered takes an array of messages")?;
        let mut lines = Vec::new();
        for _ in patterns {
            let line = self
                .next_line()
                .await
                .map_err(|e| format!("expected {} message(s) in any order, got {lines:?}, then {e}", patterns.len()))?;
            lines.push(line);
        }
        let actual: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap_or(Value::Null)).collect();
        let mut used = vec![false; actual.len()];
        match assign(patterns, &actual, &mut used, self.vars.clone()) {
            Some(vars) => {
                self.vars = vars;
                Ok(())
            }
            None => Err(format!(
                "the lines do not match the patterns in any order\n  expected (any order): {}\n  actual:\n    {}",
                Value::Array(patterns.clone()),
                lines.join("\n    ")
            )),
        }
    }

    /// Sends the barrier notification and request; the next line must answer the request.
    async fn silence(&mut self) -> Result<(), String> {
        self.barriers += 1;
        let n = self.barriers;
        let id = format!("flow-barrier-{n}");
        self.send(&json!({"jsonrpc": "2.0", "method": BARRIER, "params": {"n": n}})).await?;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": BARRIER, "params": {"n": n}})).await?;
        let line = self.next_line().await.map_err(|e| format!("expected the answer to barrier {id}, but {e}"))?;
        let actual: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let answered = actual.get("id") == Some(&Value::String(id.clone()));
        let fine =
            actual.get("result").is_some() || actual.pointer("/error/code").and_then(Value::as_i64) == Some(-32600);
        match (answered, fine) {
            (true, true) => Ok(()),
            (true, false) => Err(format!("barrier {id} was answered with an error: {line}")),
            (false, _) => Err(format!("expected silence (up to barrier {id}), but our side wrote: {line}")),
        }
    }

    fn call(&mut self, body: &Value) -> Result<(), String> {
        let Some(agent) = self.agent.clone() else {
            return Err("`call` steps are for the client role only".to_owned());
        };
        let method = body.get("method").and_then(Value::as_str).ok_or("a call needs a `method` string")?.to_owned();
        let mut params = substitute(body.get("params").unwrap_or(&json!({})), &self.vars)?;
        if method == "initialize" {
            if let (Some(object), Some(caps)) = (params.as_object_mut(), &self.client_caps) {
                object.entry("clientCapabilities").or_insert_with(|| caps.clone());
            }
        }
        let future = start_call(agent, &method, &params)?;
        self.calls.push(Call { method, handle: Some(tokio::spawn(future)) });
        Ok(())
    }

    async fn expect_call(&mut self, body: &Value) -> Result<(), String> {
        let method = body.get("method").and_then(Value::as_str).ok_or("expect_call needs a `method` string")?;
        let Some(call) = self.calls.iter_mut().find(|c| c.method == method && c.handle.is_some()) else {
            return Err(format!("no unchecked `{method}` call to check"));
        };
        let handle = call.handle.take().ok_or("the call was checked already")?;
        let outcome = match tokio::time::timeout(STEP_TIMEOUT, handle).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(e)) => return Err(format!("the `{method}` call panicked: {e}")),
            Err(_) => return Err(format!("the `{method}` call did not end within {STEP_TIMEOUT:?}")),
        };
        let mut vars = self.vars.clone();
        let checked =
            match (body.get("ok"), body.get("error"), body.get("local_error"), outcome.as_ref().map_err(Box::as_ref)) {
                (Some(want), None, None, Ok(value)) => matches(want, value, &mut vars, "$ok"),
                (None, Some(want), None, Err(AcpError::Rpc { error, .. })) => {
                    let data = error.data.as_ref().and_then(|d| serde_json::from_str::<Value>(d.get()).ok());
                    let mut got = json!({"code": error.code.0, "message": error.message});
                    if let Some(data) = data {
                        got["data"] = data;
                    }
                    matches(want, &got, &mut vars, "$error")
                }
                (None, None, Some(want), Err(e)) if !matches!(e, AcpError::Rpc { .. }) => {
                    let variant = variant_name(e);
                    if Some(variant.as_str()) == want.as_str() {
                        Ok(())
                    } else {
                        Err(format!("local error {variant} ({e})"))
                    }
                }
                (None, None, None, _) => return Err("expect_call needs one of `ok`, `error`, `local_error`".to_owned()),
                _ => Err("a different kind of outcome".to_owned()),
            };
        match checked {
            Ok(()) => {
                self.vars = vars;
                Ok(())
            }
            Err(why) => Err(format!(
                "the `{method}` call: {why}\n  expected: {body}\n  actual:   {}",
                describe_outcome(&outcome)
            )),
        }
    }
}

/// Matches each pattern to a different unused line (backtracking; flows use a few).
fn assign(
    patterns: &[Value],
    actual: &[Value],
    used: &mut [bool],
    vars: BTreeMap<String, Value>,
) -> Option<BTreeMap<String, Value>> {
    let Some((first, rest)) = patterns.split_first() else { return Some(vars) };
    for i in 0..actual.len() {
        if used[i] {
            continue;
        }
        let mut attempt = vars.clone();
        if matches(first, &actual[i], &mut attempt, "$").is_ok() {
            used[i] = true;
            if let Some(done) = assign(rest, actual, used, attempt) {
                return Some(done);
            }
            used[i] = false;
        }
    }
    None
}

fn describe_outcome(outcome: &CallOutcome) -> String {
    match outcome {
        Ok(value) => format!("ok {value}"),
        Err(e) => match e.as_ref() {
            AcpError::Rpc { error, .. } => format!("error {error:?}"),
            e => format!("local_error {} ({e})", variant_name(e)),
        },
    }
}

/// The name of an [`AcpError`] variant, e.g. `NotInitialized`.
fn variant_name(error: &AcpError) -> String {
    format!("{error:?}").chars().take_while(char::is_ascii_alphanumeric).collect()
}

type CallFuture = Pin<Box<dyn Future<Output = CallOutcome> + Send>>;

/// Starts the typed call of `method` on the client application's handle.
fn start_call(agent: AgentConnection<V1>, method: &str, params: &Value) -> Result<CallFuture, String> {
    let text = params.to_string();
    fn parse<T: for<'de> Deserialize<'de>>(text: &str, method: &str) -> Result<T, String> {
        serde_json::from_str(text).map_err(|e| format!("the params of the `{method}` call do not decode: {e}"))
    }
    fn encode<T: serde::Serialize>(result: Result<T, AcpError>) -> CallOutcome {
        result.map(|value| serde_json::to_value(&value).unwrap_or(Value::Null)).map_err(Box::new)
    }
    macro_rules! calls {
        ($($name:literal => $call:ident),* $(,)?) => {
            match method {
                $($name => {
                    let params = parse(&text, method)?;
                    Box::pin(async move { encode(agent.$call(params).await) }) as CallFuture
                })*
                "session/cancel" => {
                    let params = parse(&text, method)?;
                    Box::pin(async move { agent.cancel(params).await.map(|()| Value::Null).map_err(Box::new) })
                }
                other => return Err(format!("the runner cannot call `{other}`")),
            }
        };
    }
    Ok(calls! {
        "initialize" => initialize,
        "authenticate" => authenticate,
        "logout" => logout,
        "session/new" => new_session,
        "session/load" => load_session,
        "session/list" => list_sessions,
        "session/resume" => resume_session,
        "session/close" => close_session,
        "session/delete" => delete_session,
        "session/set_mode" => set_session_mode,
        "session/set_config_option" => set_session_config_option,
        "session/prompt" => prompt,
    })
}

// patterns -------------------------------------------------------------------------------

fn var_name(text: &str) -> Option<&str> {
    text.strip_prefix("${")?.strip_suffix('}')
}

/// Replaces `"${name}"` strings by the values bound to them.
fn substitute(value: &Value, vars: &BTreeMap<String, Value>) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => match var_name(s) {
            Some(name) => vars.get(name).cloned().ok_or_else(|| format!("variable {s} is not bound yet"))?,
            None => value.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, vars)).collect::<Result<_, _>>()?),
        Value::Object(members) => Value::Object(
            members.iter().map(|(k, v)| Ok((k.clone(), substitute(v, vars)?))).collect::<Result<_, String>>()?,
        ),
        _ => value.clone(),
    })
}

/// Structural match: `"$any"` matches anything, `"${name}"` binds or must equal, an
/// object with `"$partial": true` allows more members, numbers compare by value.
fn matches(pattern: &Value, actual: &Value, vars: &mut BTreeMap<String, Value>, at: &str) -> Result<(), String> {
    match pattern {
        Value::String(s) if s == "$any" => Ok(()),
        Value::String(s) if var_name(s).is_some() => {
            let name = var_name(s).unwrap_or_default();
            match vars.get(name) {
                Some(bound) if crate::same(bound, actual) => Ok(()),
                Some(bound) => Err(format!("at {at}: {s} is {bound}, found {actual}")),
                None => {
                    vars.insert(name.to_owned(), actual.clone());
                    Ok(())
                }
            }
        }
        Value::Object(want) => {
            let Value::Object(got) = actual else { return Err(format!("at {at}: expected an object, found {actual}")) };
            let partial = want.get("$partial") == Some(&Value::Bool(true));
            for (key, w) in want.iter().filter(|(k, _)| k.as_str() != "$partial") {
                match got.get(key) {
                    Some(g) => matches(w, g, vars, &format!("{at}.{key}"))?,
                    None => return Err(format!("at {at}: member `{key}` is missing")),
                }
            }
            if !partial {
                if let Some(extra) = got.keys().find(|k| !want.contains_key(*k)) {
                    return Err(format!("at {at}: unexpected member `{extra}`"));
                }
            }
            Ok(())
        }
        Value::Array(want) => {
            let Value::Array(got) = actual else { return Err(format!("at {at}: expected an array, found {actual}")) };
            if want.len() != got.len() {
                return Err(format!("at {at}: expected {} items, found {}", want.len(), got.len()));
            }
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                matches(w, g, vars, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        _ if crate::same(pattern, actual) => Ok(()),
        _ => Err(format!("at {at}: expected {pattern}, found {actual}")),
    }
}

// the applications under test ----------------------------------------------------------------

/// Lets the `_flow/barrier` request wait until the notification with the same `n`
/// has been handled (notifications are handled one at a time, in order).
struct Barrier(watch::Sender<u64>);

impl Barrier {
    fn new() -> Barrier {
        Barrier(watch::channel(0).0)
    }

    fn number(payload: Option<&RawJson>) -> u64 {
        payload
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|p| p.get("n").and_then(Value::as_u64))
            .unwrap_or(0)
    }

    fn mark(&self, payload: Option<&RawJson>) {
        let n = Barrier::number(payload);
        self.0.send_modify(|seen| *seen = (*seen).max(n));
    }

    async fn wait(&self, payload: Option<&RawJson>) -> Result<RawJson, ErrorObject> {
        let n = Barrier::number(payload);
        let mut seen = self.0.subscribe();
        let handled = matches!(tokio::time::timeout(STEP_TIMEOUT, seen.wait_for(|seen| *seen >= n)).await, Ok(Ok(_)));
        if handled {
            raw(&json!({ "n": n }))
        } else {
            Err(ErrorObject::internal_error(format!("barrier notification {n} was not handled")))
        }
    }
}

fn raw(value: &Value) -> Result<RawJson, ErrorObject> {
    RawJson::from_text(&value.to_string()).map_err(|e| ErrorObject::internal_error(e.to_string()))
}

/// Decodes a value of a protocol type from JSON (for the fixed answers of the apps).
fn typed<T: for<'de> Deserialize<'de>>(value: &Value) -> Result<T, ErrorObject> {
    serde_json::from_str(&value.to_string()).map_err(|e| ErrorObject::internal_error(e.to_string()))
}

/// Extension requests both applications answer: the barrier and `_test/echo`.
async fn ext_request(barrier: &Barrier, request: agentproto_acp::ExtMessage) -> Result<RawJson, ErrorObject> {
    match request.method.as_str() {
        BARRIER => barrier.wait(request.payload.as_ref()).await,
        "_test/echo" => {
            let params = serde_json::from_str::<Value>(request.payload_text()).unwrap_or(Value::Null);
            raw(&json!({ "method": request.method, "params": params }))
        }
        _ => Err(ErrorObject::method_not_found(&request.method)),
    }
}

/// The agent application of the flows (README, "The test applications").
struct TestAgent {
    capabilities: AgentCapabilities,
    sessions: AtomicU64,
    barrier: Barrier,
}

impl TestAgent {
    fn new(setup: &Value) -> Result<TestAgent, String> {
        let capabilities = typed(setup.get("agentCapabilities").unwrap_or(&json!({}))).map_err(|e| e.message)?;
        Ok(TestAgent { capabilities, sessions: AtomicU64::new(0), barrier: Barrier::new() })
    }
}

async fn say(cx: &AgentContext, session: &SessionId, text: &str) -> Result<(), ErrorObject> {
    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
    let notification = SessionNotification::new(session.clone(), SessionUpdate::AgentMessageChunk(chunk));
    cx.peer().session_update(notification).await.map_err(|e| ErrorObject::internal_error(e.to_string()))
}

impl Agent for TestAgent {
    async fn initialize(&self, _: AgentContext, params: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let name = match &params.client_info {
            MaybeUndefined::Value(info) => info.name.as_str(),
            _ => "",
        };
        match name {
            "panic" => std::panic::panic_any(DELIBERATE_PANIC),
            "fail" => return Err(ErrorObject::new(ErrorCode(4242), "initialize fails on request")),
            _ => {}
        }
        // Echoes the requested version on purpose: the role must answer its own.
        let mut response = InitializeResponse::new(params.protocol_version);
        response.agent_capabilities = self.capabilities.clone();
        Ok(response)
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        let n = self.sessions.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(NewSessionResponse::new(format!("sess-{n}")))
    }

    async fn load_session(&self, _: AgentContext, _: LoadSessionRequest) -> Result<LoadSessionResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn resume_session(
        &self,
        _: AgentContext,
        _: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn close_session(
        &self,
        _: AgentContext,
        _: CloseSessionRequest,
    ) -> Result<CloseSessionResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn delete_session(
        &self,
        _: AgentContext,
        _: DeleteSessionRequest,
    ) -> Result<DeleteSessionResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn list_sessions(
        &self,
        _: AgentContext,
        _: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, ErrorObject> {
        typed(&json!({ "sessions": [] }))
    }

    async fn logout(&self, _: AgentContext, _: LogoutRequest) -> Result<LogoutResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn set_session_mode(
        &self,
        _: AgentContext,
        _: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn prompt(&self, cx: AgentContext, params: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let text = match params.prompt.first() {
            Some(ContentBlock::Text(text)) => text.text.clone(),
            _ => String::new(),
        };
        let (command, argument) = text.split_once(' ').unwrap_or((text.as_str(), ""));
        let session = params.session_id;
        let stop = match command {
            "echo" => {
                for word in argument.split_whitespace() {
                    say(&cx, &session, word).await?;
                }
                StopReason::EndTurn
            }
            "permission" => {
                cx.handle_cancellation();
                let options = vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                ];
                let request = RequestPermissionRequest::new(session.clone(), ToolCallUpdate::new("call-1"), options);
                let outcome = match cx.peer().request_permission(request).await {
                    Ok(response) => match response.outcome {
                        RequestPermissionOutcome::Selected(selected) => selected.option_id.to_string(),
                        _ => "cancelled".to_owned(),
                    },
                    Err(AcpError::Cancelled { .. }) => "cancelled".to_owned(),
                    Err(e) => format!("error:{}", variant_name(&e)),
                };
                say(&cx, &session, &format!("permission:{outcome}")).await?;
                if outcome == "cancelled" {
                    StopReason::Cancelled
                } else {
                    StopReason::EndTurn
                }
            }
            "wait" => {
                say(&cx, &session, "waiting").await?;
                std::future::pending::<()>().await;
                StopReason::EndTurn
            }
            "hang" => std::future::pending().await,
            "linger" => {
                cx.handle_cancellation();
                say(&cx, &session, "waiting").await?;
                cx.cancellation_token().cancelled().await;
                if argument == "fail" {
                    return Err(ErrorObject::new(ErrorCode(4242), "failed after the cancel"));
                }
                StopReason::EndTurn
            }
            "read" => {
                let request = ReadTextFileRequest::new(session.clone(), argument);
                let report = match cx.peer().read_text_file(request).await {
                    Ok(response) => format!("read:{}", response.content),
                    Err(AcpError::Rpc { error, .. }) => format!("read:error:{}", error.code.0),
                    Err(e) => format!("read:local:{}", variant_name(&e)),
                };
                say(&cx, &session, &report).await?;
                StopReason::EndTurn
            }
            "panic" => std::panic::panic_any(DELIBERATE_PANIC),
            "error" => {
                let data = raw(&json!({ "reason": "test" }))?;
                return Err(ErrorObject::new(ErrorCode(4242), "test failure").with_data(data.into_raw()));
            }
            _ => StopReason::EndTurn,
        };
        Ok(PromptResponse::new(stop))
    }

    async fn ext_method(&self, _: AgentContext, request: agentproto_acp::ExtMessage) -> Result<RawJson, ErrorObject> {
        ext_request(&self.barrier, request).await
    }

    async fn ext_notification(&self, _: AgentContext, notification: agentproto_acp::ExtMessage) {
        if notification.method == BARRIER {
            self.barrier.mark(notification.payload.as_ref());
        }
    }
}

/// The client application of the flows (README, "The test applications").
struct TestClient {
    /// `Some(option)`: permission requests are answered with it; `None`: left pending.
    permission: Option<String>,
    barrier: Barrier,
}

impl TestClient {
    fn new(setup: &Value) -> Result<TestClient, String> {
        let permission = match setup.get("permission") {
            None | Some(Value::Null) => None,
            Some(Value::String(option)) => Some(option.clone()),
            Some(other) => return Err(format!("setup.permission must be a string or null, found {other}")),
        };
        Ok(TestClient { permission, barrier: Barrier::new() })
    }
}

/// Tells the flow what the client application saw, as a `_test/seen` notification.
async fn report_seen(cx: &ClientContext, seen: Value) {
    if let Ok(params) = RawJson::from_text(&seen.to_string()) {
        let _ = cx.peer().ext_notification("_test/seen", Some(params)).await;
    }
}

impl Client for TestClient {
    async fn request_permission(
        &self,
        cx: ClientContext,
        params: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        let seen = json!({ "method": "session/request_permission", "sessionId": params.session_id.to_string() });
        report_seen(&cx, seen).await;
        match &self.permission {
            Some(option) => Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(option.clone()),
            ))),
            // Left pending: the role answers `cancelled` when this side cancels the session.
            None => std::future::pending().await,
        }
    }

    async fn session_update(&self, cx: ClientContext, params: SessionNotification) {
        let update = serde_json::to_value(&params.update).unwrap_or(Value::Null);
        let kind = update.get("sessionUpdate").cloned().unwrap_or(Value::Null);
        let seen = json!({ "method": "session/update", "sessionId": params.session_id.to_string(), "update": kind });
        report_seen(&cx, seen).await;
    }

    async fn read_text_file(
        &self,
        _: ClientContext,
        params: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, ErrorObject> {
        Ok(ReadTextFileResponse::new(format!("text of {}", params.path)))
    }

    async fn write_text_file(
        &self,
        _: ClientContext,
        _: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn create_elicitation(
        &self,
        _: ClientContext,
        _: CreateElicitationRequest,
    ) -> Result<CreateElicitationResponse, ErrorObject> {
        typed(&json!({ "action": "decline" }))
    }

    async fn ext_method(&self, _: ClientContext, request: agentproto_acp::ExtMessage) -> Result<RawJson, ErrorObject> {
        ext_request(&self.barrier, request).await
    }

    async fn ext_notification(&self, _: ClientContext, notification: agentproto_acp::ExtMessage) {
        if notification.method == BARRIER {
            self.barrier.mark(notification.payload.as_ref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let mut vars = BTreeMap::new();
        let pattern = json!({"id": "${p}", "error": {"code": -32800, "message": "$any", "$partial": true}});
        let actual = json!({"id": 7, "error": {"code": -32800.0, "message": "x", "data": 1}});
        assert!(matches(&pattern, &actual, &mut vars, "$").is_ok());
        assert_eq!(vars["p"], json!(7));
        assert!(matches(&json!({"id": "${p}"}), &json!({"id": 8}), &mut vars, "$").is_err());
        assert!(matches(&json!({"a": 1}), &json!({"a": 1, "b": 2}), &mut vars, "$").is_err());
        assert_eq!(substitute(&json!({"requestId": "${p}"}), &vars).unwrap(), json!({"requestId": 7}));
        assert!(substitute(&json!("${q}"), &vars).is_err());
    }
}
