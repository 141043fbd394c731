//! An echo agent on the official Rust SDK (`agent-client-protocol` 5.2.0) served over the
//! network by `agent-client-protocol-http` 5.0.0 (its `server` feature: an axum router,
//! Streamable HTTP and WebSocket at `/acp`) on 127.0.0.1, any free port; it prints
//! `official rust agent: listening on http://127.0.0.1:PORT/acp` on stderr and serves
//! until killed. A prompt's text comes back as `agent_message_chunk` updates, one per
//! word (with the space after it), then the turn ends with `end_turn`. Built with the
//! `remote` feature; used by `crates/acp/tests/remote_official_rust.rs`.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::{Agent, Client, ConnectTo};
use agent_client_protocol_http::AcpHttpServer;

/// The echo agent of one ACP connection.
fn echo_agent() -> impl ConnectTo<Client> {
    Agent
        .v1()
        .on_receive_request(
            async |_: InitializeRequest, responder, _cx| {
                responder.respond(InitializeResponse::new(ProtocolVersion::V1))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |_: NewSessionRequest, responder, _cx| responder.respond(NewSessionResponse::new("official-1")),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            // The turn sends notifications and answers from a task of its own, as the SDK's
            // ordering notes ask of handlers that do more than answer.
            async |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                cx.clone().spawn(async move {
                    let text: String = request
                        .prompt
                        .iter()
                        .filter_map(|block| match block {
                            ContentBlock::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect();
                    for word in text.split_inclusive(' ') {
                        let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(word)));
                        let update = SessionUpdate::AgentMessageChunk(chunk);
                        cx.send_notification(SessionNotification::new(request.session_id.clone(), update))?;
                    }
                    responder.respond(PromptResponse::new(StopReason::EndTurn))
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let app = AcpHttpServer::new(echo_agent).into_router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    eprintln!("official rust agent: listening on http://{}/acp", listener.local_addr()?);
    axum::serve(listener, app).await
}
