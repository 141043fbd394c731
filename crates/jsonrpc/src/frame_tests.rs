//! Framing tests: line endings, blank lines, oversize lines, tiny reads, EOF.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::ReadBuf;

use super::*;

/// Serves `data` in reads of at most `chunk` bytes.
pub(crate) struct TrickleReader {
    data: Vec<u8>,
    at: usize,
    chunk: usize,
}

impl TrickleReader {
    pub(crate) fn new(data: impl Into<Vec<u8>>, chunk: usize) -> TrickleReader {
        TrickleReader { data: data.into(), at: 0, chunk: chunk.max(1) }
    }
}

impl AsyncRead for TrickleReader {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let end = (self.at + self.chunk).min(self.data.len()).min(self.at + buf.remaining());
        let at = self.at;
        buf.put_slice(&self.data[at..end]);
        self.at = end;
        Poll::Ready(Ok(()))
    }
}

/// What the reader produced, owned.
#[derive(Debug, PartialEq)]
enum Got {
    Line(String),
    Oversize(u64, Option<RequestId>, OversizeShape),
}

async fn frames(data: &[u8], chunk: usize, limits: FrameLimits) -> Vec<Got> {
    let mut reader = FrameReader::with_limits(TrickleReader::new(data, chunk), limits);
    let mut got = Vec::new();
    while let Some(frame) = reader.next_frame().await.unwrap() {
        got.push(match frame {
            Frame::Line(line) => Got::Line(String::from_utf8_lossy(line).into_owned()),
            Frame::Oversize(line) => Got::Oversize(line.len, line.id, line.shape),
        });
        assert!(
            reader.buffer_capacity() <= limits.max_message_size + limits.read_chunk_size,
            "capacity {} over the bound",
            reader.buffer_capacity()
        );
    }
    got
}

fn lines(items: &[&str]) -> Vec<Got> {
    items.iter().map(|item| Got::Line(item.to_string())).collect()
}

fn small(max: usize) -> FrameLimits {
    FrameLimits { max_message_size: max, read_chunk_size: 8 }
}

#[tokio::test]
async fn splits_on_lf() {
    let got = frames(b"{\"a\":1}\n{\"b\":2}\n", 1024, FrameLimits::default()).await;
    assert_eq!(got, lines(&["{\"a\":1}", "{\"b\":2}"]));
}

#[tokio::test]
async fn strips_one_trailing_cr() {
    let got = frames(b"one\r\ntwo\r\r\nthree\n", 1024, FrameLimits::default()).await;
    assert_eq!(got, lines(&["one", "two\r", "three"]));
}

#[tokio::test]
async fn skips_blank_and_whitespace_lines() {
    let got = frames(b"\n\r\n  \t \nx\n\n \r\ny", 1024, FrameLimits::default()).await;
    assert_eq!(got, lines(&["x", "y"]));
}

#[tokio::test]
async fn last_line_without_newline_counts() {
    let got = frames(b"a\nlast", 1024, FrameLimits::default()).await;
    assert_eq!(got, lines(&["a", "last"]));
    let got = frames(b"last\r", 1024, FrameLimits::default()).await;
    assert_eq!(got, lines(&["last"]));
    assert_eq!(frames(b"", 1024, FrameLimits::default()).await, vec![]);
}

#[tokio::test]
async fn one_byte_reads() {
    let data = b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\r\n\n{\"x\":[1,2,3]}\nend";
    let got = frames(data, 1, small(64)).await;
    assert_eq!(got, lines(&["{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", "{\"x\":[1,2,3]}", "end"]));
}

#[tokio::test]
async fn oversize_line_is_skipped_and_the_next_decoded() {
    let big = format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"m\",\"params\":\"{}\"}}", "x".repeat(500));
    let data = format!("ok1\n{big}\nok2\n");
    for chunk in [1, 3, 8, 1000] {
        let got = frames(data.as_bytes(), chunk, small(100)).await;
        assert_eq!(
            got,
            vec![
                Got::Line("ok1".into()),
                Got::Oversize(big.len() as u64, Some(RequestId::number(7)), OversizeShape::Call),
                Got::Line("ok2".into()),
            ],
            "chunk {chunk}"
        );
    }
}

#[tokio::test]
async fn oversize_at_eof_and_exact_limit() {
    let got = frames(b"abcdef", 4, small(5)).await;
    assert_eq!(got, vec![Got::Oversize(6, None, OversizeShape::Unknown)]);
    let got = frames(b"abcde\nabcdef\nabcde", 2, small(5)).await;
    assert_eq!(
        got,
        vec![Got::Line("abcde".into()), Got::Oversize(6, None, OversizeShape::Unknown), Got::Line("abcde".into()),]
    );
}

#[tokio::test]
async fn oversize_response_id_is_recovered() {
    let big = format!(r#"{{"jsonrpc":"2.0","id":"r-1","result":{{"data":"{}"}}}}"#, "y".repeat(10_000));
    let got = frames(format!("{big}\n").as_bytes(), 64, small(1000)).await;
    assert_eq!(got, vec![Got::Oversize(big.len() as u64, Some(RequestId::string("r-1")), OversizeShape::Response)]);
}

#[test]
fn prefix_scan_is_best_effort() {
    assert_eq!(
        scan_prefix(br#"{"method":"m","params":{"a":[1,{"b":"}"}]},"id":12,"x""#),
        (Some(RequestId::number(12)), OversizeShape::Call)
    );
    // The id number may be cut short: not trusted.
    assert_eq!(scan_prefix(br#"{"id":12"#), (None, OversizeShape::Unknown));
    assert_eq!(scan_prefix(br#"{"params":{"id":3}, "error""#), (None, OversizeShape::Unknown));
    assert_eq!(scan_prefix(br#"[1,2"#), (None, OversizeShape::Unknown));
    assert_eq!(scan_prefix(br#"{"id":1.5,"error":{}}"#), (None, OversizeShape::Response));
}

#[tokio::test]
async fn capacity_stays_bounded_while_discarding() {
    let limits = FrameLimits { max_message_size: 1000, read_chunk_size: 100 };
    let mut data = vec![b'z'; 1_000_000];
    data.extend_from_slice(b"\nlast\n");
    let mut reader = FrameReader::with_limits(TrickleReader::new(data, 4096), limits);
    let mut seen = Vec::new();
    while let Some(frame) = reader.next_frame().await.unwrap() {
        seen.push(matches!(frame, Frame::Oversize(_)));
        assert!(reader.buffer_capacity() <= 1100);
    }
    assert_eq!(seen, vec![true, false]);
}

#[tokio::test]
async fn writer_appends_newlines_and_flushes() {
    let mut out = Vec::new();
    {
        let mut writer = FrameWriter::new(&mut out);
        writer.send(&Message::notification("a", None)).await.unwrap();
        writer.send_line(br#"{"x":1}"#).await.unwrap();
        writer.flush().await.unwrap();
    }
    assert_eq!(String::from_utf8(out).unwrap(), "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"x\":1}\n");
}
