//! The recording applications of the live runner: an agent and a client that
//! implement every handler of their side, record each call with its decoded
//! params, and answer with a minimal valid result.
//!
//! The params are recorded as the generated dispatch hands them over, wrapped back
//! into the side's payload enum, so that they are re-encoded exactly as the
//! stateless runner re-encodes what `classify` decoded (`Payload::encode_payload`).

use std::sync::{Arc, Mutex};

use agentproto_acp::v1::*;
use agentproto_acp::{ExtMessage, Payload, RawJson, RequestId};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::wire::{raw, typed, Barrier, BARRIER};

/// The extension request the runner keeps in flight to see `$/cancel_request` act:
/// its handler never ends, so only a cancellation answers it.
pub(crate) const HOLD: &str = "_live/hold";

/// What the client side advertises: every capability a gate of the agent can ask for.
pub(crate) fn client_capabilities() -> Value {
    json!({
        "fs": {"readTextFile": true, "writeTextFile": true},
        "terminal": true,
        "session": {"compaction": {}, "configOptions": {}, "notices": {}},
        "auth": {"terminal": true},
        "elicitation": {"form": {}, "url": {}},
    })
}

/// What the agent side advertises: every capability a gate of the client can ask for.
pub(crate) fn agent_capabilities() -> Value {
    json!({
        "loadSession": true,
        "promptCapabilities": {"image": true, "audio": true, "embeddedContext": true},
        "mcpCapabilities": {"http": true, "sse": true},
        "sessionCapabilities": {"list": {}, "delete": {}, "additionalDirectories": {}, "resume": {}, "close": {}},
        "auth": {"logout": {}},
    })
}

/// A minimal valid result of `method`; `session` is the id `session/new` answers.
pub(crate) fn minimal_result(method: &str, session: &str) -> Value {
    match method {
        "initialize" => json!({"protocolVersion": 1, "agentCapabilities": agent_capabilities(), "authMethods": []}),
        // With `modes`: the session-gated requests (`session/set_mode`) apply to the session.
        "session/new" => json!({ "sessionId": session, "modes": {"currentModeId": "live", "availableModes": []} }),
        "session/list" => json!({"sessions": []}),
        "session/set_config_option" => json!({"configOptions": []}),
        "session/prompt" => json!({"stopReason": "end_turn"}),
        "session/request_permission" => json!({"outcome": {"outcome": "cancelled"}}),
        "fs/read_text_file" => json!({"content": ""}),
        "elicitation/create" => json!({"action": "decline"}),
        "terminal/create" => json!({"terminalId": "term-live"}),
        "terminal/output" => json!({"output": "", "truncated": false}),
        _ => json!({}),
    }
}

/// Valid params for a call of `method` naming `session` where it names one.
pub(crate) fn minimal_params(method: &str, session: &str) -> Value {
    match method {
        "initialize" => json!({"protocolVersion": 1, "clientCapabilities": client_capabilities()}),
        "authenticate" => json!({"methodId": "live"}),
        "session/new" => json!({"cwd": "/", "mcpServers": []}),
        "session/load" => json!({"sessionId": session, "cwd": "/", "mcpServers": []}),
        "session/resume" => json!({"sessionId": session, "cwd": "/"}),
        "session/close" | "session/delete" => json!({ "sessionId": session }),
        "session/set_mode" => json!({"sessionId": session, "modeId": "live"}),
        "session/set_config_option" => json!({"sessionId": session, "configId": "live", "value": "live"}),
        "session/prompt" => json!({"sessionId": session, "prompt": []}),
        "session/request_permission" => {
            json!({"sessionId": session, "toolCall": {"toolCallId": "call-live"}, "options": []})
        }
        "fs/read_text_file" => json!({"sessionId": session, "path": "/live"}),
        "fs/write_text_file" => json!({"sessionId": session, "path": "/live", "content": ""}),
        "elicitation/create" => {
            json!({"message": "live", "mode": "form", "sessionId": session, "requestedSchema": {}})
        }
        "terminal/create" => json!({"sessionId": session, "command": "true"}),
        m if m.starts_with("terminal/") => json!({"sessionId": session, "terminalId": "term-live"}),
        m if m.starts_with('_') => Value::Null,
        _ => json!({}),
    }
}

/// One handler call.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// The id of the request (`None` for a notification).
    pub(crate) id: Option<RequestId>,
    /// The method.
    pub(crate) method: String,
    /// The schema type of the params (`None` for extension methods).
    pub(crate) type_name: Option<&'static str>,
    /// The params, re-encoded by the SDK's encoder.
    pub(crate) bytes: Vec<u8>,
}

impl Record {
    /// The re-encoded params as JSON.
    pub(crate) fn params(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }
}

/// What both recording applications share: the records, the session id that
/// `session/new` answers, and the barrier.
pub(crate) struct Recorder {
    records: Mutex<Vec<Record>>,
    session: String,
    barrier: Barrier,
}

impl Recorder {
    pub(crate) fn new(session: &str) -> Arc<Recorder> {
        Arc::new(Recorder { records: Mutex::new(Vec::new()), session: session.to_owned(), barrier: Barrier::new() })
    }

