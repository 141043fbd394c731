//! The gRPC binding's shared part: the pinned proto's descriptors, the transcoding
//! between the protobuf wire form and ProtoJSON, and errors as gRPC statuses.
//!
//! Both ends of this crate work on ProtoJSON (the generated [`crate::v1`] types and the
//! server core read and write it). The gRPC binding does not add a second set of Rust
//! types: `build.rs` compiles the pinned `spec/a2a/v1.0/a2a.proto` into a descriptor
//! set, and each message crossing the binding is transcoded through a dynamic message
//! of the operation's input or output type (`Transcoder`, a tonic codec). The proto
//! is the one source: the service name, each method's types and whether it streams
//! come from its descriptors, and a test checks the generated [`Operation`] table
//! against them.
//!
//! Errors are `google.rpc.Status` with a `google.rpc.ErrorInfo` detail (reason,
//! domain `a2a-protocol.org`, metadata), the status code from the error table
//! ([`crate::errors`], switchable to A2A 1.0.0's codes).

#[cfg(feature = "client")]
pub(crate) mod client;
#[cfg(feature = "server")]
pub(crate) mod server;
pub mod wire;

#[cfg(feature = "server")]
pub use server::GrpcService;

use std::collections::HashMap;
use std::sync::OnceLock;

use prost::Message as _;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, Kind, MessageDescriptor, SerializeOptions};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::errors::{A2aError, ErrorKind, ErrorTable, DOMAIN};
use crate::v1::Operation;

/// The fully qualified name of the A2A service.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// The descriptor set `build.rs` compiled from the pinned proto.
static DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/a2a_descriptors.bin"));

/// Each operation's request and response descriptors, in [`Operation::ALL`]'s order.
struct Methods {
    io: Vec<(MessageDescriptor, MessageDescriptor)>,
}

fn methods() -> &'static Methods {
    static METHODS: OnceLock<Methods> = OnceLock::new();
    METHODS.get_or_init(|| {
        let pool = DescriptorPool::decode(DESCRIPTORS).expect("the descriptor set build.rs compiled decodes");
        let service = pool.get_service_by_name(SERVICE).expect("a2a.proto defines the A2A service");
        let io = Operation::ALL
            .iter()
            .map(|op| {
                let m = service
                    .methods()
                    .find(|m| m.name() == op.name())
                    .unwrap_or_else(|| panic!("a2a.proto has no rpc {}", op.name()));
                (m.input(), m.output())
            })
            .collect();
        Methods { io }
    })
}

fn index(op: Operation) -> usize {
    Operation::ALL.iter().position(|o| *o == op).expect("every operation is in Operation::ALL")
}

/// The request message type of `op`.
pub(crate) fn request_type(op: Operation) -> MessageDescriptor {
    methods().io[index(op)].0.clone()
}

/// The response message type of `op` (of each streamed item, for a streaming one).
pub(crate) fn response_type(op: Operation) -> MessageDescriptor {
    methods().io[index(op)].1.clone()
}

/// The HTTP/2 path of `op`: `/lf.a2a.v1.A2AService/SendMessage`.
#[cfg(any(feature = "client", test))]
pub(crate) fn path(op: Operation) -> String {
    format!("/{SERVICE}/{}", op.name())
}

/// The operation an HTTP/2 path names, if it is one of the service's.
#[cfg(any(feature = "server", test))]
pub(crate) fn operation_at(path: &str) -> Option<Operation> {
    let name = path.strip_prefix('/')?.strip_prefix(SERVICE)?.strip_prefix('/')?;
    Operation::from_name(name)
}

