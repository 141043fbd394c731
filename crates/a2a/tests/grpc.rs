//! The gRPC binding over real loopback HTTP/2: every operation through the client's
//! gRPC transport against `A2aServer::grpc`, the error table as gRPC statuses with
//! `ErrorInfo` (checked on raw calls), authentication and tenants from the metadata,
//! and the same answers as the HTTP+JSON binding.
#![cfg(all(feature = "grpc", feature = "client", feature = "server"))]

mod common;

use agentproto_a2a::client::{A2aClient, A2aErrorKind, Auth, Binding, ClientError, ClientOptions};
use agentproto_a2a::push::PushOptions;
use agentproto_a2a::server::auth::{Principal, StaticCredentials};
use agentproto_a2a::server::{A2aServer, Builder};
use agentproto_a2a::v1::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest,
    GetTaskRequest, ListTaskPushNotificationConfigsRequest, ListTasksRequest, Message, Part, PartContent, Role,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, TaskState,
};
use common::{card_with, demo, mid, within};
use futures::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A server with both HTTP bindings and gRPC, on two loopback ports; shut down when
/// dropped.
struct Both {
    card: AgentCard,
    token: CancellationToken,
}

impl Drop for Both {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

/// The demo card (with `edit` applied) declaring gRPC first, then JSON-RPC and HTTP+JSON.
async fn start(
    edit: impl FnOnce(&mut serde_json::Value),
    build: impl FnOnce(AgentCard) -> Builder<agentproto_a2a::demo::DemoAgent>,
) -> Both {
    let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", http.local_addr().unwrap());
    let grpc_at = grpc.local_addr().unwrap().to_string();
    let card = card_with(&base, |c| {
        let mut ifaces = vec![json!({"url": grpc_at, "protocolBinding": "GRPC", "protocolVersion": "1.0"})];
        ifaces.extend(c["supportedInterfaces"].as_array().unwrap().iter().cloned());
        c["supportedInterfaces"] = json!(ifaces);
        edit(c);
    });
    let server = build(card.clone()).build().grpc(grpc);
    let token = server.shutdown_token();
    tokio::spawn(server.serve(http));
    Both { card, token }
}

async fn demo_server() -> Both {
    start(
        |_| {},
        |card| A2aServer::builder(demo(300), card).push(PushOptions { allow_loopback: true, ..PushOptions::default() }),
    )
    .await
}

fn client(card: &AgentCard, binding: Binding, auth: Option<Auth>) -> A2aClient {
    let opts = ClientOptions { binding: Some(binding), auth, ..ClientOptions::default() };
    A2aClient::from_card(card.clone(), opts).unwrap()
}

fn message(id: &str, text: &str) -> Message {
    Message::new(id, Role::User, vec![Part::new(PartContent::Text(text.into()))])
}

fn send(id: &str) -> SendMessageRequest {
    SendMessageRequest::new(message(id, "hello over gRPC"))
}

fn task_of(resp: SendMessageResponse) -> Task {
    match resp {
        SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn status_of(e: &ClientError) -> (Option<&str>, Option<&str>) {
    match e {
        ClientError::Status { status, reason, http_status: None, .. } => (status.as_deref(), reason.as_deref()),
        other => panic!("expected a gRPC status, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_runs_over_grpc() {
    let server = demo_server().await;
    let c = client(&server.card, Binding::Grpc, None);
    assert_eq!(c.interface().binding, Binding::Grpc);
    assert!(c.interface().url.starts_with("http://127.0.0.1:"), "{:?}", c.interface());

    // SendMessage (blocking), GetTask, ListTasks.
    let task = task_of(within("send", c.send_message(send(&mid("tck-complete-task")))).await.unwrap());
    assert_eq!(task.status.state, TaskState::Completed);
    let got = within("get", c.get_task(GetTaskRequest::new(task.id.clone()))).await.unwrap();
    assert_eq!(got.id, task.id);
    assert_eq!(got.status.state, TaskState::Completed);
    let listed = within("list", c.list_tasks(ListTasksRequest::default())).await.unwrap();
    assert!(listed.tasks.iter().any(|t| t.id == task.id), "{listed:?}");

    // A direct message.
    match within("message", c.send_message(send(&mid("tck-message-response")))).await.unwrap() {
        SendMessageResponse::Message(m) => assert_eq!(m.role, Role::Agent),
        other => panic!("expected a message, got {other:?}"),
    }

    // CancelTask, then again on the canceled task: TaskNotCancelable.
    let waiting = task_of(c.send_message(send(&mid("tck-input-required"))).await.unwrap());
    assert_eq!(waiting.status.state, TaskState::InputRequired);
    let canceled = within("cancel", c.cancel_task(CancelTaskRequest::new(waiting.id.clone()))).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let e = c.cancel_task(CancelTaskRequest::new(waiting.id.clone())).await.unwrap_err();
    assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotCancelable), "{e}");
    assert_eq!(status_of(&e), (Some("FAILED_PRECONDITION"), Some("TASK_NOT_CANCELABLE")));

    // The push-config operations.
    let mut config = TaskPushNotificationConfig::new("http://127.0.0.1:9/hook");
    config.task_id = task.id.clone();
    config.id = "cfg-1".into();
    config.token = "tok".into();
    let created = within("create push", c.create_task_push_notification_config(config)).await.unwrap();
    assert_eq!((created.id.as_str(), created.task_id.as_str()), ("cfg-1", task.id.as_str()));
    let fetched = c
        .get_task_push_notification_config(GetTaskPushNotificationConfigRequest::new(task.id.clone(), "cfg-1"))
        .await
        .unwrap();
    assert_eq!(fetched.url, "http://127.0.0.1:9/hook");
    let all = c
        .list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest::new(task.id.clone()))
        .await
        .unwrap();
    assert_eq!(all.configs.len(), 1);
    c.delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest::new(task.id.clone(), "cfg-1"))
        .await
        .unwrap();
    let e = c
        .get_task_push_notification_config(GetTaskPushNotificationConfigRequest::new(task.id.clone(), "cfg-1"))
        .await
        .unwrap_err();
    assert_eq!(status_of(&e).0, Some("NOT_FOUND"), "{e}");

    // GetExtendedAgentCard on an agent that declares none.
    let e = c.get_extended_agent_card().await.unwrap_err();
    assert_eq!(status_of(&e).0, Some("FAILED_PRECONDITION"), "{e}");

    // SendStreamingMessage: the task, a working status, the artifact, completed.
    let mut events = within("stream", c.send_streaming_message(send(&mid("tck-stream-001")))).await.unwrap();
    let mut kinds = Vec::new();
    while let Some(ev) = within("event", events.next()).await {
        let ev = ev.unwrap();
        assert_eq!(ev.id, None, "gRPC events carry no ids");
        kinds.push(match ev.into_response().unwrap() {
            StreamResponse::Task(_) => "task".to_owned(),
            StreamResponse::Message(_) => "message".to_owned(),
            StreamResponse::StatusUpdate(u) => format!("{:?}", u.status.state),
            StreamResponse::ArtifactUpdate(_) => "artifact".to_owned(),
        });
    }
    assert_eq!(kinds.first().map(String::as_str), Some("task"), "{kinds:?}");
    assert!(kinds.iter().any(|k| k == "artifact"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("Completed"), "{kinds:?}");

    // SubscribeToTask on a running task: the task as it is, then the rest of its turn.
    let mut req = send(&mid("tck-delayed-complete"));
    req.configuration = Some(SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let running = task_of(c.send_message(req).await.unwrap());
    assert!(matches!(running.status.state, TaskState::Submitted | TaskState::Working), "{running:?}");
    let mut sub =
        within("subscribe", c.subscribe_to_task(SubscribeToTaskRequest::new(running.id.clone()))).await.unwrap();
    let first = within("first event", sub.next()).await.unwrap().unwrap();
    assert!(matches!(first.response(), Some(StreamResponse::Task(t)) if t.id == running.id), "{first:?}");
    let mut last = None;
    while let Some(ev) = within("event", sub.next()).await {
        last = Some(ev.unwrap());
    }
    match last.and_then(|e| e.into_response()) {
        Some(StreamResponse::StatusUpdate(u)) => assert_eq!(u.status.state, TaskState::Completed),
        Some(StreamResponse::Task(t)) => assert_eq!(t.status.state, TaskState::Completed),
        other => panic!("the subscription ended with {other:?}"),
    }
    // Subscribing to a task that has ended: UnsupportedOperation (1.0.1: FAILED_PRECONDITION).
    let e = c.subscribe_to_task(SubscribeToTaskRequest::new(task.id.clone())).await.unwrap_err();
    assert_eq!(status_of(&e), (Some("FAILED_PRECONDITION"), Some("UNSUPPORTED_OPERATION")), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_answers_what_http_json_answers() {
    let server = demo_server().await;
    let grpc = client(&server.card, Binding::Grpc, None);
    let rest = client(&server.card, Binding::HttpJson, None);
    let task = task_of(grpc.send_message(send(&mid("tck-artifact-data"))).await.unwrap());
    let over_rest = rest.get_task(GetTaskRequest::new(task.id.clone())).await.unwrap();
    let over_grpc = grpc.get_task(GetTaskRequest::new(task.id.clone())).await.unwrap();
    // Equal as JSON (a data part's object comes back with its keys in another order: a
    // protobuf Struct is a map).
    let json = |t: &Task| serde_json::to_value(t).unwrap();
    assert_eq!(json(&over_grpc), json(&over_rest));
    assert_eq!(json(&over_grpc), json(&task));
    // The data part went through google.protobuf.Value and back unchanged.
    let part = &over_grpc.artifacts[0].parts[0];
    assert_eq!(serde_json::to_value(part).unwrap()["data"], json!({"key": "value", "count": 42}));
    let a = grpc.list_tasks(ListTasksRequest::default()).await.unwrap();
    let b = rest.list_tasks(ListTasksRequest::default()).await.unwrap();
    assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_and_tenants_come_from_the_metadata() {
    let creds = StaticCredentials::new().with("apiKey", "key-1", Principal { subject: "u".into(), tenant: None }).with(
        "bearer",
        "tok-acme",
        Principal { subject: "acme-bot".into(), tenant: Some("acme".into()) },
    );
    let server = start(
        |c| {
            c["securitySchemes"] = json!({
                "apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
                "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}},
            });
            c["securityRequirements"] =
                json!([{"schemes": {"apiKey": {"list": []}}}, {"schemes": {"bearer": {"list": []}}}]);
        },
        |card| A2aServer::builder(demo(300), card).credentials(creds),
    )
    .await;

    let anonymous = client(&server.card, Binding::Grpc, None);
    let e = anonymous.send_message(send(&mid("tck-complete-task"))).await.unwrap_err();
    assert_eq!(status_of(&e), (Some("UNAUTHENTICATED"), Some("UNAUTHENTICATED")), "{e}");

    // The acme bot works in its tenant (the interface's tenant goes into each request).
    let mut acme_card = server.card.clone();
    acme_card.supported_interfaces[0].tenant = "acme".into();
    let acme = client(&acme_card, Binding::Grpc, Some(Auth::Bearer("tok-acme".into())));
    let task = task_of(acme.send_message(send(&mid("tck-complete-task"))).await.unwrap());
    assert_eq!(acme.get_task(GetTaskRequest::new(task.id.clone())).await.unwrap().id, task.id);

    // The default tenant's user does not see it.
    let key = Auth::ApiKey { header: http::HeaderName::from_static("x-api-key"), value: "key-1".into() };
    let user = client(&server.card, Binding::Grpc, Some(key));
    let e = user.get_task(GetTaskRequest::new(task.id.clone())).await.unwrap_err();
    assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotFound), "{e}");

    // The acme bot asking for another tenant is refused.
    let mut other_card = server.card.clone();
    other_card.supported_interfaces[0].tenant = "other".into();
    let wrong = client(&other_card, Binding::Grpc, Some(Auth::Bearer("tok-acme".into())));
    let e = wrong.get_task(GetTaskRequest::new(task.id.clone())).await.unwrap_err();
    assert_eq!(status_of(&e), (Some("PERMISSION_DENIED"), Some("PERMISSION_DENIED")), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_timeout_bounds_a_unary_call() {
    let server = demo_server().await;
    let opts = ClientOptions {
        binding: Some(Binding::Grpc),
        request_timeout: Some(std::time::Duration::from_millis(50)),
        ..ClientOptions::default()
    };
    let c = A2aClient::from_card(server.card.clone(), opts).unwrap();
    // The delayed scenario takes 300 ms, and a blocking send waits for it.
    let e = within("timeout", c.send_message(send(&mid("tck-delayed-complete")))).await.unwrap_err();
    assert!(e.is_timeout(), "{e}");
    assert_eq!(status_of(&e).0, Some("DEADLINE_EXCEEDED"));
}

#[test]
fn the_card_builder_declares_grpc() {
    let card = AgentCard::builder("a", "b", "1").grpc_interface("127.0.0.1:50051").build();
    let iface = &card.supported_interfaces[0];
    assert_eq!((iface.protocol_binding.as_str(), iface.url.as_str()), ("GRPC", "127.0.0.1:50051"));
}

// ---------------------------------------------------------------------------
// Raw calls: the statuses exactly as a foreign client sees them.

mod raw {
    use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
    use tonic::Status;

    /// Sends and receives message bytes as they are.
    #[derive(Clone, Copy, Default)]
    pub(crate) struct Bytes;

    pub(crate) struct Pass;

    impl Encoder for Pass {
        type Item = Vec<u8>;
        type Error = Status;
        fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
            bytes::BufMut::put_slice(dst, &item);
            Ok(())
        }
    }

    impl Decoder for Pass {
        type Item = Vec<u8>;
        type Error = Status;
        fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
            let n = bytes::Buf::remaining(src);
            Ok(Some(bytes::Buf::copy_to_bytes(src, n).to_vec()))
        }
    }

    impl Codec for Bytes {
        type Encode = Vec<u8>;
        type Decode = Vec<u8>;
        type Encoder = Pass;
        type Decoder = Pass;
        fn encoder(&mut self) -> Pass {
            Pass
        }
        fn decoder(&mut self) -> Pass {
            Pass
        }
    }
}

/// One unary call with raw message bytes and `metadata`.
async fn raw_call(addr: &str, method: &str, body: Vec<u8>, metadata: &[(&'static str, &str)]) -> tonic::Status {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let mut req = tonic::Request::new(body);
    for (k, v) in metadata {
        req.metadata_mut().insert(*k, v.parse().unwrap());
    }
    let path = http::uri::PathAndQuery::try_from(format!("/lf.a2a.v1.A2AService/{method}")).unwrap();
    match grpc.unary::<_, Vec<u8>, _>(req, path, raw::Bytes).await {
        Ok(resp) => panic!("{method} succeeded with {:?}", resp.into_inner()),
        Err(status) => status,
    }
}

fn error_info(status: &tonic::Status) -> tonic_types::ErrorInfo {
    use tonic_types::StatusExt;
    status.get_error_details().error_info().cloned().unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"))
}

/// A protobuf string field: tag, length, bytes (lengths under 128).
fn string_field(number: u8, s: &str) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2, s.len() as u8];
    out.extend(s.as_bytes());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_statuses_with_error_info() {
    let server = demo_server().await;
    let addr = server.card.supported_interfaces[0].url.clone();
    let v1 = [("a2a-version", "1.0")];

    // GetTask of an unknown task (GetTaskRequest.id is field 2).
    let s = within("get", raw_call(&addr, "GetTask", string_field(2, "no-such-task"), &v1)).await;
    assert_eq!(s.code(), tonic::Code::NotFound, "{s:?}");
    let info = error_info(&s);
    assert_eq!((info.reason.as_str(), info.domain.as_str()), ("TASK_NOT_FOUND", "a2a-protocol.org"));
    assert_eq!(info.metadata.get("taskId").map(String::as_str), Some("no-such-task"));

    // Bytes that are no message.
    let s = raw_call(&addr, "GetTask", vec![0xff, 0xff, 0xff], &v1).await;
    assert_eq!(s.code(), tonic::Code::InvalidArgument, "{s:?}");
    assert_eq!(error_info(&s).reason, "PARSE_ERROR");

    // A SendMessageRequest without its message: the path names the missing field.
    let s = raw_call(&addr, "SendMessage", Vec::new(), &v1).await;
    assert_eq!(s.code(), tonic::Code::InvalidArgument, "{s:?}");
    let info = error_info(&s);
    assert_eq!(info.reason, "INVALID_PARAMS");
    assert_eq!(info.metadata.get("path").map(String::as_str), Some("$"), "{info:?}");
    assert_eq!(info.metadata.get("expected").map(String::as_str), Some("the field \"message\""), "{info:?}");

    // A method the service does not have.
    let s = raw_call(&addr, "TeleportTask", Vec::new(), &v1).await;
    assert_eq!(s.code(), tonic::Code::Unimplemented, "{s:?}");

    // A version the service does not serve; none at all is 1.0 on this service.
    let s = raw_call(&addr, "GetTask", string_field(2, "x"), &[("a2a-version", "2.0")]).await;
    assert_eq!(s.code(), tonic::Code::FailedPrecondition, "{s:?}");
    assert_eq!(error_info(&s).reason, "VERSION_NOT_SUPPORTED");
    let s = raw_call(&addr, "GetTask", string_field(2, "x"), &[]).await;
    assert_eq!(s.code(), tonic::Code::NotFound, "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_1_0_0_table_answers_unimplemented_where_it_did() {
    let server = start(
        |c| c["capabilities"]["streaming"] = json!(false),
        |card| A2aServer::builder(demo(300), card).error_table(agentproto_a2a::errors::ErrorTable::V1_0_0),
    )
    .await;
    let c = client(&server.card, Binding::Grpc, None);
    let e = c.subscribe_to_task(SubscribeToTaskRequest::new("t")).await.unwrap_err();
    assert_eq!(status_of(&e), (Some("UNIMPLEMENTED"), Some("UNSUPPORTED_OPERATION")), "{e}");
}
