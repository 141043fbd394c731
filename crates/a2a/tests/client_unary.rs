//! The client's unary calls against a scripted loopback server: the exact requests on
//! both bindings, error mapping, malformed answers, card discovery and retries.
#![cfg(feature = "client")]

#[path = "client_support.rs"]
mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentproto_a2a::client::{
    A2aClient, A2aErrorKind, Auth, Binding, CallOptions, ClientError, ClientOptions, RetryPolicy,
};
use agentproto_a2a::v1::{
    self, AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest,
    GetTaskRequest, ListTaskPushNotificationConfigsRequest, ListTasksRequest, Message, Part, PartContent, Role,
    SendMessageRequest, SendMessageResponse, TaskPushNotificationConfig, TaskState,
};
use serde_json::{json, Value};
use support::{bounded, card, rpc_ok, task_json, Recorded, Reply, Server};

fn decode_card(text: &str) -> AgentCard {
    agentproto_codec::decode_slice::<AgentCard>(text.as_bytes(), "$").expect("card").value
}

fn message() -> SendMessageRequest {
    SendMessageRequest::new(Message::new("m-1", Role::User, vec![Part::new(PartContent::Text("hello".into()))]))
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy { max_attempts: 3, initial_backoff: Duration::from_millis(1), max_backoff: Duration::from_millis(5) }
}

fn push_config_json() -> Value {
    json!({"id": "cfg-1", "taskId": "t-1", "url": "https://hooks.example/a2a", "token": "tok"})
}

/// A JSON-RPC agent answering every method with a canned result.
fn rpc_script(req: &Recorded) -> Reply {
    let body = req.json();
    let id = body["id"].clone();
    let result = match body["method"].as_str().unwrap_or("") {
        "SendMessage" => json!({"task": task_json("t-1", "TASK_STATE_COMPLETED")}),
        "GetTask" | "CancelTask" => task_json("t-1", "TASK_STATE_CANCELED"),
        "ListTasks" => {
            json!({"tasks": [task_json("t-1", "TASK_STATE_WORKING")], "nextPageToken": "", "pageSize": 50, "totalSize": 1})
        }
        "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" => push_config_json(),
        "ListTaskPushNotificationConfigs" => json!({"configs": [push_config_json()]}),
        "DeleteTaskPushNotificationConfig" => json!({}),
        "GetExtendedAgentCard" => serde_json::from_str(&card(&[("http://x/rpc", "JSONRPC", "")])).unwrap(),
        _ => {
            return Reply::json(
                200,
                "application/json",
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}"#.to_vec(),
            )
        }
    };
    Reply::json(200, "application/json", rpc_ok(&id, result))
}

