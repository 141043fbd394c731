//! Test fixtures for `agentproto-check`: the peers its tests check. Not a tool.
//!
//! ```text
//! agentproto-check-fixture agent                       an agent on our SDK (echoes; `wait` waits for a cancel)
//! agentproto-check-fixture raw-agent [--break KIND]    a hand-written agent that breaks one rule on request
//! agentproto-check-fixture client [--prompt TEXT]… [--cancel-on-permission] [--agent PROGRAM | -- AGENT…]
//!                                                      a client on our SDK (its own stdio, or spawning AGENT;
//!                                                      `--agent` takes one word, run as a path, never split)
//! agentproto-check-fixture raw-client [--break KIND]   a hand-written client that breaks one rule on request
//! agentproto-check-fixture relay ADDRESS TOKEN         the relay of `check client … {agent}`
//! agentproto-check-fixture                             the same relay, with AGENTPROTO_CHECK_RELAY set
//! ```

use std::collections::HashSet;
use std::io::{BufRead, Write};

use agentproto_acp::v1::*;
use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    if let (true, Some((address, token))) = (args.is_empty(), agentproto_check::relay::from_env()) {
        let result = runtime.block_on(agentproto_check::relay::run(&address, &token));
        std::process::exit(i32::from(result.is_err()));
    }
    match args.first().map(String::as_str) {
        Some("agent") => runtime.block_on(sdk_agent()),
        Some("raw-agent") => raw_agent(flag("--break").as_deref().unwrap_or("none")),
        Some("client") => runtime.block_on(sdk_client(&args[1..])),
        Some("raw-client") => raw_client(flag("--break").as_deref().unwrap_or("none")),
        Some("relay") if args.len() == 3 => {
            let result = runtime.block_on(agentproto_check::relay::run(&args[1], &args[2]));
            std::process::exit(i32::from(result.is_err()));
        }
        _ => {
            eprintln!("usage: agentproto-check-fixture agent|raw-agent|client|raw-client|relay …");
            std::process::exit(2);
        }
    }
    // Stdin may still be read by a blocking thread; do not wait for it.
    std::process::exit(0);
}

// ---------------------------------------------------------------------------
// An agent on our SDK.

#[derive(Default)]
struct Echo {
    /// Each session's working directory.
    cwds: std::sync::Mutex<std::collections::HashMap<String, String>>,
}

impl Agent for Echo {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let mut response = InitializeResponse::new(PROTOCOL_VERSION);
        response.agent_info = Implementation::new("fixture-agent", "1.0.0").into();
        Ok(response)
    }

    async fn new_session(
        &self,
        _: AgentContext,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, ErrorObject> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static SESSIONS: AtomicUsize = AtomicUsize::new(0);
        let session = format!("fixture-{}", SESSIONS.fetch_add(1, Ordering::Relaxed) + 1);
        if let Ok(mut cwds) = self.cwds.lock() {
            cwds.insert(session.clone(), request.cwd);
        }
        Ok(NewSessionResponse::new(session))
    }

    async fn prompt(&self, cx: AgentContext, request: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let session = request.session_id;
        let text: String = request
            .prompt
            .iter()
            .filter_map(|b| if let ContentBlock::Text(t) = b { Some(t.text.as_str()) } else { None })
            .collect();
        let chunk = |text: &str| {
            let update =
                SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(text))));
            cx.peer().session_update(SessionNotification::new(session.clone(), update))
        };
        if text.split_whitespace().next() == Some("files") {
            // Writes a file in the session's directory through the client, then reads it back.
            let cwd = self.cwds.lock().ok().and_then(|c| c.get(session.as_str()).cloned()).unwrap_or_default();
            let path = format!("{cwd}/fixture.txt");
            let write = WriteTextFileRequest::new(session.clone(), path.clone(), "one\ntwo\n");
            cx.peer().write_text_file(write).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            let mut read = ReadTextFileRequest::new(session.clone(), path);
            read.line = MaybeUndefined::Value(2);
            let content =
                cx.peer().read_text_file(read).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            chunk(&content.content).await.ok();
            return Ok(PromptResponse::new(StopReason::EndTurn));
        }
        if text.split_whitespace().next() == Some("wait") {
            chunk("waiting").await.ok();
            // Ends only when the turn is cancelled: the connection answers
            // `cancelled` (or -32800 for $/cancel_request) and drops this future.
            std::future::pending::<()>().await;
        }
        for word in text.split_inclusive(' ') {
            chunk(word).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

async fn sdk_agent() {
    if let Err(e) = serve_agent_stdio(Echo::default(), AcpOptions::default()).await {
        eprintln!("fixture agent: {e}");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------------------
// A hand-written agent that breaks one rule when asked to.

fn write_line(out: &mut impl Write, value: &Value) {
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn chunk_update(session: &str, text: &str) -> Value {
    let update = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}});
    json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})
}

