//! The shortcuts over the generated types on live connections: an agent that
//! answers with `cx.peer().update(..)` and `SessionUpdate::agent_message_text`, a
//! client that opens a `Session` and prompts it with text, the session cancelled.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::v1::*;
use agentproto_acp::Session;

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future).await.expect("timed out")
}

/// Echoes each prompt back in two text chunks; a prompt of `wait` waits for its
/// cancellation.
#[derive(Default, Clone)]
struct Echo {
    waiting: Arc<tokio::sync::Notify>,
}

impl Agent for Echo {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(
        &self,
        _: AgentContext,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new(format!("session-in-{}", request.cwd)))
    }

    async fn prompt(&self, cx: AgentContext, p: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        if p.text() == "wait" {
            self.waiting.notify_one();
            cx.cancellation_token().cancelled().await;
            return Ok(PromptResponse::new(StopReason::Cancelled));
        }
        cx.peer().update(&p.session_id, SessionUpdate::agent_message_text("you said: ")).await?;
        cx.peer().update(&p.session_id, SessionUpdate::agent_message_text(p.text())).await?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[derive(Default, Clone)]
struct Collect {
    text: Arc<Mutex<String>>,
}

impl Client for Collect {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))
    }

    async fn session_update(&self, _: ClientContext, notification: SessionNotification) {
        if let SessionUpdate::AgentMessageChunk(chunk) = notification.update {
            if let Some(text) = chunk.content.as_text() {
                self.text.lock().unwrap().push_str(text);
            }
        }
    }
}

/// A client connected to `Echo` in memory and initialized.
async fn connected(agent: Echo, client: Collect) -> AgentConnection<V1> {
    let (a, b) = tokio::io::duplex(64 * 1024);
    let (agent_read, agent_write) = tokio::io::split(a);
    let (client_read, client_write) = tokio::io::split(b);
    let (agent_connection, _) = connect_agent(agent, agent_read, agent_write, AcpOptions::default());
    let (client_connection, agent) = connect_client(client, client_read, client_write, AcpOptions::default());
    tokio::spawn(agent_connection.run());
    tokio::spawn(client_connection.run());
    within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.unwrap();
    agent
}

#[tokio::test]
async fn a_session_prompts_with_text_and_the_agent_answers_with_text_updates() {
    let client = Collect::default();
    let agent = connected(Echo::default(), client.clone()).await;
    let session: Session<V1> = within(agent.open_session("/work")).await.unwrap();
    assert_eq!(session.id(), "session-in-/work");
    let answer = within(session.prompt("hello")).await.unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    // Updates are notifications sent before the answer: they were handled first.
    assert_eq!(client.text.lock().unwrap().as_str(), "you said: hello");
    let answer = within(session.prompt_blocks(vec!["a".into(), "b".into()])).await.unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(client.text.lock().unwrap().as_str(), "you said: helloyou said: ab");
}

#[tokio::test]
async fn a_session_cancels_its_running_turn() {
    let echo = Echo::default();
    let agent = connected(echo.clone(), Collect::default()).await;
    let session = within(agent.open_session("/work")).await.unwrap();
    let turn = tokio::spawn({
        let session = session.clone();
        async move { session.prompt("wait").await }
    });
    within(echo.waiting.notified()).await;
    within(session.cancel()).await.unwrap();
    let answer = within(turn).await.unwrap().unwrap();
    assert_eq!(answer.stop_reason, StopReason::Cancelled);
}
