//! Traces: JSON Lines files of the messages that crossed a connection.
//!
//! One record per message: `{"t":<unix time in µs>,"dir":"c2a"|"a2c","raw":"<the
//! line, without its newline>"}`. A line that is not UTF-8 is stored as
//! `"raw_base64"` instead of `"raw"`, so a trace replays byte for byte. A message
//! the inspector wrote itself (`--strict` answers) carries `"origin":"inspector"`.
//! A message over the size limit, which the proxy passes on without holding it,
//! is recorded as `{"t":…,"dir":…,"oversize":<its length>,"head":"<its first
//! bytes>"}` (`"head_base64"` when they are not UTF-8): the head is what the
//! inspector itself looked at, so a replay reaches the same findings.
//!
//! The proxy writes each record with one `write` as the message passes, so a
//! killed proxy leaves every message it forwarded on disk. A trace whose last
//! line was cut short (a writer killed mid-line) still reads: [`read`] skips
//! that line and says so in [`Trace::torn`].

use std::io::{self, BufRead, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::Value;

use crate::finding::Direction;

/// How many leading bytes of an oversize message the inspector keeps and
/// judges: the same prefix the JSON-RPC framing keeps to recover an id.
pub const HEAD_BYTES: usize = agentproto_jsonrpc::frame::OVERSIZE_PREFIX;

/// The head of an oversize line: its first [`HEAD_BYTES`] bytes, less a UTF-8
/// sequence the cut split (so a text line keeps a text head).
pub fn head(line: &[u8]) -> &[u8] {
    let cut = &line[..line.len().min(HEAD_BYTES)];
    match std::str::from_utf8(cut) {
        Err(e) if e.error_len().is_none() => &cut[..e.valid_up_to()],
        _ => cut,
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The peer named by the direction.
    Peer,
    /// The inspector, answering in place of a peer (`--strict`).
    Inspector,
}

/// One message of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// When it was read, in microseconds since the Unix epoch.
    pub time_us: u64,
    /// Which way it went.
    pub direction: Direction,
    /// Who wrote it.
    pub origin: Origin,
    /// The line's bytes, without the newline; for an oversize message, its
    /// [`head`].
    pub bytes: Vec<u8>,
    /// For a message over the size limit: its whole length, without the newline.
    pub oversize: Option<u64>,
}

/// Microseconds since the Unix epoch, now.
pub fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

impl Record {
    /// A record of `bytes` read now.
    pub fn now(direction: Direction, origin: Origin, bytes: &[u8]) -> Record {
        Record { time_us: now_us(), direction, origin, bytes: bytes.to_vec(), oversize: None }
    }

    /// The record as one JSON line with its newline, members in the documented order.
    pub fn to_line(&self) -> Vec<u8> {
        let mut out = format!("{{\"t\":{},\"dir\":\"{}\",", self.time_us, self.direction.as_str()).into_bytes();
        let (text_key, base64_key) = match self.oversize {
            Some(len) => {
                out.extend_from_slice(format!("\"oversize\":{len},").as_bytes());
                ("head", "head_base64")
            }
            None => ("raw", "raw_base64"),
        };
        let value = match std::str::from_utf8(&self.bytes) {
            Ok(text) => (text_key, text.to_owned()),
            Err(_) => (base64_key, base64::engine::general_purpose::STANDARD.encode(&self.bytes)),
        };
        out.extend_from_slice(format!("\"{}\":", value.0).as_bytes());
        out.extend_from_slice(Value::String(value.1).to_string().as_bytes());
        if self.origin == Origin::Inspector {
            out.extend_from_slice(b",\"origin\":\"inspector\"");
        }
        out.extend_from_slice(b"}\n");
        out
    }

    /// Writes the record as one JSON line with a single `write_all`, so the
    /// line is never split across two writes of this process.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.to_line())
    }

    /// Parses one trace line; the error names what is wrong.
    pub fn parse(line: &str) -> Result<Record, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let object = value.as_object().ok_or("expected an object")?;
        let time_us = match object.get("t") {
            Some(t) => t.as_u64().ok_or("`t` must be a non-negative integer (µs since the epoch)")?,
            None => 0,
        };
        let direction = object
            .get("dir")
            .and_then(Value::as_str)
            .and_then(Direction::parse)
            .ok_or("`dir` must be \"c2a\" or \"a2c\"")?;
        let origin = match object.get("origin").and_then(Value::as_str) {
            None | Some("peer") => Origin::Peer,
            Some("inspector") => Origin::Inspector,
            Some(other) => return Err(format!("unknown `origin` {other:?}")),
        };
        let oversize = match object.get("oversize") {
            Some(len) => Some(len.as_u64().ok_or("`oversize` must be a non-negative integer (a length)")?),
            None => None,
        };
        let (text_key, base64_key) = if oversize.is_some() { ("head", "head_base64") } else { ("raw", "raw_base64") };
        let bytes = match (object.get(text_key), object.get(base64_key)) {
            (Some(Value::String(raw)), None) => raw.as_bytes().to_vec(),
            (None, Some(Value::String(encoded))) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("`{base64_key}` is not base64: {e}"))?,
            _ => return Err(format!("expected exactly one of `{text_key}` (a string) and `{base64_key}`")),
        };
        Ok(Record { time_us, direction, origin, bytes, oversize })
    }
}

