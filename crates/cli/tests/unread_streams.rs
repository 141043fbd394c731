//! Memory of `agentproto serve` holding streams whose clients stopped reading (issue 35,
//! item 1): many `SubscribeToTask` streams on one task, each client with a small receive
//! buffer that reads nothing after the stream's first event, then one message of about
//! 4 MiB continues the task, whose echo (an artifact and a final status with the same
//! text) makes two events of that size for every subscriber. The stream budget
//! (`--stream-budget-mib`) must bound everything held for them, including the frames
//! already handed to their connections: the server's peak resident memory (`VmHWM` in
//! `/proc/<pid>/status`) may grow by what the same message costs a server with no
//! subscriber (measured the same way on a second server) plus the budget and a small
//! allowance, not by a frame per subscriber.

#![cfg(target_os = "linux")]

mod support;

use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// The follow-up message's size.
const BODY: usize = 4 << 20;
/// Subscribers that stop reading, on one task.
const STREAMS: usize = 48;
/// Subscribers that stop reading, on a task that holds the large message.
const SNAPSHOTS: usize = 12;
/// Tasks with one subscriber that stops reading each.
const TASKS: usize = 4;
/// The stream budget given to the server, MiB.
const BUDGET_MIB: usize = 8;
/// Beyond the budget: the copies of an event being encoded into its frame before the
/// frame is charged (at most one per worker thread), and allocator slack.
const ALLOWANCE: usize = 4 * BODY;

fn rpc(method: &str, params: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})).unwrap()
}

/// A JSON-RPC `SubscribeToTask` on a connection with a 4 KiB receive buffer, read up to
/// the end of the response head, which comes with the first event (the task): the
/// subscription is registered then.
async fn subscriber(addr: &str, task: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut conn = within("connect", socket.connect(addr.parse().unwrap())).await.unwrap();
    let body = rpc("SubscribeToTask", json!({"id": task}));
    let head = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nA2A-Version: 1.0\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.write_all(&body).await.unwrap();
    let mut seen = Vec::new();
    loop {
        if find(&seen, b"\r\n\r\n").is_some() {
            assert!(seen.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&seen));
            return conn;
        }
        // One byte at a time: nothing of the body beyond the head is taken.
        let mut buf = [0u8; 1];
        let n = within("the stream's response head", conn.read(&mut buf)).await.unwrap();
        assert!(n > 0, "closed before the response head");
        seen.extend_from_slice(&buf[..n]);
    }
}

/// How the streams ended, each read to its end once the measure is taken.
#[derive(Debug, Default)]
struct Outcomes {
    /// Up to the task's final status.
    completed: usize,
    /// Cut off with a `lagged` event.
    lagged: usize,
    /// Cut off by closing the connection (it held a frame the client did not read).
    closed: usize,
}

async fn drain(mut conn: TcpStream, outcomes: &mut Outcomes) {
    // The last bytes read, enough to hold any marker looked for across two reads.
    let mut tail = Vec::new();
    let mut completed = false;
    let mut buf = vec![0u8; 1 << 16];
    let ended_cleanly = loop {
        match within("the rest of a stream", conn.read(&mut buf)).await {
            Ok(0) => break true,
            Ok(n) => {
                tail.extend_from_slice(&buf[..n]);
                completed |= find(&tail, b"TASK_STATE_COMPLETED").is_some();
                let keep = tail.len().saturating_sub(64);
                tail.drain(..keep);
            }
            Err(_) => break false,
        }
    };
    if !ended_cleanly || !tail.ends_with(b"\r\n0\r\n\r\n") {
        outcomes.closed += 1;
    } else if find(&tail, b"event: lagged").is_some() {
        outcomes.lagged += 1;
    } else {
        assert!(completed, "{}", String::from_utf8_lossy(&tail));
        outcomes.completed += 1;
    }
}

/// A server with `tasks` tasks, each with `streams` unread subscribers, then the large
/// message to each task in turn: the growth of its peak resident memory over its
/// resident memory before the messages, and the outcomes.
async fn large_events_to(tasks: usize, streams: usize) -> (usize, Outcomes) {
    let dir = TempDir::new("unread");
    let budget = BUDGET_MIB.to_string();
    let agent = spawn_with(&dir.0.join("a2a.db"), &["--memory", "--stream-budget-mib", &budget]).await;
    let pid = agent.child.id().unwrap();
    let mut ids = Vec::new();
    let mut held = Vec::new();
    for t in 0..tasks {
        let first = json!({"message": {"messageId": format!("tck-input-required-{t}"), "role": "ROLE_USER", "parts": [{"text": "more?"}]}});
        let (status, answer, _) = call(&agent.addr, "POST", "/a2a/rest/message:send", Some(&first)).await;
        assert_eq!(status, 200, "{answer}");
        let task = answer["task"]["id"].as_str().unwrap().to_owned();
        for _ in 0..streams {
            held.push(subscriber(&agent.addr, &task).await);
        }
        ids.push(task);
    }
    let before = proc_bytes(pid, "VmRSS:");
    let text = "x".repeat(BODY - 512);
    for (t, task) in ids.iter().enumerate() {
        let follow = json!({"message": {"messageId": format!("follow-{t}"), "taskId": task, "role": "ROLE_USER", "parts": [{"text": text}]}});
        let send = json!({"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": follow});
        let (status, _) = open(&agent.addr, "POST", "/", &[], Some(&send)).await.finish().await;
        assert_eq!(status, 200);
    }
    // Each stream read to its end, one after the other: those still holding the events
    // hold them until their turn comes.
    let mut outcomes = Outcomes::default();
    for conn in held {
        drain(conn, &mut outcomes).await;
    }
    (proc_bytes(pid, "VmHWM:").saturating_sub(before), outcomes)
}

