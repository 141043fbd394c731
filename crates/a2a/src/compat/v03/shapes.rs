//! The 0.3 ↔ 1.0 mapping of every A2A type, as tables for the engine.

use serde_json::{json, Map, Value};

use super::engine::{bad, enum_value, get, member, object, string, Direction, EnumRow, Rule, Shape};
use crate::errors::A2aError;

use Rule::*;

// ---------------------------------------------------------------------------
// Enums

pub(crate) static TASK_STATES: &[EnumRow] = &[
    EnumRow("submitted", "TASK_STATE_SUBMITTED", 1),
    EnumRow("working", "TASK_STATE_WORKING", 2),
    EnumRow("completed", "TASK_STATE_COMPLETED", 3),
    EnumRow("failed", "TASK_STATE_FAILED", 4),
    EnumRow("canceled", "TASK_STATE_CANCELED", 5),
    EnumRow("input-required", "TASK_STATE_INPUT_REQUIRED", 6),
    EnumRow("rejected", "TASK_STATE_REJECTED", 7),
    EnumRow("auth-required", "TASK_STATE_AUTH_REQUIRED", 8),
    // 0.3's `unknown` has no 1.0 counterpart; it maps to the invalid zero value, which
    // the 1.0 decoder then refuses.
    EnumRow("unknown", "TASK_STATE_UNSPECIFIED", 0),
];

static ROLES: &[EnumRow] = &[EnumRow("user", "ROLE_USER", 1), EnumRow("agent", "ROLE_AGENT", 2)];

/// The 0.3 states after which no more status updates follow on a stream (terminal or
/// interrupted): the ones that carry `final: true`.
pub(crate) const FINAL_STATES: &[&str] =
    &["completed", "failed", "canceled", "rejected", "input-required", "auth-required"];

// ---------------------------------------------------------------------------
// Messages, parts, artifacts, tasks, events

pub(crate) static PART: Shape = Shape::Value(part);

pub(crate) static MESSAGE: Shape = Shape::Object(&[
    Kind("message"),
    Copy("messageId"),
    Copy("contextId"),
    Copy("taskId"),
    Enum("role", "role", ROLES),
    List("parts", "parts", &PART),
    Copy("metadata"),
    Copy("extensions"),
    Copy("referenceTaskIds"),
]);

pub(crate) static ARTIFACT: Shape = Shape::Object(&[
    Copy("artifactId"),
    Copy("name"),
    Copy("description"),
    List("parts", "parts", &PART),
    Copy("metadata"),
    Copy("extensions"),
]);

pub(crate) static TASK_STATUS: Shape =
    Shape::Object(&[Enum("state", "state", TASK_STATES), Field("message", "message", &MESSAGE), Copy("timestamp")]);

pub(crate) static TASK: Shape = Shape::Object(&[
    Kind("task"),
    Copy("id"),
    CopyRequired("contextId"),
    Field("status", "status", &TASK_STATUS),
    List("artifacts", "artifacts", &ARTIFACT),
    List("history", "history", &MESSAGE),
    Copy("metadata"),
]);

pub(crate) static STATUS_UPDATE: Shape = Shape::Object(&[
    Kind("status-update"),
    Copy("taskId"),
    CopyRequired("contextId"),
    Field("status", "status", &TASK_STATUS),
    Members(final_flag),
    Copy("metadata"),
]);

pub(crate) static ARTIFACT_UPDATE: Shape = Shape::Object(&[
    Kind("artifact-update"),
    Copy("taskId"),
    CopyRequired("contextId"),
    Field("artifact", "artifact", &ARTIFACT),
    Copy("append"),
    Copy("lastChunk"),
    Copy("metadata"),
]);

/// `SendMessageResponse` ↔ the bare Task or Message of `message/send`.
pub(crate) static SEND_RESULT: Shape =
    Shape::Union { tag: "kind", variants: &[("task", "task", &TASK), ("message", "message", &MESSAGE)] };

