//! The generated ProtoJSON codecs: presence rules, oneofs by member, aliases, enums,
//! scalars and error paths.

use agentproto_a2a::v1::{Operation, Part, PartContent, Request, SendMessageRequest, StreamResponse, Task, TaskState};
use agentproto_codec::decode_slice;

fn decode<T: for<'a> serde::Deserialize<'a> + agentproto_codec::Wants>(json: &str) -> Result<T, String> {
    decode_slice::<T>(json.as_bytes(), "$.params").map(|d| d.value).map_err(|e| e.to_string())
}

#[test]
fn a_send_message_request_decodes_and_re_encodes_canonically() {
    let json = r#"{"message":{"message_id":"m-1","role":"ROLE_USER","parts":[{"text":"hi","media_type":"text/plain"},{"raw":"dGNr","filename":"a.txt"},{"data":{"k":[1,null]}}],"unknown":1},"configuration":{"historyLength":0,"return_immediately":true}}"#;
    let req: SendMessageRequest = decode(json).unwrap();
    assert_eq!(req.message.message_id, "m-1");
    assert_eq!(req.message.parts[1].content, PartContent::Raw(b"tck".to_vec().into()));
    let cfg = req.configuration.as_ref().unwrap();
    assert_eq!(cfg.history_length, Some(0));
    assert!(cfg.return_immediately);
    let out = serde_json::to_string(&req).unwrap();
    assert_eq!(
        out,
        r#"{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"mediaType":"text/plain","text":"hi"},{"filename":"a.txt","raw":"dGNr"},{"data":{"k":[1,null]}}]},"configuration":{"historyLength":0,"returnImmediately":true}}"#
    );
    let again: SendMessageRequest = decode(&out).unwrap();
    assert_eq!(again, req);
}

#[test]
fn errors_name_the_path_and_what_was_expected() {
    let cases = [
        (
            r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"b"}]}}"#,
            "$.params.message.parts[0].url",
            "at most one",
        ),
        (
            r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"filename":"x"}]}}"#,
            "$.params.message.parts[0]",
            "expected one of the fields \"text\"",
        ),
        (
            r#"{"message":{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"a"}]}}"#,
            "$.params.message.role",
            "ROLE_UNSPECIFIED",
        ),
        (r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}"#, "$.params.message.parts", "at least 1"),
        (r#"{"message":{"role":"ROLE_USER","parts":[{"text":"a"}]}}"#, "$.params.message", "messageId"),
        (
            r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"@@"}]}}"#,
            "$.params.message.parts[0].raw",
            "base64",
        ),
        (
            r#"{"message":{"messageId":"m","messageId":"n","role":"ROLE_USER","parts":[{"text":"a"}]}}"#,
            "$.params.message.messageId",
            "the key \"messageId\" twice",
        ),
        (
            r#"{"message":{"messageId":"m","message_id":"n","role":"ROLE_USER","parts":[{"text":"a"}]}}"#,
            "$.params.message.messageId",
            "the key \"messageId\" twice",
        ),
    ];
    for (json, path, what) in cases {
        let err = decode::<SendMessageRequest>(json).unwrap_err();
        assert!(err.contains(path) && err.contains(what), "{json}\n  -> {err}");
    }
}

