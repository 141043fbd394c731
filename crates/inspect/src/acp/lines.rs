//! Members of raw lines, read only on rare paths (refusals, gated requests,
//! `initialize`), and the id the framing recovers from an oversize line's head.

use std::collections::HashMap;

use agentproto_acp::RequestId;
use agentproto_jsonrpc::frame::{Frame, FrameLimits, FrameReader, OversizeShape};
use serde_json::value::RawValue;
use serde_json::Value;

pub(super) fn non_empty(path: &str) -> Option<String> {
    (!path.is_empty()).then(|| path.to_owned())
}

/// The start of a line, for messages.
pub(super) fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(60)]).into_owned();
    if line.len() > 60 {
        format!("{text:?}…")
    } else {
        format!("{text:?}")
    }
}

/// A member of the line's top-level object, raw (only used on rare paths).
pub(super) fn raw_member(line: &[u8], key: &str) -> Option<Box<RawValue>> {
    let members: HashMap<String, Box<RawValue>> = serde_json::from_slice(line).ok()?;
    members.into_iter().find_map(|(k, v)| (k == key).then_some(v))
}

pub(super) fn string_member(line: &[u8], key: &str) -> Option<String> {
    raw_member(line, key).and_then(|raw| serde_json::from_str(raw.get()).ok())
}

/// The value at `path` in the line (`Null` when absent).
pub(super) fn member(line: &[u8], path: &[&str]) -> Value {
    let Ok(value) = serde_json::from_slice::<Value>(line) else { return Value::Null };
    path.iter().try_fold(&value, |value, key| value.get(key)).cloned().unwrap_or(Value::Null)
}

/// The id and shape the JSON-RPC framing recovers from the head of an
/// oversize line: the best-effort scan an SDK connection makes before it
/// answers an oversize request `-32600`. The head is run through
/// `agentproto-jsonrpc`'s own frame reader with a limit of one byte, so the
/// inspector expects exactly the id a receiver on that framing recovers.
pub(super) fn recover_id(head: &[u8]) -> Option<(OversizeShape, Option<RequestId>)> {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let limits = FrameLimits { max_message_size: 1, read_chunk_size: head.len().max(1) };
    let mut reader = FrameReader::with_limits(head, limits);
    let mut next = std::pin::pin!(reader.next_frame());
    // Reading from a byte slice never waits, so one poll finishes.
    match next.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(Some(Frame::Oversize(line)))) => Some((line.shape, line.id.clone())),
        _ => None,
    }
}
