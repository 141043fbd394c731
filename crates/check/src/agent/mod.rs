//! `check agent`: the conformance script run against an agent command.
//!
//! The script is split into parts, each on a fresh agent process so that one
//! crash cannot hide the rest: the main run (requests before `initialize`,
//! `initialize`, sessions, prompt turns, `session/cancel`, `$/cancel_request`,
//! unknown sessions and methods, extensions, a final prompt), one process per
//! `initialize` variant, and a "bad input" run (malformed lines, wrong types,
//! a batch, a large message, then a prompt that must still work).

mod driver;

use std::time::Duration;

use agentproto_acp::v1::{AgentResponse, InitializeResponse, PromptResponse, StopReason};
use agentproto_acp::DispatchError;
use agentproto_jsonrpc::{ErrorCode, ErrorObject, RequestId};
use serde_json::{json, Value};

use self::driver::{warnings_text, Answer, Driver, Lost, Started};
use crate::report::{Ledger, Progress, Report, Subject};
use crate::requirement::{Requirement, AGENT};
use crate::{AgentCheck, TempDir};

/// What all parts of the script share.
pub(crate) struct Ctx<'o> {
    pub(crate) options: &'o AgentCheck,
    pub(crate) ledger: Ledger,
    progress: &'o dyn Progress,
    notes: Vec<String>,
    peer: Option<(String, String)>,
    version: Option<u16>,
    stderr: Vec<String>,
    cwd: String,
}

impl Ctx<'_> {
    fn step(&self, part: &str, text: &str) {
        self.progress.step(&format!("{part}: {text}"));
    }

    fn selected(&self, ids: &[&str]) -> bool {
        ids.iter().any(|id| self.options.selects(id))
    }

    /// Marks every requirement in `ids` not yet judged as not exercised.
    fn skip_all(&mut self, ids: &[&str], reason: &str) {
        for id in ids {
            self.ledger.skip(id, reason);
        }
    }
}

/// Requirements judged in every part.
const EVERY_PART: &[&str] = &["ACP-WIRE-001", "ACP-WIRE-002", "ACP-WIRE-003", "ACP-EXIT-001"];

const MAIN_PART: &[&str] = &[
    "ACP-INIT-001",
    "ACP-INIT-002",
    "ACP-INIT-007",
    "ACP-INIT-008",
    "ACP-SESSION-001",
    "ACP-SESSION-002",
    "ACP-SESSION-003",
    "ACP-SESSION-004",
    "ACP-PROMPT-001",
    "ACP-PROMPT-002",
    "ACP-PROMPT-003",
    "ACP-CANCEL-001",
    "ACP-CANCEL-002",
    "ACP-CANCEL-003",
    "ACP-CANCEL-004",
    "ACP-RPC-001",
    "ACP-EXT-001",
    "ACP-EXT-002",
    "ACP-EXT-003",
    "ACP-CAP-001",
    "ACP-ALIVE-001",
];

const BAD_INPUT_PART: &[&str] =
    &["ACP-RPC-002", "ACP-RPC-003", "ACP-RPC-004", "ACP-RPC-005", "ACP-RPC-006", "ACP-RPC-007"];

fn describe(error: &ErrorObject) -> String {
    format!("error {} {:?}", error.code.0, error.message)
}

fn initialize_params(version: Value, fs: bool) -> Value {
    json!({
        "protocolVersion": version,
        "clientCapabilities": {"fs": {"readTextFile": fs, "writeTextFile": fs}, "terminal": false},
        "clientInfo": {"name": "agentproto-check", "version": env!("CARGO_PKG_VERSION")},
    })
}

