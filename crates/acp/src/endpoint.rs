//! The protocol state of one ACP connection, shared by both roles: the
//! `initialize` phase, the negotiated capabilities, the known sessions with their
//! prompt turns and what their opening answers announced (the session gates'
//! members, e.g. `modes`), and the generic typed call and notification every
//! generated method goes through.
//!
//! # Pipelined messages
//!
//! A peer may write a request before the answer to an earlier one (JSON-RPC
//! allows it), and request handlers run concurrently, so the state a request is
//! checked against must not depend on which handler the scheduler runs first.
//! The agent side therefore orders by what was read, not by what ran:
//!
//! - `initialize` and the requests that create, open or remove a session are
//!   recorded as *unsettled* on the reader as they are read
//!   ([`Shared::note_read`]), and settle when their handler has finished (its
//!   effect applied, or refused, failed, panicked, cancelled).
//! - A request or notification read after an unsettled `initialize` waits for it,
//!   then is served if an `initialize` read before it succeeded, and refused
//!   `-32600` (dropped, for a notification) otherwise. One read before any
//!   `initialize` is refused at once, never waits, even when its handler happens
//!   to run after `initialize` finished.
//! - A request naming a session waits for the unsettled requests read before it
//!   that could change whether that session exists (a `session/new` while the
//!   session is unknown; a load, resume, close or delete naming it), then is
//!   checked. Notifications do not block on sessions: the notification worker is
//!   serial, and blocking it on a handler that may itself call the client (whose
//!   answer waits for the worker) could deadlock. A `session/cancel` for a session
//!   such a request is still opening waits on a task of its own instead (on the
//!   connection's tracker, so `run` waits for it at shutdown), then cancels (or is
//!   reported as naming an unknown session) as if read then; the notifications after
//!   it go on meanwhile.
//! - A prompt read while a prompt read before it on the same session is still
//!   running waits for that one to finish, then runs: one turn at a time, in read
//!   order, whatever the timing. A client should not send it (`check client`'s
//!   ACP-CLIENT-PROMPT-001); the agent does not refuse it, because whether the
//!   earlier turn has ended by the time the later prompt is looked at depends on
//!   scheduling, and the same bytes must get the same answers. A `session/cancel`
//!   read after both cancels both.
//!
//! Waiting happens inside the request's own task, which holds one of the
//! connection's request slots; the requests waited for were read earlier and so
//! got their slots first, and nothing waits for a later message, so the waits
//! cannot form a cycle. A `$/cancel_request` or the connection's shutdown ends a
//! wait like any handler. Answers to concurrent requests still leave in any order;
//! what no longer varies is the answer to each id.
//!
//! The client side pipelines through the typed calls: a call or notification made
//! while this side's `initialize` call is in flight waits for its answer (or for
//! the call to end) before the state check, instead of failing with
//! [`AcpError::NotInitialized`]; the wait ends with the call's own cancellation.
//! The agent side never waits so: its `initialize` handler may call the client,
//! and such a call waiting for `initialize` would wait for itself.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

use std::any::Any;

use agentproto_codec::{DecodeError, DecodeErrorKind, Warning};
use agentproto_jsonrpc::{ErrorCode, ErrorObject, Peer, RequestContext, ResultHook};
use serde_json::value::RawValue;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::role::{check_outgoing, AcpError, AcpEvent, AcpOptions, Answer, Context, Protocol};
use crate::rules::{self, RequestRules, SessionEffect};
use crate::{Handshake, MethodInfo, NotificationMethod, Payload, RequestMethod, Side};

/// Which role this side plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Agent,
    Client,
}

impl Role {
    /// The side of the method table whose requests this role handles.
    fn side(self) -> Side {
        match self {
            Role::Agent => Side::Agent,
            Role::Client => Side::Client,
        }
    }
}

/// Where the connection is in its lifecycle.
enum Phase<S: Protocol> {
    Uninitialized,
    Initializing,
    Ready(Negotiated<S>),
}

/// What `initialize` settled.
pub(crate) struct Negotiated<S: Protocol> {
    pub(crate) version: u16,
    /// Both `initialize` messages, typed, as the generated rule code reads them.
    pub(crate) handshake: Arc<Handshake<S>>,
}

