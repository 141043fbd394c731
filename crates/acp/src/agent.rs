//! The agent role: serve an `Agent` implementation to a client, and the
//! [`ClientConnection`] handle its handlers use to call the client back.
//!
//! The connection enforces the protocol around the application's handlers:
//! `initialize` first and once (anything else before it is answered `-32600`), the
//! negotiated protocol version, the agent's own capability gates, known session
//! ids (`-32002` with `data.sessionId`), requests a session's opening answer did not
//! announce (`session/set_mode` for a session answered without `modes`: `-32602` at
//! `$.params.sessionId`), one prompt turn per session, and
//! `session/cancel`, which ends the turn with `stopReason: "cancelled"`.
//!
//! Requests written before the answer to an earlier one (pipelined) are checked
//! in read order, whatever order their handlers run in: one read after
//! `initialize` waits for it and is served if it succeeded; one read before any
//! `initialize` is refused at once; one naming a session waits for a
//! `session/new` (or load, resume, close) read before it that is still running.
//! Notifications read after `initialize` wait for it too, on the serial
//! notification worker: an `initialize` handler must therefore not wait for a
//! call to the client (through [`Connection::peer`]) or anything else that needs
//! a later notification handled. The details are in the `endpoint` module docs.

use std::fmt;
use std::pin::pin;
use std::sync::Arc;

use agentproto_codec::RawJson;
use agentproto_jsonrpc::{
    Connection, ConnectionError, ErrorCode, ErrorObject, Handler, IncomingNotification, IncomingRequest,
    NotificationContext, RequestContext,
};
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::endpoint::{before_ready, track_handled, Later, Negotiated, OnDrop, ReadPoint, Role, Shared};
use crate::role::{AcpError, AcpEvent, AcpOptions, Dispatch, Protocol};
use crate::rules::RequestRules;
use crate::{Decoded, DispatchError, Handshake, NotificationMethod, Payload, RequestMethod};

/// The agent's handle to its client: typed calls (`request_permission`,
/// `read_text_file`, …) and notifications (`session_update`, …) are generated per
/// surface as inherent methods, e.g. on `ClientConnection<v1::V1>`.
///
/// Every call checks the state first and sends nothing when it fails: before
/// `initialize` has completed ([`AcpError::NotInitialized`], at once, also while
/// it runs: the `initialize` handler itself must not wait for its own end) or
/// for a method the client did not advertise
/// ([`AcpError::CapabilityNotAdvertised`]). Results are validated against the
/// method's result type.
pub struct ClientConnection<S: Protocol> {
    pub(crate) shared: Arc<Shared<S>>,
    /// Inside a prompt turn: the turn's token; calls end when it fires.
    pub(crate) turn: Option<CancellationToken>,
}

impl<S: Protocol> Clone for ClientConnection<S> {
    fn clone(&self) -> Self {
        ClientConnection { shared: self.shared.clone(), turn: self.turn.clone() }
    }
}

impl<S: Protocol> fmt::Debug for ClientConnection<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConnection")
            .field("peer", &self.shared.peer)
            .field("in_turn", &self.turn.is_some())
            .finish()
    }
}

impl<S: Protocol> ClientConnection<S> {
    #[doc(hidden)]
    pub async fn request<M: RequestMethod<Surface = S>>(&self, params: M::Params) -> Result<M::Result, AcpError> {
        self.shared.request::<M>(params, self.turn.as_ref(), None).await
    }

    #[doc(hidden)]
    pub async fn notify<M: NotificationMethod>(&self, params: M::Params) -> Result<(), AcpError> {
        self.shared.notify::<M>(params).await
    }

    /// Sends an extension request (its name must start with `_`) and returns the raw result.
    pub async fn ext_method(&self, method: &str, params: Option<RawJson>) -> Result<RawJson, AcpError> {
        self.shared.ext_request(method, params.map(RawJson::into_raw), None).await.map(RawJson::from)
    }

