//! A2A 1.0.1 for Rust: the generated ProtoJSON types, a server on SQLite, PostgreSQL or
//! in memory with resumable streams and a push outbox, and a client.
//!
//! A server that dies mid-turn does not leave its tasks WORKING for ever: turns hold
//! leases, and a task whose lease ran out is marked FAILED by the next sweep; terminal
//! tasks expire after a configurable retention ([`recovery`]).

#![deny(missing_docs)]

mod card;
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
#[cfg(all(feature = "grpc", any(feature = "client", feature = "server")))]
pub mod grpc;
mod protojson;
#[cfg(feature = "server")]
pub mod push;
#[cfg(feature = "server")]
pub mod recovery;
#[cfg(any(feature = "client", feature = "server"))]
pub mod retry;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "server")]
pub mod store;
#[cfg(feature = "server")]
pub mod stream;
#[cfg(feature = "server")]
pub mod tasks;
mod text;

pub use card::AgentCardBuilder;
pub use generated::v1;
/// The protobuf codec of the generated types (the gRPC binding's wire form).
#[cfg(all(feature = "grpc", any(feature = "client", feature = "server")))]
pub use generated::v1_proto;
pub use protojson::{Bytes, Timestamp};
pub use text::Text;