/// A message's wire bytes as ProtoJSON: lowerCamel names, enum names, unknown fields
/// dropped, and fields without presence written even when they hold their default
/// (`"nextPageToken": ""`, `"totalSize": 0`): the wire form cannot tell an empty value
/// from an absent one, and the generated decoders require the fields the proto marks
/// `REQUIRED`. Fields with presence (messages, oneof members, `optional`) appear only
/// when set.
pub(crate) fn wire_to_json(desc: &MessageDescriptor, wire: impl prost::bytes::Buf) -> Result<Vec<u8>, String> {
    let message = DynamicMessage::decode(desc.clone(), wire).map_err(|e| e.to_string())?;
    let mut tree = message
        .serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new().skip_default_fields(false))
        .map_err(|e| e.to_string())?;
    drop_unset_enums(desc, &mut tree);
    let mut out = Vec::with_capacity(128);
    serde::Serialize::serialize(&tree, &mut serde_json::Serializer::with_formatter(&mut out, IntegralNumbers))
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Removes the enum fields that hold their zero value (`…_UNSPECIFIED`): on the wire that
/// is an enum nobody set, which ProtoJSON leaves out and the generated decoders read as
/// absent (a present `TASK_STATE_UNSPECIFIED` is refused where a value is expected).
fn drop_unset_enums(desc: &MessageDescriptor, tree: &mut serde_json::Value) {
    if desc.full_name().starts_with("google.protobuf.") {
        return; // well-known types have their own JSON forms and no enums of A2A
    }
    let Some(obj) = tree.as_object_mut() else { return };
    for field in desc.fields() {
        let Some(value) = obj.get_mut(field.json_name()) else { continue };
        match field.kind() {
            Kind::Enum(e)
                if !field.is_list()
                    && !field.is_map()
                    && e.get_value(0).is_some_and(|zero| value.as_str() == Some(zero.name())) =>
            {
                obj.remove(field.json_name());
            }
            Kind::Message(m) if field.is_map() => {
                let values = m.map_entry_value_field();
                if let (Kind::Message(vm), Some(map)) = (values.kind(), value.as_object_mut()) {
                    map.values_mut().for_each(|v| drop_unset_enums(&vm, v));
                }
            }
            Kind::Message(m) if field.is_list() => {
                if let Some(items) = value.as_array_mut() {
                    items.iter_mut().for_each(|v| drop_unset_enums(&m, v));
                }
            }
            Kind::Message(m) => drop_unset_enums(&m, value),
            _ => {}
        }
    }
}

/// Writes a `double` that holds an integer exactly (below 2^53) without a fraction:
/// the only doubles in A2A are the numbers inside `google.protobuf.Value` (a data
/// part's JSON), which a JSON sender wrote as `42`, not `42.0`.
struct IntegralNumbers;

impl serde_json::ser::Formatter for IntegralNumbers {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, value: f64) -> std::io::Result<()> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        if value.fract() == 0.0 && value.abs() < EXACT && !(value == 0.0 && value.is_sign_negative()) {
            write!(writer, "{}", value as i64)
        } else {
            serde_json::ser::CompactFormatter.write_f64(writer, value)
        }
    }
}

/// A ProtoJSON text as a dynamic message of `desc`; an empty text is the empty message.
pub(crate) fn json_to_message(desc: &MessageDescriptor, json: &[u8]) -> Result<DynamicMessage, String> {
    if json.iter().all(u8::is_ascii_whitespace) {
        return Ok(DynamicMessage::new(desc.clone()));
    }
    let mut de = serde_json::Deserializer::from_slice(json);
    let message = DynamicMessage::deserialize_with_options(desc.clone(), &mut de, &DeserializeOptions::new())
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(message)
}

/// A tonic codec that sends and receives ProtoJSON texts, transcoded to and from the
/// wire form of the message types it was made for. A message that does not transcode
/// fails the call: as `INVALID_ARGUMENT` when it was received, `INTERNAL` when it was
/// about to be sent.
#[derive(Clone)]
pub(crate) struct Transcoder {
    send: MessageDescriptor,
    receive: MessageDescriptor,
    table: ErrorTable,
}

impl Transcoder {
    /// The server's codec for `op`: receives requests, sends responses.
    #[cfg(feature = "server")]
    pub(crate) fn server(op: Operation, table: ErrorTable) -> Self {
        Transcoder { send: response_type(op), receive: request_type(op), table }
    }

    /// The client's codec for `op`: sends the request, receives responses.
    #[cfg(feature = "client")]
    pub(crate) fn client(op: Operation) -> Self {
        Transcoder { send: request_type(op), receive: response_type(op), table: ErrorTable::default() }
    }
}