fn raw_agent(brk: &str) {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut initialized = false;
    let mut sessions = HashSet::new();
    let mut turn: Option<(Value, String)> = None;
    if brk == "stdout-noise" {
        let _ = writeln!(out, "raw agent starting (a log line on stdout)");
    }
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            if brk == "crash-on-bad-json" {
                eprintln!("raw agent: cannot parse a line; giving up");
                std::process::exit(3);
            }
            write_line(&mut out, &error(&Value::Null, -32700, "parse error"));
            continue;
        };
        let id = message.get("id").cloned();
        if !message.is_object() || message["jsonrpc"] != "2.0" {
            write_line(&mut out, &error(id.as_ref().unwrap_or(&Value::Null), -32600, "invalid request"));
            continue;
        }
        let Some(method) = message["method"].as_str() else { continue };
        let params = &message["params"];
        let Some(id) = id else {
            match method {
                "session/cancel" => {
                    if let Some((prompt, _)) = turn.take_if(|(_, s)| params["sessionId"] == s.as_str()) {
                        let answer = if brk == "error-on-cancel" {
                            error(&prompt, -32603, "the turn was interrupted")
                        } else {
                            result(&prompt, json!({"stopReason": "cancelled"}))
                        };
                        write_line(&mut out, &answer);
                    }
                }
                // Not valid JSON-RPC: a reply to a notification that has no `id` at all.
                "$/cancel_request" if brk == "idless-cancel-reply" => {
                    write_line(
                        &mut out,
                        &json!({"jsonrpc": "2.0", "error": {"code": -32601, "message": "method not found"}}),
                    );
                }
                "$/cancel_request" if brk != "ignore-cancel-request" => {
                    if let Some((prompt, _)) = turn.take_if(|(p, _)| params["requestId"] == *p) {
                        write_line(&mut out, &error(&prompt, -32800, "request cancelled"));
                    }
                }
                m if m.starts_with('_') && brk == "answer-notifications" => {
                    write_line(&mut out, &error(&Value::Null, -32601, "method not found"));
                }
                _ => {}
            }
            continue;
        };
        if !initialized && method != "initialize" && brk != "accept-before-init" {
            write_line(&mut out, &error(&id, -32600, "initialize first"));
            continue;
        }
        let answer = match method {
            "initialize" => match params["protocolVersion"].as_u64() {
                None => error(&id, -32602, "protocolVersion must be an integer"),
                Some(asked) => {
                    initialized = true;
                    let version = if brk == "echo-version" { asked } else { 1 };
                    // Not a break: an auth method of a newer schema, as codex-acp
                    // sends it, which v1's `AuthMethod` accepts through its agent branch.
                    let auth = if brk == "env-var-auth" {
                        json!([{"type": "env_var", "id": "api-key", "name": "API key", "vars": [{"name": "API_KEY"}]}])
                    } else {
                        json!([])
                    };
                    result(
                        &id,
                        json!({
                            "protocolVersion": version,
                            "agentCapabilities": {"loadSession": false},
                            "authMethods": auth,
                            "agentInfo": {"name": "raw-fixture-agent", "version": "1.0.0"},
                        }),
                    )
                }
            },
            // Every session refused, as by an agent without credentials.
            "session/new" if brk == "no-sessions" => error(&id, -32000, "authentication required"),
            "session/new" => {
                if params["cwd"].is_string() && params["mcpServers"].is_array() {
                    let session = format!("raw-{}", sessions.len() + 1);
                    sessions.insert(session.clone());
                    result(&id, json!({"sessionId": session}))
                } else {
                    error(&id, -32602, "invalid params")
                }
            }
            "session/prompt" => {
                let (Some(session), Some(prompt)) = (params["sessionId"].as_str(), params["prompt"].as_array()) else {
                    write_line(&mut out, &error(&id, -32602, "invalid params"));
                    continue;
                };
                if !sessions.contains(session) && brk != "ignore-unknown-session" {
                    let mut refusal = error(&id, -32002, "unknown session");
                    refusal["error"]["data"] = json!({"sessionId": session});
                    write_line(&mut out, &refusal);
                    continue;
                }
                let text = prompt.first().and_then(|b| b["text"].as_str()).unwrap_or_default();
                if brk == "fs-unadvertised" {
                    let read = json!({"sessionId": session, "path": "/etc/hostname"});
                    write_line(
                        &mut out,
                        &json!({"jsonrpc": "2.0", "id": "raw-fs", "method": "fs/read_text_file", "params": read}),
                    );
                }
                if text.split_whitespace().next() == Some("wait") {
                    write_line(&mut out, &chunk_update(session, "waiting"));
                    turn = Some((id, session.to_owned()));
                    continue;
                }
                let named = if brk == "stranger-update" { "raw-stranger" } else { session };
                let mut update = chunk_update(named, text);
                if brk == "bad-update" {
                    update["params"]["update"]["content"] = json!({"type": "text"});
                }
                write_line(&mut out, &update);
                let stop = if brk == "bad-prompt-result" { json!(5) } else { json!("end_turn") };
                result(&id, json!({"stopReason": stop}))
            }
            _ => error(&id, -32601, "method not found"),
        };
        write_line(&mut out, &answer);
    }
    if brk == "no-exit-on-eof" {
        loop {
            std::thread::park();
        }
    }
}

