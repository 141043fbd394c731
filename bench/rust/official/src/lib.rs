//! What the official SDK's adapters share: the end-to-end benchmark agent, served on stdio by
//! `bench-official-e2e-agent` and at `/acp` by `bench-official-net`.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{Agent, Client, ConnectTo, Error};

/// The end-to-end agent, named `name`: a prompt whose text is `"<count> <tokens>"` is
/// answered by `count` `agent_message_chunk` updates of `"word "` × `tokens`, then
/// `end_turn`, sent from the prompt handler as the SDK's documentation shows.
pub fn streamer(name: &'static str) -> impl ConnectTo<Client> {
    Agent
        .v1()
        .name(name)
        .on_receive_request(
            async |_: InitializeRequest, responder, _cx| {
                responder.respond(InitializeResponse::new(ProtocolVersion::V1))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |_: NewSessionRequest, responder, _cx| responder.respond(NewSessionResponse::new("sess-001")),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |request: PromptRequest, responder, cx| {
                let text = match request.prompt.first() {
                    Some(ContentBlock::Text(t)) => t.text.as_str(),
                    _ => "",
                };
                let Some((count, tokens)) = bench_harness::parse_e2e_prompt(text) else {
                    return responder.respond_with_error(Error::invalid_params());
                };
                let words = "word ".repeat(tokens);
                for _ in 0..count {
                    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(words.clone())));
                    cx.send_notification(SessionNotification::new(
                        request.session_id.clone(),
                        SessionUpdate::AgentMessageChunk(chunk),
                    ))?;
                }
                responder.respond(PromptResponse::new(StopReason::EndTurn))
            },
            agent_client_protocol::on_receive_request!(),
        )
}
