//! Network end-to-end adapter on agentproto's Rust SDK (`agentproto_acp::remote`, the
//! `remote-server` and `remote-client` features): the stdio end-to-end agent served at
//! `/acp` (`RemoteServer`, one agent per ACP connection) and the stdio end-to-end
//! client's application connected with `remote::connect` over Streamable HTTP or, with
//! `--ws`, WebSocket. Both roles print what bench/python/net_harness.py describes.
//!
//! ```text
//! bench-agentproto-net agent --listen HOST:PORT       # prints {"listening": URL}, serves until SIGTERM
//! bench-agentproto-net client --url URL [--ws] [--count N] [--tokens T]
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use agentproto_acp::remote::{connect, RemoteOptions, RemoteServer, ServerLimits};
use agentproto_acp::v1::*;
use bench_harness::NetArgs;

struct Streamer;

impl Agent for Streamer {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("sess-001"))
    }

    async fn prompt(&self, cx: AgentContext, request: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let text = match request.prompt.first() {
            Some(ContentBlock::Text(t)) => t.text.as_str(),
            _ => "",
        };
        let Some((count, tokens)) = bench_harness::parse_e2e_prompt(text) else {
            return Err(ErrorObject::invalid_params("$.params.prompt", "\"<count> <tokens>\"", text));
        };
        let words = "word ".repeat(tokens);
        for _ in 0..count {
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(words.clone())));
            let update = SessionNotification::new(request.session_id.clone(), SessionUpdate::AgentMessageChunk(chunk));
            cx.peer().session_update(update).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

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
    eprintln!("bench-agentproto-net: {message}");
    std::process::exit(2)
}

async fn agent(args: NetArgs) {
    let listener = tokio::net::TcpListener::bind(&args.listen).await.unwrap_or_else(|e| fail(e));
    let local = listener.local_addr().unwrap_or_else(|e| fail(e));
    let options = AcpOptions::default().strict(bench_harness::outgoing_checked());
    let server = RemoteServer::agent::<V1, _, _>(|| Streamer, options, ServerLimits::default());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    let mut term =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap_or_else(|e| fail(e));
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        stop.cancel();
    });
    println!("{{\"listening\":\"http://{local}/acp\"}}");
    if let Err(e) = server.serve(listener, shutdown).await {
        fail(e);
    }
}

async fn client(args: NetArgs) {
    let received = Arc::new(AtomicUsize::new(0));
    let client = Counter { received: received.clone(), text_len: 5 * args.e2e.tokens };
    let checked = bench_harness::outgoing_checked();
    let options = AcpOptions::default().strict(checked);
    let remote = RemoteOptions::new().websocket(args.websocket);
    let (agent, transport) = connect::<V1, _>(&args.url, client, options, remote).await.unwrap_or_else(|e| fail(e));
    agent.initialize(InitializeRequest::new(PROTOCOL_VERSION)).await.unwrap_or_else(|e| fail(e));
    let session = agent.new_session(NewSessionRequest::new("/tmp", Vec::new())).await.unwrap_or_else(|e| fail(e));
    let text = args.e2e.prompt();
    let prompt = PromptRequest::new(session.session_id, vec![ContentBlock::Text(TextContent::new(text))]);
    let start = Instant::now();
    let answer = agent.prompt(prompt).await.unwrap_or_else(|e| fail(e));
    let ns = start.elapsed().as_nanos();
    if answer.stop_reason != StopReason::EndTurn {
        fail(format!("stop reason {}", answer.stop_reason.as_str()));
    }
    let got = received.load(Ordering::Relaxed);
    let line = bench_harness::e2e_line(&args.e2e, got, ns);
    println!("{}", bench_harness::with_outgoing(line, checked));
    transport.close().await;
    if got != args.e2e.count {
        std::process::exit(1);
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
