//! ACP over the network: Streamable HTTP and WebSocket at one `/acp` endpoint, as the
//! ACP transports RFD describes them, for both roles (features `remote-server` and
//! `remote-client`; a stdio-only user builds none of it).
//!
//! Serving (one agent per ACP connection):
//!
//! ```no_run
//! # #[cfg(feature = "remote-server")]
//! # async fn serve<A: agentproto_acp::v1::Agent + Default>() -> std::io::Result<()> {
//! use agentproto_acp::remote::{RemoteServer, ServerLimits};
//! use agentproto_acp::{AcpOptions, V1};
//!
//! let server = RemoteServer::agent::<V1, _, _>(A::default, AcpOptions::default(), ServerLimits::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! server.serve(listener, Default::default()).await // http://127.0.0.1:8000/acp
//! # }
//! ```
//!
//! Connecting: [`connect`] (Streamable HTTP, or WebSocket with
//! [`RemoteOptions::websocket`]) gives the same `AgentConnection` a spawned agent
//! gives.
//!
//! The transport is a framing of the one connection runtime ([`framing`]): every
//! message received becomes one line of the connection's input, every line it writes
//! one message sent, so validation with JSON paths, ordering (a `session/update` never
//! overtakes the answer it precedes), backpressure and `$/cancel_request` are the
//! stdio path's. What is served is byte-level ([`Attach`]): an agent of this SDK
//! ([`RemoteServer::agent`]) or any process's stdio (`agentproto bridge`).
//!
//! Streamable HTTP is served over HTTP/1.1 (each SSE stream holds a TCP connection);
//! the client speaks `http://` and `https://` for Streamable HTTP, `ws://` only for
//! WebSocket.

pub mod framing;
mod routing;

#[cfg(feature = "remote-server")]
mod auth;
#[cfg(feature = "remote-server")]
mod limits;
#[cfg(feature = "remote-server")]
mod listen;
#[cfg(feature = "remote-server")]
mod served;
#[cfg(feature = "remote-server")]
mod server;
#[cfg(feature = "remote-server")]
mod ws_server;

#[cfg(feature = "remote-client")]
mod client;
#[cfg(feature = "remote-client")]
mod sse;

#[cfg(feature = "remote-server")]
pub use auth::{BearerAuth, BearerAuthService};
#[cfg(feature = "remote-server")]
pub use limits::ServerLimits;
#[cfg(feature = "remote-server")]
pub use served::Attach;
#[cfg(feature = "remote-server")]
pub use server::{AcpBody, AcpService, RemoteServer};

#[cfg(feature = "remote-client")]
pub use client::{connect, RemoteAgent, RemoteError, RemoteOptions};

pub use routing::{CONNECTION_ID_HEADER, SESSION_ID_HEADER};

/// The WebSocket configuration (both roles) for messages of at most `max_message` bytes.
pub(crate) fn ws_config(max_message: usize) -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(max_message))
        .max_frame_size(Some(max_message))
}
