//! Push end to end: a server with push delivery on, a config registered inline with
//! SendMessage and another with CreateTaskPushNotificationConfig, and a real receiver on
//! loopback (allow-listed explicitly) that must get every event of the task.
#![cfg(feature = "server")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_a2a::demo::{card, DemoAgent};
use agentproto_a2a::push::{PushOptions, RetryPolicy};
use agentproto_a2a::server::A2aServer;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{json, Value};
use tokio::sync::Notify;

#[derive(Default)]
struct Seen {
    events: Mutex<Vec<(HeaderMap, Value)>>,
    arrived: Notify,
}

async fn receive(State(seen): State<Arc<Seen>>, headers: HeaderMap, body: Bytes) -> &'static str {
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.events.lock().unwrap().push((headers, v));
    seen.arrived.notify_waiters();
    "ok"
}

async fn wait_for(seen: &Seen, pred: impl Fn(&[(HeaderMap, Value)]) -> bool) {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let notified = seen.arrived.notified();
            if pred(&seen.events.lock().unwrap()) {
                return;
            }
            notified.await;
        }
    })
    .await
    .expect("the receiver gets the events in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_reaches_every_config() {
    let seen = Arc::new(Seen::default());
    let rx = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", rx.local_addr().unwrap());
    let app = axum::Router::new().route("/hook", axum::routing::post(receive)).with_state(seen.clone());
    tokio::spawn(async move { axum::serve(rx, app).await });

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let retry = RetryPolicy { initial_backoff: Duration::from_millis(5), ..PushOptions::default().retry };
    let push = PushOptions { allow_loopback: true, retry, ..PushOptions::default() };
    let server = A2aServer::builder(DemoAgent::default(), card(&base)).push(push).build();
    tokio::spawn(server.serve(listener));
    let http = reqwest::Client::new();
    let rpc = |method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        http.post(format!("{base}/")).header("A2A-Version", "1.0").json(&body).send()
    };

    // An input-required task, with a config given inline.
    let inline = json!({"url": hook, "token": "tok-inline"});
    let r: Value = rpc("SendMessage", json!({"message": {"messageId": "tck-input-required-1", "role": "ROLE_USER", "parts": [{"text": "x"}]}, "configuration": {"taskPushNotificationConfig": inline}}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task_id = r["result"]["task"]["id"].as_str().expect("a task").to_owned();
    // A second config registered afterwards, with credentials.
    let created: Value = rpc("CreateTaskPushNotificationConfig", json!({"taskId": task_id, "url": hook, "token": "tok-2", "authentication": {"scheme": "Bearer", "credentials": "secret"}}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(created["result"]["id"].as_str().is_some_and(|id| !id.is_empty()), "{created}");
    // Finish the task: the follow-up completes it.
    let r: Value = rpc(
        "SendMessage",
        json!({"message": {"messageId": "m-2", "taskId": task_id, "role": "ROLE_USER", "parts": [{"text": "more"}]}}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{r}");

    // The inline config saw the whole task from its first event; the second config every
    // event committed after it was registered. Both end with COMPLETED.
    let completed = |token: &str| {
        let token = token.to_owned();
        move |evs: &[(HeaderMap, Value)]| {
            evs.iter().any(|(h, v)| {
                h.get("x-a2a-notification-token").is_some_and(|t| t == token.as_str())
                    && v["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            })
        }
    };
    wait_for(&seen, completed("tok-inline")).await;
    wait_for(&seen, completed("tok-2")).await;
    let events = seen.events.lock().unwrap();
    let inline_events: Vec<&Value> = events
        .iter()
        .filter(|(h, _)| h.get("x-a2a-notification-token").is_some_and(|t| t == "tok-inline"))
        .map(|(_, v)| v)
        .collect();
    let states: Vec<String> =
        inline_events.iter().filter_map(|v| v["statusUpdate"]["status"]["state"].as_str().map(str::to_owned)).collect();
    assert!(
        states.contains(&"TASK_STATE_INPUT_REQUIRED".to_owned()) && states.contains(&"TASK_STATE_WORKING".to_owned()),
        "{states:?}"
    );
    for (h, v) in events.iter() {
        assert_eq!(h.get("content-type").unwrap(), "application/a2a+json");
        assert!(h.get("a2a-notification-token").is_some());
        let id = v
            .get("statusUpdate")
            .or(v.get("artifactUpdate"))
            .or(v.get("task"))
            .and_then(|e| e.get("taskId").or(e.get("id")))
            .and_then(Value::as_str);
        assert_eq!(id, Some(task_id.as_str()), "{v}");
        if h.get("x-a2a-notification-token").unwrap() == "tok-2" {
            assert_eq!(h.get("authorization").unwrap(), "Bearer secret");
        }
    }
}

/// A config the SSRF guard would refuse at delivery is refused when it is set, on
/// either route, with an error that names the rule; one it accepts is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_the_ssrf_guard_refuses_is_refused_when_set() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = A2aServer::builder(DemoAgent::default(), card(&base)).push(PushOptions::default()).build();
    let token = server.shutdown_token();
    tokio::spawn(server.serve(listener));
    let http = reqwest::Client::new();
    let rpc = |method: &str, params: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let req = http.post(format!("{base}/")).header("A2A-Version", "1.0").json(&body).send();
        async move { req.await.unwrap().json::<Value>().await.unwrap() }
    };
    let message = |id: &str| json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": "x"}]});
    let r = rpc("SendMessage", json!({"message": message("tck-input-required-a")})).await;
    let task_id = r["result"]["task"]["id"].as_str().expect("a task").to_owned();

    for (url, class) in [
        ("http://127.0.0.1:9/hook", "loopback"),
        ("http://localhost:9/hook", "loopback"),
        ("http://10.1.2.3/hook", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ] {
        let r = rpc("CreateTaskPushNotificationConfig", json!({"taskId": task_id, "url": url})).await;
        let e = &r["error"];
        assert_eq!(e["code"], -32602, "{url}: {r}");
        let message = e["message"].as_str().unwrap();
        assert!(message.contains("SSRF") && message.contains(class), "{url}: {message}");
        assert_eq!(e["data"][0]["metadata"]["path"], "$.params.url", "{r}");
        // Inline with a send: refused before any task is created.
        let config = json!({"taskPushNotificationConfig": {"url": url}});
        let r = rpc("SendMessage", json!({"message": message_for(url), "configuration": config})).await;
        assert_eq!(r["error"]["code"], -32602, "{url}: {r}");
        assert_eq!(r["error"]["data"][0]["metadata"]["path"], "$.params.configuration.taskPushNotificationConfig.url");
    }
    let listed = rpc("ListTaskPushNotificationConfigs", json!({"taskId": task_id})).await;
    assert_eq!(listed["result"]["configs"], Value::Null, "nothing was stored: {listed}");
    // A public address is accepted (nothing is sent to it here: the task does not move).
    let r =
        rpc("CreateTaskPushNotificationConfig", json!({"taskId": task_id, "url": "https://203.0.114.7/hook"})).await;
    assert!(r["result"]["id"].is_string(), "{r}");
    token.cancel();
}

fn message_for(url: &str) -> Value {
    json!({"messageId": format!("tck-complete-task-{}", url.len()), "role": "ROLE_USER", "parts": [{"text": "x"}]})
}
