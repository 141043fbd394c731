//! Code generated from `spec/a2a/` and `rules/a2a.toml`: see `codegen/agentproto_codegen/proto.py`
//! `a2a_errors.py` and `a2a_v03.py`.

pub mod errors;
pub mod v03;
pub mod v1;
#[cfg(all(feature = "grpc", any(feature = "client", feature = "server")))]
pub mod v1_proto;
