//! Two `agentproto serve` processes, A and B, on one PostgreSQL database: a subscriber
//! on B follows a turn running on A as it is written; a client streaming from A that
//! loses A to SIGKILL resumes on B with every event once (the orphan failed by B's
//! sweeper, its final event live on B); a cancel sent to B ends A's turn CANCELED; push
//! deliveries go out once per event however the replicas split them; and a restart of
//! PostgreSQL under both gives clean errors while it is down and a working service
//! after. Every wait is bounded; the children die with the test.

mod support;

#[path = "../../a2a/tests/support/postgres.rs"]
mod postgres;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;

/// The `--db` URL of a test database.
fn url(cluster: &postgres::PgCluster, db: &postgres::TestDb) -> String {
    format!("postgresql:///{}?host={}&port=5432&user=postgres", db.name, cluster.socket_dir().display())
}

async fn shared_cluster() -> &'static postgres::PgCluster {
    tokio::task::spawn_blocking(postgres::PgCluster::shared).await.expect("start PostgreSQL")
}

/// A and B on the database at `url`, with the same flags.
async fn replicas(url: &str, flags: &[&str]) -> (Agent, Agent) {
    let a = spawn_with(Path::new(url), flags).await;
    let b = spawn_with(Path::new(url), flags).await;
    (a, b)
}

/// `SendMessage` params for the demo's `agentproto-ticks` scenario with `ticks` ticks.
fn ticks(tag: &str, ticks: u32) -> Value {
    let message_id = format!("agentproto-ticks-{tag}-{}", std::process::id());
    json!({"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": ticks.to_string()}]}})
}

fn event(data: &str) -> Value {
    serde_json::from_str(data).unwrap()
}

