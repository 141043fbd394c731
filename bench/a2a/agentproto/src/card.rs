//! Seed 004's serialize_agent_card workload on agentproto: the generated
//! `agentproto_a2a::v1::AgentCard`, decoded with `agentproto_codec::decode_slice` (the
//! validating ProtoJSON decoder the server uses) and encoded with `serde_json::to_vec` (a
//! fresh `Vec` per call, as the seed's Criterion bench and the community adapter do).
//!
//! `bench-a2a-agentproto-card --input FILE [--count N] [--warmup W]` prints one JSON line:
//! in-loop totals for N decodes, N encodes and N round trips, and the encoded card.

use agentproto_a2a::v1::AgentCard;

fn decode(bytes: &[u8]) -> Result<AgentCard, String> {
    agentproto_codec::decode_slice::<AgentCard>(bytes, "$").map(|d| d.value).map_err(|e| e.to_string())
}

fn main() {
    bench_a2a_cardloop::run(decode, |card| serde_json::to_vec(card).expect("encode"));
}