    /// Sends an extension notification (its name must start with `_`).
    pub async fn ext_notification(&self, method: &str, params: Option<RawJson>) -> Result<(), AcpError> {
        self.shared.ext_notify(method, params.map(RawJson::into_raw)).await
    }

    /// The protocol version negotiated by `initialize`, once it has completed.
    pub fn protocol_version(&self) -> Option<u16> {
        self.shared.negotiated().map(|n| n.version)
    }

    /// Both `initialize` messages, typed (`None` before `initialize` has completed):
    /// the client's capabilities are in [`Handshake::client`].
    pub fn handshake(&self) -> Option<Arc<Handshake<S>>> {
        self.shared.negotiated().map(|n| n.handshake)
    }

    /// Waits until everything sent so far has been written to the transport.
    pub async fn flush(&self) -> Result<(), AcpError> {
        self.shared.peer.flush().await.map_err(|error| AcpError::from_call("flush", error))
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.peer.is_closed()
    }
}

/// Builds the agent side of a connection over any byte streams. Run the returned
/// [`Connection`] (it completes when the input closes); the [`ClientConnection`]
/// reaches the client from outside the handlers.
pub fn connect<S, A>(
    agent: A,
    input: impl AsyncRead + Send + Unpin + 'static,
    output: impl AsyncWrite + Send + Unpin + 'static,
    options: AcpOptions,
) -> (Connection, ClientConnection<S>)
where
    S: Protocol,
    A: Dispatch<S::ClientRequest, S::ClientNotification, ClientConnection<S>>,
{
    let runtime =
        Arc::new(AgentRuntime::<S, A> { agent: Arc::new(agent), shared: Arc::new(std::sync::OnceLock::new()) });
    let (connection, peer) = Connection::new(
        input,
        output,
        runtime.clone(),
        crate::client::connection_options::<S, S::ClientNotification>(&options),
    );
    let shared = Arc::new(Shared::new(peer, Role::Agent, options));
    let _ = runtime.shared.set(shared.clone());
    (connection, ClientConnection { shared, turn: None })
}

/// Serves `agent` on this process's stdin and stdout until stdin closes.
pub async fn serve_stdio<S, A>(agent: A, options: AcpOptions) -> Result<(), ConnectionError>
where
    S: Protocol,
    A: Dispatch<S::ClientRequest, S::ClientNotification, ClientConnection<S>>,
{
    let (connection, _client) = connect::<S, A>(agent, tokio::io::stdin(), tokio::io::stdout(), options);
    connection.run().await
}

struct AgentRuntime<S: Protocol, A> {
    agent: Arc<A>,
    /// Set right after the JSON-RPC connection is built (it needs the handler first).
    shared: Arc<std::sync::OnceLock<Arc<Shared<S>>>>,
}

impl<S: Protocol, A> AgentRuntime<S, A> {
    fn shared(&self) -> Option<Arc<Shared<S>>> {
        self.shared.get().cloned()
    }
}

/// Whether the handler's own answer to a cancelled turn says `stopReason: "cancelled"`
/// (read from the encoded answer, on this rare path only).
fn stopped_cancelled(result: &RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct Stop<'a> {
        #[serde(rename = "stopReason", borrow)]
        stop_reason: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_str::<Stop<'_>>(result.get()).is_ok_and(|stop| stop.stop_reason.as_deref() == Some("cancelled"))
}

