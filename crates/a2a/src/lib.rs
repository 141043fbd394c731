//! A2A 1.0.1 for Rust: the generated ProtoJSON types, a server on SQLite (or in memory)
//! with resumable streams and a push outbox, and a client.

pub mod client;
pub mod generated;
mod protojson;
pub mod push;
pub mod store;
pub mod stream;

pub use generated::v1;
pub use protojson::{Bytes, Timestamp};