/// A server with a task whose history holds the large message, then `streams` unread
/// subscribers, each sent that task as the first event of its stream; then a small
/// message ends the task. The growth of the peak and the outcomes, as above.
async fn large_snapshots_to(streams: usize) -> (usize, Outcomes) {
    let dir = TempDir::new("unread");
    let budget = BUDGET_MIB.to_string();
    let agent = spawn_with(&dir.0.join("a2a.db"), &["--memory", "--stream-budget-mib", &budget]).await;
    let pid = agent.child.id().unwrap();
    let text = "x".repeat(BODY - 512);
    // Twice asked for more input, the second time with the large text: the task waits.
    let mut task = None::<String>;
    for (id, text) in [("tck-input-required-1", "more?"), ("tck-input-required-2", text.as_str())] {
        let message = json!({"messageId": id, "taskId": task, "role": "ROLE_USER", "parts": [{"text": text}]});
        let send = json!({"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": message}});
        let (status, bytes) = open(&agent.addr, "POST", "/", &[], Some(&send)).await.finish().await;
        assert_eq!(status, 200);
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        task = Some(answer["result"]["task"]["id"].as_str().unwrap().to_owned());
    }
    let task = task.unwrap();
    let before = proc_bytes(pid, "VmRSS:");
    let mut held = Vec::new();
    for _ in 0..streams {
        held.push(subscriber(&agent.addr, &task).await);
    }
    let done =
        json!({"message": {"messageId": "done", "taskId": task, "role": "ROLE_USER", "parts": [{"text": "ok"}]}});
    let (status, answer, _) = call(&agent.addr, "POST", "/a2a/rest/message:send", Some(&done)).await;
    assert_eq!(status, 200, "{answer}");
    let mut outcomes = Outcomes::default();
    for conn in held {
        drain(conn, &mut outcomes).await;
    }
    (proc_bytes(pid, "VmHWM:").saturating_sub(before), outcomes)
}

/// The peak growth with unread subscribers against the same messages without them.
async fn within_budget(tasks: usize, streams: usize) -> Outcomes {
    let (alone, _) = large_events_to(tasks, 0).await;
    let (growth, outcomes) = large_events_to(tasks, streams).await;
    check(&format!("{tasks} task(s) × {streams} unread streams"), growth, alone, &outcomes);
    assert_eq!(outcomes.lagged + outcomes.closed + outcomes.completed, tasks * streams, "{outcomes:?}");
    // Two such events take the whole budget: at most one subscriber is left to hold them.
    assert!(outcomes.completed <= 1, "{outcomes:?}");
    outcomes
}

fn check(what: &str, growth: usize, alone: usize, outcomes: &Outcomes) {
    let bound = alone + (BUDGET_MIB << 20) + ALLOWANCE;
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    println!(
        "{what}, budget {BUDGET_MIB} MiB: peak growth {:.1} MiB (without \
         subscribers {:.1}, bound {:.1}); {outcomes:?}",
        mib(growth),
        mib(alone),
        mib(bound)
    );
    assert!(
        growth <= bound,
        "peak resident memory grew by {:.1} MiB for {what} of {:.1} MiB events under a {BUDGET_MIB} MiB stream \
         budget ({:.1} MiB without subscribers): more than {:.1} MiB ({outcomes:?})",
        mib(growth),
        mib(BODY),
        mib(alone),
        mib(bound)
    );
}

/// One event for many subscribers at once: the budget is checked at each one's copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_unread_streams_of_one_large_event_stay_within_the_stream_budget() {
    within_budget(1, STREAMS).await;
}

/// Events for one subscriber at a time, each taken from its queue at once and encoded
/// into a frame its connection cannot write: the frames stay charged, and those that
/// do not fit are freed by closing their connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_handed_to_connections_that_do_not_read_stay_within_the_stream_budget() {
    let outcomes = within_budget(TASKS, 1).await;
    assert!(outcomes.closed >= 1, "{outcomes:?}");
}

/// The task a stream starts with counts as its events do: a task whose history holds a
/// large message, subscribed to by clients that do not read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_streams_of_a_large_task_stay_within_the_stream_budget() {
    let (alone, _) = large_snapshots_to(0).await;
    let (growth, outcomes) = large_snapshots_to(SNAPSHOTS).await;
    check(&format!("{SNAPSHOTS} unread streams of a large task"), growth, alone, &outcomes);
    assert_eq!(outcomes.lagged + outcomes.closed + outcomes.completed, SNAPSHOTS, "{outcomes:?}");
    assert!(outcomes.closed >= SNAPSHOTS - BUDGET_MIB * (1 << 20) / BODY, "{outcomes:?}");
}