/// The `{"stopReason":"cancelled"}` result of a cancelled v1 prompt turn.
fn cancelled_prompt() -> Box<RawValue> {
    crate::endpoint::raw_const(r#"{"stopReason":"cancelled"}"#)
}

impl<S, A> Handler for AgentRuntime<S, A>
where
    S: Protocol,
    A: Dispatch<S::ClientRequest, S::ClientNotification, ClientConnection<S>>,
{
    fn request(
        &self,
        request: IncomingRequest,
        rpc: RequestContext,
    ) -> BoxFuture<'static, Result<Box<RawValue>, ErrorObject>> {
        let agent = self.agent.clone();
        let shared = self.shared();
        let index = rpc.index();
        // Settles the request when its handler ends however it ends, also when
        // its future is dropped before it first runs (cancelled, shut down).
        let settle = shared.clone().map(|shared| OnDrop(Some(move || shared.settle(index))));
        Box::pin(async move {
            // The first local: dropped last, after the handler's effect is applied.
            let _settle = settle;
            let Some(shared) = shared else {
                return Err(ErrorObject::internal_error("internal error: connection not set up"));
            };
            // Decoded once, as it was read (`request_read`).
            let decoded = prepared::<S::ClientRequest>(request);
            let method = decoded.method;
            // Read after an `initialize` that is still running: its outcome decides.
            shared.settle_initialize(Later::Request(index)).await;
            if method != S::RULES.initialize && !shared.ready_for(Later::Request(index)) {
                return Err(before_ready(&method));
            }
            let decoded = decoded.request.map_err(|error: DispatchError| error.to_error_object(&method))?;
            shared.report_warnings(&method, decoded.warnings);
            let request = decoded.value;
            let session = request.session_id().map(str::to_owned);
            if method == S::RULES.initialize {
                return initialize(agent, shared, rpc, request).await;
            }
            if let Some(session) = session.as_deref() {
                shared.settle_session(Later::Request(index), session).await;
            }
            if let Some(error) = shared.check_incoming(&request) {
                return Err(error);
            }
            if S::RULES.prompt_turn == Some(method.as_str()) {
                if let Some(session) = session {
                    return prompt(agent, shared, rpc, request, session).await;
                }
            }
            let rule = request.session_rule();
            let token = rpc.cancellation_token().clone();
            let cx = shared.context(ClientConnection { shared: shared.clone(), turn: None }, Some(rpc), token);
            let mut answer = agent.dispatch_request(cx, request).await?;
            track_handled(&shared, rule, session, &mut answer);
            Ok(answer.result)
        })
    }

    fn notification(&self, notification: IncomingNotification, rpc: NotificationContext) -> BoxFuture<'static, ()> {
        let agent = self.agent.clone();
        let shared = self.shared();
        Box::pin(async move {
            let Some(shared) = shared else { return };
            let IncomingNotification { method, params, .. } = notification;
            let read = Later::Notification(rpc.index());
            shared.settle_initialize(read).await;
            let ready = shared.ready_for(read);
            let Some(notification) =
                decode_notification_if::<S, S::ClientNotification>(&shared, &method, params.as_deref(), ready)
            else {
                return;
            };
            let cancels = (method == S::RULES.session_cancel).then(|| notification.session_id().map(str::to_owned));
            if let Some(Some(session)) = cancels {
                if shared.session_unsettled(read, &session) {
                    // A `session/new`, load or resume read before it is still opening
                    // the session, and its outcome decides. The wait runs on a task of
                    // its own (module docs of `endpoint`, "Pipelined messages"), which
                    // the connection waits for at shutdown.
                    let index = rpc.index();
                    rpc.spawn(async move {
                        shared.settle_session(read, &session).await;
                        cancel_session(agent, shared, method, session, index, notification).await;
                    });
                    return;
                }
                cancel_session(agent, shared, method, session, rpc.index(), notification).await;
                return;
            }
            let cx =
                shared.context(ClientConnection { shared: shared.clone(), turn: None }, None, CancellationToken::new());
            agent.dispatch_notification(cx, notification).await;
        })
    }

    fn request_read(&self, request: &mut IncomingRequest, rpc: &RequestContext) {
        if let Some(shared) = self.shared.get() {
            // Decoded here, once: the read-order bookkeeping needs its session, and
            // the handler takes the decoded request from `prepared`.
            let decoded = S::ClientRequest::decode(&request.method, request.params.as_deref());
            shared.note_read(&request.method, decoded.as_ref().ok().map(|d| &d.value), ReadPoint::of(rpc));
            request.prepared = Some(Box::new(decoded));
        }
    }
}

