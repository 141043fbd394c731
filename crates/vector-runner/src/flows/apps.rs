//! The two small deterministic applications the flows run our roles with
//! (`vectors/README.md`, "The test applications").

use std::sync::atomic::{AtomicU64, Ordering};

use agentproto_acp::v1::*;
use agentproto_acp::RawJson;
use serde_json::{json, Value};

use super::variant_name;
use crate::wire::{raw, typed, Barrier, BARRIER};

/// The message of every panic the test applications raise on purpose.
pub(super) const DELIBERATE_PANIC: &str = "deliberate panic of the test application";

/// Keeps the deliberate panics of the test applications out of the test output;
/// every other panic is reported by the previous hook as usual.
pub(super) fn quiet_deliberate_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&DELIBERATE_PANIC) {
                previous(info);
            }
        }));
    });
}

/// Extension requests both applications answer: the barrier and `_test/echo`.
async fn ext_request(barrier: &Barrier, request: agentproto_acp::ExtMessage) -> Result<RawJson, ErrorObject> {
    match request.method.as_str() {
        BARRIER => barrier.wait(request.payload.as_ref()).await,
        "_test/echo" => {
            let params = serde_json::from_str::<Value>(request.payload_text()).unwrap_or(Value::Null);
            raw(&json!({ "method": request.method, "params": params }))
        }
        _ => Err(ErrorObject::method_not_found(&request.method)),
    }
}

/// The agent application of the flows (README, "The test applications").
pub(super) struct TestAgent {
    capabilities: AgentCapabilities,
    /// `setup.modes`: the `modes` the answer of each opening request carries.
    modes: std::collections::HashMap<String, SessionModeState>,
    sessions: AtomicU64,
    barrier: Barrier,
}

impl TestAgent {
    pub(super) fn new(setup: &Value) -> Result<TestAgent, String> {
        let capabilities = typed(setup.get("agentCapabilities").unwrap_or(&json!({}))).map_err(|e| e.message)?;
        let modes = typed(setup.get("modes").unwrap_or(&json!({}))).map_err(|e| e.message)?;
        Ok(TestAgent { capabilities, modes, sessions: AtomicU64::new(0), barrier: Barrier::new() })
    }

    /// The `modes` member of the answer to `method`: `setup.modes[method]`, or absent.
    fn modes(&self, method: &str) -> MaybeUndefined<SessionModeState> {
        self.modes.get(method).cloned().map_or(MaybeUndefined::Undefined, MaybeUndefined::Value)
    }
}

async fn say(cx: &AgentContext, session: &SessionId, text: &str) -> Result<(), ErrorObject> {
    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
    let notification = SessionNotification::new(session.clone(), SessionUpdate::AgentMessageChunk(chunk));
    cx.peer().session_update(notification).await.map_err(|e| ErrorObject::internal_error(e.to_string()))
}

impl Agent for TestAgent {
    async fn initialize(&self, _: AgentContext, params: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let name = match &params.client_info {
            MaybeUndefined::Value(info) => info.name.as_str(),
            _ => "",
        };
        match name {
            "panic" => std::panic::panic_any(DELIBERATE_PANIC),
            "fail" => return Err(ErrorObject::new(ErrorCode(4242), "initialize fails on request")),
            _ => {}
        }
        // Echoes the requested version on purpose: the role must answer its own.
        let mut response = InitializeResponse::new(params.protocol_version);
        response.agent_capabilities = self.capabilities.clone();
        Ok(response)
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        let n = self.sessions.fetch_add(1, Ordering::SeqCst) + 1;
        let mut response = NewSessionResponse::new(format!("sess-{n}"));
        response.modes = self.modes("session/new");
        Ok(response)
    }

    async fn load_session(&self, _: AgentContext, _: LoadSessionRequest) -> Result<LoadSessionResponse, ErrorObject> {
        let mut response: LoadSessionResponse = typed(&json!({}))?;
        response.modes = self.modes("session/load");
        Ok(response)
    }

