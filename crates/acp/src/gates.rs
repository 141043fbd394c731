//! Capability gates: which methods a peer may only be sent when the other side
//! advertised a capability during `initialize`.
//!
//! The schema describes these rules in prose only, so they are a table here (from
//! the capability descriptions of the pinned schemas). A capability is advertised
//! when its value is `true` or an object: booleans for the older capabilities,
//! object markers (`{}`) for the newer ones; absent, `null` and `false` mean no.

use agentproto_jsonrpc::{ErrorCode, ErrorObject};
use serde_json::value::RawValue;
use serde_json::Value;

/// One gated method.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gate {
    pub(crate) method: &'static str,
    pub(crate) need: Need,
}

/// What a gated method needs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Need {
    /// The capability at this path of the capabilities object.
    Path(&'static [&'static str]),
    /// Elicitation: the capability named by the request's `mode` under `elicitation`.
    ElicitationMode,
}

const fn gate(method: &'static str, path: &'static [&'static str]) -> Gate {
    Gate { method, need: Need::Path(path) }
}

/// Methods the agent handles, gated by `agentCapabilities` (v1).
const AGENT_V1: &[Gate] = &[
    gate("session/load", &["loadSession"]),
    gate("session/list", &["sessionCapabilities", "list"]),
    gate("session/delete", &["sessionCapabilities", "delete"]),
    gate("session/resume", &["sessionCapabilities", "resume"]),
    gate("session/close", &["sessionCapabilities", "close"]),
    gate("logout", &["auth", "logout"]),
    // UNSTABLE surface.
    gate("session/fork", &["sessionCapabilities", "fork"]),
    gate("session/archive", &["sessionCapabilities", "archive"]),
    gate("session/unarchive", &["sessionCapabilities", "archive"]),
    gate("session/status", &["sessionCapabilities", "status"]),
    gate("session/set_title", &["sessionCapabilities", "title"]),
    gate("auth/status", &["auth", "status"]),
    gate("providers/list", &["providers"]),
    gate("providers/set", &["providers"]),
    gate("providers/disable", &["providers"]),
];

/// Methods the client handles, gated by `clientCapabilities` (v1).
const CLIENT_V1: &[Gate] = &[
    gate("fs/read_text_file", &["fs", "readTextFile"]),
    gate("fs/write_text_file", &["fs", "writeTextFile"]),
    gate("terminal/create", &["terminal"]),
    gate("terminal/output", &["terminal"]),
    gate("terminal/wait_for_exit", &["terminal"]),
    gate("terminal/kill", &["terminal"]),
    gate("terminal/release", &["terminal"]),
    Gate { method: "elicitation/create", need: Need::ElicitationMode },
];

/// Methods the agent handles, gated by `capabilities` (v2 draft).
const AGENT_V2: &[Gate] = &[
    gate("session/delete", &["session", "delete"]),
    gate("session/fork", &["session", "fork"]),
    gate("session/archive", &["session", "archive"]),
    gate("session/unarchive", &["session", "archive"]),
    gate("session/status", &["session", "status"]),
    gate("session/set_title", &["session", "title"]),
    gate("auth/status", &["auth", "status"]),
    gate("providers/list", &["providers"]),
    gate("providers/set", &["providers"]),
    gate("providers/disable", &["providers"]),
];

/// Methods the client handles, gated by `capabilities` (v2 draft).
const CLIENT_V2: &[Gate] = &[Gate { method: "elicitation/create", need: Need::ElicitationMode }];

pub(crate) fn agent(version: u16) -> &'static [Gate] {
    if version >= 2 {
        AGENT_V2
    } else {
        AGENT_V1
    }
}

pub(crate) fn client(version: u16) -> &'static [Gate] {
    if version >= 2 {
        CLIENT_V2
    } else {
        CLIENT_V1
    }
}

pub(crate) fn find(gates: &'static [Gate], method: &str) -> Option<&'static Gate> {
    gates.iter().find(|gate| gate.method == method)
}

/// Whether a capability value means "supported".
fn advertised(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Bool(true)) | Some(Value::Object(_)))
}

fn mode_of(params: Option<&RawValue>) -> Option<String> {
    params.and_then(|p| crate::endpoint::string_field(p.get(), "mode"))
}