#[tokio::test]
async fn jsonrpc_requests_carry_method_version_auth_extensions_and_tenant() {
    bounded(async {
        let mut server = Server::start(rpc_script).await;
        let card = decode_card(&card(&[(&format!("{}/rpc", server.base), "JSONRPC", "acme")]));
        let opts = ClientOptions {
            auth: Some(Auth::Bearer("s3cret".into())),
            extensions: vec!["https://ext.example/a".into(), "https://ext.example/b".into()],
            ..ClientOptions::default()
        };
        let client = A2aClient::from_card(card, opts).unwrap();
        assert_eq!(client.interface().binding, Binding::JsonRpc);

        let mut req = message();
        req.tenant = "caller-set-this".into(); // replaced by the interface's tenant
        match client.send_message(req).await.unwrap() {
            SendMessageResponse::Task(t) => assert_eq!(t.status.state, TaskState::Completed),
            other => panic!("{other:?}"),
        }
        let mut get = GetTaskRequest::new("t-1");
        get.history_length = Some(2);
        assert_eq!(client.get_task(get).await.unwrap().id, "t-1");
        assert_eq!(client.list_tasks(ListTasksRequest::default()).await.unwrap().total_size, 1);
        assert_eq!(client.cancel_task(CancelTaskRequest::new("t-1")).await.unwrap().status.state, TaskState::Canceled);
        let mut cfg = TaskPushNotificationConfig::new("https://hooks.example/a2a");
        cfg.task_id = "t-1".into();
        assert_eq!(client.create_task_push_notification_config(cfg).await.unwrap().id, "cfg-1");
        let got = client.get_task_push_notification_config(GetTaskPushNotificationConfigRequest::new("t-1", "cfg-1"));
        assert_eq!(got.await.unwrap().token, "tok");
        let listed = client.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest::new("t-1"));
        assert_eq!(listed.await.unwrap().configs.len(), 1);
        client
            .delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest::new("t-1", "cfg-1"))
            .await
            .unwrap();
        assert_eq!(client.get_extended_agent_card().await.unwrap().name, "scripted");

        let methods = [
            "SendMessage",
            "GetTask",
            "ListTasks",
            "CancelTask",
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig",
            "GetExtendedAgentCard",
        ];
        let mut last_id = 0;
        for method in methods {
            let r = server.next().await;
            assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", "/rpc"), "{method}");
            assert_eq!(r.header("content-type"), Some("application/json"));
            assert_eq!(r.header("a2a-version"), Some("1.0"));
            assert_eq!(r.header("authorization"), Some("Bearer s3cret"));
            assert_eq!(r.header("a2a-extensions"), Some("https://ext.example/a, https://ext.example/b"));
            let body = r.json();
            assert_eq!(body["jsonrpc"], "2.0");
            assert_eq!(body["method"], method);
            assert_eq!(body["params"]["tenant"], "acme", "{method}");
            let id = body["id"].as_u64().expect("numeric id");
            assert!(id > last_id, "ids increase");
            last_id = id;
            if method == "GetTask" {
                assert_eq!(body["params"], json!({"tenant": "acme", "id": "t-1", "historyLength": 2}));
            }
            if method == "SendMessage" {
                assert_eq!(body["params"]["message"]["parts"][0]["text"], "hello");
                assert_eq!(body["params"]["message"]["role"], "ROLE_USER");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn jsonrpc_without_tenant_omits_the_field() {
    bounded(async {
        let mut server = Server::start(rpc_script).await;
        let card = decode_card(&card(&[(&format!("{}/rpc", server.base), "JSONRPC", "")]));
        let client = A2aClient::from_card(card, ClientOptions::default()).unwrap();
        let mut req = GetTaskRequest::new("t-1");
        req.tenant = "stale".into();
        client.get_task(req).await.unwrap();
        let r = server.next().await;
        assert_eq!(r.json()["params"], json!({"id": "t-1"}));
        assert_eq!(r.header("authorization"), None);
        assert_eq!(r.header("a2a-extensions"), None);
    })
    .await;
}

/// A REST agent: canned answers by verb and path (tenant prefix `/api/t%201`).
fn rest_script(req: &Recorded) -> Reply {
    let ok = |v: Value| Reply::json(200, "application/a2a+json", serde_json::to_vec(&v).unwrap());
    let path = req.path().trim_start_matches("/api").trim_start_matches("/t%201");
    match (req.method.as_str(), path) {
        ("POST", "/message:send") => {
            ok(json!({"message": {"messageId": "r-1", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}))
        }
        ("GET", "/tasks/t%2F1") | ("POST", "/tasks/t%2F1:cancel") => ok(task_json("t/1", "TASK_STATE_WORKING")),
        ("GET", "/tasks") => ok(
            json!({"tasks": [task_json("t-9", "TASK_STATE_WORKING")], "nextPageToken": "", "pageSize": 10, "totalSize": 0}),
        ),
        ("POST", "/tasks/t-1/pushNotificationConfigs") | ("GET", "/tasks/t-1/pushNotificationConfigs/cfg-1") => {
            ok(push_config_json())
        }
        ("GET", "/tasks/t-1/pushNotificationConfigs") => {
            ok(json!({"configs": [push_config_json()], "nextPageToken": "n"}))
        }
        ("DELETE", "/tasks/t-1/pushNotificationConfigs/cfg-1") => Reply::status(200),
        ("GET", "/extendedAgentCard") => Reply::json(200, "application/json", card(&[("http://x", "HTTP+JSON", "")])),
        _ => {
            Reply::json(404, "application/json", r#"{"error":{"code":404,"status":"NOT_FOUND","message":"no route"}}"#)
        }
    }
}

#[tokio::test]
async fn rest_requests_use_rule_verbs_paths_queries_and_tenant_prefix() {
    bounded(async {
        let mut server = Server::start(rest_script).await;
        let card = decode_card(&card(&[(&format!("{}/api/", server.base), "HTTP+JSON", "t 1")]));
        let opts = ClientOptions {
            auth: Some(Auth::ApiKey { header: http::HeaderName::from_static("x-api-key"), value: "k-1".into() }),
            ..ClientOptions::default()
        };
        let client = A2aClient::from_card(card, opts).unwrap();
        assert!(matches!(client.send_message(message()).await.unwrap(), SendMessageResponse::Message(_)));
        let mut get = GetTaskRequest::new("t/1");
        get.history_length = Some(2);
        client.get_task(get).await.unwrap();
        let list = ListTasksRequest {
            context_id: "ctx 1".into(),
            status: Some(TaskState::Working),
            page_size: Some(10),
            include_artifacts: Some(true),
            ..ListTasksRequest::default()
        };
        client.list_tasks(list).await.unwrap();
        client.cancel_task(CancelTaskRequest::new("t/1")).await.unwrap();
        let mut cfg = TaskPushNotificationConfig::new("https://hooks.example/a2a");
        cfg.task_id = "t-1".into();
        client.create_task_push_notification_config(cfg).await.unwrap();
        client
            .get_task_push_notification_config(GetTaskPushNotificationConfigRequest::new("t-1", "cfg-1"))
            .await
            .unwrap();
        let mut list_cfg = ListTaskPushNotificationConfigsRequest::new("t-1");
        list_cfg.page_size = 5;
        assert_eq!(client.list_task_push_notification_configs(list_cfg).await.unwrap().next_page_token, "n");
        client
            .delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest::new("t-1", "cfg-1"))
            .await
            .unwrap();
        client.get_extended_agent_card().await.unwrap();

        let expected = [
            ("POST", "/api/t%201/message:send", true),
            ("GET", "/api/t%201/tasks/t%2F1?historyLength=2", false),
            (
                "GET",
                "/api/t%201/tasks?contextId=ctx%201&status=TASK_STATE_WORKING&pageSize=10&includeArtifacts=true",
                false,
            ),
            ("POST", "/api/t%201/tasks/t%2F1:cancel", true),
            ("POST", "/api/t%201/tasks/t-1/pushNotificationConfigs", true),
            ("GET", "/api/t%201/tasks/t-1/pushNotificationConfigs/cfg-1", false),
            ("GET", "/api/t%201/tasks/t-1/pushNotificationConfigs?pageSize=5", false),
            ("DELETE", "/api/t%201/tasks/t-1/pushNotificationConfigs/cfg-1", false),
            ("GET", "/api/t%201/extendedAgentCard", false),
        ];
        for (method, target, has_body) in expected {
            let r = server.next().await;
            assert_eq!((r.method.as_str(), r.target.as_str()), (method, target));
            assert_eq!(r.header("a2a-version"), Some("1.0"), "{target}");
            assert_eq!(r.header("x-api-key"), Some("k-1"));
            if has_body {
                assert_eq!(r.header("content-type"), Some("application/a2a+json"), "{target}");
                assert_eq!(r.json()["tenant"], "t 1", "{target}");
            } else {
                assert_eq!(r.header("content-type"), None, "{target}");
                assert!(r.body.is_empty());
            }
        }
    })
    .await;
}

#[tokio::test]
async fn rest_without_tenant_has_no_prefix_and_no_field() {
    bounded(async {
        let mut server = Server::start(rest_script).await;
        let card = decode_card(&card(&[(&format!("{}/api", server.base), "HTTP+JSON", "")]));
        let client = A2aClient::from_card(card, ClientOptions::default()).unwrap();
        client.send_message(message()).await.unwrap();
        let r = server.next().await;
        assert_eq!(r.target, "/api/message:send");
        assert!(r.json().get("tenant").is_none());
        assert_eq!(r.json()["message"]["messageId"], "m-1");
    })
    .await;
}

#[tokio::test]
async fn errors_map_to_a2a_kinds_on_both_bindings() {
    bounded(async {
        let rpc = Server::start(|req: &Recorded| {
            let id = req.json()["id"].clone();
            let code = match req.json()["method"].as_str() {
                Some("GetTask") => -32001,
                Some("CancelTask") => -32002,
                Some("SendMessage") => -32009,
                _ => -32603,
            };
            let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "m",
                "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "X", "domain": "a2a-protocol.org"}]}});
            Reply::json(200, "application/json", serde_json::to_vec(&body).unwrap())
        })
        .await;
        let client =
            A2aClient::from_card(decode_card(&card(&[(&rpc.base, "JSONRPC", "")])), ClientOptions::default()).unwrap();
        let e = client.get_task(GetTaskRequest::new("t")).await.unwrap_err();
        assert!(matches!(&e, ClientError::Rpc { code: -32001, data: Some(_), .. }), "{e:?}");
        assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotFound));
        let e = client.cancel_task(CancelTaskRequest::new("t")).await.unwrap_err();
        assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotCancelable));
        let e = client.send_message(message()).await.unwrap_err();
        assert_eq!(e.kind(), Some(A2aErrorKind::VersionNotSupported));
        let e = client.list_tasks(ListTasksRequest::default()).await.unwrap_err();
        assert_eq!(e.kind(), Some(A2aErrorKind::Internal));

        let rest = Server::start(|req: &Recorded| {
            let aip = |status: u16, s: &str, reason: &str| {
                let body = json!({"error": {"code": status, "status": s, "message": "m", "details": [
                    {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}]}});
                Reply::json(status, "application/json", serde_json::to_vec(&body).unwrap())
            };
            match req.path() {
                "/tasks/a" => aip(404, "NOT_FOUND", "TASK_NOT_FOUND"),
                "/tasks/b:cancel" => aip(400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
                "/message:send" => aip(400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"),
                "/tasks/c" => Reply::status(404),
                _ => Reply::json(500, "text/plain", "boom"),
            }
        })
        .await;
        let client =
            A2aClient::from_card(decode_card(&card(&[(&rest.base, "HTTP+JSON", "")])), ClientOptions::default()).unwrap();
        let e = client.get_task(GetTaskRequest::new("a")).await.unwrap_err();
        assert!(
            matches!(&e, ClientError::Status { http_status: Some(404), status: Some(s), reason: Some(r), .. } if s == "NOT_FOUND" && r == "TASK_NOT_FOUND"),
            "{e:?}"
        );
        assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotFound));
        let e = client.cancel_task(CancelTaskRequest::new("b")).await.unwrap_err();
        assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotCancelable));
        let e = client.send_message(message()).await.unwrap_err();
        assert_eq!(e.kind(), Some(A2aErrorKind::ExtensionSupportRequired));
        let e = client.get_task(GetTaskRequest::new("c")).await.unwrap_err();
        assert_eq!(e.kind(), Some(A2aErrorKind::TaskNotFound), "404 without ErrorInfo");
        let e = client.get_task(GetTaskRequest::new("d")).await.unwrap_err();
        assert!(matches!(&e, ClientError::Status { http_status: Some(500), message, .. } if message == "boom"), "{e:?}");
        assert_eq!(e.kind(), None);
    })
    .await;
}

