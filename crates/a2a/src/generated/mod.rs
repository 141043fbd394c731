//! Code generated from `spec/a2a/` and `rules/a2a.toml`: see `codegen/agentproto_codegen/proto.py`
//! and `a2a_errors.py`.

pub mod errors;
pub mod v1;
