//! Memory of `agentproto serve` under the largest requests it accepts: eight
//! SendMessages of a maximum-size body at once, on each store, must keep the server's peak
//! resident memory within a stated bound (the growth over its resident memory before them,
//! read from `/proc/<pid>/status`). The agent is the demo's plain completion, so what is
//! measured is the server's own cost per large request (request bytes, decoded message,
//! stored task, events, answer), not text an agent chooses to write.

#![cfg(target_os = "linux")]

mod support;

use serde_json::{json, Value};
use support::*;

/// The server's default body limit (`max_body_bytes`, 4 MiB).
const MAX_BODY: usize = 4 << 20;
/// How many such requests are in flight at once.
const AT_ONCE: usize = 8;
/// The stated bound: peak growth at most this many times the bodies' total (issue 18's
/// goal: about four). Measured on the release build: 2.3–2.6× (memory store), 3.1–3.3×
/// (SQLite).
const BOUND: usize = 4;

fn kib(status: &str, field: &str) -> usize {
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field} in {status}"));
    line[field.len()..].trim().trim_end_matches("kB").trim().parse().unwrap()
}

fn memory_of(pid: u32) -> (usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    (kib(&status, "VmRSS:") * 1024, kib(&status, "VmHWM:") * 1024)
}

/// A SendMessage whose JSON-RPC body is just under the maximum size.
fn largest_send(i: usize) -> (Value, usize) {
    let mut body = json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": {"messageId": format!("tck-complete-task-large-{i}"), "role": "ROLE_USER", "parts": [{"text": ""}]}}});
    let room = MAX_BODY - serde_json::to_vec(&body).unwrap().len() - 256;
    body["params"]["message"]["parts"][0]["text"] = Value::String("x".repeat(room));
    let len = serde_json::to_vec(&body).unwrap().len();
    (body, len)
}

async fn peak_growth(extra: &[&str]) -> (usize, usize) {
    let dir = TempDir::new("large");
    let agent = spawn_with(&dir.0.join("a2a.db"), extra).await;
    let pid = agent.child.id().unwrap();
    // One small call first, so that what the first request of any size costs (the
    // runtime's threads, SQLite's schema) is in the baseline.
    let (status, _, _) =
        call(&agent.addr, "POST", "/a2a/rest/message:send", Some(&send("tck-complete-task-warm"))).await;
    assert_eq!(status, 200);
    let (before, _) = memory_of(pid);
    let sends: Vec<_> = (0..AT_ONCE).map(largest_send).collect();
    let total: usize = sends.iter().map(|(_, len)| len).sum();
    assert!(total > AT_ONCE * (MAX_BODY - 4096), "{total}");
    let calls = sends.into_iter().map(|(body, _)| {
        let addr = agent.addr.clone();
        tokio::spawn(async move {
            let (status, bytes) = open(&addr, "POST", "/", &[], Some(&body)).await.finish().await;
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            (status, v["result"]["task"]["status"]["state"].as_str().map(str::to_owned))
        })
    });
    for call in calls.collect::<Vec<_>>() {
        let (status, state) = within("a large SendMessage", call).await.unwrap();
        assert_eq!((status, state.as_deref()), (200, Some("TASK_STATE_COMPLETED")));
    }
    let (_, peak) = memory_of(pid);
    (peak.saturating_sub(before), total)
}

async fn within_bound(extra: &[&str]) {
    let (growth, total) = peak_growth(extra).await;
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    println!(
        "{extra:?}: peak growth {:.1} MiB for {:.1} MiB of bodies ({:.2}×)",
        mib(growth),
        mib(total),
        growth as f64 / total as f64
    );
    assert!(
        growth <= BOUND * total,
        "peak resident memory grew by {:.1} MiB for {AT_ONCE} bodies of {:.1} MiB in all: more than {BOUND}× them",
        mib(growth),
        mib(total)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_maximum_size_messages_on_sqlite_stay_within_four_times_their_size() {
    within_bound(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_maximum_size_messages_in_memory_stay_within_four_times_their_size() {
    within_bound(&["--memory"]).await;
}
