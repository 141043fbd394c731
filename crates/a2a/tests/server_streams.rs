//! SSE streams on both bindings: ids, shape, resumption with `Last-Event-ID`, slow
//! subscribers, keep-alives, several streams per task, cancel while subscribed.
#![cfg(all(feature = "server", feature = "client"))]
mod common;

use std::time::Duration;

use agentproto_a2a::client::{A2aClient, Binding, ClientOptions};
use agentproto_a2a::server::{A2aServer, HttpOptions};
use agentproto_a2a::stream::HubOptions;
use agentproto_a2a::v1::{StreamResponse, SubscribeToTaskRequest};
use common::*;
use futures::StreamExt;
use serde_json::{json, Value};

/// A server running a [`Gated`] executor.
async fn gated_server(
    payload: usize,
    hub: HubOptions,
    http: HttpOptions,
) -> (Server, std::sync::Arc<tokio::sync::Semaphore>, tokio::sync::mpsc::UnboundedReceiver<usize>) {
    let (exec, gate, progress) = gated(payload);
    let srv = start(move |base| A2aServer::builder(exec, agentproto_a2a::demo::card(base)).hub(hub).http(http)).await;
    (srv, gate, progress)
}

/// Starts a gated task of `n` events without waiting for it; returns its id.
async fn gated_task(srv: &Server, b: B, n: usize) -> String {
    let mut p = send(&mid("gated"), &n.to_string());
    p["configuration"] = json!({"returnImmediately": true});
    let r = srv.call(b, "SendMessage", p).await;
    r.ok()["task"]["id"].as_str().unwrap().to_owned()
}

fn subscribe(id: &str) -> Call {
    Call::new("SubscribeToTask", json!({"id": id}))
}

/// Asserts the events carry consecutive `id:`s from `first`.
fn assert_consecutive(evs: &[Ev], first: u64) {
    let ids: Vec<Option<u64>> = evs.iter().map(|e| e.id).collect();
    let want: Vec<Option<u64>> = (first..first + evs.len() as u64).map(Some).collect();
    assert_eq!(ids, want, "ids must be sequence numbers increasing by one");
}

