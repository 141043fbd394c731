//! The test oracle: the pinned proto's descriptors (compiled by `build.rs` with
//! `protox`) read by `prost-reflect`, an independent protobuf implementation, to check
//! the generated codec against (`codec_tests.rs`) and the generated operation table
//! against the proto's service. Nothing outside the tests uses it.

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, Kind, MessageDescriptor, SerializeOptions};

use super::SERVICE;
use crate::v1::Operation;

/// The descriptor set `build.rs` compiled from the pinned proto.
pub(crate) static DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/a2a_descriptors.bin"));

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::{operation_at, path};
    use prost::Message as _;

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
}