    async fn resume_session(
        &self,
        _: AgentContext,
        _: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, ErrorObject> {
        let mut response: ResumeSessionResponse = typed(&json!({}))?;
        response.modes = self.modes("session/resume");
        Ok(response)
    }

    async fn close_session(
        &self,
        _: AgentContext,
        _: CloseSessionRequest,
    ) -> Result<CloseSessionResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn delete_session(
        &self,
        _: AgentContext,
        _: DeleteSessionRequest,
    ) -> Result<DeleteSessionResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn list_sessions(
        &self,
        _: AgentContext,
        _: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, ErrorObject> {
        typed(&json!({ "sessions": [] }))
    }

    async fn logout(&self, _: AgentContext, _: LogoutRequest) -> Result<LogoutResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn set_session_mode(
        &self,
        _: AgentContext,
        _: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn prompt(&self, cx: AgentContext, params: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let text = match params.prompt.first() {
            Some(ContentBlock::Text(text)) => text.text.clone(),
            _ => String::new(),
        };
        let (command, argument) = text.split_once(' ').unwrap_or((text.as_str(), ""));
        let session = params.session_id;
        let stop = match command {
            "echo" => {
                for word in argument.split_whitespace() {
                    say(&cx, &session, word).await?;
                }
                StopReason::EndTurn
            }
            "permission" => {
                cx.handle_cancellation();
                let options = vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                ];
                let request = RequestPermissionRequest::new(session.clone(), ToolCallUpdate::new("call-1"), options);
                let outcome = match cx.peer().request_permission(request).await {
                    Ok(response) => match response.outcome {
                        RequestPermissionOutcome::Selected(selected) => selected.option_id.to_string(),
                        _ => "cancelled".to_owned(),
                    },
                    Err(AcpError::Cancelled { .. }) => "cancelled".to_owned(),
                    Err(e) => format!("error:{}", variant_name(&e)),
                };
                say(&cx, &session, &format!("permission:{outcome}")).await?;
                if outcome == "cancelled" {
                    StopReason::Cancelled
                } else {
                    StopReason::EndTurn
                }
            }
            "wait" => {
                say(&cx, &session, "waiting").await?;
                std::future::pending::<()>().await;
                StopReason::EndTurn
            }
            "hang" => std::future::pending().await,
            "linger" => {
                cx.handle_cancellation();
                say(&cx, &session, "waiting").await?;
                cx.cancellation_token().cancelled().await;
                if argument == "fail" {
                    return Err(ErrorObject::new(ErrorCode(4242), "failed after the cancel"));
                }
                StopReason::EndTurn
            }
            "read" => {
                let request = ReadTextFileRequest::new(session.clone(), argument);
                let report = match cx.peer().read_text_file(request).await {
                    Ok(response) => format!("read:{}", response.content),
                    Err(AcpError::Rpc { error, .. }) => format!("read:error:{}", error.code.0),
                    Err(e) => format!("read:local:{}", variant_name(&e)),
                };
                say(&cx, &session, &report).await?;
                StopReason::EndTurn
            }
            "panic" => std::panic::panic_any(DELIBERATE_PANIC),
            "error" => {
                let data = raw(&json!({ "reason": "test" }))?;
                return Err(ErrorObject::new(ErrorCode(4242), "test failure").with_data(data.into_raw()));
            }
            _ => StopReason::EndTurn,
        };
        Ok(PromptResponse::new(stop))
    }

    async fn ext_method(&self, _: AgentContext, request: agentproto_acp::ExtMessage) -> Result<RawJson, ErrorObject> {
        ext_request(&self.barrier, request).await
    }

    async fn ext_notification(&self, _: AgentContext, notification: agentproto_acp::ExtMessage) {
        if notification.method == BARRIER {
            self.barrier.mark(notification.payload.as_ref());
        }
    }
}

/// The client application of the flows (README, "The test applications").
pub(super) struct TestClient {
    /// `Some(option)`: permission requests are answered with it; `None`: left pending.
    permission: Option<String>,
    barrier: Barrier,
}

impl TestClient {
    pub(super) fn new(setup: &Value) -> Result<TestClient, String> {
        let permission = match setup.get("permission") {
            None | Some(Value::Null) => None,
            Some(Value::String(option)) => Some(option.clone()),
            Some(other) => return Err(format!("setup.permission must be a string or null, found {other}")),
        };
        Ok(TestClient { permission, barrier: Barrier::new() })
    }
}

/// Tells the flow what the client application saw, as a `_test/seen` notification.
async fn report_seen(cx: &ClientContext, seen: Value) {
    if let Ok(params) = RawJson::from_text(&seen.to_string()) {
        let _ = cx.peer().ext_notification("_test/seen", Some(params)).await;
    }
}

impl Client for TestClient {
    async fn request_permission(
        &self,
        cx: ClientContext,
        params: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        let seen = json!({ "method": "session/request_permission", "sessionId": params.session_id.to_string() });
        report_seen(&cx, seen).await;
        match &self.permission {
            Some(option) => Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(option.clone()),
            ))),
            // Left pending: the role answers `cancelled` when this side cancels the session.
            None => std::future::pending().await,
        }
    }

    async fn session_update(&self, cx: ClientContext, params: SessionNotification) {
        let update = serde_json::to_value(&params.update).unwrap_or(Value::Null);
        let kind = update.get("sessionUpdate").cloned().unwrap_or(Value::Null);
        let seen = json!({ "method": "session/update", "sessionId": params.session_id.to_string(), "update": kind });
        report_seen(&cx, seen).await;
    }

    async fn read_text_file(
        &self,
        _: ClientContext,
        params: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, ErrorObject> {
        Ok(ReadTextFileResponse::new(format!("text of {}", params.path)))
    }

    async fn write_text_file(
        &self,
        _: ClientContext,
        _: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, ErrorObject> {
        typed(&json!({}))
    }

    async fn create_elicitation(
        &self,
        _: ClientContext,
        _: CreateElicitationRequest,
    ) -> Result<CreateElicitationResponse, ErrorObject> {
        typed(&json!({ "action": "decline" }))
    }

    async fn ext_method(&self, _: ClientContext, request: agentproto_acp::ExtMessage) -> Result<RawJson, ErrorObject> {
        ext_request(&self.barrier, request).await
    }

    async fn ext_notification(&self, _: ClientContext, notification: agentproto_acp::ExtMessage) {
        if notification.method == BARRIER {
            self.barrier.mark(notification.payload.as_ref());
        }
    }
}