/// `session/cancel` number `index` (in read order) for `session`: ends its turn and
/// hands the notification to the agent, or reports it as naming an unknown session.
async fn cancel_session<S, A>(
    agent: Arc<A>,
    shared: Arc<Shared<S>>,
    method: String,
    session: String,
    index: u64,
    notification: S::ClientNotification,
) where
    S: Protocol,
    A: Dispatch<S::ClientRequest, S::ClientNotification, ClientConnection<S>>,
{
    if !shared.cancel_turn(&session, index) {
        shared.report(AcpEvent::UnknownSession { method, session_id: session });
        return;
    }
    let cx = shared.context(ClientConnection { shared: shared.clone(), turn: None }, None, CancellationToken::new());
    agent.dispatch_notification(cx, notification).await;
}

/// Decodes an incoming notification, reporting why it is dropped when it is.
pub(crate) fn decode_notification<S: Protocol, N: Payload>(
    shared: &Shared<S>,
    method: &str,
    params: Option<&RawValue>,
) -> Option<N> {
    decode_notification_if(shared, method, params, shared.is_ready())
}

/// [`decode_notification`] for a notification that counts as read after a
/// successful `initialize` when `ready`.
fn decode_notification_if<S: Protocol, N: Payload>(
    shared: &Shared<S>,
    method: &str,
    params: Option<&RawValue>,
    ready: bool,
) -> Option<N> {
    match N::decode(method, params) {
        Ok(decoded) => {
            if !ready {
                shared.report(AcpEvent::NotificationBeforeInitialize { method: method.to_owned() });
                return None;
            }
            shared.report_warnings(method, decoded.warnings);
            Some(decoded.value)
        }
        Err(DispatchError::Invalid(error)) => {
            shared.report(AcpEvent::InvalidNotification { method: method.to_owned(), error });
            None
        }
        Err(_) => {
            shared.report(AcpEvent::UnknownNotification { method: method.to_owned() });
            None
        }
    }
}

/// A request with its params decoded: by `request_read` as it was read, or here
/// when nothing was prepared.
struct PreparedRequest<R> {
    method: String,
    request: Result<Decoded<R>, DispatchError>,
}

fn prepared<R: Payload + 'static>(request: IncomingRequest) -> PreparedRequest<R> {
    let IncomingRequest { method, params, prepared, .. } = request;
    let request = match prepared.map(|p| p.downcast::<Result<Decoded<R>, DispatchError>>()) {
        Some(Ok(decoded)) => *decoded,
        _ => R::decode(&method, params.as_deref()),
    };
    PreparedRequest { method, request }
}

