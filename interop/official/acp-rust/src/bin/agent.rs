//! Scenario agent (`interop/SCENARIO.md`) on the official Rust SDK,
//! `agent-client-protocol` 5.2.0, served on stdin/stdout with the SDK's `Stdio`.
//! Diagnostics go to stderr only.
//!
//! Handlers run inside the SDK's dispatch loop, so a prompt turn (which sends
//! requests to the client and waits for their answers) is moved onto a task
//! with `cx.spawn`, as the SDK's ordering notes ask.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, ContentChunk, Implementation, InitializeRequest,
    InitializeResponse, NewSessionRequest, NewSessionResponse, PermissionOption, PermissionOptionKind, PromptRequest,
    PromptResponse, ReadTextFileRequest, RequestPermissionOutcome, RequestPermissionRequest, SessionId,
    SessionNotification, SessionUpdate, StopReason, TextContent, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind, WriteTextFileRequest,
};
use agent_client_protocol::{Agent, Client, Error, Stdio, UntypedMessage};
use serde_json::json;
use tokio::sync::Notify;

const NAME: &str = "rust-official-scenario-agent";

/// Turns in progress: session id -> the signal `session/cancel` raises.
type Turns = Arc<Mutex<HashMap<String, Arc<Notify>>>>;

fn chunk(cx: &ConnectionTo<Client>, session: &SessionId, text: &str) -> Result<(), Error> {
    let content = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
    cx.send_notification(SessionNotification::new(session.clone(), SessionUpdate::AgentMessageChunk(content)))
}

fn update(cx: &ConnectionTo<Client>, session: &SessionId, update: SessionUpdate) -> Result<(), Error> {
    cx.send_notification(SessionNotification::new(session.clone(), update))
}

async fn permission(cx: &ConnectionTo<Client>, session: &SessionId) -> Result<StopReason, Error> {
    let call = ToolCall::new("call-1", "Pretend edit").kind(ToolKind::Edit).status(ToolCallStatus::Pending);
    update(cx, session, SessionUpdate::ToolCall(call))?;
    let options = vec![
        PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
    ];
    let asked = ToolCallUpdate::new("call-1", ToolCallUpdateFields::new());
    let answer = cx.send_request(RequestPermissionRequest::new(session.clone(), asked, options)).block_task().await?;
    let picked = match &answer.outcome {
        RequestPermissionOutcome::Selected(selected) => selected.option_id.to_string(),
        _ => "cancelled".to_owned(),
    };
    chunk(cx, session, &format!("permission:{picked}"))?;
    let status = if picked == "allow" { ToolCallStatus::Completed } else { ToolCallStatus::Failed };
    let done = ToolCallUpdate::new("call-1", ToolCallUpdateFields::new().status(status));
    update(cx, session, SessionUpdate::ToolCallUpdate(done))?;
    Ok(if picked == "cancelled" { StopReason::Cancelled } else { StopReason::EndTurn })
}

async fn fs(cx: &ConnectionTo<Client>, session: &SessionId, path: &str) -> Result<StopReason, Error> {
    let read = cx.send_request(ReadTextFileRequest::new(session.clone(), path)).block_task().await?;
    let upper = read.content.to_uppercase();
    cx.send_request(WriteTextFileRequest::new(session.clone(), format!("{path}.out"), upper)).block_task().await?;
    chunk(cx, session, &format!("read:{}", read.content.encode_utf16().count()))?;
    Ok(StopReason::EndTurn)
}

/// One prompt turn, acting on the first word of the prompt's first text block.
async fn turn(cx: ConnectionTo<Client>, request: PromptRequest, cancelled: Arc<Notify>) -> Result<StopReason, Error> {
    let session = &request.session_id;
    let text = match request.prompt.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        _ => String::new(),
    };
    let (command, rest) = text.split_once(' ').unwrap_or((text.as_str(), ""));
    match command {
        "echo" => {
            // Every space-separated piece after the first, as the other SDKs' agents split it.
            for word in text.split(' ').skip(1) {
                chunk(&cx, session, word)?;
            }
            Ok(StopReason::EndTurn)
        }
        "permission" => permission(&cx, session).await,
        "fs" => fs(&cx, session, rest).await,
        "wait" => {
            chunk(&cx, session, "waiting")?;
            cancelled.notified().await;
            Ok(StopReason::Cancelled)
        }
        "unknown-update" => {
            // `SessionUpdate` is a closed enum: the unknown variant is sent as an
            // untyped `session/update` notification holding the raw JSON.
            let params = json!({
                "sessionId": session.to_string(),
                "update": {"sessionUpdate": "agentproto_future_update", "detail": {"n": 1}},
            });
            cx.send_notification(UntypedMessage::new("session/update", params)?)?;
            chunk(&cx, session, "after-unknown")?;
            Ok(StopReason::EndTurn)
        }
        "error" => Err(Error::new(4242, "deliberate failure").data(json!({"reason": "scenario"}))),
        _ => Err(Error::invalid_params().data(json!({"prompt": text}))),
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let sessions = AtomicUsize::new(0);
    let turns: Turns = Arc::default();
    let on_prompt = turns.clone();
    let on_cancel = turns.clone();
    let result = Agent
        .v1()
        .name(NAME)
        .on_receive_request(
            async |_: InitializeRequest, responder, _cx| {
                responder.respond(
                    InitializeResponse::new(ProtocolVersion::V1)
                        .agent_capabilities(AgentCapabilities::new())
                        .auth_methods(vec![])
                        .agent_info(Implementation::new(NAME, "0.0.0")),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |_: NewSessionRequest, responder, _cx| {
                let n = sessions.fetch_add(1, Ordering::Relaxed) + 1;
                responder.respond(NewSessionResponse::new(format!("sess-{n}")))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let key = request.session_id.to_string();
                let cancelled = Arc::new(Notify::new());
                on_prompt.lock().expect("turns").insert(key.clone(), cancelled.clone());
                let turns = on_prompt.clone();
                cx.clone().spawn(async move {
                    let outcome = turn(cx, request, cancelled.clone()).await;
                    let mut turns = turns.lock().expect("turns");
                    if turns.get(&key).is_some_and(|current| Arc::ptr_eq(current, &cancelled)) {
                        turns.remove(&key);
                    }
                    drop(turns);
                    responder.respond_with_result(outcome.map(PromptResponse::new))
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelNotification, _cx| {
                if let Some(turn) = on_cancel.lock().expect("turns").get(&cancel.session_id.to_string()) {
                    turn.notify_one();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        // Extension request that only ends when the client cancels it: the SDK marks
        // the responder's cancellation on `$/cancel_request`, and the task answers -32800.
        .on_receive_request(
            async |request: UntypedMessage, responder, cx: ConnectionTo<Client>| {
                if request.method != "_agentproto/slow" {
                    return responder.respond_with_error(Error::method_not_found());
                }
                let cancellation = responder.cancellation();
                cx.spawn(async move {
                    cancellation.cancelled().await;
                    responder.respond_with_error(Error::request_cancelled())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await;
    eprintln!("[{NAME}] connection closed: {result:?}");
    result
}
