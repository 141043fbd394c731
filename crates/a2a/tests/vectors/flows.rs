//! Flows (`vectors/a2a/v1/flows/…`): operations in sequence against a real `A2aServer`
//! (memory store) running the scripted executor, over HTTP on 127.0.0.1, on each binding
//! the flow names. Patterns, variables and the executor are described in
//! `vectors/README.md` ("A2A flows").

use std::collections::BTreeMap;

use agentproto_a2a::errors::A2aError;
use agentproto_a2a::executor::{AgentExecutor, RequestContext, TaskUpdater};
use agentproto_a2a::server::A2aServer;
use agentproto_a2a::v1::{Artifact, Operation, Part, PartContent};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::requests::REST_PREFIX;
use super::wire::WAIT;

/// The executor every flow assumes (README, "The scripted executor"): it acts on the first
/// word of the message's text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scripted;

impl AgentExecutor for Scripted {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        let text = cx.text().to_string();
        let (word, rest) = text.split_once(' ').unwrap_or((text.as_str(), ""));
        let part = |t: &str| Part::new(PartContent::Text(t.into()));
        match word {
            "echo" => {
                task.working(None).await?;
                task.flush().await?;
                task.artifact(Artifact::new("echo", vec![part(rest)])).await?;
                task.flush().await?;
                task.complete(None).await
            }
            "wait" => {
                task.working(None).await?;
                task.flush().await?;
                task.artifact(Artifact::new("progress", vec![part("started")])).await?;
                task.flush().await?;
                cx.cancelled.cancelled().await;
                Ok(())
            }
            "ask" => task.input_required(None).await,
            "reply" => task.reply(task.text(rest)).await,
            _ => task.complete(None).await,
        }
    }
}

/// A flow file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Flow {
    pub(crate) id: String,
    pub(crate) requirement: String,
    pub(crate) description: String,
    pub(crate) protocol: String,
    pub(crate) executor: String,
    pub(crate) bindings: Vec<String>,
    pub(crate) steps: Vec<Value>,
}

