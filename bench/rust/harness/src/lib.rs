//! The part every Rust adapter shares: seed 000's command line, its messages (byte
//! for byte), the timed loops of each mode and the one-line JSON report.
//!
//! An adapter only says how its implementation decodes a received line and how it
//! encodes an answer ([`Adapter`]); the loops, the clock and the output are the same
//! code for all of them, so the numbers differ only by what the adapters do.
//!
//! ```text
//! <adapter> --mode cold-start|roundtrip|throughput|codec|tokens|messages|reject
//!           [--count N] [--tokens T] [--warmup W]
//! ```
//!
//! `--warmup W` runs W untimed iterations of the same loop first (the in-loop view;
//! the seed ran none). `messages` prints the input lines, so the runner can check that
//! every adapter decodes the same bytes; `reject` decodes [`INVALID_PROMPT`] and says
//! whether it was refused.

use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

/// Seed 000's four compact messages, in the TypeScript program's key order.
pub const MESSAGES: [&str; 4] = [
    r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"benchmark","version":"1.0.0"}},"id":1}"#,
    r#"{"jsonrpc":"2.0","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]},"id":1}"#,
    r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-001","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello, this is a test message."}}}}"#,
    r#"{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"sess-001","prompt":[{"type":"text","text":"What is 2+2?"}]},"id":2}"#,
];

/// A `session/prompt` whose text block's `text` is a number: valid JSON and a valid
/// JSON-RPC request, invalid ACP. `--mode reject` says whether an adapter refuses it
/// (every validating adapter must; a raw parse cannot).
pub const INVALID_PROMPT: &str = r#"{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"sess-001","prompt":[{"type":"text","text":5}]},"id":2}"#;

/// What each of [`MESSAGES`] is, which also says who receives it.
pub const KINDS: [Kind; 4] = [Kind::Initialize, Kind::SessionNew, Kind::SessionUpdate, Kind::SessionPrompt];

/// The method of a seed message. `session/update` is received by a client, the
/// others by an agent; a validating adapter decodes each on its receiving side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `initialize` request (client to agent).
    Initialize,
    /// `session/new` request (client to agent).
    SessionNew,
    /// `session/update` notification (agent to client).
    SessionUpdate,
    /// `session/prompt` request (client to agent).
    SessionPrompt,
}

/// The token message: message 2's shape with `text` = `"word "` repeated `tokens` times.
pub fn token_message(tokens: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"sess-001","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{}"}}}}}}}}"#,
        "word ".repeat(tokens)
    )
}

/// One implementation under test.
pub trait Adapter {
    /// Decodes one received line the way the implementation's receive path does and
    /// says whether it was accepted as a message of `kind`.
    fn decode(&mut self, kind: Kind, line: &[u8]) -> bool;

    /// Encodes the answer `{"sessionId": session_id}` to request `id` the way the
    /// implementation sends a result, leaving the line (no newline) in `out`.
    /// `out` comes in empty; an implementation that builds its own buffer per call
    /// may replace it.
    fn encode_session_result(&mut self, id: i64, session_id: &str, out: &mut Vec<u8>);

    /// Encodes the answer to `initialize` (protocol version 1) to request `id`.
    fn encode_initialize_result(&mut self, id: i64, out: &mut Vec<u8>);
}

/// Parsed command line.
#[derive(Debug, Clone)]
pub struct Args {
    /// The mode.
    pub mode: String,
    /// `--count`.
    pub count: usize,
    /// `--tokens`.
    pub tokens: usize,
    /// `--warmup`.
    pub warmup: usize,
}

