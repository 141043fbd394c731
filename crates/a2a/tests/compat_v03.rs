//! A2A 0.3 compatibility: the 0.3 ↔ 1.0 converters on a corpus of realistic 0.3 values,
//! and 0.3 clients served end to end by a real server.
//!
//! Every 1.0 value the converters produce is decoded through the generated `v1` types,
//! and every 0.3 value (the corpus and what the server answers) is checked against the
//! pinned 0.3 JSON Schema by a small schema walk.
#![cfg(feature = "server")]

use std::time::Duration;

use agentproto_a2a::compat::v03::{self, Direction, Type};
use agentproto_a2a::demo::{card, DemoAgent};
use agentproto_a2a::errors::ErrorKind;
use agentproto_a2a::server::A2aServer;
use agentproto_a2a::v1::{self, Operation, Request};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------
// The pinned 0.3 schema, and a walk that checks the parts of it that matter here:
// `$ref`, `anyOf`, `type`, `const`, `enum`, `required`, `properties`, `items`,
// `additionalProperties`.

fn schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/a2a/v0.3/a2a.json");
    serde_json::from_slice(&std::fs::read(path).expect("read the 0.3 schema")).expect("schema is JSON")
}

fn check(root: &Value, s: &Value, v: &Value, path: &str) -> Result<(), String> {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/definitions/");
        return check(root, &root["definitions"][name], v, path);
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array) {
        let errs: Vec<String> = any.iter().filter_map(|a| check(root, a, v, path).err()).collect();
        if errs.len() == any.len() {
            return Err(format!("{path}: no alternative matches: {errs:?}"));
        }
    }
    if let Some(t) = s.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "null" => v.is_null(),
            _ => true,
        };
        if !ok {
            return Err(format!("{path}: expected {t}, found {v}"));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            return Err(format!("{path}: expected {c}, found {v}"));
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            return Err(format!("{path}: {v} is not one of {e:?}"));
        }
    }
    if let Some(obj) = v.as_object() {
        for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
            let r = r.as_str().unwrap_or_default();
            if !obj.contains_key(r) {
                return Err(format!("{path}: missing required member {r}"));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, item) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => check(root, ps, item, &format!("{path}.{k}"))?,
                None => {
                    if let Some(ap) = s.get("additionalProperties") {
                        if ap == &Value::Bool(false) {
                            return Err(format!("{path}: unexpected member {k}"));
                        }
                        check(root, ap, item, &format!("{path}.{k}"))?;
                    } else if props.is_some() && s.get("anyOf").is_none() {
                        return Err(format!("{path}: member {k} is not in the 0.3 schema"));
                    }
                }
            }
        }
    }
    if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            check(root, items, item, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

/// Checks `v` against a definition of the 0.3 schema.
fn valid_03(def: &str, v: &Value) {
    let root = schema();
    let s = json!({"$ref": format!("#/definitions/{def}")});
    if let Err(e) = check(&root, &s, v, "$") {
        panic!("not a valid 0.3 {def}: {e}\n{v:#}");
    }
}

fn stream_event_def(v: &Value) -> &'static str {
    match v["kind"].as_str() {
        Some("task") => "Task",
        Some("message") => "Message",
        Some("status-update") => "TaskStatusUpdateEvent",
        Some("artifact-update") => "TaskArtifactUpdateEvent",
        _ => panic!("not a 0.3 event: {v}"),
    }
}

/// The 0.3 schema definition of a converter type (for events: by `kind`).
fn def_of(ty: Type, v: &Value) -> &'static str {
    match ty {
        Type::Message => "Message",
        Type::Part => "Part",
        Type::Artifact => "Artifact",
        Type::TaskStatus => "TaskStatus",
        Type::Task => "Task",
        Type::TaskStatusUpdateEvent => "TaskStatusUpdateEvent",
        Type::TaskArtifactUpdateEvent => "TaskArtifactUpdateEvent",
        Type::StreamEvent | Type::SendMessageResult => stream_event_def(v),
        Type::PushNotificationConfig => "PushNotificationConfig",
        Type::TaskPushNotificationConfig => "TaskPushNotificationConfig",
        Type::MessageSendParams => "MessageSendParams",
        Type::AgentCard => "AgentCard",
    }
}

