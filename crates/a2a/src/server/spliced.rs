//! An answer body sent from the texts it holds instead of from a copy of them.
//!
//! A `SendMessage` answer is the task, whose history and artifacts may hold megabytes of
//! text that the task already holds once, shared ([`crate::Text`]). Encoded whole, the
//! answer is one more copy of all of it per request in flight (three for the demo's
//! echo). Encoded by [`crate::text::splicing`], it is the JSON around those texts plus
//! the texts themselves, shared: the body escapes each text a slice at a time as it is
//! written, so what the answer adds is a slice per request, not its size. Its length is
//! known in advance (the escaped length of a text is counted without escaping it).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

use crate::text::{splicing, SpliceWriter};

/// How much of a text is escaped into one frame.
const SLICE: usize = 64 << 10;

/// A JSON text as pieces: bytes, and large texts to be written as the content of a JSON
/// string (escaped as they go out).
#[derive(Debug, Default)]
pub(crate) struct Spliced {
    pieces: VecDeque<Piece>,
    len: u64,
}

#[derive(Debug)]
enum Piece {
    Bytes(Bytes),
    /// A text from byte `at` on, to be written escaped.
    Text {
        text: Arc<str>,
        at: usize,
    },
}

impl Spliced {
    /// The JSON `encode` writes, with its large texts spliced in as it is sent; `None`
    /// when it cannot be spliced (encode it plainly then).
    pub(crate) fn encode(encode: impl FnOnce(&mut SpliceWriter) -> std::io::Result<()>) -> Option<Spliced> {
        let encoded = splicing(encode)?;
        let buf = Bytes::from(encoded.buf);
        let mut spliced = Spliced::default();
        let mut from = 0;
        for (at, text) in encoded.texts {
            spliced.push(buf.slice(from..at));
            spliced.len += escaped_len(&text) as u64;
            spliced.pieces.push_back(Piece::Text { text, at: 0 });
            from = at;
        }
        spliced.push(buf.slice(from..));
        Some(spliced)
    }

    /// `bytes` as they are.
    pub(crate) fn plain(bytes: Vec<u8>) -> Spliced {
        let mut spliced = Spliced::default();
        spliced.push(Bytes::from(bytes));
        spliced
    }

    /// This JSON between `head` and `tail` (an envelope around a result).
    pub(crate) fn wrapped(mut self, head: Vec<u8>, tail: &'static [u8]) -> Spliced {
        self.len += (head.len() + tail.len()) as u64;
        self.pieces.push_front(Piece::Bytes(Bytes::from(head)));
        self.pieces.push_back(Piece::Bytes(Bytes::from_static(tail)));
        self
    }

    /// The bytes, when no text is spliced in (a small answer goes out as one buffer).
    pub(crate) fn into_plain(mut self) -> Result<Vec<u8>, Spliced> {
        if self.pieces.iter().any(|p| matches!(p, Piece::Text { .. })) {
            return Err(self);
        }
        let mut out = Vec::with_capacity(self.len as usize);
        while let Some(Piece::Bytes(b)) = self.pieces.pop_front() {
            out.extend_from_slice(&b);
        }
        Ok(out)
    }

    fn push(&mut self, bytes: Bytes) {
        if !bytes.is_empty() {
            self.len += bytes.len() as u64;
            self.pieces.push_back(Piece::Bytes(bytes));
        }
    }

    /// The next frame's bytes.
    fn next_bytes(&mut self) -> Option<Bytes> {
        match self.pieces.pop_front()? {
            Piece::Bytes(bytes) => Some(bytes),
            Piece::Text { text, at } => {
                let mut end = (at + SLICE).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                let escaped = escape(&text[at..end]);
                if end < text.len() {
                    self.pieces.push_front(Piece::Text { text, at: end });
                }
                Some(escaped)
            }
        }
    }
}

impl http_body::Body for Spliced {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self.next_bytes();
        if let Some(bytes) = &next {
            self.len -= bytes.len() as u64;
        }
        Poll::Ready(next.map(|bytes| Ok(Frame::data(bytes))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len)
    }
}

/// `text` as the content of a JSON string, escaped as `serde_json` escapes it.
fn escape(text: &str) -> Bytes {
    let quoted = serde_json::to_vec(text).unwrap_or_default();
    Bytes::from(quoted).slice(1..escaped_len(text) + 1)
}

/// The length of `text` escaped as the content of a JSON string by `serde_json`: the
/// quote and the backslash take two bytes, a control character two (`\n` and the other
/// short forms) or six (`\u001f`), anything else itself.
fn escaped_len(text: &str) -> usize {
    text.bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::{Part, PartContent, Task, TaskState, TaskStatus};
    use std::io::Write;

    fn task_with(text: &str) -> Task {
        let mut t = Task::new("t-1", TaskStatus::new(TaskState::Completed));
        let part = Part::new(PartContent::Text(text.into()));
        t.history.push(crate::v1::Message::new("m-1", crate::v1::Role::User, vec![part.clone(), part]));
        t
    }

    async fn sent(spliced: Spliced) -> (Option<u64>, Vec<u8>) {
        let exact = http_body::Body::size_hint(&spliced).exact();
        (exact, axum::body::to_bytes(axum::body::Body::new(spliced), usize::MAX).await.unwrap().to_vec())
    }

    #[tokio::test]
    async fn a_spliced_task_is_sent_as_the_plain_encoding_with_its_exact_length() {
        let odd = "a\"b\\c\nd\u{1}é€😀\u{7f}";
        let text = odd.repeat(SLICE / 8);
        assert!(text.len() > SLICE * 2);
        let task = task_with(&text);
        let spliced = Spliced::encode(|w| {
            w.write_all(b"{\"task\":")?;
            serde_json::to_writer(&mut *w, &task)?;
            w.write_all(b"}")
        })
        .expect("spliced");
        assert_eq!(spliced.pieces.iter().filter(|p| matches!(p, Piece::Text { .. })).count(), 2);
        let (exact, bytes) = sent(spliced.wrapped(b"[".to_vec(), b"]")).await;
        let expected = [&b"[{\"task\":"[..], &serde_json::to_vec(&task).unwrap(), b"}]"].concat();
        assert_eq!(String::from_utf8(bytes.clone()).unwrap(), String::from_utf8(expected).unwrap());
        assert_eq!(exact, Some(bytes.len() as u64));
    }

    #[tokio::test]
    async fn small_texts_stay_in_the_bytes() {
        let task = task_with("hi");
        let spliced = Spliced::encode(|w| Ok(serde_json::to_writer(w, &task)?)).unwrap();
        assert_eq!(spliced.into_plain().unwrap(), serde_json::to_vec(&task).unwrap());
    }

    #[test]
    fn a_text_serialized_elsewhere_inside_splicing_is_no_splice() {
        let task = task_with(&"x".repeat(SLICE * 2));
        assert!(Spliced::encode(|_| {
            serde_json::to_vec(&task)?;
            Ok(())
        })
        .is_none());
    }
}
