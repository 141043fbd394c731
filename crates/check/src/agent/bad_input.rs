//! The bad-input part: malformed lines, wrong types, a batch, a large message,
//! then a prompt that must still work.

use std::time::Duration;

use agentproto_acp::v1::AgentResponse;
use agentproto_jsonrpc::{ErrorCode, RequestId};
use serde_json::json;

use super::driver::{Answer, Driver, Lost};
use super::judge::{judge_error_code, judge_prompt};
use super::{
    barrier, decode, describe, initialize_params, initialize_result, prompt_params, settle_strays, start, Ctx,
    BAD_INPUT_PART,
};

/// The probes of the bad-input part, in order.
#[derive(Debug, Clone, Copy)]
enum Probe {
    NotJson,
    WrongTypes,
    JsonrpcVersion,
    Batch,
    Large,
}

impl Probe {
    const ALL: [Probe; 5] = [Probe::NotJson, Probe::WrongTypes, Probe::JsonrpcVersion, Probe::Batch, Probe::Large];

    fn label(self) -> &'static str {
        match self {
            Probe::NotJson => "a line that is not JSON",
            Probe::WrongTypes => "params of the wrong types",
            Probe::JsonrpcVersion => "jsonrpc \"1.0\"",
            Probe::Batch => "a JSON array (batch)",
            Probe::Large => "a large request",
        }
    }
}

/// The bad-input part: every probe on one connection, then a prompt that must
/// still work (ACP-RPC-007). A probe that ends the connection fails ACP-RPC-007,
/// and the remaining probes go on with a fresh agent.
pub(super) async fn bad_input_part(ctx: &mut Ctx<'_>) {
    const PART: &str = "bad input";
    let mut probes = Probe::ALL.iter().copied().peekable();
    loop {
        let Some(mut d) = start(ctx, PART, BAD_INPUT_PART) else { return };
        d.ctx.step(PART, "initialize and session/new");
        // Most probes are about the envelope and need no session: an agent that cannot
        // create one (no credentials, say) is still probed with them.
        let session = match ready(&mut d).await {
            Ok(Ready::Session(session)) => Some(session),
            Ok(Ready::NoSession) => None,
            Ok(Ready::NotInitialized) | Err(_) => {
                d.ctx.skip_all(BAD_INPUT_PART, "initialize failed in this run");
                d.close(PART).await;
                return;
            }
        };
        let mut lost = false;
        for probe in probes.by_ref() {
            d.ctx.step(PART, probe.label());
            if let Err(Lost(why)) = run_probe(&mut d, probe, session.as_deref()).await {
                d.ctx.ledger.fail("ACP-RPC-007", format!("{}: the connection ended ({why})", probe.label()));
                lost = true;
                break;
            }
        }
        if session.is_none() {
            d.ctx.skip_all(&["ACP-RPC-003", "ACP-RPC-007"], "no session could be created in this run");
        } else if let (false, Some(session)) = (lost, session.as_deref()) {
            d.ctx.step(PART, "a prompt after all that");
            let options = d.ctx.options;
            let timeout = d.timeout();
            match d.call("session/prompt", &prompt_params(session, &options.prompt)).await {
                Ok(answer) => {
                    judge_prompt(d.ctx, "ACP-RPC-007", answer, timeout);
                }
                Err(Lost(why)) => d.ctx.ledger.fail("ACP-RPC-007", format!("the connection ended: {why}")),
            }
        }
        settle_strays(&mut d, PART);
        d.close(PART).await;
        if !lost || probes.peek().is_none() {
            return;
        }
    }
}

/// How far a fresh agent got before the probes.
enum Ready {
    NotInitialized,
    NoSession,
    Session(String),
}

/// `initialize` and `session/new` on a fresh agent.
async fn ready(d: &mut Driver<'_, '_>) -> Result<Ready, Lost> {
    let cwd = d.ctx.cwd.clone();
    let initialized = match d.call("initialize", &initialize_params(json!(1), d.ctx.options.client_fs)).await? {
        Some(Ok(raw)) => initialize_result(&raw).is_ok(),
        _ => false,
    };
    if !initialized {
        return Ok(Ready::NotInitialized);
    }
    Ok(match d.call("session/new", &json!({"cwd": cwd, "mcpServers": []})).await? {
        Some(Ok(raw)) => match decode("session/new", &raw) {
            Ok((AgentResponse::SessionNew(response), _)) => Ready::Session(response.session_id.0),
            _ => Ready::NoSession,
        },
        _ => Ready::NoSession,
    })
}

/// After a probe and a barrier: the probe's own answer (`id`), or else a
/// stray with id `null`, waiting up to the reply grace for one.
async fn probe_reply(d: &mut Driver<'_, '_>, id: Option<&RequestId>) -> Result<Option<(RequestId, Answer)>, Lost> {
    let grace = d.ctx.options.reply_grace;
    if let Some(id) = id {
        if d.answered(id) {
            return Ok(d.wait_for(id, Duration::ZERO).await?.map(|answer| (id.clone(), answer)));
        }
    }
    if d.strays.is_empty() {
        d.wait_stray(grace).await?;
    }
    if let Some(id) = id {
        if d.answered(id) {
            return Ok(d.wait_for(id, Duration::ZERO).await?.map(|answer| (id.clone(), answer)));
        }
    }
    let mut strays = d.take_strays().into_iter();
    let first = strays.next();
    for stray in strays {
        d.ctx.stray("bad input", stray);
    }
    Ok(first.map(|stray| (stray.id, stray.answer)))
}