/// Decodes a 1.0 value through the generated type of `ty`, and checks that re-encoding
/// the decoded value gives the same ProtoJSON.
fn decode_v1(ty: Type, v: &Value) {
    fn go<T: for<'a> serde::Deserialize<'a> + serde::Serialize + agentproto_codec::Wants>(v: &Value) {
        let bytes = serde_json::to_vec(v).unwrap();
        match agentproto_codec::decode_slice::<T>(&bytes, "$") {
            Ok(d) => {
                let again = serde_json::to_value(&d.value).unwrap();
                let back = agentproto_codec::decode_slice::<T>(&serde_json::to_vec(&again).unwrap(), "$").unwrap();
                assert_eq!(serde_json::to_value(&back.value).unwrap(), again);
            }
            Err(e) => panic!("not valid 1.0 ProtoJSON: {e}\n{v:#}"),
        }
    }
    match ty {
        Type::Message => go::<v1::Message>(v),
        Type::Part => go::<v1::Part>(v),
        Type::Artifact => go::<v1::Artifact>(v),
        Type::TaskStatus => go::<v1::TaskStatus>(v),
        Type::Task => go::<v1::Task>(v),
        Type::TaskStatusUpdateEvent => go::<v1::TaskStatusUpdateEvent>(v),
        Type::TaskArtifactUpdateEvent => go::<v1::TaskArtifactUpdateEvent>(v),
        Type::StreamEvent => go::<v1::StreamResponse>(v),
        Type::SendMessageResult => go::<v1::SendMessageResponse>(v),
        Type::PushNotificationConfig | Type::TaskPushNotificationConfig => go::<v1::TaskPushNotificationConfig>(v),
        Type::MessageSendParams => go::<v1::SendMessageRequest>(v),
        Type::AgentCard => go::<v1::AgentCard>(v),
    }
}

// ---------------------------------------------------------------------------
// The corpus

const STATES: [(&str, &str); 8] = [
    ("submitted", "TASK_STATE_SUBMITTED"),
    ("working", "TASK_STATE_WORKING"),
    ("input-required", "TASK_STATE_INPUT_REQUIRED"),
    ("completed", "TASK_STATE_COMPLETED"),
    ("canceled", "TASK_STATE_CANCELED"),
    ("failed", "TASK_STATE_FAILED"),
    ("rejected", "TASK_STATE_REJECTED"),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED"),
];

fn text_part(t: &str) -> Value {
    json!({"kind": "text", "text": t})
}

fn user_message() -> Value {
    json!({
        "kind": "message",
        "messageId": "9229e770-767c-417b-a0b0-f0741243c589",
        "role": "user",
        "contextId": "ctx-1",
        "taskId": "task-1",
        "referenceTaskIds": ["task-0"],
        "extensions": ["https://example.com/ext/v1"],
        "metadata": {"https://example.com/ext/v1": {"trace": "abc"}},
        "parts": [
            {"kind": "text", "text": "Summarize these", "metadata": {"lang": "en"}},
            {"kind": "file", "file": {"bytes": "dGNr", "mimeType": "text/plain", "name": "input.txt"}},
            {"kind": "file", "file": {"uri": "https://example.com/report.pdf", "mimeType": "application/pdf"}},
            {"kind": "file", "file": {"uri": "https://example.com/blob"}},
            {"kind": "data", "data": {"key": "value", "count": 42, "nested": {"list": [1, 2, null]}}},
        ],
    })
}

fn agent_message(t: &str) -> Value {
    json!({"kind": "message", "messageId": "m-agent-1", "role": "agent", "contextId": "ctx-1", "taskId": "task-1", "parts": [text_part(t)]})
}

fn artifact() -> Value {
    json!({
        "artifactId": "a-1",
        "name": "output",
        "description": "The generated output",
        "parts": [
            text_part("Generated text content"),
            {"kind": "file", "file": {"bytes": "dGNr", "mimeType": "text/plain", "name": "output.txt"}},
            {"kind": "file", "file": {"uri": "https://example.com/output.txt", "mimeType": "text/plain", "name": "output.txt"}},
            {"kind": "data", "data": {"key": "value", "count": 42}},
        ],
        "metadata": {"source": "test"},
        "extensions": ["https://example.com/ext/v1"],
    })
}

fn task(state: &str) -> Value {
    json!({
        "kind": "task",
        "id": "task-1",
        "contextId": "ctx-1",
        "status": {"state": state, "message": agent_message("status"), "timestamp": "2025-07-01T10:00:00.123Z"},
        "artifacts": [artifact()],
        "history": [user_message(), agent_message("Hello from TCK")],
        "metadata": {"k": "v"},
    })
}

fn status_update(state: &str, fin: bool) -> Value {
    json!({
        "kind": "status-update",
        "taskId": "task-1",
        "contextId": "ctx-1",
        "status": {"state": state, "timestamp": "2025-07-01T10:00:01.000Z"},
        "final": fin,
        "metadata": {"seq": 3},
    })
}

