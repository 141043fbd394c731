//! With the `tracing` feature, each handled request and notification runs in a
//! span named after it, and connection events are emitted as events.
#![cfg(feature = "tracing")]

mod common;

use std::sync::{Arc, Mutex};

use agentproto_jsonrpc::{memory, ConnectionOptions};
use common::{raw, within, TestHandler};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Records span names and event counts; a minimal subscriber, so the test needs no
/// other crate.
#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<Vec<String>>>,
    events: Arc<Mutex<usize>>,
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut spans = self.spans.lock().unwrap();
        spans.push(span.metadata().name().to_owned());
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {
        *self.events.lock().unwrap() += 1;
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn requests_and_notifications_run_in_spans() {
    let recorder = Recorder::default();
    let seen = recorder.clone();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    tracing::subscriber::with_default(recorder, || {
        runtime.block_on(async {
            let (notified, mut got) = tokio::sync::mpsc::unbounded_channel();
            let echo = TestHandler::new()
                .on_request(|request, _| Box::pin(async move { Ok(request.params.unwrap_or_else(|| raw("null"))) }))
                .on_notification(move |_, _| {
                    let notified = notified.clone();
                    Box::pin(async move {
                        let _ = notified.send(());
                    })
                })
                .build();
            let (a, b) = memory::pair(
                TestHandler::new().build(),
                ConnectionOptions::default(),
                echo,
                ConnectionOptions::default(),
            );
            tokio::spawn(a.connection.run());
            tokio::spawn(b.connection.run());
            within(a.peer.call("echo", Some(raw("[1]")))).await.unwrap();
            within(a.peer.notify("ping", None)).await.unwrap();
            within(got.recv()).await.unwrap();
        });
    });
    let spans = seen.spans.lock().unwrap().clone();
    assert!(spans.iter().any(|name| name == "jsonrpc.request"), "{spans:?}");
    assert!(spans.iter().any(|name| name == "jsonrpc.notification"), "{spans:?}");
}
