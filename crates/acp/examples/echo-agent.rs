//! An ACP agent that echoes the prompt back, word by word.
//!
//! It streams each word as an `agent_message_chunk`, asks permission for a
//! pretend tool call when the prompt mentions "tool", and stops with
//! `cancelled` when the client sends `session/cancel` (the connection ends the
//! turn; this handler is simply dropped). Run it under any ACP client, e.g.
//! `cargo run --example run-prompt -- --allow -- cargo run --example echo-agent`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentproto_acp::v1::*;

#[derive(Default)]
struct EchoAgent {
    sessions: AtomicU64,
}

impl Agent for EchoAgent {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let mut response = InitializeResponse::new(PROTOCOL_VERSION);
        response.agent_info = Implementation::new("echo-agent", env!("CARGO_PKG_VERSION")).into();
        Ok(response)
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        // Every session gets its own id.
        let n = self.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        Ok(NewSessionResponse::new(format!("echo-{n}")))
    }

    async fn prompt(&self, cx: AgentContext, request: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let session = request.session_id;
        let send = |update| cx.peer().session_update(SessionNotification::new(session.clone(), update));
        let text: String = request
            .prompt
            .iter()
            .filter_map(|b| if let ContentBlock::Text(t) = b { Some(t.text.as_str()) } else { None })
            .collect();
        if text.contains("tool") {
            send(SessionUpdate::ToolCall(ToolCall::new("echo-tool", "Pretend to edit a file"))).await.ok();
            let options = vec![
                PermissionOption::new("yes", "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new("no", "Reject", PermissionOptionKind::RejectOnce),
            ];
            let ask = RequestPermissionRequest::new(session.clone(), ToolCallUpdate::new("echo-tool"), options);
            let allowed = matches!(cx.peer().request_permission(ask).await, Ok(RequestPermissionResponse { outcome: RequestPermissionOutcome::Selected(s), .. }) if s.option_id.as_str() == "yes");
            let mut done = ToolCallUpdate::new("echo-tool");
            done.status = if allowed { ToolCallStatus::Completed } else { ToolCallStatus::Failed }.into();
            send(SessionUpdate::ToolCallUpdate(done)).await.ok();
        }
        for word in text.split_inclusive(' ') {
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(word)));
            send(SessionUpdate::AgentMessageChunk(chunk))
                .await
                .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            tokio::time::sleep(Duration::from_millis(50)).await; // pace the stream like a model would
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[tokio::main]
async fn main() {
    if let Err(e) = serve_agent_stdio(EchoAgent::default(), AcpOptions::default()).await {
        eprintln!("echo-agent: {e}");
        std::process::exit(1);
    }
}