fn artifact_update(append: bool, last: bool) -> Value {
    json!({"kind": "artifact-update", "taskId": "task-1", "contextId": "ctx-1", "artifact": artifact(), "append": append, "lastChunk": last})
}

fn push_config() -> Value {
    json!({"id": "cfg-1", "url": "https://hooks.example.com/a2a", "token": "secret-token", "authentication": {"schemes": ["Bearer"], "credentials": "xyz"}})
}

fn card_03() -> Value {
    json!({
        "name": "Recipe Agent",
        "description": "Agent that helps users with recipes and cooking.",
        "url": "https://api.example.com/a2a/v1",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "https://api.example.com/a2a/v1", "transport": "JSONRPC"},
            {"url": "https://grpc.example.com/a2a", "transport": "GRPC"},
            {"url": "https://rest.example.com/v1", "transport": "HTTP+JSON"},
        ],
        "protocolVersion": "0.3.0",
        "version": "1.0.0",
        "provider": {"organization": "Example", "url": "https://example.com"},
        "documentationUrl": "https://example.com/docs",
        "iconUrl": "https://example.com/icon.png",
        "capabilities": {"streaming": true, "pushNotifications": false, "extensions": [
            {"uri": "https://example.com/ext/v1", "description": "An extension", "required": false, "params": {"a": 1}}
        ]},
        "supportsAuthenticatedExtendedCard": true,
        "securitySchemes": {
            "api-key": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "Key"},
            "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            "oauth": {"type": "oauth2", "flows": {"authorizationCode": {
                "authorizationUrl": "https://auth.example.com/authorize",
                "tokenUrl": "https://auth.example.com/token",
                "scopes": {"read": "Read access"}
            }}, "oauth2MetadataUrl": "https://auth.example.com/.well-known/oauth-authorization-server"},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://auth.example.com/.well-known/openid-configuration"},
            "mtls": {"type": "mutualTLS"},
        },
        "security": [{"oauth": ["read"]}, {"api-key": [], "mtls": []}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{
            "id": "recipe", "name": "Recipe", "description": "Finds recipes", "tags": ["cooking"],
            "examples": ["I need a recipe for bread"], "inputModes": ["text/plain"], "outputModes": ["application/json"],
            "security": [{"oidc": ["openid"]}]
        }],
        "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln", "header": {"kid": "k1"}}],
    })
}

fn corpus() -> Vec<(Type, Value)> {
    let mut c = vec![
        (Type::Message, user_message()),
        (Type::Message, agent_message("hi")),
        (Type::Artifact, artifact()),
        (Type::Part, text_part("plain")),
        (Type::Part, json!({"kind": "file", "file": {"bytes": "aGVsbG8="}})),
        (Type::Part, json!({"kind": "file", "file": {"uri": "https://example.com/x", "name": "x"}})),
        (Type::Part, json!({"kind": "data", "data": {}, "metadata": {"m": true}})),
        (Type::TaskArtifactUpdateEvent, artifact_update(false, false)),
        (Type::TaskArtifactUpdateEvent, artifact_update(true, true)),
        (Type::StreamEvent, artifact_update(true, false)),
        (Type::StreamEvent, agent_message("direct")),
        (Type::SendMessageResult, agent_message("Direct message response")),
        (Type::PushNotificationConfig, push_config()),
        (Type::PushNotificationConfig, json!({"url": "https://hooks.example.com/a2a"})),
        (Type::TaskPushNotificationConfig, json!({"taskId": "task-1", "pushNotificationConfig": push_config()})),
        (
            Type::MessageSendParams,
            json!({"message": user_message(), "configuration": {
                "acceptedOutputModes": ["text/plain"], "blocking": true, "historyLength": 5,
                "pushNotificationConfig": push_config()}, "metadata": {"req": 1}}),
        ),
        (Type::MessageSendParams, json!({"message": user_message(), "configuration": {"blocking": false}})),
        (Type::MessageSendParams, json!({"message": user_message()})),
        (Type::AgentCard, card_03()),
    ];
    let mut minimal_card = card_03();
    for k in ["additionalInterfaces", "securitySchemes", "security", "signatures", "supportsAuthenticatedExtendedCard"]
    {
        minimal_card.as_object_mut().unwrap().remove(k);
    }
    c.push((Type::AgentCard, minimal_card));
    for (s, _) in STATES {
        c.push((Type::Task, task(s)));
        c.push((Type::SendMessageResult, task(s)));
        c.push((Type::StreamEvent, task(s)));
        c.push((Type::TaskStatus, json!({"state": s})));
        let fin = !matches!(s, "submitted" | "working");
        c.push((Type::TaskStatusUpdateEvent, status_update(s, fin)));
        c.push((Type::StreamEvent, status_update(s, fin)));
    }
    c
}

