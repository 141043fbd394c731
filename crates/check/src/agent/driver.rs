//! The scripted client of `check agent`: one agent process, driven one step at a
//! time over raw lines. It sends what a step asks for, waits (always bounded)
//! for a given response while it collects notifications, and answers the
//! agent's own requests the way a plain scripted client would.

use std::collections::HashMap;
use std::time::Duration;

use agentproto_acp::rules::RequestRules;
use agentproto_acp::v1::{AgentNotification, AgentRequest, PermissionOptionKind};
use agentproto_acp::DispatchError;
use agentproto_jsonrpc::message::{encode_notification, encode_request, encode_response};
use agentproto_jsonrpc::{EnvelopeErrorKind, ErrorCode, ErrorObject, Message, RequestId};
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::time::Instant;

use super::Ctx;
use crate::wire::{Exit, Inbox, Outbox, Program, Wire};
use crate::PermissionPolicy;

/// A response: the raw result or the error object.
pub(super) type Answer = Result<Box<RawValue>, ErrorObject>;

/// The connection ended; the text says how.
#[derive(Debug, Clone)]
pub(super) struct Lost(pub(super) String);

/// One `session/update` as seen: its session (best effort when invalid).
#[derive(Debug, Clone)]
pub(super) struct Update {
    pub(super) session: Option<String>,
}

/// A response that answered no pending request of ours.
#[derive(Debug)]
pub(super) struct Stray {
    pub(super) id: RequestId,
    pub(super) answer: Answer,
}

/// Where a turn stood when the checker looked for signs of it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Started {
    /// The agent answered the prompt already.
    Answered,
    /// An update for the session or a permission request arrived.
    Busy,
    /// Nothing arrived within the timeout (the turn is still pending).
    Silent,
}

/// A started agent: the process and its link.
pub(super) type Spawned = (Program, Outbox, Inbox);

/// Starts the agent command of `options`.
pub(super) fn spawn(options: &crate::AgentCheck) -> Result<Spawned, String> {
    Program::spawn_linked(&options.command, options.stderr, options.max_message_size, options.timeout)
        .map_err(|e| format!("cannot start `{}`: {e}", options.command.join(" ")))
}

pub(super) struct Driver<'a, 'o> {
    pub(super) ctx: &'a mut Ctx<'o>,
    outbox: Outbox,
    inbox: Inbox,
    program: Program,
    timeout: Duration,
    permission: PermissionPolicy,
    next_id: i64,
    pending: HashMap<RequestId, String>,
    answers: HashMap<RequestId, Answer>,
    pub(super) strays: Vec<Stray>,
    pub(super) updates: Vec<Update>,
    /// The sessions the agent created on this connection.
    pub(super) sessions: std::collections::HashSet<String>,
    /// While set, permission requests are held unanswered (a turn about to be cancelled).
    pub(super) hold_permissions: bool,
    pub(super) held: Vec<RequestId>,
    lost: Option<Lost>,
}

fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).expect("valid JSON")
}

use crate::common::unknown_variants;
pub(super) use crate::common::warnings as warnings_text;

impl<'a, 'o> Driver<'a, 'o> {
    /// Starts the agent for one part of the script.
    pub(super) fn start(ctx: &'a mut Ctx<'o>, started: Spawned) -> Driver<'a, 'o> {
        let (program, outbox, inbox) = started;
        let options = ctx.options;
        Driver {
            ctx,
            outbox,
            inbox,
            program,
            timeout: options.timeout,
            permission: options.permission,
            next_id: 0,
            pending: HashMap::new(),
            answers: HashMap::new(),
            strays: Vec::new(),
            updates: Vec::new(),
            sessions: std::collections::HashSet::new(),
            hold_permissions: false,
            held: Vec::new(),
            lost: None,
        }
    }

    pub(super) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A fresh request id.
    pub(super) fn allocate(&mut self) -> RequestId {
        let id = RequestId::number(self.next_id);
        self.next_id += 1;
        id
    }

    /// Writes one line verbatim.
    pub(super) async fn send_raw(&mut self, line: &[u8]) -> Result<(), Lost> {
        if let Some(lost) = &self.lost {
            return Err(lost.clone());
        }
        if let Err(e) = self.outbox.send(line).await {
            let lost = Lost(format!("writing to the agent failed ({e}); {}", self.exit_note()));
            self.lost = Some(lost.clone());
            return Err(lost);
        }
        Ok(())
    }

