//! The load client's gRPC mode (`--grpc`): the same workloads as `lf.a2a.v1.A2AService`
//! calls over HTTP/2 without TLS, one HTTP/2 connection per client connection. Requests
//! are the JSON workloads' protobuf equivalents, encoded here by hand (the client links
//! no A2A library); answers are checked on their wire bytes: `--expect` strings as byte
//! substrings of the messages, except `TASK_STATE_COMPLETED`, which is read as the task
//! state (enum 3) of the answer's task or of the stream's last status.

use std::time::Duration;

use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::{Channel, Endpoint};
use tonic::Status;

/// `TaskState.TASK_STATE_COMPLETED`.
const COMPLETED: u64 = 3;

/// The message ids and texts of the workloads (as in the JSON requests).
fn workload(name: &str) -> Option<(&'static str, String, String)> {
    Some(match name {
        "floor" => ("SendMessage", "bench-fixed-id".to_owned(), "hello".to_owned()),
        "echo" => ("SendMessage", "msg-bench-001".to_owned(), "A".repeat(256)),
        "noop" => ("SendMessage", "noop-bench-001".to_owned(), "noop".to_owned()),
        "stream" => ("SendStreamingMessage", "msg-bench-stream".to_owned(), "stream-bench".to_owned()),
        "large" => ("SendMessage", "msg-bench-large".to_owned(), "x".repeat(super::LARGE_TEXT)),
        _ => return None,
    })
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field_bytes(number: u32, bytes: &[u8], out: &mut Vec<u8>) {
    varint(u64::from(number << 3 | 2), out);
    varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

fn field_varint(number: u32, v: u64, out: &mut Vec<u8>) {
    varint(u64::from(number << 3), out);
    varint(v, out);
}

/// The rpc path and the `SendMessageRequest` of a workload: `message` (2) with
/// `message_id` (1), `role` (4) = ROLE_USER, one `parts` (5) with `text` (1); and
/// `configuration` (3) with `history_length` (3) = 0, as the JSON requests say.
pub(crate) fn request(name: &str) -> Option<(String, Vec<u8>)> {
    let (method, id, text) = workload(name)?;
    let mut part = Vec::new();
    field_bytes(1, text.as_bytes(), &mut part);
    let mut message = Vec::new();
    field_bytes(1, id.as_bytes(), &mut message);
    field_varint(4, 1, &mut message);
    field_bytes(5, &part, &mut message);
    let mut config = Vec::new();
    field_varint(3, 0, &mut config);
    let mut req = Vec::new();
    field_bytes(2, &message, &mut req);
    field_bytes(3, &config, &mut req);
    Some((format!("/lf.a2a.v1.A2AService/{method}"), req))
}

/// A field's value on the wire (fixed-width ones are skipped).
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// The fields of one message: (number, value).
fn fields(mut buf: &[u8]) -> Option<Vec<(u32, Wire<'_>)>> {
    fn read_varint(buf: &mut &[u8]) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = buf.split_first()?;
            *buf = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = read_varint(&mut buf)?;
        let number = (key >> 3) as u32;
        match key & 7 {
            0 => out.push((number, Wire::Varint(read_varint(&mut buf)?))),
            2 => {
                let len = read_varint(&mut buf)? as usize;
                if buf.len() < len {
                    return None;
                }
                out.push((number, Wire::Bytes(&buf[..len])));
                buf = &buf[len..];
            }
            1 => buf = buf.get(8..)?,
            5 => buf = buf.get(4..)?,
            _ => return None,
        }
    }
    Some(out)
}

/// The bytes of field `number` of a message, if present.
fn sub(buf: &[u8], number: u32) -> Option<&[u8]> {
    fields(buf)?.into_iter().find_map(|(n, v)| match v {
        Wire::Bytes(b) if n == number => Some(b),
        _ => None,
    })
}

/// `TaskStatus.state` (1) of a `TaskStatus`.
fn state(status: &[u8]) -> Option<u64> {
    fields(status)?.into_iter().find_map(|(n, v)| match v {
        Wire::Varint(x) if n == 1 => Some(x),
        _ => None,
    })
}

/// The task state a `SendMessageResponse` or `StreamResponse` carries: `task` (1) →
/// `status` (3), or `status_update` (3) → `status` (3).
pub(crate) fn task_state(message: &[u8]) -> Option<u64> {
    if let Some(task) = sub(message, 1) {
        return state(sub(task, 3)?);
    }
    state(sub(sub(message, 3)?, 3)?)
}

/// Checks the answer's messages against `expect` and `forbid`.
pub(crate) fn verify(messages: &[Vec<u8>], expect: &[String], forbid: &[String]) -> Result<(), String> {
    if messages.is_empty() {
        return Err("no message in the answer".to_owned());
    }
    let all: Vec<u8> = messages.concat();
    for s in expect {
        if s == "TASK_STATE_COMPLETED" {
            let last = messages.iter().rev().find_map(|m| task_state(m));
            if last != Some(COMPLETED) {
                return Err(format!("the last task state is {last:?}, not COMPLETED (3)"));
            }
        } else if crate::find(&all, s.as_bytes()).is_none() {
            return Err(format!("no {s:?} in the answer"));
        }
    }
    for s in forbid {
        if crate::find(&all, s.as_bytes()).is_some() {
            return Err(format!("{s:?} in the answer"));
        }
    }
    Ok(())
}

/// Passes message bytes through as they are.
#[derive(Clone, Copy, Default)]
pub(crate) struct Raw;

pub(crate) struct Pass;

impl Encoder for Pass {
    type Item = Vec<u8>;
    type Error = Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        bytes::BufMut::put_slice(dst, &item);
        Ok(())
    }
}

