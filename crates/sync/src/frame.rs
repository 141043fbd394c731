//! Tuples on the wire: reading and writing `[type, name, payload]`.
//!
//! Each message is a MessagePack array of three elements, always in the same
//! shape (facts of the TypeScript 7 API server's sync channel, see
//! `notes/sync.md`):
//!
//! | byte(s) | meaning |
//! |---|---|
//! | `0x93` | fixarray of 3 |
//! | `0x01`–`0x06`, or `0xcc` + one byte | the [`MessageType`] (positive fixint; a reader also takes uint8) |
//! | `0xc4` len8 / `0xc5` len16 BE / `0xc6` len32 BE, then the bytes | the name (a method or callback name) |
//! | the same bin forms | the payload |
//!
//! The reader is strict: any other byte where one of these is expected is a
//! [`FrameError`] naming what was expected and what was found, and a length
//! over the configured [`Limits`] is refused before anything is allocated.
//! The writer always uses the shortest bin form and a positive fixint type.
//! The format may expand over time upstream; both sides of a channel must come
//! from the same build of the peer.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};

/// The first byte of every tuple: a MessagePack fixarray of three elements.
pub const ARRAY_HEADER: u8 = 0x93;
/// MessagePack `uint8`: a type byte follows (accepted on read, never written).
pub const UINT8_MARKER: u8 = 0xcc;
/// MessagePack `bin 8`: a one-byte length follows.
pub const BIN8: u8 = 0xc4;
/// MessagePack `bin 16`: a big-endian two-byte length follows.
pub const BIN16: u8 = 0xc5;
/// MessagePack `bin 32`: a big-endian four-byte length follows.
pub const BIN32: u8 = 0xc6;

/// What a tuple is. Types 1–3 go from the client to the server, 4–6 back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageType {
    /// Client → server: call the method `name` with `payload`.
    Request = 1,
    /// Client → server: the answer to a [`MessageType::Call`].
    CallResponse = 2,
    /// Client → server: a [`MessageType::Call`] failed; the payload is UTF-8 text.
    CallError = 3,
    /// Server → client: the result of the request in flight.
    Response = 4,
    /// Server → client: the request in flight failed; the payload is UTF-8 text.
    Error = 5,
    /// Server → client: call back the client's callback `name` mid-request.
    Call = 6,
}

impl MessageType {
    /// The type with this wire value (1–6).
    pub fn from_byte(value: u8) -> Option<MessageType> {
        Some(match value {
            1 => MessageType::Request,
            2 => MessageType::CallResponse,
            3 => MessageType::CallError,
            4 => MessageType::Response,
            5 => MessageType::Error,
            6 => MessageType::Call,
            _ => return None,
        })
    }

    /// The wire value.
    pub fn as_byte(self) -> u8 {
        self as u8
    }
}

/// Which bin field of a tuple an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The second element: the method or callback name.
    Name,
    /// The third element: the payload.
    Payload,
}

impl fmt::Display for Field {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Field::Name => "name",
            Field::Payload => "payload",
        })
    }
}

/// The largest name and payload a reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest accepted name, in bytes (default 64 KiB).
    pub max_name: usize,
    /// Longest accepted payload, in bytes (default 1 GiB; the wire allows up to 4 GiB − 1).
    pub max_payload: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_name: 64 * 1024, max_payload: 1 << 30 }
    }
}