/// The index of a [`Gated`] artifact update (the first six digits of its text).
fn artifact_index(ev: &Ev) -> usize {
    let p = ev.payload();
    let text =
        p["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str().unwrap_or_else(|| panic!("not an artifact: {p}"));
    text[..6].parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_stream_starts_with_the_task_and_ends_at_a_terminal_state() {
    let srv = start(|base| A2aServer::builder(demo(300), agentproto_a2a::demo::card(base))).await;
    for b in BOTH {
        for prefix in ["tck-stream-001", "tck-stream-artifact-chunked", "tck-complete-task", "tck-reject-task"] {
            let mut s = srv.stream(b, Call::new("SendStreamingMessage", send(&mid(prefix), "hi"))).await;
            let evs = s.rest().await;
            assert_consecutive(&evs, 1);
            assert_eq!(evs[0].kind(), "task", "{prefix}");
            assert_eq!(evs[0].state().as_deref(), Some("TASK_STATE_SUBMITTED"));
            let task_id = evs[0].payload()["task"]["id"].clone();
            for ev in &evs[1..] {
                let p = ev.payload();
                let (k, v) = p.as_object().unwrap().iter().next().unwrap();
                assert!(k == "statusUpdate" || k == "artifactUpdate", "{prefix}: {p}");
                assert_eq!(v["taskId"], task_id);
            }
            let last = evs.last().unwrap();
            assert_eq!(last.kind(), "statusUpdate");
            let want = if prefix == "tck-reject-task" { "TASK_STATE_REJECTED" } else { "TASK_STATE_COMPLETED" };
            assert_eq!(last.state().as_deref(), Some(want), "{prefix} on {b:?}");
            if b == B::Rpc {
                for ev in &evs {
                    assert_eq!(ev.json()["id"], 7, "the request's id on every event");
                }
            }
            if prefix == "tck-stream-artifact-chunked" {
                let chunks: Vec<Value> = evs
                    .iter()
                    .filter(|e| e.kind() == "artifactUpdate")
                    .map(|e| e.payload()["artifactUpdate"].clone())
                    .collect();
                assert_eq!(chunks.len(), 2);
                assert_eq!(chunks[0]["artifact"]["artifactId"], chunks[1]["artifact"]["artifactId"]);
                assert_eq!(chunks[1]["append"], true);
                assert_eq!(chunks[1]["lastChunk"], true);
                assert_eq!(chunks[0]["artifact"]["parts"][0]["text"], "chunk-1 ");
                assert_eq!(chunks[1]["artifact"]["parts"][0]["text"], "chunk-2");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_send_closes_at_input_required() {
    let srv = start(|base| A2aServer::builder(demo(300), agentproto_a2a::demo::card(base))).await;
    for b in BOTH {
        let mut s = srv.stream(b, Call::new("SendStreamingMessage", send(&mid("tck-input-required"), "hi"))).await;
        let evs = s.rest().await;
        assert_consecutive(&evs, 1);
        assert_eq!(evs[0].kind(), "task");
        assert_eq!(evs.last().unwrap().state().as_deref(), Some("TASK_STATE_INPUT_REQUIRED"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_only_stream_has_exactly_one_message() {
    let srv = start(|base| A2aServer::builder(demo(300), agentproto_a2a::demo::card(base))).await;
    for b in BOTH {
        let mut s = srv.stream(b, Call::new("SendStreamingMessage", send(&mid("tck-message-response"), "hi"))).await;
        let evs = s.rest().await;
        assert_eq!(evs.len(), 1, "{evs:?}");
        assert_eq!(evs[0].kind(), "message");
        assert_eq!(evs[0].payload()["message"]["parts"][0]["text"], "Direct message response");
        assert_eq!(evs[0].id, None, "a direct message is not part of any task log");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_starts_with_the_task_and_continues_with_its_sequence_numbers() {
    let (srv, gate, _progress) = gated_server(8, HubOptions::default(), HttpOptions::default()).await;
    for b in BOTH {
        let id = gated_task(&srv, b, 3).await;
        let mut s = srv.stream(b, subscribe(&id)).await;
        let first = s.expect().await;
        assert_eq!(first.kind(), "task");
        assert_eq!(first.payload()["task"]["id"], json!(id));
        let first_id = first.id.expect("the snapshot carries the last sequence number");
        gate.add_permits(3);
        let mut evs = vec![first];
        evs.extend(s.rest().await);
        assert_consecutive(&evs, first_id);
        assert_eq!(evs.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
        let arts: Vec<usize> = evs.iter().filter(|e| e.kind() == "artifactUpdate").map(artifact_index).collect();
        assert_eq!(arts, vec![0, 1, 2]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resubscribe_after_a_dropped_connection_loses_nothing() {
    let (srv, gate, mut progress) = gated_server(8, HubOptions::default(), HttpOptions::default()).await;
    for b in BOTH {
        // Log: 1 Task, 2 WORKING, 3..=8 artifacts a0..a5, 9 COMPLETED.
        let id = gated_task(&srv, b, 6).await;
        let mut s = srv.stream(b, subscribe(&id)).await;
        let first = s.expect().await;
        assert_eq!(first.kind(), "task");
        gate.add_permits(2);
        let mut seen = vec![first];
        while seen.iter().filter(|e| e.kind() == "artifactUpdate").count() < 2 {
            seen.push(s.expect().await);
        }
        let last_id = seen.last().unwrap().id.unwrap();
        drop(s); // the connection drops
        gate.add_permits(4);
        emitted(&mut progress, 7).await; // the 6 artifacts, then COMPLETED

        let mut again = srv.stream(b, subscribe(&id).header("Last-Event-ID", &last_id.to_string())).await;
        let mut rest = again.rest().await;
        // The Task first (§3.1.6), as it is now, without an `id:` (it is no place in the
        // log, so the client's Last-Event-ID stays where it was); then what was missed.
        let snapshot = rest.remove(0);
        assert_eq!((snapshot.kind(), snapshot.id), ("task".to_owned(), None), "{}", snapshot.data);
        assert_eq!(snapshot.state().as_deref(), Some("TASK_STATE_COMPLETED"));
        assert_consecutive(&rest, last_id + 1);
        let arts: Vec<usize> = rest.iter().filter(|e| e.kind() == "artifactUpdate").map(artifact_index).collect();
        assert_eq!(arts, vec![2, 3, 4, 5], "exactly the missing events, in order");
        assert_eq!(rest.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
        assert_eq!(rest.last().unwrap().id, Some(9));

        // The whole log is still there for a resume from the start, task ended or not.
        let mut all = srv.stream(b, subscribe(&id).header("Last-Event-ID", "0")).await;
        let mut all = all.rest().await;
        assert_eq!((all[0].kind(), all[0].id), ("task".to_owned(), None));
        all.remove(0);
        assert_consecutive(&all, 1);
        assert_eq!(all.len(), 9);
        assert_eq!(all[0].kind(), "task");
        // Unknown task.
        srv.run(b, subscribe("nope").header("Last-Event-ID", "3")).await.err(TASK_NOT_FOUND);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_from_the_final_event_is_the_task_alone() {
    let (srv, gate, _progress) = gated_server(8, HubOptions::default(), HttpOptions::default()).await;
    for b in BOTH {
        let id = gated_task(&srv, b, 0).await; // 1 Task, 2 WORKING, 3 COMPLETED
        gate.add_permits(1);
        let mut s = srv.stream(b, subscribe(&id).header("Last-Event-ID", "0")).await;
        assert_eq!(s.rest().await.last().unwrap().id, Some(3));
        let mut s = srv.stream(b, subscribe(&id).header("Last-Event-ID", "3")).await;
        let evs = s.rest().await;
        assert_eq!(evs.len(), 1, "{evs:?}");
        assert_eq!((evs[0].kind(), evs[0].state().as_deref()), ("task".to_owned(), Some("TASK_STATE_COMPLETED")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_with_nothing_missed_answers_at_once() {
    // The task waits at its gate: no update comes until the test opens it, so the
    // stream must start (headers, the Task) without waiting for one.
    let (srv, gate, _progress) = gated_server(8, HubOptions::default(), HttpOptions::default()).await;
    for b in BOTH {
        // 1 Task, 2 WORKING (committed with the task, before the answer), then gated.
        let id = gated_task(&srv, b, 2).await;
        let mut s = srv.stream(b, subscribe(&id).header("Last-Event-ID", "2")).await;
        let first = s.expect().await;
        assert_eq!((first.kind(), first.id), ("task".to_owned(), None), "{}", first.data);
        assert_eq!(first.state().as_deref(), Some("TASK_STATE_WORKING"));
        gate.add_permits(2);
        let rest = s.rest().await;
        assert_consecutive(&rest, 3);
        assert_eq!(rest.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_resumes_from_a_last_event_id() {
    let (srv, gate, mut progress) = gated_server(8, HubOptions::default(), HttpOptions::default()).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let opts = ClientOptions { binding: Some(binding), ..ClientOptions::default() };
        let client = within("discovery", A2aClient::discover(&srv.base, opts)).await.unwrap();
        let id = gated_task(&srv, B::Rest, 4).await;
        gate.add_permits(2);
        emitted(&mut progress, 2).await;
        // Seen: 1 Task, 2 WORKING, 3 a0. Missing: 4 a1, then live 5 a2, 6 a3, 7 COMPLETED.
        let mut events = within(
            "subscribe",
            client.subscribe_to_task_from(SubscribeToTaskRequest::new(id.clone()), Some("3".into())),
        )
        .await
        .unwrap();
        // The Task first (no sequence number), then the missed event and the live ones.
        let snapshot = within("event", events.next()).await.unwrap().unwrap();
        assert!(matches!(snapshot.response(), Some(StreamResponse::Task(_))), "{snapshot:?}");
        assert_eq!(snapshot.seq(), None);
        let first = within("event", events.next()).await.unwrap().unwrap();
        assert_eq!(first.seq(), Some(4));
        gate.add_permits(2);
        let mut got = vec![first];
        while let Some(ev) = within("event", events.next()).await {
            got.push(ev.unwrap());
        }
        let seqs: Vec<Option<u64>> = got.iter().map(|e| e.seq()).collect();
        assert_eq!(seqs, vec![Some(4), Some(5), Some(6), Some(7)], "{binding:?}");
        match got.last().unwrap().response() {
            Some(StreamResponse::StatusUpdate(u)) => assert_eq!(u.status.state.as_str(), "TASK_STATE_COMPLETED"),
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_subscriber_is_cut_off_without_holding_anyone_up() {
    const N: usize = 200;
    // 32 KiB per event: far more than socket buffers hold in total, so the stalled
    // reader's queue (4 notices) must overflow.
    let (srv, gate, mut progress) =
        gated_server(32 * 1024, HubOptions { queue: 4, ..HubOptions::default() }, HttpOptions::default()).await;
    for b in BOTH {
        let id = gated_task(&srv, b, N).await;
        let mut stalled = raw_stream(&srv, b, &subscribe(&id)).await;
        let mut active = srv.stream(b, subscribe(&id)).await;
        // The executor goes one event at a time, as fast as the active subscriber reads
        // (which keeps that one within its queue of 4); the stalled one never reads.
        let mut got = vec![active.expect().await];
        for i in 0..N {
            gate.add_permits(1);
            emitted(&mut progress, i + 1).await;
            loop {
                let ev = active.expect().await;
                assert_eq!(ev.event, None, "the active subscriber is never cut off: {ev:?}");
                let art = ev.kind() == "artifactUpdate";
                if art {
                    assert_eq!(artifact_index(&ev), i);
                }
                got.push(ev);
                if art {
                    break;
                }
            }
        }
        got.extend(active.rest().await);
        assert_eq!(got.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
        assert_consecutive(&got, got[0].id.unwrap());

        // The stalled one, read at last: some events, then `lagged`, then the end.
        let mut head = Vec::new();
        let lagged = loop {
            let ev = stalled.next().await.expect("a cut-off stream ends with event: lagged");
            if ev.event.is_some() {
                break ev;
            }
            head.push(ev);
        };
        assert_eq!(lagged.event.as_deref(), Some("lagged"), "{lagged:?}");
        assert_eq!(lagged.id, None);
        assert!(stalled.next().await.is_none(), "nothing after lagged");
        assert!(head.len() < N, "it was cut off before the end ({} events)", head.len());
        assert_eq!(head[0].kind(), "task");
        assert_consecutive(&head, head[0].id.unwrap());
        // It resumes from the last id it saw and gets the rest.
        let last = head.last().unwrap().id.unwrap();
        let mut resumed = srv.stream(b, subscribe(&id).header("Last-Event-ID", &last.to_string())).await;
        let mut rest = resumed.rest().await;
        assert_eq!(rest.remove(0).kind(), "task", "a resume starts with the Task");
        assert_consecutive(&rest, last + 1);
        assert_eq!(rest.last().unwrap().id, got.last().unwrap().id);
        assert_eq!(rest.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_stream_gets_keep_alive_comments() {
    let http = HttpOptions { keep_alive: Duration::from_millis(50), ..HttpOptions::default() };
    let (srv, gate, _progress) = gated_server(8, HubOptions::default(), http).await;
    for b in BOTH {
        let id = gated_task(&srv, b, 1).await;
        let mut s = srv.stream(b, subscribe(&id)).await;
        let mut saw_task = false;
        let mut comments = 0;
        while comments < 3 {
            // Waiting for keep-alives is the behaviour under test; each wait is bounded.
            let ev = s.next_any().await.expect("the stream stays open");
            if ev.comment {
                comments += 1;
            } else if ev.kind() == "task" {
                saw_task = true;
            } else {
                // WORKING may land after the snapshot; anything else means the gate leaked.
                assert_eq!(ev.state().as_deref(), Some("TASK_STATE_WORKING"), "{ev:?}");
            }
        }
        assert!(saw_task);
        gate.add_permits(1);
        let rest = s.rest().await;
        assert_eq!(rest.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_streams_get_the_same_events_and_closing_one_leaves_the_other() {
    let (srv, gate, mut progress) = gated_server(8, HubOptions::default(), HttpOptions::default()).await;
    for b in BOTH {
        let id = gated_task(&srv, b, 6).await;
        // Two subscribers, one on each binding.
        let other = if b == B::Rpc { B::Rest } else { B::Rpc };
        let mut x = srv.stream(b, subscribe(&id)).await;
        let mut y = srv.stream(other, subscribe(&id)).await;
        let (fx, fy) = (x.expect().await, y.expect().await);
        assert_eq!((fx.kind(), fy.kind()), ("task".to_owned(), "task".to_owned()));
        gate.add_permits(3);
        emitted(&mut progress, 3).await;
        let mut ex = Vec::new();
        let mut ey = Vec::new();
        while ex.iter().filter(|e: &&Ev| e.kind() == "artifactUpdate").count() < 3 {
            ex.push(x.expect().await);
        }
        while ey.iter().filter(|e: &&Ev| e.kind() == "artifactUpdate").count() < 3 {
            ey.push(y.expect().await);
        }
        // Same ids and payloads in the same order (from the later of the two snapshots).
        let (sx, sy) = (fx.id.unwrap(), fy.id.unwrap());
        let start = sx.max(sy);
        let px: Vec<(Option<u64>, Value)> =
            ex.iter().filter(|e| e.id.unwrap() > start).map(|e| (e.id, e.payload())).collect();
        let py: Vec<(Option<u64>, Value)> =
            ey.iter().filter(|e| e.id.unwrap() > start).map(|e| (e.id, e.payload())).collect();
        assert_eq!(px, py);
        assert!(!px.is_empty());
        drop(x);
        gate.add_permits(3);
        let rest = y.rest().await;
        let mut all = vec![fy];
        all.extend(ey);
        all.extend(rest);
        assert_consecutive(&all, sy);
        let arts: Vec<usize> = all.iter().filter(|e| e.kind() == "artifactUpdate").map(artifact_index).collect();
        assert_eq!(arts, (0..6).collect::<Vec<_>>());
        assert_eq!(all.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canceling_a_task_ends_its_streams_with_canceled() {
    let (srv, _gate, _progress) = gated_server(8, HubOptions::default(), HttpOptions::default()).await;
    for b in BOTH {
        let id = gated_task(&srv, b, 5).await;
        let mut s = srv.stream(b, subscribe(&id)).await;
        let first = s.expect().await;
        let other = if b == B::Rpc { B::Rest } else { B::Rpc };
        let r = srv.call(other, "CancelTask", json!({"id": id})).await;
        assert_eq!(r.ok()["status"]["state"], "TASK_STATE_CANCELED");
        let mut all = vec![first];
        all.extend(s.rest().await);
        assert_consecutive(&all, all[0].id.unwrap());
        let last = all.last().unwrap();
        assert_eq!(last.kind(), "statusUpdate");
        assert_eq!(last.state().as_deref(), Some("TASK_STATE_CANCELED"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_follow_up_streams_the_new_turn() {
    let (srv, gate, _progress) = gated_server(8, HubOptions::default(), HttpOptions::default()).await;
    for b in BOTH {
        let r = srv.call(b, "SendMessage", send(&mid("gated"), "input")).await;
        let task = r.ok()["task"].clone();
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        let mut p = send(&mid("gated"), "1");
        p["message"]["taskId"] = task["id"].clone();
        let mut s = srv.stream(b, Call::new("SendStreamingMessage", p)).await;
        let first = s.expect().await;
        assert_eq!(first.kind(), "task");
        let second = s.expect().await;
        assert_eq!(second.state().as_deref(), Some("TASK_STATE_WORKING"), "the new turn, not the old INPUT_REQUIRED");
        gate.add_permits(1);
        let rest = s.rest().await;
        assert_eq!(rest.last().unwrap().state().as_deref(), Some("TASK_STATE_COMPLETED"));
    }
}
