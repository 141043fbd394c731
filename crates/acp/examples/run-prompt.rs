//! An ACP client that spawns any agent command, runs one prompt and prints the
//! updates as they stream in.
//!
//! ```text
//! run-prompt [--allow | --reject] [--prompt TEXT] -- <agent command> [args…]
//! run-prompt [--allow | --reject] [--prompt TEXT] --url http://HOST:PORT/acp [--ws]
//! run-prompt --help
//! ```
//!
//! Permission requests are answered from the flag: `--allow` picks the first
//! "allow" option, `--reject` (the default) the first "reject" option. Ctrl-C
//! sends `session/cancel`. Files are served from the current directory only. With
//! `--url` it connects to an agent served over the network (Streamable HTTP, or
//! WebSocket with `--ws`) instead of spawning one.

use agentproto_acp::fs::FsRoots;
use agentproto_acp::v1::*;

struct Printer {
    allow: bool,
    files: FsRoots,
}

impl Client for Printer {
    async fn request_permission(
        &self,
        _: ClientContext,
        request: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        let wanted = if self.allow {
            [PermissionOptionKind::AllowOnce, PermissionOptionKind::AllowAlways]
        } else {
            [PermissionOptionKind::RejectOnce, PermissionOptionKind::RejectAlways]
        };
        let choice = request.options.iter().find(|o| wanted.contains(&o.kind));
        eprintln!(
            "[permission] {} -> {}",
            request.tool_call.tool_call_id,
            choice.map_or("cancelled", |o| o.name.as_str())
        );
        let outcome = match choice {
            Some(option) => {
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.option_id.clone()))
            }
            None => RequestPermissionOutcome::Cancelled,
        };
        Ok(RequestPermissionResponse::new(outcome))
    }

    async fn session_update(&self, _: ClientContext, notification: SessionNotification) {
        match notification.update {
            SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(text), .. }) => {
                print!("{}", text.text)
            }
            SessionUpdate::ToolCall(call) => eprintln!("[tool] {} {}", call.tool_call_id, call.title),
            SessionUpdate::Unknown(raw) => eprintln!("[unknown update] {raw}"),
            other => eprintln!("[update] {other:?}"),
        }
    }

    async fn read_text_file(
        &self,
        _: ClientContext,
        request: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, ErrorObject> {
        self.files.read_text_file(&request).await
    }

    async fn write_text_file(
        &self,
        _: ClientContext,
        request: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, ErrorObject> {
        self.files.write_text_file(&request).await
    }
}

const USAGE: &str = "\
usage: run-prompt [--allow | --reject] [--prompt TEXT] -- <agent command> [args...]
       run-prompt [--allow | --reject] [--prompt TEXT] --url URL [--ws]
       run-prompt --help

Spawns the agent command (or connects to the agent at URL, e.g.
http://127.0.0.1:8000/acp), runs one prompt turn and prints the agent's reply on
stdout (updates and the stop reason on stderr). Ctrl-C cancels the turn.

  --allow        answer permission requests with the first allow option
  --reject       answer them with the first reject option (the default)
  --prompt TEXT  the prompt (default: \"hello from run-prompt\")
  --url URL      the agent served over the network (Streamable HTTP)
  --ws           reach it over WebSocket instead
  --help         this text
";

/// Where the agent is.
#[derive(Debug, PartialEq)]
enum Agent {
    /// A command to spawn.
    Command(Vec<String>),
    /// A URL to connect to, over WebSocket or not.
    Url { url: String, websocket: bool },
}

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Command {
    Run {
        allow: bool,
        prompt: String,
        agent: Agent,
    },
    Help,
    /// A usage error: the message, then the usage on stderr, exit status 2.
    Wrong(String),
}

fn parse(args: &[String]) -> Command {
    let mut allow = false;
    let mut prompt = "hello from run-prompt".to_owned();
    let mut url = None;
    let mut websocket = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--help" | "-h" => return Command::Help,
            "--allow" => allow = true,
            "--reject" => allow = false,
            "--prompt" => match words.next() {
                Some(text) => prompt = text.clone(),
                None => return Command::Wrong("--prompt needs a value".to_owned()),
            },
            "--url" => match words.next() {
                Some(text) => url = Some(text.clone()),
                None => return Command::Wrong("--url needs a value".to_owned()),
            },
            "--ws" => websocket = true,
            "--" if url.is_some() => {
                return Command::Wrong("--url and -- <agent command> exclude each other".to_owned())
            }
            "--" => {
                let agent: Vec<String> = words.cloned().collect();
                if agent.is_empty() {
                    return Command::Wrong("no agent command after --".to_owned());
                }
                if websocket {
                    return Command::Wrong("--ws needs --url".to_owned());
                }
                return Command::Run { allow, prompt, agent: Agent::Command(agent) };
            }
            other => return Command::Wrong(format!("unknown argument {other:?}")),
        }
    }
    match url {
        Some(url) => Command::Run { allow, prompt, agent: Agent::Url { url, websocket } },
        None => Command::Wrong("missing -- <agent command> or --url URL".to_owned()),
    }
}

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("run-prompt: {message}");
    std::process::exit(1)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (allow, text, command) = match parse(&args) {
        Command::Run { allow, prompt, agent } => (allow, prompt, agent),
        Command::Help => {
            print!("{USAGE}");
            return;
        }
        Command::Wrong(problem) => {
            eprint!("run-prompt: {problem}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|e| fail(e));
    let files = FsRoots::new([&cwd]).unwrap_or_else(|e| fail(e));
    let command = match command {
        Agent::Command(command) => command,
        Agent::Url { url, websocket } => {
            let remote = agentproto_acp::remote::RemoteOptions::new().websocket(websocket);
            let printer = Printer { allow, files };
            let (agent, transport) =
                agentproto_acp::remote::connect::<V1, _>(&url, printer, AcpOptions::default(), remote)
                    .await
                    .unwrap_or_else(|e| fail(e));
            let outcome = run(&agent, cwd.display().to_string(), text).await;
            transport.close().await;
            if let Err(e) = outcome {
                fail(e);
            }
            return;
        }
    };
    let (program, rest) = command.split_first().expect("parse requires an agent command");
    let mut agent_command = tokio::process::Command::new(program);
    agent_command.args(rest);
    let (agent, process) =
        spawn_agent(agent_command, Printer { allow, files }, AcpOptions::default()).unwrap_or_else(|e| fail(e));
    let outcome = run(&agent, cwd.display().to_string(), text).await;
    // On every way out the agent goes, with whatever it started
    // (`std::process::exit` would skip the `AgentProcess`'s drop).
    process.close().await.ok();
    if let Err(e) = outcome {
        fail(e);
    }
}

/// Initializes, opens a session and runs one prompt; Ctrl-C cancels it.
async fn run(agent: &AgentConnection<V1>, cwd: String, text: String) -> Result<(), AcpError> {
    let mut init = InitializeRequest::new(PROTOCOL_VERSION);
    init.client_capabilities.fs.read_text_file = true;
    init.client_capabilities.fs.write_text_file = true;
    init.client_info = Implementation::new("run-prompt", env!("CARGO_PKG_VERSION")).into();
    agent.initialize(init).await?;
    let session = agent.open_session(cwd).await?;
    let turn = session.prompt(text);
    tokio::pin!(turn);
    let response = tokio::select! {
        response = &mut turn => response,
        _ = tokio::signal::ctrl_c() => {
            session.cancel().await?;
            turn.await
        }
    };
    println!();
    eprintln!("[stop] {}", response?.stop_reason.as_str());
    Ok(())
}
