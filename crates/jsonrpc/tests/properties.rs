//! Property tests: framing plus envelope never panic on arbitrary bytes, the
//! read buffer stays bounded, and valid messages round-trip.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use agentproto_jsonrpc::frame::{Frame, FrameLimits, FrameReader};
use agentproto_jsonrpc::{DecodeOptions, ErrorCode, ErrorObject, Message, RequestId};
use proptest::prelude::*;
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

/// Serves bytes in reads whose sizes cycle through `chunks`.
struct ChunkedReader {
    data: Vec<u8>,
    at: usize,
    chunks: Vec<usize>,
    turn: usize,
}

impl AsyncRead for ChunkedReader {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let chunk = self.chunks[self.turn % self.chunks.len()].max(1);
        self.turn += 1;
        let end = (self.at + chunk).min(self.data.len()).min(self.at + buf.remaining());
        let at = self.at;
        buf.put_slice(&self.data[at..end]);
        self.at = end;
        Poll::Ready(Ok(()))
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().build().unwrap()
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |float| float.is_finite()).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6).prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn structured() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(json_value(), 0..4).prop_map(Value::Array),
        prop::collection::btree_map(".{0,8}", json_value(), 0..4)
            .prop_map(|map| Value::Object(map.into_iter().collect())),
    ]
}

fn request_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![any::<i64>().prop_map(RequestId::number), ".{0,12}".prop_map(RequestId::string)]
}

fn raw(value: &Value) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(value).unwrap()
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (request_id(), ".{0,16}", prop::option::of(structured())).prop_map(|(id, method, params)| Message::request(
            id,
            method,
            params.as_ref().map(raw)
        )),
        (".{0,16}", prop::option::of(structured()))
            .prop_map(|(method, params)| Message::notification(method, params.as_ref().map(raw))),
        (prop_oneof![request_id(), Just(RequestId::NULL)], json_value())
            .prop_map(|(id, result)| Message::response(id, Ok(raw(&result)))),
        (prop_oneof![request_id(), Just(RequestId::NULL)], any::<i32>(), ".{0,16}", prop::option::of(json_value()))
            .prop_map(|(id, code, message, data)| {
                let mut error = ErrorObject::new(ErrorCode(code), message);
                error.data = data.as_ref().map(raw);
                Message::response(id, Err(error))
            }),
    ]
}

/// Lines that are often close to valid: encoded messages, some mutated.
fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        message().prop_map(|message| message.to_vec()),
        (message(), any::<usize>(), any::<u8>()).prop_map(|(message, at, byte)| {
            let mut bytes = message.to_vec();
            let at = at % bytes.len();
            bytes[at] = byte;
            bytes
        }),
        (message(), any::<usize>()).prop_map(|(message, at)| {
            let mut bytes = message.to_vec();
            bytes.truncate(at % (bytes.len() + 1));
            bytes
        }),
        prop::collection::vec(any::<u8>(), 0..64),
        prop::collection::vec(prop::sample::select(b"{}[]\":,\\ \r\n0123456789-.eEtrufalsn".to_vec()), 0..64),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((line_bytes(), prop::sample::select(vec![&b"\n"[..], b"\r\n", b"", b"\n\n"])), 0..12)
        .prop_map(|lines| {
            let mut bytes = Vec::new();
            for (line, end) in lines {
                bytes.extend_from_slice(&line);
                bytes.extend_from_slice(end);
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn framing_and_envelope_never_panic_and_stay_bounded(
        data in stream(),
        chunks in prop::collection::vec(1usize..200, 1..6),
        max in 1usize..300,
        chunk_size in 1usize..128,
        allow_null_id in any::<bool>(),
    ) {
        let limits = FrameLimits { max_message_size: max, read_chunk_size: chunk_size };
        let options = DecodeOptions::default().allow_null_id(allow_null_id);
        runtime().block_on(async {
            let reader = ChunkedReader { data, at: 0, chunks, turn: 0 };
            let mut frames = FrameReader::with_limits(reader, limits);
            while let Some(frame) = frames.next_frame().await.unwrap() {
                match frame {
                    Frame::Line(line) => {
                        prop_assert!(line.len() <= max);
                        prop_assert!(!line.contains(&b'\n'));
                        if let Err(error) = Message::decode_with(line, &options) {
                            // Every failure maps to an answer or a documented silence.
                            if let Some(reply) = error.reply() {
                                prop_assert!(Message::decode(&reply.to_vec()).is_ok());
                            }
                        }
                    }
                    Frame::Oversize(line) => prop_assert!(line.len > max as u64),
                }
                prop_assert!(frames.buffer_capacity() <= max + chunk_size);
            }
            prop_assert!(frames.buffer_capacity() <= max + chunk_size);
            Ok(())
        })?;
    }

    #[test]
    fn decode_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = Message::decode(&bytes);
    }

    #[test]
    fn valid_messages_round_trip(message in message()) {
        let encoded = message.to_vec();
        prop_assert!(!encoded.contains(&b'\n'));
        let decoded = Message::decode(&encoded).unwrap();
        // Raw values are re-encoded by serde_json unchanged, so text equality holds.
        prop_assert_eq!(&decoded, &message);
        prop_assert_eq!(decoded.to_vec(), encoded);
    }

    #[test]
    fn valid_messages_survive_framing(messages in prop::collection::vec(message(), 0..8), chunk in 1usize..64) {
        let mut data = Vec::new();
        for message in &messages {
            message.encode_into(&mut data);
            data.extend_from_slice(b"\r\n");
        }
        let decoded = runtime().block_on(async {
            let reader = ChunkedReader { data, at: 0, chunks: vec![chunk], turn: 0 };
            let mut frames = FrameReader::new(reader);
            let mut decoded = Vec::new();
            while let Some(Frame::Line(line)) = frames.next_frame().await.unwrap() {
                decoded.push(Message::decode(line).unwrap());
            }
            decoded
        });
        prop_assert_eq!(decoded, messages);
    }
}
