//! The seed-003 question asked of agentproto's codec: what does the buffer policy
//! cost, and what does reading from a stream cost, on the seed-000 messages?
//!
//! Encode (the typed params of each message, decoded once up front):
//! * `reused`: into one `Vec<u8>` that is cleared and reused (what the frame writer does);
//! * `fresh`: into a new `Vec<u8>` per call (one allocation per message, plus growth);
//! * `dyn-write`: through `encode_to_writer` with a `&mut dyn io::Write` per call, into
//!   the same reused `Vec` (serde_json writes token by token, so every piece goes
//!   through a virtual call: the "trait dispatch" seed 003 blamed);
//! * `bufwriter`: through `encode_to_writer` per call into a `BufWriter` (8 KiB) over
//!   `io::sink()` (how one would write straight to a pipe).
//!
//! Decode (the whole line, validating, through `receive::classify`):
//! * `slice`: from a byte slice already in memory;
//! * `bufread`: lines read with `BufRead::read_until` into a reused buffer, then decoded;
//! * `frames`: lines read by the async `FrameReader` (the connection's framing), then decoded.
//!
//! Decode stages: `classify` (the `slice` figure again: for these messages, `method`
//! before `params`, the envelope and the params in one pass), the two passes it falls
//! back to for anything else and that the connections take — `envelope`
//! (`Message::decode_with`, params kept raw) and `params` (the raw params decoded by
//! method, `Payload::decode`) — and for scale `value` (`serde_json::Value` of the whole
//! line, not validating) and `prescan` (the nesting bound the envelope checks before
//! parsing, `nesting_exceeds`).
//!
//! Every variant runs the same number of operations per message, the variants take
//! turns within each round, and the result is the median of the rounds.
//!
//! ```text
//! bench-agentproto-seed003 [--count N] [--rounds R]
//! ```

use std::hint::black_box;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::time::Instant;

use agentproto_acp::receive::{classify, AgentV1, ClientV1, Incoming, Role};
use agentproto_acp::v1::{
    AgentNotification, ClientRequest, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
};
use agentproto_codec::{encode_into, encode_to_writer};
use agentproto_jsonrpc::frame::{Frame, FrameReader};
use agentproto_jsonrpc::message::MAX_NESTING_DEPTH;
use agentproto_jsonrpc::{nesting_exceeds, Message};
use bench_harness::{token_message, Kind, KINDS, MESSAGES};
use serde_json::value::RawValue;

/// One input: a name, the line, and who receives it.
struct Input {
    name: &'static str,
    line: Vec<u8>,
    kind: Kind,
}

/// The typed params of one input, for the encode side.
enum Typed {
    Initialize(InitializeRequest),
    New(NewSessionRequest),
    Update(SessionNotification),
    Prompt(PromptRequest),
}

impl Typed {
    fn parse(input: &Input) -> Typed {
        fn typed<T: for<'de> serde::Deserialize<'de> + agentproto_codec::Wants>(input: &Input) -> T {
            let params = params_of(&input.line);
            match agentproto_codec::decode::<T>(params.get(), "$.params") {
                Ok(decoded) => decoded.value,
                Err(e) => panic!("{}: {e}", input.name),
            }
        }
        match input.kind {
            Kind::Initialize => Typed::Initialize(typed(input)),
            Kind::SessionNew => Typed::New(typed(input)),
            Kind::SessionUpdate => Typed::Update(typed(input)),
            Kind::SessionPrompt => Typed::Prompt(typed(input)),
        }
    }

    fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            Typed::Initialize(v) => encode_into(v, out),
            Typed::New(v) => encode_into(v, out),
            Typed::Update(v) => encode_into(v, out),
            Typed::Prompt(v) => encode_into(v, out),
        }
        .expect("encodes");
    }

    fn encode_to_writer<W: Write>(&self, out: W) {
        match self {
            Typed::Initialize(v) => encode_to_writer(v, out),
            Typed::New(v) => encode_to_writer(v, out),
            Typed::Update(v) => encode_to_writer(v, out),
            Typed::Prompt(v) => encode_to_writer(v, out),
        }
        .expect("encodes");
    }
}

fn params_of(line: &[u8]) -> Box<RawValue> {
    match Message::decode(line).expect("a seed message") {
        Message::Request { params, .. } | Message::Notification { params, .. } => params.expect("params"),
        Message::Response { .. } => panic!("not a seed message"),
    }
}

