//! The client's streams against a scripted loopback server: SSE parsing, in-stream
//! errors, the POST→GET fallback of `:subscribe`, and automatic resumption.
#![cfg(feature = "client")]

#[path = "client_support.rs"]
mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentproto_a2a::client::{
    A2aClient, A2aErrorKind, ClientError, ClientOptions, EventStream, ResumePolicy, RetryPolicy, StreamEvent,
    StreamEventKind,
};
use agentproto_a2a::v1::{
    AgentCard, Message, Part, PartContent, Role, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, TaskState,
};
use futures::StreamExt;
use serde_json::{json, Value};
use support::{bounded, card, task_json, End, Recorded, Reply, Server};

fn client(base: &str, binding: &str, opts: ClientOptions) -> A2aClient {
    let text = card(&[(base, binding, "")]);
    let card = agentproto_codec::decode_slice::<AgentCard>(text.as_bytes(), "$").unwrap().value;
    A2aClient::from_card(card, opts).unwrap()
}

fn fast_resume() -> ClientOptions {
    ClientOptions {
        resume: ResumePolicy {
            enabled: true,
            reconnect: RetryPolicy {
                max_attempts: 3,
                initial_backoff: Duration::from_millis(1),
                max_backoff: Duration::from_millis(5),
            },
        },
        ..ClientOptions::default()
    }
}

fn message() -> SendMessageRequest {
    SendMessageRequest::new(Message::new("m-1", Role::User, vec![Part::new(PartContent::Text("go".into()))]))
}

async fn collect(stream: EventStream) -> Vec<Result<StreamEvent, ClientError>> {
    stream.collect().await
}

fn status(task: &str, state: &str) -> Value {
    json!({"statusUpdate": {"taskId": task, "contextId": "ctx-1", "status": {"state": state}}})
}

fn artifact(task: &str) -> Value {
    json!({"artifactUpdate": {"taskId": task, "contextId": "ctx-1", "artifact": {"artifactId": "a-1", "parts": [{"text": "x"}]}}})
}

/// One SSE event: optional id and name, the payload (wrapped in a JSON-RPC response
/// when `rpc_id` is given).
fn frame(id: Option<u64>, name: Option<&str>, payload: &Value, rpc_id: Option<&Value>) -> String {
    let data = match rpc_id {
        Some(rid) => json!({"jsonrpc": "2.0", "id": rid, "result": payload}).to_string(),
        None => payload.to_string(),
    };
    let mut out = String::new();
    if let Some(id) = id {
        out.push_str(&format!("id: {id}\n"));
    }
    if let Some(name) = name {
        out.push_str(&format!("event: {name}\n"));
    }
    out.push_str(&format!("data: {data}\n\n"));
    out
}

fn state_of(ev: &StreamEvent) -> Option<TaskState> {
    match ev.response()? {
        StreamResponse::Task(t) => Some(t.status.state),
        StreamResponse::StatusUpdate(u) => Some(u.status.state),
        _ => None,
    }
}

