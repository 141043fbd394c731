//! The official Rust SDK (crate `agent-client-protocol` 5.0.0 with
//! `agent-client-protocol-schema` 1.15.1) in the seed-000 loops, through the public
//! functions its receive path calls: `TransportFrame::parse_json` (line to
//! `serde_json::Value`, then to a JSON-RPC message), then the params cast into the
//! schema types by method (`JsonRpcMessage::parse_message`: serde from the `Value`).
//! Requests are parsed as `ClientRequest` (the agent side), `session/update` as
//! `AgentNotification` (the client side). Answers go the way a responder sends them:
//! the typed response to a `Value`, into a JSON-RPC response, to a fresh `String`.
//! Not included: the SDK's connection machinery (channels, actors, handler chain).

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{AgentNotification, ClientRequest, InitializeResponse, NewSessionResponse};
use agent_client_protocol::{
    JsonRpcMessage, JsonRpcResponse, RawJsonRpcId, RawJsonRpcMessage, RawJsonRpcParams, TransportFrame,
};
use bench_harness::{Adapter, Kind};
use serde_json::Value;

struct Official;

impl Adapter for Official {
    fn decode(&mut self, kind: Kind, line: &[u8]) -> bool {
        // The SDK reads lines as `String`s, which checks UTF-8.
        let Ok(text) = std::str::from_utf8(line) else { return false };
        let TransportFrame::Single(message) = TransportFrame::parse_json(text) else { return false };
        match (kind, message) {
            (Kind::SessionUpdate, RawJsonRpcMessage::Notification(n)) => {
                let params = n.params.map_or(Value::Null, RawJsonRpcParams::into_value);
                matches!(
                    AgentNotification::parse_message(&n.method, &params),
                    Ok(AgentNotification::SessionNotification(_))
                )
            }
            (kind, RawJsonRpcMessage::Request(r)) => {
                let params = r.params.map_or(Value::Null, RawJsonRpcParams::into_value);
                matches!(
                    (kind, ClientRequest::parse_message(&r.method, &params)),
                    (Kind::Initialize, Ok(ClientRequest::InitializeRequest(_)))
                        | (Kind::SessionNew, Ok(ClientRequest::NewSessionRequest(_)))
                        | (Kind::SessionPrompt, Ok(ClientRequest::PromptRequest(_)))
                )
            }
            _ => false,
        }
    }

    fn encode_session_result(&mut self, id: i64, session_id: &str, out: &mut Vec<u8>) {
        let value = NewSessionResponse::new(session_id.to_owned()).into_json("session/new").expect("encodes");
        *out = line(id, value);
    }

    fn encode_initialize_result(&mut self, id: i64, out: &mut Vec<u8>) {
        let value = InitializeResponse::new(ProtocolVersion::V1).into_json("initialize").expect("encodes");
        *out = line(id, value);
    }
}

fn line(id: i64, value: Value) -> Vec<u8> {
    let message = RawJsonRpcMessage::response(RawJsonRpcId::from(id), Ok(value));
    TransportFrame::Single(message).to_json().expect("encodes").into_bytes()
}

fn main() -> std::process::ExitCode {
    bench_harness::main(Official)
}
