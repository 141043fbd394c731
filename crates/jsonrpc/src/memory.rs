//! In-memory transports for tests and embedding: a duplex pipe and a pair of
//! connected [`Connection`]s.

use std::sync::Arc;

use tokio::io::DuplexStream;

use crate::connection::{Connection, ConnectionOptions, Handler, Peer};

/// The default capacity of each direction of an in-memory pipe: 64 KiB.
pub const DEFAULT_PIPE_CAPACITY: usize = 64 * 1024;

/// Two connected in-memory streams; bytes written to one are read from the other.
/// A full direction makes writers wait, like a real pipe.
pub fn duplex(capacity: usize) -> (DuplexStream, DuplexStream) {
    tokio::io::duplex(capacity)
}

/// A connection over one end of an in-memory stream.
pub fn connection(stream: DuplexStream, handler: Arc<dyn Handler>, options: ConnectionOptions) -> (Connection, Peer) {
    let (input, output) = tokio::io::split(stream);
    Connection::new(input, output, handler, options)
}

/// One side of a [`pair`].
#[derive(Debug)]
pub struct Side {
    /// The connection to run (spawn `connection.run()`).
    pub connection: Connection,
    /// The handle to call the other side.
    pub peer: Peer,
}

/// Two connections talking to each other in memory. Neither runs until its
/// [`Connection::run`] is polled.
pub fn pair(
    first_handler: Arc<dyn Handler>,
    first_options: ConnectionOptions,
    second_handler: Arc<dyn Handler>,
    second_options: ConnectionOptions,
) -> (Side, Side) {
    let (first_stream, second_stream) = duplex(DEFAULT_PIPE_CAPACITY);
    let (first_connection, first_peer) = connection(first_stream, first_handler, first_options);
    let (second_connection, second_peer) = connection(second_stream, second_handler, second_options);
    (Side { connection: first_connection, peer: first_peer }, Side { connection: second_connection, peer: second_peer })
}
