//! Prompt turns and the checks on the updates around them.

use agentproto_acp::v1::StopReason;

use super::driver::{Driver, Lost};
use super::judge::judge_prompt;
use super::{barrier, prompt_params};

/// One prompt turn judged under `id`, then the late-update check (ACP-PROMPT-002/003).
pub(super) async fn prompt_turn(
    d: &mut Driver<'_, '_>,
    session: &str,
    id: &'static str,
    text: &str,
) -> Result<Option<StopReason>, Lost> {
    let mark = d.updates.len();
    let request = step!(d, id, d.request("session/prompt", &prompt_params(session, text)).await);
    let answer = step!(d, id, d.wait(&request).await);
    let timeout = d.timeout();
    let stop = judge_prompt(d.ctx, id, answer, timeout);
    judge_turn_updates(d, session, mark);
    if stop.is_some() {
        late_updates(d, session).await?;
    }
    Ok(stop)
}

/// ACP-PROMPT-002: the updates since `mark` (a turn on `session`) name
/// sessions the agent created. Another live session is fine: agents send
/// updates such as `available_commands_update` for any session at any time.
pub(super) fn judge_turn_updates(d: &mut Driver<'_, '_>, session: &str, mark: usize) {
    let strangers: Vec<String> = d.updates[mark..]
        .iter()
        .filter(|u| u.session.as_ref().is_none_or(|s| !d.sessions.contains(s)))
        .map(|u| u.session.clone().unwrap_or_else(|| "no session".to_owned()))
        .collect();
    match strangers.first() {
        None => d.ctx.ledger.pass("ACP-PROMPT-002"),
        Some(other) => d.ctx.ledger.fail(
            "ACP-PROMPT-002",
            format!(
                "{} update(s) during a turn on {session:?} named a session the agent never created ({other:?})",
                strangers.len()
            ),
        ),
    }
}

/// ACP-PROMPT-003: nothing for `session` between the prompt's answer and a barrier.
pub(super) async fn late_updates(d: &mut Driver<'_, '_>, session: &str) -> Result<(), Lost> {
    let mark = d.updates.len();
    step!(d, "ACP-PROMPT-003", barrier(d).await);
    let late = d.updates[mark..].iter().filter(|u| u.session.as_deref() == Some(session)).count();
    d.ctx.ledger.check("ACP-PROMPT-003", late == 0, || {
        format!("{late} session/update notification(s) for {session:?} arrived after the prompt's answer")
    });
    Ok(())
}
