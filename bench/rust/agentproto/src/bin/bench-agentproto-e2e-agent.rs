//! End-to-end benchmark agent on agentproto's Rust SDK, served on stdio. A prompt
//! whose text is `"<count> <tokens>"` is answered by `count` `agent_message_chunk`
//! updates of `"word "` × `tokens`, then `end_turn`.

use agentproto_acp::v1::*;

struct Streamer;

impl Agent for Streamer {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("sess-001"))
    }

    async fn prompt(&self, cx: AgentContext, request: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let text = match request.prompt.first() {
            Some(ContentBlock::Text(t)) => t.text.as_str(),
            _ => "",
        };
        let Some((count, tokens)) = bench_harness::parse_e2e_prompt(text) else {
            return Err(ErrorObject::invalid_params("$.params.prompt", "\"<count> <tokens>\"", text));
        };
        let words = "word ".repeat(tokens);
        for _ in 0..count {
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(words.clone())));
            let update = SessionNotification::new(request.session_id.clone(), SessionUpdate::AgentMessageChunk(chunk));
            cx.peer().session_update(update).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[tokio::main]
async fn main() {
    if let Err(e) = serve_agent_stdio(Streamer, AcpOptions::default().strict(bench_harness::outgoing_checked())).await {
        eprintln!("bench-agentproto-e2e-agent: {e}");
        std::process::exit(1);
    }
}
