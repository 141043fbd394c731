//! Judging the client's requests, notifications and responses, and answering them.

use std::sync::Arc;

use agentproto_acp::rules::{Refusal, RequestRules};
use agentproto_acp::v1::{ClientNotification, ClientRequest, ClientResponse, ContentBlock, RequestPermissionOutcome};
use agentproto_acp::DispatchError;
use agentproto_jsonrpc::{ErrorCode, ErrorObject, RequestId};
use serde_json::json;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::turn::turn;
use super::{describe, lock, raw, Answer, Purpose, Shared, Turn};

pub(super) async fn on_request(
    shared: &Arc<Shared>,
    id: RequestId,
    method: &str,
    params: Option<&RawValue>,
) -> Option<tokio::task::JoinHandle<()>> {
    lock(&shared.state).requests += 1;
    let decoded = match ClientRequest::decode(method, params) {
        Ok(decoded) => decoded,
        Err(DispatchError::Invalid(e)) => {
            shared.fail("ACP-CLIENT-WIRE-002", format!("sent an invalid {method} request: {e}"));
            if method == "initialize" {
                shared.fail("ACP-CLIENT-INIT-002", format!("invalid initialize params: {e}"));
            }
            shared.respond(&id, Err(agentproto_acp::invalid_params(&e))).await;
            return None;
        }
        Err(_) => {
            shared.fail("ACP-CLIENT-CAP-001", format!("called {method:?}, which is not an agent method of ACP v1"));
            shared.respond(&id, Err(ErrorObject::method_not_found(method))).await;
            return None;
        }
    };
    shared.note_unknown_variants(method, &decoded.warnings);
    match crate::common::warnings(method, &decoded.warnings) {
        Some(text) => shared.fail("ACP-CLIENT-WIRE-002", text),
        None => shared.pass("ACP-CLIENT-WIRE-002"),
    }
    if let Some(session) = agentproto_acp::Payload::session_id(&decoded.value) {
        let known = lock(&shared.state).sessions.contains(session);
        if !known {
            shared.fail(
                "ACP-CLIENT-SESSION-002",
                format!("{method} named session {session:?}, which the agent never created"),
            );
            let data = raw(&json!({"sessionId": session}));
            let error = ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "unknown session").with_data(data);
            shared.respond(&id, Err(error)).await;
            return None;
        }
        shared.pass("ACP-CLIENT-SESSION-002");
    }
    let initialized = lock(&shared.state).initialized;
    if !initialized && !matches!(decoded.value, ClientRequest::Initialize(_)) {
        let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, "initialize first");
        shared.respond(&id, Err(error)).await;
        return None;
    }
    // What this scripted agent advertised, checked with the SDK's generated rule code.
    let handshake = crate::common::handshake(json!({"protocolVersion": 1}), crate::common::initialize_response());
    let refusal = RequestRules::refusal(&decoded.value, &handshake);
    match decoded.value {
        ClientRequest::Initialize(request) => {
            if initialized {
                shared.fail("ACP-CLIENT-INIT-003", "sent initialize a second time");
                shared.respond(&id, Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, "already initialized"))).await;
                return None;
            }
            shared.pass("ACP-CLIENT-INIT-003");
            let version = request.protocol_version;
            shared.check("ACP-CLIENT-INIT-002", version >= 1, || format!("asked for protocolVersion {version}"));
            *lock(&shared.peer) =
                (request.client_info.value().map(|info| (info.name.clone(), info.version.clone())), Some(version));
            {
                let mut state = lock(&shared.state);
                state.initialized = true;
                state.capabilities = Some(request.client_capabilities);
            }
            (shared.progress)("initialize answered");
            shared.respond(&id, Ok(crate::common::initialize_response())).await;
        }
        ClientRequest::SessionNew(request) => {
            let absolute = std::path::Path::new(&request.cwd).is_absolute();
            shared.check("ACP-CLIENT-SESSION-001", absolute, || {
                format!("session/new cwd {:?} is not absolute", request.cwd)
            });
            let session = {
                let mut state = lock(&shared.state);
                state.session_count += 1;
                let session = format!("check-session-{}", state.session_count);
                state.sessions.insert(session.clone());
                session
            };
            (shared.progress)(&format!("session {session} created"));
            shared.respond(&id, Ok(json!({"sessionId": session}))).await;
        }
        ClientRequest::SessionPrompt(request) => {
            let session = request.session_id.0.clone();
            // The SDK's value gates judge the content against what this scripted agent advertised.
            match &refusal {
                Some(refused @ Refusal::ValueNotAdvertised { path, .. }) => shared.fail(
                    "ACP-CLIENT-CAP-002",
                    format!("a prompt carried content the agent did not advertise: {path}: {}", refused.reason()),
                ),
                _ => shared.pass("ACP-CLIENT-CAP-002"),
            }
            let text = request.prompt.iter().find_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            });
            let cancel = CancellationToken::new();
            let busy = {
                let mut state = lock(&shared.state);
                state.prompts += 1;
                let busy = state.turns.contains_key(&session);
                if !busy {
                    state.turns.insert(session.clone(), Turn { prompt: id.clone(), cancel: cancel.clone() });
                }
                busy
            };
            if busy {
                shared.fail("ACP-CLIENT-PROMPT-001", format!("a second prompt on {session:?} while one was running"));
                let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, "a prompt is already running on this session");
                shared.respond(&id, Err(error)).await;
                return None;
            }
            shared.pass("ACP-CLIENT-PROMPT-001");
            (shared.progress)(&format!("prompt turn on {session}"));
            let shared = shared.clone();
            return Some(tokio::spawn(async move {
                turn(shared, session, id, text.unwrap_or_default(), cancel).await;
            }));
        }
        ClientRequest::Ext(ext) if ext.method == "_agentproto/slow" => {
            lock(&shared.state).slow.insert(id);
        }
        ClientRequest::Ext(_) => shared.respond(&id, Err(ErrorObject::method_not_found(method))).await,
        _ => {
            // A gated method gets the SDK's refusal, naming the capability this
            // scripted agent did not advertise; any other it simply does not offer.
            let (detail, error) = match &refusal {
                Some(refusal) => {
                    (format!("needs `{}`", refusal.capability().unwrap_or_default()), refusal.error(method))
                }
                None => ("is not offered".to_owned(), ErrorObject::method_not_found(method)),
            };
            shared
                .fail("ACP-CLIENT-CAP-001", format!("called {method}, which the agent did not advertise: it {detail}"));
            shared.respond(&id, Err(error)).await;
        }
    }
    None
}

