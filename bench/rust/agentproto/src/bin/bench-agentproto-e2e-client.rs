//! End-to-end benchmark client on agentproto's Rust SDK: spawns the agent command,
//! initializes, opens a session, and times one prompt turn in which the agent streams
//! `--count` updates of `--tokens` tokens through the pipe. Every update is decoded
//! and validated by the SDK and handed to `session_update`; the connection delivers
//! them all before the prompt's answer.
//!
//! ```text
//! bench-agentproto-e2e-client --count N --tokens T -- <agent command…>
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use agentproto_acp::v1::*;

struct Counter {
    received: Arc<AtomicUsize>,
    text_len: usize,
}

impl Client for Counter {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))
    }

    async fn session_update(&self, _: ClientContext, notification: SessionNotification) {
        if let SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) =
            &notification.update
        {
            if t.text.len() == self.text_len {
                self.received.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("bench-agentproto-e2e-client: {message}");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let args = bench_harness::E2eArgs::from_env().unwrap_or_else(|e| fail(e));
    let received = Arc::new(AtomicUsize::new(0));
    let client = Counter { received: received.clone(), text_len: 5 * args.tokens };
    let mut command = tokio::process::Command::new(&args.agent[0]);
    command.args(&args.agent[1..]);
    let checked = bench_harness::outgoing_checked();
    let options = AcpOptions::default().strict(checked);
    let (agent, process) = spawn_agent(command, client, options).unwrap_or_else(|e| fail(e));
    agent.initialize(InitializeRequest::new(PROTOCOL_VERSION)).await.unwrap_or_else(|e| fail(e));
    let session = agent.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.unwrap_or_else(|e| fail(e));
    let prompt = PromptRequest::new(session.session_id, vec![ContentBlock::Text(TextContent::new(args.prompt()))]);
    let start = Instant::now();
    let answer = agent.prompt(prompt).await.unwrap_or_else(|e| fail(e));
    let ns = start.elapsed().as_nanos();
    if answer.stop_reason != StopReason::EndTurn {
        fail(format!("stop reason {}", answer.stop_reason.as_str()));
    }
    let line = bench_harness::e2e_line(&args, received.load(Ordering::Relaxed), ns);
    println!("{}", bench_harness::with_outgoing(line, checked));
    process.close().await.ok();
}