/// A trace as read back.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Every complete record, in order.
    pub records: Vec<Record>,
    /// Why the last line was skipped, when it was cut short (no newline and not
    /// a complete record): what a writer killed mid-line leaves behind.
    pub torn: Option<String>,
}

/// Reads a whole trace. A bad line is an error that names it, except a last
/// line without its newline that does not parse, which is skipped and reported
/// in [`Trace::torn`].
pub fn read(mut input: impl BufRead) -> Result<Trace, String> {
    let mut trace = Trace::default();
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        input.read_until(b'\n', &mut line).map_err(|e| format!("line {number}: {e}"))?;
        if line.is_empty() {
            break;
        }
        let complete = line.ends_with(b"\n");
        let text = match std::str::from_utf8(&line) {
            Ok(text) => text.trim_end_matches(['\n', '\r']),
            Err(e) if !complete => {
                trace.torn = Some(format!("line {number} is cut short ({} bytes, no newline): {e}", line.len()));
                break;
            }
            Err(e) => return Err(format!("line {number}: not UTF-8: {e}")),
        };
        if text.trim().is_empty() {
            continue;
        }
        match Record::parse(text) {
            Ok(record) => trace.records.push(record),
            Err(e) if !complete => {
                trace.torn = Some(format!("line {number} is cut short ({} bytes, no newline): {e}", line.len()));
                break;
            }
            Err(e) => return Err(format!("line {number}: {e}")),
        }
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_including_non_utf8_lines() {
        let records = [
            Record {
                time_us: 7,
                direction: Direction::ToAgent,
                origin: Origin::Peer,
                bytes: br#"{"a":"\u00e9"}"#.to_vec(),
                oversize: None,
            },
            Record {
                time_us: 8,
                direction: Direction::ToClient,
                origin: Origin::Inspector,
                bytes: vec![0xff, b'x'],
                oversize: None,
            },
            Record {
                time_us: 9,
                direction: Direction::ToAgent,
                origin: Origin::Peer,
                bytes: br#"{"id":3,"params":{"x":"#.to_vec(),
                oversize: Some(70_000),
            },
            Record {
                time_us: 10,
                direction: Direction::ToClient,
                origin: Origin::Peer,
                bytes: vec![0xfe],
                oversize: Some(9),
            },
        ];
        let mut out = Vec::new();
        for record in &records {
            record.write_to(&mut out).unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("raw_base64") && text.contains("\"oversize\":70000,\"head\":"), "{text}");
        assert!(text.contains("head_base64"), "{text}");
        assert_eq!(read(text.as_bytes()).unwrap(), Trace { records: records.to_vec(), torn: None });
    }

    #[test]
    fn bad_records_name_their_line() {
        let error = read(&b"{\"dir\":\"c2a\",\"raw\":\"{}\"}\n{\"dir\":\"x\",\"raw\":\"\"}\n"[..]).unwrap_err();
        assert!(error.starts_with("line 2: `dir`"), "{error}");
        // A bad line that has its newline is no torn tail.
        let error = read(&b"{\"dir\":\"c2a\",\"raw\":\"{}\"}\n{\"dir\":\"c2a\",\"ra\n"[..]).unwrap_err();
        assert!(error.starts_with("line 2: not JSON"), "{error}");
    }

    #[test]
    fn a_last_line_cut_short_is_skipped_with_a_note() {
        let whole = Record::now(Direction::ToAgent, Origin::Peer, "{\"text\":\"héllo\"}".as_bytes()).to_line();
        for cut in 1..whole.len() - 1 {
            let mut text = whole.clone();
            text.extend_from_slice(&whole[..cut]);
            let trace = read(&text[..]).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
            assert_eq!(trace.records.len(), 1, "cut at {cut}");
            let note = trace.torn.unwrap_or_else(|| panic!("cut at {cut}: no note"));
            assert!(note.starts_with("line 2 is cut short"), "{note}");
        }
        // The whole record without its newline is complete.
        let mut text = whole.clone();
        text.extend_from_slice(&whole[..whole.len() - 1]);
        assert_eq!(read(&text[..]).unwrap().records.len(), 2);
    }

    #[test]
    fn heads_are_cut_on_a_character_boundary() {
        let mut line = vec![b'a'; HEAD_BYTES - 1];
        line.extend_from_slice("é and more".as_bytes());
        assert_eq!(head(&line), &line[..HEAD_BYTES - 1]);
        assert_eq!(head(b"short"), b"short");
        // Bytes that are not UTF-8 anyway are cut where they are.
        let binary = vec![0xff; HEAD_BYTES + 5];
        assert_eq!(head(&binary).len(), HEAD_BYTES);
    }
}
