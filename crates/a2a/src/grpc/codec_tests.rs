//! The generated protobuf codec (`generated/v1_proto.rs`) against prost-reflect, which
//! reads the pinned proto's descriptors: for every request and answer of the A2A
//! vectors (`vectors/a2a/v1/*/{request,answer}/rest/*.canonical`) and for randomised
//! values, our bytes read by prost-reflect give the same value, and prost-reflect's
//! bytes read by our decoder give the same value.

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use prost::Message as _;
use prost_reflect::MessageDescriptor;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::reflect::{json_to_message, request_type, response_type, wire_to_json, DESCRIPTORS};
use super::wire::Proto;
use crate::generated::v1_proto::{decode_request, encode_request};
use crate::v1::*;

/// A value as a JSON tree, so that two encodings compare whatever their member order,
/// spacing or number spelling.
fn tree<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("a typed value encodes")
}

fn read_json<T: DeserializeOwned + agentproto_codec::Wants>(json: &[u8]) -> T {
    agentproto_codec::decode_slice::<T>(json, "$")
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(json)))
        .value
}

/// Checks one value both ways against prost-reflect; `json` is its ProtoJSON.
fn differential<T>(desc: &MessageDescriptor, value: &T, what: &str)
where
    T: Proto + Serialize + DeserializeOwned + agentproto_codec::Wants + Debug,
{
    // Ours -> prost-reflect -> ProtoJSON -> our JSON decoder.
    let ours = value.encode_to_vec();
    assert_eq!(ours.len(), value.encoded_len(), "{what}: encoded_len");
    let back =
        wire_to_json(desc, ours.as_slice()).unwrap_or_else(|e| panic!("{what}: prost-reflect refuses ours: {e}"));
    let seen: T = read_json(&back);
    assert_eq!(tree(&seen), tree(value), "{what}: prost-reflect read {}", String::from_utf8_lossy(&back));
    // prost-reflect's encoding of the same ProtoJSON -> our decoder.
    let json = serde_json::to_vec(value).unwrap();
    let theirs = json_to_message(desc, &json).unwrap_or_else(|e| panic!("{what}: {e}")).encode_to_vec();
    let decoded =
        T::decode(&theirs, "$").unwrap_or_else(|e| panic!("{what}: our decoder refuses prost-reflect's bytes: {e}"));
    assert_eq!(tree(&decoded), tree(value), "{what}: our decoder");
    // And ours decodes to itself.
    let again = T::decode(&ours, "$").unwrap_or_else(|e| panic!("{what}: our decoder refuses our bytes: {e}"));
    assert_eq!(tree(&again), tree(value), "{what}: our own round trip");
}

fn message_descriptor(name: &str) -> MessageDescriptor {
    let pool = prost_reflect::DescriptorPool::decode(DESCRIPTORS).unwrap();
    let full = if name == "Empty" { "google.protobuf.Empty".to_owned() } else { format!("lf.a2a.v1.{name}") };
    pool.get_message_by_name(&full).unwrap_or_else(|| panic!("no message {name}"))
}

/// Runs [`differential`] on the ProtoJSON `json` of the message type `name`.
fn by_name(name: &str, json: &[u8], what: &str) {
    let desc = message_descriptor(name);
    macro_rules! types {
        ($($t:ident),* $(,)?) => {
            match name {
                $(stringify!($t) => differential::<$t>(&desc, &read_json::<$t>(json), what),)*
                other => panic!("{what}: no case for {other}"),
            }
        };
    }
    types!(
        SendMessageRequest,
        SendMessageResponse,
        StreamResponse,
        GetTaskRequest,
        Task,
        ListTasksRequest,
        ListTasksResponse,
        CancelTaskRequest,
        SubscribeToTaskRequest,
        TaskPushNotificationConfig,
        GetTaskPushNotificationConfigRequest,
        ListTaskPushNotificationConfigsRequest,
        ListTaskPushNotificationConfigsResponse,
        DeleteTaskPushNotificationConfigRequest,
        GetExtendedAgentCardRequest,
        AgentCard,
        Empty,
        Message,
        Part,
        Artifact,
        TaskStatus,
        SecurityScheme,
        OAuthFlows,
        AgentSkill
    );
}

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors/a2a/v1")
}

