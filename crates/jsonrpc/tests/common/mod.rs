//! Helpers shared by the interaction tests.
// Each test binary uses a subset of these helpers.
#![allow(dead_code)]
// The helpers are `pub` for the test crates that include this module.
#![allow(unreachable_pub)]

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_jsonrpc::frame::{Frame, FrameReader};
use agentproto_jsonrpc::{
    memory, Connection, ConnectionEvent, ConnectionOptions, ErrorObject, Handler, IncomingNotification,
    IncomingRequest, NotificationContext, Peer, RequestContext,
};
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::Notify;

/// Every wait in these tests is bounded by this.
pub const BOUND: Duration = Duration::from_secs(5);

/// Awaits `future`, failing the test after five seconds.
pub async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(BOUND, future).await.expect("timed out after 5 s")
}

/// Raw JSON from text.
pub fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).expect("valid JSON")
}

type RequestFn =
    dyn Fn(IncomingRequest, RequestContext) -> BoxFuture<'static, Result<Box<RawValue>, ErrorObject>> + Send + Sync;
type NotificationFn = dyn Fn(IncomingNotification, NotificationContext) -> BoxFuture<'static, ()> + Send + Sync;
type ReadFn = dyn Fn(&IncomingRequest, &RequestContext) + Send + Sync;

/// A handler made of closures.
pub struct TestHandler {
    request: Box<RequestFn>,
    notification: Box<NotificationFn>,
    read: Box<ReadFn>,
}

impl TestHandler {
    /// Answers every request `-32601` and ignores notifications.
    pub fn new() -> TestHandler {
        TestHandler {
            request: Box::new(|request, _| {
                Box::pin(async move { Err(ErrorObject::method_not_found(&request.method)) })
            }),
            notification: Box::new(|_, _| Box::pin(async {})),
            read: Box::new(|_, _| {}),
        }
    }

    /// Sets the closure that sees each request as it is read.
    pub fn on_read(mut self, read: impl Fn(&IncomingRequest, &RequestContext) + Send + Sync + 'static) -> TestHandler {
        self.read = Box::new(read);
        self
    }

    /// Sets the request closure.
    pub fn on_request(
        mut self,
        request: impl Fn(IncomingRequest, RequestContext) -> BoxFuture<'static, Result<Box<RawValue>, ErrorObject>>
            + Send
            + Sync
            + 'static,
    ) -> TestHandler {
        self.request = Box::new(request);
        self
    }

    /// Sets the notification closure.
    pub fn on_notification(
        mut self,
        notification: impl Fn(IncomingNotification, NotificationContext) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> TestHandler {
        self.notification = Box::new(notification);
        self
    }

    /// The handler as the connection takes it.
    pub fn build(self) -> Arc<dyn Handler> {
        Arc::new(self)
    }
}

impl Handler for TestHandler {
    fn request(
        &self,
        request: IncomingRequest,
        cx: RequestContext,
    ) -> BoxFuture<'static, Result<Box<RawValue>, ErrorObject>> {
        (self.request)(request, cx)
    }

    fn notification(&self, notification: IncomingNotification, cx: NotificationContext) -> BoxFuture<'static, ()> {
        (self.notification)(notification, cx)
    }

    fn request_read(&self, request: &mut IncomingRequest, cx: &RequestContext) {
        (self.read)(request, cx)
    }
}

/// The test's side of a connection, speaking raw lines.
pub struct RawPeer {
    lines: FrameReader<ReadHalf<DuplexStream>>,
    output: Option<WriteHalf<DuplexStream>>,
}

impl RawPeer {
    /// Sends one line (a newline is appended).
    pub async fn send(&mut self, line: &str) {
        let output = self.output.as_mut().expect("output open");
        within(async {
            output.write_all(line.as_bytes()).await.unwrap();
            output.write_all(b"\n").await.unwrap();
            output.flush().await.unwrap();
        })
        .await
    }

    /// Sends raw bytes as they are.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let output = self.output.as_mut().expect("output open");
        within(output.write_all(bytes)).await.unwrap();
    }

    /// The next line the connection wrote.
    pub async fn recv(&mut self) -> String {
        match within(self.lines.next_frame()).await.unwrap() {
            Some(Frame::Line(line)) => String::from_utf8(line.to_vec()).unwrap(),
            other => panic!("expected a line, got {other:?}"),
        }
    }

    /// Expects the connection's output to end.
    pub async fn recv_eof(&mut self) {
        if let Some(frame) = within(self.lines.next_frame()).await.unwrap() {
            panic!("expected end of output, got {frame:?}");
        }
    }

    /// Closes the connection's input (end of file).
    pub async fn close(&mut self) {
        if let Some(mut output) = self.output.take() {
            within(output.shutdown()).await.unwrap();
        }
    }
}

/// A connection whose other end the test drives with raw lines.
pub fn raw_connection(handler: Arc<dyn Handler>, options: ConnectionOptions) -> (Connection, Peer, RawPeer) {
    raw_connection_with_pipe(handler, options, memory::DEFAULT_PIPE_CAPACITY)
}

/// [`raw_connection`] over a pipe of `capacity` bytes each way.
pub fn raw_connection_with_pipe(
    handler: Arc<dyn Handler>,
    options: ConnectionOptions,
    capacity: usize,
) -> (Connection, Peer, RawPeer) {
    let (ours, theirs) = memory::duplex(capacity);
    let (connection, peer) = memory::connection(ours, handler, options);
    let (input, output) = tokio::io::split(theirs);
    let raw_peer = RawPeer { lines: FrameReader::new(input), output: Some(output) };
    (connection, peer, raw_peer)
}

/// Collects the events of a connection.
#[derive(Clone, Default)]
pub struct Events {
    seen: Arc<Mutex<Vec<ConnectionEvent>>>,
    changed: Arc<Notify>,
}

impl Events {
    /// Options with this collector as observer.
    pub fn options(&self, options: ConnectionOptions) -> ConnectionOptions {
        let events = self.clone();
        options.observer(move |event| {
            events.seen.lock().unwrap().push(event.clone());
            events.changed.notify_waiters();
        })
    }

    /// A copy of the events seen so far.
    pub fn snapshot(&self) -> Vec<ConnectionEvent> {
        self.seen.lock().unwrap().clone()
    }

    /// Waits for an event matching `predicate` and returns it.
    pub async fn wait_for(&self, predicate: impl Fn(&ConnectionEvent) -> bool) -> ConnectionEvent {
        within(async {
            loop {
                let changed = self.changed.notified();
                if let Some(event) = self.seen.lock().unwrap().iter().find(|e| predicate(e)) {
                    return event.clone();
                }
                changed.await;
            }
        })
        .await
    }
}
