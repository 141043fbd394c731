//! The hand-written conversions the generated tables (`crate::generated::v03`) name:
//! where 0.3 and 1.0 differ in structure, not only in names. Each takes the direction.

use serde_json::{json, Map, Value};

use super::engine::{bad, enum_value, get, member, object, string, Direction};
use crate::errors::A2aError;
use crate::generated::v03::{MembersFn, ValueFn, TASK_STATE};

/// Converts a whole value by the named function.
pub(crate) fn value(f: ValueFn, dir: Direction, value: &Value, path: &str) -> Result<Value, A2aError> {
    match f {
        ValueFn::Part => part(dir, value, path),
        ValueFn::OauthFlows => oauth_flows(dir, value, path),
        ValueFn::SecurityRequirements => security_requirements(dir, value, path),
    }
}

/// Reads `src` and adds members to `out` by the named function.
pub(crate) fn members(
    f: MembersFn,
    dir: Direction,
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    path: &str,
) -> Result<(), A2aError> {
    match f {
        MembersFn::FinalFlag => final_flag(dir, src, out, path),
        MembersFn::Schemes => schemes(dir, src, out, path),
        MembersFn::DefaultConfigId => default_id_from(dir, src, out, "taskId"),
        MembersFn::DefaultGetId => default_id_from(dir, src, out, "id"),
        MembersFn::Interfaces => interfaces(dir, src, out, path),
        MembersFn::ExtendedCard => extended_card(dir, src, out, path),
    }
}

/// The 0.3 states after which no more status updates follow on a stream (terminal or
/// interrupted): the ones that carry `final: true`.
pub(crate) const FINAL_STATES: &[&str] =
    &["completed", "failed", "canceled", "rejected", "input-required", "auth-required"];

// ---------------------------------------------------------------------------
// Messages, parts, artifacts, tasks, events

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
            Some(v) => enum_value(TASK_STATE, dir, v, &format!("{path}.status.state"))?,
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

/// 0.3 `PushNotificationAuthenticationInfo.schemes[]` ↔ 1.0 `AuthenticationInfo.scheme`:
/// only the first scheme survives the way up.
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

/// Going to 1.0, a config without an id gets the task's id (read from `task_key`), as the
/// 0.3 SDKs did: `set` without an id stores the task's default config, and `get` without
/// `pushNotificationConfigId` finds it.
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

// ---------------------------------------------------------------------------
// Agent card

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
