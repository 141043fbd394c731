//! `agentproto bridge --listen HOST:PORT -- <agent command…>`: any stdio ACP agent
//! served over the network, at `http://HOST:PORT/acp`, over Streamable HTTP and
//! WebSocket (`agentproto_acp::remote`).
//!
//! Every ACP connection gets its own agent process, in a process group of its own
//! (`agentproto-process`): each message received is one line of its stdin, each line
//! it prints one message sent. When the connection ends (DELETE, the socket closed,
//! idle reaping) the agent's stdin is closed, it gets a grace to exit, then its group
//! is killed; when the agent exits by itself the connection ends. With `--trace`,
//! every message that crosses is recorded as `inspect --trace` records it, one trace
//! per connection.

use std::ffi::OsString;
use std::fs::File;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::remote::framing::{LineSink, MessageFeed};
use agentproto_acp::remote::{Attach, BearerAuth, RemoteServer, ServerLimits};
use agentproto_inspect::trace::{Origin, Record};
use agentproto_inspect::Direction;
use agentproto_process::Group;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::signals;

/// How long an agent has to exit once its stdin is closed, before its group is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// Options of `agentproto bridge`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where to listen: the agent is served at http://HOST:PORT/acp.
    #[arg(long, value_name = "HOST:PORT")]
    listen: String,
    /// Record every message that crosses, as `inspect --trace` does: one trace per ACP
    /// connection, FILE.1, FILE.2, … in the order connections open (see `agentproto replay`).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Admit only requests carrying `Authorization: Bearer TOKEN` (default: read from
    /// the AGENTPROTO_BRIDGE_TOKEN environment variable when set).
    #[arg(long, value_name = "TOKEN", env = "AGENTPROTO_BRIDGE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// ACP connections (agent processes) at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_connections: usize,
    /// Seconds after which a Streamable HTTP connection with no request and no stream open is ended.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    idle_timeout: u64,
    /// The agent command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT COMMAND")]
    command: Vec<OsString>,
}

pub(crate) fn main(args: Args) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("agentproto bridge: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(run(args));
    agentproto_process::end_all();
    code
}

async fn run(args: Args) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(&args.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("agentproto bridge: cannot listen on {}: {e}", args.listen);
            return ExitCode::from(1);
        }
    };
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    if let Err(e) = signals::watch(move |_| stop.cancel()) {
        eprintln!("agentproto bridge: {e}");
        return ExitCode::from(1);
    }
    if let Ok(local) = listener.local_addr() {
        eprintln!("agentproto bridge: serving at http://{local}/acp");
    }
    let limits = ServerLimits::default()
        .max_connections(args.max_connections)
        .idle_timeout(Duration::from_secs(args.idle_timeout));
    let bridge = Arc::new(Bridge { command: args.command, trace: args.trace, count: AtomicU64::new(0) });
    let attach: Attach = Arc::new(move |input, output| Box::pin(bridge.clone().connection(input, output)));
    let server = RemoteServer::new(attach, limits);
    let served = match &args.token {
        Some(token) => server.serve_with(listener, BearerAuth::new(token.clone()), shutdown).await,
        None => server.serve(listener, shutdown).await,
    };
    // Every connection was told to end: wait for the agents to go (each within its grace).
    let deadline = tokio::time::Instant::now() + EXIT_GRACE * 2;
    while server.connection_count() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agentproto bridge: {e}");
            ExitCode::from(1)
        }
    }
}

struct Bridge {
    command: Vec<OsString>,
    trace: Option<PathBuf>,
    count: AtomicU64,
}

/// A connection's trace file, shared by its two directions.
type TraceFile = Option<Arc<Mutex<File>>>;

fn record(trace: &TraceFile, direction: Direction, line: &[u8]) {
    if let Some(file) = trace {
        let mut file = file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let _ = Record::now(direction, Origin::Peer, line).write_to(&mut *file);
    }
}

/// `line` without its line end.
fn trimmed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl Bridge {
    /// One ACP connection: its agent process, until either ends.
    async fn connection(self: Arc<Self>, input: MessageFeed, output: LineSink) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        let trace: TraceFile = match &self.trace {
            Some(path) => {
                let mut name = path.clone().into_os_string();
                name.push(format!(".{n}"));
                match File::create(PathBuf::from(name)) {
                    Ok(file) => Some(Arc::new(Mutex::new(file))),
                    Err(e) => {
                        eprintln!("agentproto bridge: cannot write the trace: {e}");
                        return;
                    }
                }
            }
            None => None,
        };
        let Some((program, rest)) = self.command.split_first() else { return };
        let mut command = tokio::process::Command::new(program);
        command.args(rest).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).kill_on_drop(true);
        agentproto_process::isolate(command.as_std_mut());
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                eprintln!("agentproto bridge: cannot start the agent: {e}");
                return;
            }
        };
        let mut group = child.id().map(Group::new);
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else { return };
        let trace_in = trace.clone();
        let to_agent = async move {
            let mut input = BufReader::new(input);
            let mut line = Vec::new();
            while input.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
                record(&trace_in, Direction::ToAgent, trimmed(&line));
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
                line.clear();
            }
            // Dropping stdin closes the agent's input: it should exit.
        };
        let to_client = async move {
            let mut stdout = BufReader::new(stdout);
            let mut output = output;
            let mut line = Vec::new();
            while stdout.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
                let message = trimmed(&line);
                if !message.is_empty() {
                    record(&trace, Direction::ToClient, message);
                    let mut framed = message.to_vec();
                    framed.push(b'\n');
                    if output.write_all(&framed).await.is_err() {
                        break;
                    }
                }
                line.clear();
            }
        };
        tokio::pin!(to_agent);
        tokio::pin!(to_client);
        tokio::select! {
            () = &mut to_agent => {
                // The connection ended: the agent gets its grace to answer and exit.
                let _ = tokio::time::timeout(EXIT_GRACE, &mut to_client).await;
                let _ = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
            }
            () = &mut to_client => {}
        }
        if let Some(group) = group.as_mut() {
            group.end();
        }
        let _ = child.kill().await;
    }
}
