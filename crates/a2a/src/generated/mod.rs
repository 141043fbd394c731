//! Code generated from `spec/a2a/`: see `codegen/agentproto_codegen/proto.py`.

pub mod v1;
