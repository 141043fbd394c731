//! An agent's prompt handler that panics or fails with an internal error: the client
//! gets `-32603`, and the agent's program gets a `tracing` error event naming the
//! method and the request id (reported by the JSON-RPC layer, no feature needed).
//! Any other error answer is the handler's normal outcome and is not reported.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_acp::v1::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future).await.expect("timed out")
}

/// One event's fields as `(name, value)` pairs.
type EventFields = Vec<(String, String)>;

/// Each ERROR event's fields.
#[derive(Default, Clone)]
struct Errors(Arc<Mutex<Vec<EventFields>>>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl Subscriber for Errors {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if *event.metadata().level() == Level::ERROR {
            let mut fields = Vec::new();
            event.record(&mut Fields(&mut fields));
            self.0.lock().unwrap().push(fields);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

struct Faulty;

impl Agent for Faulty {
    async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
        Ok(InitializeResponse::new(PROTOCOL_VERSION))
    }

    async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, _: AgentContext, p: PromptRequest) -> Result<PromptResponse, ErrorObject> {
        match p.text().as_str() {
            "crash" => panic!("the agent has a bug"),
            "break" => Err(ErrorObject::internal_error("the model is gone")),
            _ => Err(ErrorObject::invalid_params("$.prompt", "a question", "a statement")),
        }
    }
}

struct Quiet;

impl Client for Quiet {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))
    }

    async fn session_update(&self, _: ClientContext, _: SessionNotification) {}
}

/// Runs one prompt of each text and returns the answers' codes and the error events.
fn run(texts: &'static [&'static str]) -> (Vec<i32>, Vec<EventFields>) {
    let errors = Errors::default();
    let seen = errors.clone();
    // One thread: the connections' tasks see the recorder as the default subscriber.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let codes = tracing::subscriber::with_default(errors, || {
        runtime.block_on(async {
            let (a, b) = tokio::io::duplex(64 * 1024);
            let (agent_read, agent_write) = tokio::io::split(a);
            let (client_read, client_write) = tokio::io::split(b);
            let (agent_connection, _) = connect_agent(Faulty, agent_read, agent_write, AcpOptions::default());
            let (client_connection, agent) = connect_client(Quiet, client_read, client_write, AcpOptions::default());
            tokio::spawn(agent_connection.run());
            tokio::spawn(client_connection.run());
            within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.unwrap();
            let session = within(agent.open_session("/")).await.unwrap();
            let mut codes = Vec::new();
            for text in texts {
                let error = within(session.prompt(*text)).await.unwrap_err();
                codes.push(error.as_rpc().expect("an error answer").code.0);
            }
            codes
        })
    });
    let errors = seen.0.lock().unwrap().clone();
    (codes, errors)
}

fn field<'a>(event: &'a [(String, String)], name: &str) -> Option<&'a str> {
    event.iter().find(|(field, _)| field == name).map(|(_, value)| value.as_str())
}

#[test]
fn a_panicking_prompt_handler_is_answered_and_traced() {
    let (codes, errors) = run(&["crash"]);
    assert_eq!(codes, [-32603]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(field(&errors[0], "method"), Some("session/prompt"));
    // Requests 0 and 1 were `initialize` and `session/new`.
    assert_eq!(field(&errors[0], "id"), Some("2"));
    assert_eq!(field(&errors[0], "panic"), Some("the agent has a bug"));
}

#[test]
fn an_internal_error_is_traced_and_other_error_answers_are_not() {
    let (codes, errors) = run(&["fine?", "break"]);
    assert_eq!(codes, [-32602, -32603]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(field(&errors[0], "method"), Some("session/prompt"));
    assert_eq!(field(&errors[0], "id"), Some("3"));
    assert_eq!(field(&errors[0], "error"), Some("the model is gone"));
}