impl Codec for Transcoder {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = JsonToWire;
    type Decoder = WireToJson;

    fn encoder(&mut self) -> JsonToWire {
        JsonToWire { desc: self.send.clone(), table: self.table }
    }

    fn decoder(&mut self) -> WireToJson {
        WireToJson { desc: self.receive.clone(), table: self.table }
    }
}

/// Encodes a ProtoJSON text as its message's wire form.
pub(crate) struct JsonToWire {
    desc: MessageDescriptor,
    table: ErrorTable,
}

impl Encoder for JsonToWire {
    type Item = Vec<u8>;
    type Error = Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        let message = json_to_message(&self.desc, &item).map_err(|e| {
            status(
                &A2aError::new(ErrorKind::Internal)
                    .with_message(format!("a {} could not be encoded: {e}", self.desc.full_name())),
                self.table,
            )
        })?;
        message.encode(dst).map_err(|e| Status::internal(e.to_string()))
    }
}

/// Decodes a message's wire form into ProtoJSON.
pub(crate) struct WireToJson {
    desc: MessageDescriptor,
    table: ErrorTable,
}

impl Decoder for WireToJson {
    type Item = Vec<u8>;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        wire_to_json(&self.desc, src).map(Some).map_err(|e| {
            status(
                &A2aError::new(ErrorKind::Parse)
                    .with_message(format!("the message is not a valid {}: {e}", self.desc.full_name())),
                self.table,
            )
        })
    }
}

/// Every gRPC code with its canonical name, both ways (the error table names codes;
/// the client reports them by name).
const CODES: [(Code, &str); 17] = [
    (Code::Ok, "OK"),
    (Code::Cancelled, "CANCELLED"),
    (Code::Unknown, "UNKNOWN"),
    (Code::InvalidArgument, "INVALID_ARGUMENT"),
    (Code::DeadlineExceeded, "DEADLINE_EXCEEDED"),
    (Code::NotFound, "NOT_FOUND"),
    (Code::AlreadyExists, "ALREADY_EXISTS"),
    (Code::PermissionDenied, "PERMISSION_DENIED"),
    (Code::ResourceExhausted, "RESOURCE_EXHAUSTED"),
    (Code::FailedPrecondition, "FAILED_PRECONDITION"),
    (Code::Aborted, "ABORTED"),
    (Code::OutOfRange, "OUT_OF_RANGE"),
    (Code::Unimplemented, "UNIMPLEMENTED"),
    (Code::Internal, "INTERNAL"),
    (Code::Unavailable, "UNAVAILABLE"),
    (Code::DataLoss, "DATA_LOSS"),
    (Code::Unauthenticated, "UNAUTHENTICATED"),
];

/// The gRPC code a status name of the error table denotes.
fn code_named(name: &str) -> Code {
    CODES.iter().find(|(_, n)| *n == name).map_or(Code::Unknown, |(c, _)| *c)
}

/// The canonical name of a gRPC code (`NOT_FOUND`, …).
#[cfg(feature = "client")]
pub(crate) fn code_name(code: Code) -> &'static str {
    CODES.iter().find(|(c, _)| *c == code).map_or("UNKNOWN", |(_, n)| n)
}

/// An A2A error as a gRPC status: the table's code, the message, and an `ErrorInfo`
/// detail with the reason, the A2A domain and the error's metadata.
pub(crate) fn status(e: &A2aError, table: ErrorTable) -> Status {
    let metadata: HashMap<String, String> = e.metadata.iter().cloned().collect();
    let details = ErrorDetails::with_error_info(e.reason(), DOMAIN, metadata);
    Status::with_error_details(code_named(e.grpc_status_in(table)), e.message.clone(), details)
}