    /// Expects a response with `id` to a line sent raw.
    pub(super) fn expect(&mut self, id: RequestId, method: &str) {
        self.pending.insert(id, method.to_owned());
    }

    /// Sends a request with JSON params; returns its id.
    pub(super) async fn request(&mut self, method: &str, params: &Value) -> Result<RequestId, Lost> {
        let id = self.allocate();
        let mut line = Vec::new();
        encode_request(&mut line, &id, method, Some(&raw(params.to_string())));
        self.expect(id.clone(), method);
        self.send_raw(&line).await?;
        Ok(id)
    }

    /// Sends a notification with JSON params.
    pub(super) async fn notify(&mut self, method: &str, params: &Value) -> Result<(), Lost> {
        let mut line = Vec::new();
        encode_notification(&mut line, method, Some(&raw(params.to_string())));
        self.send_raw(&line).await
    }

    async fn respond(&mut self, id: &RequestId, answer: Result<Value, ErrorObject>) -> Result<(), Lost> {
        let mut line = Vec::new();
        match answer {
            Ok(value) => encode_response(&mut line, id, Ok(&raw(value.to_string()))),
            Err(error) => encode_response(&mut line, id, Err(&error)),
        }
        self.send_raw(&line).await
    }

    /// Answers the held permission requests with `cancelled`.
    pub(super) async fn release_held(&mut self) -> Result<(), Lost> {
        self.hold_permissions = false;
        for id in std::mem::take(&mut self.held) {
            self.respond(&id, Ok(serde_json::json!({"outcome": {"outcome": "cancelled"}}))).await?;
        }
        Ok(())
    }

    /// Whether the answer to `id` has arrived (it stays stored).
    pub(super) fn answered(&self, id: &RequestId) -> bool {
        self.answers.contains_key(id)
    }

