//! The bounded output buffer of one terminal.

use std::collections::VecDeque;

/// The last `limit` bytes of a command's output (or fewer, after a cut on a
/// character boundary).
#[derive(Debug)]
pub(super) struct OutputBuffer {
    bytes: VecDeque<u8>,
    limit: usize,
    truncated: bool,
}

impl OutputBuffer {
    pub(super) fn new(limit: usize) -> OutputBuffer {
        OutputBuffer { bytes: VecDeque::new(), limit, truncated: false }
    }

    /// Appends `chunk`, dropping the oldest bytes beyond the limit.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        let mut cut = false;
        let chunk = if chunk.len() > self.limit {
            cut = !chunk.is_empty();
            self.bytes.clear();
            &chunk[chunk.len() - self.limit..]
        } else {
            chunk
        };
        self.bytes.extend(chunk);
        let excess = self.bytes.len().saturating_sub(self.limit);
        if excess > 0 {
            self.bytes.drain(..excess);
            cut = true;
        }
        if cut {
            self.truncated = true;
            // Start on a character: drop the rest of a character cut in two (a
            // UTF-8 character has at most three continuation bytes).
            for _ in 0..3 {
                if !self.bytes.front().is_some_and(|&byte| is_continuation(byte)) {
                    break;
                }
                self.bytes.pop_front();
            }
        }
    }

    /// The text kept and whether anything was dropped. Invalid bytes read as
    /// U+FFFD; while the command runs (`finished` false), an incomplete character
    /// at the end is left out, since its remaining bytes may still come.
    pub(super) fn snapshot(&mut self, finished: bool) -> (String, bool) {
        let bytes = self.bytes.make_contiguous();
        let mut text = String::with_capacity(bytes.len());
        let mut chunks = bytes.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            text.push_str(chunk.valid());
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            let pending = !finished && chunks.peek().is_none() && is_incomplete_character(invalid);
            if !pending {
                text.push(char::REPLACEMENT_CHARACTER);
            }
        }
        let mut truncated = self.truncated;
        // Replacement characters are longer than the bytes they stand for.
        if text.len() > self.limit {
            let mut start = text.len() - self.limit;
            while !text.is_char_boundary(start) {
                start += 1;
            }
            text.drain(..start);
            truncated = true;
        }
        (text, truncated)
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// Whether `bytes` are the start of a valid character that lacks its last bytes.
fn is_incomplete_character(bytes: &[u8]) -> bool {
    matches!(std::str::from_utf8(bytes), Err(error) if error.error_len().is_none())
}
