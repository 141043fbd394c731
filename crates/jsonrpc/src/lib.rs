//! JSON-RPC 2.0 core of agentproto.
#![forbid(unsafe_code)]

mod decode;
pub mod error;
pub mod frame;
pub mod id;
pub mod memory;
pub mod message;

pub use error::{CallError, ConnectionError, DecodeError, ErrorCode, ErrorObject};
pub use id::RequestId;
pub use message::{DecodeOptions, EnvelopeError, EnvelopeErrorKind, Message};
pub mod connection;
pub use connection::{
    CancelNotification, Connection, ConnectionEvent, ConnectionOptions, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, Observer, Peer, RequestContext,
};