#[tokio::test]
async fn jsonrpc_stream_reads_keepalives_multiline_data_and_crlf() {
    bounded(async {
        let mut server = Server::start(|req: &Recorded| {
            let id = req.json()["id"].clone();
            let task =
                json!({"jsonrpc": "2.0", "id": id, "result": {"task": task_json("t-1", "TASK_STATE_SUBMITTED")}});
            // The task event spread over three data lines, with CRLF line ends.
            let text = serde_json::to_string_pretty(&task).unwrap();
            let mut lines: Vec<&str> = text.lines().collect();
            let tail = lines.split_off(2);
            let multi = format!("id: 1\r\ndata: {}\r\ndata: {}\r\n\r\n", lines.join("\r\ndata: "), tail.join(" "));
            let working = frame(Some(2), None, &status("t-1", "TASK_STATE_WORKING"), Some(&id));
            let done = frame(Some(3), Some("message"), &status("t-1", "TASK_STATE_COMPLETED"), Some(&id));
            let (a, b) = working.split_at(10);
            let chunks = vec![
                ": keep-alive\n\n".to_owned(),
                multi,
                ":ping\r\n\r\n".to_owned(),
                a.to_owned(),
                b.to_owned(),
                done,
            ];
            Reply::Sse { chunks: chunks.into_iter().map(String::into_bytes).collect(), end: End::Close }
        })
        .await;
        let c = client(&format!("{}/rpc", server.base), "JSONRPC", ClientOptions::default());
        let events = collect(c.send_streaming_message(message()).await.unwrap()).await;
        let events: Vec<StreamEvent> = events.into_iter().map(Result::unwrap).collect();
        let states: Vec<_> = events.iter().map(state_of).collect();
        assert_eq!(states, vec![Some(TaskState::Submitted), Some(TaskState::Working), Some(TaskState::Completed)]);
        let ids: Vec<_> = events.iter().map(StreamEvent::seq).collect();
        assert_eq!(ids, vec![Some(1), Some(2), Some(3)]);

        let r = server.next().await;
        assert_eq!(r.method, "POST");
        assert_eq!(r.json()["method"], "SendStreamingMessage");
        assert_eq!(r.header("accept"), Some("text/event-stream"));
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.header("a2a-version"), Some("1.0"));
    })
    .await;
}

#[tokio::test]
async fn rest_stream_carries_bare_events_and_ends_on_an_error_event() {
    bounded(async {
        let mut server = Server::start(|_: &Recorded| {
            let err = json!({"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "nope", "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNSUPPORTED_OPERATION", "domain": "a2a-protocol.org"}]}});
            let chunks = [
                frame(Some(1), None, &json!({"task": task_json("t-1", "TASK_STATE_WORKING")}), None),
                frame(None, Some("error"), &err, None),
                frame(Some(2), None, &status("t-1", "TASK_STATE_COMPLETED"), None),
            ];
            Reply::Sse { chunks: chunks.iter().map(|c| c.clone().into_bytes()).collect(), end: End::Close }
        })
        .await;
        let c = client(&server.base, "HTTP+JSON", ClientOptions::default());
        let events = collect(c.send_streaming_message(message()).await.unwrap()).await;
        assert_eq!(events.len(), 2, "the error is the last item");
        assert_eq!(state_of(events[0].as_ref().unwrap()), Some(TaskState::Working));
        let e = events[1].as_ref().unwrap_err();
        assert_eq!(e.kind(), Some(A2aErrorKind::UnsupportedOperation), "{e:?}");
        let r = server.next().await;
        assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", "/message:stream"));
        assert_eq!(r.header("content-type"), Some("application/a2a+json"));
    })
    .await;
}

#[tokio::test]
async fn jsonrpc_errors_before_and_inside_a_stream() {
    bounded(async {
        let calls = Arc::new(AtomicU32::new(0));
        let c2 = calls.clone();
        let server = Server::start(move |req: &Recorded| {
            let id = req.json()["id"].clone();
            let err = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "Task not found"}});
            if c2.fetch_add(1, Ordering::SeqCst) == 0 {
                // Refused before any event: a plain JSON answer.
                return Reply::json(200, "application/json", err.to_string());
            }
            let chunks = [
                frame(Some(1), None, &json!({"task": task_json("t-1", "TASK_STATE_WORKING")}), Some(&id)),
                format!("data: {err}\n\n"),
            ];
            Reply::Sse { chunks: chunks.iter().map(|c| c.clone().into_bytes()).collect(), end: End::Close }
        })
        .await;
        let c = client(&server.base, "JSONRPC", ClientOptions::default());
        let e = c.subscribe_to_task(SubscribeToTaskRequest::new("t-1")).await.unwrap_err();
        assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotFound));
        let events = collect(c.subscribe_to_task(SubscribeToTaskRequest::new("t-1")).await.unwrap()).await;
        assert_eq!(events.len(), 2);
        assert!(matches!(events[1], Err(ClientError::Rpc { code: -32001, .. })));
    })
    .await;
}

