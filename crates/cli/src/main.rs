//! `agentproto`: tools for the agent protocols. Each verb lives in its own
//! module; `main` only parses the command line and dispatches.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bridge;
mod check;
mod inspect;
mod replay;
mod serve;
mod signals;

#[derive(Debug, Parser)]
#[command(name = "agentproto", version, about = "Tools for ACP and A2A agents and clients", propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve any stdio ACP agent over the network: Streamable HTTP and WebSocket at
    /// http://HOST:PORT/acp, one agent process per ACP connection.
    ///
    /// `agentproto bridge --listen 127.0.0.1:8000 -- <agent command…>`. Each process runs
    /// in a process group of its own and ends with its connection.
    Bridge(bridge::Args),
    /// Run a conformance check against an ACP agent or client.
    Check(check::Args),
    /// Sit between an editor and an agent: pass every byte through and report
    /// protocol findings on stderr as messages cross.
    ///
    /// The editor launches `agentproto inspect -- <agent command…>` in place of
    /// the agent. Exit status: the agent's.
    Inspect(inspect::Args),
    /// Re-validate a recorded trace (`inspect --trace`) and print its findings.
    ///
    /// Exit status: 0 without error findings, 1 with some, 2 if the trace cannot be read.
    Replay(replay::Args),
    /// Serve the demo A2A agent (card, JSON-RPC at /, HTTP+JSON at /a2a/rest) on an
    /// SQLite file; it follows the a2a-tck messageId-prefix contract.
    Serve(serve::Args),
}

fn main() -> ExitCode {
    // The relay behind `check client … {agent}`, started by the client as this
    // one path with no arguments (see `agentproto_check::relay`).
    if std::env::args_os().len() == 1 {
        if let Some((address, token)) = agentproto_check::relay::from_env() {
            return check::relay(&address, &token);
        }
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Bridge(args) => bridge::main(args),
        Command::Check(args) => check::main(args),
        Command::Inspect(args) => inspect::main(args),
        Command::Replay(args) => replay::main(args),
        Command::Serve(args) => serve::main(args),
    }
}
