//! NDJSON framing: one message per line over any [`AsyncRead`] / [`AsyncWrite`].
//!
//! Reading:
//! * a line ends with LF; one trailing CR is stripped (CRLF is accepted);
//! * blank and whitespace-only lines are skipped silently;
//! * end of input ends the last line even without a newline;
//! * a line longer than the maximum message size (counted without its LF) is
//!   discarded while it streams by, never buffered whole, and reported as
//!   [`Frame::Oversize`] with its length and, best effort, the id and shape
//!   recovered from its first [`OVERSIZE_PREFIX`] bytes; reading then goes on;
//! * the read buffer never grows past `max_message_size + read_chunk_size` bytes.
//!
//! Writing: [`FrameWriter`] appends each message and `\n` to an internal buffer,
//! writes it out once it exceeds a threshold, and [`FrameWriter::flush`] writes
//! the rest, so a writer task that flushes when its queue is empty batches
//! messages under load.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::id::RequestId;
use crate::message::Message;

/// The default maximum message size: 64 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;

/// The default read chunk size: 64 KiB.
pub const DEFAULT_READ_CHUNK_SIZE: usize = 64 * 1024;

/// How many leading bytes of an oversize line are kept to recover its id.
pub const OVERSIZE_PREFIX: usize = 4096;

/// One framing event.
#[derive(Debug, PartialEq)]
pub enum Frame<'a> {
    /// One line, without its LF or trailing CR; never blank.
    Line(&'a [u8]),
    /// A line over the maximum size, discarded.
    Oversize(OversizeLine),
}

/// What is known about a discarded oversize line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OversizeLine {
    /// Its length in bytes, without the LF.
    pub len: u64,
    /// The top-level `id`, if it was found in the first [`OVERSIZE_PREFIX`] bytes.
    pub id: Option<RequestId>,
    /// The shape suggested by the top-level keys seen in the prefix.
    pub shape: OversizeShape,
}

/// The shape of an oversize line, judged from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OversizeShape {
    /// A `method` key was seen and no `result`/`error` key.
    Call,
    /// A `result` or `error` key was seen and no `method` key.
    Response,
    /// Neither could be told.
    Unknown,
}

/// Options of a [`FrameReader`].
#[derive(Debug, Clone, Copy)]
pub struct FrameLimits {
    /// The maximum length of a line without its LF.
    pub max_message_size: usize,
    /// How much is read at once (at least).
    pub read_chunk_size: usize,
}

impl Default for FrameLimits {
    fn default() -> FrameLimits {
        FrameLimits { max_message_size: DEFAULT_MAX_MESSAGE_SIZE, read_chunk_size: DEFAULT_READ_CHUNK_SIZE }
    }
}

/// Above this capacity the buffer is shrunk back once it holds no partial line.
const SHRINK_ABOVE: usize = 1024 * 1024;

/// Splits an [`AsyncRead`] into lines. Cancel safe: dropping a pending
/// [`FrameReader::next_frame`] loses no data.
#[derive(Debug)]
pub struct FrameReader<R> {
    reader: R,
    buffer: Vec<u8>,
    /// Start of the unconsumed data in `buffer`.
    start: usize,
    /// `buffer[start..scanned]` holds no LF.
    scanned: usize,
    limits: FrameLimits,
    discarding: Option<Discarding>,
    eof: bool,
}

#[derive(Debug)]
struct Discarding {
    len: u64,
    prefix: Vec<u8>,
}

enum Event {
    Line(usize, usize),
    Oversize(OversizeLine),
    End,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader with default limits.
    pub fn new(reader: R) -> FrameReader<R> {
        FrameReader::with_limits(reader, FrameLimits::default())
    }

    /// A reader with the given limits (each at least 1).
    pub fn with_limits(reader: R, limits: FrameLimits) -> FrameReader<R> {
        FrameReader {
            reader,
            buffer: Vec::new(),
            start: 0,
            scanned: 0,
            limits: FrameLimits {
                max_message_size: limits.max_message_size.max(1),
                read_chunk_size: limits.read_chunk_size.max(1),
            },
            discarding: None,
            eof: false,
        }
    }

    /// The current capacity of the read buffer; never more than
    /// `max_message_size + read_chunk_size`.
    pub fn buffer_capacity(&self) -> usize {
        self.buffer.capacity()
    }