impl Decoder for Pass {
    type Item = Vec<u8>;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = bytes::Buf::remaining(src);
        Ok(Some(bytes::Buf::copy_to_bytes(src, n).to_vec()))
    }
}

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Pass;
    type Decoder = Pass;
    fn encoder(&mut self) -> Pass {
        Pass
    }
    fn decoder(&mut self) -> Pass {
        Pass
    }
}

/// One HTTP/2 connection.
pub(crate) struct Conn {
    grpc: tonic::client::Grpc<Channel>,
    /// The messages of the last answer.
    pub(crate) messages: Vec<Vec<u8>>,
}

impl Conn {
    pub(crate) async fn open(port: u16) -> std::io::Result<Conn> {
        let channel = Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
            .map_err(std::io::Error::other)?
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(10))
            .connect()
            .await
            .map_err(std::io::Error::other)?;
        Ok(Conn { grpc: tonic::client::Grpc::new(channel).max_decoding_message_size(usize::MAX), messages: Vec::new() })
    }

    /// One call: a unary one, or a server-streaming one drained to its end. Returns the
    /// bytes of the answer's messages (plus 5 bytes of gRPC framing each).
    pub(crate) async fn call(&mut self, path: &str, body: &[u8], streaming: bool) -> Result<usize, String> {
        self.grpc.ready().await.map_err(|e| format!("channel not ready: {e}"))?;
        let path = http::uri::PathAndQuery::try_from(path.to_owned()).map_err(|e| e.to_string())?;
        let req = || {
            let mut r = tonic::Request::new(body.to_vec());
            r.metadata_mut().insert("a2a-version", tonic::metadata::MetadataValue::from_static("1.0"));
            r
        };
        self.messages.clear();
        if streaming {
            let mut stream =
                self.grpc.server_streaming(req(), path, Raw).await.map_err(|s| format!("status {s:?}"))?.into_inner();
            while let Some(m) = stream.message().await.map_err(|s| format!("status {s:?}"))? {
                self.messages.push(m);
            }
        } else {
            let m = self.grpc.unary(req(), path, Raw).await.map_err(|s| format!("status {s:?}"))?.into_inner();
            self.messages.push(m);
        }
        Ok(self.messages.iter().map(|m| m.len() + 5).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_and_a_state_read_back() {
        let (path, req) = request("echo").unwrap();
        assert_eq!(path, "/lf.a2a.v1.A2AService/SendMessage");
        let message = sub(&req, 2).unwrap();
        assert_eq!(sub(message, 1), Some(&b"msg-bench-001"[..]));
        // SendMessageResponse{task{status{state: COMPLETED}}}
        let mut status = Vec::new();
        field_varint(1, 3, &mut status);
        let mut task = Vec::new();
        field_bytes(3, &status, &mut task);
        let mut resp = Vec::new();
        field_bytes(1, &task, &mut resp);
        assert_eq!(task_state(&resp), Some(3));
        assert!(verify(&[resp], &["TASK_STATE_COMPLETED".to_owned()], &[]).is_ok());
    }
}
