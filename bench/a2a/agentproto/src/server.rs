//! agentproto's A2A server (`agentproto-a2a`, by path) for the A2A benchmark: the JSON-RPC
//! binding at `/` on `127.0.0.1:0`, the in-memory store (`MemoryOptions::default()`), and
//! the seed's executors. Prints `LISTENING <port>`.
//!
//! A message whose id starts with `noop` runs the NoopExecutor (Working → Completed);
//! any other runs the EchoExecutor (Working → artifact "echo" with the text
//! "Echo: benchmark" → Completed), as the seed's fixtures do.

use std::io::Write;

use agentproto_a2a::errors::A2aError;
use agentproto_a2a::executor::{AgentExecutor, RequestContext, TaskUpdater};
use agentproto_a2a::server::A2aServer;
use agentproto_a2a::store::memory::MemoryOptions;
use agentproto_a2a::v1::{AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Artifact, Part, PartContent};

struct Bench;

impl AgentExecutor for Bench {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        task.working(None).await?;
        if !cx.message.message_id.starts_with("noop") {
            let part = Part::new(PartContent::Text("Echo: benchmark".to_owned()));
            task.artifact(Artifact::new("echo", vec![part]), false, true).await?;
        }
        task.complete(None).await
    }
}

fn card() -> AgentCard {
    let caps = AgentCapabilities { streaming: Some(true), ..Default::default() };
    let skill = AgentSkill::new("echo", "Echo", "Echoes input", vec!["echo".to_owned(), "benchmark".to_owned()]);
    AgentCard::new(
        "Bench Agent",
        "Benchmark agent",
        vec![AgentInterface::new("http://127.0.0.1/", "JSONRPC", "1.0")],
        "1.0.0",
        caps,
        vec!["text/plain".to_owned()],
        vec!["text/plain".to_owned()],
        vec![skill],
    )
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = A2aServer::builder(Bench, card()).memory(MemoryOptions::default()).build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut out = std::io::stdout();
    writeln!(out, "LISTENING {}", listener.local_addr()?.port())?;
    out.flush()?;
    server.serve(listener).await
}
