use agentproto_a2a::errors::A2aError;
use agentproto_a2a::executor::{AgentExecutor, RequestContext, TaskUpdater};
use agentproto_a2a::server::A2aServer;
use agentproto_a2a::v1::{Artifact, Part, PartContent};

struct Echo;
impl AgentExecutor for Echo {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        task.working(None).await?;
        let part = Part::new(PartContent::Text(cx.text()));
        task.artifact(Artifact::new("echo", vec![part])).await?;
        task.complete(Some(task.text("done"))).await
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    let card = agentproto_a2a::demo::card("http://127.0.0.1:8080"); // or your own AgentCard
    let server = A2aServer::builder(Echo, card).sqlite("echo.db")?.build();
    Ok(server.serve_until_signal(listener).await?)
}
