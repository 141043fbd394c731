//! Classifying one incoming line: the receive path shared by every ACP endpoint.
//!
//! [`classify`] takes the bytes of one framed line and the receiving side's view of
//! its own pending requests, and says what must happen: dispatch a request or a
//! notification, resolve a pending call, answer with an error, or ignore the line
//! with a [`Finding`]. It performs no I/O, so connections, the inspector and the
//! conformance vectors all run exactly this code.

use crate::{DecodeError, DecodeErrorKind, Decoded, DispatchError, Payload};
use agentproto_jsonrpc::{
    decode_call_eager, DecodeOptions, EagerParams, EnvelopeErrorKind, ErrorObject, Message, RequestId,
};

/// Which peer is receiving, with the payload types it decodes.
pub trait Role {
    /// Requests this side handles.
    type Request: Payload;
    /// Notifications this side handles.
    type Notification: Payload;
    /// Results this side receives for the requests it sent.
    type Response: Payload;
    /// Envelope rules for this protocol version (v1 allows a `null` request id).
    fn decode_options() -> DecodeOptions;
}

/// What to do with one incoming line.
#[derive(Debug)]
pub enum Incoming<R: Role> {
    /// Dispatch to the request handler, then answer.
    Request {
        /// The id to answer with.
        id: RequestId,
        /// The decoded params, with salvage warnings.
        request: Decoded<R::Request>,
    },
    /// Dispatch to the notification handler.
    Notification(Decoded<R::Notification>),
    /// Resolve the pending call `id` (a request of `method`).
    Response {
        /// The id of the call.
        id: RequestId,
        /// The method of the call, from the pending table.
        method: String,
        /// The decoded result, or the peer's error object.
        result: Result<Decoded<R::Response>, ErrorObject>,
    },
    /// Send this error response; nothing is dispatched.
    Reply {
        /// The error response to send.
        reply: Message,
        /// Why.
        finding: Finding,
    },
    /// The pending call `id` fails locally: its response was unusable. Nothing is sent.
    CallFailed {
        /// The id of the call.
        id: RequestId,
        /// The method of the call.
        method: String,
        /// What was wrong.
        error: CallFailure,
    },
    /// Nothing is dispatched and nothing is sent.
    Ignored(Finding),
}

/// Why a response could not resolve its call.
#[derive(Debug, Clone, PartialEq)]
pub enum CallFailure {
    /// The result does not match the method's result type.
    InvalidResult(DecodeError),
    /// The response object itself is malformed.
    InvalidResponse {
        /// The explanation.
        message: String,
        /// JSON path of the problem.
        path: String,
    },
}

impl CallFailure {
    /// JSON path of the problem.
    pub fn path(&self) -> &str {
        match self {
            Self::InvalidResult(e) => &e.path,
            Self::InvalidResponse { path, .. } => path,
        }
    }
}

/// Something noteworthy about a line that was not dispatched. The `code` strings
/// are stable and shared with the conformance vectors.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Finding {
    /// The line was not JSON, or not a JSON-RPC message (answered).
    BadEnvelope {
        /// The JSON-RPC code of the answer.
        code: i32,
        /// JSON path of the problem.
        path: String,
        /// The explanation.
        message: String,
    },
    /// A request for a method this side does not handle (answered with -32601).
    MethodNotFound(String),
    /// A request whose params are invalid (answered with -32602).
    InvalidParams(DecodeError),
    /// A notification whose params are invalid.
    InvalidNotification(DecodeError),
    /// A notification for a method this side does not handle.
    UnknownNotification(String),
    /// A response whose id is not pending.
    UnmatchedResponse(RequestId),
    /// A malformed response whose id is not pending.
    InvalidResponse(String),
}

impl Finding {
    /// The stable code of this finding.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadEnvelope { .. } => "bad-envelope",
            Self::MethodNotFound(_) => "method-not-found",
            Self::InvalidParams(_) => "invalid-params",
            Self::InvalidNotification(_) => "invalid-notification",
            Self::UnknownNotification(_) => "unknown-notification",
            Self::UnmatchedResponse(_) => "unmatched-response",
            Self::InvalidResponse(_) => "invalid-response",
        }
    }
}

/// Classifies one line. `pending` maps an id this side is waiting on to the method
/// of that request.
pub fn classify<R: Role>(line: &[u8], pending: impl Fn(&RequestId) -> Option<String>) -> Incoming<R> {
    // One pass for the common case (see `decode_call_eager`); its `None` means "take the
    // two-pass path", which gives the same answer for what the one pass accepts and is
    // the one that explains everything else.
    let mut one_pass = OnePass::<R> { request: None, notification: None };
    if let Some(call) = decode_call_eager(line, &R::decode_options(), &mut one_pass) {
        match (call.id, one_pass.request, one_pass.notification) {
            (Some(id), Some(request), None) => return Incoming::Request { id, request },
            (None, None, Some(notification)) => return Incoming::Notification(notification),
            // A request method sent as a notification or the reverse: the two-pass
            // path says what that is.
            _ => {}
        }
    }
    classify_two_pass(line, pending)
}

