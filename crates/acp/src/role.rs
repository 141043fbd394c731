//! What both roles share: the [`Protocol`] a connection speaks, the handler
//! [`Context`], the local error type [`AcpError`], the options and the events.
//!
//! The per-method pieces (handler traits, dispatch, typed calls) are generated into
//! each surface module; this file holds the generic machinery they call.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentproto_codec::{DecodeError, Warning};
use agentproto_jsonrpc::{CallError, ConnectionEvent, ConnectionOptions, ErrorObject, RequestContext};
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

pub use crate::acp_error::AcpError;
use crate::{MethodInfo, Payload};

/// One ACP surface (wire version, stable or unstable): the types a connection
/// decodes. Implemented by the generated markers `v1::V1`, `v1_unstable::V1Unstable`,
/// `v2::V2` and `v2_unstable::V2Unstable`.
pub trait Protocol: Sized + Send + Sync + 'static {
    /// The wire `protocolVersion`.
    const VERSION: u16;
    /// Whether the UNSTABLE methods and fields are included.
    const UNSTABLE: bool;
    /// The client's `initialize` params.
    type InitializeRequest: Clone + fmt::Debug + Send + Sync + 'static;
    /// The agent's `initialize` result.
    type InitializeResponse: serde::Serialize + Clone + fmt::Debug + Send + Sync + 'static;
    /// Requests the client sends (the agent handles).
    type ClientRequest: Payload + crate::rules::RequestRules<Self> + Send + 'static;
    /// Notifications the client sends.
    type ClientNotification: Payload + Send + 'static;
    /// Requests the agent sends (the client handles).
    type AgentRequest: Payload + crate::rules::RequestRules<Self> + Send + 'static;
    /// Notifications the agent sends.
    type AgentNotification: Payload + Send + 'static;
    /// The method table, with each method's rules.
    const METHODS: &'static [MethodInfo];
    /// The lifecycle method names and the capability members of `initialize`.
    const RULES: &'static crate::rules::SurfaceRules;
    /// The `protocolVersion` of an `initialize` result.
    fn protocol_version(result: &mut Self::InitializeResponse) -> &mut u16;
}

/// Runs the typed handler of one role: generated for every type implementing a
/// surface's `Agent` or `Client` trait. `R` and `N` are the incoming request and
/// notification enums, `P` the connection to the other side.
pub trait Dispatch<R, N, P>: Send + Sync + 'static {
    /// Calls the handler of `request` and encodes its result.
    fn dispatch_request(self: Arc<Self>, cx: Context<P>, request: R)
        -> BoxFuture<'static, Result<Answer, ErrorObject>>;
    /// Calls the handler of `notification`.
    fn dispatch_notification(self: Arc<Self>, cx: Context<P>, notification: N) -> BoxFuture<'static, ()>;
}

/// What a handler receives besides its params: the connection to the other side
/// and the cancellation of the message being handled.
#[derive(Clone)]
pub struct Context<P> {
    pub(crate) peer: P,
    pub(crate) rpc: Option<RequestContext>,
    pub(crate) token: CancellationToken,
    pub(crate) handles_cancellation: Arc<AtomicBool>,
    pub(crate) strict: bool,
}

impl<P: fmt::Debug> fmt::Debug for Context<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("peer", &self.peer)
            .field("request_id", &self.rpc.as_ref().map(RequestContext::id))
            .field("cancelled", &self.token.is_cancelled())
            .finish()
    }
}

impl<P> Context<P> {
    /// The connection to the other side: call it, notify it. Inside a prompt turn
    /// (agent side), its calls end with [`AcpError::Cancelled`] when the turn is
    /// cancelled, and the pending request is cancelled with `$/cancel_request`.
    pub fn peer(&self) -> &P {
        &self.peer
    }

    /// The id of the request being handled (`None` in a notification handler).
    pub fn request_id(&self) -> Option<&crate::RequestId> {
        self.rpc.as_ref().map(RequestContext::id)
    }