    /// Waits up to `limit` for the answer to `id`; `Ok(None)` on timeout.
    pub(super) async fn wait_for(&mut self, id: &RequestId, limit: Duration) -> Result<Option<Answer>, Lost> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(answer) = self.answers.remove(id) {
                return Ok(Some(answer));
            }
            if !self.pump(deadline).await? {
                return Ok(None);
            }
        }
    }

    /// Waits the normal timeout for the answer to `id`.
    pub(super) async fn wait(&mut self, id: &RequestId) -> Result<Option<Answer>, Lost> {
        self.wait_for(id, self.timeout).await
    }

    /// Sends a request and waits for its answer.
    pub(super) async fn call(&mut self, method: &str, params: &Value) -> Result<Option<Answer>, Lost> {
        let id = self.request(method, params).await?;
        self.wait(&id).await
    }

    /// Waits until a stray response arrives, up to `limit`; whether one did.
    pub(super) async fn wait_stray(&mut self, limit: Duration) -> Result<bool, Lost> {
        let deadline = Instant::now() + limit;
        loop {
            if !self.strays.is_empty() {
                return Ok(true);
            }
            if !self.pump(deadline).await? {
                return Ok(false);
            }
        }
    }

    /// A request every agent answers at once (an unknown extension method), to
    /// know that everything sent before it has been read. `Ok(false)` if it got
    /// no answer within the timeout.
    pub(super) async fn barrier(&mut self) -> Result<bool, Lost> {
        let answered = self.call("_agentproto.check/ping", &serde_json::json!({})).await?;
        Ok(answered.is_some())
    }

    /// Waits for signs that the turn of prompt `id` on `session` is under way:
    /// an update for the session after `mark`, or a held permission request.
    pub(super) async fn await_turn(&mut self, id: &RequestId, session: &str, mark: usize) -> Result<Started, Lost> {
        let deadline = Instant::now() + self.timeout;
        loop {
            if self.answered(id) {
                return Ok(Started::Answered);
            }
            let busy = self.updates[mark..].iter().any(|u| u.session.as_deref() == Some(session));
            if busy || !self.held.is_empty() {
                return Ok(Started::Busy);
            }
            if !self.pump(deadline).await? {
                return Ok(Started::Silent);
            }
        }
    }

    /// Handles one arrival; `Ok(false)` if nothing arrived before `deadline`.
    async fn pump(&mut self, deadline: Instant) -> Result<bool, Lost> {
        if let Some(lost) = &self.lost {
            return Err(lost.clone());
        }
        // A peer that never stops talking must not stretch a wait past its deadline.
        if Instant::now() >= deadline {
            return Ok(false);
        }
        let Some(wire) = self.inbox.next_until(deadline).await else {
            return Ok(false);
        };
        match wire {
            Wire::Message(message) => {
                self.ctx_pass("ACP-WIRE-001");
                match message {
                    Message::Response { id, result } => {
                        if self.pending.remove(&id).is_some() {
                            self.ctx.ledger.pass("ACP-WIRE-003");
                            self.answers.insert(id, result);
                        } else {
                            self.strays.push(Stray { id, answer: result });
                        }
                    }
                    Message::Notification { method, params } => self.on_notification(&method, params.as_deref()),
                    Message::Request { id, method, params } => self.on_request(id, &method, params.as_deref()).await?,
                }
            }
            Wire::Invalid { excerpt, error } => {
                // A malformed response (one without `id`, say) still answers something:
                // it counts where silence is judged, so a reply to a notification shows.
                if error.kind() == EnvelopeErrorKind::InvalidResponse {
                    let id = error.id().cloned().unwrap_or(RequestId::NULL);
                    let message = format!("a malformed response ({}): {excerpt:?}", error.message());
                    let answer = Err(ErrorObject { code: ErrorCode::INVALID_REQUEST, message, data: None });
                    self.strays.push(Stray { id, answer });
                }
                self.ctx_fail(
                    "ACP-WIRE-001",
                    format!("wrote a line that is not a JSON-RPC message ({error}): {excerpt:?}"),
                )
            }
            Wire::Oversize(len) => {
                self.ctx_fail("ACP-WIRE-001", format!("wrote a line of {len} bytes, over the bound"))
            }
            Wire::Closed | Wire::Failed(_) => {
                let why = match wire {
                    Wire::Failed(e) => format!("reading the agent's stdout failed ({e})"),
                    _ => "the agent closed its stdout".to_owned(),
                };
                let lost = Lost(format!("{why}; {}", self.exit_note()));
                self.lost = Some(lost.clone());
                return Err(lost);
            }
        }
        Ok(true)
    }

    fn exit_note(&mut self) -> String {
        if self.program.has_exited() {
            "the agent process has exited".to_owned()
        } else {
            "the agent process is still running".to_owned()
        }
    }

    fn ctx_pass(&mut self, id: &'static str) {
        self.ctx.ledger.pass(id);
    }

    fn ctx_fail(&mut self, id: &'static str, detail: String) {
        self.ctx.ledger.fail(id, detail);
    }

    fn on_notification(&mut self, method: &str, params: Option<&RawValue>) {
        match AgentNotification::decode(method, params) {
            Ok(decoded) => {
                let what = format!("{method} notification");
                crate::common::note_once(&mut self.ctx.notes, unknown_variants(&what, &decoded.warnings));
                if let Some(text) = warnings_text(&what, &decoded.warnings) {
                    self.ctx_fail("ACP-WIRE-002", text);
                } else {
                    self.ctx_pass("ACP-WIRE-002");
                }
                if let AgentNotification::SessionUpdate(update) = decoded.value {
                    self.updates.push(Update { session: Some(update.session_id.0) });
                }
            }
            Err(error) => {
                let detail = match &error {
                    DispatchError::Invalid(e) => format!("sent an invalid {method} notification: {e}"),
                    _ => format!("sent notification {method:?}, which v1 does not define for agents"),
                };
                self.ctx_fail("ACP-WIRE-002", detail);
                if method == "session/update" {
                    let session = params
                        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                        .and_then(|v| v.get("sessionId").and_then(Value::as_str).map(str::to_owned));
                    self.updates.push(Update { session });
                }
            }
        }
    }

    async fn on_request(&mut self, id: RequestId, method: &str, params: Option<&RawValue>) -> Result<(), Lost> {
        let decoded = match AgentRequest::decode(method, params) {
            Ok(decoded) => decoded,
            Err(DispatchError::Invalid(e)) => {
                self.ctx_fail("ACP-WIRE-002", format!("sent an invalid {method} request: {e}"));
                return self.respond(&id, Err(agentproto_acp::invalid_params(&e))).await;
            }
            Err(_) => {
                self.ctx_fail("ACP-WIRE-002", format!("sent request {method:?}, which v1 does not define for agents"));
                return self.respond(&id, Err(ErrorObject::method_not_found(method))).await;
            }
        };
        let what = format!("{method} request");
        crate::common::note_once(&mut self.ctx.notes, unknown_variants(&what, &decoded.warnings));
        if let Some(text) = warnings_text(&what, &decoded.warnings) {
            self.ctx_fail("ACP-WIRE-002", text);
        } else {
            self.ctx_pass("ACP-WIRE-002");
        }
        // What this scripted client advertised, checked with the SDK's generated rule code.
        let advertised = super::initialize_params(Value::from(1), self.ctx.options.client_fs);
        let handshake = crate::common::handshake(advertised, serde_json::json!({"protocolVersion": 1}));
        if let Some(refusal) = RequestRules::refusal(&decoded.value, &handshake) {
            let capability = refusal.capability().unwrap_or_default();
            self.ctx_fail(
                "ACP-CAP-001",
                format!("called {method} although the client did not advertise `{capability}`"),
            );
            return self.respond(&id, Err(refusal.error(method))).await;
        }
        let answer = match decoded.value {
            AgentRequest::SessionRequestPermission(request) => {
                if self.hold_permissions {
                    self.held.push(id);
                    return Ok(());
                }
                let wanted: &[PermissionOptionKind] = match self.permission {
                    PermissionPolicy::Allow => &[PermissionOptionKind::AllowOnce, PermissionOptionKind::AllowAlways],
                    PermissionPolicy::Reject => &[PermissionOptionKind::RejectOnce, PermissionOptionKind::RejectAlways],
                };
                let choice = request.options.iter().find(|o| wanted.contains(&o.kind)).or(request.options.first());
                Ok(match choice {
                    Some(option) => {
                        serde_json::json!({"outcome": {"outcome": "selected", "optionId": option.option_id.0}})
                    }
                    None => serde_json::json!({"outcome": {"outcome": "cancelled"}}),
                })
            }
            AgentRequest::FsReadTextFile(request) => self.files(&request.path).and_then(|path| {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| ErrorObject::internal_error(format!("cannot read {}: {e}", path.display())))?;
                let skip = request.line.value().map_or(0, |line| line.saturating_sub(1) as usize);
                let take = request.limit.value().map_or(usize::MAX, |limit| *limit as usize);
                let content: String = text.split_inclusive('\n').skip(skip).take(take).collect();
                Ok(serde_json::json!({"content": content}))
            }),
            AgentRequest::FsWriteTextFile(request) => self.files(&request.path).and_then(|path| {
                std::fs::write(&path, &request.content)
                    .map_err(|e| ErrorObject::internal_error(format!("cannot write {}: {e}", path.display())))?;
                Ok(serde_json::json!({}))
            }),
            // Everything else this client does not serve (terminals and elicitation are
            // never advertised, so the gate above already refused them).
            _ => Err(ErrorObject::method_not_found(method)),
        };
        self.respond(&id, answer).await
    }

    /// A path the scripted client serves files from: absolute, inside the
    /// sessions' working directory.
    fn files(&self, path: &str) -> Result<std::path::PathBuf, ErrorObject> {
        let path = std::path::Path::new(path);
        let root = std::path::Path::new(&self.ctx.cwd);
        let inside = path.is_absolute()
            && path.starts_with(root)
            && !path.components().any(|c| matches!(c, std::path::Component::ParentDir));
        if inside {
            Ok(path.to_path_buf())
        } else {
            let message = format!("this client serves files under {} only", root.display());
            Err(ErrorObject::new(agentproto_jsonrpc::ErrorCode::INVALID_PARAMS, message))
        }
    }

    /// Takes the responses that matched nothing so far.
    pub(super) fn take_strays(&mut self) -> Vec<Stray> {
        std::mem::take(&mut self.strays)
    }

    /// Closes the agent's stdin, waits for it to exit and judges what is left:
    /// its exit (ACP-EXIT-001) and responses that matched no request.
    pub(super) async fn close(mut self, part: &str) {
        let grace = self.ctx.options.exit_grace;
        let lost = self.lost.is_some();
        self.outbox.close().await;
        // Read what is still in flight, so late lines are judged too, until the
        // agent closes its stdout or the grace period ends.
        let deadline = Instant::now() + grace;
        while let Ok(true) = self.pump(deadline).await {}
        let remaining = deadline.saturating_duration_since(Instant::now());
        match self.program.finish(remaining).await {
            Exit::Exited(_) => self.ctx.ledger.pass("ACP-EXIT-001"),
            Exit::Killed => self
                .ctx
                .ledger
                .fail("ACP-EXIT-001", format!("{part}: still running {grace:?} after its stdin was closed (killed)")),
        }
        for stray in self.take_strays() {
            self.ctx.stray(part, stray);
        }
        let tail = self.program.stderr_tail();
        if lost || self.ctx.stderr.is_empty() {
            self.ctx.stderr = tail;
        }
    }
}
