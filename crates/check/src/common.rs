//! Small pieces both checks use.

use agentproto_acp::Warning;
use serde_json::{json, Value};

/// A decoded payload's salvaged fields as failure text, or `None` when clean.
///
/// The schema lets a receiver salvage a malformed optional value; the sender
/// still broke the schema, so a check reports it.
pub(crate) fn warnings(what: &str, warnings: &[Warning]) -> Option<String> {
    if warnings.is_empty() {
        return None;
    }
    let list: Vec<String> = warnings.iter().map(|w| format!("{} at `{}`", w.message, w.path)).collect();
    Some(format!("{what}: a value a lenient receiver would have to salvage: {}", list.join("; ")))
}

/// The scripted agent's `initialize` result: version 1, no optional capability.
pub(crate) fn initialize_response() -> Value {
    json!({
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": false,
            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
            "mcpCapabilities": {"http": false, "sse": false},
        },
        "authMethods": [],
        "agentInfo": {"name": "agentproto-check", "version": env!("CARGO_PKG_VERSION")},
    })
}
