//! The server's gRPC binding: `lf.a2a.v1.A2AService` over HTTP/2, a tower service
//! that tonic's transport serves (or any HTTP/2 server that speaks gRPC).
//!
//! Each call goes the way the other bindings' calls go: the request message is
//! decoded from protobuf into the typed request by the generated codec (a field that
//! is wrong is named by its JSON path and kind, as on JSON-RPC), the call context comes from the
//! metadata (`authorization` and API keys through the server's authenticator,
//! `a2a-version`, `a2a-extensions`, `idempotency-key`, `last-event-id`) and the tenant
//! from the request's `tenant` field, then the binding-neutral core runs it. Its typed
//! answers are encoded as protobuf (a value a store holds only as ProtoJSON is decoded
//! once first); streams send one `StreamResponse` per event.
//!
//! A streamed event's charge against the stream budget (see [`crate::stream::Charge`])
//! is kept until h2 drops the data frame it was encoded into, as on the SSE bindings:
//! tonic encodes the events it takes into one buffer and hands that buffer on whole, so
//! the charges of the events taken since the last data frame ride on the next one
//! ([`ChargedBody`]). They are bound to the connection's closer: a subscriber cut off
//! while h2 holds its frames (its client reads nothing, so they are never written) has
//! its connection closed, the one way to free them.
//!
//! How a stream ends when the core cannot go on: an error is the stream's status; a
//! reader too slow for the event buffer gets `ABORTED` and one whose resume point is
//! no longer in the log gets `DATA_LOSS` — both resubscribe, and `SubscribeToTask`
//! begins with the task as it is now. The rate limit layer of the HTTP bindings does
//! not apply here.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::Frame;
use tokio_util::sync::CancellationToken;

use futures::{Stream, StreamExt};
use tonic::server::{Grpc, NamedService, ServerStreamingService, UnaryService};
use tonic::{Request as GrpcRequest, Response as GrpcResponse, Status};

use agentproto_codec::DecodeError;

use super::codec::{refusal, ProtoCodec};
use super::listen::GrpcConn;
use super::wire::Proto;
use super::{operation_at, status};
use crate::errors::{A2aError, ErrorKind, ErrorTable};
use crate::executor::AgentExecutor;
use crate::generated::v1_proto::{
    decode_request, encode_send_message_response_message, encode_send_message_response_task,
};
use crate::server::auth::Authenticator;
use crate::server::call::{call_context_of, version, Binding, CallRules};
use crate::server::core::Reply;
use crate::server::core::{Answer, Core, StreamOut};
use crate::server::layers::Authentication;
use crate::server::watch::Tracked;
use crate::store::{Body, EventBody};
use crate::stream::{ride, Charge};
use crate::v1::{Operation, Request};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Events = Pin<Box<dyn Stream<Item = Result<Vec<u8>, Status>> + Send>>;

/// The A2A gRPC service of one server ([`crate::server::A2aServer::grpc_service`]).
pub struct GrpcService<E> {
    shared: Arc<Shared<E>>,
    auth: Option<Arc<dyn Authenticator>>,
}

/// What every call of the service reads: the core and the binding's options.
struct Shared<E> {
    core: Arc<Core<E>>,
    calls: CallRules,
    table: ErrorTable,
    max_message_bytes: usize,
}

impl<E> Clone for GrpcService<E> {
    fn clone(&self) -> Self {
        GrpcService { shared: Arc::clone(&self.shared), auth: self.auth.clone() }
    }
}

impl<E> std::fmt::Debug for GrpcService<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcService").finish_non_exhaustive()
    }
}

impl<E: AgentExecutor> GrpcService<E> {
    /// The service of `core`, reading calls and sizing messages as `options` say for HTTP.
    /// The service of `core`: calls read by `calls`, errors under `table`, messages up to
    /// `max_message_bytes` (the server gives the limits its HTTP bindings have).
    pub(crate) fn new(
        core: Arc<Core<E>>,
        calls: CallRules,
        table: ErrorTable,
        max_message_bytes: usize,
        auth: Option<Arc<dyn Authenticator>>,
    ) -> Self {
        GrpcService { shared: Arc::new(Shared { core, calls, table, max_message_bytes }), auth }
    }

    fn table(&self) -> ErrorTable {
        self.shared.table
    }

    /// The largest request message read.
    pub(crate) fn max_message_bytes(&self) -> usize {
        self.shared.max_message_bytes
    }
}

impl<E> NamedService for GrpcService<E> {
    const NAME: &'static str = super::SERVICE;
}