// ---------------------------------------------------------------------------
// Converter tests

#[test]
fn the_schema_walk_refuses_what_0_3_refuses() {
    let root = schema();
    let t = |def: &str, v: Value| check(&root, &json!({"$ref": format!("#/definitions/{def}")}), &v, "$");
    let mut no_kind = task("completed");
    no_kind.as_object_mut().unwrap().remove("kind");
    assert!(t("Task", no_kind).is_err());
    assert!(t("TaskStatus", json!({"state": "TASK_STATE_COMPLETED"})).is_err());
    assert!(t("Part", json!({"text": "1.0 shape"})).is_err());
    assert!(t("Part", json!({"kind": "file", "file": {"raw": "dGNr"}})).is_err());
    assert!(t("Message", json!({"kind": "message", "messageId": "m", "role": "ROLE_USER", "parts": []})).is_err());
    assert!(t(
        "TaskStatusUpdateEvent",
        json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}})
    )
    .is_err());
}

#[test]
fn the_corpus_is_valid_0_3() {
    for (ty, v) in corpus() {
        valid_03(def_of(ty, &v), &v);
    }
}

#[test]
fn every_corpus_value_round_trips_through_valid_1_0() {
    for (ty, v) in corpus() {
        let up = v03::to_v1(ty, &v).unwrap_or_else(|e| panic!("{ty:?}: {e}\n{v:#}"));
        decode_v1(ty, &up);
        let down = v03::to_v03(ty, &up).unwrap_or_else(|e| panic!("{ty:?} back: {e}\n{up:#}"));
        assert_eq!(down, v, "{ty:?} did not round-trip; 1.0 form:\n{up:#}");
        valid_03(def_of(ty, &down), &down);
        // And 1.0 → 0.3 → 1.0 is the identity on what the converter produced.
        assert_eq!(v03::to_v1(ty, &down).unwrap(), up, "{ty:?}");
    }
}

#[test]
fn messages_and_parts_take_the_1_0_shapes() {
    let up = v03::to_v1(Type::Message, &user_message()).unwrap();
    assert!(up.get("kind").is_none());
    assert_eq!(up["role"], "ROLE_USER");
    assert_eq!(up["parts"][0], json!({"text": "Summarize these", "metadata": {"lang": "en"}}));
    assert_eq!(up["parts"][1], json!({"raw": "dGNr", "mediaType": "text/plain", "filename": "input.txt"}));
    assert_eq!(up["parts"][2], json!({"url": "https://example.com/report.pdf", "mediaType": "application/pdf"}));
    assert_eq!(up["parts"][4]["data"]["count"], 42);
    assert_eq!(v03::to_v1(Type::Message, &agent_message("x")).unwrap()["role"], "ROLE_AGENT");
}

#[test]
fn every_state_maps_both_ways() {
    for (s03, s1) in STATES {
        let up = v03::to_v1(Type::TaskStatus, &json!({"state": s03})).unwrap();
        assert_eq!(up["state"], s1);
        assert_eq!(v03::to_v03(Type::TaskStatus, &json!({"state": s1})).unwrap()["state"], s03);
    }
    // ProtoJSON also allows enum numbers.
    assert_eq!(v03::to_v03(Type::TaskStatus, &json!({"state": 6})).unwrap()["state"], "input-required");
}

#[test]
fn final_follows_the_state_on_the_way_down() {
    for (s03, s1) in STATES {
        let ev = json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": s1}}});
        let down = v03::to_v03(Type::StreamEvent, &ev).unwrap();
        let expect = !matches!(s03, "submitted" | "working");
        assert_eq!(down["final"], expect, "{s03}");
        assert_eq!(down["kind"], "status-update");
        assert_eq!(v03::is_final_event(&down), expect);
        // `final` is gone in 1.0.
        assert!(v03::to_v1(Type::StreamEvent, &down).unwrap()["statusUpdate"].get("final").is_none());
    }
}

#[test]
fn blocking_becomes_return_immediately() {
    let p = |c: Value| json!({"message": agent_message("x"), "configuration": c});
    let up = v03::to_v1(Type::MessageSendParams, &p(json!({"blocking": false}))).unwrap();
    assert_eq!(up["configuration"]["returnImmediately"], true);
    let up = v03::to_v1(Type::MessageSendParams, &p(json!({"blocking": true}))).unwrap();
    assert_eq!(up["configuration"]["returnImmediately"], false);
    let up = v03::to_v1(Type::MessageSendParams, &p(json!({}))).unwrap();
    assert!(up["configuration"].get("returnImmediately").is_none());
}

