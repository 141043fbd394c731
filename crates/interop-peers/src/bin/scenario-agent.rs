//! The scenario agent of `interop/SCENARIO.md`, on agentproto's agent role.

use std::sync::atomic::{AtomicU64, Ordering};

use agentproto_acp::v1::*;
use agentproto_acp::RawJson;

#[derive(Default)]
struct Scenario {
    sessions: AtomicU64,
}

fn text_of(prompt: &[ContentBlock]) -> String {
    match prompt.first() {
        Some(ContentBlock::Text(text)) => text.text.clone(),
        _ => String::new(),
    }
}

async fn say(cx: &AgentContext, session: &SessionId, text: &str) -> Result<(), ErrorObject> {
    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
    update(cx, session, SessionUpdate::AgentMessageChunk(chunk)).await
}

async fn update(cx: &AgentContext, session: &SessionId, update: SessionUpdate) -> Result<(), ErrorObject> {
    let notification = SessionNotification::new(session.clone(), update);
    cx.peer().session_update(notification).await.map_err(|e| ErrorObject::internal_error(e.to_string()))
}

fn failed(e: AcpError) -> ErrorObject {
    e.as_rpc().cloned().unwrap_or_else(|| ErrorObject::internal_error(e.to_string()))
}

impl Agent for Scenario {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        let mut response = InitializeResponse::new(PROTOCOL_VERSION);
        response.agent_info = Implementation::new("agentproto-scenario-agent", "0.0.0").into();
        Ok(response)
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        Ok(NewSessionResponse::new(format!("sess-{n}")))
    }

    async fn prompt(&self, cx: AgentContext, params: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        // This agent reports what happened after a cancel, so it finishes its turns itself.
        cx.handle_cancellation();
        let session = params.session_id.clone();
        let text = text_of(&params.prompt);
        let (command, argument) = text.split_once(' ').unwrap_or((text.as_str(), ""));
        let stop = match command {
            "echo" => {
                for word in argument.split_whitespace() {
                    say(&cx, &session, word).await?;
                }
                StopReason::EndTurn
            }
            "permission" => {
                let mut call = ToolCall::new("call-1", "Pretend edit");
                call.kind = Some(ToolKind::Edit);
                call.status = Some(ToolCallStatus::Pending);
                update(&cx, &session, SessionUpdate::ToolCall(call)).await?;
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
                    Err(e) => return Err(failed(e)),
                };
                say(&cx, &session, &format!("permission:{outcome}")).await?;
                let mut done = ToolCallUpdate::new("call-1");
                done.status =
                    if outcome == "allow" { ToolCallStatus::Completed } else { ToolCallStatus::Failed }.into();
                update(&cx, &session, SessionUpdate::ToolCallUpdate(done)).await?;
                if outcome == "cancelled" {
                    StopReason::Cancelled
                } else {
                    StopReason::EndTurn
                }
            }
            "fs" => {
                let read = ReadTextFileRequest::new(session.clone(), argument);
                let content = cx.peer().read_text_file(read).await.map_err(failed)?.content;
                let write =
                    WriteTextFileRequest::new(session.clone(), format!("{argument}.out"), content.to_uppercase());
                cx.peer().write_text_file(write).await.map_err(failed)?;
                say(&cx, &session, &format!("read:{}", content.encode_utf16().count())).await?;
                StopReason::EndTurn
            }
            "wait" => {
                say(&cx, &session, "waiting").await?;
                cx.cancellation_token().cancelled().await;
                StopReason::Cancelled
            }
            "unknown-update" => {
                let raw = RawJson::from_text(r#"{"sessionUpdate":"agentproto_future_update","detail":{"n":1}}"#)
                    .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
                update(&cx, &session, SessionUpdate::Unknown(raw)).await?;
                say(&cx, &session, "after-unknown").await?;
                StopReason::EndTurn
            }
            "error" => {
                let data = RawJson::from_text(r#"{"reason":"scenario"}"#)
                    .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
                return Err(ErrorObject::new(ErrorCode(4242), "deliberate failure").with_data(data.into_raw()));
            }
            _ => StopReason::EndTurn,
        };
        Ok(PromptResponse::new(stop))
    }

    async fn ext_method(&self, cx: AgentContext, request: agentproto_acp::ExtMessage) -> Result<RawJson, ErrorObject> {
        if request.method == "_agentproto/slow" {
            // Never answers on its own: `$/cancel_request` drops this future and the
            // connection answers -32800.
            cx.cancellation_token().cancelled().await;
            return Err(ErrorObject::request_cancelled());
        }
        Err(ErrorObject::method_not_found(&request.method))
    }
}

#[tokio::main]
async fn main() {
    // The `unknown-update` step sends a variant no schema knows, on purpose, so
    // outgoing validation is off; everything else this agent sends is valid.
    let options = AcpOptions::default().strict(false).log_to_stderr("scenario-agent");
    if let Err(e) = serve_agent_stdio(Scenario::default(), options).await {
        eprintln!("scenario-agent: {e}");
        std::process::exit(1);
    }
}
