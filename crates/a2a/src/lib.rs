//! A2A 1.0.1 for Rust: the generated ProtoJSON types, a server on SQLite (or in memory)
//! with resumable streams and a push outbox, and a client.

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
pub mod compat;
#[cfg(feature = "server")]
#[doc(hidden)]
pub mod demo;
pub mod errors;
#[cfg(feature = "server")]
pub mod executor;
pub mod generated;
mod protojson;
#[cfg(feature = "server")]
pub mod push;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "server")]
pub mod store;
#[cfg(feature = "server")]
pub mod stream;
#[cfg(feature = "server")]
pub mod tasks;

pub use generated::v1;
pub use protojson::{Bytes, Timestamp};