/// A tuple that could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The first byte is not a fixarray of three.
    #[error("expected a fixarray of 3 (0x93), found 0x{found:02x}")]
    ArrayHeader {
        /// The byte read instead.
        found: u8,
    },
    /// The type is neither a positive fixint nor a uint8.
    #[error("expected the message type as a positive fixint or uint8 (0xcc), found 0x{found:02x}")]
    TypeMarker {
        /// The byte read instead.
        found: u8,
    },
    /// The type is a number but not one of 1–6.
    #[error("unknown message type {value} (expected 1 to 6)")]
    UnknownType {
        /// The number read.
        value: u8,
    },
    /// A field is not a bin.
    #[error("expected bin8, bin16 or bin32 (0xc4-0xc6) for the {field}, found 0x{found:02x}")]
    BinMarker {
        /// The field.
        field: Field,
        /// The byte read instead.
        found: u8,
    },
    /// A field is longer than the reader's [`Limits`] allow.
    #[error("{field} of {length} bytes is over the limit of {limit} bytes")]
    TooLong {
        /// The field.
        field: Field,
        /// The length the header announced.
        length: u64,
        /// The limit.
        limit: usize,
    },
    /// The stream ended inside a tuple.
    #[error("end of stream in the middle of a tuple, while reading the {stage}")]
    UnexpectedEof {
        /// What was being read: `message type`, `name length`, `name`, `payload length`, `payload`…
        stage: &'static str,
    },
    /// Reading failed.
    #[error("could not read a tuple")]
    Io(#[source] io::Error),
}

/// One tuple read, borrowing the reader's buffers until the next read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The message type.
    pub kind: MessageType,
    /// The name (bytes; method names are ASCII in practice).
    pub name: &'a [u8],
    /// The payload.
    pub payload: &'a [u8],
}

/// Reads tuples from a byte stream into buffers reused from one tuple to the next.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: BufReader<R>,
    limits: Limits,
    name: Vec<u8>,
    payload: Vec<u8>,
}

impl<R: Read> FrameReader<R> {
    /// A reader with a 64 KiB read-ahead buffer.
    pub fn new(inner: R, limits: Limits) -> FrameReader<R> {
        FrameReader { inner: BufReader::with_capacity(64 * 1024, inner), limits, name: Vec::new(), payload: Vec::new() }
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Reads the next tuple. `Ok(None)` is a clean end of stream: nothing of a
    /// new tuple had been read.
    pub fn read(&mut self) -> Result<Option<Frame<'_>>, FrameError> {
        let first = loop {
            match self.inner.fill_buf() {
                Ok([]) => return Ok(None),
                Ok(buffer) => break buffer[0],
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(FrameError::Io(error)),
            }
        };
        self.inner.consume(1);
        if first != ARRAY_HEADER {
            return Err(FrameError::ArrayHeader { found: first });
        }
        let kind = self.read_type()?;
        read_bin(&mut self.inner, &mut self.name, Field::Name, self.limits.max_name)?;
        read_bin(&mut self.inner, &mut self.payload, Field::Payload, self.limits.max_payload)?;
        Ok(Some(Frame { kind, name: &self.name, payload: &self.payload }))
    }

    /// Exchanges the last payload read with `other` (no copy): a caller that
    /// must keep a payload across the next read moves it out this way, and
    /// hands back a buffer for the reader to reuse.
    pub fn swap_payload(&mut self, other: &mut Vec<u8>) {
        std::mem::swap(&mut self.payload, other);
    }

    /// The last name read (empty before the first read).
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// The last payload read (empty before the first read).
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &R {
        self.inner.get_ref()
    }

    fn read_type(&mut self) -> Result<MessageType, FrameError> {
        let marker = read_byte(&mut self.inner, "message type")?;
        let value = match marker {
            0x00..=0x7f => marker,
            UINT8_MARKER => read_byte(&mut self.inner, "message type")?,
            other => return Err(FrameError::TypeMarker { found: other }),
        };
        MessageType::from_byte(value).ok_or(FrameError::UnknownType { value })
    }
}

fn read_byte(reader: &mut impl Read, stage: &'static str) -> Result<u8, FrameError> {
    let mut byte = [0u8; 1];
    read_exact(reader, &mut byte, stage)?;
    Ok(byte[0])
}

fn read_exact(reader: &mut impl Read, buffer: &mut [u8], stage: &'static str) -> Result<(), FrameError> {
    reader.read_exact(buffer).map_err(|error| match error.kind() {
        io::ErrorKind::UnexpectedEof => FrameError::UnexpectedEof { stage },
        _ => FrameError::Io(error),
    })
}

