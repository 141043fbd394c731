//! The script of a prompt turn: the probes of the first turn, the interop
//! scenario turns and the default script.

use std::sync::Arc;

use agentproto_jsonrpc::{ErrorCode, ErrorObject, RequestId};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::fs::{fs_round, scenario_fs};
use super::{describe, lock, raw, Answer, Purpose, Reply, Shared};
use crate::wire::excerpt;

/// One prompt turn of the scripted agent.
pub(super) async fn turn(
    shared: Arc<Shared>,
    session: String,
    prompt: RequestId,
    text: String,
    cancel: CancellationToken,
) {
    let probe = {
        let mut state = lock(&shared.state);
        !std::mem::replace(&mut state.probed, true)
    };
    let mut outcome = Ok(());
    if probe {
        outcome = probes(&shared, &session).await;
    }
    let mut words = text.split_whitespace();
    let stop = match outcome {
        Err(()) => None,
        Ok(()) => match words.next().unwrap_or_default() {
            "echo" => {
                for word in words {
                    shared.chunk(&session, word).await;
                }
                Some("end_turn")
            }
            "permission" => Some(permission_turn(&shared, &session, &cancel).await),
            "fs" => {
                let path = text.trim_start().trim_start_matches("fs").trim();
                scenario_fs(&shared, &session, path).await;
                Some("end_turn")
            }
            "wait" => {
                shared.chunk(&session, "waiting").await;
                tokio::select! {
                    () = cancel.cancelled() => Some("cancelled"),
                    () = tokio::time::sleep(shared.timeout) => {
                        shared.note("a `wait` turn was never cancelled; it ended after the timeout".to_owned());
                        Some("end_turn")
                    }
                }
            }
            "error" => {
                let error = ErrorObject::new(ErrorCode(4242), "deliberate failure")
                    .with_data(raw(&json!({"reason": "scenario"})));
                finish_turn(&shared, &session, &prompt, Err(error)).await;
                return;
            }
            "unknown-update" => {
                shared.update(&session, json!({"sessionUpdate": "agentproto_future_update", "detail": {"n": 1}})).await;
                shared.chunk(&session, "after-unknown").await;
                Some("end_turn")
            }
            _ => Some(default_turn(&shared, &session, &cancel).await),
        },
    };
    let stop = if cancel.is_cancelled() { "cancelled" } else { stop.unwrap_or("end_turn") };
    finish_turn(&shared, &session, &prompt, Ok(json!({"stopReason": stop}))).await;
}

async fn finish_turn(shared: &Shared, session: &str, prompt: &RequestId, answer: Result<Value, ErrorObject>) {
    lock(&shared.state).turns.remove(session);
    shared.respond(prompt, answer).await;
}

/// Sends a ping; judges `id` on whether the client still answers, and
/// ACP-CLIENT-RPC-001 on how. `Err` when the client is gone.
async fn alive(shared: &Shared, id: &str, after: &str) -> Result<(), ()> {
    match shared.call("_agentproto.check/ping", json!({}), Purpose::Plain).await {
        Reply::Answer(answer) => {
            shared.pass(id);
            judge_unknown(shared, "ACP-CLIENT-RPC-001", "_agentproto.check/ping", answer);
            Ok(())
        }
        Reply::Timeout => {
            shared.fail(id, format!("after {after}, the client did not answer a request within {:?}", shared.timeout));
            Ok(())
        }
        Reply::Closed => {
            shared.fail(id, format!("after {after}, the client closed the connection"));
            Err(())
        }
    }
}

/// Judges an answer that must be -32601.
fn judge_unknown(shared: &Shared, id: &str, method: &str, answer: Answer) {
    match answer {
        Err(error) => shared.check(id, error.code == ErrorCode::METHOD_NOT_FOUND, || {
            format!("{method} was answered {} instead of -32601", describe(&error))
        }),
        Ok(result) => {
            shared.fail(id, format!("{method} was answered with a result: {}", excerpt(result.get().as_bytes())))
        }
    }
}

/// The probes of a connection's first turn.
async fn probes(shared: &Shared, session: &str) -> Result<(), ()> {
    (shared.progress)("probing extensions");
    let meta = json!({"agentproto.check/probe": {"nested": [1, {"deep": true}]}});
    let update = json!({
        "sessionUpdate": "agent_thought_chunk",
        "content": {"type": "text", "text": "agentproto check: probing how this client handles extensions", "_meta": meta},
        "_meta": meta,
    });
    shared.notify("session/update", json!({"sessionId": session, "update": update, "_meta": meta})).await;
    alive(shared, "ACP-CLIENT-EXT-002", "an update carrying unknown _meta").await?;
    let future = json!({"sessionUpdate": "agentproto_check_future_update", "detail": {"n": 1}});
    shared.update(session, future).await;
    alive(shared, "ACP-CLIENT-EXT-003", "an update of an unknown kind").await?;
    shared.notify("_agentproto.check/notice", json!({"detail": "this notification should be ignored"})).await;
    alive(shared, "ACP-CLIENT-EXT-001", "an unknown extension notification").await?;
    match shared.call("agentproto.check/no_such_method", json!({}), Purpose::Plain).await {
        Reply::Answer(answer) => judge_unknown(shared, "ACP-CLIENT-RPC-002", "agentproto.check/no_such_method", answer),
        Reply::Timeout => shared.fail(
            "ACP-CLIENT-RPC-002",
            format!("agentproto.check/no_such_method got no answer within {:?}", shared.timeout),
        ),
        Reply::Closed => {
            shared.fail("ACP-CLIENT-RPC-002", "the client closed the connection instead of answering");
            return Err(());
        }
    }
    Ok(())
}

