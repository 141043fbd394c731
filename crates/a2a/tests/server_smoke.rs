//! First light: the demo agent over both bindings.
#![cfg(feature = "server")]
use agentproto_a2a::demo::{card, DemoAgent};
use agentproto_a2a::server::A2aServer;
use serde_json::{json, Value};

async fn start() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = A2aServer::builder(DemoAgent::default(), card(&base)).build();
    tokio::spawn(server.serve(listener));
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_then_get_on_both_bindings() {
    let base = start().await;
    let http = reqwest::Client::new();
    let body = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"tck-complete-task-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}});
    let r: Value = http
        .post(format!("{base}/"))
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let task = &r["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{r}");
    let id = task["id"].as_str().unwrap();
    let g = http
        .get(format!("{base}/a2a/rest/tasks/{id}?historyLength=1"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(g.status(), 200);
    let g: Value = g.json().await.unwrap();
    assert_eq!(g["id"], id);
    assert_eq!(g["history"].as_array().unwrap().len(), 1);
    let missing = http.get(format!("{base}/a2a/rest/tasks/nope")).header("A2A-Version", "1.0").send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let e: Value = missing.json().await.unwrap();
    assert_eq!(e["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    let nov = http.post(format!("{base}/")).json(&body).send().await.unwrap();
    let nov: Value = nov.json().await.unwrap();
    assert_eq!(nov["error"]["code"], -32009);
    let s = http
        .post(format!("{base}/a2a/rest/message:stream"))
        .header("A2A-Version", "1.0")
        .json(&json!({"message":{"messageId":"tck-stream-001-x","role":"ROLE_USER","parts":[{"text":"hi"}]}}))
        .send()
        .await
        .unwrap();
    let text = s.text().await.unwrap();
    assert!(text.starts_with("id: 1\ndata: {\"task\""), "{text}");
    assert!(text.contains("TASK_STATE_COMPLETED"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_send_shows_the_history_the_caller_asked_for() {
    let base = start().await;
    let body = json!({"message":{"messageId":"tck-stream-001-h","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":0}});
    let s = reqwest::Client::new()
        .post(format!("{base}/a2a/rest/message:stream"))
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap();
    let text = s.text().await.unwrap();
    let first = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
    let first: Value = serde_json::from_str(first).unwrap();
    assert!(first["task"].is_object(), "{first}");
    assert!(first["task"].get("history").is_none(), "historyLength 0 leaves the history out: {first}");
}
