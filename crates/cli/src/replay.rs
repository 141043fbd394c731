//! `agentproto replay TRACE`: re-validates a recorded trace.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::process::ExitCode;

use agentproto_inspect::engine::DEFAULT_MAX_MESSAGE_BYTES;
use agentproto_inspect::{trace, Engine, Severity};

use crate::inspect::Level;

/// Options of `agentproto replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trace: JSON Lines as written by `agentproto inspect --trace`.
    trace: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Report only findings of this severity or worse.
    #[arg(long, value_enum, default_value_t = Level::Info)]
    min_severity: Level,
    /// The size limit to check messages against.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Exit status: 0 without error findings, 1 with some, 2 when the trace cannot
/// be read. A last line cut short (a proxy killed mid-write) is skipped with a
/// note on stderr.
pub(crate) fn main(args: Args) -> ExitCode {
    let trace = match File::open(&args.trace).map_err(|e| e.to_string()).and_then(|f| trace::read(BufReader::new(f))) {
        Ok(trace) => trace,
        Err(error) => {
            eprintln!("agentproto replay: {}: {error}", args.trace.display());
            return ExitCode::from(2);
        }
    };
    if let Some(torn) = &trace.torn {
        eprintln!("agentproto replay: note: {}: {torn}; the line was skipped", args.trace.display());
    }
    let records = trace.records;
    let findings = Engine::acp().max_message_bytes(args.max_message_bytes).replay(&records);
    let mut counts = [0usize; 3];
    for finding in &findings {
        counts[finding.severity() as usize] += 1;
        if !args.min_severity.admits(finding.severity()) {
            continue;
        }
        match args.format {
            Format::Text => println!("{}", finding.to_text(false)),
            Format::Json => println!("{}", finding.to_json()),
        }
    }
    if args.format == Format::Text {
        let [info, warnings, errors] = counts;
        println!("{} messages, {errors} errors, {warnings} warnings, {info} info", records.len());
    }
    if counts[Severity::Error as usize] > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
