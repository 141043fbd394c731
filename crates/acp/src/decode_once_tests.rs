//! A received message is decoded once: on the agent, the read-order bookkeeping, the
//! generated rule checks and the handler all work on the one typed value decoded as the
//! request was read; on the client, an answer that changes the connection's state is
//! decoded where it is read and handed to the caller.

use std::cell::RefCell;
use std::collections::HashMap;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::v1::*;

thread_local! {
    /// Decodes per type on this thread (a current-thread runtime runs the whole connection here).
    static DECODES: RefCell<HashMap<&'static str, usize>> = RefCell::new(HashMap::new());
}

pub(crate) fn count(type_name: &'static str) {
    DECODES.with(|decodes| *decodes.borrow_mut().entry(type_name).or_default() += 1);
}

fn decodes_of(type_name: &str) -> usize {
    DECODES.with(|decodes| decodes.borrow().iter().filter(|(name, _)| name.ends_with(type_name)).map(|(_, n)| n).sum())
}

struct Echo;

impl Agent for Echo {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let mut response = InitializeResponse::new(1u16);
        response.agent_capabilities.prompt_capabilities.image = true;
        Ok(response)
    }
    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("s1"))
    }
    async fn prompt(&self, _: AgentContext, params: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        assert_eq!(params.prompt.len(), 2);
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_prompt_is_decoded_once_through_the_agents_receive_path() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    let (connection, _client) = connect_agent(Echo, read, write, AcpOptions::default());
    tokio::spawn(connection.run());
    let (read, mut write) = tokio::io::split(ours);
    let mut lines = BufReader::new(read).lines();
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"},{"type":"image","data":"","mimeType":"image/png"}]}}"#,
    ];
    for message in messages {
        write.write_all(format!("{message}\n").as_bytes()).await.unwrap();
        let answer = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line()).await;
        let answer = answer.expect("an answer in time").unwrap().expect("a line");
        assert!(answer.contains(r#""result""#), "{answer}");
    }
    assert_eq!(decodes_of("PromptRequest"), 1, "the prompt's params were decoded more than once");
    assert_eq!(decodes_of("NewSessionRequest"), 1);
    assert_eq!(decodes_of("InitializeRequest"), 1);
}

struct Quiet;

impl Client for Quiet {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))
    }
    async fn session_update(&self, _: ClientContext, _: SessionNotification) {}
}

#[tokio::test(flavor = "current_thread")]
async fn an_answer_that_changes_state_is_decoded_once_on_the_client() {
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(agent_io);
    let (agent_connection, _client) = connect_agent(Echo, read, write, AcpOptions::default());
    tokio::spawn(agent_connection.run());
    let (read, write) = tokio::io::split(client_io);
    let (client_connection, agent) = connect_client(Quiet, read, write, AcpOptions::default());
    tokio::spawn(client_connection.run());
    let limit = std::time::Duration::from_secs(10);
    let initialized = tokio::time::timeout(limit, agent.initialize(InitializeRequest::new(1u16))).await;
    initialized.expect("in time").expect("initialized");
    let session = tokio::time::timeout(limit, agent.new_session(NewSessionRequest::new("/", Vec::new()))).await;
    let session = session.expect("in time");
    assert_eq!(session.expect("a session").session_id.as_str(), "s1");
    assert_eq!(decodes_of("InitializeResponse"), 1, "the initialize answer was decoded more than once");
    assert_eq!(decodes_of("NewSessionResponse"), 1, "the session/new answer was decoded more than once");
}
