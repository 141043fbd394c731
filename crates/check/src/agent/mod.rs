//! `check agent`: the conformance script run against an agent command.
//!
//! The script is split into parts, each on a fresh agent process so that one
//! crash cannot hide the rest: the main run (requests before `initialize`,
//! `initialize`, sessions, prompt turns, `session/cancel`, `$/cancel_request`,
//! unknown sessions and methods, extensions, a final prompt), one process per
//! `initialize` variant, and a "bad input" run (malformed lines, wrong types,
//! a batch, a large message, then a prompt that must still work).

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

mod bad_input;
mod cancel;
mod driver;
mod init;
mod judge;
mod main_part;
mod prompt;

use agentproto_acp::v1::{AgentResponse, InitializeResponse, PromptResponse};
use agentproto_acp::DispatchError;
use agentproto_jsonrpc::ErrorObject;
use serde_json::{json, Value};

use self::bad_input::bad_input_part;
use self::driver::{warnings_text, Driver, Lost};
use self::init::{bad_version_part, version_part};
use self::main_part::main_part;
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

/// The note for variants of `method`'s result that v1 does not list (see
/// `common::warnings` for why they are no failure).
fn unknown_variants_note(method: &str, raw: &serde_json::value::RawValue) -> Option<String> {
    let decoded = AgentResponse::decode(method, Some(raw)).ok()?;
    crate::common::unknown_variants(&format!("{method} result"), &decoded.warnings)
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

/// Sends a barrier request; a barrier that gets no answer ends the part.
async fn barrier(d: &mut Driver<'_, '_>) -> Result<(), Lost> {
    if d.barrier().await? {
        Ok(())
    } else {
        Err(Lost(format!("the agent stopped answering (no answer to a ping within {:?})", d.timeout())))
    }
}