    /// The next frame, or `None` at end of input.
    pub async fn next_frame(&mut self) -> io::Result<Option<Frame<'_>>> {
        Ok(match self.next_event().await? {
            Event::Line(start, end) => Some(Frame::Line(&self.buffer[start..end])),
            Event::Oversize(line) => Some(Frame::Oversize(line)),
            Event::End => None,
        })
    }

    async fn next_event(&mut self) -> io::Result<Event> {
        loop {
            if let Some(event) = self.take_buffered() {
                return Ok(event);
            }
            if self.eof {
                return Ok(self.take_last());
            }
            self.make_room();
            // `read_buf` is cancel safe, and every state change above is complete.
            let read = self.reader.read_buf(&mut self.buffer).await?;
            if read == 0 {
                self.eof = true;
            }
        }
    }

    /// A complete frame from the buffered bytes, if there is one.
    fn take_buffered(&mut self) -> Option<Event> {
        let max = self.limits.max_message_size;
        loop {
            let end = self.buffer.len();
            if let Some(discarding) = &mut self.discarding {
                let pending = &self.buffer[self.start..end];
                let newline = pending.iter().position(|&byte| byte == b'\n');
                let taken = newline.unwrap_or(pending.len());
                keep_prefix(&mut discarding.prefix, &pending[..taken]);
                discarding.len += taken as u64;
                match newline {
                    Some(at) => {
                        self.start += at + 1;
                        self.scanned = self.start;
                        let discarding = self.discarding.take().expect("discarding");
                        return Some(Event::Oversize(oversize(discarding)));
                    }
                    None => {
                        self.start = end;
                        self.scanned = end;
                        return None;
                    }
                }
            }
            let newline = self.buffer[self.scanned..end].iter().position(|&byte| byte == b'\n');
            let Some(offset) = newline else {
                self.scanned = end;
                if end - self.start > max {
                    let mut prefix = Vec::new();
                    keep_prefix(&mut prefix, &self.buffer[self.start..end]);
                    self.discarding = Some(Discarding { len: (end - self.start) as u64, prefix });
                    self.start = end;
                    continue;
                }
                return None;
            };
            let line_end = self.scanned + offset;
            let line_start = self.start;
            self.start = line_end + 1;
            self.scanned = self.start;
            if let Some(event) = self.classify_line(line_start, line_end) {
                return Some(event);
            }
        }
    }

    /// The frame for one complete line, or `None` when it is blank.
    fn classify_line(&self, start: usize, end: usize) -> Option<Event> {
        if end - start > self.limits.max_message_size {
            let mut prefix = Vec::new();
            keep_prefix(&mut prefix, &self.buffer[start..end]);
            return Some(Event::Oversize(oversize(Discarding { len: (end - start) as u64, prefix })));
        }
        let end = if end > start && self.buffer[end - 1] == b'\r' { end - 1 } else { end };
        let line = &self.buffer[start..end];
        if line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r')) {
            return None;
        }
        Some(Event::Line(start, end))
    }

    /// At end of input: the last line without a newline, then the end.
    fn take_last(&mut self) -> Event {
        if let Some(discarding) = self.discarding.take() {
            return Event::Oversize(oversize(discarding));
        }
        let end = self.buffer.len();
        if self.start < end {
            let start = self.start;
            self.start = end;
            self.scanned = end;
            if let Some(event) = self.classify_line(start, end) {
                return event;
            }
        }
        Event::End
    }

    /// Compacts the buffer and reserves room for the next read without growing
    /// past `max_message_size + read_chunk_size`.
    fn make_room(&mut self) {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        let len = self.buffer.len();
        let chunk = self.limits.read_chunk_size;
        let ceiling = self.limits.max_message_size.saturating_add(chunk);
        let capacity = self.buffer.capacity();
        if capacity > SHRINK_ABOVE && len < chunk {
            self.buffer.shrink_to(chunk.max(len));
        }
        let capacity = self.buffer.capacity();
        if capacity - len < chunk {
            // `len <= max_message_size` here (longer partial lines are discarded),
            // so `len + chunk <= ceiling`.
            let target = capacity.saturating_mul(2).max(len + chunk).min(ceiling);
            self.buffer.reserve_exact(target - len);
        }
    }
}

fn keep_prefix(prefix: &mut Vec<u8>, bytes: &[u8]) {
    let room = OVERSIZE_PREFIX.saturating_sub(prefix.len());
    prefix.extend_from_slice(&bytes[..room.min(bytes.len())]);
}

fn oversize(discarding: Discarding) -> OversizeLine {
    let (id, shape) = scan_prefix(&discarding.prefix);
    OversizeLine { len: discarding.len, id, shape }
}

