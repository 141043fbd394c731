//! Memory of `agentproto serve` holding gRPC streams whose clients stopped reading (issue
//! 35: the stream budget on the gRPC binding as on SSE; `unread_streams.rs` is the same
//! on JSON-RPC). `SubscribeToTask` calls, each on its own HTTP/2 connection whose client
//! grants a 4 KiB stream window and reads nothing after the stream's first message; then
//! one message of about 4 MiB continues each task, whose echo makes two events of that
//! size for every subscriber.
//! h2 keeps each event's data frame until the client's window lets it out, which it
//! never does: the stream budget (`--stream-budget-mib`) must bound those frames too.
//! The server's peak resident memory (`VmHWM` in `/proc/<pid>/status`) may grow by what
//! the same message costs a server with no subscriber plus the budget and a small
//! allowance, not by a frame per subscriber.

#![cfg(target_os = "linux")]

mod support;

use std::future::Future;
use std::process::Stdio;

use bytes::Bytes;
use serde_json::{json, Value};
use support::*;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpSocket;
use tokio::process::{Child, Command};

/// The follow-up message's size.
const BODY: usize = 4 << 20;
/// Subscribers that stop reading on one task, each on its own connection.
const STREAMS: usize = 24;
/// Tasks with one subscriber that stops reading each.
const TASKS: usize = 6;
/// The stream budget given to the server, MiB.
const BUDGET_MIB: usize = 8;
/// Beyond the budget: the copies of an event being encoded into its frame before the
/// frame is charged (at most one per worker thread), and allocator slack.
const ALLOWANCE: usize = 4 * BODY;

/// `agentproto serve` in memory with a gRPC listener and the budget: the child, its
/// HTTP address and its gRPC address.
async fn spawn_grpc() -> (Child, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentproto"));
    command.args(["serve", "--memory", "--addr", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"]).args([
        "--delay",
        "0.2",
        "--stream-budget-mib",
        &BUDGET_MIB.to_string(),
    ]);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit()).kill_on_drop(true);
    agentproto_process::die_with_parent(command.as_std_mut());
    let mut child = command.spawn().expect("the agentproto binary starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = within("the listening line", lines.next_line()).await.unwrap().expect("serve printed nothing");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let after = |marker: &str| -> String {
        let rest = &line[line.find(marker).unwrap_or_else(|| panic!("{marker:?} in {line}")) + marker.len()..];
        rest.split(|c: char| c.is_whitespace() || c == ',' || c == ')').next().unwrap().to_owned()
    };
    (child, after("listening on http://"), after("gRPC on "))
}

/// A `SubscribeToTaskRequest` (`id`, field 2) as one gRPC message: flag, length, bytes.
fn subscribe_message(task: &str) -> Bytes {
    let mut proto = vec![0x12];
    let mut len = task.len();
    while len >= 0x80 {
        proto.push((len as u8) | 0x80);
        len >>= 7;
    }
    proto.push(len as u8);
    proto.extend_from_slice(task.as_bytes());
    let mut message = vec![0u8];
    message.extend_from_slice(&u32::try_from(proto.len()).unwrap().to_be_bytes());
    message.extend_from_slice(&proto);
    Bytes::from(message)
}

/// An unread subscriber: its stream, and the task driving its connection (ended with
/// the test).
struct Subscriber {
    body: h2::RecvStream,
    connection: tokio::task::JoinHandle<Result<(), h2::Error>>,
    /// Tells the connection to open its window wide, for the drain.
    widen: tokio::sync::oneshot::Sender<()>,
}