fn accepted(kind: Kind, line: &[u8]) -> bool {
    fn ok<R: Role>(incoming: Incoming<R>) -> bool {
        matches!(incoming, Incoming::Request { .. } | Incoming::Notification(_))
    }
    if kind == Kind::SessionUpdate {
        ok(classify::<ClientV1>(line, |_| None))
    } else {
        ok(classify::<AgentV1>(line, |_| None))
    }
}

const ENCODERS: [&str; 4] = ["reused", "fresh", "dyn-write", "bufwriter"];
const DECODERS: [&str; 3] = ["slice", "bufread", "frames"];
const STAGES: [&str; 5] = ["classify", "envelope", "params", "value", "prescan"];

/// Runs `n` times one stage of the decode of `input`; returns nanoseconds.
fn stage(name: &str, input: &Input, n: usize) -> u128 {
    let line = &input.line[..];
    let options =
        if input.kind == Kind::SessionUpdate { ClientV1::decode_options() } else { AgentV1::decode_options() };
    let message = Message::decode_with(line, &options).expect("a seed message");
    let (method, params) = match &message {
        Message::Request { method, params, .. } | Message::Notification { method, params } => {
            (method.as_str(), params.as_deref())
        }
        Message::Response { .. } => unreachable!(),
    };
    let start = Instant::now();
    match name {
        "classify" => {
            for _ in 0..n {
                black_box(accepted(input.kind, black_box(line)));
            }
        }
        "envelope" => {
            for _ in 0..n {
                black_box(Message::decode_with(black_box(line), &options).is_ok());
            }
        }
        "params" => {
            for _ in 0..n {
                let ok = match input.kind {
                    Kind::SessionUpdate => AgentNotification::decode(black_box(method), black_box(params)).is_ok(),
                    _ => ClientRequest::decode(black_box(method), black_box(params)).is_ok(),
                };
                black_box(ok);
            }
        }
        "value" => {
            for _ in 0..n {
                black_box(serde_json::from_slice::<serde_json::Value>(black_box(line)).is_ok());
            }
        }
        "prescan" => {
            for _ in 0..n {
                black_box(nesting_exceeds(black_box(line), MAX_NESTING_DEPTH));
            }
        }
        other => unreachable!("{other}"),
    }
    start.elapsed().as_nanos()
}

/// Runs `n` encodes of `typed` with one buffer policy; returns nanoseconds.
fn encode(variant: &str, typed: &Typed, n: usize) -> u128 {
    let start = Instant::now();
    match variant {
        "reused" => {
            let mut buf = Vec::new();
            for _ in 0..n {
                buf.clear();
                black_box(typed).encode_into(&mut buf);
                black_box(&buf);
            }
        }
        "fresh" => {
            for _ in 0..n {
                let mut buf = Vec::new();
                black_box(typed).encode_into(&mut buf);
                black_box(&buf);
            }
        }
        "dyn-write" => {
            let mut buf = Vec::new();
            for _ in 0..n {
                buf.clear();
                let out: &mut dyn Write = &mut buf;
                black_box(typed).encode_to_writer(black_box(out));
                black_box(&buf);
            }
        }
        "bufwriter" => {
            let mut out = BufWriter::with_capacity(8 * 1024, std::io::sink());
            for _ in 0..n {
                black_box(typed).encode_to_writer(&mut out);
            }
            out.flush().expect("sink");
        }
        other => unreachable!("{other}"),
    }
    start.elapsed().as_nanos()
}

/// Runs `n` validating decodes of `input`'s line from one kind of source; returns
/// nanoseconds and how many lines were accepted.
fn decode(variant: &str, input: &Input, stream: &[u8], n: usize, rt: &tokio::runtime::Runtime) -> (u128, usize) {
    let mut good = 0usize;
    let start = Instant::now();
    match variant {
        "slice" => {
            for _ in 0..n {
                good += usize::from(accepted(input.kind, black_box(&input.line)));
            }
        }
        "bufread" => {
            let mut reader = BufReader::new(stream);
            let mut line = Vec::with_capacity(1024);
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line).expect("memory") == 0 {
                    break;
                }
                let text = line.strip_suffix(b"\n").unwrap_or(&line);
                good += usize::from(accepted(input.kind, text));
            }
        }
        "frames" => {
            rt.block_on(async {
                let mut frames = FrameReader::new(stream);
                while let Some(frame) = frames.next_frame().await.expect("memory") {
                    if let Frame::Line(line) = frame {
                        good += usize::from(accepted(input.kind, line));
                    }
                }
            });
        }
        other => unreachable!("{other}"),
    }
    (start.elapsed().as_nanos(), good)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