fn prompt_params(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

/// Decodes the result of `method`; `Err` is the failure text.
fn decode(method: &str, raw: &serde_json::value::RawValue) -> Result<(AgentResponse, Option<String>), String> {
    match AgentResponse::decode(method, Some(raw)) {
        Ok(decoded) => {
            let salvaged = warnings_text(&format!("{method} result"), &decoded.warnings);
            Ok((decoded.value, salvaged))
        }
        Err(DispatchError::Invalid(e)) => Err(format!("invalid {method} result: {e}")),
        Err(e) => Err(format!("{method} result: {e}")),
    }
}

fn initialize_result(raw: &serde_json::value::RawValue) -> Result<(InitializeResponse, Option<String>), String> {
    match decode("initialize", raw)? {
        (AgentResponse::Initialize(response), salvaged) => Ok((response, salvaged)),
        _ => Err("initialize result decoded as another method".to_owned()),
    }
}

fn prompt_result(raw: &serde_json::value::RawValue) -> Result<(PromptResponse, Option<String>), String> {
    match decode("session/prompt", raw)? {
        (AgentResponse::SessionPrompt(response), salvaged) => Ok((response, salvaged)),
        _ => Err("prompt result decoded as another method".to_owned()),
    }
}

/// Judges a prompt answer against `id`: a valid PromptResponse. Returns the
/// stop reason when there was one.
fn judge_prompt(ctx: &mut Ctx<'_>, id: &str, answer: Option<Answer>, timeout: Duration) -> Option<StopReason> {
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

/// Runs `check agent`.
pub(crate) async fn run(options: &AgentCheck, progress: &dyn Progress) -> Report {
    let cwd = TempDir::new("agent");
    let mut ctx = Ctx {
        options,
        ledger: Ledger::new(AGENT),
        progress,
        notes: Vec::new(),
        peer: None,
        version: None,
        stderr: Vec::new(),
        cwd: cwd.path_string(),
    };
    if ctx.selected(MAIN_PART) || ctx.selected(EVERY_PART) {
        main_part(&mut ctx).await;
    }
    type Part = (&'static str, &'static str, Value, fn(u16) -> bool, &'static str);
    let versions: [Part; 2] = [
        ("ACP-INIT-003", "version 65535", json!(65535), |v| v != 65535 && v >= 1, "a version it supports"),
        ("ACP-INIT-004", "version 0", json!(0), |v| v >= 1, "version 1 or later"),
    ];
    for (id, label, version, ok, wanted) in versions {
        if ctx.selected(&[id]) {
            version_part(&mut ctx, id, label, initialize_params(version, options.client_fs), ok, wanted).await;
        }
    }
    if ctx.selected(&["ACP-INIT-005"]) {
        version_part(&mut ctx, "ACP-INIT-005", "minimal initialize", json!({"protocolVersion": 1}), |_| true, "").await;
    }
    if ctx.selected(&["ACP-INIT-006"]) {
        bad_version_part(&mut ctx).await;
    }
    if ctx.selected(BAD_INPUT_PART) {
        bad_input_part(&mut ctx).await;
    }
    let Ctx { ledger, notes, peer, version, stderr, .. } = ctx;
    Report {
        subject: Subject::Agent,
        command: options.command.clone(),
        peer,
        protocol_version: version,
        results: ledger.finish(|r: &Requirement| options.selects(r.id)),
        notes,
        stderr_tail: stderr,
    }
}

/// Starts one part's agent; `None` (with every id of the part marked) if it
/// cannot be started.
fn start<'a, 'o>(ctx: &'a mut Ctx<'o>, part: &str, ids: &[&str]) -> Option<Driver<'a, 'o>> {
    ctx.step(part, "starting the agent");
    match driver::spawn(ctx.options) {
        Ok(started) => Some(Driver::start(ctx, started)),
        Err(reason) => {
            for id in ids {
                ctx.ledger.fail(id, reason.clone());
            }
            None
        }
    }
}

/// Fails `id` with the way the connection ended and returns the loss.
macro_rules! step {
    ($d:expr, $id:expr, $e:expr) => {
        match $e {
            Ok(value) => value,
            Err(lost) => {
                $d.ctx.ledger.fail($id, format!("the connection ended: {}", lost.0));
                return Err(lost);
            }
        }
    };
}

impl Ctx<'_> {
    /// Judges a response that answered nothing the checker sent.
    fn stray(&mut self, part: &str, stray: driver::Stray) {
        let what = match &stray.answer {
            Ok(result) => format!("result {}", crate::wire::excerpt(result.get().as_bytes())),
            Err(error) => describe(error),
        };
        if stray.id.is_null() {
            self.notes.push(format!("{part}: a response with id null ({what}) answered nothing the checker sent"));
        } else {
            self.ledger.fail(
                "ACP-WIRE-003",
                format!("{part}: a response with id {} ({what}) answers no request the checker sent", stray.id),
            );
        }
    }
}

/// Moves the strays collected so far into the report.
fn settle_strays(d: &mut Driver<'_, '_>, part: &str) {
    for stray in d.take_strays() {
        d.ctx.stray(part, stray);
    }
}

/// Judges "no response" after a notification probe: the strays that arrived
/// before the barrier's answer fail `id`.
fn judge_silence(d: &mut Driver<'_, '_>, id: &str, what: &str) {
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

/// Sends a barrier request; a barrier that gets no answer ends the part.
async fn barrier(d: &mut Driver<'_, '_>) -> Result<(), Lost> {
    if d.barrier().await? {
        Ok(())
    } else {
        Err(Lost(format!("the agent stopped answering (no answer to a ping within {:?})", d.timeout())))
    }
}

/// One prompt turn judged under `id`, then the late-update check (ACP-PROMPT-002/003).
async fn prompt_turn(
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
fn judge_turn_updates(d: &mut Driver<'_, '_>, session: &str, mark: usize) {
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
async fn late_updates(d: &mut Driver<'_, '_>, session: &str) -> Result<(), Lost> {
    let mark = d.updates.len();
    step!(d, "ACP-PROMPT-003", barrier(d).await);
    let late = d.updates[mark..].iter().filter(|u| u.session.as_deref() == Some(session)).count();
    d.ctx.ledger.check("ACP-PROMPT-003", late == 0, || {
        format!("{late} session/update notification(s) for {session:?} arrived after the prompt's answer")
    });
    Ok(())
}

/// Judges a `session/new` answer under `id`; the new session id if there is one.
fn judge_session(ctx: &mut Ctx<'_>, id: &str, answer: Option<Answer>, timeout: Duration) -> Option<String> {
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
fn judge_error_code(ctx: &mut Ctx<'_>, id: &str, what: &str, answer: Option<Answer>, code: ErrorCode, wait: Duration) {
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

async fn main_part(ctx: &mut Ctx<'_>) {
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
        Some(Ok(raw)) => initialize_result(&raw),
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

/// ACP-CANCEL-001: a turn cancelled with `session/cancel`. Returns whether a
/// cancel was sent (so the follow-up prompt means something).
async fn cancel_turn(d: &mut Driver<'_, '_>, session: &str) -> Result<bool, Lost> {
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
async fn cancel_request_turn(d: &mut Driver<'_, '_>, session: &str) -> Result<(), Lost> {
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

/// One `initialize` variant on a fresh agent, judged under `id`.
async fn version_part(ctx: &mut Ctx<'_>, id: &str, label: &str, params: Value, ok: fn(u16) -> bool, wanted: &str) {
    let Some(mut d) = start(ctx, label, &[id]) else { return };
    d.ctx.step(label, "initialize");
    let timeout = d.timeout();
    match d.call("initialize", &params).await {
        Err(lost) => d.ctx.ledger.fail(id, format!("the connection ended: {}", lost.0)),
        Ok(None) => d.ctx.ledger.fail(id, format!("no answer within {timeout:?}")),
        Ok(Some(Err(error))) => {
            let should = if wanted.is_empty() { String::new() } else { format!("; it should answer {wanted}") };
            d.ctx.ledger.fail(id, format!("initialize was refused with {}{should}", describe(&error)));
        }
        Ok(Some(Ok(raw))) => match initialize_result(&raw) {
            Ok((response, _)) => {
                let version = response.protocol_version;
                d.ctx
                    .ledger
                    .check(id, ok(version), || format!("answered protocolVersion {version}; expected {wanted}"));
            }
            Err(text) => d.ctx.ledger.fail(id, text),
        },
    }
    settle_strays(&mut d, label);
    d.close(label).await;
}

/// ACP-INIT-006: a protocolVersion that is not an integer, as clients sent
/// before version numbers were integers. Refusing it (-32602) and treating it
/// as an old version (answering a supported one) are both fine.
async fn bad_version_part(ctx: &mut Ctx<'_>) {
    const ID: &str = "ACP-INIT-006";
    let label = "protocolVersion \"2024-11-05\"";
    let Some(mut d) = start(ctx, label, &[ID]) else { return };
    d.ctx.step(label, "initialize");
    let timeout = d.timeout();
    match d.call("initialize", &initialize_params(json!("2024-11-05"), d.ctx.options.client_fs)).await {
        Err(lost) => d.ctx.ledger.fail(ID, format!("the connection ended: {}", lost.0)),
        Ok(None) => d.ctx.ledger.fail(ID, format!("no answer within {timeout:?}")),
        Ok(Some(Err(error))) => d.ctx.ledger.check(ID, error.code == ErrorCode::INVALID_PARAMS, || {
            format!("refused with {} instead of -32602", describe(&error))
        }),
        Ok(Some(Ok(raw))) => match initialize_result(&raw) {
            Ok((response, _)) => {
                let version = response.protocol_version;
                d.ctx.ledger.check(ID, version >= 1, || format!("answered protocolVersion {version}"));
            }
            Err(text) => d.ctx.ledger.fail(ID, text),
        },
    }
    settle_strays(&mut d, label);
    d.close(label).await;
}

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
async fn bad_input_part(ctx: &mut Ctx<'_>) {
    const PART: &str = "bad input";
    let mut probes = Probe::ALL.iter().copied().peekable();
    loop {
        let Some(mut d) = start(ctx, PART, BAD_INPUT_PART) else { return };
        d.ctx.step(PART, "initialize and session/new");
        let session = match ready(&mut d).await {
            Ok(Some(session)) => session,
            Ok(None) | Err(_) => {
                d.ctx.skip_all(BAD_INPUT_PART, "initialize or session/new failed in this run");
                d.close(PART).await;
                return;
            }
        };
        let mut lost = false;
        for probe in probes.by_ref() {
            d.ctx.step(PART, probe.label());
            if let Err(Lost(why)) = run_probe(&mut d, probe, &session).await {
                d.ctx.ledger.fail("ACP-RPC-007", format!("{}: the connection ended ({why})", probe.label()));
                lost = true;
                break;
            }
        }
        if !lost {
            d.ctx.step(PART, "a prompt after all that");
            let options = d.ctx.options;
            let timeout = d.timeout();
            match d.call("session/prompt", &prompt_params(&session, &options.prompt)).await {
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

/// `initialize` and `session/new` on a fresh agent; the session if both worked.
async fn ready(d: &mut Driver<'_, '_>) -> Result<Option<String>, Lost> {
    let cwd = d.ctx.cwd.clone();
    let initialized = match d.call("initialize", &initialize_params(json!(1), d.ctx.options.client_fs)).await? {
        Some(Ok(raw)) => initialize_result(&raw).is_ok(),
        _ => false,
    };
    if !initialized {
        return Ok(None);
    }
    Ok(match d.call("session/new", &json!({"cwd": cwd, "mcpServers": []})).await? {
        Some(Ok(raw)) => match decode("session/new", &raw) {
            Ok((AgentResponse::SessionNew(response), _)) => Some(response.session_id.0),
            _ => None,
        },
        _ => None,
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

async fn run_probe(d: &mut Driver<'_, '_>, probe: Probe, session: &str) -> Result<(), Lost> {
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
