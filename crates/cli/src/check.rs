//! `agentproto check agent|client -- <command…>`: conformance runs.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use agentproto_check::{AgentCheck, ClientCheck, PermissionPolicy, Progress, Report, StderrMode};
use clap::Subcommand;

/// Options of `agentproto check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    target: Target,
}

#[derive(Debug, Subcommand)]
enum Target {
    /// Drive an agent through the conformance script, playing a scripted client.
    ///
    /// The agent is started several times (one process per part of the script),
    /// with piped stdin/stdout. Exit status: 0 when no MUST requirement failed,
    /// 1 otherwise.
    Agent(AgentArgs),
    /// Drive a client through the conformance script, playing a scripted agent.
    ///
    /// By default the client speaks ACP on its own stdin/stdout. If its command
    /// line contains `{agent}`, that placeholder is replaced by a command that
    /// relays to the checker, so a client that starts its agent itself can be
    /// checked (e.g. `-- my-editor --agent {agent}`): a whole `{agent}` argument
    /// becomes one word, this program's path, which relays when the client
    /// starts it with no arguments (the address travels in the environment);
    /// `--agent={agent}` gets the whole relay command, quoted. The run ends when the client
    /// closes the connection or stays silent for the timeout. Exit status: 0 when
    /// no MUST requirement failed, 1 otherwise.
    Client(ClientArgs),
    /// Print the requirement tables (id, level, statement, source).
    Requirements {
        /// As JSON.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// As Markdown (the text of crates/check/REQUIREMENTS.md).
        #[arg(long)]
        markdown: bool,
    },
    /// Relay stdin/stdout to a running `check client` (started in place of `{agent}`).
    #[command(hide = true)]
    Relay {
        /// The checker's loopback address.
        address: String,
        /// The one-time token of the run.
        token: String,
    },
}

#[derive(Debug, clap::Args)]
struct Common {
    /// Print the report as JSON on stdout (for CI).
    #[arg(long)]
    json: bool,
    /// Seconds any one answer may take.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    timeout: f64,
    /// Seconds the peer may take to exit once the check closes its input.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    exit_grace: f64,
    /// Report only requirements whose id starts with PREFIX (repeatable).
    #[arg(long, value_name = "PREFIX")]
    only: Vec<String>,
    /// Pass the peer's stderr through instead of keeping its last lines for the report.
    #[arg(long)]
    show_stderr: bool,
}

