//! Compatibility with earlier A2A versions.
//!
//! [`v03`] converts between the A2A 0.3 JSON shapes and 1.0 ProtoJSON, in both
//! directions, without I/O. The server's JSON-RPC binding uses it to answer 0.3 clients
//! (a request without an `A2A-Version` header is 0.3) on the same endpoint as 1.0 ones
//! (`server/http/v03.rs`).

pub mod v03;