impl<E, B> tower_service::Service<http::Request<B>> for GrpcService<E>
where
    E: AgentExecutor,
    B: http_body::Body + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        // On a connection of our own listener, the call is in progress until its answer
        // is sent (and its request is arriving until it has all come), for the
        // connection's watchdog (`listen.rs`).
        let Some(conn) = req.extensions().get::<GrpcConn>().cloned() else { return self.answer(req) };
        let in_flight = conn.watch.begin();
        let req = req.map(|body| conn.watch.arriving(Box::pin(body)));
        let answer = self.answer(req);
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|inner| tonic::body::Body::new(Tracked { inner, in_flight: Some(in_flight) })))
        })
    }
}

impl<E: AgentExecutor> GrpcService<E> {
    /// The answer to one call.
    fn answer<B>(&self, mut req: http::Request<B>) -> BoxFuture<Result<http::Response<tonic::body::Body>, Infallible>>
    where
        B: http_body::Body + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
    {
        let table = self.table();
        let Some(op) = operation_at(req.uri().path()) else {
            let e = A2aError::new(ErrorKind::MethodNotFound).with_message(format!(
                "{} is not a method of {}",
                req.uri().path(),
                super::SERVICE
            ));
            return Box::pin(async move { Ok(status(&e, table).into_http()) });
        };
        if let Some(auth) = &self.auth {
            let outcome = auth.authenticate(req.headers(), None);
            req.extensions_mut().insert(Authentication::new(outcome));
        }
        let call = Call { shared: Arc::clone(&self.shared), op };
        let limit = self.shared.max_message_bytes;
        Box::pin(async move {
            let mut grpc = Grpc::new(ProtoCodec::new(op, read_request, table))
                .max_decoding_message_size(limit)
                .max_encoding_message_size(usize::MAX);
            if !op.streaming() {
                return Ok(grpc.unary(call, req).await);
            }
            let mut response = grpc.server_streaming(call, req).await;
            Ok(match response.extensions_mut().remove::<Charges>() {
                Some(charges) => response.map(|inner| tonic::body::Body::new(ChargedBody { inner, charges })),
                None => response,
            })
        })
    }
}

/// A request message as the codec read it: the typed request, or why it is not one
/// (answered once the call's version is checked, in the order the other bindings
/// check them).
type Incoming = Result<Request, DecodeError>;

/// The server's reader of request messages.
fn read_request(op: Operation, bytes: &[u8]) -> Result<Incoming, DecodeError> {
    Ok(decode_request(op, bytes, "$"))
}

/// A unary answer as protobuf.
fn encode_reply(reply: &Reply) -> Result<Vec<u8>, A2aError> {
    Ok(match reply {
        Reply::SendTask(task) => encode_send_message_response_task(task),
        Reply::SendMessage(message) => encode_send_message_response_message(message),
        Reply::Task(body) => encode_body(body)?,
        Reply::Tasks(r) => r.encode_to_vec(),
        Reply::PushConfig(body) => encode_body(body)?,
        Reply::PushConfigs(r) => r.encode_to_vec(),
        Reply::Card(card) => card.encode_to_vec(),
        Reply::Empty => Vec::new(),
    })
}

/// A streamed event as protobuf.
fn encode_event(body: &EventBody) -> Result<Vec<u8>, A2aError> {
    encode_body(body)
}

/// A stored value as protobuf: encoded from the value when the body holds it, else
/// decoded once from the ProtoJSON the store kept.
fn encode_body<T>(body: &Body<T>) -> Result<Vec<u8>, A2aError>
where
    T: Proto + serde::Serialize + serde::de::DeserializeOwned + agentproto_codec::Wants,
{
    if let Some(value) = body.decoded() {
        return Ok(value.encode_to_vec());
    }
    let bytes = body.bytes().map_err(A2aError::from)?;
    let value = agentproto_codec::decode_slice::<T>(&bytes, "$")
        .map_err(|e| A2aError::new(ErrorKind::Internal).with_message(format!("a stored value does not decode: {e}")))?;
    Ok(value.value.encode_to_vec())
}

/// One call of one operation.
struct Call<E> {
    shared: Arc<Shared<E>>,
    op: Operation,
}

impl<E: AgentExecutor> Call<E> {
    /// Runs the call through the core; `Err` is the call's status.
    async fn run(self, request: GrpcRequest<Incoming>) -> Result<Answer, Status> {
        let table = self.shared.table;
        let fail = |e: A2aError| status(&e, table);
        let (metadata, extensions, decoded) = request.into_parts();
        let headers = metadata.into_headers();
        // Always 1.0 or an error on this binding.
        version(&self.shared.calls, &headers, None, Binding::Grpc).map_err(fail)?;
        let request = decoded.map_err(|e| fail(refusal(&e)))?;
        let cx =
            call_context_of(&self.shared.calls, &headers, extensions.get::<Authentication>(), None, request.tenant())
                .map_err(fail)?;
        self.shared.core.handle(cx, request).await.map_err(fail)
    }
}