impl<S: Protocol> Clone for Negotiated<S> {
    fn clone(&self) -> Self {
        Negotiated { version: self.version, handshake: Arc::clone(&self.handshake) }
    }
}

/// What this side knows about one session.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    /// Agent side: the number and token of the prompt turn in flight.
    pub(crate) turn: Option<(u64, CancellationToken)>,
    /// Agent side: the read index of the last `session/cancel` of the session
    /// (see [`NotificationContext::index`](agentproto_jsonrpc::NotificationContext::index)).
    /// A prompt read before it but started after it starts cancelled.
    pub(crate) cancelled_at: u64,
    /// Client side: fires when this side cancels the session (answers pending
    /// permission requests); replaced by a fresh token after each cancel.
    pub(crate) cancel: CancellationToken,
    /// What the latest answer that created or opened the session announced (the
    /// members the session gates read, e.g. `modes`); `None` while this side has
    /// seen no such answer for it.
    pub(crate) announced: Option<Vec<&'static str>>,
}

/// Where a request was read (see the module docs, "Pipelined messages").
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadPoint {
    /// Its number among the requests read ([`RequestContext::index`]).
    request: u64,
    /// How many notifications were read before it.
    notifications: u64,
}

impl ReadPoint {
    pub(crate) fn of(rpc: &RequestContext) -> ReadPoint {
        ReadPoint { request: rpc.index(), notifications: rpc.notifications_before() }
    }

    /// Whether this point was read before `later`.
    fn before(self, later: Later) -> bool {
        match later {
            Later::Request(index) => self.request < index,
            Later::Notification(index) => self.notifications < index,
        }
    }
}

/// A message by its read position: a request by
/// [`RequestContext::index`], a notification by
/// [`NotificationContext::index`](agentproto_jsonrpc::NotificationContext::index).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Later {
    Request(u64),
    Notification(u64),
}

/// Agent side: a request read whose outcome later messages are checked against,
/// whose handler has not finished.
#[derive(Debug)]
struct Unsettled {
    at: ReadPoint,
    kind: Unsettles,
}

#[derive(Debug)]
enum Unsettles {
    /// `initialize`: whether the connection becomes ready.
    Initialize,
    /// A request creating a session its result names (`None`), or opening or
    /// removing the session its params name.
    Session(Option<String>),
    /// A prompt turn on the session its params name.
    Prompt(String),
}

impl<S: Protocol> State<S> {
    /// See [`Shared::session_unsettled`].
    fn opening(&self, later: Later, session: &str) -> bool {
        self.unsettled.iter().any(|u| {
            u.at.before(later)
                && match &u.kind {
                    Unsettles::Initialize | Unsettles::Prompt(_) => false,
                    Unsettles::Session(None) => !self.sessions.contains_key(session),
                    Unsettles::Session(Some(named)) => named == session,
                }
        })
    }

    /// Whether a prompt on `session` read before `later` is still running.
    fn prompting(&self, later: Later, session: &str) -> bool {
        self.unsettled.iter().any(|u| u.at.before(later) && matches!(&u.kind, Unsettles::Prompt(s) if s == session))
    }
}

struct State<S: Protocol> {
    phase: Phase<S>,
    sessions: HashMap<String, SessionState>,
    /// Prompt turns started so far (numbers them).
    turns: u64,
    /// Agent side: the unsettled requests, in read order.
    unsettled: Vec<Unsettled>,
    /// Agent side: where the `initialize` that made the connection ready was read.
    ready_since: Option<ReadPoint>,
    /// Client side: this side's `initialize` calls not answered yet.
    initialize_calls: usize,
}

impl<S: Protocol> Default for State<S> {
    fn default() -> Self {
        State {
            phase: Phase::Uninitialized,
            sessions: HashMap::new(),
            turns: 0,
            unsettled: Vec::new(),
            ready_since: None,
            initialize_calls: 0,
        }
    }
}

