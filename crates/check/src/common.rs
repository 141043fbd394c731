//! Small pieces both checks use.

use agentproto_acp::v1::{self, V1};
use agentproto_acp::{Handshake, Warning, WarningKind};
use serde_json::{json, Value};

/// A decoded payload's salvaged values as failure text, or `None` when there
/// is none.
///
/// The schema's lenient annotations let a receiver salvage a malformed
/// optional value; the value itself does not match the schema, so the sender
/// fails. A union variant this schema version does not list is no failure: the
/// schema may accept it through a default branch (`AuthMethod`'s agent branch
/// takes any object with `id` and `name`, so `{"type":"env_var",…}` is valid),
/// and where it does not, ACP keeps unknown variants for forward compatibility
/// (the inspector rates them info). [`unknown_variants`] words them as a note.
pub(crate) fn warnings(what: &str, warnings: &[Warning]) -> Option<String> {
    let list: Vec<String> = warnings
        .iter()
        .filter(|w| w.kind == WarningKind::Salvaged)
        .map(|w| format!("{} at `{}`", w.message, w.path))
        .collect();
    (!list.is_empty()).then(|| format!("{what}: a value a lenient receiver would have to salvage: {}", list.join("; ")))
}

/// A decoded payload's variants this schema version does not list, as a note
/// for the report, or `None` when there is none.
pub(crate) fn unknown_variants(what: &str, warnings: &[Warning]) -> Option<String> {
    let list: Vec<String> = warnings
        .iter()
        .filter(|w| w.kind == WarningKind::UnknownVariant)
        .map(|w| format!("{} at `{}`", w.message, w.path))
        .collect();
    (!list.is_empty()).then(|| format!("{what}: kept as received, a variant v1 does not list: {}", list.join("; ")))
}

/// Adds `note` to `notes` unless it is there already (an update repeated on
/// every turn is noted once).
pub(crate) fn note_once(notes: &mut Vec<String>, note: Option<String>) {
    if let Some(note) = note.filter(|note| !notes.contains(note)) {
        notes.push(note);
    }
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

/// The typed handshake the SDK's generated rule code reads, from the `initialize`
/// messages a scripted side built as JSON for the wire (`client`: the params, `agent`:
/// the result). A message that does not read as its type stands as the bare one
/// (these are the checker's own, always valid).
pub(crate) fn handshake(client: Value, agent: Value) -> Handshake<V1> {
    // Read from text, as any message is: the generated decoders borrow their keys.
    Handshake {
        client: serde_json::from_str(&client.to_string()).unwrap_or_else(|_| v1::InitializeRequest::new(1u16)),
        agent: serde_json::from_str(&agent.to_string()).unwrap_or_else(|_| v1::InitializeResponse::new(1u16)),
    }
}

#[cfg(test)]
mod handshake_tests {
    use super::*;

    #[test]
    fn the_scripted_sides_initialize_messages_read_as_their_types() {
        let client = json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}}});
        let hs = handshake(client, initialize_response());
        assert!(hs.client.client_capabilities.fs.read_text_file, "the client's message fell back to the bare one");
        assert!(hs.agent.agent_info.value().is_some(), "the agent's message fell back to the bare one");
    }
}