/// `initialize`: once, first; the answer carries the negotiated version.
async fn initialize<S, A>(
    agent: Arc<A>,
    shared: Arc<Shared<S>>,
    rpc: RequestContext,
    request: S::ClientRequest,
) -> Result<Box<RawValue>, ErrorObject>
where
    S: Protocol,
    A: Dispatch<S::ClientRequest, S::ClientNotification, ClientConnection<S>>,
{
    let since = ReadPoint::of(&rpc);
    if !shared.begin_initialize() {
        return Err(ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            "invalid request: `initialize` was already received on this connection",
        ));
    }
    // Both `initialize` messages are kept, typed: the generated rule code reads the
    // capabilities there (`clientCapabilities.fs.readTextFile`, `authMethods`).
    let Some(client_init) = request.initialize().cloned() else {
        return Err(ErrorObject::internal_error("internal error: `initialize` decoded as another request"));
    };
    let token = rpc.cancellation_token().clone();
    let cx = shared.context(ClientConnection { shared: shared.clone(), turn: None }, Some(rpc), token);
    // A panic (or a dropped future) in the handler must not leave the phase
    // `Initializing`: the guard resets it unless initialize completes.
    let mut reset = OnDrop(Some(|| shared.finish_initialize(None, None)));
    let outcome = agent.dispatch_request(cx, request).await;
    reset.0 = None;
    let answer = match outcome {
        Ok(answer) => answer,
        Err(error) => {
            shared.finish_initialize(None, None);
            return Err(error);
        }
    };
    let Some(Ok(mut own)) = answer.initialized.map(|typed| typed.downcast::<S::InitializeResponse>()) else {
        shared.finish_initialize(None, None);
        return Err(ErrorObject::internal_error("internal error: `initialize` answered without its typed result"));
    };
    // The agent answers the requested version when it speaks it, else its own;
    // this connection speaks exactly one, so the answer is always `S::VERSION`.
    let version = S::VERSION;
    let mut result = answer.result;
    if *S::protocol_version(&mut own) != version {
        *S::protocol_version(&mut own) = version;
        result = serde_json::value::to_raw_value(&*own).map_err(|e| {
            ErrorObject::internal_error(format!("internal error: cannot encode the `initialize` result: {e}"))
        })?;
    }
    let handshake = Arc::new(Handshake { client: client_init, agent: *own });
    shared.finish_initialize(Some(Negotiated { version, handshake }), Some(since));
    Ok(result)
}

/// `session/prompt` (v1): one turn per session at a time (a prompt read while an earlier
/// one runs waits for it); `session/cancel` ends it with `stopReason: "cancelled"`,
/// never with an error.
async fn prompt<S, A>(
    agent: Arc<A>,
    shared: Arc<Shared<S>>,
    rpc: RequestContext,
    request: S::ClientRequest,
    session: String,
) -> Result<Box<RawValue>, ErrorObject>
where
    S: Protocol,
    A: Dispatch<S::ClientRequest, S::ClientNotification, ClientConnection<S>>,
{
    let request_token = rpc.cancellation_token().clone();
    // Prompts pipelined on one session take turns in read order.
    shared.settle_prompts(Later::Request(rpc.index()), &session).await;
    let Some((number, turn)) = shared.begin_turn(&session, &request_token, rpc.notifications_before()) else {
        let data = serde_json::json!({ "sessionId": session });
        let error = ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!("invalid request: a prompt turn is already running in session `{session}`"),
        );
        return Err(match serde_json::value::to_raw_value(&data) {
            Ok(data) => error.with_data(data),
            Err(_) => error,
        });
    };
    // The turn ends however the handler ends: result, panic or a dropped future.
    let _end = OnDrop(Some(|| shared.end_turn(&session, number)));
    if turn.is_cancelled() && !request_token.is_cancelled() {
        // Cancelled by a `session/cancel` read right after the prompt, before the
        // turn started: the handler is not run.
        return Ok(cancelled_prompt());
    }
    let cx =
        shared.context(ClientConnection { shared: shared.clone(), turn: Some(turn.clone()) }, Some(rpc), turn.clone());
    let mut handler = pin!(agent.dispatch_request(cx.clone(), request));
    let outcome = tokio::select! {
        biased;
        outcome = &mut handler => Some(outcome),
        () = turn.cancelled() => {
            if cx.handles_cancellation_flag() { Some(handler.await) } else { None }
        }
    };
    if !turn.is_cancelled() || request_token.is_cancelled() {
        // Not cancelled by `session/cancel`; `$/cancel_request` and shutdown are
        // answered by the JSON-RPC layer.
        return outcome.map_or_else(|| Err(ErrorObject::request_cancelled()), |answer| answer.map(|a| a.result));
    }
    Ok(match outcome {
        Some(Ok(answer)) if stopped_cancelled(&answer.result) => answer.result,
        _ => cancelled_prompt(),
    })
}
