//! Reading Server-Sent Events as this transport uses them: one JSON-RPC message per
//! event, in `data:` lines; comments and other fields are skipped. Event ids and
//! `retry` are not used (the RFD defers resumption).

/// Splits an event stream, fed in chunks, into the `data` of its events (lines of one
/// event joined with LF). Lines end with LF, CRLF or CR. One event may buffer at most
/// `max_event` bytes: a longer one is dropped (and counted in `oversize`).
pub(crate) struct SseParser {
    max_event: usize,
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    skipping: bool,
    after_cr: bool,
    pub(crate) oversize: u64,
}

impl SseParser {
    pub(crate) fn new(max_event: usize) -> SseParser {
        SseParser {
            max_event,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            skipping: false,
            after_cr: false,
            oversize: 0,
        }
    }

    /// Feeds one chunk; every event it completes is pushed to `out`.
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<Vec<u8>>) {
        for &byte in chunk {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue; // the LF of a CRLF
                }
            }
            match byte {
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    self.end_line(out);
                }
                _ if self.line.len() > self.max_event + 16 => {
                    if !self.skipping {
                        self.oversize += 1;
                    }
                    self.skipping = true;
                    self.line.clear();
                }
                _ => self.line.push(byte),
            }
        }
    }

    fn end_line(&mut self, out: &mut Vec<Vec<u8>>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.has_data && !self.skipping {
                out.push(std::mem::take(&mut self.data));
            }
            self.data.clear();
            self.has_data = false;
            self.skipping = false;
            return;
        }
        if self.skipping || line[0] == b':' {
            return;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => (&line[..at], &line[at + 1..]),
            None => (&line[..], &[][..]),
        };
        if name != b"data" {
            return;
        }
        let value = value.strip_prefix(b" ").unwrap_or(value);
        if self.has_data {
            self.data.push(b'\n');
        }
        self.data.extend_from_slice(value);
        self.has_data = true;
        if self.data.len() > self.max_event {
            self.oversize += 1;
            self.skipping = true;
            self.data.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let mut parser = SseParser::new(64);
        let mut out = Vec::new();
        parser.feed(b": keepalive\n\ndata: {\"a\"", &mut out);
        parser.feed(b":1}\r", &mut out);
        parser.feed(b"\n\r\nevent: x\ndata:2\ndata: 3\n\n", &mut out);
        assert_eq!(out, vec![b"{\"a\":1}".to_vec(), b"2\n3".to_vec()]);
    }

    #[test]
    fn an_event_over_the_limit_is_dropped() {
        let mut parser = SseParser::new(4);
        let mut out = Vec::new();
        parser.feed(b"data: 123456789\n\ndata: ok\n\n", &mut out);
        assert_eq!(out, vec![b"ok".to_vec()]);
        assert_eq!(parser.oversize, 1);
    }
}
