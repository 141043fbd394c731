//! Traces: JSON Lines files of the messages that crossed a connection.
//!
//! One record per message: `{"t":<unix time in µs>,"dir":"c2a"|"a2c","raw":"<the
//! line, without its newline>"}`. A line that is not UTF-8 is stored as
//! `"raw_base64"` instead of `"raw"`, so a trace replays byte for byte. A message
//! the inspector wrote itself (`--strict` answers) carries `"origin":"inspector"`.

use std::io::{self, BufRead, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::Value;

use crate::finding::Direction;

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
    /// The line's bytes, without the newline.
    pub bytes: Vec<u8>,
}

/// Microseconds since the Unix epoch, now.
pub fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

impl Record {
    /// A record of `bytes` read now.
    pub fn now(direction: Direction, origin: Origin, bytes: &[u8]) -> Record {
        Record { time_us: now_us(), direction, origin, bytes: bytes.to_vec() }
    }

    /// Writes the record as one JSON line, members in the documented order.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        write!(out, "{{\"t\":{},\"dir\":\"{}\",", self.time_us, self.direction.as_str())?;
        match std::str::from_utf8(&self.bytes) {
            Ok(text) => {
                out.write_all(b"\"raw\":")?;
                serde_json::to_writer(&mut *out, text)?;
            }
            Err(_) => {
                out.write_all(b"\"raw_base64\":")?;
                serde_json::to_writer(&mut *out, &base64::engine::general_purpose::STANDARD.encode(&self.bytes))?;
            }
        }
        if self.origin == Origin::Inspector {
            out.write_all(b",\"origin\":\"inspector\"")?;
        }
        out.write_all(b"}\n")
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
        let bytes = match (object.get("raw"), object.get("raw_base64")) {
            (Some(Value::String(raw)), None) => raw.as_bytes().to_vec(),
            (None, Some(Value::String(encoded))) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("`raw_base64` is not base64: {e}"))?,
            _ => return Err("expected exactly one of `raw` (a string) and `raw_base64`".into()),
        };
        Ok(Record { time_us, direction, origin, bytes })
    }
}

/// Reads a whole trace; the error names the line.
pub fn read(input: impl BufRead) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    for (number, line) in input.lines().enumerate() {
        let line = line.map_err(|e| format!("line {}: {e}", number + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        records.push(Record::parse(&line).map_err(|e| format!("line {}: {e}", number + 1))?);
    }
    Ok(records)
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
            },
            Record { time_us: 8, direction: Direction::ToClient, origin: Origin::Inspector, bytes: vec![0xff, b'x'] },
        ];
        let mut out = Vec::new();
        for record in &records {
            record.write_to(&mut out).unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("raw_base64"));
        assert_eq!(read(text.as_bytes()).unwrap(), records);
    }

    #[test]
    fn bad_records_name_their_line() {
        let error = read(&b"{\"dir\":\"c2a\",\"raw\":\"{}\"}\n{\"dir\":\"x\",\"raw\":\"\"}\n"[..]).unwrap_err();
        assert!(error.starts_with("line 2: `dir`"), "{error}");
    }
}