/// The A2A error a status from a server carries: its `ErrorInfo` reason when it has
/// one in the A2A domain, otherwise the kind its code stands for; and whether it had
/// such an `ErrorInfo`.
#[cfg(feature = "client")]
pub(crate) fn error_of(status: &Status) -> (A2aError, bool) {
    let details = status.get_error_details();
    let info = details.error_info().filter(|i| i.domain == DOMAIN);
    let kind = info.and_then(|i| ErrorKind::from_reason(&i.reason)).unwrap_or(match status.code() {
        Code::NotFound => ErrorKind::TaskNotFound,
        Code::InvalidArgument => ErrorKind::InvalidParams,
        Code::Unimplemented => ErrorKind::MethodNotFound,
        Code::Unauthenticated => ErrorKind::Unauthenticated,
        Code::PermissionDenied => ErrorKind::PermissionDenied,
        Code::ResourceExhausted => ErrorKind::RateLimited,
        Code::DeadlineExceeded => ErrorKind::RequestTimeout,
        _ => ErrorKind::Internal,
    });
    let mut e = A2aError::new(kind).with_message(status.message());
    if let Some(info) = info {
        let mut pairs: Vec<_> = info.metadata.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        pairs.sort();
        e.metadata = pairs;
    }
    (e, info.is_some())
}

#[cfg(test)]
mod codec_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_operations_are_the_protos_rpcs() {
        let pool = DescriptorPool::decode(DESCRIPTORS).unwrap();
        let service = pool.get_service_by_name(SERVICE).unwrap();
        let rpcs: Vec<_> = service.methods().map(|m| (m.name().to_owned(), m.is_server_streaming())).collect();
        let ops: Vec<_> = Operation::ALL.iter().map(|op| (op.name().to_owned(), op.streaming())).collect();
        assert_eq!(rpcs, ops);
        for op in Operation::ALL {
            let (req, resp) = op.messages();
            assert_eq!(request_type(op).name(), req);
            assert_eq!(response_type(op).name(), resp);
            assert_eq!(operation_at(&path(op)), Some(op));
        }
        assert_eq!(operation_at("/a2a.v1.A2AService/SendMessage"), None);
    }

    #[test]
    fn protojson_survives_the_wire_form() {
        let json = br#"{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"},{"raw":"dGNr","mediaType":"text/plain"},{"data":{"k":[1,"x",null]}}],"metadata":{"a":true}},"configuration":{"historyLength":0}}"#;
        let desc = request_type(Operation::SendMessage);
        let wire = json_to_message(&desc, json).unwrap().encode_to_vec();
        let back = wire_to_json(&desc, wire.as_slice()).unwrap();
        // The same request for the generated decoder (the JSON also spells out defaults).
        let read = |j: &[u8]| {
            agentproto_codec::decode_slice::<crate::v1::SendMessageRequest>(j, "$")
                .unwrap_or_else(|e| panic!("{e:?} in {}", String::from_utf8_lossy(j)))
                .value
        };
        assert_eq!(read(json), read(&back), "{}", String::from_utf8_lossy(&back));
        let b: serde_json::Value = serde_json::from_slice(&back).unwrap();
        assert_eq!(b["message"]["parts"][2]["data"], serde_json::json!({"k": [1, "x", null]}));
        assert_eq!(b["message"]["role"], "ROLE_USER");
    }

    #[test]
    fn garbage_is_not_a_message() {
        let desc = request_type(Operation::GetTask);
        assert!(wire_to_json(&desc, &[0xff, 0xff, 0xff][..]).is_err());
        assert!(json_to_message(&desc, br#"{"id": 5}"#).is_err());
        assert!(json_to_message(&desc, br#"{"nope": "x"}"#).is_err());
    }

    #[test]
    fn errors_carry_their_code_and_error_info() {
        let e = A2aError::task_not_found("t-9");
        let s = status(&e, ErrorTable::V1_0_1);
        assert_eq!(s.code(), Code::NotFound);
        let info = s.get_error_details().error_info().cloned().unwrap();
        assert_eq!(info.reason, "TASK_NOT_FOUND");
        assert_eq!(info.domain, DOMAIN);
        assert_eq!(info.metadata.get("taskId").map(String::as_str), Some("t-9"));
        for (code, name) in CODES {
            assert_eq!(code_named(name), code);
        }
        let unsupported = A2aError::new(ErrorKind::UnsupportedOperation);
        assert_eq!(status(&unsupported, ErrorTable::V1_0_1).code(), Code::FailedPrecondition);
        assert_eq!(status(&unsupported, ErrorTable::V1_0_0).code(), Code::Unimplemented);
    }
}
