//! Writes the ACP JSON Schema and method table of the pinned `agent-client-protocol-schema`
//! crate, for the surface chosen by the features (v1 or v2 × stable or unstable).
//! Usage: acp-schema-export SCHEMA_OUT META_OUT

use schemars::generate::SchemaSettings;
use schemars::transform::{RemoveRefSiblings, ReplaceBoolSchemas};
use schemars::JsonSchema;
use serde::Serialize;

#[cfg(not(feature = "v2"))]
use agent_client_protocol_schema::v1 as acp;
#[cfg(feature = "v2")]
use agent_client_protocol_schema::v2 as acp;

use acp::{JsonRpcMessage, Notification};

// What an agent sends: a request of its own, an answer to the client's, a notification.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
#[allow(dead_code, clippy::large_enum_variant)]
enum FromAgent {
    Request(acp::Request<acp::AgentRequest>),
    Response(acp::Response<acp::AgentResponse>),
    Notification(Notification<acp::AgentNotification>),
}

// What a client sends.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
#[allow(dead_code, clippy::large_enum_variant)]
enum FromClient {
    Request(acp::Request<acp::ClientRequest>),
    Response(acp::Response<acp::ClientResponse>),
    Notification(Notification<acp::ClientNotification>),
}

// What travels between a conductor and its proxies (unstable proxy chains).
#[cfg(feature = "unstable")]
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
#[allow(dead_code, clippy::large_enum_variant)]
enum ProxyMessage {
    Request(acp::Request<acp::ProxyRequest>),
    Response(acp::Response<acp::ProxyResponse>),
    Notification(Notification<acp::ProxyNotification>),
}

// The schema's root (no doc comment: it would become the schema's description): every message, by who sends it.
#[derive(Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(title = "Agent Client Protocol")]
#[allow(dead_code, clippy::large_enum_variant)]
enum Root {
    Agent(JsonRpcMessage<FromAgent>),
    Client(JsonRpcMessage<FromClient>),
    ProtocolLevel(JsonRpcMessage<Notification<acp::ProtocolLevelNotification>>),
    #[cfg(feature = "unstable")]
    Proxy(JsonRpcMessage<ProxyMessage>),
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, schema_out, meta_out] = args.as_slice() else {
        eprintln!("usage: acp-schema-export SCHEMA_OUT META_OUT");
        std::process::exit(2);
    };
    let mut settings = SchemaSettings::draft2020_12();
    settings.untagged_enum_variant_titles = true;
    let mut no_bools = ReplaceBoolSchemas::default();
    no_bools.skip_additional_properties = true;
    let generator = settings.with_transform(RemoveRefSiblings::default()).with_transform(no_bools).into_generator();
    let mut schema = serde_json::to_value(generator.into_root_schema_for::<Root>()).unwrap();
    if cfg!(feature = "unstable") {
        // The unstable surface is published as the draft: its links to the protocol's pages
        // point at the draft pages.
        let version = if cfg!(feature = "v2") { "v2" } else { "v1" };
        let stable = format!("https://agentclientprotocol.com/protocol/{version}/");
        relink(&mut schema, &stable, &format!("{stable}draft/"));
    }
    std::fs::write(schema_out, serde_json::to_string_pretty(&schema).unwrap()).unwrap();

    let version = if cfg!(feature = "v2") { 2 } else { 1 };
    #[allow(unused_mut)]
    let mut meta = serde_json::json!({
        "version": version,
        "agentMethods": acp::AGENT_METHOD_NAMES,
        "clientMethods": acp::CLIENT_METHOD_NAMES,
        "protocolMethods": acp::PROTOCOL_LEVEL_METHOD_NAMES,
    });
    #[cfg(feature = "unstable")]
    {
        meta["proxyMethods"] = serde_json::to_value(acp::PROXY_METHOD_NAMES).unwrap();
    }
    std::fs::write(meta_out, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
}

/// Every string in `value` with `from` replaced by `to`.
fn relink(value: &mut serde_json::Value, from: &str, to: &str) {
    match value {
        serde_json::Value::String(text) if text.contains(from) => *text = text.replace(from, to),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| relink(v, from, to)),
        serde_json::Value::Object(members) => members.values_mut().for_each(|v| relink(v, from, to)),
        _ => {}
    }
}
