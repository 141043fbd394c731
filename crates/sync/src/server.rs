//! The server side: requests read from a stream, handlers by method name,
//! callbacks into the client mid-request.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::frame::{FrameError, FrameReader, FrameWriter, Limits, MessageType};
use crate::{lossy, panic_text, ProtocolError};

/// A handler: reads the request's payload, may call back into the client
/// through the [`Peer`], and writes its result into the (cleared, reused)
/// buffer it is given.
type Handler = Box<dyn FnMut(&mut Peer<'_>, &[u8], &mut Vec<u8>) -> Result<(), HandlerError> + Send>;

/// Why a handler failed; its text becomes the `Error` tuple's payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerError {
    message: String,
}

impl HandlerError {
    /// A failure with this text.
    pub fn new(message: impl Into<String>) -> HandlerError {
        HandlerError { message: message.into() }
    }

    /// The text sent to the client.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl std::error::Error for HandlerError {}

impl From<String> for HandlerError {
    fn from(message: String) -> HandlerError {
        HandlerError { message }
    }
}

impl From<&str> for HandlerError {
    fn from(message: &str) -> HandlerError {
        HandlerError { message: message.to_owned() }
    }
}

impl From<CallError> for HandlerError {
    fn from(error: CallError) -> HandlerError {
        HandlerError { message: error.to_string() }
    }
}

/// A callback into the client that did not produce an answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The client answered with a `CallError`; this is its text.
    #[error("client error: {0}")]
    Client(String),
    /// The channel broke during the call (end of input, a malformed or
    /// unexpected tuple, an I/O error). [`Server::serve`] returns the cause
    /// once the handler returns; nothing more is written.
    #[error("the channel to the client broke during the call")]
    Broken,
}

/// A serving loop that ended on something other than the end of its input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The client sent a tuple the protocol does not allow here.
    #[error("protocol error")]
    Protocol(#[source] ProtocolError),
    /// The input ended in the middle of a callback exchange.
    #[error("input ended while waiting for the answer to callback `{name}`")]
    EndedDuringCall {
        /// The callback.
        name: String,
    },
    /// Reading or writing failed.
    #[error("i/o error on the channel")]
    Io(#[source] io::Error),
}

/// The two ends of the channel as a server sees them.
struct Channel {
    reader: FrameReader<Box<dyn Read>>,
    writer: FrameWriter<Box<dyn Write>>,
    broken: Option<ServerError>,
}

/// What a handler uses to call back into the client during its request.
pub struct Peer<'a> {
    channel: &'a mut Channel,
}

impl std::fmt::Debug for Peer<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Peer").field("broken", &self.channel.broken.is_some()).finish_non_exhaustive()
    }
}

impl Peer<'_> {
    /// Calls the client's callback `name` with `payload` and waits for its
    /// answer. The answer borrows a buffer reused by the next call.
    pub fn call(&mut self, name: &str, payload: &[u8]) -> Result<&[u8], CallError> {
        if self.channel.broken.is_some() {
            return Err(CallError::Broken);
        }
        if let Err(error) = self.channel.writer.write(MessageType::Call, name.as_bytes(), payload) {
            return Err(self.break_with(ServerError::Io(error)));
        }
        let (kind, name_matches) = match self.channel.reader.read() {
            Ok(Some(frame)) => (frame.kind, frame.name == name.as_bytes()),
            Ok(None) | Err(FrameError::UnexpectedEof { .. }) => {
                return Err(self.break_with(ServerError::EndedDuringCall { name: name.to_owned() }))
            }
            Err(FrameError::Io(error)) => return Err(self.break_with(ServerError::Io(error))),
            Err(error) => return Err(self.break_with(ServerError::Protocol(ProtocolError::Frame(error)))),
        };
        match kind {
            MessageType::CallResponse | MessageType::CallError if !name_matches => {
                let found = lossy(self.channel.reader.name());
                let mismatch = ProtocolError::NameMismatch { kind, expected: name.to_owned(), found };
                Err(self.break_with(ServerError::Protocol(mismatch)))
            }
            MessageType::CallResponse => Ok(self.channel.reader.payload()),
            MessageType::CallError => Err(CallError::Client(lossy(self.channel.reader.payload()))),
            MessageType::Request | MessageType::Response | MessageType::Error | MessageType::Call => {
                let unexpected = ProtocolError::UnexpectedType { kind, name: lossy(self.channel.reader.name()) };
                Err(self.break_with(ServerError::Protocol(unexpected)))
            }
        }
    }

    fn break_with(&mut self, error: ServerError) -> CallError {
        self.channel.broken = Some(error);
        CallError::Broken
    }
}

