//! Property tests of the generated codecs through the shared receive path.

use agentproto_acp::receive::{classify, AgentV1, ClientV1, Incoming};
use agentproto_acp::v1::{AgentNotification, ClientRequest};
use agentproto_acp::Payload;
use proptest::prelude::*;
use serde_json::value::RawValue;

/// Well-formed messages of several shapes, used as seeds for mutation.
const SEEDS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"},{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true},"terminal":true},"_meta":{"a":[1,2]}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/r","mcpServers":[{"name":"a","command":"c","args":[],"env":[]},{"type":"http","name":"h","url":"u","headers":[]}]}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"session/set_config_option","params":{"sessionId":"s","configId":"c","type":"boolean","value":true}}"#,
];

const UPDATES: &[&str] = &[
    r#"{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","kind":"edit","content":[{"type":"diff","path":"/a","newText":"b"}],"locations":[{"path":"/a","line":3}]}}"#,
    r#"{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":null}}"#,
    r#"{"sessionId":"s","update":{"sessionUpdate":"future_kind","x":[1,{"y":null}]}}"#,
    r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}}"#,
    r#"{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"a","description":"d"},7,{"name":"b","description":"e","input":{"hint":"h"}}]}}"#,
];

fn roundtrip<P: Payload + PartialEq + std::fmt::Debug>(method: &str, text: &str) {
    let raw = RawValue::from_string(text.to_owned()).unwrap();
    let first = P::decode(method, Some(&raw)).expect("seed decodes");
    let mut buf = Vec::new();
    first.value.encode_payload(&mut buf).unwrap();
    let again = RawValue::from_string(String::from_utf8(buf.clone()).unwrap()).unwrap();
    let second = P::decode(method, Some(&again)).expect("re-encoded value decodes");
    assert_eq!(first.value, second.value, "decode(encode(x)) != x for {text}");
    let mut buf2 = Vec::new();
    second.value.encode_payload(&mut buf2).unwrap();
    assert_eq!(buf, buf2, "encoding is not stable for {text}");
}

#[test]
fn seeds_roundtrip_through_encode() {
    for seed in SEEDS {
        let v: serde_json::Value = serde_json::from_str(seed).unwrap();
        let params = v["params"].to_string();
        roundtrip::<ClientRequest>(v["method"].as_str().unwrap(), &params);
    }
    for update in UPDATES {
        roundtrip::<AgentNotification>("session/update", update);
    }
}

#[test]
fn unknown_update_keeps_raw_json_and_warns() {
    let raw = RawValue::from_string(UPDATES[2].to_owned()).unwrap();
    let d = AgentNotification::decode("session/update", Some(&raw)).unwrap();
    let mut buf = Vec::new();
    d.value.encode_payload(&mut buf).unwrap();
    assert_eq!(std::str::from_utf8(&buf).unwrap(), UPDATES[2]);
    assert_eq!(d.warnings.len(), 1);
    assert_eq!(d.warnings[0].path, "$.params.update");
}

#[test]
fn skipped_items_warn_at_their_index() {
    let raw = RawValue::from_string(UPDATES[4].to_owned()).unwrap();
    let d = AgentNotification::decode("session/update", Some(&raw)).unwrap();
    let paths: Vec<_> = d.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["$.params.update.availableCommands[1]"]);
}

#[test]
fn nested_error_names_its_path_expected_and_found() {
    let raw = RawValue::from_string(
        r#"{"sessionId":"s","prompt":[{"type":"text","text":"a"},{"type":"text","text":5}]}"#.into(),
    )
    .unwrap();
    let err = ClientRequest::decode("session/prompt", Some(&raw)).unwrap_err();
    let agentproto_acp::DispatchError::Invalid(e) = err else { panic!("{err:?}") };
    assert_eq!(e.path, "$.params.prompt[1].text");
    assert_eq!(e.expected, "a string");
    assert_eq!(e.found, "the integer 5");
}

fn mutate(seed: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for &(at, op, byte) in edits {
        if bytes.is_empty() {
            bytes.push(byte);
            continue;
        }
        let at = at % bytes.len();
        match op % 3 {
            0 => bytes[at] = byte,
            1 => {
                bytes.remove(at);
            }
            _ => bytes.insert(at, byte),
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Arbitrary bytes never panic the receive path, on either side.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = classify::<AgentV1>(&bytes, |_| Some("session/prompt".to_owned()));
        let _ = classify::<ClientV1>(&bytes, |_| Some("initialize".to_owned()));
    }

    /// Near-valid messages (seeds with a few bytes changed) never panic, and whatever
    /// decodes re-encodes to something that decodes to the same value.
    #[test]
    fn mutated_messages_never_panic(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), prop::sample::select(b"{}[]\":,0a\\ntn-".to_vec())), 1..6),
    ) {
        let bytes = mutate(SEEDS[seed].as_bytes(), &edits);
        if let Incoming::Request { request, .. } = classify::<AgentV1>(&bytes, |_| None) {
            let mut buf = Vec::new();
            request.value.encode_payload(&mut buf).unwrap();
            let raw = RawValue::from_string(String::from_utf8(buf).unwrap()).unwrap();
            let again = ClientRequest::decode(request.value.method(), Some(&raw));
            prop_assert!(again.is_ok(), "re-encoded params failed to decode: {:?}", again);
            prop_assert_eq!(&again.unwrap().value, &request.value);
        }
    }
}
