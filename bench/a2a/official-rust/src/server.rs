//! The official Rust SDK's A2A server (`a2a-server-lf` 0.5.3 with `a2a-lf` 0.4.2, from
//! a2aproject/a2a-rs) for the A2A benchmark: its JSON-RPC router (`jsonrpc_router`) at `/`,
//! served by `axum::serve` on `127.0.0.1:0` (TCP_NODELAY set), over its `DefaultRequestHandler`
//! with the `InMemoryTaskStore`, and the seed's executors; with `--grpc`, the same handler
//! behind its gRPC binding (`a2a-grpc` 0.3.11) on tonic. Prints `LISTENING <port>`.
//!
//! A message whose id starts with `noop` runs the NoopExecutor (Working → Completed); any
//! other runs the EchoExecutor (Working → artifact `echo` with the text "Echo: benchmark" →
//! Completed), as the seed's fixtures do. The SDK creates the SUBMITTED task itself before the
//! executor runs; the executor only emits the seed's events, and the SDK's handler applies each
//! to the stored task.

use std::io::Write;
use std::sync::Arc;

use a2a::{
    A2AError, Artifact, Part, StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_grpc::GrpcHandler;
use a2a_pb::proto::a2a_service_server::A2aServiceServer;
use a2a_server::{AgentExecutor, DefaultRequestHandler, ExecutorContext, InMemoryTaskStore};
use axum::serve::ListenerExt;
use futures::stream::{self, BoxStream};

/// The seed's EchoExecutor and NoopExecutor in one: the message id picks which.
struct Bench;

fn status(ctx: &ExecutorContext, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: ctx.task_id.clone(),
        context_id: ctx.context_id.clone(),
        status: TaskStatus { state, message: None, timestamp: None },
        metadata: None,
    })
}

fn echo_artifact(ctx: &ExecutorContext) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: ctx.task_id.clone(),
        context_id: ctx.context_id.clone(),
        artifact: Artifact {
            artifact_id: "echo".into(),
            name: None,
            description: None,
            parts: vec![Part::text("Echo: benchmark")],
            metadata: None,
            extensions: None,
        },
        append: None,
        last_chunk: Some(true),
        metadata: None,
    })
}

impl AgentExecutor for Bench {
    fn execute(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let noop = ctx.message.as_ref().is_some_and(|m| m.message_id.starts_with("noop"));
        let mut events = vec![Ok(status(&ctx, TaskState::Working))];
        if !noop {
            events.push(Ok(echo_artifact(&ctx)));
        }
        events.push(Ok(status(&ctx, TaskState::Completed)));
        Box::pin(stream::iter(events))
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        Box::pin(stream::iter([Ok(status(&ctx, TaskState::Canceled))]))
    }
}

fn listening(port: u16) -> std::io::Result<()> {
    let mut out = std::io::stdout();
    writeln!(out, "LISTENING {port}")?;
    out.flush()
}

/// `--grpc`: the SDK's gRPC binding (`a2a_grpc::GrpcHandler` as tonic's
/// `lf.a2a.v1.A2AService`) over the same handler, HTTP/2 without TLS; otherwise its
/// JSON-RPC router at `/`.
#[tokio::main]
async fn main() -> std::io::Result<()> {
    let grpc = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--grpc") => true,
        Some(other) => return Err(std::io::Error::other(format!("unknown argument {other:?} (only --grpc)"))),
    };
    let handler = Arc::new(DefaultRequestHandler::new(Bench, InMemoryTaskStore::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    if grpc {
        let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let service = A2aServiceServer::new(GrpcHandler::new(handler));
        listening(port)?;
        return tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(incoming)
            .await
            .map_err(std::io::Error::other);
    }
    // TCP_NODELAY on every accepted connection, as every other server of the benchmark sets
    // it: the SDK leaves serving to the application (its example calls `axum::serve` as it
    // is), and without it the SSE stream's frames wait on Nagle and the client's delayed ACK
    // (about 40 ms per stream here).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    listening(port)?;
    axum::serve(listener, a2a_server::jsonrpc::jsonrpc_router(handler)).await
}
