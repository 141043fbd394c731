//! The official Rust SDK's remote client (`agent-client-protocol` 5.2.0 over
//! `agent-client-protocol-http` 5.0.0, its `client` feature) against the agent at URL,
//! over Streamable HTTP, or WebSocket with `--ws`: `initialize`, `session/new`, two prompt
//! turns; prints one JSON line per turn, `[stop_reason, text of the streamed chunks]`,
//! the chunks being those handled before the prompt's answer came back. Built with the
//! `remote` feature; used by `crates/acp/tests/remote_official_rust.rs`.
//!
//! Usage: remote-client URL [--ws]

use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification, SessionUpdate, TextContent,
};
use agent_client_protocol::{Agent, Client, Error};
use agent_client_protocol_http::HttpClient;
use serde_json::json;

const PROMPTS: [&str; 2] = ["alpha beta gamma delta", "epsilon zeta"];

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(url) = args.first() else {
        eprintln!("usage: remote-client URL [--ws]");
        return std::process::ExitCode::from(2);
    };
    let endpoint = if args.iter().any(|a| a == "--ws") { url.replacen("http://", "ws://", 1) } else { url.clone() };
    let transport = match HttpClient::with_endpoint(&endpoint) {
        Ok(transport) => transport,
        Err(e) => {
            eprintln!("remote-client: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let text = Arc::new(Mutex::new(String::new()));
    let seen = text.clone();
    let result = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                if let SessionUpdate::AgentMessageChunk(chunk) = notification.update
                    && let ContentBlock::Text(t) = chunk.content
                {
                    seen.lock().expect("text").push_str(&t.text);
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async |_: RequestPermissionRequest, responder, _cx| {
                responder.respond(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async |agent: ConnectionTo<Agent>| {
            agent.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
            let session = agent.send_request(NewSessionRequest::new("/")).block_task().await?.session_id;
            for prompt in PROMPTS {
                text.lock().expect("text").clear();
                let turn = PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new(prompt))]);
                let answer = agent.send_request(turn).block_task().await?;
                let streamed = text.lock().expect("text").clone();
                println!("{}", json!([answer.stop_reason, streamed]));
            }
            Ok::<(), Error>(())
        })
        .await;
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("remote-client: {e:?}");
            std::process::ExitCode::FAILURE
        }
    }
}
