//! Seed 004's serialize_agent_card workload, shared by every card adapter: the command
//! line (`--input FILE [--count N] [--warmup W]`), the three timed loops (N decodes, N
//! encodes, N round trips) and the one JSON output line. An adapter passes its SDK's
//! decode and encode.

use std::hint::black_box;
use std::time::Instant;

/// Runs the workload with one SDK's `decode` and `encode` and prints the result line.
pub fn run<T>(decode: impl Fn(&[u8]) -> Result<T, String>, encode: impl Fn(&T) -> Vec<u8>) {
    let (input, count, warmup) = args();
    let bytes = std::fs::read(&input).unwrap_or_else(|e| refuse(&format!("{input}: {e}")));
    let card = decode(&bytes).unwrap_or_else(|e| refuse(&e));
    let encoded = encode(&card);
    for _ in 0..warmup {
        black_box(encode(&decode(black_box(&bytes)).expect("decode")));
    }
    let t = Instant::now();
    for _ in 0..count {
        black_box(decode(black_box(&bytes)).expect("decode"));
    }
    let decode_ns = t.elapsed().as_nanos() as u64;
    let t = Instant::now();
    for _ in 0..count {
        black_box(encode(black_box(&card)));
    }
    let encode_ns = t.elapsed().as_nanos() as u64;
    let t = Instant::now();
    for _ in 0..count {
        black_box(encode(&decode(black_box(&bytes)).expect("decode")));
    }
    let roundtrip_ns = t.elapsed().as_nanos() as u64;
    let line = serde_json::json!({
        "status": "ok", "mode": "card", "input_bytes": bytes.len(), "count": count, "warmup": warmup,
        "decode_ns": decode_ns, "encode_ns": encode_ns, "roundtrip_ns": roundtrip_ns,
        "encoded_bytes": encoded.len(), "encoded": String::from_utf8_lossy(&encoded),
    });
    println!("{line}");
}

fn refuse(why: &str) -> ! {
    println!("{}", serde_json::json!({"status": "refused", "mode": "card", "error": why}));
    std::process::exit(0)
}

fn args() -> (String, u64, u64) {
    let (mut input, mut count, mut warmup) = (String::new(), 10_000, 1_000);
    let mut it = std::env::args().skip(1);
    while let (Some(flag), Some(value)) = (it.next(), it.next()) {
        match flag.as_str() {
            "--input" => input = value,
            "--count" => count = value.parse().expect("--count"),
            "--warmup" => warmup = value.parse().expect("--warmup"),
            _ => panic!("unknown flag {flag}"),
        }
    }
    (input, count, warmup)
}