#[test]
fn stream_responses_are_chosen_by_member() {
    let ev: StreamResponse = decode(r#"{"status_update":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-11-21T10:00:00Z"}}}"#).unwrap();
    let StreamResponse::StatusUpdate(u) = &ev else { panic!("{ev:?}") };
    assert_eq!(u.status.state, TaskState::Working);
    assert_eq!(
        serde_json::to_string(&ev).unwrap(),
        r#"{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-11-21T10:00:00.000Z"}}}"#
    );
    assert!(decode::<StreamResponse>(r#"{"task":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}},"message":{}}"#)
        .unwrap_err()
        .contains("at most one"));
    assert!(decode::<StreamResponse>("{}").unwrap_err().contains("expected one of"));
}

#[test]
fn implicit_presence_fields_are_omitted_at_their_zero_value() {
    let t: Task =
        decode(r#"{"id":"t","contextId":"","status":{"state":"TASK_STATE_SUBMITTED"},"artifacts":[],"history":[]}"#)
            .unwrap();
    assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"id":"t","status":{"state":"TASK_STATE_SUBMITTED"}}"#);
    let p = Part::new(PartContent::Text("x".into()));
    assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"text":"x"}"#);
}

#[test]
fn the_operation_table_follows_the_proto() {
    assert_eq!(Operation::ALL.len(), 11);
    assert_eq!(Operation::from_name("SendStreamingMessage"), Some(Operation::SendStreamingMessage));
    assert!(Operation::SubscribeToTask.streaming());
    assert_eq!(Operation::GetTask.http()[0].path, "/tasks/{id}");
    assert_eq!(Operation::GetTask.http()[1].path, "/{tenant}/tasks/{id}");
    let q: Vec<&str> = Operation::ListTasks.query_fields().iter().map(|(k, _)| *k).collect();
    assert!(q.contains(&"pageSize") && q.contains(&"statusTimestampAfter"), "{q:?}");
    assert!(!q.contains(&"tenant"), "the tenant travels in the path, not the query: {q:?}");
    let r = Request::decode(Operation::GetTask, br#"{"id":"t-1","historyLength":2}"#, "$.params").unwrap().value;
    assert_eq!(r.operation(), Operation::GetTask);
}

/// What the ProtoJSON mapping lets a parser accept beyond the canonical form: enum
/// numbers, integers as strings or in exponent form, and `null` for "the default".
#[test]
fn protojson_input_leniency() {
    // Enum values by their proto number (ROLE_USER = 1, TASK_STATE_WORKING = 2).
    let req: SendMessageRequest = decode(r#"{"message":{"messageId":"m","role":1,"parts":[{"text":"a"}]}}"#).unwrap();
    assert_eq!(req.message.role.as_str(), "ROLE_USER");
    let ev: StreamResponse = decode(r#"{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":2}}}"#).unwrap();
    let StreamResponse::StatusUpdate(u) = &ev else { panic!("{ev:?}") };
    assert_eq!(u.status.state, TaskState::Working);
    // The zero (`*_UNSPECIFIED`) and unknown numbers are refused like their names.
    for bad in ["0", "3", "-1", "1.5"] {
        let json = format!(r#"{{"message":{{"messageId":"m","role":{bad},"parts":[{{"text":"a"}}]}}}}"#);
        let err = decode::<SendMessageRequest>(&json).unwrap_err();
        assert!(err.contains("$.params.message.role"), "{bad} -> {err}");
    }

    // Integers as decimal strings, and numbers in exponent or fraction form when integral.
    for (text, want) in
        [(r#""5""#, 5), ("5", 5), ("1e0", 1), ("5.0", 5), ("2.5e1", 25), (r#""-3""#, -3), (r#""1e2""#, 100)]
    {
        let r = Request::decode(Operation::GetTask, format!(r#"{{"id":"t","historyLength":{text}}}"#).as_bytes(), "$")
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .value;
        let Request::GetTask(r) = r else { unreachable!() };
        assert_eq!(r.history_length, Some(want), "{text}");
    }
    for bad in ["1.5", r#""1.5""#, r#""x""#, r#"" 5""#, "2147483648", r#""99999999999""#, "1e10", "true", "[]"] {
        let err = Request::decode(Operation::GetTask, format!(r#"{{"id":"t","historyLength":{bad}}}"#).as_bytes(), "$")
            .map(|_| ())
            .unwrap_err();
        assert!(err.to_string().contains("$.historyLength"), "{bad} -> {err}");
    }

    // `null` means the field's default: absent for optional fields and messages, empty
    // for lists; a required field given `null` is missing.
    let req: SendMessageRequest = decode(
        r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","mediaType":null,"metadata":null}],"contextId":null,"referenceTaskIds":null,"extensions":null},"configuration":null,"metadata":null}"#,
    )
    .unwrap();
    assert!(req.configuration.is_none() && req.metadata.is_none());
    assert!(req.message.context_id.is_empty() && req.message.reference_task_ids.is_empty());
    assert!(req.message.parts[0].media_type.is_empty());
    let r =
        Request::decode(Operation::GetTask, br#"{"id":"t","historyLength":null,"tenant":null}"#, "$").unwrap().value;
    let Request::GetTask(r) = r else { unreachable!() };
    assert_eq!(r.history_length, None);
    // A oneof member given `null` is not chosen ...
    let p: Part = decode(r#"{"text":null,"url":"https://x"}"#).unwrap();
    assert_eq!(p.content, PartContent::Url("https://x".into()));
    // ... except a `google.protobuf.Value`, for which `null` is a value.
    let p: Part = decode(r#"{"data":null}"#).unwrap();
    assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"data":null}"#);
    let err =
        decode::<SendMessageRequest>(r#"{"message":{"messageId":null,"role":"ROLE_USER","parts":[{"text":"a"}]}}"#)
            .unwrap_err();
    assert!(err.contains("$.params.message") && err.contains("messageId"), "{err}");
}