pub(super) async fn on_notification(shared: &Arc<Shared>, method: &str, params: Option<&RawValue>) {
    let decoded = match ClientNotification::decode(method, params) {
        Ok(decoded) => decoded,
        Err(DispatchError::Invalid(e)) => {
            shared.fail("ACP-CLIENT-WIRE-002", format!("sent an invalid {method} notification: {e}"));
            return;
        }
        Err(_) => {
            shared.fail(
                "ACP-CLIENT-WIRE-002",
                format!("sent notification {method:?}, which v1 does not define for clients"),
            );
            return;
        }
    };
    shared.note_unknown_variants(method, &decoded.warnings);
    match crate::common::warnings(method, &decoded.warnings) {
        Some(text) => shared.fail("ACP-CLIENT-WIRE-002", text),
        None => shared.pass("ACP-CLIENT-WIRE-002"),
    }
    match decoded.value {
        ClientNotification::SessionCancel(cancel) => {
            let session = cancel.session_id.0;
            let known = lock(&shared.state).sessions.contains(&session);
            if !known {
                shared.fail(
                    "ACP-CLIENT-SESSION-002",
                    format!("session/cancel named {session:?}, which the agent never created"),
                );
                return;
            }
            (shared.progress)(&format!("session/cancel on {session}"));
            let pending: Vec<RequestId> = lock(&shared.pending)
                .iter()
                .filter(|(_, p)| matches!(&p.purpose, Purpose::Permission { session: s, .. } if *s == session))
                .map(|(id, _)| id.clone())
                .collect();
            let mut state = lock(&shared.state);
            state.must_cancel.extend(pending);
            if let Some(turn) = state.turns.get(&session) {
                turn.cancel.cancel();
            }
        }
        ClientNotification::CancelRequest(cancel) => {
            let target = cancel.request_id;
            let slow = lock(&shared.state).slow.remove(&target);
            if slow {
                shared.respond(&target, Err(ErrorObject::request_cancelled())).await;
                return;
            }
            let state = lock(&shared.state);
            if let Some(turn) = state.turns.values().find(|t| t.prompt == target) {
                turn.cancel.cancel();
            }
        }
        ClientNotification::Ext(_) => {}
    }
}