/// A `SubscribeToTask` on a connection of its own with a 4 KiB receive buffer and a
/// 4 KiB stream window, read up to its first message (the task), which the server sends
/// with the response head: the subscription is registered then.
async fn subscriber(addr: &str, task: &str) -> Subscriber {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let io = within("connect", socket.connect(addr.parse().unwrap())).await.unwrap();
    // Window updates go out at once (the drain grants 4 KiB at a time).
    io.set_nodelay(true).unwrap();
    let (mut client, mut connection) =
        within("the HTTP/2 handshake", h2::client::Builder::new().initial_window_size(4096).handshake(io))
            .await
            .unwrap();
    let (widen, widened) = tokio::sync::oneshot::channel::<()>();
    let connection = tokio::spawn(async move {
        // The connection driven; once the drain begins, with a wide window.
        let mut widened = Some(widened);
        std::future::poll_fn(|cx| {
            if let Some(signal) = widened.as_mut() {
                if std::pin::Pin::new(signal).poll(cx).is_ready() {
                    widened = None;
                    connection.set_initial_window_size(8 << 20)?;
                }
            }
            std::pin::Pin::new(&mut connection).poll(cx)
        })
        .await
    });
    let request = http::Request::post(format!("http://{addr}/lf.a2a.v1.A2AService/SubscribeToTask"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(())
        .unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    send.send_data(subscribe_message(task), true).unwrap();
    let response = within("the stream's response head", response).await.unwrap();
    assert_eq!(response.status(), 200);
    let grpc_status = response.headers().get("grpc-status").map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(grpc_status, None, "the call ended at once: {:?}", response.headers());
    let mut body = response.into_body();
    let first = within("the stream's first message", body.data()).await.expect("a first message").unwrap();
    assert!(!first.is_empty());
    Subscriber { body, connection, widen }
}

/// How the streams ended, each read to its end once the measure is taken.
#[derive(Debug, Default)]
struct Outcomes {
    /// Up to the task's final status, then status OK.
    completed: usize,
    /// Cut off as too slow: status `ABORTED`.
    lagged: usize,
    /// Cut off by closing the connection (h2 held a frame the client did not read).
    closed: usize,
}

async fn drain(mut sub: Subscriber, outcomes: &mut Outcomes) {
    let _ = sub.widen.send(());
    let ended = within("the rest of a stream", async {
        while let Some(data) = sub.body.data().await {
            let data = data?;
            sub.body.flow_control().release_capacity(data.len())?;
        }
        sub.body.trailers().await
    })
    .await;
    match ended {
        Ok(Some(trailers)) => match trailers.get("grpc-status").and_then(|v| v.to_str().ok()) {
            Some("0") => outcomes.completed += 1,
            Some("10") => outcomes.lagged += 1,
            other => panic!("a stream ended with status {other:?}: {trailers:?}"),
        },
        Ok(None) => panic!("a stream ended without trailers"),
        Err(_) => outcomes.closed += 1,
    }
    sub.connection.abort();
}

/// A server with `tasks` tasks, each with `streams` unread subscribers, then the large
/// message to each task in turn: the growth of its peak resident memory over its
/// resident memory before the messages, and the outcomes.
async fn large_events_to(tasks: usize, streams: usize) -> (usize, Outcomes) {
    let (child, http, grpc) = spawn_grpc().await;
    let pid = child.id().unwrap();
    let mut ids = Vec::new();
    let mut held = Vec::new();
    for t in 0..tasks {
        let first = json!({"message": {"messageId": format!("tck-input-required-{t}"), "role": "ROLE_USER", "parts": [{"text": "more?"}]}});
        let (status, answer, _) = call(&http, "POST", "/a2a/rest/message:send", Some(&first)).await;
        assert_eq!(status, 200, "{answer}");
        let task = answer["task"]["id"].as_str().unwrap().to_owned();
        for _ in 0..streams {
            held.push(subscriber(&grpc, &task).await);
        }
        ids.push(task);
    }
    let before = proc_bytes(pid, "VmRSS:");
    let text = "x".repeat(BODY - 512);
    for (t, task) in ids.iter().enumerate() {
        let follow = json!({"message": {"messageId": format!("follow-{t}"), "taskId": task, "role": "ROLE_USER", "parts": [{"text": text}]}});
        let send = json!({"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": follow});
        let (status, bytes) = open(&http, "POST", "/", &[], Some(&send)).await.finish().await;
        assert_eq!(status, 200);
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    }
    // Each stream read to its end, one after the other: those still holding the events
    // hold them until their turn comes.
    let mut outcomes = Outcomes::default();
    for sub in held {
        drain(sub, &mut outcomes).await;
    }
    let growth = proc_bytes(pid, "VmHWM:").saturating_sub(before);
    drop(child);
    (growth, outcomes)
}

/// The peak growth with unread subscribers against the same messages without them.
async fn within_budget(tasks: usize, streams: usize) -> Outcomes {
    let (alone, _) = large_events_to(tasks, 0).await;
    let (growth, outcomes) = large_events_to(tasks, streams).await;
    let what = format!("{tasks} task(s) × {streams} unread gRPC streams");
    let bound = alone + (BUDGET_MIB << 20) + ALLOWANCE;
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    println!(
        "{what}, budget {BUDGET_MIB} MiB: peak growth {:.1} MiB (without subscribers {:.1}, bound {:.1}); \
         {outcomes:?}",
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
    assert_eq!(outcomes.lagged + outcomes.closed + outcomes.completed, tasks * streams, "{outcomes:?}");
    // Two such events take the whole budget: at most one subscriber is left to hold them.
    assert!(outcomes.completed <= 1, "{outcomes:?}");
    outcomes
}

/// One event for many subscribers at once: the budget is checked at each one's copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_unread_grpc_streams_of_one_large_event_stay_within_the_stream_budget() {
    within_budget(1, STREAMS).await;
}

/// Events for one subscriber at a time, each taken from its queue at once and encoded
/// into a data frame h2 holds until the client's window opens, which it never does: the
/// frames stay charged, and those that do not fit are freed by closing their connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_frames_h2_holds_for_clients_that_do_not_read_stay_within_the_stream_budget() {
    let outcomes = within_budget(TASKS, 1).await;
    assert!(outcomes.closed >= 1, "{outcomes:?}");
}
