//! Turns cancelled with `session/cancel` and with `$/cancel_request`.

use agentproto_acp::v1::StopReason;
use serde_json::json;

use super::driver::{Driver, Lost, Started};
use super::judge::judge_prompt;
use super::prompt::{judge_turn_updates, late_updates};
use super::{describe, prompt_params, prompt_result};

/// ACP-CANCEL-001: a turn cancelled with `session/cancel`. Returns whether a
/// cancel was sent (so the follow-up prompt means something).
pub(super) async fn cancel_turn(d: &mut Driver<'_, '_>, session: &str) -> Result<bool, Lost> {
    const ID: &str = "ACP-CANCEL-001";
    let timeout = d.timeout();
    let text = d.ctx.options.cancel_prompt.clone();
    let mark = d.updates.len();
    d.hold_permissions = true;
    let request = step!(d, ID, d.request("session/prompt", &prompt_params(session, &text)).await);
    let started = step!(d, ID, d.await_turn(&request, session, mark).await);
    if started == Started::Answered {
        step!(d, ID, d.release_held().await);
        let answer = step!(d, ID, d.wait(&request).await);
        judge_prompt(d.ctx, "ACP-PROMPT-001", answer, timeout);
        d.ctx.ledger.skip(
            ID,
            "the turn ended before session/cancel could be sent; pass a --cancel-prompt that keeps the agent busy longer",
        );
        return Ok(false);
    }
    if started == Started::Silent {
        d.ctx.notes.push(format!("the cancel turn sent no update within {timeout:?}; session/cancel was sent anyway"));
    }
    step!(d, ID, d.notify("session/cancel", &json!({"sessionId": session})).await);
    step!(d, ID, d.release_held().await);
    let answer = step!(d, ID, d.wait(&request).await);
    match answer {
        None => d.ctx.ledger.fail(ID, format!("no answer within {timeout:?} after session/cancel")),
        Some(Err(error)) => d.ctx.ledger.fail(
            ID,
            format!("the cancelled turn was answered with {}, not with stopReason \"cancelled\"", describe(&error)),
        ),
        Some(Ok(raw)) => match prompt_result(&raw) {
            Ok((response, _)) => d.ctx.ledger.check(ID, response.stop_reason == StopReason::Cancelled, || {
                format!(
                    "the turn ended with stopReason {:?} after session/cancel (if it finished before the cancel \
                     arrived, a longer --cancel-prompt avoids the race)",
                    response.stop_reason.as_str()
                )
            }),
            Err(text) => d.ctx.ledger.fail(ID, text),
        },
    }
    judge_turn_updates(d, session, mark);
    late_updates(d, session).await?;
    Ok(true)
}

/// ACP-CANCEL-003: a prompt cancelled with `$/cancel_request`.
pub(super) async fn cancel_request_turn(d: &mut Driver<'_, '_>, session: &str) -> Result<(), Lost> {
    const ID: &str = "ACP-CANCEL-003";
    let timeout = d.timeout();
    let grace = d.ctx.options.reply_grace;
    let text = d.ctx.options.cancel_prompt.clone();
    let mark = d.updates.len();
    d.hold_permissions = true;
    let request = step!(d, ID, d.request("session/prompt", &prompt_params(session, &text)).await);
    let started = step!(d, ID, d.await_turn(&request, session, mark).await);
    if started == Started::Answered {
        step!(d, ID, d.release_held().await);
        let answer = step!(d, ID, d.wait(&request).await);
        judge_prompt(d.ctx, "ACP-PROMPT-001", answer, timeout);
        d.ctx.ledger.skip(
            ID,
            "the turn ended before $/cancel_request could be sent; pass a --cancel-prompt that keeps the agent busy longer",
        );
        return Ok(());
    }
    let number = request.as_number().unwrap_or_default();
    step!(d, ID, d.notify("$/cancel_request", &json!({"requestId": number})).await);
    match step!(d, ID, d.wait_for(&request, grace).await) {
        Some(Err(_)) => d.ctx.ledger.pass(ID),
        Some(Ok(raw)) => match prompt_result(&raw) {
            Ok(_) => d.ctx.ledger.pass(ID),
            Err(text) => d.ctx.ledger.fail(ID, text),
        },
        None => {
            d.ctx.ledger.fail(ID, format!("the prompt was not answered within {grace:?} after $/cancel_request"));
            step!(d, ID, d.notify("session/cancel", &json!({"sessionId": session})).await);
            step!(d, ID, d.release_held().await);
            if step!(d, ID, d.wait(&request).await).is_none() {
                d.ctx.notes.push(format!(
                    "after $/cancel_request and then session/cancel the prompt was still unanswered after {timeout:?}"
                ));
            }
        }
    }
    step!(d, ID, d.release_held().await);
    judge_turn_updates(d, session, mark);
    Ok(())
}
