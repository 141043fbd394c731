//! Seed 004's serialize_agent_card workload on the official Rust SDK (`a2a-lf` 0.4.2):
//! `a2a::AgentCard` (serde derive, camelCase), decoded with `serde_json::from_slice` and
//! encoded with `serde_json::to_vec` (a fresh `Vec` per call), as the SDK's card router and
//! client read and write it.
//!
//! `bench-a2a-official-rust-card --input FILE [--count N] [--warmup W]` prints one JSON line:
//! in-loop totals for N decodes, N encodes and N round trips, and the encoded card.

use a2a::AgentCard;

fn decode(bytes: &[u8]) -> Result<AgentCard, String> {
    serde_json::from_slice::<AgentCard>(bytes).map_err(|e| e.to_string())
}

fn main() {
    bench_a2a_cardloop::run(decode, |card| serde_json::to_vec(card).expect("encode"));
}
