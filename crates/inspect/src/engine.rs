//! The protocol-neutral engine: a [`Monitor`] per protocol sees every message of a
//! connection, in order, and says what rules fired and, for `--strict`, what to
//! do instead of forwarding an invalid message.

use crate::finding::{Direction, Finding};
use crate::trace::{Origin, Record};

/// What a strict proxy does with a message instead of forwarding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Forward nothing.
    Drop,
    /// Forward nothing; send this line back to the sender (an error response).
    ToSender(Vec<u8>),
    /// Forward nothing; send this line to the receiver instead (an error response
    /// in place of an invalid result).
    ToReceiver(Vec<u8>),
}

/// The monitor's view of one message.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Verdict {
    /// The rules that fired.
    pub findings: Vec<Finding>,
    /// `Some` when the message is invalid (envelope or schema): what a strict
    /// proxy does instead of forwarding it.
    pub answer: Option<Answer>,
}

/// Watches one connection of one protocol.
pub trait Monitor: Send {
    /// One complete message (without its newline), number `index` of the connection.
    fn observe(&mut self, index: u64, direction: Direction, line: &[u8]) -> Verdict;

    /// A message of `len` bytes that exceeded the size limit and was not read
    /// whole; `head` is its beginning ([`crate::trace::head`]).
    fn oversize(&mut self, index: u64, direction: Direction, len: u64, head: &[u8]) -> Verdict;

    /// The connection ended after `index` messages: what was left undone.
    fn finish(&mut self, index: u64) -> Vec<Finding>;
}

/// The default size limit, the same as the JSON-RPC connections' default.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// A monitor plus message numbering and the size limit.
pub struct Engine {
    monitor: Box<dyn Monitor>,
    next_index: u64,
    max_message_bytes: usize,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("next_index", &self.next_index).finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine over `monitor`.
    pub fn new(monitor: Box<dyn Monitor>) -> Engine {
        Engine { monitor, next_index: 0, max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES }
    }

    /// An engine for ACP v1.
    pub fn acp() -> Engine {
        Engine::new(Box::new(crate::acp::AcpMonitor::default()))
    }

    /// Sets the size limit.
    pub fn max_message_bytes(mut self, max: usize) -> Engine {
        self.max_message_bytes = max;
        self
    }

    /// The size limit.
    pub fn limit(&self) -> usize {
        self.max_message_bytes
    }

    /// The index the next message gets.
    pub fn next_index(&self) -> u64 {
        self.next_index
    }

    /// One message. Lines over the limit are treated as [`Engine::oversize`],
    /// with their head.
    pub fn observe(&mut self, direction: Direction, line: &[u8]) -> Verdict {
        if line.len() > self.max_message_bytes {
            return self.oversize(direction, line.len() as u64, crate::trace::head(line));
        }
        let index = self.take_index();
        self.monitor.observe(index, direction, line)
    }

    /// A message the inspector wrote itself (a `--strict` answer): it moves the
    /// state like any message (it answers a request), but reports nothing — a
    /// replacement answer's request was already settled by the invalid original.
    pub fn observe_own(&mut self, direction: Direction, line: &[u8]) {
        let index = self.take_index();
        let _ = self.monitor.observe(index, direction, line);
    }

    /// A message that was too large to read: its length and its head
    /// ([`crate::trace::head`]).
    pub fn oversize(&mut self, direction: Direction, len: u64, head: &[u8]) -> Verdict {
        let index = self.take_index();
        self.monitor.oversize(index, direction, len, head)
    }

    /// The end of the connection.
    pub fn finish(&mut self) -> Vec<Finding> {
        self.monitor.finish(self.next_index)
    }

    /// Every finding of a recorded trace, in order, the end-of-trace ones last.
    pub fn replay(mut self, records: &[Record]) -> Vec<Finding> {
        let mut findings = Vec::new();
        for record in records {
            match (record.origin, record.oversize) {
                (Origin::Peer, Some(len)) => {
                    findings.extend(self.oversize(record.direction, len, &record.bytes).findings)
                }
                (Origin::Peer, None) => findings.extend(self.observe(record.direction, &record.bytes).findings),
                (Origin::Inspector, _) => self.observe_own(record.direction, &record.bytes),
            }
        }
        findings.extend(self.finish());
        findings
    }

    fn take_index(&mut self) -> u64 {
        let index = self.next_index;
        self.next_index += 1;
        index
    }
}