pub(crate) fn load_flows() -> Vec<Flow> {
    let root = agentproto_vector_files::root();
    agentproto_vector_files::flow_files(&root, "a2a")
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|p| {
            let flow: Flow = serde_json::from_str(&std::fs::read_to_string(p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(flow.id, agentproto_vector_files::id_of(&root, p), "a flow's id is its path");
            assert!(
                flow.protocol == "a2a/v1" && !flow.requirement.is_empty() && !flow.description.is_empty(),
                "{}: protocol a2a/v1, a requirement and a description",
                flow.id
            );
            flow
        })
        .collect()
}

struct Server {
    base: String,
    token: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

async fn start() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = A2aServer::builder(Scripted, agentproto_a2a::demo::card(&base)).build();
    let token = server.shutdown_token();
    tokio::spawn(server.serve(listener));
    Server { base, token }
}

// ---------------------------------------------------------------------------
// Patterns

type Vars = BTreeMap<String, Value>;

fn var_name(s: &str) -> Option<&str> {
    s.strip_prefix("${").and_then(|r| r.strip_suffix('}'))
}

/// Matches `value` against `pattern`, binding variables (README, "Patterns").
pub(crate) fn matches(pattern: &Value, value: &Value, vars: &mut Vars, at: &str) -> Result<(), String> {
    match pattern {
        Value::String(s) if s == "$any" => Ok(()),
        Value::String(s) if var_name(s).is_some() => {
            let name = var_name(s).unwrap();
            match vars.get(name) {
                Some(bound) if bound == value => Ok(()),
                Some(bound) => Err(format!("{at}: ${{{name}}} is {bound}, found {value}")),
                None => {
                    vars.insert(name.to_owned(), value.clone());
                    Ok(())
                }
            }
        }
        Value::Object(p) => {
            let Value::Object(v) = value else { return Err(format!("{at}: expected an object, found {value}")) };
            let partial = p.get("$partial") == Some(&Value::Bool(true));
            if let Some(alternatives) = p.get("$one_of").and_then(Value::as_array) {
                let mut why = Vec::new();
                for alt in alternatives {
                    let mut trial = vars.clone();
                    match matches(alt, value, &mut trial, at) {
                        Ok(()) => {
                            *vars = trial;
                            return Ok(());
                        }
                        Err(e) => why.push(e),
                    }
                }
                return Err(format!("{at}: no alternative matches: {}", why.join("; ")));
            }
            for (k, pv) in p.iter().filter(|(k, _)| k.as_str() != "$partial") {
                match (v.get(k), pv.as_str() == Some("$absent")) {
                    (None, true) => {}
                    (Some(found), true) => return Err(format!("{at}.{k}: expected absent, found {found}")),
                    (Some(vv), false) => matches(pv, vv, vars, &format!("{at}.{k}"))?,
                    (None, false) => return Err(format!("{at}: member {k} missing in {value}")),
                }
            }
            if !partial {
                if let Some(extra) = v.keys().find(|k| !p.contains_key(*k)) {
                    return Err(format!("{at}: unexpected member {extra} in {value}"));
                }
            }
            Ok(())
        }
        Value::Array(p) => {
            let Value::Array(v) = value else { return Err(format!("{at}: expected an array, found {value}")) };
            if p.len() != v.len() {
                return Err(format!("{at}: expected {} items, found {}: {value}", p.len(), v.len()));
            }
            p.iter().zip(v).enumerate().try_for_each(|(i, (pp, vv))| matches(pp, vv, vars, &format!("{at}[{i}]")))
        }
        _ if super::case::json_eq(pattern, value) => Ok(()),
        _ => Err(format!("{at}: expected {pattern}, found {value}")),
    }
}

/// `pattern` with bound variables replaced by their values.
fn substitute(v: &Value, vars: &Vars) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => match var_name(s) {
            Some(name) => vars.get(name).cloned().ok_or_else(|| format!("${{{name}}} is not bound"))?,
            None => v.clone(),
        },
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, vars)).collect::<Result<_, _>>()?),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, x)| Ok((k.clone(), substitute(x, vars)?))).collect::<Result<_, String>>()?)
        }
        _ => v.clone(),
    })
}

// ---------------------------------------------------------------------------
// Calls on a binding

fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in name.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn component(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The HTTP request of an operation (README, "A2A flows": the mapping to each binding).
fn request(
    http: &reqwest::Client,
    base: &str,
    binding: &str,
    op: &str,
    params: &Value,
    rpc_id: u64,
) -> Result<reqwest::RequestBuilder, String> {
    let operation = Operation::from_name(op).ok_or_else(|| format!("unknown operation {op}"))?;
    if binding == "jsonrpc" {
        let body = json!({"jsonrpc": "2.0", "id": rpc_id, "method": op, "params": params});
        return Ok(http.post(format!("{base}/")).header("Content-Type", "application/json").body(body.to_string()));
    }
    let mut fields: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
    let tenant = fields.get("tenant").and_then(Value::as_str).filter(|t| !t.is_empty()).map(str::to_owned);
    let rules = operation.http();
    let rule = if tenant.is_some() { rules[1] } else { rules[0] };
    let mut path = String::new();
    for seg in rule.path.split('/').filter(|s| !s.is_empty()) {
        path.push('/');
        match seg.strip_prefix('{').and_then(|r| r.split_once('}')) {
            Some((name, suffix)) => {
                let v = fields.remove(&camel(name)).ok_or_else(|| format!("{op} needs {name} for its path"))?;
                path.push_str(&component(&scalar(&v)));
                path.push_str(suffix);
            }
            None => path.push_str(seg),
        }
    }
    let url = format!("{base}{REST_PREFIX}{path}");
    Ok(match rule.method {
        "post" => http.post(url).header("Content-Type", "application/json").body(Value::Object(fields).to_string()),
        verb => {
            let query: Vec<(String, String)> = fields.iter().map(|(k, v)| (k.clone(), scalar(v))).collect();
            let m = if verb == "delete" { reqwest::Method::DELETE } else { reqwest::Method::GET };
            http.request(m, url).query(&query)
        }
    })
}

/// An answer as flows see it: `{"result": …}` or `{"error": {"reason", "code"|"http_status"}}`.
fn answer(binding: &str, status: u16, body: &Value) -> Value {
    let info = |details: &Value| {
        details.as_array().and_then(|d| d.iter().find_map(|x| x.get("reason").cloned())).unwrap_or(Value::Null)
    };
    if binding == "jsonrpc" {
        if let Some(e) = body.get("error") {
            return json!({"error": {"code": e["code"], "reason": info(&e["data"])}});
        }
        return json!({"result": body.get("result").cloned().unwrap_or(Value::Null)});
    }
    if status != 200 {
        return json!({"error": {"http_status": status, "reason": info(&body["error"]["details"])}});
    }
    json!({"result": body})
}

/// An open SSE stream: events parsed as they arrive.
struct Sse {
    binding: String,
    body: std::pin::Pin<Box<dyn futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buf: Vec<u8>,
    ended: bool,
}

impl Sse {
    /// The next event (`{"id"?, "event"?, "data"}` with `data` the result or error of
    /// the event), or `None` when the server ended the stream.
    async fn next(&mut self) -> Result<Option<Value>, String> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buf.drain(..end + 2).collect();
                let text = String::from_utf8_lossy(&block).into_owned();
                let (mut id, mut event, mut data) = (None, None, Vec::new());
                for line in text.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
                    }
                }
                if data.is_empty() {
                    continue; // a comment (keep-alive)
                }
                let payload: Value = serde_json::from_str(&data.join("\n")).map_err(|e| format!("event data: {e}"))?;
                let mut out = Map::new();
                if let Some(id) = id {
                    out.insert("id".into(), Value::String(id));
                }
                if let Some(ev) = event {
                    out.insert("event".into(), Value::String(ev));
                }
                let a = if self.binding == "jsonrpc" || out.get("event").is_none_or(|e| e != "error") {
                    answer(&self.binding, 200, &payload)
                } else {
                    json!({"error": {"reason": payload["error"]["details"][0]["reason"]}})
                };
                for (k, v) in a.as_object().unwrap() {
                    out.insert(k.clone(), v.clone());
                }
                return Ok(Some(Value::Object(out)));
            }
            if self.ended {
                return Ok(None);
            }
            match tokio::time::timeout(WAIT, self.body.next()).await {
                Err(_) => return Err("no stream event in time".into()),
                Ok(None) => self.ended = true,
                Ok(Some(Err(e))) => return Err(format!("stream: {e}")),
                Ok(Some(Ok(b))) => self.buf.extend_from_slice(&b),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Running a flow

pub(crate) async fn run(flow: &Flow, binding: &str) -> Result<(), String> {
    let server = start().await;
    let http = reqwest::Client::new();
    let mut vars = Vars::new();
    let mut streams: BTreeMap<String, Sse> = BTreeMap::new();
    for (i, step) in flow.steps.iter().enumerate() {
        let fail = |why: String| format!("step {i} ({}): {why}", step);
        let (kind, body) = step.as_object().and_then(|o| o.iter().next()).ok_or_else(|| fail("not a step".into()))?;
        match kind.as_str() {
            "call" => {
                let op = body["operation"].as_str().unwrap_or_default();
                let params = substitute(&body["params"], &vars).map_err(fail)?;
                let rb = request(&http, &server.base, binding, op, &params, i as u64 + 1).map_err(fail)?;
                let resp = tokio::time::timeout(WAIT, rb.header("A2A-Version", "1.0").send())
                    .await
                    .map_err(|_| fail("no answer in time".into()))?
                    .map_err(|e| fail(e.to_string()))?;
                let status = resp.status().as_u16();
                let text = tokio::time::timeout(WAIT, resp.bytes())
                    .await
                    .map_err(|_| fail("no body in time".into()))?
                    .map_err(|e| fail(e.to_string()))?;
                let value: Value = serde_json::from_slice(&text).unwrap_or(Value::Null);
                let got = answer(binding, status, &value);
                matches(&body["expect"], &got, &mut vars, "$")
                    .map_err(|why| fail(format!("{why}\n  answer: {got}")))?;
            }
            "open" => {
                let op = body["operation"].as_str().unwrap_or_default();
                let params = substitute(&body["params"], &vars).map_err(fail)?;
                let mut rb = request(&http, &server.base, binding, op, &params, i as u64 + 1).map_err(fail)?;
                rb = rb.header("A2A-Version", "1.0").header("Accept", "text/event-stream");
                if let Some(last) = body.get("last_event_id") {
                    rb = rb.header("Last-Event-ID", scalar(&substitute(last, &vars).map_err(fail)?));
                }
                let resp = tokio::time::timeout(WAIT, rb.send())
                    .await
                    .map_err(|_| fail("no answer in time".into()))?
                    .map_err(|e| fail(e.to_string()))?;
                let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                if !ct.starts_with("text/event-stream") {
                    let status = resp.status().as_u16();
                    let v: Value = serde_json::from_slice(&resp.bytes().await.unwrap_or_default()).unwrap_or_default();
                    return Err(fail(format!("not a stream ({status} {ct}): {v}")));
                }
                let name = body["stream"].as_str().unwrap_or("s").to_owned();
                streams.insert(
                    name,
                    Sse {
                        binding: binding.to_owned(),
                        body: Box::pin(resp.bytes_stream()),
                        buf: Vec::new(),
                        ended: false,
                    },
                );
            }
            "open_refused" => {
                let op = body["operation"].as_str().unwrap_or_default();
                let params = substitute(&body["params"], &vars).map_err(fail)?;
                let rb = request(&http, &server.base, binding, op, &params, i as u64 + 1).map_err(fail)?;
                let resp = tokio::time::timeout(
                    WAIT,
                    rb.header("A2A-Version", "1.0").header("Accept", "text/event-stream").send(),
                )
                .await
                .map_err(|_| fail("no answer in time".into()))?
                .map_err(|e| fail(e.to_string()))?;
                let status = resp.status().as_u16();
                let text = tokio::time::timeout(WAIT, resp.bytes())
                    .await
                    .map_err(|_| fail("no body in time".into()))?
                    .map_err(|e| fail(e.to_string()))?;
                // A refusal may come as a plain answer or as the only event of a stream.
                let text = String::from_utf8_lossy(&text).into_owned();
                let data =
                    text.lines().find_map(|l| l.strip_prefix("data:")).map(str::trim).unwrap_or(&text).to_owned();
                let value: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
                let got = answer(binding, status, &value);
                matches(&body["expect"], &got, &mut vars, "$")
                    .map_err(|why| fail(format!("{why}\n  answer: {text}")))?;
            }
            "events" => {
                let name = body["stream"].as_str().unwrap_or("s");
                let s = streams.get_mut(name).ok_or_else(|| fail(format!("no open stream {name}")))?;
                for (j, p) in body["expect"].as_array().cloned().unwrap_or_default().iter().enumerate() {
                    let ev = s
                        .next()
                        .await
                        .map_err(fail)?
                        .ok_or_else(|| fail(format!("the stream ended before event {j}")))?;
                    matches(p, &ev, &mut vars, &format!("event {j}"))
                        .map_err(|why| fail(format!("{why}\n  event: {ev}")))?;
                }
            }
            "ended" => {
                let name = body["stream"].as_str().unwrap_or("s");
                let s = streams.get_mut(name).ok_or_else(|| fail(format!("no open stream {name}")))?;
                if let Some(ev) = s.next().await.map_err(fail)? {
                    return Err(fail(format!("expected the end of the stream, got {ev}")));
                }
                streams.remove(name);
            }
            "close" => {
                let name = body["stream"].as_str().unwrap_or("s");
                streams.remove(name).ok_or_else(|| fail(format!("no open stream {name}")))?;
            }
            other => return Err(fail(format!("unknown step {other}"))),
        }
    }
    Ok(())
}
