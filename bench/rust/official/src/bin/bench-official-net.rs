//! Network end-to-end adapter on the official Rust SDK (`agent-client-protocol` 5.2.0)
//! and its network transport crate (`agent-client-protocol-http` 5.0.0, features `server`
//! and `client`): the stdio end-to-end agent (`bench-official-e2e-agent`: the same
//! handlers, updates sent from the prompt handler) served at `/acp` by `AcpHttpServer`
//! (one agent per ACP connection; its axum router under `axum::serve`, TCP_NODELAY on
//! accepted sockets as axum's documentation shows), and the stdio end-to-end client's
//! application (`bench-official-e2e-client`: the same notification handler and wait)
//! connected with `HttpClient` over Streamable HTTP (`http://` endpoint) or, with `--ws`,
//! WebSocket (`ws://`, the crate picks the transport by the URL's scheme). Both roles
//! print what bench/python/net_harness.py describes.
//!
//! ```text
//! bench-official-net agent --listen HOST:PORT       # prints {"listening": URL}, serves until SIGTERM
//! bench-official-net client --url URL [--ws] [--count N] [--tokens T]
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
use agent_client_protocol::{Agent, Client};
use agent_client_protocol_http::{AcpHttpServer, HttpClient};
use axum::serve::ListenerExt;
use bench_harness::NetArgs;

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("bench-official-net: {message}");
    std::process::exit(2)
}

async fn agent(args: NetArgs) {
    let listener = tokio::net::TcpListener::bind(&args.listen).await.unwrap_or_else(|e| fail(e));
    let local = listener.local_addr().unwrap_or_else(|e| fail(e));
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let app = AcpHttpServer::new(|| bench_official::streamer("bench-official-net")).into_router();
    let mut term =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap_or_else(|e| fail(e));
    println!("{{\"listening\":\"http://{local}/acp\"}}");
    // SIGTERM ends the process at once: a graceful shutdown would wait for open connections.
    tokio::select! {
        served = axum::serve(listener, app) => {
            if let Err(e) = served {
                fail(e);
            }
        }
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

async fn client(args: NetArgs) {
    let endpoint = if args.websocket { args.url.replacen("http://", "ws://", 1) } else { args.url.clone() };
    let transport = HttpClient::with_endpoint(&endpoint).unwrap_or_else(|e| fail(e));
    let received = Arc::new(AtomicUsize::new(0));
    let text_len = 5 * args.e2e.tokens;
    let counter = received.clone();
    let run = args.e2e.clone();
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
        .connect_with(transport, async move |connection: ConnectionTo<Agent>| {
            connection.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
            let session = connection.send_request(NewSessionRequest::new("/tmp")).block_task().await?;
            let prompt =
                PromptRequest::new(session.session_id, vec![ContentBlock::Text(TextContent::new(run.prompt()))]);
            let start = Instant::now();
            let answer = connection.send_request(prompt).block_task().await?;
            // Updates handled after the answer still count (the SDK does not promise that
            // order); a bounded wait, as in bench-official-e2e-client.
            let deadline = Instant::now() + Duration::from_secs(30);
            while received.load(Ordering::Relaxed) < run.count && Instant::now() < deadline {
                tokio::task::yield_now().await;
            }
            let ns = start.elapsed().as_nanos();
            if answer.stop_reason != StopReason::EndTurn {
                fail(format!("stop reason {:?}", answer.stop_reason));
            }
            let got = received.load(Ordering::Relaxed);
            println!("{}", bench_harness::e2e_line(&run, got, ns));
            Ok(got)
        })
        .await;
    match outcome {
        Ok(got) if got == args.e2e.count => {}
        Ok(_) => std::process::exit(1),
        Err(e) => fail(e),
    }
}

#[tokio::main]
async fn main() {
    let args = NetArgs::from_env().unwrap_or_else(|e| fail(e));
    if args.agent {
        agent(args).await;
    } else {
        client(args).await;
    }
}
