//! `agentproto serve` as a process: what it acknowledged survives SIGKILL (SQLite), a
//! turn killed with it is failed after the restart, and SIGTERM shuts it down cleanly. HTTP is spoken by hand over loopback so the bytes
//! compared before and after the restart are exactly the server's.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_tasks_and_events_survive_sigkill() {
    let dir = TempDir::new("kill");
    let db = dir.0.join("a.db");
    let mut agent = spawn(&db).await;
    let a = agent.addr.clone();

    // (task id, the state its log ends with)
    let mut tasks: Vec<(String, &'static str)> = Vec::new();
    for prefix in
        ["tck-complete-task", "tck-artifact-text", "tck-artifact-file", "tck-reject-task", "tck-input-required"]
    {
        let (status, v, _) = call(&a, "POST", "/a2a/rest/message:send", Some(&send(&format!("{prefix}-1")))).await;
        assert_eq!(status, 200, "{v}");
        let state = match v["task"]["status"]["state"].as_str().unwrap() {
            "TASK_STATE_COMPLETED" => "TASK_STATE_COMPLETED",
            "TASK_STATE_REJECTED" => "TASK_STATE_REJECTED",
            "TASK_STATE_INPUT_REQUIRED" => "TASK_STATE_INPUT_REQUIRED",
            other => panic!("{prefix}: {other}"),
        };
        tasks.push((v["task"]["id"].as_str().unwrap().to_owned(), state));
    }
    // Streamed ones: the events as the stream delivered them.
    let mut streamed = Vec::new();
    for prefix in ["tck-stream-001", "tck-stream-artifact-chunked"] {
        let mut ex = open(&a, "POST", "/a2a/rest/message:stream", &[], Some(&send(&format!("{prefix}-1")))).await;
        assert_eq!(ex.status, 200);
        let evs = within("the stream", ex.events_until(|_| false)).await;
        let first: Value = serde_json::from_str(&evs[0].1).unwrap();
        let id = first["task"]["id"].as_str().unwrap().to_owned();
        assert_eq!(state_of(&serde_json::from_str(&evs.last().unwrap().1).unwrap()), Some("TASK_STATE_COMPLETED"));
        tasks.push((id.clone(), "TASK_STATE_COMPLETED"));
        streamed.push((id, evs));
    }

    let mut before = Vec::new();
    for (id, until) in &tasks {
        let (status, _, body) = call(&a, "GET", &format!("/a2a/rest/tasks/{id}"), None).await;
        assert_eq!(status, 200);
        let events = log(&a, id, until).await;
        assert!(events.len() >= 2, "{events:?}");
        before.push((body, events));
    }
    for (id, evs) in &streamed {
        let i = tasks.iter().position(|(t, _)| t == id).unwrap();
        assert_eq!(&before[i].1, evs, "the replayed log is what the stream delivered");
    }

    // SIGKILL: no chance to flush or close anything.
    within("SIGKILL", agent.child.kill()).await.unwrap();
    drop(agent);

    let agent = spawn(&db).await;
    let b = agent.addr.clone();
    for ((id, until), (body, events)) in tasks.iter().zip(&before) {
        let (status, _, after) = call(&b, "GET", &format!("/a2a/rest/tasks/{id}"), None).await;
        assert_eq!(status, 200, "task {id} is gone");
        assert_eq!(String::from_utf8_lossy(&after), String::from_utf8_lossy(body), "task {id} changed");
        assert_eq!(&log(&b, id, until).await, events, "the log of {id}");
    }
    let (status, list, _) = call(&b, "GET", "/a2a/rest/tasks?pageSize=100", None).await;
    assert_eq!(status, 200);
    let mut listed: Vec<(String, String)> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_owned(), t["status"]["state"].as_str().unwrap().to_owned()))
        .collect();
    listed.sort();
    let mut want: Vec<(String, String)> = tasks.iter().map(|(i, s)| (i.clone(), (*s).to_owned())).collect();
    want.sort();
    assert_eq!(listed, want);

    // The interrupted task goes on after the restart.
    let i = tasks.iter().position(|(_, s)| *s == "TASK_STATE_INPUT_REQUIRED").unwrap();
    let (id, _) = &tasks[i];
    let mut follow = send("follow-up-1");
    follow["message"]["taskId"] = json!(id);
    let (status, v, _) = call(&b, "POST", "/a2a/rest/message:send", Some(&follow)).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["task"]["id"], json!(id));
    let events = log(&b, id, "TASK_STATE_COMPLETED").await;
    let old = &before[i].1;
    assert_eq!(&events[..old.len()], &old[..], "the old events first");
    assert_eq!(state_of(&serde_json::from_str(&events.last().unwrap().1).unwrap()), Some("TASK_STATE_COMPLETED"));
    let ids: Vec<Option<u64>> = events.iter().map(|(i, _)| *i).collect();
    assert_eq!(ids, (1..=events.len() as u64).map(Some).collect::<Vec<_>>(), "one log, numbered on from before");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_killed_with_its_server_is_failed_after_the_restart() {
    let dir = TempDir::new("orphan");
    let db = dir.0.join("a.db");
    // A one-second lease, and a delayed scenario that would stay WORKING for ten minutes.
    let flags = ["--turn-lease", "1s", "--delay", "600"];
    let mut agent = spawn_with(&db, &flags).await;
    let mut ex =
        open(&agent.addr, "POST", "/a2a/rest/message:stream", &[], Some(&send("tck-delayed-complete-1"))).await;
    assert_eq!(ex.status, 200);
    let seen = within("WORKING", ex.events_until(|ev| state_of(ev) == Some("TASK_STATE_WORKING"))).await;
    let first: Value = serde_json::from_str(&seen[0].1).unwrap();
    let id = first["task"]["id"].as_str().unwrap().to_owned();
    let last_seen = seen.last().and_then(|(id, _)| *id).expect("WORKING has an id");

    within("SIGKILL", agent.child.kill()).await.unwrap();
    drop(agent);
    drop(ex);

    // The client resumes on the restarted server: the Task, the final event, the end.
    let agent = spawn_with(&db, &flags).await;
    let last_id = last_seen.to_string();
    let path = format!("/a2a/rest/tasks/{id}:subscribe");
    let mut ex = open(&agent.addr, "GET", &path, &[("Last-Event-ID", last_id.as_str())], None).await;
    assert_eq!(ex.status, 200);
    let events = within("the final event and the end of the stream", ex.events_until(|_| false)).await;
    assert!(ex.done, "the stream ended");
    assert!(events[0].0.is_none() && events[0].1.starts_with("{\"task\""), "{events:?}");
    let (final_id, final_event) = events.last().unwrap();
    assert_eq!(*final_id, Some(last_seen + 1), "{events:?}");
    let final_event: Value = serde_json::from_str(final_event).unwrap();
    assert_eq!(final_event["statusUpdate"]["status"]["state"], json!("TASK_STATE_FAILED"), "{final_event}");
    let text = final_event["statusUpdate"]["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("interrupted"), "{final_event}");
    let (status, task, _) = call(&agent.addr, "GET", &format!("/a2a/rest/tasks/{id}"), None).await;
    assert_eq!((status, &task["status"]["state"]), (200, &json!("TASK_STATE_FAILED")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retention_shorter_than_the_resume_window_is_refused() {
    let dir = TempDir::new("retention");
    let run = Command::new(env!("CARGO_BIN_EXE_agentproto"))
        .args(["serve", "--addr", "127.0.0.1:0", "--retain-terminal", "1m", "--resume-window", "5m", "--db"])
        .arg(dir.0.join("a.db"))
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = within("serve to refuse", run).await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--retain-terminal") && stderr.contains("resume"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_shuts_down_cleanly_even_with_an_open_stream() {
    let dir = TempDir::new("term");
    // Timeouts far longer than the test may take: the shutdown deadline must end it.
    let long = ["--header-timeout", "600", "--body-timeout", "600", "--idle-timeout", "600"];
    let mut agent = spawn_with(&dir.0.join("a.db"), &[&long[..], &["--shutdown-timeout", "1"]].concat()).await;
    let a = agent.addr.clone();
    let (status, v, _) = call(&a, "POST", "/a2a/rest/message:send", Some(&send("tck-input-required-1"))).await;
    assert_eq!(status, 200, "{v}");
    let id = v["task"]["id"].as_str().unwrap();
    // A subscriber waiting on the task keeps a connection open.
    let mut sub = open(&a, "POST", &format!("/a2a/rest/tasks/{id}:subscribe"), &[], None).await;
    assert_eq!(sub.status, 200);
    let first = within("the first event", sub.events_until(|_| true)).await;
    assert_eq!(state_of(&serde_json::from_str(&first[0].1).unwrap()), Some("TASK_STATE_INPUT_REQUIRED"));

    // Half-sent requests: a head, and a body its handler is waiting for.
    let mut half_head = within("connect", TcpStream::connect(&a)).await.unwrap();
    half_head.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nA2A-Ver").await.unwrap();
    let mut half_body = within("connect", TcpStream::connect(&a)).await.unwrap();
    half_body
        .write_all(b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 500\r\n\r\n")
        .await
        .unwrap();
    let mut continued = [0u8; 25];
    within("100 Continue", half_body.read_exact(&mut continued)).await.unwrap();
    assert!(continued.starts_with(b"HTTP/1.1 100"), "{}", String::from_utf8_lossy(&continued));
    half_body.write_all(b"{\"jsonrpc\":").await.unwrap();

    let pid = agent.child.id().unwrap();
    let kill = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(kill.success());
    let status = within("the process to exit after SIGTERM", agent.child.wait()).await.unwrap();
    assert!(status.success(), "exit status {status:?}");
    // The open stream ended rather than hanging.
    within("the stream to end", async { while sub.more().await {} }).await;
    for conn in [&mut half_head, &mut half_body] {
        let mut rest = Vec::new();
        let _ = within("the half-sent request's connection to close", conn.read_to_end(&mut rest)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_limits_are_flags() {
    let dir = TempDir::new("limits");
    let agent = spawn_with(&dir.0.join("a.db"), &["--idle-timeout", "0.3", "--max-connections", "1"]).await;
    let started = std::time::Instant::now();
    let mut idle = within("connect", TcpStream::connect(&agent.addr)).await.unwrap();
    // The only slot is taken: another connection is answered 503 and closed.
    let mut other = within("connect", TcpStream::connect(&agent.addr)).await.unwrap();
    let mut answer = Vec::new();
    let _ = within("the 503", other.read_to_end(&mut answer)).await;
    assert!(answer.starts_with(b"HTTP/1.1 503"), "{}", String::from_utf8_lossy(&answer));
    // The idle one is closed after the idle timeout.
    let mut rest = Vec::new();
    let _ = within("the idle connection to close", idle.read_to_end(&mut rest)).await;
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_and_cors_are_flags() {
    let dir = TempDir::new("layers");
    let page = "https://app.example";
    let flags = ["--rate-limit", "1/m", "--rate-limit-burst", "2", "--cors-origin", page];
    let agent = spawn_with(&dir.0.join("a.db"), &flags).await;
    // A preflight from the page is answered before the rate limit counts anything.
    let preflight = [("Origin", page), ("Access-Control-Request-Method", "POST")];
    let answer = open(&agent.addr, "OPTIONS", "/", &preflight, None).await;
    assert_eq!(answer.status, 200, "{}", answer.head);
    assert!(answer.head.contains(&format!("access-control-allow-origin: {page}")), "{}", answer.head);
    let other = open(&agent.addr, "OPTIONS", "/", &[("Origin", "https://evil.example")], None).await;
    assert!(!other.head.contains("access-control-allow-origin"), "{}", other.head);
    // A burst of two, then 429 with Retry-After (still marked for the page).
    for _ in 0..2 {
        let (status, body, _) = call(&agent.addr, "GET", "/a2a/rest/tasks", None).await;
        assert_eq!(status, 200, "{body}");
    }
    let refused = open(&agent.addr, "GET", "/a2a/rest/tasks", &[("Origin", page)], None).await;
    let head = refused.head.clone();
    let (status, body) = refused.finish().await;
    assert_eq!(status, 429, "{}", String::from_utf8_lossy(&body));
    assert!(head.contains("retry-after: "), "{head}");
    assert!(head.contains(&format!("access-control-allow-origin: {page}")), "{head}");
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["details"][0]["reason"], "RATE_LIMIT_EXCEEDED", "{body}");
    // A rate the flag cannot read is refused at start.
    let status = Command::new(env!("CARGO_BIN_EXE_agentproto"))
        .args(["serve", "--addr", "127.0.0.1:0", "--memory", "--rate-limit", "0/s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let status = within("serve to refuse the flag", status).await.unwrap();
    assert_eq!(status.code(), Some(2));
}

/// The throwaway PostgreSQL server of crates/a2a's tests.
#[path = "../../a2a/tests/support/postgres.rs"]
mod postgres;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_serve_processes_on_one_postgres_database_are_one_service() {
    let cluster = postgres::PgCluster::shared();
    let db = cluster.database().await;
    let url = format!("postgresql:///{}?host={}&port=5432&user=postgres", db.name, cluster.socket_dir().display());
    let mut a = spawn(Path::new(&url)).await;
    let b = spawn(Path::new(&url)).await;

    // Sent to A, served by B: the task, its place in the list, its whole log.
    let (status, sent, _) = call(&a.addr, "POST", "/a2a/rest/message:send", Some(&send("tck-complete-task-pg"))).await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["task"]["id"].as_str().unwrap().to_owned();
    let (status, on_b, _) = call(&b.addr, "GET", &format!("/a2a/rest/tasks/{id}"), None).await;
    assert_eq!(status, 200, "{on_b}");
    assert_eq!(on_b["status"]["state"], json!("TASK_STATE_COMPLETED"));
    let (status, list, _) = call(&b.addr, "GET", "/a2a/rest/tasks?pageSize=100", None).await;
    assert_eq!(status, 200);
    assert!(list["tasks"].as_array().unwrap().iter().any(|t| t["id"] == json!(id)), "{list}");
    let on_a = log(&a.addr, &id, "TASK_STATE_COMPLETED").await;
    assert_eq!(log(&b.addr, &id, "TASK_STATE_COMPLETED").await, on_a, "one log, whichever replica replays it");

    // A goes (SIGKILL); B still has everything A acknowledged, and goes on with it.
    within("SIGKILL", a.child.kill()).await.unwrap();
    let (status, after, _) = call(&b.addr, "GET", &format!("/a2a/rest/tasks/{id}"), None).await;
    assert_eq!(status, 200);
    assert_eq!(after, on_b);
    let (status, next, _) = call(&b.addr, "POST", "/a2a/rest/message:send", Some(&send("tck-complete-task-pg2"))).await;
    assert_eq!((status, &next["task"]["status"]["state"]), (200, &json!("TASK_STATE_COMPLETED")), "{next}");
}