#[tokio::test]
async fn malformed_stream_event_is_a_decode_error() {
    bounded(async {
        let server = Server::start(|_: &Recorded| {
            // (A number would be read as the enum value it stands for, as ProtoJSON allows.)
            Reply::sse(
                &["data: {\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":true}}}\n\n"],
                End::Close,
            )
        })
        .await;
        let c = client(&server.base, "HTTP+JSON", ClientOptions::default());
        let events = collect(c.subscribe_to_task(SubscribeToTaskRequest::new("t")).await.unwrap()).await;
        match &events[..] {
            [Err(ClientError::Decode { error, .. })] => assert_eq!(error.path, "$.statusUpdate.status.state"),
            other => panic!("{other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn subscribe_posts_then_falls_back_to_get_on_405() {
    bounded(async {
        let mut server = Server::start(|req: &Recorded| {
            if req.method == "POST" {
                return Reply::status(405);
            }
            Reply::sse(
                &[&frame(None, None, &json!({"task": task_json("t 1", "TASK_STATE_COMPLETED")}), None)],
                End::Close,
            )
        })
        .await;
        let c = client(&format!("{}/api", server.base), "HTTP+JSON", ClientOptions::default());
        let events = collect(c.subscribe_to_task(SubscribeToTaskRequest::new("t 1")).await.unwrap()).await;
        assert_eq!(events.len(), 1);
        let post = server.next().await;
        assert_eq!((post.method.as_str(), post.target.as_str()), ("POST", "/api/tasks/t%201:subscribe"));
        assert_eq!(post.json()["id"], "t 1");
        let get = server.next().await;
        assert_eq!((get.method.as_str(), get.target.as_str()), ("GET", "/api/tasks/t%201:subscribe"));
        assert!(get.body.is_empty());
        // Remembered: the next subscription goes straight to GET.
        collect(c.subscribe_to_task(SubscribeToTaskRequest::new("t 1")).await.unwrap()).await;
        assert_eq!(server.next().await.method, "GET");
    })
    .await;
}

/// The first stream is cut after two events; the resumed one replays from the log: a
/// Task snapshot, a duplicate of event 2, a gap marker, then the rest.
fn resuming_script(rpc: bool) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    let calls = Arc::new(AtomicU32::new(0));
    move |req: &Recorded| {
        let rid = rpc.then(|| req.json()["id"].clone());
        let rid = rid.as_ref();
        let n = calls.fetch_add(1, Ordering::SeqCst);
        if n == 0 {
            let chunks = [
                frame(Some(1), None, &json!({"task": task_json("t-1", "TASK_STATE_SUBMITTED")}), rid),
                frame(Some(2), None, &status("t-1", "TASK_STATE_WORKING"), rid),
            ];
            return Reply::Sse { chunks: chunks.iter().map(|c| c.clone().into_bytes()).collect(), end: End::Drop };
        }
        let gap = "event: gap\ndata: {\"after\":2,\"resumedAt\":4}\n\n".to_owned();
        let chunks = [
            frame(None, None, &json!({"task": task_json("t-1", "TASK_STATE_WORKING")}), rid),
            frame(Some(2), None, &status("t-1", "TASK_STATE_WORKING"), rid),
            gap,
            "event: lagged\ndata: {}\n\n".to_owned(),
            frame(Some(4), None, &artifact("t-1"), rid),
            frame(Some(5), None, &status("t-1", "TASK_STATE_COMPLETED"), rid),
        ];
        Reply::Sse { chunks: chunks.iter().map(|c| c.clone().into_bytes()).collect(), end: End::Close }
    }
}

async fn check_resume(binding: &str) {
    let rpc = binding == "JSONRPC";
    let mut server = Server::start(resuming_script(rpc)).await;
    let c = client(&server.base, binding, fast_resume());
    let events = collect(c.send_streaming_message(message()).await.unwrap()).await;
    let events: Vec<StreamEvent> = events.into_iter().map(|e| e.expect("no error item")).collect();
    let summary: Vec<(Option<u64>, String)> = events
        .iter()
        .map(|e| {
            let what = match &e.kind {
                StreamEventKind::Gap { after, resumed_at, .. } => format!("gap {after:?}..{resumed_at:?}"),
                StreamEventKind::Response(StreamResponse::Task(t)) => format!("task {:?}", t.status.state),
                StreamEventKind::Response(StreamResponse::StatusUpdate(u)) => format!("status {:?}", u.status.state),
                StreamEventKind::Response(StreamResponse::ArtifactUpdate(_)) => "artifact".to_owned(),
                other => format!("{other:?}"),
            };
            (e.seq(), what)
        })
        .collect();
    let expected: Vec<(Option<u64>, String)> = vec![
        (Some(1), "task Submitted".into()),
        (Some(2), "status Working".into()),
        (None, "task Working".into()),
        (None, "gap Some(2)..Some(4)".into()),
        (Some(4), "artifact".into()),
        (Some(5), "status Completed".into()),
    ];
    assert_eq!(summary, expected, "{binding}");

    let first = server.next().await;
    assert_eq!(first.header("last-event-id"), None);
    let again = server.next().await;
    assert_eq!(again.header("last-event-id"), Some("2"), "{binding}");
    assert_eq!(again.header("a2a-version"), Some("1.0"));
    if rpc {
        assert_eq!(again.json()["method"], "SubscribeToTask");
        assert_eq!(again.json()["params"], json!({"id": "t-1"}));
    } else {
        assert_eq!((again.method.as_str(), again.target.as_str()), ("POST", "/tasks/t-1:subscribe"));
    }
    assert!(server.drain().is_empty(), "a completed stream is not resumed again");
}

#[tokio::test]
async fn dropped_stream_resumes_with_last_event_id_on_jsonrpc() {
    bounded(check_resume("JSONRPC")).await;
}

#[tokio::test]
async fn dropped_stream_resumes_with_last_event_id_on_rest() {
    bounded(check_resume("HTTP+JSON")).await;
}

#[tokio::test]
async fn resume_gives_up_after_bounded_attempts() {
    bounded(async {
        let calls = Arc::new(AtomicU32::new(0));
        let c2 = calls.clone();
        let mut server = Server::start(move |_: &Recorded| {
            if c2.fetch_add(1, Ordering::SeqCst) == 0 {
                return Reply::sse(
                    &[&frame(Some(1), None, &json!({"task": task_json("t-1", "TASK_STATE_WORKING")}), None)],
                    End::Drop,
                );
            }
            Reply::status(503)
        })
        .await;
        // No per-request retries, so each reconnection attempt is one request.
        let mut opts = fast_resume();
        opts.retry.max_attempts = 1;
        let c = client(&server.base, "HTTP+JSON", opts);
        let events = collect(c.send_streaming_message(message()).await.unwrap()).await;
        assert_eq!(events.len(), 2);
        match &events[1] {
            Err(ClientError::StreamInterrupted { last_event_id, task_id, .. }) => {
                assert_eq!(last_event_id.as_deref(), Some("1"));
                assert_eq!(task_id.as_deref(), Some("t-1"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(server.drain().len(), 1 + 3, "one stream, then three reconnection attempts");
    })
    .await;
}

#[tokio::test]
async fn resume_after_the_task_ended_yields_the_final_task() {
    bounded(async {
        let mut server = Server::start(|req: &Recorded| match (req.method.as_str(), req.path()) {
            ("POST", "/message:stream") => Reply::sse(
                &[&frame(Some(1), None, &json!({"task": task_json("t-1", "TASK_STATE_WORKING")}), None)],
                End::Drop,
            ),
            ("POST", "/tasks/t-1:subscribe") => {
                let body = json!({"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "terminal",
                    "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNSUPPORTED_OPERATION"}]}});
                Reply::json(400, "application/json", body.to_string())
            }
            ("GET", "/tasks/t-1") => Reply::json(200, "application/json", task_json("t-1", "TASK_STATE_COMPLETED").to_string()),
            _ => Reply::status(500),
        })
        .await;
        let c = client(&server.base, "HTTP+JSON", fast_resume());
        let events = collect(c.send_streaming_message(message()).await.unwrap()).await;
        let states: Vec<_> = events.iter().map(|e| e.as_ref().ok().and_then(state_of)).collect();
        assert_eq!(states, vec![Some(TaskState::Working), Some(TaskState::Completed)]);
        assert_eq!(server.drain().len(), 3);
    })
    .await;
}

#[tokio::test]
async fn idle_timeout_counts_as_a_drop() {
    bounded(async {
        let calls = Arc::new(AtomicU32::new(0));
        let c2 = calls.clone();
        let mut server = Server::start(move |_: &Recorded| {
            if c2.fetch_add(1, Ordering::SeqCst) == 0 {
                return Reply::sse(
                    &[&frame(Some(7), None, &json!({"task": task_json("t-1", "TASK_STATE_WORKING")}), None)],
                    End::Hang,
                );
            }
            Reply::sse(&[&frame(Some(8), None, &status("t-1", "TASK_STATE_INPUT_REQUIRED"), None)], End::Close)
        })
        .await;
        let opts = ClientOptions { idle_timeout: Duration::from_millis(300), ..fast_resume() };
        let c = client(&server.base, "HTTP+JSON", opts);
        let events = collect(c.subscribe_to_task(SubscribeToTaskRequest::new("t-1")).await.unwrap()).await;
        let seqs: Vec<_> = events.iter().map(|e| e.as_ref().unwrap().seq()).collect();
        assert_eq!(seqs, vec![Some(7), Some(8)], "INPUT_REQUIRED then close ends the stream");
        server.next().await;
        assert_eq!(server.next().await.header("last-event-id"), Some("7"));
    })
    .await;
}

#[tokio::test]
async fn no_resume_without_a_task_id_or_when_disabled() {
    bounded(async {
        let server = Server::start(|_: &Recorded| Reply::sse(&[": hello\n\n"], End::Drop)).await;
        let c = client(&server.base, "HTTP+JSON", fast_resume());
        let events = collect(c.send_streaming_message(message()).await.unwrap()).await;
        assert!(matches!(&events[..], [Err(ClientError::StreamInterrupted { task_id: None, .. })]), "{events:?}");

        let server = Server::start(|_: &Recorded| {
            Reply::sse(
                &[&frame(Some(1), None, &json!({"task": task_json("t-1", "TASK_STATE_WORKING")}), None)],
                End::Close,
            )
        })
        .await;
        let mut opts = fast_resume();
        opts.resume.enabled = false;
        let c = client(&server.base, "HTTP+JSON", opts);
        let events = collect(c.send_streaming_message(message()).await.unwrap()).await;
        assert_eq!(events.len(), 2);
        assert!(matches!(events[1], Err(ClientError::StreamInterrupted { .. })));
    })
    .await;
}

#[tokio::test]
async fn a_direct_message_ends_the_stream() {
    bounded(async {
        let mut server = Server::start(|_: &Recorded| {
            let msg = json!({"message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}});
            Reply::sse(&[&frame(None, None, &msg, None)], End::Drop)
        })
        .await;
        let c = client(&server.base, "HTTP+JSON", fast_resume());
        let events = collect(c.send_streaming_message(message()).await.unwrap()).await;
        assert!(matches!(
            &events[..],
            [Ok(StreamEvent { kind: StreamEventKind::Response(StreamResponse::Message(_)), .. })]
        ));
        server.next().await;
        assert!(server.drain().is_empty(), "no resubscription after a Message");
    })
    .await;
}