fn main() {
    let mut count = 20_000usize;
    let mut rounds = 7usize;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().and_then(|v| v.parse::<usize>().ok());
        match (flag.as_str(), value) {
            ("--count", Some(v)) => count = v.max(1),
            ("--rounds", Some(v)) => rounds = v.max(1),
            _ => {
                eprintln!("usage: bench-agentproto-seed003 [--count N] [--rounds R]");
                std::process::exit(2);
            }
        }
    }
    let names = ["initialize", "session/new", "session/update", "session/prompt"];
    let mut inputs: Vec<Input> =
        (0..4).map(|i| Input { name: names[i], line: MESSAGES[i].as_bytes().to_vec(), kind: KINDS[i] }).collect();
    inputs.push(Input { name: "tokens-100", line: token_message(100).into_bytes(), kind: Kind::SessionUpdate });
    let typed: Vec<Typed> = inputs.iter().map(Typed::parse).collect();
    let streams: Vec<Vec<u8>> = inputs
        .iter()
        .map(|input| {
            let mut s = Vec::with_capacity((input.line.len() + 1) * count);
            for _ in 0..count {
                s.extend_from_slice(&input.line);
                s.push(b'\n');
            }
            s
        })
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");

    // samples[op][input][variant] = ns/op of each round
    let mut enc = vec![vec![Vec::new(); ENCODERS.len()]; inputs.len()];
    let mut dec = vec![vec![Vec::new(); DECODERS.len()]; inputs.len()];
    let mut stg = vec![vec![Vec::new(); STAGES.len()]; inputs.len()];
    let mut failed = 0usize;
    for round in 0..=rounds {
        for (i, input) in inputs.iter().enumerate() {
            for (v, variant) in ENCODERS.iter().enumerate() {
                let ns = encode(variant, &typed[i], count);
                if round > 0 {
                    enc[i][v].push(ns as f64 / count as f64);
                }
            }
            for (v, variant) in DECODERS.iter().enumerate() {
                let (ns, good) = decode(variant, input, &streams[i], count, &rt);
                failed += count - good;
                if round > 0 {
                    dec[i][v].push(ns as f64 / count as f64);
                }
            }
            for (v, name) in STAGES.iter().enumerate() {
                let ns = stage(name, input, count);
                if round > 0 {
                    stg[i][v].push(ns as f64 / count as f64);
                }
            }
        }
        eprint!("\rseed003: round {round}/{rounds}");
    }
    eprintln!();

    let mut rows = Vec::new();
    let mut ratio = |op: &str, names: &[&str], samples: &mut [Vec<Vec<f64>>]| {
        for (i, input) in inputs.iter().enumerate() {
            let base = median(&mut samples[i][0].clone());
            for (v, variant) in names.iter().enumerate() {
                let mut s = samples[i][v].clone();
                let med = median(&mut s);
                let min = s.iter().copied().fold(f64::INFINITY, f64::min);
                let max = s.iter().copied().fold(0.0, f64::max);
                rows.push(format!(
                    r#"{{"op":"{op}","message":"{}","bytes":{},"variant":"{variant}","ns_per_op":{med:.1},"min":{min:.1},"max":{max:.1},"baseline":"{}","ratio":{:.3}}}"#,
                    input.name,
                    input.line.len(),
                    names[0],
                    med / base
                ));
            }
        }
    };
    ratio("encode", &ENCODERS, &mut enc);
    ratio("decode", &DECODERS, &mut dec);
    ratio("stages", &STAGES, &mut stg);
    println!(
        r#"{{"status":"{}","mode":"seed003","count":{count},"rounds":{rounds},"failed":{failed},"rows":[{}]}}"#,
        if failed == 0 { "ok" } else { "error" },
        rows.join(",")
    );
    if failed != 0 {
        std::process::exit(1);
    }
}