    /// Fires when the request is cancelled: by `$/cancel_request`, by
    /// `session/cancel` for a prompt turn (agent side) or a permission request
    /// (client side), or because the connection is shutting down.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.token
    }

    /// Whether [`Context::cancellation_token`] has fired.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// By default a cancelled request's handler is dropped and the connection
    /// answers for it (`-32800`, or `stopReason: "cancelled"` for a prompt, or the
    /// `cancelled` outcome for a permission request). After this call the handler
    /// keeps running and its own return value is sent instead (a prompt's stop
    /// reason is still forced to `cancelled`). Call it before the first `.await`.
    pub fn handle_cancellation(&self) {
        self.handles_cancellation.store(true, Ordering::SeqCst);
        if let Some(rpc) = &self.rpc {
            rpc.handle_cancellation();
        }
    }

    /// Whether outgoing messages are validated (see [`AcpOptions::strict`]).
    pub fn strict(&self) -> bool {
        self.strict
    }

    pub(crate) fn handles_cancellation_flag(&self) -> bool {
        self.handles_cancellation.load(Ordering::SeqCst)
    }
}

/// Encodes a handler's result; with outgoing validation the bytes are decoded again as the
/// method's result type and a violation becomes `-32603` (used by generated code).
#[doc(hidden)]
pub fn encode_reply<T: serde::Serialize + for<'de> serde::Deserialize<'de> + agentproto_codec::Wants>(
    value: &T,
    strict: bool,
    method: &'static str,
) -> Result<Box<RawValue>, ErrorObject> {
    let raw = serde_json::value::to_raw_value(value).map_err(|e| {
        ErrorObject::internal_error(format!("internal error: cannot encode the `{method}` result: {e}"))
    })?;
    if strict {
        if let Err(problem) = check_outgoing::<T>(raw.get(), "$.result") {
            return Err(ErrorObject::internal_error(format!(
                "internal error: the `{method}` handler returned an invalid result: {problem}"
            )));
        }
    }
    Ok(raw)
}

/// A handler's encoded result with what the connection's state needs from it, read
/// from the typed value before it was encoded (nothing is parsed back).
#[doc(hidden)]
pub struct Answer {
    /// The encoded result.
    pub result: Box<RawValue>,
    /// The session a success created (`session/new`).
    pub created: Option<String>,
    /// What the result announced for the session it opened (the session gates' members).
    pub announced: Vec<&'static str>,
    /// The typed result of `initialize` (the surface's `InitializeResponse`).
    pub initialized: Option<Box<dyn std::any::Any + Send>>,
}

impl Answer {
    /// An answer that changes nothing (an extension method's).
    pub fn raw(result: Box<RawValue>) -> Answer {
        Answer { result, created: None, announced: Vec::new(), initialized: None }
    }
}

/// Encodes the result of the request `M` (see [`encode_reply`]) and keeps what its
/// rules read from it (used by generated code).
#[doc(hidden)]
pub fn answer<M: crate::RequestMethod>(result: M::Result, strict: bool) -> Result<Answer, ErrorObject> {
    let raw = encode_reply(&result, strict, M::NAME)?;
    let created = M::created_session(&result).map(str::to_owned);
    let announced = M::announced(&result);
    let initialized = (M::NAME == <M::Surface as Protocol>::RULES.initialize)
        .then(|| Box::new(result) as Box<dyn std::any::Any + Send>);
    Ok(Answer { result: raw, created, announced, initialized })
}

/// Decodes outgoing bytes as `T` and requires a clean decode (no salvage).
pub(crate) fn check_outgoing<T: for<'de> serde::Deserialize<'de> + agentproto_codec::Wants>(
    text: &str,
    root: &'static str,
) -> Result<(), DecodeError> {
    let decoded = agentproto_codec::decode::<T>(text, root)?;
    match decoded.warnings.into_iter().next() {
        None => Ok(()),
        Some(warning) => Err(warning.error),
    }
}

