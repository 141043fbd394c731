//! A handler that panics or answers `-32603` is reported as a `tracing` error event
//! naming the method and the request id, besides the answer; any other error answer
//! is a normal outcome and is not reported. No feature is needed for this.

mod common;

use std::fmt;
use std::sync::{Arc, Mutex};

use agentproto_jsonrpc::{memory, ConnectionOptions, ErrorCode, ErrorObject};
use common::{raw, within, TestHandler};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// One error event as seen by the subscriber: its fields as `name=value` text.
#[derive(Debug, Clone)]
struct Reported {
    target: String,
    fields: Vec<(String, String)>,
}

impl Reported {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(field, _)| field == name).map(|(_, value)| value.as_str())
    }
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

/// Records every ERROR event; a minimal subscriber, so the test needs no other crate.
#[derive(Default, Clone)]
struct ErrorRecorder {
    errors: Arc<Mutex<Vec<Reported>>>,
}

impl Subscriber for ErrorRecorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if *event.metadata().level() != Level::ERROR {
            return;
        }
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        let target = event.metadata().target().to_owned();
        self.errors.lock().unwrap().push(Reported { target, fields });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Runs `calls` against a handler that panics on `boom`, fails with -32603 on
/// `broken`, answers -32602 on `picky`, panics on the notification `crash` and
/// echoes anything else; returns the error events recorded meanwhile.
fn errors_reported_while(calls: &'static [(&'static str, bool)]) -> Vec<Reported> {
    let recorder = ErrorRecorder::default();
    let seen = recorder.clone();
    // A current-thread runtime: the connection's tasks run on the thread whose
    // default subscriber is the recorder.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    tracing::subscriber::with_default(recorder, || {
        runtime.block_on(async {
            let (notified, mut got) = tokio::sync::mpsc::unbounded_channel();
            let handler = TestHandler::new()
                .on_request(|request, _| {
                    Box::pin(async move {
                        match request.method.as_str() {
                            "boom" => panic!("the handler has a bug"),
                            "broken" => Err(ErrorObject::internal_error("the database is gone")),
                            "picky" => Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, "expected an object")),
                            _ => Ok(raw("true")),
                        }
                    })
                })
                .on_notification(move |notification, _| {
                    let notified = notified.clone();
                    Box::pin(async move {
                        // Sent before the panic: the test waits for it, then for
                        // a request behind the worker to know the report is done.
                        let _ = notified.send(());
                        if notification.method == "crash" {
                            panic!("the notification handler has a bug");
                        }
                    })
                })
                .build();
            let (a, b) = memory::pair(
                TestHandler::new().build(),
                ConnectionOptions::default(),
                handler,
                ConnectionOptions::default(),
            );
            tokio::spawn(a.connection.run());
            tokio::spawn(b.connection.run());
            for &(method, is_request) in calls {
                if is_request {
                    // The answer is sent after the report: nothing to wait for besides it.
                    let _ = within(a.peer.call(method, None)).await;
                } else {
                    within(a.peer.notify(method, None)).await.unwrap();
                    within(got.recv()).await.unwrap();
                    // A request is handled after the notifications read before it,
                    // so its answer means the worker is past the panic.
                    within(a.peer.call("echo", None)).await.unwrap();
                }
            }
        });
    });
    let errors = seen.errors.lock().unwrap().clone();
    errors
}

#[test]
fn a_panicking_request_handler_is_reported_with_method_and_id() {
    let errors = errors_reported_while(&[("boom", true)]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = &errors[0];
    assert_eq!(error.target, "agentproto_jsonrpc");
    assert_eq!(error.field("method"), Some("boom"));
    // The first call of a connection has id 0; ids are shown as on the wire.
    assert_eq!(error.field("id"), Some("0"));
    assert_eq!(error.field("panic"), Some("the handler has a bug"));
}

#[test]
fn an_internal_error_answer_is_reported_and_other_errors_are_not() {
    let errors = errors_reported_while(&[("picky", true), ("broken", true), ("echo", true)]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = &errors[0];
    assert_eq!(error.field("method"), Some("broken"));
    assert_eq!(error.field("id"), Some("1"));
    assert_eq!(error.field("code"), Some("-32603"));
    assert_eq!(error.field("error"), Some("the database is gone"));
}

#[test]
fn a_panicking_notification_handler_is_reported_with_its_method() {
    let errors = errors_reported_while(&[("crash", false)]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field("method"), Some("crash"));
    assert_eq!(errors[0].field("panic"), Some("the notification handler has a bug"));
    assert_eq!(errors[0].field("id"), None);
}
