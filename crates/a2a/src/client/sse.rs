//! An incremental Server-Sent Events reader (the WHATWG event-stream format): lines end
//! in LF, CRLF or CR; `data:` lines of one event are joined with LF; lines starting
//! with `:` are comments (keep-alives); a blank line ends an event; an event without
//! data is not dispatched; a partial event at end of input is dropped.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` name, `message` when none was given.
    pub(crate) event: String,
    /// The data lines joined with LF.
    pub(crate) data: Vec<u8>,
    /// The `id:` given in this very event (not inherited from earlier ones).
    pub(crate) id: Option<String>,
}

/// Feeds bytes in with [`SseParser::push`], takes events out with [`SseParser::next_event`].
#[derive(Debug)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    pos: usize,
    /// The previous line ended in CR: a LF right after it belongs to that line end.
    skip_lf: bool,
    data: Vec<u8>,
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    max_event: usize,
}

impl SseParser {
    /// A reader that refuses events (or lines) larger than `max_event` bytes.
    pub(crate) fn new(max_event: usize) -> Self {
        SseParser {
            buf: Vec::new(),
            pos: 0,
            skip_lf: false,
            data: Vec::new(),
            has_data: false,
            event: None,
            id: None,
            max_event,
        }
    }

    /// Appends received bytes.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event, `Ok(None)` when more bytes are needed.
    pub(crate) fn next_event(&mut self) -> Result<Option<SseEvent>, String> {
        loop {
            if self.skip_lf && self.pos < self.buf.len() {
                if self.buf[self.pos] == b'\n' {
                    self.pos += 1;
                }
                self.skip_lf = false;
            }
            let rest = &self.buf[self.pos..];
            let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') else {
                if rest.len() > self.max_event {
                    return Err(format!("an SSE line is longer than {} bytes", self.max_event));
                }
                return Ok(None);
            };
            let line_start = self.pos;
            self.skip_lf = rest[end] == b'\r';
            self.pos += end + 1;
            let line = line_start..line_start + end;
            if let Some(event) = self.line(line)? {
                return Ok(Some(event));
            }
        }
    }

    fn line(&mut self, range: std::ops::Range<usize>) -> Result<Option<SseEvent>, String> {
        let line = &self.buf[range];
        if line.is_empty() {
            let event = self.event.take();
            let id = self.id.take();
            if !self.has_data {
                return Ok(None);
            }
            self.has_data = false;
            let mut data = std::mem::take(&mut self.data);
            data.pop(); // the LF after the last data line
            return Ok(Some(SseEvent { event: event.unwrap_or_else(|| "message".to_owned()), data, id }));
        }
        if line[0] == b':' {
            return Ok(None);
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    return Err(format!("an SSE event is larger than {} bytes", self.max_event));
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if !value.contains(&0) => {
                self.id = if value.is_empty() { None } else { Some(String::from_utf8_lossy(value).into_owned()) };
            }
            _ => {} // `retry:` and unknown fields are ignored
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(parser: &mut SseParser) -> Vec<SseEvent> {
        let mut out = Vec::new();
        while let Some(e) = parser.next_event().unwrap() {
            out.push(e);
        }
        out
    }

    #[test]
    fn multi_line_data_comments_ids_and_names() {
        let mut p = SseParser::new(1 << 20);
        p.push(b": keep-alive\n\nid: 7\nevent: gap\ndata: a\ndata:b\n\ndata: c\n\n");
        let events = all(&mut p);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0], SseEvent { event: "gap".into(), data: b"a\nb".to_vec(), id: Some("7".into()) });
        assert_eq!(events[1], SseEvent { event: "message".into(), data: b"c".to_vec(), id: None });
    }

    #[test]
    fn crlf_and_cr_split_anywhere() {
        let text = b"data: x\r\n\r\ndata: y\r\rid: 3\r\ndata: z\n\n";
        for split in 0..text.len() {
            let mut p = SseParser::new(1 << 20);
            p.push(&text[..split]);
            let mut events = all(&mut p);
            p.push(&text[split..]);
            events.extend(all(&mut p));
            let data: Vec<_> = events.iter().map(|e| e.data.clone()).collect();
            assert_eq!(data, vec![b"x".to_vec(), b"y".to_vec(), b"z".to_vec()], "split at {split}");
            assert_eq!(events[2].id.as_deref(), Some("3"));
        }
    }

    #[test]
    fn oversize_is_an_error() {
        let mut p = SseParser::new(8);
        p.push(b"data: 0123456789\n");
        assert!(p.next_event().is_err());
        let mut p = SseParser::new(8);
        p.push(b"data: 0123456789");
        assert!(p.next_event().is_err());
    }
}
