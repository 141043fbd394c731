//! The main part: `initialize`, sessions, prompt turns, cancellation, unknown
//! sessions and methods, extensions, a final prompt.

use agentproto_jsonrpc::ErrorCode;
use serde_json::json;

use super::cancel::{cancel_request_turn, cancel_turn};
use super::driver::{Driver, Lost};
use super::judge::{judge_error_code, judge_session, judge_silence};
use super::prompt::prompt_turn;
use super::{
    barrier, describe, initialize_params, initialize_result, prompt_params, settle_strays, start, Ctx, EVERY_PART,
    MAIN_PART,
};

pub(super) async fn main_part(ctx: &mut Ctx<'_>) {
    let ids: Vec<&str> = MAIN_PART.iter().chain(EVERY_PART).copied().collect();
    let Some(mut d) = start(ctx, "main", &ids) else { return };
    if let Err(Lost(why)) = main_script(&mut d).await {
        d.ctx.skip_all(MAIN_PART, &format!("the connection had ended: {why}"));
    }
    settle_strays(&mut d, "main");
    d.close("main").await;
}

async fn main_script(d: &mut Driver<'_, '_>) -> Result<(), Lost> {
    let timeout = d.timeout();
    let options = d.ctx.options;
    let cwd = d.ctx.cwd.clone();
    let new_session = json!({"cwd": cwd, "mcpServers": []});

    d.ctx.step("main", "session/new before initialize");
    let early = step!(d, "ACP-INIT-008", d.request("session/new", &new_session).await);
    match step!(d, "ACP-INIT-008", d.wait(&early).await) {
        Some(Err(_)) => d.ctx.ledger.pass("ACP-INIT-008"),
        Some(Ok(_)) => d.ctx.ledger.fail("ACP-INIT-008", "session/new before initialize was answered with a result"),
        None => {
            d.ctx.ledger.fail("ACP-INIT-008", format!("session/new before initialize: no answer within {timeout:?}"))
        }
    }

    d.ctx.step("main", "initialize (version 1)");
    let answer =
        step!(d, "ACP-INIT-001", d.call("initialize", &initialize_params(json!(1), d.ctx.options.client_fs)).await);
    let failure = match answer {
        None => Err(format!("no answer within {timeout:?}")),
        Some(Err(error)) => Err(format!("initialize was refused with {}", describe(&error))),
        Some(Ok(raw)) => {
            crate::common::note_once(&mut d.ctx.notes, super::unknown_variants_note("initialize", &raw));
            initialize_result(&raw)
        }
    };
    let response = match failure {
        Ok((response, salvaged)) => {
            match salvaged {
                Some(text) => d.ctx.ledger.fail("ACP-INIT-001", text),
                None => d.ctx.ledger.pass("ACP-INIT-001"),
            }
            response
        }
        Err(text) => {
            d.ctx.ledger.fail("ACP-INIT-001", text);
            d.ctx.skip_all(MAIN_PART, "initialize failed");
            return Ok(());
        }
    };
    let version = response.protocol_version;
    d.ctx.version = Some(version);
    d.ctx.ledger.check("ACP-INIT-002", version == 1, || format!("asked for version 1, the agent answered {version}"));
    match response.agent_info.value() {
        Some(info) => {
            d.ctx.peer = Some((info.name.clone(), info.version.clone()));
            d.ctx.ledger.check("ACP-INIT-007", !info.name.is_empty() && !info.version.is_empty(), || {
                "agentInfo has an empty name or version".to_owned()
            });
        }
        None => d.ctx.ledger.fail("ACP-INIT-007", "the initialize result has no agentInfo"),
    }
    if let Some(method) = &options.auth_method {
        d.ctx.step("main", "authenticate");
        match d.call("authenticate", &json!({"methodId": method})).await? {
            Some(Ok(_)) => {}
            Some(Err(error)) => {
                d.ctx.notes.push(format!("authenticate {method:?} was refused with {}", describe(&error)))
            }
            None => d.ctx.notes.push(format!("authenticate {method:?} got no answer within {timeout:?}")),
        }
    }

    d.ctx.step("main", "session/new");
    let answer = step!(d, "ACP-SESSION-001", d.call("session/new", &new_session).await);
    let Some(session) = judge_session(d.ctx, "ACP-SESSION-001", answer, timeout) else {
        d.ctx.skip_all(MAIN_PART, "no session could be created");
        return Ok(());
    };
    d.sessions.insert(session.clone());

    d.ctx.step("main", "session/new with _meta");
    let with_meta = json!({
        "cwd": cwd,
        "mcpServers": [],
        "_meta": {"agentproto.check/probe": {"nested": [1, {"deep": true}], "note": "unknown to every agent"}},
    });
    match step!(d, "ACP-EXT-003", d.call("session/new", &with_meta).await) {
        None => {
            d.ctx.ledger.fail("ACP-EXT-003", format!("session/new with _meta: no answer within {timeout:?}"));
            d.ctx.ledger.skip("ACP-SESSION-002", "the second session/new got no answer");
        }
        Some(Err(error)) => {
            d.ctx.ledger.fail("ACP-EXT-003", format!("session/new with _meta was refused with {}", describe(&error)));
            d.ctx.ledger.skip("ACP-SESSION-002", "the second session/new was refused");
        }
        Some(Ok(raw)) => {
            d.ctx.ledger.pass("ACP-EXT-003");
            if let Some(second) = judge_session(d.ctx, "ACP-SESSION-001", Some(Ok(raw)), timeout) {
                d.sessions.insert(second.clone());
                d.ctx.ledger.check("ACP-SESSION-002", second != session, || {
                    format!("both session/new calls returned {session:?}")
                });
            }
        }
    }

    d.ctx.step("main", "prompt turn");
    prompt_turn(d, &session, "ACP-PROMPT-001", &options.prompt).await?;

    d.ctx.step("main", "session/cancel during a turn");
    if cancel_turn(d, &session).await? {
        d.ctx.step("main", "prompt after the cancelled turn");
        prompt_turn(d, &session, "ACP-CANCEL-002", &options.prompt).await?;
    } else {
        d.ctx.ledger.skip("ACP-CANCEL-002", "no turn was cancelled");
    }

    d.ctx.step("main", "$/cancel_request during a turn");
    cancel_request_turn(d, &session).await?;

    d.ctx.step("main", "$/cancel_request for an id not in flight");
    settle_strays(d, "main");
    step!(d, "ACP-CANCEL-004", d.notify("$/cancel_request", &json!({"requestId": 987_654_321})).await);
    step!(d, "ACP-CANCEL-004", barrier(d).await);
    judge_silence(d, "ACP-CANCEL-004", "$/cancel_request for an id not in flight");

    d.ctx.step("main", "prompt on an unknown session");
    let stranger = prompt_params("agentproto-check-no-such-session", &options.prompt);
    match step!(d, "ACP-SESSION-003", d.call("session/prompt", &stranger).await) {
        None => {
            d.ctx.ledger.fail("ACP-SESSION-003", format!("no answer within {timeout:?}"));
            d.ctx.ledger.skip("ACP-SESSION-004", "the prompt was not refused");
        }
        Some(Ok(result)) => {
            d.ctx.ledger.fail(
                "ACP-SESSION-003",
                format!("answered with a result: {}", crate::wire::excerpt(result.get().as_bytes())),
            );
            d.ctx.ledger.skip("ACP-SESSION-004", "the prompt was not refused");
        }
        Some(Err(error)) => {
            d.ctx.ledger.pass("ACP-SESSION-003");
            d.ctx.ledger.check("ACP-SESSION-004", error.code == ErrorCode::RESOURCE_NOT_FOUND, || {
                format!("refused with {} instead of -32002", describe(&error))
            });
        }
    }

    d.ctx.step("main", "unknown method");
    let answer = step!(d, "ACP-RPC-001", d.call("agentproto.check/no_such_method", &json!({})).await);
    judge_error_code(
        d.ctx,
        "ACP-RPC-001",
        "agentproto.check/no_such_method",
        answer,
        ErrorCode::METHOD_NOT_FOUND,
        timeout,
    );

    d.ctx.step("main", "unknown extension request");
    let answer = step!(d, "ACP-EXT-001", d.call("_agentproto.check/unknown_request", &json!({"x": 1})).await);
    judge_error_code(
        d.ctx,
        "ACP-EXT-001",
        "_agentproto.check/unknown_request",
        answer,
        ErrorCode::METHOD_NOT_FOUND,
        timeout,
    );

    d.ctx.step("main", "unknown extension notification");
    settle_strays(d, "main");
    let notice = json!({"detail": "agentproto check: this notification should be ignored"});
    step!(d, "ACP-EXT-002", d.notify("_agentproto.check/unknown_notification", &notice).await);
    step!(d, "ACP-EXT-002", barrier(d).await);
    judge_silence(d, "ACP-EXT-002", "an extension notification");

    d.ctx.step("main", "final prompt");
    prompt_turn(d, &session, "ACP-ALIVE-001", &options.prompt).await?;
    if !d.ctx.ledger.failed("ACP-CAP-001") {
        d.ctx.ledger.pass("ACP-CAP-001");
    }
    Ok(())
}