#[derive(Debug, clap::Args)]
struct AgentArgs {
    #[command(flatten)]
    common: Common,
    /// Text of ordinary prompts.
    #[arg(long, value_name = "TEXT", default_value = agentproto_check::DEFAULT_PROMPT)]
    prompt: String,
    /// Text of prompts that get cancelled while they run: it should keep the agent busy.
    #[arg(long, value_name = "TEXT", default_value = agentproto_check::DEFAULT_CANCEL_PROMPT, hide_default_value = true)]
    cancel_prompt: String,
    /// Seconds to wait for answers a conformant agent sends at once (to a bad
    /// line, after `$/cancel_request`).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    reply_grace: f64,
    /// Size in bytes of the large request.
    #[arg(long, value_name = "BYTES", default_value_t = 10 * 1024 * 1024)]
    large_message_size: usize,
    /// Answer permission requests by rejecting (default: allow).
    #[arg(long)]
    reject: bool,
    /// Authenticate with this method id after initialize.
    #[arg(long, value_name = "ID")]
    auth_method: Option<String>,
    /// Advertise fs.readTextFile and fs.writeTextFile and serve them inside the
    /// session's working directory (a scratch directory).
    #[arg(long)]
    client_fs: bool,
    /// The agent's command line.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Debug, clap::Args)]
struct ClientArgs {
    #[command(flatten)]
    common: Common,
    /// The client's command line; `{agent}` marks where it takes its agent command.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Writes to stdout; a closed stdout (e.g. `| head`) is not an error worth a panic.
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn print_requirements(json: bool, markdown: bool) {
    use agentproto_check::requirement::{markdown as as_markdown, AGENT, CLIENT};
    if markdown {
        emit(&as_markdown());
        return;
    }
    let tables = [("agent", AGENT), ("client", CLIENT)];
    if json {
        let value: serde_json::Value = tables
            .iter()
            .map(|(subject, table)| {
                let rows = table.iter().map(|r| {
                    serde_json::json!({"id": r.id, "level": r.level.as_str(), "statement": r.statement, "spec": r.spec})
                });
                (subject.to_string(), serde_json::Value::Array(rows.collect()))
            })
            .collect::<serde_json::Map<_, _>>()
            .into();
        emit(&format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default()));
        return;
    }
    let mut text = String::new();
    for (subject, table) in tables {
        text.push_str(&format!("check {subject}:\n"));
        let width = table.iter().map(|r| r.id.len()).max().unwrap_or(0);
        for r in table {
            text.push_str(&format!("  {:width$}  {:6}  {}\n", r.id, r.level.as_str(), r.statement));
        }
        text.push('\n');
    }
    emit(&text);
}

fn seconds(value: f64) -> Duration {
    Duration::try_from_secs_f64(value.max(0.0)).unwrap_or(Duration::MAX)
}

fn stderr_mode(common: &Common) -> StderrMode {
    if common.show_stderr {
        StderrMode::Inherit
    } else {
        StderrMode::Capture
    }
}

/// One line on a terminal's stderr that shows the current step.
struct Line {
    count: Mutex<usize>,
}

impl Progress for Line {
    fn step(&self, text: &str) {
        let mut count = self.count.lock().unwrap_or_else(|e| e.into_inner());
        *count += 1;
        let mut err = std::io::stderr().lock();
        let text: String = text.chars().take(100).collect();
        let _ = write!(err, "\r\x1b[2K[{count:>3}] {text}");
        let _ = err.flush();
    }
}

impl Line {
    fn clear(&self) {
        let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
    }
}

pub(crate) fn main(args: Args) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("agentproto: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let (report, json) = match args.target {
        Target::Requirements { json, markdown } => {
            print_requirements(json, markdown);
            return ExitCode::SUCCESS;
        }
        Target::Relay { address, token } => return relay(&address, &token),
        Target::Agent(a) => {
            end_children_on_signals();
            let mut check = AgentCheck::new(a.command);
            check.timeout = seconds(a.common.timeout);
            check.exit_grace = seconds(a.common.exit_grace);
            check.reply_grace = seconds(a.reply_grace);
            check.only = a.common.only.clone();
            check.stderr = stderr_mode(&a.common);
            check.prompt = a.prompt;
            check.cancel_prompt = a.cancel_prompt;
            check.large_message_size = a.large_message_size;
            check.permission = if a.reject { PermissionPolicy::Reject } else { PermissionPolicy::Allow };
            check.auth_method = a.auth_method;
            check.client_fs = a.client_fs;
            (run(&runtime, |p| Box::pin(async move { check.run(p).await })), a.common.json)
        }
        Target::Client(c) => {
            end_children_on_signals();
            let mut check = ClientCheck::new(c.command);
            check.timeout = seconds(c.common.timeout);
            check.exit_grace = seconds(c.common.exit_grace);
            check.only = c.common.only.clone();
            check.stderr = stderr_mode(&c.common);
            // `agentproto` with no arguments and AGENTPROTO_CHECK_RELAY set is the relay
            // too (`main`), so `{agent}` can be this one path.
            check.relay = match std::env::current_exe() {
                Ok(exe) => vec![exe.display().to_string(), "check".to_owned(), "relay".to_owned()],
                Err(_) => vec!["agentproto".to_owned(), "check".to_owned(), "relay".to_owned()],
            };
            (run(&runtime, |p| Box::pin(async move { check.run(p).await })), c.common.json)
        }
    };
    if json {
        emit(&format!("{}\n", serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()));
    } else {
        let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        emit(&report.render_text(colour));
    }
    if report.conformant() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The peers run in process groups of their own, which a terminal's Ctrl-C
/// does not reach: on SIGINT, SIGTERM or SIGHUP every one of them is ended and
/// the check stops (its report is not printed).
fn end_children_on_signals() {
    let watched = crate::signals::watch(|signal| {
        agentproto_process::end_all();
        eprintln!("\nagentproto check: stopped by a signal; the programs it started were ended");
        std::process::exit(i32::from(crate::signals::exit_status(signal)));
    });
    if let Err(error) = watched {
        eprintln!("agentproto check: cannot watch for signals ({error})");
    }
}

/// Runs the relay to a `check client` run (`agentproto check relay ADDRESS TOKEN`,
/// or `agentproto` alone with `AGENTPROTO_CHECK_RELAY` set).
pub(crate) fn relay(address: &str, token: &str) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("agentproto: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(agentproto_check::relay::run(address, token));
    if let Err(e) = &result {
        eprintln!("agentproto check relay: {e}");
    }
    // The relay's stdin reader may still be blocked; leave without waiting for it.
    std::process::exit(i32::from(result.is_err()));
}

type Run<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Report> + 'a>>;

fn run(runtime: &tokio::runtime::Runtime, check: impl for<'a> FnOnce(&'a dyn Progress) -> Run<'a>) -> Report {
    if std::io::stderr().is_terminal() {
        let line = Line { count: Mutex::new(0) };
        let report = runtime.block_on(check(&line));
        line.clear();
        report
    } else {
        runtime.block_on(check(&agentproto_check::NoProgress))
    }
}
