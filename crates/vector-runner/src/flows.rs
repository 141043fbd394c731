//! Runs the flow vectors under `vectors/acp/v1/flows/` against the real ACP roles.
//!
//! A flow is an ordered list of steps (format in `vectors/README.md`, "Flows"). The
//! side under test is our agent role ([`agentproto_acp::v1::connect_agent`]) or
//! client role ([`agentproto_acp::v1::connect_client`]) serving one of the two small
//! deterministic applications of the `apps` module, connected through an in-memory
//! duplex pipe. The runner plays the other side with raw NDJSON lines (the `wire`
//! module, shared with [`crate::live`]). Every wait is bounded by [`STEP_TIMEOUT`];
//! nothing sleeps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::v1::*;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

use crate::calls::{call_agent, Answer};
use crate::wire::Wire;
pub use crate::wire::STEP_TIMEOUT;

mod apps;
use apps::{quiet_deliberate_panics, TestAgent, TestClient};

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

/// Reads every ACP flow (the `acp` corpus's flows folder in `vectors/layout.json`),
/// sorted by file name.
pub fn load_flows(root: &Path) -> Result<Vec<(PathBuf, Flow)>, String> {
    let mut flows = Vec::new();
    for path in agentproto_vector_files::flow_files(root, "acp")? {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let flow: Flow = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        flows.push((path, flow));
    }
    Ok(flows)
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
    let mut run = Run {
        wire: Wire::new(theirs),
        vars: BTreeMap::new(),
        calls: Vec::new(),
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
    wire: Wire,
    vars: BTreeMap<String, Value>,
    calls: Vec<Call>,
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
                self.wire.send(&message).await
            }
            "expect" => {
                let line = self.wire.next_line().await.map_err(|e| format!("expected {body}, but {e}"))?;
                self.expect(body, &line)
            }
            "expect_unordered" => self.expect_unordered(body).await,
            "expect_silence" => self.wire.silence().await,
            "call" => self.call(body),
            "expect_call" => self.expect_call(body).await,
            other => Err(format!("unknown step kind {other:?}")),
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
            let line =
                self.wire.next_line().await.map_err(|e| {
                    format!("expected {} message(s) in any order, got {lines:?}, then {e}", patterns.len())
                })?;
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
        let future = call_agent(agent, &method, &params)?;
        let outcome = async move { future.await.map(|answer: Answer| answer.value()) };
        self.calls.push(Call { method, handle: Some(tokio::spawn(outcome)) });
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
