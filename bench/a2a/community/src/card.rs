//! Seed 004's serialize_agent_card workload on the community SDK (a2a-protocol-sdk 0.15.0):
//! `a2a_protocol_types::AgentCard`, decoded with `serde_json::from_slice` (what its
//! handlers and client do; serde derive with its own checks) and encoded with `serde_json::to_vec` (a
//! fresh `Vec` per call, as the seed's Criterion bench does).
//!
//! `bench-a2a-community-card --input FILE [--count N] [--warmup W]` prints one JSON line:
//! in-loop totals for N decodes, N encodes and N round trips, and the encoded card.

use std::hint::black_box;
use std::time::Instant;

use a2a_protocol_sdk::types::AgentCard;

fn decode(bytes: &[u8]) -> Result<AgentCard, String> {
    serde_json::from_slice::<AgentCard>(bytes).map_err(|e| e.to_string())
}

fn main() {
    let (input, count, warmup) = args();
    let bytes = std::fs::read(&input).unwrap_or_else(|e| refuse(&format!("{input}: {e}")));
    let card = decode(&bytes).unwrap_or_else(|e| refuse(&e));
    let encoded = serde_json::to_vec(&card).expect("encode");
    for _ in 0..warmup {
        black_box(serde_json::to_vec(&decode(black_box(&bytes)).expect("decode")).expect("encode"));
    }
    let t = Instant::now();
    for _ in 0..count {
        black_box(decode(black_box(&bytes)).expect("decode"));
    }
    let decode_ns = t.elapsed().as_nanos() as u64;
    let t = Instant::now();
    for _ in 0..count {
        black_box(serde_json::to_vec(black_box(&card)).expect("encode"));
    }
    let encode_ns = t.elapsed().as_nanos() as u64;
    let t = Instant::now();
    for _ in 0..count {
        black_box(serde_json::to_vec(&decode(black_box(&bytes)).expect("decode")).expect("encode"));
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