impl AcpError {
    /// The peer's error object, if the peer answered with one.
    pub fn as_rpc(&self) -> Option<&ErrorObject> {
        match self {
            AcpError::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    pub(crate) fn from_call(method: &str, error: CallError) -> AcpError {
        match error {
            CallError::Rpc(error) => AcpError::Rpc { method: method.to_owned(), error },
            error => AcpError::Connection { method: method.to_owned(), error: Arc::new(error) },
        }
    }
}

/// Lets a handler use `?` on its own calls to the peer. A call that failed is an
/// internal error of the handler (-32603), naming the call and, for an error the peer
/// answered, its code and message in `data.cause` — the peer's code is not passed on
/// as the handler's own (a -32601 from the peer does not mean this method is
/// missing). A call abandoned because the turn was cancelled is -32800.
impl From<AcpError> for ErrorObject {
    fn from(error: AcpError) -> ErrorObject {
        let mut data = serde_json::json!({ "method": error.method() });
        if let Some(cause) = error.cause() {
            data["cause"] = serde_json::json!({ "code": cause.code.0, "message": cause.message });
        }
        let object = ErrorObject::new(error.handler_code(), error.to_string());
        match serde_json::value::to_raw_value(&data) {
            Ok(data) => object.with_data(data),
            Err(_) => object,
        }
    }
}

/// Something an ACP connection noticed and did not pass to a handler, or passed
/// on after salvaging it. Reported to [`AcpOptions::observer`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AcpEvent {
    /// From the JSON-RPC layer: bad lines, skipped non-JSON lines, unmatched
    /// responses, handler panics, end of input.
    Connection(ConnectionEvent),
    /// A message was accepted after dropping malformed optional values.
    Salvaged {
        /// The method.
        method: String,
        /// What was dropped, with paths.
        warnings: Vec<Warning>,
    },
    /// A notification whose params are invalid was dropped.
    InvalidNotification {
        /// The method.
        method: String,
        /// Where and what.
        error: DecodeError,
    },
    /// A notification of a method this side does not handle was ignored.
    UnknownNotification {
        /// The method.
        method: String,
    },
    /// A notification arrived before `initialize` completed and was ignored.
    NotificationBeforeInitialize {
        /// The method.
        method: String,
    },
    /// A notification named a session this side does not know. `session/update`
    /// is still delivered (agents legitimately send updates before the
    /// `session/new` response); `session/cancel` is ignored.
    UnknownSession {
        /// The method.
        method: String,
        /// The session id.
        session_id: String,
    },
    /// Outgoing validation ([`AcpOptions::strict`]) refused a notification;
    /// nothing was sent.
    InvalidOutgoing {
        /// The method.
        method: String,
        /// Where and what.
        error: DecodeError,
    },
}

/// A callback for [`AcpEvent`]s; runs inline on the connection's tasks.
pub type AcpObserver = Arc<dyn Fn(&AcpEvent) + Send + Sync>;

/// How an ACP connection behaves: the JSON-RPC limits plus the ACP-level checks.
///
/// Limits and timeouts live in [`AcpOptions::connection`]: the maximum line size
/// (64 MiB), the bounded queues and backlog, the per-call timeout (none by
/// default), the shutdown grace (5 s); see
/// [`ConnectionOptions`](agentproto_jsonrpc::ConnectionOptions). ACP v1 allows
/// `"id": null`, so this sets [`ConnectionOptions::allow_null_id`].
#[derive(Clone)]
#[non_exhaustive]
pub struct AcpOptions {
    /// The JSON-RPC connection options.
    pub connection: ConnectionOptions,
    /// Validate outgoing messages: everything this side sends (params of calls
    /// and notifications, results of handlers) is decoded again with the
    /// receiving side's generated decoder before it goes out; a violation fails
    /// locally (calls, [`AcpError::InvalidParams`]), is reported and dropped
    /// (notifications, [`AcpEvent::InvalidOutgoing`]) or becomes `-32603`
    /// (handler results). **Default: on, in debug and release builds alike**, so
    /// nothing invalid reaches the wire.
    ///
    /// The opt-out is a hot-path switch: `strict(false)` skips the second decode
    /// (about the cost of decoding the message once more) for a program whose
    /// outgoing values are known to be valid. The typed API already rules out
    /// most invalid values; what only this check catches are the values the types
    /// keep for forward compatibility, such as an `Unknown` union variant or raw
    /// JSON, that the receiving side's decoder would refuse or only salvage.
    pub strict: bool,
    /// How long a spawned agent may take to exit after its stdin is closed
    /// before it is killed. Default 2 s.
    pub exit_grace: Duration,
    /// Linux only: the kernel SIGKILLs a spawned agent when the thread that
    /// spawned it ends, which includes this whole process being killed
    /// (`PR_SET_PDEATHSIG`, see [`agentproto_process::die_with_parent`] for its
    /// limits: it follows the spawning *thread*, so spawn from a thread that
    /// outlives the agent, e.g. a runtime worker, not a `spawn_blocking` one;
    /// and it reaches the direct child only). Default off.
    pub die_with_parent: bool,
    /// Receives every [`AcpEvent`]. Default none.
    pub observer: Option<AcpObserver>,
}

impl Default for AcpOptions {
    fn default() -> Self {
        AcpOptions {
            // `allow_null_id` is set per surface from its rules when a connection starts.
            connection: ConnectionOptions::default(),
            strict: true,
            exit_grace: Duration::from_secs(2),
            die_with_parent: false,
            observer: None,
        }
    }
}

impl fmt::Debug for AcpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AcpOptions")
            .field("connection", &self.connection)
            .field("strict", &self.strict)
            .field("exit_grace", &self.exit_grace)
            .field("die_with_parent", &self.die_with_parent)
            .field("observer", &self.observer.as_ref().map(|_| "Fn"))
            .finish()
    }
}

