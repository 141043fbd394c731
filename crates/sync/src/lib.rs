//! The sync pipe channel: a blocking request/response channel to a child
//! process over its stdin and stdout, wire-compatible with the TypeScript 7 API
//! server (`tsc --api` from npm `typescript@7.0.2` and `typescript@7.1.0-beta`).
//!
//! Every message is a MessagePack tuple `[type, name, payload]` ([`frame`]).
//! There are no request ids: one request is in flight at a time and the method
//! name correlates the answer. While a request is in flight the server may call
//! back into the client any number of times ([`MessageType::Call`]); each call
//! is answered before the server goes on.
//!
//! - [`Client`] spawns the server (its own process group, stderr passed
//!   through), sends requests, answers the server's callbacks from a registry,
//!   and ends the child on close and on drop.
//! - [`Server`] reads requests from a stream (stdin), runs a handler per
//!   method, lets handlers call back into the client, turns handler failures
//!   and panics into `Error` tuples and returns at end of input.
//! - [`ast`] reads the binary source-file format the TypeScript server returns
//!   from `getSourceFile` (protocol version 5 from TypeScript 7.0.2, 9 from
//!   7.1.0-beta, told apart by the header) as a lazy view over the bytes.
//! - [`tsc`] (feature `json`): the methods the two servers name differently
//!   (opening a project), chosen from the server's `initialize` answer or
//!   from configuration.
//!
//! All I/O is blocking `std::io`; there is no async runtime. Buffers (the read
//! buffers of tuples, the write buffer, the callback answer buffer) are reused
//! from one message to the next, and [`Client::request`] returns a slice into
//! the reused payload buffer.
//!
//! Cargo features:
//! - `json` (default): [`Client::request_json`], JSON params and results
//!   through `serde_json`.
//!
//! ```no_run
//! use std::process::Command;
//! use agentproto_sync::{ast::SourceFile, Client, ClientOptions};
//! use serde_json::{json, Value};
//!
//! let mut tsc = Command::new("interop/tsc-api/node_modules/@typescript/typescript-linux-x64/lib/tsc");
//! tsc.args(["--api", "--cwd", "/abs/project"]); // an absolute --cwd: a relative one makes tsc panic
//! let mut client = Client::spawn(tsc, ClientOptions::default())?;
//! client.request("initialize", b"null")?;
//! let opened: Value = client.request_json("updateSnapshot", &json!({"openProjects": ["/abs/project/tsconfig.json"]}))?.unwrap();
//! let params = json!({"snapshot": opened["snapshot"], "project": opened["projects"][0]["id"], "file": "/abs/project/a.ts"});
//! let file = SourceFile::new(client.request("getSourceFile", params.to_string().as_bytes())?)?;
//! println!("{} nodes", file.root().descendants().count());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod ast;
mod client;
pub mod frame;
mod server;
#[cfg(feature = "json")]
pub mod tsc;

pub use client::{Client, ClientError, ClientOptions, Killer};
pub use frame::{Frame, FrameError, Limits, MessageType};
pub use server::{CallError, HandlerError, Peer, Server, ServerError};

/// A well-formed tuple that does not fit the conversation at this point.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The tuple itself could not be read.
    #[error("malformed tuple")]
    Frame(#[source] FrameError),
    /// An answer named another method or callback than the one waited for.
    #[error("{kind:?} names `{found}` while the answer for `{expected}` was expected")]
    NameMismatch {
        /// The type of the tuple received.
        kind: MessageType,
        /// The name waited for.
        expected: String,
        /// The name received.
        found: String,
    },
    /// A tuple of a type this side never receives here (a `Request` from the
    /// server, a `Response` during a callback, …).
    #[error("unexpected {kind:?} tuple `{name}`")]
    UnexpectedType {
        /// The type received.
        kind: MessageType,
        /// Its name.
        name: String,
    },
}

/// Bytes as text for error messages (invalid UTF-8 replaced).
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The text of a caught panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "a non-string panic payload"
    }
}

#[cfg(test)]
mod tests {
    fn assert_send<T: Send>() {}
    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn channel_ends_can_move_to_other_threads() {
        assert_send::<super::Client>();
        assert_send::<super::Server>();
        assert_send_sync::<super::Killer>();
    }
}
