//! Capability gates on every surface come from the generated table: each gate's
//! path starts at the member where that surface's `initialize` message carries the
//! capabilities, and an agent refuses an unadvertised request with that path.
//! (v2 once gated `session/delete` on `agentCapabilities.session.delete`, a path
//! that does not exist on the v2 wire.)

use std::time::Duration;

use agentproto_acp::rules::{GateTest, InitMessage, Segment};
use agentproto_acp::{MethodKind, Protocol, Side};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future).await.expect("timed out")
}

/// Every gated row of `S`'s table starts at the capability member of the handling
/// side's `initialize` message (or tests a non-empty list such as `authMethods`).
fn gates_start_at_the_capability_member<S: Protocol>() -> usize {
    let mut gated = 0;
    for row in S::METHODS.iter().filter(|row| row.gate.is_some()) {
        let gate = row.gate.unwrap();
        gated += 1;
        assert_eq!(row.kind, MethodKind::Request, "{}", row.name);
        let (root, init) = match row.side {
            Side::Agent => (S::RULES.agent_capabilities, InitMessage::Result),
            Side::Client => (S::RULES.client_capabilities, InitMessage::Params),
            other => panic!("{} is gated but handled by {other:?}", row.name),
        };
        assert_eq!(gate.init, init, "{}", row.name);
        if gate.test == GateTest::Advertised {
            assert_eq!(gate.path.first(), Some(&Segment::Key(root)), "{}", row.name);
        }
    }
    gated
}

#[test]
fn every_gate_of_v1_is_rooted_at_its_capabilities() {
    use agentproto_acp::v1::V1;
    assert_eq!(
        (V1::RULES.agent_capabilities, V1::RULES.client_capabilities),
        ("agentCapabilities", "clientCapabilities")
    );
    assert!(gates_start_at_the_capability_member::<V1>() >= 12);
}

#[cfg(feature = "unstable")]
#[test]
fn every_gate_of_v1_unstable_is_rooted_at_its_capabilities() {
    use agentproto_acp::v1_unstable::V1Unstable;
    assert_eq!(V1Unstable::RULES.agent_capabilities, "agentCapabilities");
    assert!(
        gates_start_at_the_capability_member::<V1Unstable>()
            > gates_start_at_the_capability_member::<agentproto_acp::v1::V1>()
    );
}

#[cfg(feature = "v2")]
#[test]
fn every_gate_of_v2_is_rooted_at_its_capabilities() {
    use agentproto_acp::v2::V2;
    assert_eq!((V2::RULES.agent_capabilities, V2::RULES.client_capabilities), ("capabilities", "capabilities"));
    assert!(gates_start_at_the_capability_member::<V2>() >= 8);
}

#[cfg(all(feature = "v2", feature = "unstable"))]
#[test]
fn every_gate_of_v2_unstable_is_rooted_at_its_capabilities() {
    use agentproto_acp::v2_unstable::V2Unstable;
    assert_eq!(V2Unstable::RULES.agent_capabilities, "capabilities");
    assert!(gates_start_at_the_capability_member::<V2Unstable>() > 8);
}

/// Writes `initialize` and then `session/delete` to an agent that advertised no
/// `delete`, and returns the error object of the second answer.
async fn refused_delete(
    connect: impl FnOnce(
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) -> agentproto_jsonrpc::Connection,
    initialize: Value,
) -> Value {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    tokio::spawn(connect(read, write).run());
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = BufReader::new(read).lines();
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize});
    write.write_all(format!("{init}\n").as_bytes()).await.unwrap();
    let answer: Value = serde_json::from_str(&within(lines.next_line()).await.unwrap().unwrap()).unwrap();
    assert!(answer.get("result").is_some(), "{answer}");
    let delete = r#"{"jsonrpc":"2.0","id":2,"method":"session/delete","params":{"sessionId":"s1"}}"#;
    write.write_all(format!("{delete}\n").as_bytes()).await.unwrap();
    let answer: Value = serde_json::from_str(&within(lines.next_line()).await.unwrap().unwrap()).unwrap();
    answer["error"].clone()
}