impl Args {
    /// Reads the process arguments (seed defaults: roundtrip, 100, 100).
    pub fn from_env() -> Result<Args, String> {
        let mut args = Args { mode: "roundtrip".to_owned(), count: 100, tokens: 100, warmup: 0 };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let number = || value.parse::<usize>().map_err(|e| format!("{flag} {value}: {e}"));
            match flag.as_str() {
                "--mode" => args.mode = value.clone(),
                "--count" => args.count = number()?,
                "--tokens" => args.tokens = number()?,
                "--warmup" => args.warmup = number()?,
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        Ok(args)
    }
}

/// Runs the mode named on the command line and prints its line; the exit code is 1
/// when a decode was refused, 2 on a usage error.
pub fn main<A: Adapter>(mut adapter: A) -> std::process::ExitCode {
    let args = match Args::from_env() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("usage error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match run(&mut adapter, &args) {
        Ok(report) => {
            let ok = report.failed == 0;
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", report.line);
            let _ = stdout.flush();
            std::process::ExitCode::from(if ok { 0 } else { 1 })
        }
        Err(e) => {
            eprintln!("usage error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// A finished run: the output line and how many decodes were refused.
pub struct Report {
    /// The JSON line.
    pub line: String,
    /// Refused decodes (0 for a good run).
    pub failed: usize,
}

/// Runs one mode. Cold start writes the encoded `initialize` answer to stdout first,
/// which is the "first response" the runner waits for.
pub fn run<A: Adapter>(adapter: &mut A, args: &Args) -> Result<Report, String> {
    let mut out = Vec::with_capacity(256);
    let mut failed = 0usize;
    let mode = args.mode.as_str();
    let status = |failed: usize| if failed == 0 { "ok" } else { "error" };
    match mode {
        "messages" => {
            let mut text = String::new();
            for m in MESSAGES {
                text.push_str(m);
                text.push('\n');
            }
            text.push_str(&token_message(args.tokens));
            Ok(Report { line: text, failed: 0 })
        }
        "reject" => {
            let refused = !adapter.decode(Kind::SessionPrompt, INVALID_PROMPT.as_bytes());
            Ok(Report { line: format!(r#"{{"status":"ok","mode":"reject","refused":{refused}}}"#), failed: 0 })
        }
        "cold-start" => {
            let start = Instant::now();
            failed += usize::from(!adapter.decode(KINDS[0], MESSAGES[0].as_bytes()));
            adapter.encode_initialize_result(1, &mut out);
            let ns = start.elapsed().as_nanos();
            let mut stdout = std::io::stdout().lock();
            out.push(b'\n');
            stdout.write_all(&out).and_then(|()| stdout.flush()).map_err(|e| e.to_string())?;
            Ok(Report { line: simple(status(failed), mode, ns, failed), failed })
        }
        "roundtrip" => {
            let start = Instant::now();
            failed += usize::from(!adapter.decode(KINDS[1], MESSAGES[1].as_bytes()));
            adapter.encode_session_result(1, "sess-benchmark", &mut out);
            black_box(&out);
            let ns = start.elapsed().as_nanos();
            Ok(Report { line: simple(status(failed), mode, ns, failed), failed })
        }
        "throughput" => {
            let lines = MESSAGES.map(str::as_bytes);
            let pass = |adapter: &mut A, n: usize| {
                let mut bad = 0usize;
                for i in 0..n {
                    let k = i % 4;
                    bad += usize::from(!adapter.decode(KINDS[k], black_box(lines[k])));
                }
                bad
            };
            pass(adapter, args.warmup);
            let start = Instant::now();
            failed += pass(adapter, args.count);
            let ns = start.elapsed().as_nanos();
            let n = args.count;
            Ok(Report {
                line: format!(
                    r#"{{"status":"{}","mode":"throughput","count":{n},"elapsed_ms":{},"msgs_per_sec":{},"elapsed_ns":{ns},"warmup":{},"failed":{failed}}}"#,
                    status(failed),
                    ms(ns),
                    rate(n, ns),
                    args.warmup
                ),
                failed,
            })
        }
        "codec" => {
            let lines = MESSAGES.map(str::as_bytes);
            let pass = |adapter: &mut A, out: &mut Vec<u8>, n: usize| {
                let mut bad = 0usize;
                for i in 0..n {
                    let k = i % 4;
                    bad += usize::from(!adapter.decode(KINDS[k], black_box(lines[k])));
                    out.clear();
                    adapter.encode_session_result(i as i64, "sess-bench", out);
                    black_box(&*out);
                }
                bad
            };
            pass(adapter, &mut out, args.warmup);
            let start = Instant::now();
            failed += pass(adapter, &mut out, args.count);
            let ns = start.elapsed().as_nanos();
            let ops = 2 * args.count;
            Ok(Report {
                line: format!(
                    r#"{{"status":"{}","mode":"codec","ops":{ops},"elapsed_ms":{},"ops_per_sec":{},"elapsed_ns":{ns},"warmup":{},"failed":{failed}}}"#,
                    status(failed),
                    ms(ns),
                    rate(ops, ns),
                    args.warmup
                ),
                failed,
            })
        }
        "tokens" => {
            let message = token_message(args.tokens);
            let line = message.as_bytes();
            let pass = |adapter: &mut A, n: usize| {
                let mut bad = 0usize;
                let mut total = 0usize;
                for _ in 0..n {
                    bad += usize::from(!adapter.decode(Kind::SessionUpdate, black_box(line)));
                    total += args.tokens;
                }
                black_box(total);
                bad
            };
            pass(adapter, args.warmup);
            let start = Instant::now();
            failed += pass(adapter, args.count);
            let ns = start.elapsed().as_nanos();
            let (n, t) = (args.count, args.tokens);
            Ok(Report {
                line: format!(
                    r#"{{"status":"{}","mode":"tokens","messages":{n},"tokens_per_msg":{t},"total_tokens":{},"elapsed_ms":{},"tokens_per_sec":{},"msgs_per_sec":{},"elapsed_ns":{ns},"warmup":{},"failed":{failed}}}"#,
                    status(failed),
                    n * t,
                    ms(ns),
                    rate(n * t, ns),
                    rate(n, ns),
                    args.warmup
                ),
                failed,
            })
        }
        other => Err(format!("unknown mode {other:?}")),
    }
}

fn simple(status: &str, mode: &str, ns: u128, failed: usize) -> String {
    format!(r#"{{"status":"{status}","mode":"{mode}","elapsed_ms":{},"elapsed_ns":{ns},"failed":{failed}}}"#, ms(ns))
}

/// Milliseconds rounded to an integer, as the seed printed them.
fn ms(ns: u128) -> u128 {
    (ns + 500_000) / 1_000_000
}

/// Items per second, rounded.
fn rate(items: usize, ns: u128) -> u128 {
    (items as u128 * 1_000_000_000 + ns / 2).checked_div(ns).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_sizes_match_the_seed() {
        let sizes: Vec<usize> = MESSAGES.iter().map(|m| m.len()).collect();
        assert_eq!(sizes, [216, 87, 192, 133]);
        assert_eq!(token_message(100).len(), 662);
    }
}

/// The end-to-end client's command line: `--count N --tokens T -- <agent command…>`.
#[derive(Debug, Clone)]
pub struct E2eArgs {
    /// Notifications the agent streams in the prompt turn.
    pub count: usize,
    /// Tokens (`"word "`) per notification.
    pub tokens: usize,
    /// The agent command and its arguments.
    pub agent: Vec<String>,
}

impl E2eArgs {
    /// Reads the process arguments (defaults: 10,000 notifications of 100 tokens).
    pub fn from_env() -> Result<E2eArgs, String> {
        let mut parsed = E2eArgs { count: 10_000, tokens: 100, agent: Vec::new() };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            if flag == "--" {
                parsed.agent = it.by_ref().collect();
                break;
            }
            let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let number = value.parse::<usize>().map_err(|e| format!("{flag} {value}: {e}"))?;
            match flag.as_str() {
                "--count" => parsed.count = number,
                "--tokens" => parsed.tokens = number,
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        if parsed.agent.is_empty() {
            return Err("no agent command after --".to_owned());
        }
        Ok(parsed)
    }

    /// The prompt text that tells the benchmark agent what to stream: `"<count> <tokens>"`.
    pub fn prompt(&self) -> String {
        format!("{} {}", self.count, self.tokens)
    }
}

/// The network end-to-end adapters' command line (bench/python/net_harness.py):
/// `agent --listen HOST:PORT` or `client --url URL [--ws] [--count N] [--tokens T]`.
#[derive(Debug, Clone)]
pub struct NetArgs {
    /// The agent role (else the client).
    pub agent: bool,
    /// Where the agent listens (default `127.0.0.1:0`).
    pub listen: String,
    /// The agent's URL, for the client.
    pub url: String,
    /// WebSocket instead of Streamable HTTP.
    pub websocket: bool,
    /// The turn's size (its `agent` command is unused).
    pub e2e: E2eArgs,
}

impl NetArgs {
    /// Reads the process arguments (defaults: 10,000 notifications of 100 tokens).
    pub fn from_env() -> Result<NetArgs, String> {
        let mut words = std::env::args().skip(1);
        let agent = match words.next().as_deref() {
            Some("agent") => true,
            Some("client") => false,
            _ => return Err("first argument: agent or client".to_owned()),
        };
        let e2e = E2eArgs { count: 10_000, tokens: 100, agent: Vec::new() };
        let mut args = NetArgs { agent, listen: "127.0.0.1:0".to_owned(), url: String::new(), websocket: false, e2e };
        while let Some(flag) = words.next() {
            if flag == "--ws" {
                args.websocket = true;
                continue;
            }
            let value = words.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let number = || value.parse::<usize>().map_err(|e| format!("{flag} {value}: {e}"));
            match flag.as_str() {
                "--listen" => args.listen = value.clone(),
                "--url" => args.url = value.clone(),
                "--count" => args.e2e.count = number()?,
                "--tokens" => args.e2e.tokens = number()?,
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        if !args.agent && args.url.is_empty() {
            return Err("client needs --url".to_owned());
        }
        Ok(args)
    }
}

/// Reads the benchmark agent's prompt text `"<count> <tokens>"`.
pub fn parse_e2e_prompt(text: &str) -> Option<(usize, usize)> {
    let mut words = text.split_whitespace();
    let count = words.next()?.parse().ok()?;
    let tokens = words.next()?.parse().ok()?;
    Some((count, tokens))
}

/// The end-to-end client's output line. `received` counts the notifications the
/// application was handed with the expected text; `ns` runs from sending
/// `session/prompt` to its answer with every notification handled.
/// Whether an SDK that can switch off the check of what it sends should keep it on: the
/// runner sets `AGENTPROTO_BENCH_OUTGOING=unchecked` for both processes of the pair that
/// measures what the check costs.
pub fn outgoing_checked() -> bool {
    std::env::var("AGENTPROTO_BENCH_OUTGOING").map_or(true, |v| v != "unchecked")
}

/// An e2e line with the `outgoing` field (`checked` or `unchecked`) the runner verifies.
pub fn with_outgoing(line: String, checked: bool) -> String {
    let what = if checked { "checked" } else { "unchecked" };
    format!("{},\"outgoing\":\"{what}\"}}", line.trim_end_matches('}'))
}

pub fn e2e_line(args: &E2eArgs, received: usize, ns: u128) -> String {
    let (n, t) = (args.count, args.tokens);
    let status = if received == n { "ok" } else { "error" };
    format!(
        r#"{{"status":"{status}","mode":"e2e","messages":{n},"tokens_per_msg":{t},"total_tokens":{},"elapsed_ms":{},"msgs_per_sec":{},"tokens_per_sec":{},"elapsed_ns":{ns},"received":{received}}}"#,
        n * t,
        ms(ns),
        rate(n, ns),
        rate(n * t, ns)
    )
}
