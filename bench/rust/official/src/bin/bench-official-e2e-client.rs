//! End-to-end benchmark client on the official Rust SDK (`agent-client-protocol`
//! 5.0.0): spawns the agent command (`AcpAgent`), initializes, opens a session and
//! times one prompt turn in which the agent streams `--count` updates of `--tokens`
//! tokens. Each update is decoded by the SDK into `SessionNotification` and handed
//! to the notification handler. The clock stops when the prompt's answer has
//! arrived and every update has been handled (the SDK does not promise that order,
//! so the client also waits for the count).
//!
//! ```text
//! bench-official-e2e-client --count N --tokens T -- <agent command…>
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
    SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{AcpAgent, AcpAgentConfig, Agent, Client};

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("bench-official-e2e-client: {message}");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let args = bench_harness::E2eArgs::from_env().unwrap_or_else(|e| fail(e));
    let received = Arc::new(AtomicUsize::new(0));
    let text_len = 5 * args.tokens;
    let agent = AcpAgent::new(AcpAgentConfig::new(&args.agent[0]).args(args.agent[1..].iter().cloned()));
    let counter = received.clone();
    let run = args.clone();
    let outcome = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                if let SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) =
                    &notification.update
                {
                    if t.text.len() == text_len {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(agent, async move |connection: ConnectionTo<Agent>| {
            connection.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
            let session = connection.send_request(NewSessionRequest::new("/tmp")).block_task().await?;
            let prompt =
                PromptRequest::new(session.session_id, vec![ContentBlock::Text(TextContent::new(run.prompt()))]);
            let start = Instant::now();
            let answer = connection.send_request(prompt).block_task().await?;
            // Updates handled after the answer still count; give them a bounded wait.
            let deadline = Instant::now() + Duration::from_secs(30);
            while received.load(Ordering::Relaxed) < run.count && Instant::now() < deadline {
                tokio::task::yield_now().await;
            }
            let ns = start.elapsed().as_nanos();
            if answer.stop_reason != StopReason::EndTurn {
                fail(format!("stop reason {:?}", answer.stop_reason));
            }
            println!("{}", bench_harness::e2e_line(&run, received.load(Ordering::Relaxed), ns));
            Ok(())
        })
        .await;
    if let Err(e) = outcome {
        fail(e);
    }
}