// ---------------------------------------------------------------------------
// A client on our SDK.

struct Script {
    cancel_on_permission: Option<tokio::sync::mpsc::UnboundedSender<SessionId>>,
}

impl Client for Script {
    async fn request_permission(
        &self,
        _: ClientContext,
        request: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        if let Some(tx) = &self.cancel_on_permission {
            let _ = tx.send(request.session_id.clone());
            // Left pending: cancelling the session answers it `cancelled`.
            std::future::pending::<()>().await;
        }
        let allow = request.options.iter().find(|o| o.kind == PermissionOptionKind::AllowOnce);
        let outcome = match allow.or(request.options.first()) {
            Some(option) => {
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.option_id.clone()))
            }
            None => RequestPermissionOutcome::Cancelled,
        };
        Ok(RequestPermissionResponse::new(outcome))
    }

    async fn session_update(&self, _: ClientContext, _: SessionNotification) {}

    async fn read_text_file(
        &self,
        _: ClientContext,
        request: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, ErrorObject> {
        let content = std::fs::read_to_string(&request.path).map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        Ok(ReadTextFileResponse::new(content))
    }

    async fn write_text_file(
        &self,
        _: ClientContext,
        request: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, ErrorObject> {
        std::fs::write(&request.path, &request.content).map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        Ok(WriteTextFileResponse::default())
    }
}

async fn sdk_client(args: &[String]) {
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (own, agent_command) = (&args[..split], args.get(split + 1..).unwrap_or_default());
    let mut agent_command = agent_command.to_vec();
    let mut prompts = Vec::new();
    let mut cancel_on_permission = false;
    let mut i = 0;
    while i < own.len() {
        match own[i].as_str() {
            "--prompt" => {
                prompts.push(own.get(i + 1).cloned().unwrap_or_default());
                i += 1;
            }
            "--agent" => {
                agent_command = own.get(i + 1).cloned().into_iter().collect();
                i += 1;
            }
            "--cancel-on-permission" => cancel_on_permission = true,
            // As a real command-line parser does: what `--agent` did not take is an error.
            other => {
                eprintln!("fixture client: unexpected argument {other:?}");
                std::process::exit(2);
            }
        }
        i += 1;
    }
    if prompts.is_empty() {
        prompts.push("hello".to_owned());
    }
    let (tx, mut asked) = tokio::sync::mpsc::unbounded_channel();
    let script = Script { cancel_on_permission: cancel_on_permission.then_some(tx) };
    let options = AcpOptions::default();
    let (agent, process) = if agent_command.is_empty() {
        let (connection, agent) = connect_client(script, tokio::io::stdin(), tokio::io::stdout(), options);
        tokio::spawn(connection.run());
        (agent, None)
    } else {
        let mut command = tokio::process::Command::new(&agent_command[0]);
        command.args(&agent_command[1..]);
        let (agent, process) = spawn_agent(command, script, options).expect("spawn the agent");
        (agent, Some(process))
    };
    let mut request = InitializeRequest::new(PROTOCOL_VERSION);
    request.client_capabilities.fs.read_text_file = true;
    request.client_capabilities.fs.write_text_file = true;
    request.client_info = Implementation::new("fixture-client", "1.0.0").into();
    agent.initialize(request).await.expect("initialize");
    let cwd = std::env::current_dir().expect("cwd").display().to_string();
    let session = agent.new_session(NewSessionRequest::new(cwd, vec![])).await.expect("session/new").session_id;
    for text in prompts {
        let prompt = PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new(text))]);
        let turn = agent.prompt(prompt);
        tokio::pin!(turn);
        let outcome = if cancel_on_permission {
            tokio::select! {
                outcome = &mut turn => outcome,
                Some(session) = asked.recv() => {
                    agent.cancel(CancelNotification::new(session)).await.expect("session/cancel");
                    turn.await
                }
            }
        } else {
            turn.await
        };
        eprintln!("fixture client: prompt ended with {outcome:?}");
    }
    if let Some(process) = process {
        let _ = process.close().await;
    }
}