/// Runs one probe; `session` is `None` when none could be created (the probes that
/// need one are then left unjudged by the caller).
async fn run_probe(d: &mut Driver<'_, '_>, probe: Probe, session: Option<&str>) -> Result<(), Lost> {
    const PART: &str = "bad input";
    let timeout = d.timeout();
    let options = d.ctx.options;
    let cwd = d.ctx.cwd.clone();
    match probe {
        Probe::NotJson => {
            settle_strays(d, PART);
            step!(d, "ACP-RPC-002", d.send_raw(b"agentproto check: this line is not JSON {").await);
            step!(d, "ACP-RPC-002", barrier(d).await);
            match step!(d, "ACP-RPC-002", probe_reply(d, None).await) {
                None => d.ctx.ledger.fail("ACP-RPC-002", "no answer"),
                Some((id, Ok(_))) => d.ctx.ledger.fail("ACP-RPC-002", format!("answered with a result (id {id})")),
                Some((id, Err(error))) => {
                    d.ctx.ledger.check("ACP-RPC-002", id.is_null() && error.code == ErrorCode::PARSE_ERROR, || {
                        format!("answered {} with id {id}", describe(&error))
                    })
                }
            }
        }
        Probe::WrongTypes => {
            let Some(session) = session else { return Ok(()) };
            let answer = step!(d, "ACP-RPC-003", d.call("session/new", &json!({"cwd": 42, "mcpServers": []})).await);
            judge_error_code(
                d.ctx,
                "ACP-RPC-003",
                "session/new with cwd 42",
                answer,
                ErrorCode::INVALID_PARAMS,
                timeout,
            );
            let wrong = json!({"sessionId": session, "prompt": "not an array"});
            let answer = step!(d, "ACP-RPC-003", d.call("session/prompt", &wrong).await);
            judge_error_code(
                d.ctx,
                "ACP-RPC-003",
                "session/prompt with a string prompt",
                answer,
                ErrorCode::INVALID_PARAMS,
                timeout,
            );
            let missing = json!({"sessionId": session});
            let answer = step!(d, "ACP-RPC-003", d.call("session/prompt", &missing).await);
            judge_error_code(
                d.ctx,
                "ACP-RPC-003",
                "session/prompt without its required prompt",
                answer,
                ErrorCode::INVALID_PARAMS,
                timeout,
            );
        }
        Probe::JsonrpcVersion => {
            let id = d.allocate();
            d.expect(id.clone(), "session/new");
            let line = json!({"jsonrpc": "1.0", "id": id.as_number(), "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}});
            step!(d, "ACP-RPC-004", d.send_raw(line.to_string().as_bytes()).await);
            step!(d, "ACP-RPC-004", barrier(d).await);
            match step!(d, "ACP-RPC-004", probe_reply(d, Some(&id)).await) {
                None => d.ctx.ledger.fail("ACP-RPC-004", "no answer"),
                Some((_, Ok(_))) => d.ctx.ledger.fail("ACP-RPC-004", "processed it: answered with a result"),
                Some((_, Err(error))) => {
                    d.ctx.ledger.check("ACP-RPC-004", error.code == ErrorCode::INVALID_REQUEST, || {
                        format!("answered {} instead of -32600", describe(&error))
                    })
                }
            }
        }
        Probe::Batch => {
            let id = d.allocate();
            d.expect(id.clone(), "session/new");
            let member = json!({"jsonrpc": "2.0", "id": id.as_number(), "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}});
            step!(d, "ACP-RPC-005", d.send_raw(json!([member]).to_string().as_bytes()).await);
            step!(d, "ACP-RPC-005", barrier(d).await);
            match step!(d, "ACP-RPC-005", probe_reply(d, Some(&id)).await) {
                None => d.ctx.ledger.fail("ACP-RPC-005", "no answer"),
                Some((answered, result)) if answered == id => d.ctx.ledger.fail(
                    "ACP-RPC-005",
                    format!(
                        "processed the batch's member (answered id {id} with {})",
                        match result {
                            Ok(_) => "a result".to_owned(),
                            Err(error) => describe(&error),
                        }
                    ),
                ),
                Some((_, Ok(_))) => d.ctx.ledger.fail("ACP-RPC-005", "answered with a result"),
                Some((_, Err(_))) => d.ctx.ledger.pass("ACP-RPC-005"),
            }
        }
        Probe::Large => {
            let size = options.large_message_size;
            let large = json!({"data": "x".repeat(size)});
            let answer = step!(d, "ACP-RPC-006", d.call("_agentproto.check/large", &large).await);
            d.ctx.ledger.check("ACP-RPC-006", answer.is_some(), || {
                format!("a request of {size} bytes got no answer within {timeout:?}")
            });
        }
    }
    Ok(())
}
