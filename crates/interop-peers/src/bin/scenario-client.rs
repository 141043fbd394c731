//! The scenario client of `interop/SCENARIO.md`, on agentproto's client role.
//!
//! Usage: `scenario-client -- <agent command> [args…]`.

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::v1::*;
use agentproto_acp::RawJson;
use agentproto_interop_peers::step_line;
use tokio::sync::mpsc;

const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// What the application saw, in order.
#[derive(Debug)]
enum Seen {
    Chunk(String),
    ToolCall(String),
    ToolCallStatus(String),
    Unknown(String),
    PermissionAsked,
}

struct ScenarioClient {
    seen: mpsc::UnboundedSender<Seen>,
    /// `Some(option)` answers permission requests with it; `None` leaves them pending.
    answer: Arc<Mutex<Option<String>>>,
}

impl Client for ScenarioClient {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        let _ = self.seen.send(Seen::PermissionAsked);
        let answer = self.answer.lock().map(|a| a.clone()).unwrap_or(None);
        match answer {
            Some(option) => Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(option),
            ))),
            // Left pending: the connection answers `cancelled` when this side cancels the session.
            None => std::future::pending().await,
        }
    }

    async fn session_update(&self, _: ClientContext, params: SessionNotification) {
        let seen = match params.update {
            SessionUpdate::AgentMessageChunk(chunk) => match chunk.content {
                ContentBlock::Text(text) => Seen::Chunk(text.text),
                other => Seen::Chunk(format!("{other:?}")),
            },
            SessionUpdate::ToolCall(call) => Seen::ToolCall(call.tool_call_id.to_string()),
            SessionUpdate::ToolCallUpdate(update) => match update.status {
                MaybeUndefined::Value(status) => Seen::ToolCallStatus(status.as_str().to_owned()),
                _ => return,
            },
            SessionUpdate::Unknown(raw) => Seen::Unknown(raw.get().to_owned()),
            _ => return,
        };
        let _ = self.seen.send(seen);
    }

    async fn read_text_file(
        &self,
        _: ClientContext,
        params: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, ErrorObject> {
        let content = tokio::fs::read_to_string(&params.path)
            .await
            .map_err(|e| ErrorObject::internal_error(format!("cannot read {}: {e}", params.path)))?;
        Ok(ReadTextFileResponse::new(content))
    }

    async fn write_text_file(
        &self,
        _: ClientContext,
        params: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, ErrorObject> {
        tokio::fs::write(&params.path, params.content)
            .await
            .map_err(|e| ErrorObject::internal_error(format!("cannot write {}: {e}", params.path)))?;
        Ok(WriteTextFileResponse::default())
    }
}

type Outcome = Result<String, String>;

async fn bounded<T>(future: impl Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(STEP_TIMEOUT, future).await.map_err(|_| format!("timed out after {STEP_TIMEOUT:?}"))
}

fn report(step: &str, outcome: &Outcome) {
    match outcome {
        Ok(detail) => println!("{}", step_line(step, true, detail)),
        Err(detail) => println!("{}", step_line(step, false, detail)),
    }
}

struct Run {
    agent: AgentConnection<V1>,
    seen: mpsc::UnboundedReceiver<Seen>,
    answer: Arc<Mutex<Option<String>>>,
    session: SessionId,
    dir: PathBuf,
}

impl Run {
    fn drain(&mut self) -> Vec<Seen> {
        let mut all = Vec::new();
        while let Ok(seen) = self.seen.try_recv() {
            all.push(seen);
        }
        all
    }

    fn prompt(&self, text: &str) -> PromptRequest {
        PromptRequest::new(self.session.clone(), vec![ContentBlock::Text(TextContent::new(text))])
    }

    async fn prompt_stop(&self, text: &str) -> Result<StopReason, String> {
        let result = bounded(self.agent.prompt(self.prompt(text))).await?;
        result.map(|r| r.stop_reason).map_err(|e| format!("prompt failed: {e}"))
    }

    /// Waits for something seen that satisfies `want`.
    async fn wait_for(&mut self, want: impl Fn(&Seen) -> bool) -> Result<(), String> {
        bounded(async {
            while let Some(seen) = self.seen.recv().await {
                if want(&seen) {
                    return Ok(());
                }
            }
            Err("the connection closed".to_owned())
        })
        .await?
    }

    fn set_answer(&self, answer: Option<&str>) {
        if let Ok(mut slot) = self.answer.lock() {
            *slot = answer.map(str::to_owned);
        }
    }

    async fn echo(&mut self) -> Outcome {
        let stop = self.prompt_stop("echo hello brave world").await?;
        let chunks: Vec<String> =
            self.drain().into_iter().filter_map(|s| if let Seen::Chunk(c) = s { Some(c) } else { None }).collect();
        if chunks == ["hello", "brave", "world"] && stop == StopReason::EndTurn {
            Ok(format!("chunks {chunks:?}, {}", stop.as_str()))
        } else {
            Err(format!("chunks {chunks:?}, {}", stop.as_str()))
        }
    }

    async fn permission(&mut self) -> Outcome {
        self.set_answer(Some("allow"));
        let stop = self.prompt_stop("permission").await?;
        let seen = self.drain();
        let order: Vec<String> = seen.iter().map(|s| format!("{s:?}")).collect();
        let call = seen.iter().position(|s| matches!(s, Seen::ToolCall(id) if id == "call-1"));
        let chunk = seen.iter().position(|s| matches!(s, Seen::Chunk(c) if c == "permission:allow"));
        let done = seen.iter().position(|s| matches!(s, Seen::ToolCallStatus(st) if st == "completed"));
        match (call, chunk, done) {
            (Some(a), Some(b), Some(c)) if a < b && b < c && stop == StopReason::EndTurn => Ok(order.join(", ")),
            _ => Err(format!("{} then {}", order.join(", "), stop.as_str())),
        }
    }

    async fn fs(&mut self) -> Outcome {
        let input = self.dir.join("in.txt");
        tokio::fs::write(&input, "abc\n").await.map_err(|e| e.to_string())?;
        let stop = self.prompt_stop(&format!("fs {}", input.display())).await?;
        let out = tokio::fs::read_to_string(self.dir.join("in.txt.out")).await.map_err(|e| e.to_string())?;
        let read = self.drain().into_iter().any(|s| matches!(s, Seen::Chunk(c) if c == "read:4"));
        if out == "ABC\n" && read && stop == StopReason::EndTurn {
            Ok("in.txt.out = \"ABC\\n\", chunk read:4".to_owned())
        } else {
            Err(format!("in.txt.out = {out:?}, chunk read:4 seen: {read}, {}", stop.as_str()))
        }
    }

    async fn cancel(&mut self) -> Outcome {
        let agent = self.agent.clone();
        let request = self.prompt("wait");
        let prompt = tokio::spawn(async move { agent.prompt(request).await });
        self.wait_for(|s| matches!(s, Seen::Chunk(c) if c == "waiting")).await?;
        self.agent.cancel(CancelNotification::new(self.session.clone())).await.map_err(|e| e.to_string())?;
        let response = bounded(prompt).await?.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        match response.stop_reason {
            StopReason::Cancelled => Ok("stopReason cancelled".to_owned()),
            other => Err(format!("stopReason {}", other.as_str())),
        }
    }

    async fn cancel_permission(&mut self) -> Outcome {
        self.set_answer(None);
        let agent = self.agent.clone();
        let request = self.prompt("permission");
        let prompt = tokio::spawn(async move { agent.prompt(request).await });
        self.wait_for(|s| matches!(s, Seen::PermissionAsked)).await?;
        self.agent.cancel(CancelNotification::new(self.session.clone())).await.map_err(|e| e.to_string())?;
        let response = bounded(prompt).await?.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        let chunk = self.drain().into_iter().any(|s| matches!(s, Seen::Chunk(c) if c == "permission:cancelled"));
        let detail = format!(
            "permission answered cancelled by the SDK; chunk permission:cancelled seen: {chunk}; stopReason {}",
            response.stop_reason.as_str()
        );
        if chunk && response.stop_reason == StopReason::Cancelled {
            Ok(detail)
        } else {
            Err(detail)
        }
    }

    async fn cancel_request(&mut self) -> Outcome {
        let token = tokio_util::sync::CancellationToken::new();
        let agent = self.agent.with_cancellation(token.clone());
        let params = RawJson::from_text("{}").map_err(|e| e.to_string())?;
        let call = tokio::spawn(async move { agent.ext_method("_agentproto/slow", Some(params)).await });
        // The request is queued for writing once the spawned call has run; flushing
        // after it makes sure it is on the wire before the cancel.
        tokio::task::yield_now().await;
        self.agent.flush().await.map_err(|e| e.to_string())?;
        token.cancel();
        match bounded(call).await?.map_err(|e| e.to_string())? {
            Err(e) if e.as_rpc().is_some_and(|rpc| rpc.code == ErrorCode::REQUEST_CANCELLED) => {
                Ok("-32800 after $/cancel_request".to_owned())
            }
            Err(e) => Err(format!("failed otherwise: {e}")),
            Ok(result) => Err(format!("answered {result}")),
        }
    }

    async fn error(&mut self) -> Outcome {
        match bounded(self.agent.prompt(self.prompt("error"))).await? {
            Err(e) => match e.as_rpc() {
                Some(rpc) => {
                    let reason = rpc
                        .data
                        .as_ref()
                        .and_then(|d| serde_json::from_str::<serde_json::Value>(d.get()).ok())
                        .and_then(|d| d.get("reason").and_then(|r| r.as_str()).map(str::to_owned));
                    let detail = format!("error {} {:?}, data.reason {reason:?}", rpc.code, rpc.message);
                    if rpc.code == ErrorCode(4242) && reason.as_deref() == Some("scenario") {
                        Ok(detail)
                    } else {
                        Err(detail)
                    }
                }
                None => Err(format!("failed locally: {e}")),
            },
            Ok(response) => Err(format!("answered {}", response.stop_reason.as_str())),
        }
    }

    async fn unknown_update(&mut self) -> Outcome {
        let stop = self.prompt_stop("unknown-update").await?;
        let seen = self.drain();
        let unknown =
            seen.iter().position(|s| matches!(s, Seen::Unknown(raw) if raw.contains("agentproto_future_update")));
        let after = seen.iter().position(|s| matches!(s, Seen::Chunk(c) if c == "after-unknown"));
        let detail = format!("{seen:?}, {}", stop.as_str());
        match (unknown, after) {
            (Some(a), Some(b)) if a < b && stop == StopReason::EndTurn => Ok(detail),
            _ => Err(detail),
        }
    }
}

const STEPS: &[&str] =
    &["prompt_echo", "permission", "fs", "cancel", "cancel_permission", "cancel_request", "error", "unknown_update"];

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip_while(|a| a != "--").skip(1).collect();
    let Some((program, rest)) = args.split_first() else {
        eprintln!("usage: scenario-client -- <agent command> [args…]");
        std::process::exit(2);
    };
    let dir = std::env::temp_dir().join(format!("agentproto-scenario-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("scenario-client: cannot create {}: {e}", dir.display());
        std::process::exit(2);
    }
    let (sender, seen) = mpsc::unbounded_channel();
    let answer = Arc::new(Mutex::new(None));
    let client = ScenarioClient { seen: sender, answer: answer.clone() };
    let mut command = tokio::process::Command::new(program);
    command.args(rest);
    let options = AcpOptions::default().log_to_stderr("scenario-client");
    let (agent, process) = match spawn_agent(command, client, options) {
        Ok(spawned) => spawned,
        Err(e) => {
            eprintln!("scenario-client: cannot start {program}: {e}");
            std::process::exit(2);
        }
    };

    let mut capabilities = ClientCapabilities::default();
    capabilities.fs.read_text_file = true;
    capabilities.fs.write_text_file = true;
    let mut initialize = InitializeRequest::new(PROTOCOL_VERSION);
    initialize.client_capabilities = capabilities;
    initialize.client_info = Implementation::new("agentproto-scenario-client", "0.0.0").into();
    let initialized: Outcome = match bounded(agent.initialize(initialize)).await {
        Ok(Ok(response)) if response.protocol_version == 1 => Ok("protocolVersion 1".to_owned()),
        Ok(Ok(response)) => Err(format!("protocolVersion {}", response.protocol_version)),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(e),
    };
    report("initialize", &initialized);
    let session: Result<SessionId, String> = match initialized {
        Err(_) => Err("skipped".to_owned()),
        Ok(_) => {
            let request = NewSessionRequest::new(dir.display().to_string(), Vec::new());
            match bounded(agent.new_session(request)).await {
                Ok(Ok(response)) if !response.session_id.as_str().is_empty() => Ok(response.session_id),
                Ok(Ok(_)) => Err("empty sessionId".to_owned()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(e) => Err(e),
            }
        }
    };
    report("session_new", &session.as_ref().map(|s| format!("sessionId {s}")).map_err(Clone::clone));
    match session {
        Err(_) => {
            for step in STEPS {
                report(step, &Err("skipped".to_owned()));
            }
        }
        Ok(session) => {
            let mut run = Run { agent, seen, answer, session, dir: dir.clone() };
            report("prompt_echo", &run.echo().await);
            report("permission", &run.permission().await);
            report("fs", &run.fs().await);
            report("cancel", &run.cancel().await);
            report("cancel_permission", &run.cancel_permission().await);
            report("cancel_request", &run.cancel_request().await);
            report("error", &run.error().await);
            report("unknown_update", &run.unknown_update().await);
        }
    }
    if let Err(e) = process.close().await {
        eprintln!("scenario-client: closing the agent: {e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