#[test]
fn push_configs_flatten_and_keep_the_first_scheme() {
    let c = json!({"taskId": "t-1", "pushNotificationConfig": {"id": "c", "url": "https://h", "authentication": {"schemes": ["Bearer", "Basic"]}}});
    let up = v03::to_v1(Type::TaskPushNotificationConfig, &c).unwrap();
    assert_eq!(up, json!({"taskId": "t-1", "id": "c", "url": "https://h", "authentication": {"scheme": "Bearer"}}));
    decode_v1(Type::TaskPushNotificationConfig, &up);
    let err =
        v03::to_v1(Type::PushNotificationConfig, &json!({"url": "u", "authentication": {"schemes": []}})).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidParams);
    assert!(err.message.contains("$.authentication.schemes"), "{}", err.message);
}

#[test]
fn a_1_0_card_becomes_a_0_3_card() {
    let base = "http://127.0.0.1:9999";
    let card1 = serde_json::to_value(card(base)).unwrap();
    let c03 = v03::to_v03(Type::AgentCard, &card1).unwrap();
    valid_03("AgentCard", &c03);
    assert_eq!(c03["url"], format!("{base}/"));
    assert_eq!(c03["preferredTransport"], "JSONRPC");
    assert_eq!(c03["protocolVersion"], "0.3.0");
    assert_eq!(c03["additionalInterfaces"][1], json!({"url": format!("{base}/a2a/rest"), "transport": "HTTP+JSON"}));
    // A card that declares 0.3 interfaces offers only those to 0.3 clients.
    let mut mixed = card1.clone();
    mixed["supportedInterfaces"]
        .as_array_mut()
        .unwrap()
        .push(json!({"url": "https://old.example.com/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}));
    mixed["capabilities"]["extendedAgentCard"] = json!(true);
    let c03 = v03::to_v03(Type::AgentCard, &mixed).unwrap();
    assert_eq!(c03["url"], "https://old.example.com/");
    assert!(c03.get("additionalInterfaces").is_none());
    assert_eq!(c03["supportsAuthenticatedExtendedCard"], true);
    // And the 0.3 corpus card in 1.0 form.
    let up = v03::to_v1(Type::AgentCard, &card_03()).unwrap();
    assert_eq!(up["supportedInterfaces"].as_array().unwrap().len(), 3);
    assert_eq!(up["supportedInterfaces"][0]["protocolVersion"], "0.3");
    assert_eq!(up["capabilities"]["extendedAgentCard"], true);
    assert_eq!(
        up["securitySchemes"]["api-key"],
        json!({"apiKeySecurityScheme": {"description": "Key", "location": "header", "name": "X-API-Key"}})
    );
    assert_eq!(up["securityRequirements"][0], json!({"schemes": {"oauth": {"list": ["read"]}}}));
}

#[test]
fn a_1_0_data_part_that_is_not_an_object_is_wrapped() {
    let down = v03::to_v03(Type::Part, &json!({"data": [1, 2]})).unwrap();
    assert_eq!(down, json!({"kind": "data", "data": {"value": [1, 2]}}));
    valid_03("Part", &down);
}

#[test]
fn bad_input_names_its_path() {
    let cases = [
        (Type::Message, json!({"kind": "message", "messageId": "m", "role": "robot", "parts": []}), "$.role"),
        (Type::Message, json!({"messageId": "m", "role": "user", "parts": [{"kind": "video"}]}), "$.parts[0].kind"),
        (Type::Message, json!({"messageId": "m", "role": "user", "parts": [{}]}), "$.parts[0].kind"),
        (
            Type::Message,
            json!({"messageId": "m", "role": "user", "parts": [{"kind": "file", "file": {"name": "x"}}]}),
            "$.parts[0].file",
        ),
        (
            Type::Message,
            json!({"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": 7}]}),
            "$.parts[0].text",
        ),
        (Type::Message, json!({"messageId": "m", "role": "user", "parts": "no"}), "$.parts"),
        (Type::Message, json!({"kind": "task", "messageId": "m"}), "$.kind"),
        (Type::Task, json!({"id": "t", "status": {"state": "sleeping"}}), "$.status.state"),
        (Type::StreamEvent, json!({"kind": "weird"}), "$.kind"),
        (
            Type::MessageSendParams,
            json!({"message": {}, "configuration": {"blocking": "yes"}}),
            "$.configuration.blocking",
        ),
        (Type::AgentCard, json!({"name": "x"}), "$.url"),
        (Type::Task, json!([]), "$"),
    ];
    for (ty, v, path) in cases {
        let e = v03::to_v1(ty, &v).expect_err(&format!("{ty:?} {v} should fail"));
        assert_eq!(e.kind, ErrorKind::InvalidParams);
        let p = e.metadata.iter().find(|(k, _)| k == "path").map(|(_, v)| v.as_str());
        assert_eq!(p, Some(path), "{}", e.message);
    }
    // The other way too.
    let e = v03::to_v03(Type::Part, &json!({"text": "a", "url": "b"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidParams);
    let e = v03::to_v03(Type::StreamEvent, &json!({})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidParams);
}

// ---------------------------------------------------------------------------
// Methods

#[test]
fn the_method_table_covers_every_0_3_method() {
    let names = [
        ("message/send", Operation::SendMessage),
        ("message/stream", Operation::SendStreamingMessage),
        ("tasks/get", Operation::GetTask),
        ("tasks/cancel", Operation::CancelTask),
        ("tasks/resubscribe", Operation::SubscribeToTask),
        ("tasks/pushNotificationConfig/set", Operation::CreateTaskPushNotificationConfig),
        ("tasks/pushNotificationConfig/get", Operation::GetTaskPushNotificationConfig),
        ("tasks/pushNotificationConfig/list", Operation::ListTaskPushNotificationConfigs),
        ("tasks/pushNotificationConfig/delete", Operation::DeleteTaskPushNotificationConfig),
        ("agent/getAuthenticatedExtendedCard", Operation::GetExtendedAgentCard),
    ];
    for (name, op) in names {
        assert_eq!(v03::operation(name), Some(op));
        assert_eq!(v03::method_for(op).map(|m| m.name), Some(name));
    }
    assert_eq!(v03::METHODS.len(), names.len());
    assert!(v03::method("SendMessage").is_none());
    assert!(v03::method_for(Operation::ListTasks).is_none());
}

/// 0.3 params for each method, checked against the schema's request definitions, that
/// decode as the 1.0 request and round-trip.
#[test]
fn params_of_every_method_decode_as_1_0_requests_and_round_trip() {
    let send = json!({"message": user_message(), "configuration": {"blocking": false, "historyLength": 2}});
    let cases = [
        ("message/send", "MessageSendParams", send.clone()),
        ("message/stream", "MessageSendParams", send),
        ("tasks/get", "TaskQueryParams", json!({"id": "task-1", "historyLength": 3})),
        ("tasks/cancel", "TaskIdParams", json!({"id": "task-1", "metadata": {"why": "test"}})),
        ("tasks/resubscribe", "TaskIdParams", json!({"id": "task-1"})),
        (
            "tasks/pushNotificationConfig/set",
            "TaskPushNotificationConfig",
            json!({"taskId": "task-1", "pushNotificationConfig": push_config()}),
        ),
        (
            "tasks/pushNotificationConfig/get",
            "GetTaskPushNotificationConfigParams",
            json!({"id": "task-1", "pushNotificationConfigId": "cfg-1"}),
        ),
        ("tasks/pushNotificationConfig/list", "ListTaskPushNotificationConfigParams", json!({"id": "task-1"})),
        (
            "tasks/pushNotificationConfig/delete",
            "DeleteTaskPushNotificationConfigParams",
            json!({"id": "task-1", "pushNotificationConfigId": "cfg-1"}),
        ),
    ];
    for (name, def, params) in cases {
        valid_03(def, &params);
        let m = v03::method(name).unwrap();
        let up = m.params_to_v1(&params).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = serde_json::to_vec(&up).unwrap();
        let req = Request::decode(m.operation, &bytes, "$.params").unwrap_or_else(|e| panic!("{name}: {e}\n{up:#}"));
        assert_eq!(req.value.operation(), m.operation);
        assert_eq!(m.params_to_v03(&up).unwrap(), params, "{name}");
    }
    // Defaults the 0.3 SDKs applied: a config without an id is the task's default config.
    let m = v03::method("tasks/pushNotificationConfig/get").unwrap();
    assert_eq!(m.params_to_v1(&json!({"id": "t"})).unwrap(), json!({"taskId": "t", "id": "t"}));
    let m = v03::method("tasks/pushNotificationConfig/set").unwrap();
    let up = m.params_to_v1(&json!({"taskId": "t", "pushNotificationConfig": {"url": "https://h"}})).unwrap();
    assert_eq!(up, json!({"taskId": "t", "id": "t", "url": "https://h"}));
    let m = v03::method("agent/getAuthenticatedExtendedCard").unwrap();
    assert_eq!(m.params_to_v1(&Value::Null).unwrap(), json!({}));
}

#[test]
fn results_of_every_method_map_both_ways() {
    let cfg1 = json!({"taskId": "task-1", "id": "cfg-1", "url": "https://hooks.example.com/a2a"});
    let cfg03 =
        json!({"taskId": "task-1", "pushNotificationConfig": {"id": "cfg-1", "url": "https://hooks.example.com/a2a"}});
    let task1 = v03::to_v1(Type::Task, &task("completed")).unwrap();
    let cases = [
        ("message/send", json!({"task": task1.clone()}), task("completed")),
        (
            "message/send",
            json!({"message": v03::to_v1(Type::Message, &agent_message("x")).unwrap()}),
            agent_message("x"),
        ),
        ("tasks/get", task1.clone(), task("completed")),
        ("tasks/cancel", task1, task("completed")),
        ("tasks/pushNotificationConfig/set", cfg1.clone(), cfg03.clone()),
        ("tasks/pushNotificationConfig/get", cfg1.clone(), cfg03.clone()),
        ("tasks/pushNotificationConfig/list", json!({"configs": [cfg1]}), json!([cfg03])),
        ("tasks/pushNotificationConfig/delete", json!({}), Value::Null),
    ];
    for (name, r1, r03) in cases {
        let m = v03::method(name).unwrap();
        assert_eq!(m.result_to_v03(&r1).unwrap(), r03, "{name}");
        assert_eq!(m.result_to_v1(&r03).unwrap(), r1, "{name}");
    }
    // An empty list in 1.0 (nextPageToken only) is an empty 0.3 array.
    let m = v03::method("tasks/pushNotificationConfig/list").unwrap();
    assert_eq!(m.result_to_v03(&json!({"nextPageToken": ""})).unwrap(), json!([]));
    let m = v03::method("agent/getAuthenticatedExtendedCard").unwrap();
    let c = m.result_to_v03(&serde_json::to_value(card("http://h")).unwrap()).unwrap();
    valid_03("AgentCard", &c);
    assert!(v03::convert_at(Type::Task, Direction::ToV1, &json!(1), "$.x").unwrap_err().message.contains("$.x"));
}

// ---------------------------------------------------------------------------
// End to end: a 0.3 client against a real server

async fn start() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = A2aServer::builder(DemoAgent::default(), card(&base)).build();
    tokio::spawn(server.serve(listener));
    base
}

/// A 0.3 JSON-RPC call (no `A2A-Version` header); checks the envelope against the schema.
async fn call(http: &reqwest::Client, base: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let fut = http.post(format!("{base}/")).json(&body).send();
    let r = tokio::time::timeout(Duration::from_secs(20), fut).await.expect("answered in time").unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["id"], 7);
    if v.get("error").is_some() {
        valid_03("JSONRPCErrorResponse", &v);
    }
    v
}

fn send_params(message_id: &str) -> Value {
    json!({"message": {"kind": "message", "messageId": message_id, "role": "user", "parts": [{"kind": "text", "text": "hi"}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_3_client_sends_gets_and_cancels() {
    let base = start().await;
    let http = reqwest::Client::new();

    let r = call(&http, &base, "message/send", send_params("tck-complete-task-1")).await;
    let task = &r["result"];
    assert_eq!(task["kind"], "task", "{r}");
    assert_eq!(task["status"]["state"], "completed", "{r}");
    valid_03("SendMessageSuccessResponse", &r);
    let id = task["id"].as_str().unwrap().to_owned();

    let g = call(&http, &base, "tasks/get", json!({"id": id, "historyLength": 1})).await;
    assert_eq!(g["result"]["id"], id.as_str());
    assert_eq!(g["result"]["kind"], "task");
    assert_eq!(g["result"]["history"].as_array().map(Vec::len), Some(1), "{g}");
    valid_03("GetTaskSuccessResponse", &g);

    let r = call(&http, &base, "message/send", send_params("tck-input-required-1")).await;
    assert_eq!(r["result"]["status"]["state"], "input-required", "{r}");
    let id = r["result"]["id"].as_str().unwrap().to_owned();
    let c = call(&http, &base, "tasks/cancel", json!({"id": id})).await;
    assert_eq!(c["result"]["status"]["state"], "canceled", "{c}");
    valid_03("CancelTaskSuccessResponse", &c);

    let m = call(&http, &base, "message/send", send_params("tck-message-response-1")).await;
    assert_eq!(m["result"]["kind"], "message", "{m}");
    assert_eq!(m["result"]["role"], "agent");
    assert_eq!(m["result"]["parts"][0], json!({"kind": "text", "text": "Direct message response"}));

    let f = call(&http, &base, "message/send", send_params("tck-artifact-file-1")).await;
    let part = &f["result"]["artifacts"][0]["parts"][0];
    assert_eq!(
        part,
        &json!({"kind": "file", "file": {"bytes": "dGNr", "mimeType": "text/plain", "name": "output.txt"}})
    );
    valid_03("SendMessageSuccessResponse", &f);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_3_client_gets_0_3_errors() {
    let base = start().await;
    let http = reqwest::Client::new();
    let e = call(&http, &base, "tasks/get", json!({"id": "no-such-task"})).await;
    assert_eq!(e["error"]["code"], -32001, "{e}");
    assert!(e["error"]["data"].is_object() || e["error"].get("data").is_none(), "0.3 data is an object: {e}");
    assert_eq!(e["error"]["data"]["taskId"], "no-such-task");

    let e =
        call(&http, &base, "message/send", json!({"message": {"messageId": "m", "role": "robot", "parts": []}})).await;
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert_eq!(e["error"]["data"]["path"], "$.params.message.role");

    // A 1.0 method name without the header is still a 0.3 request: -32009.
    let e = call(&http, &base, "GetTask", json!({"id": "x"})).await;
    assert_eq!(e["error"]["code"], -32009, "{e}");

    // With the header, 1.0 as before.
    let r: Value = http
        .post(format!("{base}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32001);
    assert!(r["error"]["data"].is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_3_client_streams() {
    let base = start().await;
    let http = reqwest::Client::new();
    let body =
        json!({"jsonrpc": "2.0", "id": "s-1", "method": "message/stream", "params": send_params("tck-stream-001-x")});
    let fut = async {
        let r = http.post(format!("{base}/")).json(&body).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
        r.text().await.unwrap()
    };
    let text = tokio::time::timeout(Duration::from_secs(20), fut).await.expect("the stream ends");
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .collect();
    assert!(events.len() >= 3, "{text}");
    for e in &events {
        assert_eq!(e["id"], "s-1");
        valid_03("SendStreamingMessageSuccessResponse", e);
    }
    let results: Vec<&Value> = events.iter().map(|e| &e["result"]).collect();
    assert_eq!(results[0]["kind"], "task", "{text}");
    assert!(results.iter().any(|r| r["kind"] == "artifact-update"), "{text}");
    let last = results.last().unwrap();
    assert_eq!(last["kind"], "status-update", "{text}");
    assert_eq!(last["final"], true, "{text}");
    assert_eq!(last["status"]["state"], "completed");
    // Only the last status update is final.
    let finals = results.iter().filter(|r| r["final"] == true).count();
    assert_eq!(finals, 1, "{text}");
    let task_id = results[0]["id"].as_str().unwrap();

    // Resubscribing to a finished task is refused (UnsupportedOperation), in 0.3 form.
    let e = call(&http, &base, "tasks/resubscribe", json!({"id": task_id})).await;
    assert_eq!(e["error"]["code"], -32004, "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_3_client_manages_push_configs() {
    let base = start().await;
    let http = reqwest::Client::new();
    let r = call(&http, &base, "message/send", send_params("tck-input-required-2")).await;
    let id = r["result"]["id"].as_str().unwrap().to_owned();
    let set = call(
        &http,
        &base,
        "tasks/pushNotificationConfig/set",
        json!({"taskId": id, "pushNotificationConfig": {"url": "https://hooks.example.com/a2a", "token": "tok"}}),
    )
    .await;
    assert_eq!(set["result"]["taskId"], id.as_str(), "{set}");
    assert_eq!(set["result"]["pushNotificationConfig"]["url"], "https://hooks.example.com/a2a");
    valid_03("SetTaskPushNotificationConfigSuccessResponse", &set);
    // Without a config id: the task's default config.
    let get = call(&http, &base, "tasks/pushNotificationConfig/get", json!({"id": id})).await;
    assert_eq!(get["result"]["pushNotificationConfig"]["token"], "tok", "{get}");
    let list = call(&http, &base, "tasks/pushNotificationConfig/list", json!({"id": id})).await;
    assert_eq!(list["result"].as_array().map(Vec::len), Some(1), "{list}");
    valid_03("ListTaskPushNotificationConfigSuccessResponse", &list);
    let cfg_id = set["result"]["pushNotificationConfig"]["id"].clone();
    let del = call(
        &http,
        &base,
        "tasks/pushNotificationConfig/delete",
        json!({"id": id, "pushNotificationConfigId": cfg_id}),
    )
    .await;
    assert!(del.get("result").is_some_and(Value::is_null), "{del}");
    let list = call(&http, &base, "tasks/pushNotificationConfig/list", json!({"id": id})).await;
    assert_eq!(list["result"], json!([]), "{list}");
    // The demo card declares no extended card: UnsupportedOperation, in 0.3 form.
    let e = call(&http, &base, "agent/getAuthenticatedExtendedCard", Value::Null).await;
    assert_eq!(e["error"]["code"], -32004, "{e}");
}