/// The text of a tick's artifact chunk.
fn tick_text(ev: &Value) -> Option<&str> {
    ev["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str()
}

/// The ids of a stream's log events, checked to follow each other from `first`.
fn consecutive(events: &[(Option<u64>, String)], first: u64) -> Vec<u64> {
    let ids: Vec<u64> = events.iter().map(|(id, data)| id.unwrap_or_else(|| panic!("no id: {data}"))).collect();
    let want: Vec<u64> = (first..first + ids.len() as u64).collect();
    assert_eq!(ids, want, "no gap and no repeat");
    ids
}

/// Opens a subscription; returns it with the Task it starts with.
async fn subscribe(addr: &str, id: &str, last_event_id: Option<u64>) -> (Exchange, (Option<u64>, Value)) {
    let last = last_event_id.map(|n| n.to_string());
    let headers: Vec<(&str, &str)> = last.iter().map(|n| ("Last-Event-ID", n.as_str())).collect();
    let mut ex = open(addr, "GET", &format!("/a2a/rest/tasks/{id}:subscribe"), &headers, None).await;
    assert_eq!(ex.status, 200, "subscribe to {id} on {addr}");
    let first = within("the Task", ex.events_until(|_| true)).await.remove(0);
    let task = event(&first.1);
    assert!(task["task"].is_object(), "{task}");
    (ex, (first.0, task))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_on_b_sees_each_event_of_a_turn_on_a_as_it_is_written() {
    let cluster = shared_cluster().await;
    let db = cluster.database().await;
    let (a, b) = replicas(&url(cluster, &db), &["--delay", "0.2"]).await;

    let mut params = ticks("live", 20);
    params["configuration"] = json!({"returnImmediately": true});
    let (status, sent, _) = call(&a.addr, "POST", "/a2a/rest/message:send", Some(&params)).await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["task"]["id"].as_str().unwrap().to_owned();

    let (mut on_b, (snapshot_id, _)) = subscribe(&b.addr, &id, None).await;
    let first_tick = within("the first tick on B", on_b.events_until(|ev| tick_text(ev).is_some())).await;
    // The turn on A is still going: B got the tick as it was written, not afterwards.
    let (_, task, _) = call(&a.addr, "GET", &format!("/a2a/rest/tasks/{id}"), None).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{task}");
    let rest =
        within("the rest of the turn on B", on_b.events_until(|ev| state_of(ev) == Some("TASK_STATE_COMPLETED"))).await;
    let seen: Vec<(Option<u64>, String)> = first_tick.into_iter().chain(rest).collect();
    let start = snapshot_id.expect("a live subscription's Task carries the log position") + 1;
    consecutive(&seen, start);
    let texts: Vec<&str> = seen.iter().filter_map(|(_, data)| tick_text(&event(data)).map(|_| data.as_str())).collect();
    assert_eq!(texts.len(), 20, "every tick");
    for (n, data) in texts.iter().enumerate() {
        assert_eq!(tick_text(&event(data)), Some(format!("tick {}", n + 1).as_str()), "in order");
    }
    // The same bytes as the log A replays.
    let whole = log(&a.addr, &id, "TASK_STATE_COMPLETED").await;
    assert_eq!(&whole[whole.len() - seen.len()..], &seen[..]);
    within("B's stream to end", async { while on_b.more().await {} }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_by_sigkill_of_a_resumes_on_b_with_every_event_once_and_the_orphan_failed_live() {
    let cluster = shared_cluster().await;
    let db = cluster.database().await;
    let (mut a, b) = replicas(&url(cluster, &db), &["--delay", "0.3", "--turn-lease", "2s"]).await;

    let mut on_a = open(&a.addr, "POST", "/a2a/rest/message:stream", &[], Some(&ticks("killed", 200))).await;
    assert_eq!(on_a.status, 200);
    let before = within("three ticks from A", on_a.events_until(|ev| tick_text(ev) == Some("tick 3"))).await;
    let id = event(&before[0].1)["task"]["id"].as_str().unwrap().to_owned();
    consecutive(&before, 1);
    let last_seen = before.last().unwrap().0.unwrap();

    within("SIGKILL", a.child.kill()).await.unwrap();
    drop(on_a);

    // The client resumes on B; the task is still WORKING there (A's lease has not run
    // out), so the final event comes to this live subscriber.
    let (mut on_b, (snapshot_id, snapshot)) = subscribe(&b.addr, &id, Some(last_seen)).await;
    assert_eq!(snapshot_id, None, "a resume's Task is outside the log");
    assert_eq!(snapshot["task"]["status"]["state"], "TASK_STATE_WORKING", "{snapshot}");
    let after = within("the rest of the log, and the end", on_b.events_until(|_| false)).await;
    assert!(on_b.done, "the stream ended");
    consecutive(&after, last_seen + 1);
    let last = event(&after.last().unwrap().1);
    assert_eq!(last["statusUpdate"]["status"]["state"], "TASK_STATE_FAILED", "{last}");
    assert!(last["statusUpdate"]["metadata"]["agentproto"]["interrupted"]["replica"].is_string(), "{last}");
    // Ticks A wrote after the client stopped reading are there, once, in order.
    let ticks_after: Vec<String> =
        after.iter().filter_map(|(_, data)| tick_text(&event(data)).map(str::to_owned)).collect();
    let want: Vec<String> = (4..4 + ticks_after.len()).map(|n| format!("tick {n}")).collect();
    assert_eq!(ticks_after, want);
    // What the client got from A and then from B is the task's whole log.
    let seen: Vec<(Option<u64>, String)> = before.into_iter().chain(after).collect();
    assert_eq!(log(&b.addr, &id, "TASK_STATE_FAILED").await, seen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_b_ends_a_turn_running_on_a_canceled() {
    let cluster = shared_cluster().await;
    let db = cluster.database().await;
    let (a, b) = replicas(&url(cluster, &db), &["--delay", "0.2"]).await;

    let mut on_a = open(&a.addr, "POST", "/a2a/rest/message:stream", &[], Some(&ticks("canceled", 10_000))).await;
    assert_eq!(on_a.status, 200);
    let started = within("a tick from A", on_a.events_until(|ev| tick_text(ev).is_some())).await;
    let id = event(&started[0].1)["task"]["id"].as_str().unwrap().to_owned();

    let (status, task, _) = call(&b.addr, "POST", &format!("/a2a/rest/tasks/{id}:cancel"), Some(&json!({}))).await;
    assert_eq!(status, 200, "{task}");
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{task}");
    // A's stream ends with the CANCELED event its executor wrote (not B's fallback,
    // which would say the owner did not answer), and no tick after it.
    let rest = within("A's stream to end", on_a.events_until(|_| false)).await;
    assert!(on_a.done);
    let last = event(&rest.last().unwrap().1);
    assert_eq!(state_of(&last), Some("TASK_STATE_CANCELED"), "{last}");
    assert!(last["statusUpdate"].get("metadata").is_none(), "{last}");
    let (_, on_a_now, _) = call(&a.addr, "GET", &format!("/a2a/rest/tasks/{id}"), None).await;
    assert_eq!(on_a_now["status"]["state"], "TASK_STATE_CANCELED");
    // Canceling again, on either replica, is refused.
    for addr in [&a.addr, &b.addr] {
        let (status, again, _) = call(addr, "POST", &format!("/a2a/rest/tasks/{id}:cancel"), Some(&json!({}))).await;
        assert_eq!((status, again["error"]["details"][0]["reason"].as_str()), (400, Some("TASK_NOT_CANCELABLE")));
    }
}

/// A webhook receiver on loopback: every body it got.
#[derive(Default)]
struct Hook {
    bodies: Mutex<Vec<String>>,
    arrived: Notify,
}

impl Hook {
    /// Listens; returns the URL to give push configs.
    async fn start(self: &Arc<Self>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let hook = Arc::clone(self);
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(Arc::clone(&hook).serve(conn));
            }
        });
        url
    }

    /// Answers 200 to each request of one keep-alive connection.
    async fn serve(self: Arc<Self>, mut conn: tokio::net::TcpStream) {
        let mut buf = Vec::new();
        loop {
            let end = loop {
                if let Some(end) = find(&buf, b"\r\n\r\n") {
                    break end;
                }
                let mut chunk = [0u8; 4096];
                match conn.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            };
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            buf.drain(..end + 4);
            while buf.len() < length {
                let mut chunk = [0u8; 4096];
                match conn.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let body: Vec<u8> = buf.drain(..length).collect();
            self.bodies.lock().unwrap().push(String::from_utf8_lossy(&body).into_owned());
            self.arrived.notify_waiters();
            if conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await.is_err() {
                return;
            }
        }
    }

    async fn wait_for(&self, count: usize) {
        within(&format!("{count} push deliveries"), async {
            loop {
                let notified = self.arrived.notified();
                if self.bodies.lock().unwrap().len() >= count {
                    return;
                }
                notified.await;
            }
        })
        .await
    }
}

/// Rows left in the push outbox.
async fn outbox_rows(db: &postgres::TestDb) -> i64 {
    let (client, connection) = tokio_postgres::connect(&db.config, tokio_postgres::NoTls).await.unwrap();
    let driver = tokio::spawn(connection);
    let count = client.query_one("SELECT count(*) FROM a2a_outbox", &[]).await.unwrap().get(0);
    drop(client);
    let _ = driver.await;
    count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_is_delivered_exactly_once_per_event_across_replicas() {
    let cluster = shared_cluster().await;
    let db = cluster.database().await;
    let (a, b) = replicas(&url(cluster, &db), &["--delay", "0.05", "--push-allow-private"]).await;
    let hook = Arc::new(Hook::default());
    let hook_url = hook.start().await;

    // Tasks sent to both replicas at once, each with a push config: every commit wakes
    // both replicas' workers (one in process, the other through the bus).
    let sends = (0..6).map(|n| {
        let addr = if n % 2 == 0 { a.addr.clone() } else { b.addr.clone() };
        let mut params = ticks(&format!("push-{n}"), 3);
        params["configuration"] = json!({"taskPushNotificationConfig": {"url": hook_url, "token": format!("t{n}")}});
        tokio::spawn(async move { call(&addr, "POST", "/a2a/rest/message:send", Some(&params)).await })
    });
    let mut ids = Vec::new();
    for send in sends.collect::<Vec<_>>() {
        let (status, sent, _) = within("a send", send).await.unwrap();
        assert_eq!((status, &sent["task"]["status"]["state"]), (200, &json!("TASK_STATE_COMPLETED")), "{sent}");
        ids.push(sent["task"]["id"].as_str().unwrap().to_owned());
    }
    let mut expected: BTreeMap<String, usize> = BTreeMap::new();
    for id in &ids {
        for (_, data) in log(&b.addr, id, "TASK_STATE_COMPLETED").await {
            *expected.entry(data).or_default() += 1;
        }
    }
    assert_eq!(expected.values().sum::<usize>(), 6 * 6, "six events per task");
    hook.wait_for(36).await;
    // Once the outbox is empty no delivery is left to repeat.
    let deadline = Instant::now() + WAIT;
    while outbox_rows(&db).await > 0 {
        assert!(Instant::now() < deadline, "the outbox did not empty");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut delivered: BTreeMap<String, usize> = BTreeMap::new();
    for body in hook.bodies.lock().unwrap().iter() {
        *delivered.entry(body.clone()).or_default() += 1;
    }
    assert_eq!(delivered, expected, "every event exactly once");
}

/// Whether a process is still running (not crashed).
fn alive(agent: &mut Agent) -> bool {
    matches!(agent.child.try_wait(), Ok(None))
}

/// Retries `GET /tasks/{id}` until it succeeds (the first requests after a restart may
/// meet a connection that has not noticed yet that it was cut).
async fn until_served(addr: &str, id: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let (status, task, _) = call(addr, "GET", &format!("/a2a/rest/tasks/{id}"), None).await;
        if status == 200 {
            return task;
        }
        assert!(Instant::now() < deadline, "{addr} still fails after the restart: {task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_under_both_replicas_fails_requests_cleanly_and_both_recover() {
    // A cluster of its own: the shared one serves other tests meanwhile.
    let cluster = tokio::task::spawn_blocking(postgres::PgCluster::start).await.unwrap().expect("start PostgreSQL");
    let cluster = Arc::new(cluster);
    let db = cluster.database().await;
    let (mut a, mut b) = replicas(&url(&cluster, &db), &["--delay", "0.1"]).await;

    let (status, sent, _) = call(&a.addr, "POST", "/a2a/rest/message:send", Some(&send("tck-input-required-pg"))).await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["task"]["id"].as_str().unwrap().to_owned();
    // A subscriber on B, open across the restart.
    let (mut on_b, (_, snapshot)) = subscribe(&b.addr, &id, None).await;
    assert_eq!(snapshot["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    let stopping = Arc::clone(&cluster);
    tokio::task::spawn_blocking(move || stopping.stop_server()).await.unwrap().expect("stop PostgreSQL");
    // Every request that needs the database gets an error answer, at once.
    for (addr, method, path, body) in [
        (&a.addr, "GET", format!("/a2a/rest/tasks/{id}"), None),
        (&b.addr, "GET", format!("/a2a/rest/tasks/{id}"), None),
        (&b.addr, "GET", "/a2a/rest/tasks?pageSize=10".to_owned(), None),
        (&a.addr, "POST", "/a2a/rest/message:send".to_owned(), Some(send("tck-complete-task-down"))),
        (&b.addr, "GET", format!("/a2a/rest/tasks/{id}:subscribe"), None),
    ] {
        let started = Instant::now();
        let (status, answer, _) = call(addr, method, &path, body.as_ref()).await;
        assert!(status >= 500, "{method} {path}: {status} {answer}");
        assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("store")), "{answer}");
        assert!(started.elapsed() < Duration::from_secs(10), "{method} {path} took {:?}", started.elapsed());
    }
    assert!(alive(&mut a) && alive(&mut b), "no crash");

    let starting = Arc::clone(&cluster);
    tokio::task::spawn_blocking(move || starting.start_server()).await.unwrap().expect("start PostgreSQL again");
    assert_eq!(until_served(&a.addr, &id).await["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    until_served(&b.addr, &id).await;

    // A turn on A after the restart: B's subscriber from before it sees every event.
    let mut follow = send("follow-up-after-restart");
    follow["message"]["taskId"] = json!(id);
    let (status, done, _) = call(&a.addr, "POST", "/a2a/rest/message:send", Some(&follow)).await;
    assert_eq!((status, &done["task"]["status"]["state"]), (200, &json!("TASK_STATE_COMPLETED")), "{done}");
    let events = within("the turn on B", on_b.events_until(|_| false)).await;
    assert!(on_b.done, "the stream ended with the task");
    let states: Vec<Option<String>> =
        events.iter().map(|(_, data)| state_of(&event(data)).map(str::to_owned)).collect();
    assert_eq!(states.first().cloned().flatten().as_deref(), Some("TASK_STATE_WORKING"), "{events:?}");
    assert_eq!(states.last().cloned().flatten().as_deref(), Some("TASK_STATE_COMPLETED"), "{events:?}");
    let whole = log(&b.addr, &id, "TASK_STATE_COMPLETED").await;
    assert_eq!(&whole[whole.len() - events.len()..], &events[..], "the log's new events, once each");

    // And a new subscriber on B follows a new turn on A live.
    let mut params = ticks("after-restart", 5);
    params["configuration"] = json!({"returnImmediately": true});
    let (status, sent, _) = call(&a.addr, "POST", "/a2a/rest/message:send", Some(&params)).await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["task"]["id"].as_str().unwrap().to_owned();
    let (mut on_b, _) = subscribe(&b.addr, &id, None).await;
    let events =
        within("the new turn on B", on_b.events_until(|ev| state_of(ev) == Some("TASK_STATE_COMPLETED"))).await;
    assert_eq!(events.iter().filter(|(_, data)| tick_text(&event(data)).is_some()).count(), 5);
    assert!(alive(&mut a) && alive(&mut b));
}
