//! The community Rust SDK's A2A server (`a2a-protocol-sdk` 0.15.0) for the A2A benchmark:
//! JSON-RPC at `/` on `127.0.0.1:0` (`serve_with_addr`, its default `ServeConfig`), the
//! default in-memory task store, and the seed's executors. Prints `LISTENING <port>`.
//!
//! A message whose id starts with `noop` runs the NoopExecutor (Working → Completed);
//! any other runs the EchoExecutor (Working → artifact "echo" with the text
//! "Echo: benchmark" → Completed), as the seed's fixtures do.

use std::io::Write;
use std::sync::Arc;

use a2a_protocol_sdk::prelude::*;

struct Bench;

agent_executor!(Bench, |ctx, queue| async {
    let emit = EventEmitter::new(ctx, queue);
    emit.status(TaskState::Working).await?;
    if !ctx.message.id.0.starts_with("noop") {
        emit.artifact("echo", vec![Part::text("Echo: benchmark")], None, Some(true)).await?;
    }
    emit.status(TaskState::Completed).await
});

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let card = AgentCard::new("Bench Agent", "1.0.0", AgentInterface::jsonrpc("http://127.0.0.1/"))
        .with_description("Benchmark agent")
        .with_streaming(true)
        .with_skill(AgentSkill::new("echo", "Echo", "Echoes input").with_tags(["echo", "benchmark"]));
    let handler = RequestHandlerBuilder::new(Bench).with_agent_card(card).build().map_err(std::io::Error::other)?;
    let addr = serve_with_addr("127.0.0.1:0", JsonRpcDispatcher::new(Arc::new(handler))).await?;
    let mut out = std::io::stdout();
    writeln!(out, "LISTENING {}", addr.port())?;
    out.flush()?;
    std::future::pending::<()>().await;
    Ok(())
}
