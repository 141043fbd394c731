//! Compatibility with earlier A2A versions.
//!
//! [`v03`] converts between the A2A 0.3 JSON shapes and 1.0 ProtoJSON, in both
//! directions. The server uses it to answer 0.3 JSON-RPC clients (a request without an
//! `A2A-Version` header is 0.3) on the same endpoint as 1.0 ones.

mod serve;
pub mod v03;

pub(crate) use self::serve::serve_v03;