#[test]
fn every_vector_request_and_answer_agrees_with_prost_reflect() {
    let mut checked = 0;
    for op in Operation::ALL {
        let (req, resp) = op.messages();
        for (dir, name) in [("request", req), ("answer", resp)] {
            let Ok(entries) = std::fs::read_dir(vectors().join(op.name()).join(dir).join("rest")) else { continue };
            for entry in entries {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "canonical") {
                    let json = std::fs::read(&path).unwrap();
                    by_name(name, &json, &path.display().to_string());
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 60, "only {checked} canonical vectors found under {}", vectors().display());
}

#[test]
fn requests_decode_by_operation_as_the_json_decoder_reads_them() {
    let json = br#"{"tenant":"t","message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":0,"returnImmediately":true}}"#;
    let typed = Request::decode(Operation::SendMessage, json, "$").unwrap().value;
    let bytes = encode_request(&typed);
    assert_eq!(decode_request(Operation::SendMessage, &bytes, "$").unwrap(), typed);
    let theirs = json_to_message(&request_type(Operation::SendMessage), json).unwrap().encode_to_vec();
    assert_eq!(decode_request(Operation::SendMessage, &theirs, "$").unwrap(), typed);
    // `optional int32 history_length = 0` is present on the wire, unlike a plain zero.
    assert_eq!(bytes, theirs);
    let _ = response_type(Operation::SendMessage);
}

// -- randomised values ---------------------------------------------------------------

/// A small deterministic generator (xorshift64*), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn coin(&mut self) -> bool {
        self.below(2) == 0
    }
    fn text(&mut self) -> String {
        const PIECES: [&str; 8] = ["a", "é", "\"", "\\", "\n", "日本", "🦀", "z0"];
        (0..self.below(6)).map(|_| PIECES[self.below(8) as usize]).collect()
    }
    fn nonempty(&mut self) -> String {
        format!("x{}", self.text())
    }
    fn json(&mut self, depth: u32) -> serde_json::Value {
        use serde_json::Value as J;
        match self.below(if depth > 3 { 5 } else { 7 }) {
            0 => J::Null,
            1 => J::Bool(self.coin()),
            2 => J::from(self.below(1 << 40) as i64 - (1 << 39)),
            3 => J::from((self.below(1_000_000) as f64) / 64.0 + 1.0 / 128.0),
            4 => J::String(self.text()),
            5 => J::Array((0..self.below(4)).map(|_| self.json(depth + 1)).collect()),
            _ => {
                J::Object((0..self.below(4)).map(|i| (format!("k{i}{}", self.text()), self.json(depth + 1))).collect())
            }
        }
    }
    fn object(&mut self) -> Option<agentproto_codec::RawObject> {
        if self.coin() {
            return None;
        }
        let map: serde_json::Map<String, serde_json::Value> =
            (0..self.below(4)).map(|i| (format!("k{i}{}", self.text()), self.json(1))).collect();
        Some(agentproto_codec::RawObject::from_value(&map).unwrap())
    }
    fn part(&mut self) -> Part {
        let content = match self.below(4) {
            0 => PartContent::Text(self.text().into()),
            1 => PartContent::Raw(crate::Bytes((0..self.below(9)).map(|_| self.next() as u8).collect())),
            2 => PartContent::Url(self.text()),
            _ => PartContent::Data(agentproto_codec::RawJson::from_value(&self.json(0)).unwrap()),
        };
        let mut p = Part::new(content);
        p.metadata = self.object();
        p.filename = if self.coin() { self.text() } else { String::new() };
        p.media_type = if self.coin() { self.text() } else { String::new() };
        p
    }
    fn message(&mut self) -> Message {
        let role = if self.coin() { Role::User } else { Role::Agent };
        let mut m =
            Message::new(self.nonempty(), role, (0..1 + self.below(3)).map(|_| self.part()).collect::<Vec<_>>());
        m.context_id = self.text();
        m.task_id = self.text();
        m.metadata = self.object();
        m.extensions = (0..self.below(3)).map(|_| self.text()).collect();
        m.reference_task_ids = (0..self.below(2)).map(|_| self.text()).collect();
        m
    }
    fn state(&mut self) -> TaskState {
        TaskState::from_number(1 + self.below(8) as i32).unwrap()
    }
    fn task(&mut self) -> Task {
        let mut status = TaskStatus::new(self.state());
        status.message = self.coin().then(|| self.message());
        status.timestamp = self.coin().then(|| crate::Timestamp::from_millis(self.below(1 << 42) as i64));
        let mut t = Task::new(self.nonempty(), status);
        t.context_id = self.text();
        t.history = (0..self.below(3)).map(|_| self.message()).collect();
        t.artifacts = (0..self.below(3))
            .map(|_| {
                let mut a =
                    Artifact::new(self.nonempty(), (0..1 + self.below(2)).map(|_| self.part()).collect::<Vec<_>>());
                a.name = self.text();
                a.metadata = self.object();
                a
            })
            .collect();
        t.metadata = self.object();
        t
    }
}

