//! The client's gRPC transport: the operations as gRPC calls on a tonic channel. The
//! client hands it a request's ProtoJSON, which is checked by the generated decoder
//! (nothing invalid goes out) and sent as protobuf by the generated codec; answers are
//! decoded from protobuf the same way and handed back as ProtoJSON, so the client's
//! typed API, its retries and its resumable streams are the same on every binding.
//!
//! What differs from the HTTP bindings: the channel is HTTP/2 without TLS for `http://`
//! URLs and a bare `host:port` (the form agent cards give gRPC interfaces), TLS is not
//! built in; `idle_timeout` is not applied (HTTP/2 keep-alive pings watch the
//! connection instead); streamed events carry no ids, so a resumed stream starts again
//! from the task as it is (`SubscribeToTask` sends it first).

use std::time::Duration;

use http::uri::PathAndQuery;
use http::HeaderMap;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use super::codec::ProtoCodec;
use super::path;
use crate::client::{ClientError, ClientOptions};
use crate::errors::ErrorTable;
use crate::generated::v1_proto::{encode_request, response_to_json};
use crate::retry::{Failure, Repeat, RetryPolicy};
use crate::v1::{Operation, Request};

/// The stream of ProtoJSON events of a streaming call.
pub(crate) type Events = tonic::codec::Streaming<Vec<u8>>;

/// A lazily connecting channel to `url` (`http://host:port`, or a bare `host:port`).
pub(crate) fn channel(url: &str, opts: &ClientOptions) -> Result<Channel, ClientError> {
    let url = if url.contains("://") { url.to_owned() } else { format!("http://{url}") };
    let endpoint = Endpoint::from_shared(url.clone())
        .map_err(|e| ClientError::InvalidRequest(format!("gRPC interface URL {url:?}: {e}")))?;
    Ok(endpoint
        .connect_timeout(opts.connect_timeout)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true)
        .connect_lazy())
}

/// The protobuf bytes of the request of `op` whose ProtoJSON is `json`, checked on
/// the way.
fn encoded(op: Operation, json: &[u8]) -> Result<Vec<u8>, ClientError> {
    let request = Request::decode(op, json, "$")
        .map_err(|e| ClientError::InvalidRequest(format!("the {} request is not valid: {e}", op.name())))?;
    Ok(encode_request(&request.value))
}

/// The client's reader of answers: their ProtoJSON.
fn read_answer(op: Operation, bytes: &[u8]) -> Result<Vec<u8>, agentproto_codec::DecodeError> {
    response_to_json(op, bytes, "$")
}

fn codec(op: Operation) -> ProtoCodec<Vec<u8>> {
    ProtoCodec::new(op, read_answer, ErrorTable::default())
}

fn request(body: Vec<u8>, headers: HeaderMap, timeout: Option<Duration>) -> tonic::Request<Vec<u8>> {
    let mut req = tonic::Request::new(body);
    *req.metadata_mut() = MetadataMap::from_headers(headers);
    if let Some(t) = timeout {
        req.set_timeout(t);
    }
    req
}

fn method_path(op: Operation) -> PathAndQuery {
    PathAndQuery::try_from(path(op)).expect("an rpc path is a valid path")
}

async fn ready(channel: Channel) -> Result<tonic::client::Grpc<Channel>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(usize::MAX);
    grpc.ready().await.map_err(|e| Status::unavailable(format!("the channel is not ready: {e}")))?;
    Ok(grpc)
}

/// One unary call, repeated as the policy allows for a call `repeat` describes; the
/// answer's ProtoJSON.
pub(crate) async fn unary(
    policy: &RetryPolicy,
    repeat: Repeat,
    channel: Channel,
    op: Operation,
    json: Vec<u8>,
    headers: HeaderMap,
    timeout: Option<Duration>,
) -> Result<Vec<u8>, ClientError> {
    let body = encoded(op, &json)?;
    let mut attempt = 1;
    loop {
        let call = async {
            let mut grpc = ready(channel.clone()).await?;
            grpc.unary(request(body.clone(), headers.clone(), timeout), method_path(op), codec(op)).await
        };
        // `grpc-timeout` tells the server; the client enforces the bound itself.
        let outcome = match timeout {
            Some(t) => {
                let started = tokio::time::Instant::now();
                let expired = || Status::deadline_exceeded(format!("no answer within {t:?}"));
                match tokio::time::timeout(t, call).await {
                    // The server enforces the same `grpc-timeout` and may say so first (tonic
                    // answers CANCELLED): past the bound, that is this call's timeout too.
                    Ok(Err(status))
                        if matches!(status.code(), Code::Cancelled | Code::DeadlineExceeded)
                            && started.elapsed() >= t =>
                    {
                        Err(expired())
                    }
                    Ok(outcome) => outcome,
                    Err(_) => Err(expired()),
                }
            }
            None => call.await,
        };
        let status = match outcome {
            Ok(resp) => return Ok(resp.into_inner()),
            Err(status) => status,
        };
        match policy.next_delay(attempt, failure(&status), repeat, None) {
            Some(delay) => tokio::time::sleep(delay).await,
            None => return Err(error(&status)),
        }
        attempt += 1;
    }
}

/// Opens a server-streaming call (not repeated: the stream's own resumption does that).
pub(crate) async fn streaming(
    channel: Channel,
    op: Operation,
    json: Vec<u8>,
    headers: HeaderMap,
) -> Result<Events, ClientError> {
    let body = encoded(op, &json)?;
    let mut grpc = ready(channel).await.map_err(|s| error(&s))?;
    grpc.server_streaming(request(body, headers, None), method_path(op), codec(op))
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| error(&s))
}

/// How a failed call failed, for the retry policy: `UNAVAILABLE` means the call may or
/// may not have reached the server, like a connection lost mid-request; a status the
/// server chose is final unless it says to come back (`RESOURCE_EXHAUSTED`).
fn failure(status: &Status) -> Failure {
    match status.code() {
        Code::Unavailable => Failure::Lost,
        Code::ResourceExhausted => Failure::Status(429),
        _ => Failure::Status(400),
    }
}

/// Whether a stream that ended with `status` was cut rather than refused, so that
/// subscribing again may continue it: the connection went away (`UNAVAILABLE`,
/// `CANCELLED` without the caller asking, an HTTP/2 reset reported as `INTERNAL` or
/// `UNKNOWN` by the transport), or an agentproto server ended it for a slow reader
/// (`ABORTED`) or a resume point no longer held (`DATA_LOSS`).
pub(crate) fn interrupted(status: &Status) -> bool {
    match status.code() {
        Code::Unavailable | Code::Aborted | Code::DataLoss | Code::Cancelled => true,
        Code::Internal | Code::Unknown => status.details().is_empty(),
        _ => false,
    }
}

/// The client error a status stands for: the server's `google.rpc.Status`, with the
/// `ErrorInfo` reason when it sent one in the A2A domain.
pub(crate) fn error(status: &Status) -> ClientError {
    let (e, has_info) = super::error_of(status);
    ClientError::Status {
        http_status: None,
        code: Some(i64::from(status.code() as i32)),
        status: Some(super::code_name(status.code()).to_owned()),
        message: status.message().to_owned(),
        reason: has_info.then(|| e.reason().to_owned()),
        details: has_info.then(|| serde_json::Value::Array(vec![e.error_info()])),
    }
}
