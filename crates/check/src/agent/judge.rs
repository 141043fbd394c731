//! Judging the agent's answers: prompt and `session/new` results, expected
//! error codes, and silence after a notification.

use std::time::Duration;

use agentproto_acp::v1::{AgentResponse, StopReason};
use agentproto_jsonrpc::ErrorCode;

use super::driver::{Answer, Driver};
use super::{decode, describe, prompt_result, Ctx};

/// Judges a prompt answer against `id`: a valid PromptResponse. Returns the
/// stop reason when there was one.
pub(super) fn judge_prompt(
    ctx: &mut Ctx<'_>,
    id: &str,
    answer: Option<Answer>,
    timeout: Duration,
) -> Option<StopReason> {
    match answer {
        None => {
            ctx.ledger.fail(id, format!("the prompt got no answer within {timeout:?}"));
            None
        }
        Some(Err(error)) => {
            ctx.ledger.fail(id, format!("the prompt was answered with {}", describe(&error)));
            None
        }
        Some(Ok(raw)) => match prompt_result(&raw) {
            Ok((response, salvaged)) => {
                match salvaged {
                    Some(text) => ctx.ledger.fail(id, text),
                    None => ctx.ledger.pass(id),
                }
                Some(response.stop_reason)
            }
            Err(text) => {
                ctx.ledger.fail(id, text);
                None
            }
        },
    }
}

/// Judges "no response" after a notification probe: the strays that arrived
/// before the barrier's answer fail `id`.
pub(super) fn judge_silence(d: &mut Driver<'_, '_>, id: &str, what: &str) {
    let strays = d.take_strays();
    if strays.is_empty() {
        d.ctx.ledger.pass(id);
    }
    for stray in strays {
        let answer = match &stray.answer {
            Ok(result) => format!("a result {}", crate::wire::excerpt(result.get().as_bytes())),
            Err(error) => describe(error),
        };
        d.ctx.ledger.fail(id, format!("answered {what} with {answer} (id {})", stray.id));
        if !stray.id.is_null() {
            d.ctx.ledger.fail("ACP-WIRE-003", format!("a response with id {} answers no request", stray.id));
        }
    }
}

/// Judges a `session/new` answer under `id`; the new session id if there is one.
pub(super) fn judge_session(ctx: &mut Ctx<'_>, id: &str, answer: Option<Answer>, timeout: Duration) -> Option<String> {
    match answer {
        None => ctx.ledger.fail(id, format!("session/new got no answer within {timeout:?}")),
        Some(Err(error)) => {
            let hint = if error.code == ErrorCode::AUTH_REQUIRED {
                " (the agent wants authentication: pass --auth-method)"
            } else {
                ""
            };
            ctx.ledger.fail(id, format!("session/new was refused with {}{hint}", describe(&error)));
        }
        Some(Ok(raw)) => match decode("session/new", &raw) {
            Ok((AgentResponse::SessionNew(response), salvaged)) => {
                let session = response.session_id.0;
                if session.is_empty() {
                    ctx.ledger.fail(id, "session/new returned an empty sessionId");
                } else if let Some(text) = salvaged {
                    ctx.ledger.fail(id, text);
                } else {
                    ctx.ledger.pass(id);
                }
                return Some(session);
            }
            Ok(_) => ctx.ledger.fail(id, "session/new result decoded as another method"),
            Err(text) => ctx.ledger.fail(id, text),
        },
    }
    None
}

/// Judges an answer that must be a JSON-RPC error with `code`.
pub(super) fn judge_error_code(
    ctx: &mut Ctx<'_>,
    id: &str,
    what: &str,
    answer: Option<Answer>,
    code: ErrorCode,
    wait: Duration,
) {
    match answer {
        None => ctx.ledger.fail(id, format!("{what}: no answer within {wait:?}")),
        Some(Ok(result)) => ctx.ledger.fail(
            id,
            format!(
                "{what}: answered with a result ({}) instead of error {}",
                crate::wire::excerpt(result.get().as_bytes()),
                code.0
            ),
        ),
        Some(Err(error)) => ctx
            .ledger
            .check(id, error.code == code, || format!("{what}: answered {} instead of {}", describe(&error), code.0)),
    }
}