#[tokio::test]
async fn malformed_answers_are_typed_errors_with_paths() {
    bounded(async {
        let rpc = Server::start(|req: &Recorded| {
            let id = req.json()["id"].clone();
            let body = match req.json()["method"].as_str() {
                Some("GetTask") => rpc_ok(&id, json!({"id": 5, "status": {"state": "TASK_STATE_WORKING"}})),
                Some("CancelTask") => rpc_ok(&json!(999), task_json("t", "TASK_STATE_CANCELED")),
                Some("ListTasks") => b"this is not json".to_vec(),
                _ => rpc_ok(&id, json!({"task": {"id": "t", "status": {"state": "TASK_STATE_NOPE"}}})),
            };
            Reply::json(200, "application/json", body)
        })
        .await;
        let client =
            A2aClient::from_card(decode_card(&card(&[(&rpc.base, "JSONRPC", "")])), ClientOptions::default()).unwrap();
        match client.get_task(GetTaskRequest::new("t")).await.unwrap_err() {
            ClientError::Decode { error, .. } => assert_eq!(error.path, "$.result.id"),
            other => panic!("{other:?}"),
        }
        match client.send_message(message()).await.unwrap_err() {
            ClientError::Decode { error, .. } => assert_eq!(error.path, "$.result.task.status.state"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(client.cancel_task(CancelTaskRequest::new("t")).await, Err(ClientError::Protocol(_))));
        assert!(matches!(client.list_tasks(ListTasksRequest::default()).await, Err(ClientError::Decode { .. })));

        let rest =
            Server::start(|_: &Recorded| Reply::json(200, "application/json", r#"{"id":"t","status":{}}"#)).await;
        let client =
            A2aClient::from_card(decode_card(&card(&[(&rest.base, "HTTP+JSON", "")])), ClientOptions::default())
                .unwrap();
        match client.get_task(GetTaskRequest::new("t")).await.unwrap_err() {
            ClientError::Decode { error, .. } => assert!(error.path.starts_with("$.status"), "{}", error.path),
            other => panic!("{other:?}"),
        }
        let e = client.get_task(GetTaskRequest::new("")).await.unwrap_err();
        assert!(matches!(e, ClientError::InvalidRequest(_)), "an empty path variable is refused locally");
    })
    .await;
}

#[tokio::test]
async fn discovery_falls_back_to_agent_json_and_revalidates_with_etag() {
    bounded(async {
        let version = Arc::new(AtomicU32::new(1));
        let v = version.clone();
        let mut server = Server::start(move |req: &Recorded| match req.path() {
            "/agents/x/.well-known/agent-card.json" => Reply::status(404),
            "/agents/x/.well-known/agent.json" => {
                let current = v.load(Ordering::SeqCst);
                let tag = format!("\"v{current}\"");
                if req.header("if-none-match") == Some(tag.as_str()) {
                    return Reply::status(304);
                }
                let binding = if current == 1 { "JSONRPC" } else { "HTTP+JSON" };
                let mut r = Reply::json(200, "application/json", card(&[("http://agent.example/a2a", binding, "")]));
                if let Reply::Full { headers, .. } = &mut r {
                    headers.push(("etag".into(), tag));
                }
                r
            }
            _ => Reply::status(500),
        })
        .await;
        let client =
            A2aClient::discover(&format!("{}/agents/x/", server.base), ClientOptions::default()).await.unwrap();
        assert_eq!(client.card_etag().as_deref(), Some("\"v1\""));
        assert_eq!(client.interface().binding, Binding::JsonRpc);
        assert!(client.card_url().unwrap().ends_with("/agents/x/.well-known/agent.json"));
        let first = server.next().await;
        assert_eq!(first.path(), "/agents/x/.well-known/agent-card.json");
        assert_eq!(first.header("a2a-version"), Some("1.0"));
        assert_eq!(server.next().await.path(), "/agents/x/.well-known/agent.json");

        assert!(!client.refresh_card().await.unwrap(), "304 keeps the cached card");
        assert_eq!(server.next().await.header("if-none-match"), Some("\"v1\""));
        assert_eq!(client.interface().binding, Binding::JsonRpc);

        version.store(2, Ordering::SeqCst);
        assert!(client.refresh_card().await.unwrap());
        assert_eq!(client.card_etag().as_deref(), Some("\"v2\""));
        assert_eq!(client.interface().binding, Binding::HttpJson);

        let bad = Server::start(|_: &Recorded| Reply::json(200, "application/json", r#"{"name":7}"#)).await;
        match A2aClient::discover(&bad.base, ClientOptions::default()).await.unwrap_err() {
            ClientError::Decode { error, .. } => assert_eq!(error.path, "$.name"),
            other => panic!("{other:?}"),
        }
    })
    .await;
}

#[test]
fn interface_selection_skips_what_is_unsupported_and_honours_a_pin() {
    let mut text: Value = serde_json::from_str(&card(&[
        ("http://h/slim", "SLIMRPC", ""),
        ("http://h/old", "JSONRPC", ""),
        ("http://h/rest", "HTTP+JSON", "t"),
        ("http://h/rpc", "JSONRPC", ""),
    ]))
    .unwrap();
    text["supportedInterfaces"][1]["protocolVersion"] = json!("0.3");
    let card = decode_card(&text.to_string());
    let c = A2aClient::from_card(card.clone(), ClientOptions::default()).unwrap();
    assert_eq!((c.interface().url.as_str(), c.interface().tenant.as_str()), ("http://h/rest", "t"));
    let pinned = ClientOptions { binding: Some(Binding::JsonRpc), ..ClientOptions::default() };
    assert_eq!(A2aClient::from_card(card.clone(), pinned).unwrap().interface().url, "http://h/rpc");

    let mut only_slim = card;
    only_slim.supported_interfaces.retain(|i| i.protocol_binding == "SLIMRPC");
    let e = A2aClient::from_card(only_slim, ClientOptions::default()).unwrap_err();
    assert!(matches!(e, ClientError::NoSupportedInterface(ref m) if m.contains("SLIMRPC")), "{e:?}");
}

/// A `GRPC` interface: chosen in its place with the `grpc` feature (its bare `host:port`
/// read as plaintext HTTP/2), skipped without it.
#[test]
fn a_grpc_interface_is_used_only_with_the_grpc_feature() {
    let card = decode_card(&card(&[("127.0.0.1:50051", "GRPC", ""), ("http://h/rpc", "JSONRPC", "")]));
    let c = A2aClient::from_card(card, ClientOptions::default()).unwrap();
    if cfg!(feature = "grpc") {
        assert_eq!(c.interface().url, "http://127.0.0.1:50051");
        assert_eq!(c.interface().binding.as_str(), "GRPC");
    } else {
        assert_eq!(c.interface().url, "http://h/rpc");
    }
}

#[tokio::test]
async fn reads_retry_on_503_sends_only_with_an_idempotency_key() {
    bounded(async {
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let mut server = Server::start(move |req: &Recorded| {
            // Every other request fails with 503.
            if c.fetch_add(1, Ordering::SeqCst) % 2 == 0 {
                return Reply::status(503);
            }
            match req.path() {
                "/message:send" => Reply::json(
                    200,
                    "application/json",
                    json!({"task": task_json("t", "TASK_STATE_WORKING")}).to_string(),
                ),
                _ => Reply::json(200, "application/json", task_json("t", "TASK_STATE_WORKING").to_string()),
            }
        })
        .await;
        let opts = ClientOptions { retry: fast_retries(), ..ClientOptions::default() };
        let client = A2aClient::from_card(decode_card(&card(&[(&server.base, "HTTP+JSON", "")])), opts).unwrap();

        client.get_task(GetTaskRequest::new("t")).await.unwrap();
        assert_eq!(server.drain().len(), 2, "GetTask retried once");

        let e = client.send_message(message()).await.unwrap_err();
        assert!(matches!(e, ClientError::Status { http_status: Some(503), .. }), "{e:?}");
        assert_eq!(server.drain().len(), 1, "SendMessage without a key is not repeated");

        calls.store(0, Ordering::SeqCst);
        client.send_message_with(message(), &CallOptions::idempotent("key-1")).await.unwrap();
        let sent = server.drain();
        assert_eq!(sent.len(), 2, "SendMessage with a key is retried");
        assert!(sent.iter().all(|r| r.header("idempotency-key") == Some("key-1")));

        calls.store(0, Ordering::SeqCst);
        client.cancel_task(CancelTaskRequest::new("t")).await.unwrap();
        assert_eq!(server.drain().len(), 2, "CancelTask is idempotent");
    })
    .await;
}

#[tokio::test]
async fn connect_errors_surface_as_connect_after_retries() {
    bounded(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let opts = ClientOptions { retry: fast_retries(), ..ClientOptions::default() };
        let client = A2aClient::from_card(decode_card(&card(&[(&base, "JSONRPC", "")])), opts).unwrap();
        let e = client.send_message(message()).await.unwrap_err();
        assert!(e.is_connect(), "{e:?}");
        let e = A2aClient::discover(&base, ClientOptions { retry: fast_retries(), ..ClientOptions::default() })
            .await
            .unwrap_err();
        assert!(e.is_connect(), "{e:?}");
    })
    .await;
}

#[test]
fn a2a_error_kind_helpers() {
    assert_eq!(A2aErrorKind::from_code(-32007), Some(A2aErrorKind::ExtendedAgentCardNotConfigured));
    assert_eq!(
        A2aErrorKind::from_reason("PUSH_NOTIFICATION_NOT_SUPPORTED"),
        Some(A2aErrorKind::PushNotificationNotSupported)
    );
    assert_eq!(A2aErrorKind::InvalidAgentResponse.code(), -32006);
    let _ = v1::Empty {};
}
