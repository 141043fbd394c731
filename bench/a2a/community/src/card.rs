//! Seed 004's serialize_agent_card workload on the community SDK (a2a-protocol-sdk 0.15.0):
//! `a2a_protocol_types::AgentCard`, decoded with `serde_json::from_slice` (what its
//! handlers and client do; serde derive with its own checks) and encoded with `serde_json::to_vec` (a
//! fresh `Vec` per call, as the seed's Criterion bench does).
//!
//! `bench-a2a-community-card --input FILE [--count N] [--warmup W]` prints one JSON line:
//! in-loop totals for N decodes, N encodes and N round trips, and the encoded card.

use a2a_protocol_sdk::types::AgentCard;

fn decode(bytes: &[u8]) -> Result<AgentCard, String> {
    serde_json::from_slice::<AgentCard>(bytes).map_err(|e| e.to_string())
}

fn main() {
    bench_a2a_cardloop::run(decode, |card| serde_json::to_vec(card).expect("encode"));
}