impl Gate {
    /// Whether `capabilities` (the advertising side's object) opens this gate.
    pub(crate) fn is_open(&self, capabilities: &Value, params: Option<&RawValue>) -> bool {
        match self.need {
            Need::Path(path) => advertised(path.iter().try_fold(capabilities, |value, key| value.get(key))),
            Need::ElicitationMode => match mode_of(params) {
                Some(mode) => advertised(capabilities.get("elicitation").and_then(|e| e.get(mode.as_str()))),
                // No mode: the params are invalid anyway, and say so elsewhere.
                None => true,
            },
        }
    }

    /// The capability as a dotted path, e.g. `agentCapabilities.loadSession`.
    pub(crate) fn describe(&self, root: &str, params: Option<&RawValue>) -> String {
        match self.need {
            Need::Path(path) => format!("{root}.{}", path.join(".")),
            Need::ElicitationMode => {
                format!("{root}.elicitation.{}", mode_of(params).unwrap_or_else(|| "<mode>".to_owned()))
            }
        }
    }

    /// The answer to a gated request this side did not advertise: `-32601` (the
    /// method is not offered), or `-32602` for an elicitation mode.
    pub(crate) fn refusal(&self, method: &str, root: &str, params: Option<&RawValue>) -> ErrorObject {
        let capability = self.describe(root, params);
        match self.need {
            Need::Path(_) => {
                let data = serde_json::json!({ "method": method, "capability": capability });
                let error = ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("method not found: `{method}` needs `{capability}`, which this side did not advertise"),
                );
                match serde_json::value::to_raw_value(&data) {
                    Ok(data) => error.with_data(data),
                    Err(_) => error,
                }
            }
            Need::ElicitationMode => {
                let mode = mode_of(params).unwrap_or_default();
                let mut error = ErrorObject::invalid_params(
                    "$.params.mode",
                    &format!("a mode advertised in `{root}.elicitation`"),
                    &mode,
                );
                error.message = format!(
                    "invalid params: elicitation mode `{mode}` needs `{capability}`, which this side did not advertise"
                );
                error
            }
        }
    }
}

/// For tools that watch a connection from outside (the inspector): the capability
/// `method` needs and the handling side's `capabilities` (as advertised in
/// `initialize`) lack, as a dotted path such as
/// `clientCapabilities.fs.readTextFile`; `None` when the method is not gated or
/// the capability was advertised.
pub fn missing_capability(
    version: u16,
    handler: crate::Side,
    method: &str,
    capabilities: &Value,
    params: Option<&RawValue>,
) -> Option<String> {
    let (gates, root) = match handler {
        crate::Side::Agent => (agent(version), if version >= 2 { "capabilities" } else { "agentCapabilities" }),
        crate::Side::Client => (client(version), if version >= 2 { "capabilities" } else { "clientCapabilities" }),
        _ => return None,
    };
    let gate = find(gates, method)?;
    (!gate.is_open(capabilities, params)).then(|| gate.describe(root, params))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn booleans_and_object_markers() {
        let caps = serde_json::json!({
            "loadSession": true,
            "sessionCapabilities": {"list": {}, "delete": null, "close": false},
        });
        let open = |m| find(AGENT_V1, m).unwrap().is_open(&caps, None);
        assert!(open("session/load"));
        assert!(open("session/list"));
        assert!(!open("session/delete"), "null means not advertised");
        assert!(!open("session/close"), "false means not advertised");
        assert!(!open("session/resume"), "absent means not advertised");
        assert!(find(AGENT_V1, "session/prompt").is_none(), "baseline methods are not gated");
    }

    #[test]
    fn elicitation_is_gated_per_mode() {
        let caps = serde_json::json!({"elicitation": {"form": {}}});
        let gate = find(CLIENT_V1, "elicitation/create").unwrap();
        assert!(gate.is_open(&caps, Some(&raw(r#"{"mode":"form"}"#))));
        assert!(!gate.is_open(&caps, Some(&raw(r#"{"mode":"url"}"#))));
        let error = gate.refusal("elicitation/create", "clientCapabilities", Some(&raw(r#"{"mode":"url"}"#)));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("clientCapabilities.elicitation.url"), "{}", error.message);
    }

    #[test]
    fn refusal_names_the_capability() {
        let gate = find(CLIENT_V1, "fs/read_text_file").unwrap();
        let error = gate.refusal("fs/read_text_file", "clientCapabilities", None);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        let data: Value = serde_json::from_str(error.data.unwrap().get()).unwrap();
        assert_eq!(data["capability"], "clientCapabilities.fs.readTextFile");
    }
}