/// `StreamResponse` ↔ one event of `message/stream` and `tasks/resubscribe`.
pub(crate) static STREAM_EVENT: Shape = Shape::Union {
    tag: "kind",
    variants: &[
        ("task", "task", &TASK),
        ("message", "message", &MESSAGE),
        ("statusUpdate", "status-update", &STATUS_UPDATE),
        ("artifactUpdate", "artifact-update", &ARTIFACT_UPDATE),
    ],
};

/// 0.3 `final` is not in 1.0: the stream closing says it. Going to 0.3 it is derived from
/// the state (terminal or interrupted); going to 1.0 it is dropped.
fn final_flag(
    dir: Direction,
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    path: &str,
) -> Result<(), A2aError> {
    if dir == Direction::ToV03 {
        let state = match src.get("status").and_then(|s| s.get("state")) {
            Some(v) => enum_value(TASK_STATES, dir, v, &format!("{path}.status.state"))?,
            None => Value::Null,
        };
        let fin = state.as_str().is_some_and(|s| FINAL_STATES.contains(&s));
        out.insert("final".to_owned(), Value::Bool(fin));
    }
    Ok(())
}

/// 0.3 parts are tagged by `kind` and keep files in a nested object; 1.0 parts are a
/// `oneof` of `text`, `raw`, `url` and `data` with `mediaType` and `filename` beside it.
fn part(dir: Direction, value: &Value, path: &str) -> Result<Value, A2aError> {
    let src = object(value, path)?;
    let mut out = Map::new();
    match dir {
        Direction::ToV1 => {
            let kind = match get(src, "kind") {
                Some(k) => string(k, &member(path, "kind"))?,
                // Lenient: a part without `kind` is read by the member it has.
                None if src.contains_key("text") => "text",
                None if src.contains_key("file") => "file",
                None if src.contains_key("data") => "data",
                None => return Err(bad(&member(path, "kind"), "\"text\", \"file\" or \"data\"", &Value::Null)),
            };
            match kind {
                "text" => {
                    let p = member(path, "text");
                    let t = get(src, "text").ok_or_else(|| bad(&p, "a string", &Value::Null))?;
                    out.insert("text".into(), Value::String(string(t, &p)?.to_owned()));
                }
                "file" => {
                    let p = member(path, "file");
                    let file = object(src.get("file").unwrap_or(&Value::Null), &p)?;
                    match (get(file, "bytes"), get(file, "uri")) {
                        (Some(b), None) => {
                            out.insert("raw".into(), Value::String(string(b, &member(&p, "bytes"))?.to_owned()));
                        }
                        (None, Some(u)) => {
                            out.insert("url".into(), Value::String(string(u, &member(&p, "uri"))?.to_owned()));
                        }
                        _ => return Err(bad(&p, "a file with exactly one of bytes and uri", &src["file"])),
                    }
                    if let Some(m) = get(file, "mimeType") {
                        out.insert("mediaType".into(), Value::String(string(m, &member(&p, "mimeType"))?.to_owned()));
                    }
                    if let Some(n) = get(file, "name") {
                        out.insert("filename".into(), Value::String(string(n, &member(&p, "name"))?.to_owned()));
                    }
                }
                "data" => {
                    let p = member(path, "data");
                    let d = get(src, "data").ok_or_else(|| bad(&p, "an object", &Value::Null))?;
                    out.insert("data".into(), d.clone());
                }
                other => {
                    return Err(bad(
                        &member(path, "kind"),
                        "\"text\", \"file\" or \"data\"",
                        &Value::String(other.to_owned()),
                    ))
                }
            }
        }
        Direction::ToV03 => {
            let present: Vec<&str> =
                ["text", "raw", "url", "data"].into_iter().filter(|k| get(src, k).is_some()).collect();
            let [which] = present.as_slice() else {
                return Err(bad(path, "a part with exactly one of text, raw, url, data", value));
            };
            match *which {
                "text" => {
                    out.insert("kind".into(), json!("text"));
                    out.insert("text".into(), src["text"].clone());
                }
                "data" => {
                    out.insert("kind".into(), json!("data"));
                    // 0.3 data parts hold an object; any other JSON value is wrapped.
                    let d = &src["data"];
                    out.insert("data".into(), if d.is_object() { d.clone() } else { json!({ "value": d }) });
                }
                content => {
                    let mut file = Map::new();
                    file.insert(if content == "raw" { "bytes" } else { "uri" }.into(), src[content].clone());
                    if let Some(m) = get(src, "mediaType").filter(|m| m.as_str() != Some("")) {
                        file.insert("mimeType".into(), m.clone());
                    }
                    if let Some(n) = get(src, "filename").filter(|n| n.as_str() != Some("")) {
                        file.insert("name".into(), n.clone());
                    }
                    out.insert("kind".into(), json!("file"));
                    out.insert("file".into(), Value::Object(file));
                }
            }
        }
    }
    if let Some(m) = get(src, "metadata") {
        out.insert("metadata".into(), m.clone());
    }
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------
// Push notification configs

/// 0.3 `PushNotificationAuthenticationInfo {schemes[], credentials}` ↔ 1.0
/// `AuthenticationInfo {scheme, credentials}` (only the first scheme survives).
static AUTHENTICATION: Shape = Shape::Object(&[Members(schemes), Copy("credentials")]);

fn schemes(dir: Direction, src: &Map<String, Value>, out: &mut Map<String, Value>, path: &str) -> Result<(), A2aError> {
    match dir {
        Direction::ToV1 => {
            let p = member(path, "schemes");
            let list = get(src, "schemes").and_then(Value::as_array);
            let first = list.and_then(|l| l.first()).ok_or_else(|| {
                bad(&p, "an array with at least one scheme", src.get("schemes").unwrap_or(&Value::Null))
            })?;
            out.insert("scheme".into(), Value::String(string(first, &format!("{p}[0]"))?.to_owned()));
        }
        Direction::ToV03 => {
            if let Some(s) = get(src, "scheme") {
                out.insert("schemes".into(), Value::Array(vec![s.clone()]));
            }
        }
    }
    Ok(())
}

/// 0.3 `PushNotificationConfig` ↔ 1.0 `TaskPushNotificationConfig` without its task id.
pub(crate) static PUSH_CONFIG: Shape = Shape::Object(&[
    Copy("id"),
    Copy("url"),
    Copy("token"),
    Field("authentication", "authentication", &AUTHENTICATION),
]);

/// 0.3 `TaskPushNotificationConfig {taskId, pushNotificationConfig}` ↔ the flat 1.0
/// `TaskPushNotificationConfig`.
pub(crate) static TASK_PUSH_CONFIG: Shape =
    Shape::Object(&[Copy("taskId"), Flatten("pushNotificationConfig", &PUSH_CONFIG)]);

/// The params of `tasks/pushNotificationConfig/set`: as [`TASK_PUSH_CONFIG`], and a
/// config without an id gets the task's id, as the 0.3 SDKs did (so that `get` without
/// `pushNotificationConfigId` finds it).
pub(crate) static SET_PUSH_PARAMS: Shape =
    Shape::Object(&[Copy("taskId"), Flatten("pushNotificationConfig", &PUSH_CONFIG), Members(default_config_id)]);

fn default_config_id(
    dir: Direction,
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    _path: &str,
) -> Result<(), A2aError> {
    default_id_from(dir, src, out, "taskId")
}

/// Going to 1.0, a config without an id gets the task's id (read from `task_key`).
fn default_id_from(
    dir: Direction,
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    task_key: &str,
) -> Result<(), A2aError> {
    if dir == Direction::ToV1 && !out.contains_key("id") {
        if let Some(t) = get(src, task_key) {
            out.insert("id".into(), t.clone());
        }
    }
    Ok(())
}

/// `{id, pushNotificationConfigId}` ↔ `{taskId, id}`; a missing config id means the
/// task's default config, whose id is the task id.
pub(crate) static GET_PUSH_PARAMS: Shape =
    Shape::Object(&[Rename("id", "taskId"), Rename("pushNotificationConfigId", "id"), Members(default_get_id)]);

fn default_get_id(
    dir: Direction,
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    _path: &str,
) -> Result<(), A2aError> {
    default_id_from(dir, src, out, "id")
}

pub(crate) static DELETE_PUSH_PARAMS: Shape =
    Shape::Object(&[Rename("id", "taskId"), Rename("pushNotificationConfigId", "id")]);

pub(crate) static LIST_PUSH_PARAMS: Shape = Shape::Object(&[Rename("id", "taskId")]);

/// 0.3 answers `list` with a bare array; 1.0 with `{configs, nextPageToken}`.
pub(crate) static LIST_PUSH_RESULT: Shape = Shape::Wrapped("configs", &TASK_PUSH_CONFIG);

// ---------------------------------------------------------------------------
// Request params

static SEND_CONFIGURATION: Shape = Shape::Object(&[
    Copy("acceptedOutputModes"),
    Not("blocking", "returnImmediately"),
    Copy("historyLength"),
    Field("pushNotificationConfig", "taskPushNotificationConfig", &PUSH_CONFIG),
]);

pub(crate) static SEND_PARAMS: Shape = Shape::Object(&[
    Field("message", "message", &MESSAGE),
    Field("configuration", "configuration", &SEND_CONFIGURATION),
    Copy("metadata"),
]);

/// `TaskQueryParams` ↔ `GetTaskRequest` (0.3 `metadata` has no 1.0 place).
pub(crate) static TASK_QUERY: Shape = Shape::Object(&[Copy("id"), Copy("historyLength")]);

/// `TaskIdParams` ↔ `CancelTaskRequest`.
pub(crate) static CANCEL_PARAMS: Shape = Shape::Object(&[Copy("id"), Copy("metadata")]);

/// `TaskIdParams` ↔ `SubscribeToTaskRequest` (no metadata in 1.0).
pub(crate) static SUBSCRIBE_PARAMS: Shape = Shape::Object(&[Copy("id")]);

/// No params (0.3) ↔ `GetExtendedAgentCardRequest` without a tenant.
pub(crate) static NO_PARAMS: Shape = Shape::Value(no_params);

fn no_params(_dir: Direction, _value: &Value, _path: &str) -> Result<Value, A2aError> {
    Ok(Value::Object(Map::new()))
}

// ---------------------------------------------------------------------------
// Agent card

static CAPABILITIES: Shape = Shape::Object(&[Copy("streaming"), Copy("pushNotifications"), Copy("extensions")]);

static SECURITY_REQUIREMENTS: Shape = Shape::Value(security_requirements);

static SKILL: Shape = Shape::Object(&[
    Copy("id"),
    Copy("name"),
    Copy("description"),
    Copy("tags"),
    Copy("examples"),
    Copy("inputModes"),
    Copy("outputModes"),
    Field("security", "securityRequirements", &SECURITY_REQUIREMENTS),
]);

static API_KEY_SCHEME: Shape = Shape::Object(&[Copy("description"), Rename("in", "location"), Copy("name")]);
static HTTP_SCHEME: Shape = Shape::Object(&[Copy("description"), Copy("scheme"), Copy("bearerFormat")]);
static OAUTH2_SCHEME: Shape = Shape::Object(&[
    Copy("description"),
    Field("flows", "flows", &Shape::Value(oauth_flows)),
    Copy("oauth2MetadataUrl"),
]);
static OIDC_SCHEME: Shape = Shape::Object(&[Copy("description"), Copy("openIdConnectUrl")]);
static MTLS_SCHEME: Shape = Shape::Object(&[Copy("description")]);

/// 0.3 schemes are tagged by `type`; 1.0 wraps each in a `oneof` member.
static SECURITY_SCHEME: Shape = Shape::Union {
    tag: "type",
    variants: &[
        ("apiKeySecurityScheme", "apiKey", &API_KEY_SCHEME),
        ("httpAuthSecurityScheme", "http", &HTTP_SCHEME),
        ("oauth2SecurityScheme", "oauth2", &OAUTH2_SCHEME),
        ("openIdConnectSecurityScheme", "openIdConnect", &OIDC_SCHEME),
        ("mtlsSecurityScheme", "mutualTLS", &MTLS_SCHEME),
    ],
};

pub(crate) static AGENT_CARD: Shape = Shape::Object(&[
    Members(interfaces),
    Copy("name"),
    Copy("description"),
    Copy("version"),
    Copy("provider"),
    Copy("documentationUrl"),
    Copy("iconUrl"),
    Field("capabilities", "capabilities", &CAPABILITIES),
    Members(extended_card),
    Map("securitySchemes", "securitySchemes", &SECURITY_SCHEME),
    Field("security", "securityRequirements", &SECURITY_REQUIREMENTS),
    Copy("defaultInputModes"),
    Copy("defaultOutputModes"),
    List("skills", "skills", &SKILL),
    Copy("signatures"),
]);

/// The flows 0.3 knows, in the order one is picked when 1.0's `oneof` can hold only one.
const FLOWS: [&str; 4] = ["authorizationCode", "clientCredentials", "implicit", "password"];

fn oauth_flows(dir: Direction, value: &Value, path: &str) -> Result<Value, A2aError> {
    let src = object(value, path)?;
    let mut out = Map::new();
    for name in FLOWS {
        if let Some(f) = get(src, name) {
            out.insert(name.to_owned(), Value::Object(object(f, &member(path, name))?.clone()));
            if dir == Direction::ToV1 {
                break;
            }
        }
    }
    Ok(Value::Object(out))
}

/// 0.3 `[{scheme: [scopes]}]` ↔ 1.0 `[{schemes: {scheme: {list: [scopes]}}}]`.
fn security_requirements(dir: Direction, value: &Value, path: &str) -> Result<Value, A2aError> {
    let items = value.as_array().ok_or_else(|| bad(path, "an array", value))?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let obj = object(item, &p)?;
        let mut req = Map::new();
        match dir {
            Direction::ToV1 => {
                for (name, scopes) in obj {
                    req.insert(name.clone(), json!({ "list": scopes }));
                }
                out.push(json!({ "schemes": req }));
            }
            Direction::ToV03 => {
                let sp = member(&p, "schemes");
                if let Some(schemes) = get(obj, "schemes") {
                    for (name, list) in object(schemes, &sp)? {
                        let scopes = get(object(list, &member(&sp, name))?, "list").cloned().unwrap_or(json!([]));
                        req.insert(name.clone(), scopes);
                    }
                }
                out.push(Value::Object(req));
            }
        }
    }
    Ok(Value::Array(out))
}