macro_rules! minimal_agent {
    ($name:ident, $m:ident, $init:expr) => {
        struct $name;
        impl agentproto_acp::$m::Agent for $name {
            async fn initialize(
                &self,
                _: agentproto_acp::$m::AgentContext,
                _: agentproto_acp::$m::InitializeRequest,
            ) -> Result<agentproto_acp::$m::InitializeResponse, agentproto_acp::ErrorObject> {
                use agentproto_acp::$m::*;
                Ok($init)
            }
            async fn new_session(
                &self,
                _: agentproto_acp::$m::AgentContext,
                _: agentproto_acp::$m::NewSessionRequest,
            ) -> Result<agentproto_acp::$m::NewSessionResponse, agentproto_acp::ErrorObject> {
                Ok(agentproto_acp::$m::NewSessionResponse::new("s1"))
            }
            async fn prompt(
                &self,
                _: agentproto_acp::$m::AgentContext,
                _: agentproto_acp::$m::PromptRequest,
            ) -> Result<agentproto_acp::$m::PromptResponse, agentproto_acp::ErrorObject> {
                Err(agentproto_acp::ErrorObject::internal_error("not in this test"))
            }
        }
    };
}

fn assert_refusal(error: &Value, capability: &str) {
    assert_eq!(error["code"], -32601, "{error}");
    assert_eq!(error["data"]["capability"], capability, "{error}");
    assert!(error["message"].as_str().unwrap().contains(capability), "{error}");
}

minimal_agent!(V1Agent, v1, InitializeResponse::new(PROTOCOL_VERSION));

#[tokio::test]
async fn a_v1_agent_refuses_delete_naming_the_v1_path() {
    let connect = |r, w| agentproto_acp::v1::connect_agent(V1Agent, r, w, Default::default()).0;
    let error = refused_delete(connect, serde_json::json!({"protocolVersion": 1, "clientCapabilities": {}})).await;
    assert_refusal(&error, "agentCapabilities.sessionCapabilities.delete");
}

#[cfg(feature = "unstable")]
minimal_agent!(V1UnstableAgent, v1_unstable, InitializeResponse::new(PROTOCOL_VERSION));

#[cfg(feature = "unstable")]
#[tokio::test]
async fn a_v1_unstable_agent_refuses_delete_naming_the_v1_path() {
    let connect = |r, w| agentproto_acp::v1_unstable::connect_agent(V1UnstableAgent, r, w, Default::default()).0;
    let error = refused_delete(connect, serde_json::json!({"protocolVersion": 1, "clientCapabilities": {}})).await;
    assert_refusal(&error, "agentCapabilities.sessionCapabilities.delete");
}

#[cfg(feature = "v2")]
minimal_agent!(V2Agent, v2, InitializeResponse::new(PROTOCOL_VERSION, Implementation::new("gates", "0")));

#[cfg(feature = "v2")]
#[tokio::test]
async fn a_v2_agent_refuses_delete_naming_the_v2_path() {
    let connect = |r, w| agentproto_acp::v2::connect_agent(V2Agent, r, w, Default::default()).0;
    let init = serde_json::json!({"protocolVersion": 2, "info": {"name": "t", "version": "0"}, "capabilities": {}});
    let error = refused_delete(connect, init).await;
    assert_refusal(&error, "capabilities.session.delete");
}

#[cfg(all(feature = "v2", feature = "unstable"))]
minimal_agent!(
    V2UnstableAgent,
    v2_unstable,
    InitializeResponse::new(PROTOCOL_VERSION, Implementation::new("gates", "0"))
);

#[cfg(all(feature = "v2", feature = "unstable"))]
#[tokio::test]
async fn a_v2_unstable_agent_refuses_delete_naming_the_v2_path() {
    let connect = |r, w| agentproto_acp::v2_unstable::connect_agent(V2UnstableAgent, r, w, Default::default()).0;
    let init = serde_json::json!({"protocolVersion": 2, "info": {"name": "t", "version": "0"}, "capabilities": {}});
    let error = refused_delete(connect, init).await;
    assert_refusal(&error, "capabilities.session.delete");
}

/// The null-id rule comes from each schema's `RequestId`: v1 allows `"id": null`
/// (JSON-RPC does), v2 forbids it; a v2 agent answers such a request -32600.
#[cfg(feature = "v2")]
#[tokio::test]
async fn a_v2_agent_refuses_a_null_request_id() {
    use agentproto_acp::v2::V2;
    assert!(agentproto_acp::v1::V1::RULES.null_request_id);
    assert!(!V2::RULES.null_request_id);
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    tokio::spawn(agentproto_acp::v2::connect_agent(V2Agent, read, write, Default::default()).0.run());
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = BufReader::new(read).lines();
    let init = r#"{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"t","version":"0"},"capabilities":{}}}"#;
    write.write_all(format!("{init}\n").as_bytes()).await.unwrap();
    let answer: Value = serde_json::from_str(&within(lines.next_line()).await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}
