//! Code generated from `spec/a2a/` and `rules/a2a.toml` by `codegen/`: the types and their
//! ProtoJSON codecs (`proto.py`, `rust_a2a.py`), the error table (`a2a_errors.py`), the 0.3
//! conversion tables (`a2a_v03.py`, read by the server's 0.3 binding) and the protobuf codec
//! (`rust_a2a_proto.py`, for gRPC); the store's migrations come from `rules/store/`
//! (`store_schema.py`); the demo agent's card and scenarios from `rules/a2a-demo.toml`
//! (`a2a_demo.py`).

#[cfg(feature = "server")]
pub(crate) mod demo;
pub mod errors;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod store_schema;
#[cfg(feature = "server")]
pub mod v03;
pub mod v1;
#[cfg(all(feature = "grpc", any(feature = "client", feature = "server")))]
pub mod v1_proto;