// ---------------------------------------------------------------------------
// A hand-written client that breaks one rule when asked to.

struct RawClient {
    lines: std::io::Lines<std::io::StdinLock<'static>>,
    brk: String,
    next_id: i64,
}

impl RawClient {
    fn send(&self, value: &Value) {
        let mut out = std::io::stdout().lock();
        write_line(&mut out, value);
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(id)
    }

    /// Reads until the response to `id`, answering the agent's requests on the way.
    fn wait(&mut self, id: i64) -> Value {
        while let Some(Ok(line)) = self.lines.next() {
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            let Some(method) = message["method"].as_str() else { continue };
            let method = method.to_owned();
            match message.get("id") {
                None => self.notification(&method, &message["params"]),
                Some(request) => {
                    let request = request.clone();
                    self.answer(&request, &method, &message["params"]);
                }
            }
        }
        std::process::exit(0);
    }

    fn notification(&mut self, method: &str, params: &Value) {
        let known = [
            "user_message_chunk",
            "agent_message_chunk",
            "agent_thought_chunk",
            "tool_call",
            "tool_call_update",
            "plan",
        ];
        if method == "session/update" && self.brk == "crash-on-unknown-update" {
            let kind = params["update"]["sessionUpdate"].as_str().unwrap_or_default();
            if !known.contains(&kind) {
                eprintln!("raw client: unknown update {kind:?}; giving up");
                std::process::exit(4);
            }
        }
    }

    fn answer(&mut self, id: &Value, method: &str, params: &Value) {
        let answer = match method {
            "session/request_permission" => {
                if self.brk == "keep-permission-on-cancel" {
                    self.send(&json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": params["sessionId"]}}));
                }
                let option = if self.brk == "bad-permission" { "maybe" } else { "allow" };
                result(id, json!({"outcome": {"outcome": "selected", "optionId": option}}))
            }
            _ if self.brk == "ext-result" => result(id, json!({})),
            _ => error(id, -32601, "method not found"),
        };
        self.send(&answer);
    }
}

fn raw_client(brk: &str) {
    let mut client = RawClient { lines: std::io::stdin().lock().lines(), brk: brk.to_owned(), next_id: 0 };
    if brk == "noise" {
        println!("raw client starting (a log line on stdout)");
    }
    let cwd = std::env::current_dir().expect("cwd").display().to_string();
    if brk == "no-initialize" {
        client.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
    }
    let initialize = json!({"protocolVersion": 1, "clientInfo": {"name": "raw-fixture-client", "version": "1.0.0"}});
    client.request("initialize", initialize);
    if brk == "gated" {
        client.request("session/list", json!({}));
    }
    let cwd = if brk == "relative-cwd" { "relative/dir".to_owned() } else { cwd };
    let session = client.request("session/new", json!({"cwd": cwd, "mcpServers": []}));
    let session = session["result"]["sessionId"].clone();
    let text = if brk == "keep-permission-on-cancel" { "permission" } else { "hello" };
    let mut prompt = vec![json!({"type": "text", "text": text})];
    if brk == "image-prompt" {
        prompt.push(json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}));
    }
    client.request("session/prompt", json!({"sessionId": session, "prompt": prompt}));
}