/// Decodes the params of the methods `R` handles while the envelope is read, and keeps
/// them.
struct OnePass<R: Role> {
    request: Option<Decoded<R::Request>>,
    notification: Option<Decoded<R::Notification>>,
}

impl<'de, R: Role> EagerParams<'de> for OnePass<R> {
    fn wants(&self, method: &str) -> bool {
        R::Request::knows(method) || R::Notification::knows(method)
    }

    fn decode<D: serde::Deserializer<'de>>(&mut self, method: &str, params: D) -> Result<(), D::Error> {
        if R::Request::knows(method) {
            self.request = Some(R::Request::decode_in(method, params)?);
        } else {
            self.notification = Some(R::Notification::decode_in(method, params)?);
        }
        Ok(())
    }
}

/// The envelope, then the params decoded from their text by method.
fn classify_two_pass<R: Role>(line: &[u8], pending: impl Fn(&RequestId) -> Option<String>) -> Incoming<R> {
    let message = match Message::decode_with(line, &R::decode_options()) {
        Ok(message) => message,
        Err(e) => {
            return match e.kind() {
                EnvelopeErrorKind::InvalidResponse => {
                    match e.id().and_then(|id| pending(id).map(|m| (id.clone(), m))) {
                        Some((id, method)) => {
                            let error = CallFailure::InvalidResponse {
                                message: e.message().to_owned(),
                                path: if e.path().is_empty() { "$".to_owned() } else { e.path().to_owned() },
                            };
                            Incoming::CallFailed { id, method, error }
                        }
                        None => Incoming::Ignored(Finding::InvalidResponse(e.message().to_owned())),
                    }
                }
                EnvelopeErrorKind::InvalidNotification => {
                    Incoming::Ignored(Finding::InvalidNotification(DecodeError::new(
                        e.path(),
                        DecodeErrorKind::WrongType,
                        "an object or an array",
                        e.params_found().unwrap_or("a value of another type"),
                    )))
                }
                _ => match e.reply() {
                    Some(reply) => Incoming::Reply {
                        reply,
                        finding: Finding::BadEnvelope {
                            code: e.code().0,
                            path: e.path().to_owned(),
                            message: e.message().to_owned(),
                        },
                    },
                    None => Incoming::Ignored(Finding::InvalidResponse(e.message().to_owned())),
                },
            };
        }
    };
    match message {
        Message::Request { id, method, params } => match R::Request::decode(&method, params.as_deref()) {
            Ok(request) => Incoming::Request { id, request },
            Err(e) => {
                let reply = Message::response(id, Err(e.to_error_object(&method)));
                let finding = match e {
                    DispatchError::Invalid(d) => Finding::InvalidParams(d),
                    _ => Finding::MethodNotFound(method),
                };
                Incoming::Reply { reply, finding }
            }
        },
        Message::Notification { method, params } => match R::Notification::decode(&method, params.as_deref()) {
            Ok(notification) => Incoming::Notification(notification),
            Err(DispatchError::Invalid(d)) => Incoming::Ignored(Finding::InvalidNotification(d)),
            Err(_) => Incoming::Ignored(Finding::UnknownNotification(method)),
        },
        Message::Response { id, result } => {
            let Some(method) = pending(&id) else {
                return Incoming::Ignored(Finding::UnmatchedResponse(id));
            };
            match result {
                Err(error) => Incoming::Response { id, method, result: Err(error) },
                Ok(raw) => match R::Response::decode(&method, Some(&raw)) {
                    Ok(decoded) => Incoming::Response { id, method, result: Ok(decoded) },
                    Err(DispatchError::Invalid(d)) => {
                        Incoming::CallFailed { id, method, error: CallFailure::InvalidResult(d) }
                    }
                    Err(_) => Incoming::CallFailed {
                        id,
                        method: method.clone(),
                        error: CallFailure::InvalidResponse {
                            message: format!("no result type for method {method:?}"),
                            path: "$".to_owned(),
                        },
                    },
                },
            }
        }
    }
}

/// The agent side of ACP v1.
#[derive(Debug, Clone, Copy)]
pub struct AgentV1;

impl Role for AgentV1 {
    type Request = crate::v1::ClientRequest;
    type Notification = crate::v1::ClientNotification;
    type Response = crate::v1::ClientResponse;
    fn decode_options() -> DecodeOptions {
        DecodeOptions::default().allow_null_id(crate::v1::RULES.null_request_id)
    }
}

/// The client side of ACP v1.
#[derive(Debug, Clone, Copy)]
pub struct ClientV1;

impl Role for ClientV1 {
    type Request = crate::v1::AgentRequest;
    type Notification = crate::v1::AgentNotification;
    type Response = crate::v1::AgentResponse;
    fn decode_options() -> DecodeOptions {
        DecodeOptions::default().allow_null_id(crate::v1::RULES.null_request_id)
    }
}