/// Handlers by method name, served over a pair of streams.
///
/// Each request runs its handler to completion before the next is read (the
/// protocol has one request in flight). An unknown method, a handler's `Err`
/// and a handler's panic are each answered with an `Error` tuple and serving
/// goes on; only the channel itself failing ends it.
#[derive(Default)]
pub struct Server {
    handlers: HashMap<Box<[u8]>, Handler>,
    limits: Limits,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Server")
            .field("methods", &self.handlers.keys().map(|name| lossy(name)).collect::<Vec<_>>())
            .field("limits", &self.limits)
            .finish()
    }
}

impl Server {
    /// A server with no handlers and the default [`Limits`].
    pub fn new() -> Server {
        Server::default()
    }

    /// The largest name and payload accepted from the client.
    pub fn with_limits(mut self, limits: Limits) -> Server {
        self.limits = limits;
        self
    }

    /// Registers the handler of `method` (replacing one of the same name).
    pub fn handle<F>(&mut self, method: &str, handler: F) -> &mut Server
    where
        F: FnMut(&mut Peer<'_>, &[u8], &mut Vec<u8>) -> Result<(), HandlerError> + Send + 'static,
    {
        self.handlers.insert(method.as_bytes().into(), Box::new(handler));
        self
    }

    /// Serves requests read from `input`, answering on `output`, until
    /// `input` ends between two tuples (`Ok`) or the channel fails (`Err`).
    pub fn serve(&mut self, input: impl Read + 'static, output: impl Write + 'static) -> Result<(), ServerError> {
        let mut channel = Channel {
            reader: FrameReader::new(Box::new(input), self.limits),
            writer: FrameWriter::new(Box::new(output)),
            broken: None,
        };
        let mut method = Vec::new();
        let mut request_payload = Vec::new();
        let mut result = Vec::new();
        loop {
            let kind = match channel.reader.read() {
                Ok(Some(frame)) => frame.kind,
                Ok(None) => return Ok(()),
                Err(FrameError::Io(error)) => return Err(ServerError::Io(error)),
                Err(error) => return Err(ServerError::Protocol(ProtocolError::Frame(error))),
            };
            if kind != MessageType::Request {
                let name = lossy(channel.reader.name());
                return Err(ServerError::Protocol(ProtocolError::UnexpectedType { kind, name }));
            }
            method.clear();
            method.extend_from_slice(channel.reader.name());
            // The handler may read more tuples (callback answers) while it
            // still needs its request's payload: move the payload out.
            channel.reader.swap_payload(&mut request_payload);
            result.clear();
            let outcome = match self.handlers.get_mut(method.as_slice()) {
                None => Err(format!("unknown method `{}`", lossy(&method))),
                Some(handler) => {
                    let mut peer = Peer { channel: &mut channel };
                    match catch_unwind(AssertUnwindSafe(|| handler(&mut peer, &request_payload, &mut result))) {
                        Ok(Ok(())) => Ok(()),
                        Ok(Err(error)) => Err(error.message),
                        Err(panic) => Err(format!("handler `{}` panicked: {}", lossy(&method), panic_text(&*panic))),
                    }
                }
            };
            if let Some(error) = channel.broken.take() {
                return Err(error);
            }
            let written = match outcome {
                Ok(()) => channel.writer.write(MessageType::Response, &method, &result),
                Err(text) => channel.writer.write(MessageType::Error, &method, text.as_bytes()),
            };
            written.map_err(ServerError::Io)?;
        }
    }

    /// [`Server::serve`] on this process's stdin and stdout. On Unix both are
    /// used through duplicated descriptors, without the standard library's
    /// line buffering of stdout; nothing else may write to stdout meanwhile.
    pub fn serve_stdio(&mut self) -> Result<(), ServerError> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            let input = std::fs::File::from(io::stdin().as_fd().try_clone_to_owned().map_err(ServerError::Io)?);
            let output = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned().map_err(ServerError::Io)?);
            self.serve(input, output)
        }
        #[cfg(not(unix))]
        {
            self.serve(io::stdin(), io::stdout())
        }
    }
}
