//! An ACP agent that echoes the prompt back, word by word.
//!
//! It streams each word as an `agent_message_chunk`, asks permission for a
//! pretend tool call when the prompt mentions "tool", and stops with
//! `cancelled` when the client sends `session/cancel` (the connection ends the
//! turn; this handler is simply dropped). Run it under any ACP client, e.g.
//! `cargo run --example run-prompt -- --allow -- cargo run --example echo-agent`.
//! With `--listen HOST:PORT` it serves itself over the network instead, at
//! `http://HOST:PORT/acp` (Streamable HTTP and WebSocket, one agent per connection).
//!
//! ```text
//! echo-agent [--listen HOST:PORT] [--help]
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentproto_acp::v1::*;

#[derive(Default)]
struct EchoAgent {
    sessions: AtomicU64,
}

impl Agent for EchoAgent {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let mut response = InitializeResponse::new(PROTOCOL_VERSION);
        response.agent_info = Implementation::new("echo-agent", env!("CARGO_PKG_VERSION")).into();
        Ok(response)
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        // Every session gets its own id.
        let n = self.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        Ok(NewSessionResponse::new(format!("echo-{n}")))
    }

    async fn prompt(&self, cx: AgentContext, request: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let session = &request.session_id;
        let text = request.text();
        if text.contains("tool") {
            cx.peer().update(session, ToolCall::new("echo-tool", "Pretend to edit a file")).await.ok();
            let options = vec![
                PermissionOption::new("yes", "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new("no", "Reject", PermissionOptionKind::RejectOnce),
            ];
            let ask = RequestPermissionRequest::new(session, ToolCallUpdate::new("echo-tool"), options);
            let allowed = matches!(cx.peer().request_permission(ask).await, Ok(RequestPermissionResponse { outcome: RequestPermissionOutcome::Selected(s), .. }) if s.option_id.as_str() == "yes");
            let mut done = ToolCallUpdate::new("echo-tool");
            done.status = if allowed { ToolCallStatus::Completed } else { ToolCallStatus::Failed }.into();
            cx.peer().update(session, done).await.ok();
        }
        for word in text.split_inclusive(' ') {
            cx.peer().update(session, SessionUpdate::agent_message_text(word)).await?;
            tokio::time::sleep(Duration::from_millis(50)).await; // pace the stream like a model would
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

const USAGE: &str = "usage: echo-agent [--listen HOST:PORT] [--help]\n\nAn ACP agent on stdin/stdout that echoes each prompt back, word by word.\nRun it under an ACP client, e.g. run-prompt -- echo-agent.\nWith --listen it serves at http://HOST:PORT/acp (Streamable HTTP and WebSocket).\n";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Command {
    Serve,
    /// Serve over the network at this address.
    Listen(String),
    Help,
    /// A usage error: the message, then the usage on stderr, exit status 2.
    Wrong(String),
}

fn parse(args: &[String]) -> Command {
    match args.first().map(String::as_str) {
        None => Command::Serve,
        Some("--help" | "-h") => Command::Help,
        Some("--listen") => match args.get(1..) {
            Some([address]) => Command::Listen(address.clone()),
            Some([]) | None => Command::Wrong("--listen needs HOST:PORT".to_owned()),
            Some([_, extra, ..]) => Command::Wrong(format!("unknown argument {extra:?}")),
        },
        Some(other) => Command::Wrong(format!("unknown argument {other:?}")),
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args) {
        Command::Serve => {}
        Command::Listen(address) => return listen(&address).await,
        Command::Help => {
            print!("{USAGE}");
            return;
        }
        Command::Wrong(problem) => {
            eprint!("echo-agent: {problem}\n{USAGE}");
            std::process::exit(2);
        }
    }
    if let Err(e) = serve_agent_stdio(EchoAgent::default(), AcpOptions::default()).await {
        eprintln!("echo-agent: {e}");
        std::process::exit(1);
    }
}

/// Serves fresh echo agents at `http://ADDRESS/acp` until Ctrl-C.
async fn listen(address: &str) {
    use agentproto_acp::remote::{RemoteServer, ServerLimits};
    let listener = match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("echo-agent: cannot listen on {address}: {e}");
            std::process::exit(1);
        }
    };
    if let Ok(local) = listener.local_addr() {
        eprintln!("echo-agent: serving at http://{local}/acp");
    }
    let server = RemoteServer::agent::<V1, _, _>(EchoAgent::default, AcpOptions::default(), ServerLimits::default());
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    if let Err(e) = server.serve(listener, shutdown).await {
        eprintln!("echo-agent: {e}");
        std::process::exit(1);
    }
}