impl AcpOptions {
    /// Sets [`AcpOptions::connection`] (`allow_null_id` is forced on for v1).
    pub fn connection(mut self, connection: ConnectionOptions) -> Self {
        self.connection = connection;
        self
    }

    /// Sets [`AcpOptions::strict`]: `true` (the default) validates every outgoing
    /// message, `false` sends without the second decode (the hot-path opt-out).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Sets [`AcpOptions::exit_grace`].
    pub fn exit_grace(mut self, grace: Duration) -> Self {
        self.exit_grace = grace;
        self
    }

    /// Sets [`AcpOptions::die_with_parent`].
    pub fn die_with_parent(mut self, die: bool) -> Self {
        self.die_with_parent = die;
        self
    }

    /// Sets [`AcpOptions::observer`].
    pub fn observer(mut self, observer: impl Fn(&AcpEvent) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// An observer that prints every event on stderr, one line each.
    pub fn log_to_stderr(self, prefix: &'static str) -> Self {
        self.observer(move |event| eprintln!("{prefix}: {event:?}"))
    }
}

#[cfg(test)]
mod error_tests {
    use super::*;
    use agentproto_jsonrpc::ErrorCode;

    #[test]
    fn outgoing_messages_are_validated_by_default_in_every_build() {
        assert!(AcpOptions::default().strict, "the default must validate outgoing messages");
        assert!(!AcpOptions::default().strict(false).strict, "the opt-out must turn it off");
    }

    #[test]
    fn an_invalid_handler_result_becomes_an_internal_error_when_validated() {
        use crate::v1::{ContentBlock, PromptRequest};
        let unknown = ContentBlock::Unknown(agentproto_codec::RawJson::from_text(r#"{"type":"hologram"}"#).unwrap());
        let value = PromptRequest::new("s1", vec![unknown]);
        let refused = encode_reply(&value, AcpOptions::default().strict, "session/prompt").unwrap_err();
        assert_eq!(refused.code, ErrorCode::INTERNAL_ERROR);
        assert!(refused.message.contains("$.result.prompt[0]"), "{}", refused.message);
        let sent = encode_reply(&value, false, "session/prompt").unwrap();
        assert!(sent.get().contains("hologram"));
    }

    #[test]
    fn a_failed_peer_call_becomes_an_internal_error_naming_it() {
        let peer = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "method not found");
        let object = ErrorObject::from(AcpError::Rpc { method: "fs/read_text_file".to_owned(), error: peer });
        assert_eq!(object.code, ErrorCode::INTERNAL_ERROR);
        let data: serde_json::Value = serde_json::from_str(object.data.unwrap().get()).unwrap();
        assert_eq!(data["method"], "fs/read_text_file");
        assert_eq!(data["cause"]["code"], -32601);
        let cancelled = ErrorObject::from(AcpError::Cancelled { method: "terminal/output".to_owned() });
        assert_eq!(cancelled.code, ErrorCode::REQUEST_CANCELLED);
    }
}