/// 0.3 `supportsAuthenticatedExtendedCard` ↔ 1.0 `capabilities.extendedAgentCard`.
fn extended_card(
    dir: Direction,
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    _path: &str,
) -> Result<(), A2aError> {
    match dir {
        Direction::ToV1 => {
            if let Some(v) = get(src, "supportsAuthenticatedExtendedCard") {
                let caps = out.entry("capabilities").or_insert_with(|| Value::Object(Map::new()));
                if let Some(c) = caps.as_object_mut() {
                    c.insert("extendedAgentCard".into(), v.clone());
                }
            }
        }
        Direction::ToV03 => {
            if let Some(v) = src.get("capabilities").and_then(|c| c.get("extendedAgentCard")).filter(|v| !v.is_null()) {
                out.insert("supportsAuthenticatedExtendedCard".into(), v.clone());
            }
        }
    }
    Ok(())
}

/// 0.3 `url` + `preferredTransport` + `additionalInterfaces` + `protocolVersion` ↔ 1.0
/// `supportedInterfaces`.
///
/// To 1.0: the main interface comes first, then every additional one that is not the
/// main one again, all with the card's `Major.Minor` version. To 0.3: the interfaces that
/// declare 0.3 are used if there are any (else all of them); the first is the main one,
/// and when there are several they are all listed in `additionalInterfaces`, main first,
/// as the 0.3 spec recommends.
fn interfaces(
    dir: Direction,
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    path: &str,
) -> Result<(), A2aError> {
    match dir {
        Direction::ToV1 => {
            let p = member(path, "url");
            let url = string(get(src, "url").unwrap_or(&Value::Null), &p)?;
            let transport = match get(src, "preferredTransport") {
                Some(t) => string(t, &member(path, "preferredTransport"))?,
                None => "JSONRPC",
            };
            let version = match get(src, "protocolVersion") {
                Some(v) => major_minor(string(v, &member(path, "protocolVersion"))?),
                None => "0.3".to_owned(),
            };
            let mut list = vec![json!({"url": url, "protocolBinding": transport, "protocolVersion": version})];
            if let Some(extra) = get(src, "additionalInterfaces") {
                let ap = member(path, "additionalInterfaces");
                let items = extra.as_array().ok_or_else(|| bad(&ap, "an array", extra))?;
                for (i, item) in items.iter().enumerate() {
                    let ip = format!("{ap}[{i}]");
                    let obj = object(item, &ip)?;
                    let u = string(obj.get("url").unwrap_or(&Value::Null), &member(&ip, "url"))?;
                    let t = string(obj.get("transport").unwrap_or(&Value::Null), &member(&ip, "transport"))?;
                    if u == url && t == transport {
                        continue;
                    }
                    list.push(json!({"url": u, "protocolBinding": t, "protocolVersion": version}));
                }
            }
            out.insert("supportedInterfaces".into(), Value::Array(list));
        }
        Direction::ToV03 => {
            let p = member(path, "supportedInterfaces");
            let all = get(src, "supportedInterfaces").and_then(Value::as_array).filter(|a| !a.is_empty());
            let all = all.ok_or_else(|| {
                bad(&p, "at least one interface", src.get("supportedInterfaces").unwrap_or(&Value::Null))
            })?;
            let mut chosen = Vec::new();
            for (i, item) in all.iter().enumerate() {
                let ip = format!("{p}[{i}]");
                let obj = object(item, &ip)?;
                let u = string(obj.get("url").unwrap_or(&Value::Null), &member(&ip, "url"))?;
                let t = string(obj.get("protocolBinding").unwrap_or(&Value::Null), &member(&ip, "protocolBinding"))?;
                let v = obj.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
                chosen.push((u, t, v.starts_with("0.3")));
            }
            if chosen.iter().any(|c| c.2) {
                chosen.retain(|c| c.2);
            }
            let (url, transport, _) = chosen[0];
            out.insert("url".into(), json!(url));
            out.insert("preferredTransport".into(), json!(transport));
            out.insert("protocolVersion".into(), json!("0.3.0"));
            if chosen.len() > 1 {
                let extra: Vec<Value> = chosen.iter().map(|(u, t, _)| json!({"url": u, "transport": t})).collect();
                out.insert("additionalInterfaces".into(), Value::Array(extra));
            }
        }
    }
    Ok(())
}

/// `"0.3.0"` → `"0.3"`.
fn major_minor(v: &str) -> String {
    let mut parts = v.split('.');
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) => format!("{a}.{b}"),
        _ => v.to_owned(),
    }
}
