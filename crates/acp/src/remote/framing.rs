//! Messages in, lines out: how a message transport (an HTTP body, an SSE event, a
//! WebSocket text frame) feeds the one JSON-RPC connection runtime.
//!
//! The connection ([`agentproto_jsonrpc::Connection`]) reads NDJSON from an
//! [`AsyncRead`] and writes NDJSON to an [`AsyncWrite`]. A remote transport is a
//! framing of that same byte stream: each message received becomes one line of a
//! [`MessageFeed`], and each line the connection writes becomes one message handed to
//! an [`Outlet`] through a [`LineSink`]. Validation, ordering, backpressure and
//! `$/cancel_request` therefore behave exactly as on stdio.
//!
//! Both ends are bounded in bytes: [`FeedHandle::put`] waits while the feed holds more
//! than its capacity (the transport stops reading its socket), and a [`LineSink`]
//! write waits while its outlet says it has no room (the connection's writer stops,
//! its outgoing queue fills, senders wait).

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// `message` as one NDJSON line, without its LF.
///
/// JSON allows raw line breaks only as whitespace between tokens, so a pretty-printed
/// message becomes one line by turning them into spaces. A message that is not valid
/// JSON must stay invalid: there its line breaks become NUL bytes, which no JSON text
/// accepts, so the connection still answers -32700.
pub(crate) fn one_line(message: &[u8]) -> Vec<u8> {
    if !message.contains(&b'\n') {
        return message.to_vec();
    }
    let valid = serde_json::from_slice::<serde::de::IgnoredAny>(message).is_ok();
    let with = if valid { b' ' } else { 0 };
    message.iter().map(|&b| if b == b'\n' { with } else { b }).collect()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct FeedState {
    chunks: VecDeque<Bytes>,
    /// Bytes of the front chunk already read.
    offset: usize,
    size: usize,
    closed: bool,
    reader: Option<Waker>,
}

struct FeedShared {
    state: Mutex<FeedState>,
    capacity: usize,
    room: Notify,
}

/// The reading end of a feed: what the connection reads, one line per message put.
/// Dropping it closes the feed (later puts are refused).
pub struct MessageFeed {
    shared: Arc<FeedShared>,
}

/// The writing end of a feed (cheap to clone).
#[derive(Clone)]
pub struct FeedHandle {
    shared: Arc<FeedShared>,
}

impl MessageFeed {
    /// A feed that holds up to `capacity` unread bytes before [`FeedHandle::put`] waits
    /// (one message is always accepted into an empty feed, whatever its size).
    pub fn new(capacity: usize) -> (MessageFeed, FeedHandle) {
        let state = FeedState { chunks: VecDeque::new(), offset: 0, size: 0, closed: false, reader: None };
        let shared = Arc::new(FeedShared { state: Mutex::new(state), capacity: capacity.max(1), room: Notify::new() });
        (MessageFeed { shared: shared.clone() }, FeedHandle { shared })
    }
}

impl FeedHandle {
    /// Queues `message` as one line; `false` when the feed is closed (it is dropped).
    pub async fn put(&self, message: &[u8]) -> bool {
        loop {
            let room = self.shared.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            {
                let mut state = lock(&self.shared.state);
                if state.closed {
                    return false;
                }
                if state.size <= self.shared.capacity {
                    let mut line = one_line(message);
                    line.push(b'\n');
                    state.size += line.len();
                    state.chunks.push_back(Bytes::from(line));
                    if let Some(waker) = state.reader.take() {
                        waker.wake();
                    }
                    return true;
                }
            }
            room.await;
        }
    }

    /// Ends the stream: what is queued is still read, later puts are refused.
    pub fn close(&self) {
        let mut state = lock(&self.shared.state);
        state.closed = true;
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
        drop(state);
        self.shared.room.notify_waiters();
    }

    /// Whether the feed was closed (by [`close`](Self::close) or its reader's drop).
    pub fn is_closed(&self) -> bool {
        lock(&self.shared.state).closed
    }
}

impl Drop for MessageFeed {
    fn drop(&mut self) {
        FeedHandle { shared: self.shared.clone() }.close();
    }
}

impl AsyncRead for MessageFeed {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let mut state = lock(&self.shared.state);
        if state.chunks.is_empty() {
            if state.closed {
                return Poll::Ready(Ok(()));
            }
            state.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let mut copied = 0;
        while buf.remaining() > 0 {
            let offset = state.offset;
            let Some(front) = state.chunks.front() else { break };
            let n = buf.remaining().min(front.len() - offset);
            buf.put_slice(&front[offset..offset + n]);
            copied += n;
            if offset + n == front.len() {
                state.chunks.pop_front();
                state.offset = 0;
            } else {
                state.offset += n;
            }
        }
        state.size -= copied;
        let room = state.size <= self.shared.capacity;
        drop(state);
        if room {
            self.shared.room.notify_waiters();
        }
        Poll::Ready(Ok(()))
    }
}

/// Where a [`LineSink`] hands its lines.
pub trait Outlet: Send + Sync + 'static {
    /// Takes one complete line (without its LF); runs inside the sink's write.
    fn deliver(&self, line: Bytes);
    /// Ready with `Ok` when there is room for more, with an error when the destination
    /// is gone (the write then fails: the connection ends).
    fn poll_room(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    /// The connection closed its output.
    fn closed(&self) {}
}

/// An [`AsyncWrite`] that hands every complete line to an [`Outlet`].
pub struct LineSink {
    outlet: Arc<dyn Outlet>,
    partial: Vec<u8>,
}

impl LineSink {
    /// A sink delivering to `outlet`.
    pub fn new(outlet: Arc<dyn Outlet>) -> LineSink {
        LineSink { outlet, partial: Vec::new() }
    }
}

impl AsyncWrite for LineSink {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        match self.outlet.poll_room(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
        let mut start = 0;
        while let Some(end) = data[start..].iter().position(|&b| b == b'\n').map(|at| start + at) {
            let line = if self.partial.is_empty() {
                Bytes::copy_from_slice(&data[start..end])
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&data[start..end]);
                Bytes::from(line)
            };
            if !line.is_empty() {
                self.outlet.deliver(line);
            }
            start = end + 1;
        }
        self.partial.extend_from_slice(&data[start..]);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.outlet.closed();
        Poll::Ready(Ok(()))
    }
}