/// Best-effort scan of the top-level keys of a truncated JSON object: the `id`
/// value and whether `method` or `result`/`error` keys appear.
fn scan_prefix(prefix: &[u8]) -> (Option<RequestId>, OversizeShape) {
    let mut scanner = PrefixScanner { bytes: prefix, at: 0 };
    let mut id = None;
    let mut method = false;
    let mut response = false;
    let shape = |method: bool, response: bool| match (method, response) {
        (true, false) => OversizeShape::Call,
        (false, true) => OversizeShape::Response,
        _ => OversizeShape::Unknown,
    };
    if scanner.punct() != Some(b'{') {
        return (None, OversizeShape::Unknown);
    }
    while let Some(key) = scanner.string() {
        if scanner.punct() != Some(b':') {
            break;
        }
        match key {
            b"method" => method = true,
            b"result" | b"error" => response = true,
            _ => {}
        }
        scanner.skip_whitespace();
        let value_start = scanner.at;
        if !scanner.skip_value() {
            break;
        }
        if key == b"id" {
            id = serde_json::from_slice::<RequestId>(&prefix[value_start..scanner.at]).ok();
        }
        if scanner.punct() != Some(b',') {
            break;
        }
    }
    (id, shape(method, response))
}

struct PrefixScanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> PrefixScanner<'a> {
    fn skip_whitespace(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn punct(&mut self) -> Option<u8> {
        self.skip_whitespace();
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    /// A string's raw contents (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        if self.punct()? != b'"' {
            return None;
        }
        let start = self.at;
        self.skip_string_rest().then(|| &self.bytes[start..self.at - 1])
    }

    /// After an opening quote: to just past the closing quote.
    fn skip_string_rest(&mut self) -> bool {
        while let Some(&byte) = self.bytes.get(self.at) {
            self.at += 1;
            match byte {
                b'\\' => self.at += 1,
                b'"' => return true,
                _ => {}
            }
        }
        false
    }

    /// Skips one complete value; `false` when the prefix ends inside it.
    fn skip_value(&mut self) -> bool {
        let mut depth = 0usize;
        loop {
            let Some(&byte) = self.bytes.get(self.at) else {
                return false;
            };
            self.at += 1;
            match byte {
                b'"' if !self.skip_string_rest() => return false,
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    if depth == 0 {
                        // The end of the enclosing object: not part of this value.
                        self.at -= 1;
                        return true;
                    }
                    depth -= 1;
                }
                b',' if depth == 0 => {
                    self.at -= 1;
                    return true;
                }
                _ => {}
            }
            if depth == 0 && matches!(byte, b'"' | b']' | b'}') {
                return true;
            }
        }
    }
}

/// Writes one message per line to an [`AsyncWrite`], batching under load.
#[derive(Debug)]
pub struct FrameWriter<W> {
    writer: W,
    buffer: Vec<u8>,
    threshold: usize,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    /// A writer that writes out its buffer once it exceeds 64 KiB.
    pub fn new(writer: W) -> FrameWriter<W> {
        FrameWriter { writer, buffer: Vec::with_capacity(8 * 1024), threshold: 64 * 1024 }
    }

    /// Buffers `message` and a newline; writes the buffer out if it is large.
    pub async fn send(&mut self, message: &Message) -> io::Result<()> {
        message.encode_into(&mut self.buffer);
        self.buffer.push(b'\n');
        self.write_out_if_large().await
    }

    /// Buffers one already-encoded line (which must not contain `\n`) and a newline.
    pub async fn send_line(&mut self, line: &[u8]) -> io::Result<()> {
        debug_assert!(!line.contains(&b'\n'), "a frame must not contain a newline");
        self.buffer.extend_from_slice(line);
        self.buffer.push(b'\n');
        self.write_out_if_large().await
    }

    /// Writes everything buffered and flushes the underlying writer.
    pub async fn flush(&mut self) -> io::Result<()> {
        if !self.buffer.is_empty() {
            self.writer.write_all(&self.buffer).await?;
            self.buffer.clear();
        }
        self.writer.flush().await
    }

    /// Flushes and shuts the underlying writer down.
    pub async fn shutdown(&mut self) -> io::Result<()> {
        self.flush().await?;
        self.writer.shutdown().await
    }

    async fn write_out_if_large(&mut self) -> io::Result<()> {
        if self.buffer.len() >= self.threshold {
            self.writer.write_all(&self.buffer).await?;
            self.buffer.clear();
            if self.buffer.capacity() > SHRINK_ABOVE {
                self.buffer.shrink_to(self.threshold);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
