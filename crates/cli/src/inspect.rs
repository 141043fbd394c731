//! `agentproto inspect -- <agent command…>`: the live validating proxy.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use agentproto_inspect::engine::DEFAULT_MAX_MESSAGE_BYTES;
use agentproto_inspect::proxy::{self, ProxyOptions, Stop};
use agentproto_inspect::{rules, Finding, Severity};

use crate::signals;

/// Options of `agentproto inspect`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Answer invalid messages (bad JSON, bad envelope, params or results that do
    /// not match the schema) instead of forwarding them.
    #[arg(long)]
    strict: bool,
    /// Print findings as JSON Lines (one object per finding) instead of text.
    #[arg(long)]
    json: bool,
    /// Record every message that crosses, with a timestamp, as JSON Lines (see `agentproto replay`).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Report only findings of this severity or worse.
    #[arg(long, value_enum, default_value_t = Level::Info)]
    min_severity: Level,
    /// Messages larger than this are passed through unread (dropped with --strict).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    /// Print the table of finding codes (Markdown) and exit.
    #[arg(long, exclusive = true)]
    rules: bool,
    /// The agent command and its arguments, after `--`.
    #[arg(last = true, required_unless_present = "rules", value_name = "AGENT COMMAND")]
    command: Vec<OsString>,
}

/// A severity threshold on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Level {
    Info,
    Warning,
    Error,
}

impl Level {
    pub(crate) fn admits(self, severity: Severity) -> bool {
        let floor = match self {
            Level::Info => Severity::Info,
            Level::Warning => Severity::Warning,
            Level::Error => Severity::Error,
        };
        severity >= floor
    }
}

/// Renders findings on stderr: text (coloured on a terminal unless `NO_COLOR`
/// is set) or JSON Lines.
pub(crate) fn printer(json: bool, min: Level) -> impl FnMut(&Finding) + Send + 'static {
    let colour = !json && std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    move |finding: &Finding| {
        if !min.admits(finding.severity()) {
            return;
        }
        let line = if json { finding.to_json() } else { format!("agentproto: {}", finding.to_text(colour)) };
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "{line}");
    }
}

pub(crate) fn main(args: Args) -> ExitCode {
    if args.rules {
        print!("{}", rules::markdown_table());
        return ExitCode::SUCCESS;
    }
    // SIGINT, SIGTERM and SIGHUP are passed on to the agent's process group;
    // the session then ends as when the agent exits (findings, trace).
    let stop = Stop::default();
    let stopped_by = Arc::new(AtomicU8::new(0));
    let watched = {
        let (stop, stopped_by) = (stop.clone(), stopped_by.clone());
        signals::watch(move |signal| {
            let _ = stopped_by.compare_exchange(0, signals::exit_status(signal), Ordering::SeqCst, Ordering::SeqCst);
            stop.request(signal);
        })
    };
    if let Err(error) = watched {
        eprintln!(
            "agentproto inspect: cannot watch for signals ({error}); a signal ends the agent only when it reaches it"
        );
    }
    let options = ProxyOptions {
        command: args.command,
        strict: args.strict,
        trace: args.trace,
        max_message_bytes: args.max_message_bytes,
        stop,
    };
    let on_finding = printer(args.json, args.min_severity);
    match proxy::run(options, std::io::stdin(), std::io::stdout(), on_finding) {
        // Transparent to the editor: the agent's exit status is ours, unless a
        // signal to this process ended the session.
        Ok(outcome) => match (stopped_by.load(Ordering::SeqCst), outcome.status.code()) {
            (0, Some(code)) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            (0, None) => ExitCode::FAILURE,
            (signalled, _) => ExitCode::from(signalled),
        },
        Err(error) => {
            eprintln!("agentproto inspect: {error}");
            ExitCode::from(2)
        }
    }
}