fn read_bin(reader: &mut impl Read, into: &mut Vec<u8>, field: Field, limit: usize) -> Result<(), FrameError> {
    let (length_stage, bytes_stage) = match field {
        Field::Name => ("name length", "name"),
        Field::Payload => ("payload length", "payload"),
    };
    let marker = read_byte(reader, length_stage)?;
    let length: u64 = match marker {
        BIN8 => u64::from(read_byte(reader, length_stage)?),
        BIN16 => {
            let mut bytes = [0u8; 2];
            read_exact(reader, &mut bytes, length_stage)?;
            u64::from(u16::from_be_bytes(bytes))
        }
        BIN32 => {
            let mut bytes = [0u8; 4];
            read_exact(reader, &mut bytes, length_stage)?;
            u64::from(u32::from_be_bytes(bytes))
        }
        other => return Err(FrameError::BinMarker { field, found: other }),
    };
    if length > limit as u64 {
        return Err(FrameError::TooLong { field, length, limit });
    }
    let length = length as usize;
    into.clear();
    into.reserve(length);
    // `take` + `read_to_end` fills the reserved capacity without zeroing it first.
    let read = reader.take(length as u64).read_to_end(into).map_err(FrameError::Io)?;
    if read < length {
        return Err(FrameError::UnexpectedEof { stage: bytes_stage });
    }
    Ok(())
}

/// The bytes of a bin header for `length`, in the shortest form.
/// Returns the header buffer and how many of its bytes are used.
pub fn bin_header(length: u32) -> ([u8; 5], usize) {
    match length {
        0..=0xff => ([BIN8, length as u8, 0, 0, 0], 2),
        0x100..=0xffff => {
            let [high, low] = (length as u16).to_be_bytes();
            ([BIN16, high, low, 0, 0], 3)
        }
        _ => {
            let [b0, b1, b2, b3] = length.to_be_bytes();
            ([BIN32, b0, b1, b2, b3], 5)
        }
    }
}

fn field_length(bytes: &[u8], field: Field) -> io::Result<u32> {
    u32::try_from(bytes.len()).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("{field} of {} bytes does not fit a bin32", bytes.len()))
    })
}

/// Appends the tuple's header (array marker, type, name, payload length) to `out`.
fn push_header(out: &mut Vec<u8>, kind: MessageType, name: &[u8], payload_length: u32) -> io::Result<()> {
    out.push(ARRAY_HEADER);
    out.push(kind.as_byte());
    let (header, used) = bin_header(field_length(name, Field::Name)?);
    out.extend_from_slice(&header[..used]);
    out.extend_from_slice(name);
    let (header, used) = bin_header(payload_length);
    out.extend_from_slice(&header[..used]);
    Ok(())
}

/// Appends one whole tuple to `out`.
pub fn encode(out: &mut Vec<u8>, kind: MessageType, name: &[u8], payload: &[u8]) -> io::Result<()> {
    push_header(out, kind, name, field_length(payload, Field::Payload)?)?;
    out.extend_from_slice(payload);
    Ok(())
}

/// Payloads up to this size are copied next to their header and written with
/// one `write`; larger ones are written from the caller's slice.
const COALESCE_LIMIT: usize = 64 * 1024;

/// Writes tuples to a byte stream, assembling each in a reused buffer.
#[derive(Debug)]
pub struct FrameWriter<W> {
    inner: W,
    buffer: Vec<u8>,
}

impl<W: Write> FrameWriter<W> {
    /// A writer on `inner` (unbuffered streams are best: each tuple is written
    /// whole, then flushed).
    pub fn new(inner: W) -> FrameWriter<W> {
        FrameWriter { inner, buffer: Vec::with_capacity(COALESCE_LIMIT + 32) }
    }

    /// Writes one tuple and flushes.
    pub fn write(&mut self, kind: MessageType, name: &[u8], payload: &[u8]) -> io::Result<()> {
        self.buffer.clear();
        push_header(&mut self.buffer, kind, name, field_length(payload, Field::Payload)?)?;
        if payload.len() <= COALESCE_LIMIT {
            self.buffer.extend_from_slice(payload);
            self.inner.write_all(&self.buffer)?;
        } else {
            self.inner.write_all(&self.buffer)?;
            self.inner.write_all(payload)?;
        }
        self.inner.flush()
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The underlying stream, for closing it.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests;
