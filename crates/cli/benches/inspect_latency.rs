//! What `agentproto inspect` adds to a message's trip: round trips to a trivial
//! agent, straight and through the inspector, interleaved in one run.
//!
//! `cargo bench -p agentproto-cli --bench inspect_latency [-- ROUNDS]`
//!
//! The agent is this program started with `--reflect`: it answers each request
//! line at once with a fixed result, without parsing. A round trip through the
//! inspector crosses it twice (request and answer), so the added latency per
//! message is half the difference of the round-trip medians. The inspector runs
//! in its default mode (forward first, analyse on its own thread) with findings
//! going to stderr; the messages are valid, so there are none. Output: one JSON
//! line. Timing lives here, never in tests.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

const PARAMS: &str =
    r#"{"sessionId":"sess-001","note":"a payload of about the size of a streamed chunk, to be validated on its way"}"#;

fn reflect() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.unwrap();
        let id = line.split("\"id\":").nth(1).and_then(|rest| rest.split([',', '}']).next()).unwrap_or("null");
        let result = if n == 0 { r#"{"protocolVersion":1,"agentCapabilities":{}}"# } else { "{}" };
        writeln!(stdout, r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#).unwrap();
        stdout.flush().unwrap();
    }
}

struct Peer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Peer {
    fn start(command: &mut Command) -> Peer {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut peer = Peer { child, input, output, next_id: 0 };
        peer.round_trip("initialize", r#"{"protocolVersion":1,"clientCapabilities":{}}"#);
        peer
    }

    fn round_trip(&mut self, method: &str, params: &str) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let started = Instant::now();
        writeln!(self.input, r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#).unwrap();
        self.input.flush().unwrap();
        let mut answer = String::new();
        self.output.read_line(&mut answer).unwrap();
        assert!(answer.contains(&format!("\"id\":{id},")), "unexpected answer {answer:?}");
        started.elapsed().as_nanos() as u64
    }
}

fn median(samples: &mut [u64]) -> u64 {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--reflect") {
        return reflect();
    }
    let rounds: usize = args.iter().skip(1).find_map(|a| a.parse().ok()).unwrap_or(5000);
    let me = std::env::current_exe().unwrap();
    let mut direct = Peer::start(Command::new(&me).arg("--reflect"));
    let mut inspected =
        Peer::start(Command::new(env!("CARGO_BIN_EXE_agentproto")).arg("inspect").arg("--").arg(&me).arg("--reflect"));
    let (mut straight, mut through) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for _ in 0..rounds / 10 {
        direct.round_trip("_ping", PARAMS);
        inspected.round_trip("_ping", PARAMS);
    }
    for _ in 0..rounds {
        straight.push(direct.round_trip("_ping", PARAMS));
        through.push(inspected.round_trip("_ping", PARAMS));
    }
    let (straight, through) = (median(&mut straight), median(&mut through));
    let added_per_message_ns = through.saturating_sub(straight) / 2;
    println!(
        r#"{{"bench":"inspect_latency","rounds":{rounds},"round_trip_direct_median_ns":{straight},"round_trip_inspected_median_ns":{through},"added_per_message_median_ns":{added_per_message_ns}}}"#
    );
    for peer in [&mut direct, &mut inspected] {
        let _ = peer.child.kill();
        let _ = peer.child.wait();
    }
}