impl<E: AgentExecutor> UnaryService<Incoming> for Call<E> {
    type Response = Vec<u8>;
    type Future = BoxFuture<Result<GrpcResponse<Vec<u8>>, Status>>;

    fn call(&mut self, request: GrpcRequest<Incoming>) -> Self::Future {
        let call = Call { shared: Arc::clone(&self.shared), op: self.op };
        Box::pin(async move {
            let table = call.shared.table;
            match call.run(request).await? {
                Answer::Value(reply) => Ok(GrpcResponse::new(encode_reply(&reply).map_err(|e| status(&e, table))?)),
                Answer::Stream(_) => Err(status(
                    &A2aError::new(ErrorKind::Internal).with_message("a unary operation was answered with a stream"),
                    table,
                )),
            }
        })
    }
}

impl<E: AgentExecutor> ServerStreamingService<Incoming> for Call<E> {
    type Response = Vec<u8>;
    type ResponseStream = Events;
    type Future = BoxFuture<Result<GrpcResponse<Events>, Status>>;

    fn call(&mut self, request: GrpcRequest<Incoming>) -> Self::Future {
        let call = Call { shared: Arc::clone(&self.shared), op: self.op };
        let closer = request.extensions().get::<GrpcConn>().map(|conn| conn.close.clone());
        Box::pin(async move {
            let table = call.shared.table;
            let shutdown = call.shared.core.shutdown.clone();
            let events = match call.run(request).await? {
                Answer::Stream(events) => events,
                Answer::Value(_) => {
                    return Err(status(
                        &A2aError::new(ErrorKind::Internal)
                            .with_message("a streaming operation was answered with a single value"),
                        table,
                    ))
                }
            };
            // The first item is awaited here, so a failure at once is the call's
            // status before any message, as on the SSE bindings.
            let mut events = events.fuse();
            let first = events.next().await;
            if let Some(StreamOut::Error(e)) = &first {
                return Err(status(e, table));
            }
            let charges = Charges::default();
            let taken = charges.clone();
            let items = futures::stream::iter(first)
                .chain(events)
                .take_until(async move { shutdown.cancelled().await })
                // An error ends the call: tonic sends it as the trailers and stops.
                .map(move |mut item| {
                    taken.add(item.take_charge(), closer.as_ref());
                    event(item, table)
                });
            let mut response = GrpcResponse::new(Box::pin(items) as Events);
            response.extensions_mut().insert(charges);
            Ok(response)
        })
    }
}

/// One item of the core's stream as a message or as the status that ends the call.
fn event(item: StreamOut, table: ErrorTable) -> Result<Vec<u8>, Status> {
    match item {
        StreamOut::Event { body, .. } => encode_event(&body).map_err(|e| status(&e, table)),
        StreamOut::Gap { after, resumed_at } => Err(Status::data_loss(format!(
            "events after {after} up to {resumed_at} are no longer held; subscribe again for the task as it is now"
        ))),
        StreamOut::Lagged => {
            Err(Status::aborted("this reader fell behind the task's events; subscribe again to resume"))
        }
        StreamOut::Error(e) => Err(status(&e, table)),
    }
}

/// The charges of the events a streaming call's encoder has taken and not yet handed on
/// in a data frame (a response extension, from the call to [`GrpcService::answer`]).
#[derive(Clone, Default)]
struct Charges(Arc<Mutex<Vec<Charge>>>);

impl Charges {
    /// Keeps `charge` (bound to the connection's closer) for the next data frame.
    fn add(&self, charge: Charge, closer: Option<&CancellationToken>) {
        if charge.bytes() == 0 {
            return;
        }
        if let Some(closer) = closer {
            charge.bind(closer);
        }
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(charge);
    }

    fn take(&self) -> Vec<Charge> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A streaming call's response body whose data frames carry the charges of the events
/// encoded into them. tonic takes events from the stream and encodes them into its
/// buffer until it hands the whole buffer on as one frame, so every charge taken before
/// a frame belongs to an event in it (or in one before it, already handed on).
struct ChargedBody {
    inner: tonic::body::Body,
    charges: Charges,
}

impl http_body::Body for ChargedBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        let Poll::Ready(Some(Ok(frame))) = polled else { return polled };
        let frame = frame.map_data(|data| {
            let mut charges = self.charges.take();
            if let [charge] = charges.as_mut_slice() {
                charge.resize(data.len()); // one event and its 5-byte prefix
            }
            ride(data, charges)
        });
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
