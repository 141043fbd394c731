//! A2A 1.0.1 for Rust: the generated ProtoJSON types, a server on SQLite (or in memory)
//! with resumable streams and a push outbox, and a client.

pub mod client;
pub mod compat;
pub mod demo;
pub mod errors;
pub mod executor;
pub mod generated;
mod protojson;
pub mod push;
pub mod server;
pub mod store;
pub mod stream;
pub mod tasks;

pub use generated::v1;
pub use protojson::{Bytes, Timestamp};