impl Drop for LineSink {
    fn drop(&mut self) {
        self.outlet.closed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn a_pretty_message_becomes_one_line_and_a_broken_one_stays_broken() {
        assert_eq!(one_line(b"{\n\"a\": 1\n}"), b"{ \"a\": 1 }");
        assert_eq!(one_line(b"{\n\"a\": \n"), b"{\0\"a\": \0");
    }

    #[tokio::test]
    async fn the_feed_reads_each_message_as_a_line_and_ends_after_close() {
        let (mut feed, handle) = MessageFeed::new(16);
        assert!(handle.put(b"{\"a\":1}").await);
        assert!(handle.put(b"[]").await);
        handle.close();
        assert!(!handle.put(b"late").await);
        let mut all = String::new();
        feed.read_to_string(&mut all).await.unwrap();
        assert_eq!(all, "{\"a\":1}\n[]\n");
    }

    #[tokio::test]
    async fn a_full_feed_makes_put_wait_until_read() {
        let (mut feed, handle) = MessageFeed::new(4);
        assert!(handle.put(b"0123456789").await);
        let second = tokio::spawn({
            let handle = handle.clone();
            async move { handle.put(b"x").await }
        });
        tokio::task::yield_now().await;
        assert!(!second.is_finished());
        let mut buf = [0u8; 64];
        let n = feed.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"0123456789\n");
        assert!(tokio::time::timeout(std::time::Duration::from_secs(5), second).await.unwrap().unwrap());
    }
}
