//! The v2 draft behind the `v2` feature: the same roles, the v2 types, and
//! version negotiation (a v2 client talking to a v1 agent is refused locally).
#![cfg(feature = "v2")]

use std::time::Duration;

use agentproto_acp::{v1, v2};

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future).await.expect("timed out")
}

struct V2Agent;

impl v2::Agent for V2Agent {
    async fn initialize(
        &self,
        _: v2::AgentContext,
        _: v2::InitializeRequest,
    ) -> Result<v2::InitializeResponse, v2::ErrorObject> {
        // v2 gates the session methods on `capabilities.session`: `{}` offers the baseline ones.
        let mut response = v2::InitializeResponse::new(v2::PROTOCOL_VERSION, v2::Implementation::new("v2-agent", "0"));
        response.capabilities.session = v2::MaybeUndefined::Value(v2::SessionCapabilities::default());
        Ok(response)
    }
    async fn new_session(
        &self,
        _: v2::AgentContext,
        _: v2::NewSessionRequest,
    ) -> Result<v2::NewSessionResponse, v2::ErrorObject> {
        Ok(v2::NewSessionResponse::new("s2"))
    }
    async fn prompt(&self, _: v2::AgentContext, _: v2::PromptRequest) -> Result<v2::PromptResponse, v2::ErrorObject> {
        // v2: the prompt returns a receipt, the turn continues in updates.
        Ok(v2::PromptResponse::new("m1"))
    }
}

struct V2Client;

impl v2::Client for V2Client {
    async fn request_permission(
        &self,
        _: v2::ClientContext,
        _: v2::RequestPermissionRequest,
    ) -> Result<v2::RequestPermissionResponse, v2::ErrorObject> {
        Err(v2::ErrorObject::internal_error("not in this test"))
    }
    async fn session_update(&self, _: v2::ClientContext, _: v2::UpdateSessionNotification) {}
}

struct V1Agent;

impl v1::Agent for V1Agent {
    async fn initialize(
        &self,
        _: v1::AgentContext,
        _: v1::InitializeRequest,
    ) -> Result<v1::InitializeResponse, v1::ErrorObject> {
        Ok(v1::InitializeResponse::new(v1::PROTOCOL_VERSION))
    }
    async fn new_session(
        &self,
        _: v1::AgentContext,
        _: v1::NewSessionRequest,
    ) -> Result<v1::NewSessionResponse, v1::ErrorObject> {
        Ok(v1::NewSessionResponse::new("s1"))
    }
    async fn prompt(&self, _: v1::AgentContext, _: v1::PromptRequest) -> Result<v1::PromptResponse, v1::ErrorObject> {
        Ok(v1::PromptResponse::new(v1::StopReason::EndTurn))
    }
}

fn streams(
) -> ((impl tokio::io::AsyncRead, impl tokio::io::AsyncWrite), (impl tokio::io::AsyncRead, impl tokio::io::AsyncWrite))
{
    let (a, b) = tokio::io::duplex(64 * 1024);
    (tokio::io::split(a), tokio::io::split(b))
}

#[tokio::test]
async fn v2_roles_negotiate_2_and_prompt_returns_a_receipt() {
    let ((ar, aw), (cr, cw)) = streams();
    let (agent_connection, _) = v2::connect_agent(V2Agent, ar, aw, v2::AcpOptions::default());
    let (client_connection, agent) = v2::connect_client(V2Client, cr, cw, v2::AcpOptions::default());
    tokio::spawn(agent_connection.run());
    tokio::spawn(client_connection.run());
    let init = v2::InitializeRequest::new(v2::PROTOCOL_VERSION, v2::Implementation::new("c", "0"));
    assert_eq!(within(agent.initialize(init)).await.unwrap().protocol_version, 2);
    assert_eq!(agent.protocol_version(), Some(2));
    let session = within(agent.new_session(v2::NewSessionRequest::new("/tmp"))).await.unwrap().session_id;
    let hello = v2::ContentBlock::Text(v2::TextContent::new("hi"));
    let receipt = within(agent.prompt(v2::PromptRequest::new(session, vec![hello]))).await.unwrap();
    assert_eq!(receipt.message_id.as_str(), "m1");
}

struct SessionlessAgent;

impl v2::Agent for SessionlessAgent {
    async fn initialize(
        &self,
        _: v2::AgentContext,
        _: v2::InitializeRequest,
    ) -> Result<v2::InitializeResponse, v2::ErrorObject> {
        Ok(v2::InitializeResponse::new(v2::PROTOCOL_VERSION, v2::Implementation::new("no-sessions", "0")))
    }
    async fn new_session(
        &self,
        _: v2::AgentContext,
        _: v2::NewSessionRequest,
    ) -> Result<v2::NewSessionResponse, v2::ErrorObject> {
        Ok(v2::NewSessionResponse::new("never"))
    }
    async fn prompt(&self, _: v2::AgentContext, _: v2::PromptRequest) -> Result<v2::PromptResponse, v2::ErrorObject> {
        Ok(v2::PromptResponse::new("never"))
    }
}

#[tokio::test]
async fn a_v2_agent_without_session_capabilities_is_not_sent_session_new() {
    let ((ar, aw), (cr, cw)) = streams();
    let (agent_connection, _) = v2::connect_agent(SessionlessAgent, ar, aw, v2::AcpOptions::default());
    let (client_connection, agent) = v2::connect_client(V2Client, cr, cw, v2::AcpOptions::default());
    tokio::spawn(agent_connection.run());
    tokio::spawn(client_connection.run());
    let init = v2::InitializeRequest::new(v2::PROTOCOL_VERSION, v2::Implementation::new("c", "0"));
    within(agent.initialize(init)).await.unwrap();
    match within(agent.new_session(v2::NewSessionRequest::new("/tmp"))).await {
        Err(agentproto_acp::AcpError::CapabilityNotAdvertised { capability, .. }) => {
            assert_eq!(capability, "capabilities.session");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_v1_agent_answers_1_and_the_v2_client_refuses_it() {
    let ((ar, aw), (cr, cw)) = streams();
    let (agent_connection, _) = v1::connect_agent(V1Agent, ar, aw, v1::AcpOptions::default());
    let (client_connection, agent) = v2::connect_client(V2Client, cr, cw, v2::AcpOptions::default());
    tokio::spawn(agent_connection.run());
    tokio::spawn(client_connection.run());
    let init = v2::InitializeRequest::new(v2::PROTOCOL_VERSION, v2::Implementation::new("c", "0"));
    // The v1 agent negotiates down to 1 (a v2 InitializeRequest is also a valid v1 one).
    match within(agent.initialize(init)).await {
        Err(agentproto_acp::AcpError::UnsupportedVersion { answered: 1, supported: 2 }) => {}
        other => panic!("{other:?}"),
    }
    // Not initialized: nothing else may be sent.
    assert!(matches!(
        within(agent.new_session(v2::NewSessionRequest::new("/tmp"))).await,
        Err(agentproto_acp::AcpError::NotInitialized { .. })
    ));
}