/// Everything the connection handles of one side share.
pub(crate) struct Shared<S: Protocol> {
    pub(crate) peer: Peer,
    pub(crate) role: Role,
    pub(crate) options: AcpOptions,
    state: Mutex<State<S>>,
    /// Changes whenever something a waiting message may wait for is done: an
    /// unsettled request settled, or the answer to this side's `initialize` read.
    settled: watch::Sender<u64>,
    _protocol: PhantomData<fn() -> S>,
}

impl<S: Protocol> Shared<S> {
    pub(crate) fn new(peer: Peer, role: Role, options: AcpOptions) -> Shared<S> {
        Shared {
            peer,
            role,
            options,
            state: Mutex::new(State::default()),
            settled: watch::Sender::new(0),
            _protocol: PhantomData,
        }
    }

    fn state(&self) -> MutexGuard<'_, State<S>> {
        // Every update of the state is a single assignment: a panic cannot leave it half done.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn report(&self, event: AcpEvent) {
        if let Some(observer) = &self.options.observer {
            observer(&event);
        }
    }

    pub(crate) fn report_warnings(&self, method: &str, warnings: Vec<Warning>) {
        if !warnings.is_empty() {
            self.report(AcpEvent::Salvaged { method: method.to_owned(), warnings });
        }
    }

    pub(crate) fn negotiated(&self) -> Option<Negotiated<S>> {
        match &self.state().phase {
            Phase::Ready(negotiated) => Some(negotiated.clone()),
            _ => None,
        }
    }

    pub(crate) fn is_ready(&self) -> bool {
        matches!(self.state().phase, Phase::Ready(_))
    }

    /// Agent side: marks `initialize` as started; `false` if it already ran or runs.
    pub(crate) fn begin_initialize(&self) -> bool {
        let mut state = self.state();
        match state.phase {
            Phase::Uninitialized => {
                state.phase = Phase::Initializing;
                true
            }
            _ => false,
        }
    }

    /// Ends the `initialize` phase: ready with `negotiated`, or back to
    /// uninitialized. `since` is where the agent read the `initialize` request.
    pub(crate) fn finish_initialize(&self, negotiated: Option<Negotiated<S>>, since: Option<ReadPoint>) {
        let mut state = self.state();
        state.phase = match negotiated {
            Some(negotiated) => {
                state.ready_since = since;
                Phase::Ready(negotiated)
            }
            None => Phase::Uninitialized,
        };
    }

    /// Agent side, on the reader as a request is read: records it as unsettled
    /// when later messages are checked against its outcome.
    /// `request` is the request decoded as it was read (`None` when its params are
    /// invalid: it will be refused, and changes nothing).
    pub(crate) fn note_read<R: Payload + RequestRules<S>>(&self, method: &str, request: Option<&R>, at: ReadPoint) {
        let kind = if method == S::RULES.initialize {
            Unsettles::Initialize
        } else if S::RULES.prompt_turn == Some(method) {
            match request.and_then(Payload::session_id) {
                Some(session) => Unsettles::Prompt(session.to_owned()),
                None => return,
            }
        } else {
            let effect = match request {
                Some(request) => request.session_rule().and_then(|rule| rule.effect),
                None => self.incoming(method).and_then(|m| m.session?.effect),
            };
            match effect {
                Some(SessionEffect::CreatedByResult) => Unsettles::Session(None),
                // Params without a session id are refused; until then, treat the
                // request like one that may create any session.
                Some(SessionEffect::OpenedByParams | SessionEffect::Removed) => {
                    Unsettles::Session(request.and_then(Payload::session_id).map(str::to_owned))
                }
                None => return,
            }
        };
        self.state().unsettled.push(Unsettled { at, kind });
    }

    /// Agent side: the handler of the request read as number `index` has
    /// finished, its effect applied; messages waiting for it re-check.
    pub(crate) fn settle(&self, index: u64) {
        let settled = {
            let mut state = self.state();
            let before = state.unsettled.len();
            state.unsettled.retain(|unsettled| unsettled.at.request != index);
            state.unsettled.len() != before
        };
        if settled {
            self.settled.send_modify(|changes| *changes = changes.wrapping_add(1));
        }
    }

    /// Waits while `blocked` holds for the state, re-checking after each change
    /// of `settled`.
    async fn wait_while(&self, blocked: impl Fn(&State<S>) -> bool) {
        if !blocked(&self.state()) {
            return;
        }
        // Subscribed before the next check: a change between that check and the
        // wait is not missed.
        let mut changes = self.settled.subscribe();
        loop {
            let waiting = blocked(&self.state());
            // `self` owns the sender, so `changed` cannot fail while we wait.
            if !waiting || changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Agent side: waits until every `initialize` read before `later` has finished.
    pub(crate) async fn settle_initialize(&self, later: Later) {
        self.wait_while(|state| {
            state.unsettled.iter().any(|u| matches!(u.kind, Unsettles::Initialize) && u.at.before(later))
        })
        .await;
    }

    /// Agent side: waits until no request read before `later` that could make
    /// `session` exist or stop existing is still running.
    pub(crate) async fn settle_session(&self, later: Later, session: &str) {
        self.wait_while(|state| state.opening(later, session)).await;
    }

    /// Agent side: waits until no prompt on `session` read before `later` is still
    /// running, so that prompts pipelined on one session run one after the other, in
    /// read order.
    pub(crate) async fn settle_prompts(&self, later: Later, session: &str) {
        self.wait_while(|state| state.prompting(later, session)).await;
    }

    /// Agent side: whether a request read before `later` that could make `session`
    /// exist or stop existing is still running.
    pub(crate) fn session_unsettled(&self, later: Later, session: &str) -> bool {
        self.state().opening(later, session)
    }

    /// Agent side: whether an `initialize` read before `later` made the
    /// connection ready (the connection may be ready by now through one read
    /// after it, which does not count).
    pub(crate) fn ready_for(&self, later: Later) -> bool {
        let state = self.state();
        matches!(state.phase, Phase::Ready(_)) && state.ready_since.is_some_and(|since| since.before(later))
    }

    /// Client side: waits, while this side's `initialize` call is in flight and
    /// its answer has not been read, until one of them changes; ends early when
    /// `cancel` or `turn` fires.
    async fn await_initialize_answer(
        &self,
        method: &str,
        turn: Option<&CancellationToken>,
        cancel: Option<&CancellationToken>,
    ) -> Result<(), AcpError> {
        if self.role != Role::Client {
            return Ok(());
        }
        let waiting = self.wait_while(|state| state.initialize_calls > 0 && !matches!(state.phase, Phase::Ready(_)));
        let cancelled = async {
            match (turn, cancel) {
                (Some(turn), Some(cancel)) => tokio::select! {
                    () = turn.cancelled() => {}
                    () = cancel.cancelled() => {}
                },
                (Some(token), None) | (None, Some(token)) => token.cancelled().await,
                (None, None) => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = waiting => Ok(()),
            () = cancelled => Err(AcpError::Cancelled { method: method.to_owned() }),
        }
    }

    /// Client side: one more `initialize` call in flight, until the returned
    /// guard is dropped (answered, failed or abandoned).
    fn initialize_call(self: &Arc<Self>) -> OnDrop<impl FnOnce()> {
        self.state().initialize_calls += 1;
        let shared = Arc::clone(self);
        OnDrop(Some(move || {
            shared.state().initialize_calls -= 1;
            shared.settled.send_modify(|changes| *changes = changes.wrapping_add(1));
        }))
    }

    pub(crate) fn knows_session(&self, id: &str) -> bool {
        self.state().sessions.contains_key(id)
    }

    /// A session created or opened by an answer that announced `announced`; a
    /// session opened again takes what the new answer announced.
    pub(crate) fn open_session(&self, id: &str, announced: Vec<&'static str>) {
        self.state().sessions.entry(id.to_owned()).or_default().announced = Some(announced);
    }

    /// Whether the answer that opened `session` announced `member`: `None` when no
    /// such answer was seen (an unknown session, which other checks judge).
    fn announces(&self, session: &str, member: &str) -> Option<bool> {
        let state = self.state();
        let announced = state.sessions.get(session)?.announced.as_ref()?;
        Some(announced.contains(&member))
    }

    pub(crate) fn remove_session(&self, id: &str) {
        if let Some(session) = self.state().sessions.remove(id) {
            if let Some((_, turn)) = session.turn {
                turn.cancel();
            }
            session.cancel.cancel();
        }
    }

    /// Agent side: starts a prompt turn whose token is a child of `parent`; `None`
    /// when one is already in flight. `read_after` is the number of notifications
    /// read before the prompt: a `session/cancel` read after the prompt but handled
    /// before its turn started has already cancelled the returned token.
    pub(crate) fn begin_turn(
        &self,
        session: &str,
        parent: &CancellationToken,
        read_after: u64,
    ) -> Option<(u64, CancellationToken)> {
        let mut state = self.state();
        state.turns += 1;
        let number = state.turns;
        let entry = state.sessions.entry(session.to_owned()).or_default();
        if entry.turn.is_some() {
            return None;
        }
        let token = parent.child_token();
        if entry.cancelled_at > read_after {
            token.cancel();
        }
        entry.turn = Some((number, token.clone()));
        Some((number, token))
    }

    pub(crate) fn end_turn(&self, session: &str, number: u64) {
        let mut state = self.state();
        if let Some(entry) = state.sessions.get_mut(session) {
            if entry.turn.as_ref().is_some_and(|(current, _)| *current == number) {
                entry.turn = None;
            }
        }
    }

    /// Agent side: `session/cancel` number `index` (in read order) arrived; `false`
    /// if the session is unknown.
    pub(crate) fn cancel_turn(&self, session: &str, index: u64) -> bool {
        match self.state().sessions.get_mut(session) {
            Some(entry) => {
                entry.cancelled_at = entry.cancelled_at.max(index);
                if let Some((_, turn)) = &entry.turn {
                    turn.cancel();
                }
                true
            }
            None => false,
        }
    }

    /// Client side: the token that fires when this side cancels `session`.
    pub(crate) fn session_cancel_token(&self, session: &str) -> CancellationToken {
        let mut state = self.state();
        state.sessions.entry(session.to_owned()).or_default().cancel.clone()
    }

    /// Client side: fires and replaces the session's cancel token.
    pub(crate) fn fire_session_cancel(&self, session: &str) {
        let old = {
            let mut state = self.state();
            state.sessions.get_mut(session).map(|entry| std::mem::take(&mut entry.cancel))
        };
        if let Some(old) = old {
            old.cancel();
        }
    }

    /// Checks an incoming request against the state: the error to answer with, if any.
    /// The answer to any request but `initialize` before the connection is ready:
    /// `-32600`, whatever the method or its params (checked before decoding them).
    pub(crate) fn refuse_before_ready(&self, method: &str) -> Option<ErrorObject> {
        (!self.is_ready()).then(|| before_ready(method))
    }

    pub(crate) fn check_incoming<R: Payload + RequestRules<S>>(&self, request: &R) -> Option<ErrorObject> {
        let method = request.method();
        let handshake = match &self.state().phase {
            Phase::Ready(negotiated) => Arc::clone(&negotiated.handshake),
            _ => return self.refuse_before_ready(method),
        };
        if let Some(refusal) = request.refusal(&handshake) {
            return Some(refusal.error(method));
        }
        if let Some(session) = request.session_id() {
            let unseen_ok = request.session_rule().is_some_and(|s| s.unseen_ok);
            if !unseen_ok && !self.knows_session(session) {
                return Some(unknown_session(session));
            }
            // `session/set_mode` for a session whose opening answer had no `modes`.
            if let Some(gate) = request.session_gate() {
                if self.announces(session, gate.member) == Some(false) {
                    return Some(gate.refusal(method, session));
                }
            }
        }
        None
    }

    /// The table row of a request this side handles.
    fn incoming(&self, method: &str) -> Option<&'static MethodInfo> {
        rules::request(S::METHODS, self.role.side(), method)
    }

    /// The generic typed call behind every generated request method.
    pub(crate) async fn request<M: RequestMethod<Surface = S>>(
        self: &Arc<Self>,
        params: M::Params,
        turn: Option<&CancellationToken>,
        cancel: Option<&CancellationToken>,
    ) -> Result<M::Result, AcpError> {
        let method = M::NAME;
        let raw = encode_params(method, &params)?;
        let initializing = self.role == Role::Client && method == S::RULES.initialize;
        // Counted from the first poll, before anything is awaited: a call made
        // right after this one sees it in flight.
        let _in_flight = initializing.then(|| self.initialize_call());
        if !initializing {
            self.await_initialize_answer(method, turn, cancel).await?;
            self.check_outgoing_state::<M>(&params)?;
        }
        if self.options.strict {
            check_outgoing::<M::Params>(raw.get(), "$.params")
                .map_err(|error| AcpError::InvalidParams { method: method.to_owned(), error: Box::new(error) })?;
        }
        let effect = if initializing {
            let own = (&params as &dyn Any).downcast_ref::<S::InitializeRequest>().cloned();
            own.map(|own| AnswerEffect::Initialized { own })
        } else {
            let session = M::session_id(&params).map(str::to_owned);
            M::SESSION.and_then(|rule| rule.effect).map(|effect| AnswerEffect::Session(effect, session))
        };
        // What the answer changes, later messages depend on (a request naming the
        // new session may follow it at once): apply it when the answer is read,
        // not when this continuation runs. The answer is decoded there, once, and
        // handed to this call.
        let read: AnswerSlot<M::Result> = Arc::default();
        let on_result = effect.map(|effect| {
            let shared = Arc::clone(self);
            let read = Arc::clone(&read);
            Box::new(move |result: &RawValue| {
                let outcome = shared.read_answer::<M>(result_text(result, M::NULL_RESULT), Some(effect));
                *read.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(outcome);
            }) as ResultHook
        });
        let call = self.peer.call_observing(method, Some(raw), cancel, on_result);
        let result = match turn {
            Some(turn) => tokio::select! {
                biased;
                result = call => result,
                () = turn.cancelled() => return Err(AcpError::Cancelled { method: method.to_owned() }),
            },
            None => call.await,
        };
        let raw = result.map_err(|error| AcpError::from_call(method, error))?;
        let taken = read.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        match taken {
            Some(outcome) => outcome,
            None => self.read_answer::<M>(result_text(&raw, M::NULL_RESULT), None),
        }
    }

    /// Decodes the answer to one of this side's calls of `M` and applies what a valid
    /// one changes (`effect`); an invalid answer changes nothing (the caller gets the
    /// error). Runs on the reader task as the answer is read when there is an effect.
    fn read_answer<M: RequestMethod<Surface = S>>(
        &self,
        text: &str,
        effect: Option<AnswerEffect<S>>,
    ) -> Result<M::Result, AcpError> {
        let method = M::NAME;
        #[cfg(test)]
        crate::decode_once_tests::count(std::any::type_name::<M::Result>());
        let decoded = agentproto_codec::decode::<M::Result>(text, "$.result");
        let initializing = method == S::RULES.initialize;
        let outcome = match decoded {
            Ok(decoded) => {
                let mut value = decoded.value;
                let answered = (&mut value as &mut dyn Any)
                    .downcast_mut::<S::InitializeResponse>()
                    .map(|result| *S::protocol_version(result))
                    .filter(|_| initializing);
                match answered {
                    Some(answered) if answered != S::VERSION => {
                        Err(AcpError::UnsupportedVersion { answered: i64::from(answered), supported: S::VERSION })
                    }
                    _ => {
                        self.report_warnings(method, decoded.warnings);
                        Ok(value)
                    }
                }
            }
            // Another version's answer need not match this version's result type:
            // its version is what is wrong with it (read only on this failure path).
            Err(error) => match answered_version(text).filter(|&v| initializing && v != i64::from(S::VERSION)) {
                Some(answered) => Err(AcpError::UnsupportedVersion { answered, supported: S::VERSION }),
                None => Err(AcpError::InvalidResult { method: method.to_owned(), error: Box::new(error) }),
            },
        };
        match effect {
            Some(AnswerEffect::Initialized { own }) => {
                let agent = outcome.as_ref().ok().and_then(|v| (v as &dyn Any).downcast_ref::<S::InitializeResponse>());
                let negotiated = agent.map(|agent| Negotiated {
                    version: S::VERSION,
                    handshake: Arc::new(Handshake { client: own, agent: agent.clone() }),
                });
                self.finish_initialize(negotiated, None);
                // Calls waiting for this answer check the state now.
                self.settled.send_modify(|changes| *changes = changes.wrapping_add(1));
            }
            Some(AnswerEffect::Session(effect, params_session)) => {
                if let Ok(value) = &outcome {
                    let session = effect.session(params_session, || M::created_session(value).map(str::to_owned));
                    self.apply_session_effect(effect, session, M::announced(value));
                }
            }
            None => {}
        }
        outcome
    }

    /// The generic notification behind every generated notification method.
    pub(crate) async fn notify<M: NotificationMethod>(&self, params: M::Params) -> Result<(), AcpError> {
        let method = M::NAME;
        let raw = encode_params(method, &params)?;
        self.await_initialize_answer(method, None, None).await?;
        if !self.is_ready() {
            return Err(AcpError::NotInitialized { method: method.to_owned() });
        }
        if self.options.strict {
            check_outgoing::<M::Params>(raw.get(), "$.params")
                .map_err(|error| AcpError::InvalidParams { method: method.to_owned(), error: Box::new(error) })?;
        }
        let cancelled =
            if self.role == Role::Client && method == S::RULES.session_cancel { M::session_id(&params) } else { None };
        let cancelled = cancelled.map(str::to_owned);
        self.peer.notify(method, Some(raw)).await.map_err(|error| AcpError::from_call(method, error))?;
        if let Some(session) = cancelled {
            // The protocol requires the client to answer its pending permission
            // requests of the session with `cancelled`; do it for the application.
            self.fire_session_cancel(&session);
        }
        Ok(())
    }

    /// Sends an extension request (`_`-prefixed name) with raw params.
    pub(crate) async fn ext_request(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        cancel: Option<&CancellationToken>,
    ) -> Result<Box<RawValue>, AcpError> {
        if !method.starts_with('_') {
            return Err(ext_name_error(method));
        }
        self.await_initialize_answer(method, None, cancel).await?;
        if !self.is_ready() {
            return Err(AcpError::NotInitialized { method: method.to_owned() });
        }
        self.peer.call_observing(method, params, cancel, None).await.map_err(|error| AcpError::from_call(method, error))
    }

    /// Sends an extension notification with raw params.
    pub(crate) async fn ext_notify(&self, method: &str, params: Option<Box<RawValue>>) -> Result<(), AcpError> {
        if !method.starts_with('_') {
            return Err(ext_name_error(method));
        }
        self.await_initialize_answer(method, None, None).await?;
        if !self.is_ready() {
            return Err(AcpError::NotInitialized { method: method.to_owned() });
        }
        self.peer.notify(method, params).await.map_err(|error| AcpError::from_call(method, error))
    }

    fn check_outgoing_state<M: RequestMethod<Surface = S>>(&self, params: &M::Params) -> Result<(), AcpError> {
        let method = M::NAME;
        let Some(negotiated) = self.negotiated() else {
            return Err(AcpError::NotInitialized { method: method.to_owned() });
        };
        // A capability the peer did not advertise, or content of a kind it did not
        // (an image to an agent without `promptCapabilities.image`). A kind the
        // schema does not list is left to validation: strict mode refuses it, and
        // the peer would answer -32602.
        if let Some(capability) = M::refusal(params, &negotiated.handshake).and_then(|refusal| refusal.capability()) {
            return Err(AcpError::CapabilityNotAdvertised { method: method.to_owned(), capability });
        }
        // A session whose opening answer did not announce what the method needs
        // (`session/set_mode` without `modes`). A session this side saw no answer
        // for is left to the peer, which knows its sessions.
        if let (Some(gate), Some(session)) = (M::SESSION_GATE, M::session_id(params)) {
            if self.announces(session, gate.member) == Some(false) {
                return Err(AcpError::NotAnnounced {
                    method: method.to_owned(),
                    session: session.to_owned(),
                    member: gate.member.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Applies the session effect of a successful request (either side's) to
    /// `session`, with what its answer announced for it.
    pub(crate) fn apply_session_effect(
        &self,
        effect: SessionEffect,
        session: Option<String>,
        announced: Vec<&'static str>,
    ) {
        if let Some(session) = session {
            match effect {
                SessionEffect::Removed => self.remove_session(&session),
                SessionEffect::CreatedByResult | SessionEffect::OpenedByParams => {
                    self.open_session(&session, announced)
                }
            }
        }
    }

    /// A handler context for a message of this connection.
    pub(crate) fn context<P>(&self, peer: P, rpc: Option<RequestContext>, token: CancellationToken) -> Context<P> {
        Context {
            peer,
            rpc,
            token,
            handles_cancellation: Arc::new(AtomicBool::new(false)),
            strict: self.options.strict,
        }
    }
}

/// Where the reader leaves a call's decoded answer for the caller.
type AnswerSlot<T> = Arc<Mutex<Option<Result<T, AcpError>>>>;

/// What the answer to a call of this side changes in the connection's state.
enum AnswerEffect<S: Protocol> {
    /// The client's `initialize`: the connection is ready, with these params.
    Initialized { own: S::InitializeRequest },
    /// A session call, with the session its params name.
    Session(SessionEffect, Option<String>),
}

/// ACP docs show `null` for some empty results (`session/load`): where the method's
/// rule says the result has no required member, read it as `{}`.
fn result_text(result: &RawValue, null_result: bool) -> &str {
    match result.get() {
        "null" if null_result => "{}",
        text => text,
    }
}

/// The `protocolVersion` of an `initialize` answer that is not this version's
/// result, when it is a protocol version (a `uint16`): read only to say why the
/// answer was refused.
fn answered_version(result: &str) -> Option<i64> {
    let members: HashMap<std::borrow::Cow<'_, str>, &RawValue> = serde_json::from_str(result).ok()?;
    members.get("protocolVersion").and_then(|v| serde_json::from_str::<u16>(v.get()).ok()).map(i64::from)
}

/// Records the session effect of a request this side handled successfully: `rule`
/// and `session` were read from the typed request, `answer` from the typed result.
pub(crate) fn track_handled<S: Protocol>(
    shared: &Shared<S>,
    rule: Option<rules::SessionRule>,
    session: Option<String>,
    answer: &mut Answer,
) {
    if let Some(effect) = rule.and_then(|rule| rule.effect) {
        let session = effect.session(session, || answer.created.take());
        shared.apply_session_effect(effect, session, std::mem::take(&mut answer.announced));
    }
}

/// `-32600` for a request before `initialize` has completed.
pub(crate) fn before_ready(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_REQUEST,
        format!("invalid request: `{method}` before `initialize` has completed"),
    )
}

/// `-32002` with `data.sessionId`.
pub(crate) fn unknown_session(session: &str) -> ErrorObject {
    let data = serde_json::json!({ "sessionId": session });
    let error =
        ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, format!("resource not found: unknown session `{session}`"));
    match serde_json::value::to_raw_value(&data) {
        Ok(data) => error.with_data(data),
        Err(_) => error,
    }
}

fn ext_name_error(method: &str) -> AcpError {
    AcpError::InvalidParams {
        method: method.to_owned(),
        error: Box::new(DecodeError::new(
            "$.method",
            DecodeErrorKind::NotEncodable,
            "a method name starting with `_`",
            format!("{method:?}"),
        )),
    }
}

/// A constant JSON text as a raw value.
pub(crate) fn raw_const(text: &'static str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).expect("constant JSON text is valid")
}

/// Encodes outgoing params; a failure (a custom `Serialize` that errs) is local.
fn encode_params<T: serde::Serialize>(method: &str, params: &T) -> Result<Box<RawValue>, AcpError> {
    serde_json::value::to_raw_value(params).map_err(|e| AcpError::InvalidParams {
        method: method.to_owned(),
        error: Box::new(DecodeError::new(
            "$.params",
            DecodeErrorKind::NotEncodable,
            "params that serialize to JSON",
            format!("a value whose serialization failed ({e})"),
        )),
    })
}

/// Runs its closure when dropped, unless it was taken out first.
pub(crate) struct OnDrop<F: FnOnce()>(pub(crate) Option<F>);

impl<F: FnOnce()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}
