//! The agent and client roles talking to each other in memory: typed calls, the
//! permission round trip inside a prompt, local refusals (nothing sent) and
//! strict outgoing validation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::v1::*;

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future).await.expect("timed out")
}

/// An agent whose prompt asks permission and reports the outcome as a chunk.
struct Asking {
    load_session: bool,
}

impl Agent for Asking {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let mut response = InitializeResponse::new(PROTOCOL_VERSION);
        response.agent_capabilities.load_session = self.load_session;
        Ok(response)
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("s1"))
    }

    async fn load_session(&self, _: AgentContext, _: LoadSessionRequest) -> Result<LoadSessionResponse, ErrorObject> {
        Ok(LoadSessionResponse::default())
    }

    async fn prompt(&self, cx: AgentContext, request: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        let options = vec![PermissionOption::new("ok", "OK", PermissionOptionKind::AllowOnce)];
        let ask = RequestPermissionRequest::new(request.session_id.clone(), ToolCallUpdate::new("t1"), options);
        // Awaiting the client inside the handler: must not deadlock the connection.
        let outcome =
            cx.peer().request_permission(ask).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        let said = match outcome.outcome {
            RequestPermissionOutcome::Selected(s) => s.option_id.to_string(),
            _ => "cancelled".to_owned(),
        };
        let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(said)));
        let update = SessionNotification::new(request.session_id, SessionUpdate::AgentMessageChunk(chunk));
        cx.peer().session_update(update).await.map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[derive(Default)]
struct Recording {
    chunks: Arc<Mutex<Vec<String>>>,
}

impl Client for Recording {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new("ok"))))
    }

    async fn session_update(&self, _: ClientContext, notification: SessionNotification) {
        if let SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(text), .. }) =
            notification.update
        {
            self.chunks.lock().unwrap().push(text.text);
        }
    }
}

fn pair(agent: Asking, client: Recording, options: AcpOptions) -> AgentConnection<V1> {
    let (a, b) = tokio::io::duplex(64 * 1024);
    let (agent_read, agent_write) = tokio::io::split(a);
    let (client_read, client_write) = tokio::io::split(b);
    let (agent_connection, _) = connect_agent(agent, agent_read, agent_write, options.clone());
    let (client_connection, to_agent) = connect_client(client, client_read, client_write, options);
    tokio::spawn(agent_connection.run());
    tokio::spawn(client_connection.run());
    to_agent
}

async fn ready(agent: &AgentConnection<V1>) -> SessionId {
    within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.unwrap();
    within(agent.new_session(NewSessionRequest::new("/tmp", Vec::new()))).await.unwrap().session_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_awaits_a_permission_round_trip_and_updates_arrive_first() {
    let client = Recording::default();
    let chunks = client.chunks.clone();
    let agent = pair(Asking { load_session: false }, client, AcpOptions::default());
    let session = ready(&agent).await;
    for _ in 0..20 {
        let prompt = PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new("go"))]);
        let response = within(agent.prompt(prompt)).await.unwrap();
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        // The update sent before the result was handled before `prompt` returned.
        assert_eq!(chunks.lock().unwrap().pop().as_deref(), Some("ok"));
    }
}

#[tokio::test]
async fn calls_before_initialize_fail_locally() {
    let agent = pair(Asking { load_session: false }, Recording::default(), AcpOptions::default());
    match within(agent.new_session(NewSessionRequest::new("/tmp", Vec::new()))).await {
        Err(AcpError::NotInitialized { method }) => assert_eq!(method, "session/new"),
        other => panic!("{other:?}"),
    }
    match within(agent.cancel(CancelNotification::new("s1"))).await {
        Err(AcpError::NotInitialized { .. }) => {}
        other => panic!("{other:?}"),
    }
    // The connection is fine afterwards.
    ready(&agent).await;
}

#[tokio::test]
async fn calls_the_agent_did_not_advertise_fail_locally() {
    let agent = pair(Asking { load_session: false }, Recording::default(), AcpOptions::default());
    ready(&agent).await;
    let load = LoadSessionRequest::new(Vec::new(), "/tmp", "s1");
    match within(agent.load_session(load.clone())).await {
        Err(AcpError::CapabilityNotAdvertised { method, capability }) => {
            assert_eq!(method, "session/load");
            assert_eq!(capability, "agentCapabilities.loadSession");
        }
        other => panic!("{other:?}"),
    }
    let agent = pair(Asking { load_session: true }, Recording::default(), AcpOptions::default());
    ready(&agent).await;
    within(agent.load_session(load)).await.unwrap();
}

/// An agent that creates sessions without modes and loads them with some.
struct Moded;