fn permission_params(session: &str, call: &str) -> (Value, Vec<String>) {
    let params = json!({
        "sessionId": session,
        "toolCall": {"toolCallId": call},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ],
    });
    (params, vec!["allow".to_owned(), "reject".to_owned()])
}

/// A tool call and its permission request; the option picked, `cancelled`, or `None`.
async fn ask_permission(shared: &Shared, session: &str, call: &str) -> Option<String> {
    let tool_call = json!({"sessionUpdate": "tool_call", "toolCallId": call, "title": "Pretend edit", "kind": "edit", "status": "pending"});
    shared.update(session, tool_call).await;
    let (params, offered) = permission_params(session, call);
    let purpose = Purpose::Permission { session: session.to_owned(), offered };
    let (id, rx) = shared.request("session/request_permission", params, purpose).await;
    match shared.wait(rx).await {
        Reply::Answer(Ok(raw)) => {
            let value: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            let outcome = &value["outcome"];
            Some(match outcome["outcome"].as_str() {
                Some("selected") => outcome["optionId"].as_str().unwrap_or_default().to_owned(),
                _ => "cancelled".to_owned(),
            })
        }
        Reply::Answer(Err(_)) | Reply::Closed => None,
        Reply::Timeout => {
            let after_cancel = lock(&shared.state).must_cancel.remove(&id);
            let (req, when) = if after_cancel {
                ("ACP-CLIENT-PERM-002", " after session/cancel")
            } else {
                ("ACP-CLIENT-PERM-001", "")
            };
            shared.fail(req, format!("a permission request was not answered within {:?}{when}", shared.timeout));
            None
        }
    }
}

/// The interop scenario's `permission` turn.
async fn permission_turn(shared: &Shared, session: &str, cancel: &CancellationToken) -> &'static str {
    let picked = ask_permission(shared, session, "call-1").await;
    let picked = picked.unwrap_or_else(|| "cancelled".to_owned());
    shared.chunk(session, &format!("permission:{picked}")).await;
    let status = if picked == "allow" { "completed" } else { "failed" };
    shared
        .update(session, json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": status}))
        .await;
    if picked == "cancelled" || cancel.is_cancelled() {
        "cancelled"
    } else {
        "end_turn"
    }
}

/// The default script of a turn.
async fn default_turn(shared: &Shared, session: &str, cancel: &CancellationToken) -> &'static str {
    shared.chunk(session, "agentproto check: a scripted turn. ").await;
    let picked = ask_permission(shared, session, "check-call-1").await;
    let status = if picked.as_deref() == Some("allow") { "completed" } else { "failed" };
    shared
        .update(session, json!({"sessionUpdate": "tool_call_update", "toolCallId": "check-call-1", "status": status}))
        .await;
    if cancel.is_cancelled() {
        return "cancelled";
    }

    let tool_call = json!({"sessionUpdate": "tool_call", "toolCallId": "check-call-2", "title": "Withdrawn edit", "kind": "edit", "status": "pending"});
    shared.update(session, tool_call).await;
    let (params, _) = permission_params(session, "check-call-2");
    let (id, rx) = shared.request("session/request_permission", params, Purpose::Withdrawn).await;
    shared.notify("$/cancel_request", json!({"requestId": id.as_number()})).await;
    match shared.wait(rx).await {
        Reply::Answer(_) => shared.pass("ACP-CLIENT-RPC-003"),
        Reply::Timeout => shared.fail(
            "ACP-CLIENT-RPC-003",
            format!(
                "a permission request withdrawn with $/cancel_request was not answered within {:?}",
                shared.timeout
            ),
        ),
        Reply::Closed => shared.fail("ACP-CLIENT-RPC-003", "the client closed the connection instead of answering"),
    }
    shared
        .update(session, json!({"sessionUpdate": "tool_call_update", "toolCallId": "check-call-2", "status": "failed"}))
        .await;
    if cancel.is_cancelled() {
        return "cancelled";
    }

    let read = shared.scratch.path().join("read-me.txt");
    let written = shared.scratch.path().join("written.txt");
    let _ = std::fs::write(&read, "agentproto check\nsecond line, ünïcödé\n");
    let (read, written) = (read.display().to_string(), written.display().to_string());
    fs_round(shared, session, Some(&read), Some((&written, "written by agentproto check\n"))).await;
    shared.chunk(session, "done.").await;
    if cancel.is_cancelled() {
        "cancelled"
    } else {
        "end_turn"
    }
}
