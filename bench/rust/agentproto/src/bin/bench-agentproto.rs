//! agentproto's Rust SDK in the seed-000 loops. Validating: every line goes through
//! `receive::classify`, the receive path of the agent and client roles (envelope
//! decode, then the params decoded by method into the generated types, with JSON
//! paths on failure). Requests are classified on the agent side, `session/update` on
//! the client side. Answers are built the way the agent role sends a result: the
//! typed response encoded to raw JSON, wrapped in the envelope into a reused buffer.

use agentproto_acp::receive::{classify, AgentV1, ClientV1, Incoming};
use agentproto_acp::v1::{AgentNotification, ClientRequest, InitializeResponse, NewSessionResponse};
use agentproto_jsonrpc::{Message, RequestId};
use bench_harness::{Adapter, Kind};

struct Agentproto;

impl Adapter for Agentproto {
    fn decode(&mut self, kind: Kind, line: &[u8]) -> bool {
        if kind == Kind::SessionUpdate {
            return matches!(
                classify::<ClientV1>(line, |_| None),
                Incoming::Notification(n) if matches!(n.value, AgentNotification::SessionUpdate(_))
            );
        }
        match classify::<AgentV1>(line, |_| None) {
            Incoming::Request { request, .. } => matches!(
                (kind, &request.value),
                (Kind::Initialize, ClientRequest::Initialize(_))
                    | (Kind::SessionNew, ClientRequest::SessionNew(_))
                    | (Kind::SessionPrompt, ClientRequest::SessionPrompt(_))
            ),
            _ => false,
        }
    }

    fn encode_session_result(&mut self, id: i64, session_id: &str, out: &mut Vec<u8>) {
        let raw = serde_json::value::to_raw_value(&NewSessionResponse::new(session_id)).expect("encodes");
        Message::response(RequestId::from(id), Ok(raw)).encode_into(out);
    }

    fn encode_initialize_result(&mut self, id: i64, out: &mut Vec<u8>) {
        let raw = serde_json::value::to_raw_value(&InitializeResponse::new(1u16)).expect("encodes");
        Message::response(RequestId::from(id), Ok(raw)).encode_into(out);
    }
}

fn main() -> std::process::ExitCode {
    bench_harness::main(Agentproto)
}