impl Agent for Moded {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let mut response = InitializeResponse::new(PROTOCOL_VERSION);
        response.agent_capabilities.load_session = true;
        Ok(response)
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("s1"))
    }

    async fn load_session(&self, _: AgentContext, _: LoadSessionRequest) -> Result<LoadSessionResponse, ErrorObject> {
        let mut response = LoadSessionResponse::default();
        let modes = vec![SessionMode::new("ask", "Ask")];
        response.modes = MaybeUndefined::Value(SessionModeState::new("ask", modes));
        Ok(response)
    }

    async fn set_session_mode(
        &self,
        _: AgentContext,
        _: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, ErrorObject> {
        Ok(SetSessionModeResponse::default())
    }

    async fn prompt(&self, _: AgentContext, _: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[tokio::test]
async fn set_mode_follows_the_modes_of_the_latest_opening_answer() {
    let (a, b) = tokio::io::duplex(64 * 1024);
    let (agent_read, agent_write) = tokio::io::split(a);
    let (client_read, client_write) = tokio::io::split(b);
    let (agent_connection, _) = connect_agent(Moded, agent_read, agent_write, AcpOptions::default());
    let (client_connection, agent) =
        connect_client(Recording::default(), client_read, client_write, AcpOptions::default());
    tokio::spawn(agent_connection.run());
    tokio::spawn(client_connection.run());
    let session = ready(&agent).await;
    // `session/new` answered without modes: refused here, nothing sent.
    match within(agent.set_session_mode(SetSessionModeRequest::new(session.clone(), "ask"))).await {
        Err(AcpError::NotAnnounced { method, session, member }) => {
            assert_eq!((method.as_str(), session.as_str(), member.as_str()), ("session/set_mode", "s1", "modes"));
        }
        other => panic!("{other:?}"),
    }
    // Loaded again with modes: the latest answer counts, on both sides.
    within(agent.load_session(LoadSessionRequest::new(Vec::new(), "/tmp", session.clone()))).await.unwrap();
    within(agent.set_session_mode(SetSessionModeRequest::new(session, "ask"))).await.unwrap();
}

#[tokio::test]
async fn default_options_refuse_invalid_outgoing_params() {
    // No `strict(true)`: outgoing validation is the default in every build.
    let agent = pair(Asking { load_session: false }, Recording::default(), AcpOptions::default());
    let session = ready(&agent).await;
    // A content block no schema knows: the agent side would only salvage it.
    let unknown = ContentBlock::Unknown(RawJson::from_text(r#"{"type":"hologram"}"#).unwrap());
    match within(agent.prompt(PromptRequest::new(session, vec![unknown]))).await {
        Err(AcpError::InvalidParams { method, error }) => {
            assert_eq!(method, "session/prompt");
            assert!(error.path.starts_with("$.params.prompt[0]"), "{error:?}");
        }
        other => panic!("{other:?}"),
    }
}

/// Our client's `initialize` answered by a raw agent with `version` as the
/// protocol version; how the call ends.
async fn initialize_answered_with(version: &str) -> Result<InitializeResponse, AcpError> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(ours);
    let (connection, agent) = connect_client(Recording::default(), read, write, AcpOptions::default());
    tokio::spawn(connection.run());
    let call = tokio::spawn(async move { agent.initialize(InitializeRequest::new(PROTOCOL_VERSION)).await });
    let (their_read, mut their_write) = tokio::io::split(theirs);
    let mut lines = BufReader::new(their_read).lines();
    let request: serde_json::Value = serde_json::from_str(&within(lines.next_line()).await.unwrap().unwrap()).unwrap();
    let answer = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":{version}}}}}"#, request["id"]);
    their_write.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
    within(call).await.unwrap()
}

#[tokio::test]
async fn an_initialize_answer_is_another_version_only_when_it_is_a_version() {
    // Another uint16 is a version this connection does not speak.
    match initialize_answered_with("2").await {
        Err(AcpError::UnsupportedVersion { answered: 2, supported: 1 }) => {}
        other => panic!("{other:?}"),
    }
    // A value that is no uint16 is no version: the result is invalid where it is, as
    // `receive::classify` and the vector `acp/v1/initialize/result-invalid-protocol-version` say.
    for not_a_version in ["-1", "65536", "\"2\""] {
        match initialize_answered_with(not_a_version).await {
            Err(AcpError::InvalidResult { error, .. }) => assert_eq!(error.path, "$.result.protocolVersion"),
            other => panic!("{not_a_version}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn unknown_session_is_answered_with_its_id() {
    let agent = pair(Asking { load_session: false }, Recording::default(), AcpOptions::default());
    ready(&agent).await;
    let prompt = PromptRequest::new("nope", vec![ContentBlock::Text(TextContent::new("go"))]);
    let error = within(agent.prompt(prompt)).await.unwrap_err();
    let rpc = error.as_rpc().expect("an error from the agent");
    assert_eq!(rpc.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert_eq!(rpc.data.as_ref().unwrap().get(), r#"{"sessionId":"nope"}"#);
}

/// Dropping the process handle kills the agent and the child is reaped: no
/// zombie is left behind (Linux: `/proc/<pid>` goes away).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_agent_process_is_killed_and_reaped() {
    let mut command = tokio::process::Command::new("sleep");
    command.arg("30");
    let (agent, process) = spawn_agent(command, Recording::default(), AcpOptions::default()).unwrap();
    let pid = process.id().expect("running");
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_dir.exists());
    drop(process);
    // Polls the process table (an external state with no event to await), bounded.
    within(async {
        while proc_dir.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // The connection ended with the process: calls fail at once instead of hanging.
    assert!(within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.is_err());
}