pub(super) fn on_response(shared: &Arc<Shared>, id: RequestId, answer: Answer) {
    let Some(pending) = lock(&shared.pending).remove(&id) else {
        if id.is_null() {
            let what = match &answer {
                Ok(_) => "a result".to_owned(),
                Err(error) => describe(error),
            };
            shared.note(format!(
                "the client sent a response with id null ({what}): it could not read a line of the agent"
            ));
        } else {
            shared.fail("ACP-CLIENT-WIRE-003", format!("a response with id {id} answers no request the agent sent"));
        }
        return;
    };
    let method = pending.method.as_str();
    if let Ok(result) = &answer {
        match ClientResponse::decode(method, Some(result)) {
            Ok(decoded) => {
                shared.note_unknown_variants(&format!("{method} result"), &decoded.warnings);
                match crate::common::warnings(&format!("{method} result"), &decoded.warnings) {
                    Some(text) => shared.fail("ACP-CLIENT-WIRE-003", text),
                    None => shared.pass("ACP-CLIENT-WIRE-003"),
                }
                if let (ClientResponse::SessionRequestPermission(response), Purpose::Permission { offered, .. }) =
                    (&decoded.value, &pending.purpose)
                {
                    judge_permission(shared, &id, Some(&response.outcome), offered, None);
                }
            }
            Err(DispatchError::Invalid(e)) => {
                shared.fail("ACP-CLIENT-WIRE-003", format!("invalid {method} result: {e}"));
                if let Purpose::Permission { offered, .. } = &pending.purpose {
                    judge_permission(shared, &id, None, offered, Some(format!("an invalid result ({e})")));
                }
            }
            Err(_) => shared.pass("ACP-CLIENT-WIRE-003"),
        }
    } else {
        shared.pass("ACP-CLIENT-WIRE-003");
        if let (Err(error), Purpose::Permission { offered, .. }) = (&answer, &pending.purpose) {
            judge_permission(shared, &id, None, offered, Some(describe(error)));
        }
    }
    let _ = pending.tx.send(answer);
}

/// ACP-CLIENT-PERM-001/002 for one permission answer.
fn judge_permission(
    shared: &Shared,
    id: &RequestId,
    outcome: Option<&RequestPermissionOutcome>,
    offered: &[String],
    failure: Option<String>,
) {
    let after_cancel = lock(&shared.state).must_cancel.remove(id);
    if after_cancel {
        let cancelled = matches!(outcome, Some(RequestPermissionOutcome::Cancelled));
        shared.check("ACP-CLIENT-PERM-002", cancelled, || match (outcome, &failure) {
            (_, Some(text)) => format!("after session/cancel, a pending permission request was answered with {text}"),
            (Some(RequestPermissionOutcome::Selected(s)), _) => format!(
                "after session/cancel, a pending permission request was answered \"selected\" ({:?}) instead of \"cancelled\"",
                s.option_id.0
            ),
            _ => "after session/cancel, a pending permission request was not answered \"cancelled\"".to_owned(),
        });
        return;
    }
    match (outcome, failure) {
        (_, Some(text)) => shared.fail("ACP-CLIENT-PERM-001", format!("a permission request was answered with {text}")),
        (Some(RequestPermissionOutcome::Cancelled), _) => shared.pass("ACP-CLIENT-PERM-001"),
        (Some(RequestPermissionOutcome::Selected(selected)), _) => {
            let option = &selected.option_id.0;
            shared.check("ACP-CLIENT-PERM-001", offered.contains(option), || {
                format!("a permission request was answered with optionId {option:?}, which was not offered")
            });
        }
        (Some(RequestPermissionOutcome::Unknown(raw)), _) => {
            shared.fail("ACP-CLIENT-PERM-001", format!("a permission outcome v1 does not define: {}", raw.get()))
        }
        (None, None) => {}
    }
}