    /// Every call recorded since the last `take`.
    pub(crate) fn take(&self) -> Vec<Record> {
        std::mem::take(&mut *self.records.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn record<P: Payload>(&self, id: Option<&RequestId>, payload: &P) {
        let mut bytes = Vec::new();
        if let Err(e) = payload.encode_payload(&mut bytes) {
            bytes = json!(format!("re-encoding failed: {e}")).to_string().into_bytes();
        }
        let record =
            Record { id: id.cloned(), method: payload.method().to_owned(), type_name: payload.type_name(), bytes };
        self.records.lock().unwrap_or_else(|p| p.into_inner()).push(record);
    }

    /// Records a request and answers it.
    fn answer<P: Payload, T: for<'de> Deserialize<'de>>(
        &self,
        id: Option<&RequestId>,
        payload: P,
    ) -> Result<T, ErrorObject> {
        self.record(id, &payload);
        typed(&minimal_result(payload.method(), &self.session))
    }

    async fn ext_method<P: Payload>(
        &self,
        id: Option<&RequestId>,
        request: ExtMessage,
        wrap: impl FnOnce(ExtMessage) -> P,
    ) -> Result<RawJson, ErrorObject> {
        match request.method.as_str() {
            BARRIER => self.barrier.wait(request.payload.as_ref()).await,
            HOLD => std::future::pending().await,
            _ => {
                self.record(id, &wrap(request));
                raw(&json!({}))
            }
        }
    }

    fn ext_notification<P: Payload>(&self, notification: ExtMessage, wrap: impl FnOnce(ExtMessage) -> P) {
        if notification.method == BARRIER {
            self.barrier.mark(notification.payload.as_ref());
        } else {
            self.record(None, &wrap(notification));
        }
    }
}

/// Request handlers that record their params and answer the minimal result.
macro_rules! recorded_requests {
    ($context:ty, $enum:ident; $($handler:ident($params:ty) -> $result:ty = $variant:ident;)*) => {
        $(
            async fn $handler(&self, cx: $context, params: $params) -> Result<$result, ErrorObject> {
                self.0.answer(cx.request_id(), $enum::$variant(params))
            }
        )*
    };
}

/// The recording agent.
pub(crate) struct RecordingAgent(pub(crate) Arc<Recorder>);

impl Agent for RecordingAgent {
    recorded_requests! {
        AgentContext, ClientRequest;
        initialize(InitializeRequest) -> InitializeResponse = Initialize;
        authenticate(AuthenticateRequest) -> AuthenticateResponse = Authenticate;
        logout(LogoutRequest) -> LogoutResponse = Logout;
        new_session(NewSessionRequest) -> NewSessionResponse = SessionNew;
        load_session(LoadSessionRequest) -> LoadSessionResponse = SessionLoad;
        list_sessions(ListSessionsRequest) -> ListSessionsResponse = SessionList;
        resume_session(ResumeSessionRequest) -> ResumeSessionResponse = SessionResume;
        close_session(CloseSessionRequest) -> CloseSessionResponse = SessionClose;
        delete_session(DeleteSessionRequest) -> DeleteSessionResponse = SessionDelete;
        set_session_mode(SetSessionModeRequest) -> SetSessionModeResponse = SessionSetMode;
        set_session_config_option(SetSessionConfigOptionRequest) -> SetSessionConfigOptionResponse = SessionSetConfigOption;
        prompt(PromptRequest) -> PromptResponse = SessionPrompt;
    }

    async fn cancel(&self, _: AgentContext, params: CancelNotification) {
        self.0.record(None, &ClientNotification::SessionCancel(params));
    }

    async fn ext_method(&self, cx: AgentContext, request: ExtMessage) -> Result<RawJson, ErrorObject> {
        self.0.ext_method(cx.request_id(), request, ClientRequest::Ext).await
    }

    async fn ext_notification(&self, _: AgentContext, notification: ExtMessage) {
        self.0.ext_notification(notification, ClientNotification::Ext);
    }
}

/// The recording client.
pub(crate) struct RecordingClient(pub(crate) Arc<Recorder>);

impl Client for RecordingClient {
    recorded_requests! {
        ClientContext, AgentRequest;
        request_permission(RequestPermissionRequest) -> RequestPermissionResponse = SessionRequestPermission;
        read_text_file(ReadTextFileRequest) -> ReadTextFileResponse = FsReadTextFile;
        write_text_file(WriteTextFileRequest) -> WriteTextFileResponse = FsWriteTextFile;
        create_elicitation(CreateElicitationRequest) -> CreateElicitationResponse = ElicitationCreate;
        create_terminal(CreateTerminalRequest) -> CreateTerminalResponse = TerminalCreate;
        terminal_output(TerminalOutputRequest) -> TerminalOutputResponse = TerminalOutput;
        wait_for_terminal_exit(WaitForTerminalExitRequest) -> WaitForTerminalExitResponse = TerminalWaitForExit;
        kill_terminal(KillTerminalRequest) -> KillTerminalResponse = TerminalKill;
        release_terminal(ReleaseTerminalRequest) -> ReleaseTerminalResponse = TerminalRelease;
    }

    async fn session_update(&self, _: ClientContext, params: SessionNotification) {
        self.0.record(None, &AgentNotification::SessionUpdate(params));
    }

    async fn complete_elicitation(&self, _: ClientContext, params: CompleteElicitationNotification) {
        self.0.record(None, &AgentNotification::ElicitationComplete(params));
    }

    async fn ext_method(&self, cx: ClientContext, request: ExtMessage) -> Result<RawJson, ErrorObject> {
        self.0.ext_method(cx.request_id(), request, AgentRequest::Ext).await
    }

    async fn ext_notification(&self, _: ClientContext, notification: ExtMessage) {
        self.0.ext_notification(notification, AgentNotification::Ext);
    }
}