use crate::grpc::wire::ProtoEnum as _;

#[test]
fn randomised_tasks_messages_and_events_agree_with_prost_reflect() {
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let what = format!("seed {seed}");
        let task = rng.task();
        differential(&message_descriptor("Task"), &task, &what);
        let message = rng.message();
        differential(&message_descriptor("Message"), &message, &what);
        let event = match rng.below(4) {
            0 => StreamResponse::Task(task),
            1 => StreamResponse::Message(message),
            2 => {
                let mut e = TaskStatusUpdateEvent::new(rng.nonempty(), rng.nonempty(), TaskStatus::new(rng.state()));
                e.metadata = rng.object();
                StreamResponse::StatusUpdate(e)
            }
            _ => {
                let artifact = Artifact::new(rng.nonempty(), vec![rng.part()]);
                let mut e = TaskArtifactUpdateEvent::new(rng.nonempty(), rng.nonempty(), artifact);
                e.append = rng.coin();
                e.last_chunk = rng.coin();
                StreamResponse::ArtifactUpdate(e)
            }
        };
        differential(&message_descriptor("StreamResponse"), &event, &what);
    }
}

#[test]
fn what_the_wire_form_cannot_hold_is_refused_with_a_path() {
    // A task whose state is unset (0) on the wire: `status.state` is REQUIRED.
    let mut bytes = Vec::new();
    crate::grpc::wire::put_bytes(&mut bytes, 1, b"t-1");
    crate::grpc::wire::put_len_prefix(&mut bytes, 3, 0);
    let e = Task::decode(&bytes, "$").unwrap_err();
    assert_eq!((e.path.as_str(), e.kind.as_str()), ("$.status", "missing-field"), "{e}");
    // An unlisted state number.
    let mut bytes = Vec::new();
    crate::grpc::wire::put_bytes(&mut bytes, 1, b"t-1");
    crate::grpc::wire::put_len_prefix(&mut bytes, 3, 2);
    crate::grpc::wire::put_int32(&mut bytes, 1, 42);
    let e = Task::decode(&bytes, "$").unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.kind.as_str(), e.found.as_str()),
        ("$.status.state", "not-listed", "the integer 42")
    );
    // A message without parts: REQUIRED repeated needs an item.
    let mut m = Vec::new();
    crate::grpc::wire::put_bytes(&mut m, 1, b"m-1");
    crate::grpc::wire::put_int32(&mut m, 4, 1);
    let mut req = Vec::new();
    crate::grpc::wire::put_bytes(&mut req, 2, &m);
    let e = SendMessageRequest::decode(&req, "$").unwrap_err();
    assert_eq!((e.path.as_str(), e.kind.as_str()), ("$.message.parts", "too-short"), "{e}");
    // A part without content.
    let mut part = Vec::new();
    crate::grpc::wire::put_bytes(&mut part, 7, b"text/plain");
    let mut m2 = m.clone();
    crate::grpc::wire::put_bytes(&mut m2, 5, &part);
    let mut req = Vec::new();
    crate::grpc::wire::put_bytes(&mut req, 2, &m2);
    let e = SendMessageRequest::decode(&req, "$").unwrap_err();
    assert_eq!((e.path.as_str(), e.kind.as_str()), ("$.message.parts[0]", "missing-one-of"), "{e}");
    // A message field given as a varint.
    let mut req = Vec::new();
    crate::grpc::wire::put_int32(&mut req, 2, 7);
    let e = SendMessageRequest::decode(&req, "$").unwrap_err();
    assert_eq!((e.path.as_str(), e.kind.as_str()), ("$.message", "wrong-type"), "{e}");
}
