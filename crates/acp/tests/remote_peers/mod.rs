//! The agent and client the network tests run on both ends (each test file that needs
//! them says `mod remote_peers;`; not every file uses every item).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::v1::*;

/// How long any one step of a network test may take.
pub(crate) const WAIT: Duration = Duration::from_secs(30);

pub(crate) async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future).await.expect("timed out")
}

/// Streams each word of the prompt (with the space after it) as an update, then answers;
/// "flood" sends 4,000 updates of 8 KiB first, "wait" waits to be cancelled.
#[derive(Default)]
pub(crate) struct Words;

impl Agent for Words {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, cx: AgentContext, request: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let text = request.text();
        if text == "wait" {
            // Until cancelled: the connection ends the turn and drops this handler.
            cx.peer().update(&request.session_id, SessionUpdate::agent_message_text("waiting")).await?;
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        if text == "flood" {
            let big = "x".repeat(8192);
            for _ in 0..4000 {
                cx.peer().update(&request.session_id, SessionUpdate::agent_message_text(&big)).await?;
            }
        }
        for word in text.split_inclusive(' ') {
            cx.peer().update(&request.session_id, SessionUpdate::agent_message_text(word)).await?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// Keeps the text of every agent message chunk, and how many there were.
#[derive(Default, Clone)]
pub(crate) struct Collect {
    pub(crate) text: Arc<Mutex<String>>,
    pub(crate) chunks: Arc<Mutex<usize>>,
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
        if let SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(text), .. }) =
            notification.update
        {
            self.text.lock().unwrap().push_str(&text.text);
            *self.chunks.lock().unwrap() += 1;
        }
    }
}
