//! Bounded queues: a flood waits instead of growing memory, and the backlog
//! keeps responses flowing while handlers await the peer.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentproto_jsonrpc::ConnectionOptions;
use common::{raw, raw_connection, raw_connection_with_pipe, within, TestHandler};
use tokio::sync::oneshot;

/// A peer floods notifications at a slow handler. The number written by the
/// peer but not yet handled stays within the queue bound plus a fixed slack,
/// and every notification arrives, in order.
#[tokio::test]
async fn notification_flood_is_bounded_and_complete() {
    const COUNT: usize = 2000;
    const QUEUE: usize = 8;
    // Outside the queue: one set aside by the reader, one being handled, at most
    // two lines in the 64-byte read buffer and two in the 64-byte pipe.
    const SLACK: usize = 6;
    let written = Arc::new(AtomicUsize::new(0));
    let handled = Arc::new(AtomicUsize::new(0));
    let most_outstanding = Arc::new(AtomicUsize::new(0));
    let out_of_order = Arc::new(AtomicUsize::new(0));
    let (done, all_handled) = oneshot::channel();
    let done = Mutex::new(Some(done));
    let handler = {
        let written = written.clone();
        let handled = handled.clone();
        let most_outstanding = most_outstanding.clone();
        let out_of_order = out_of_order.clone();
        TestHandler::new()
            .on_notification(move |notification, _| {
                let before = handled.load(Ordering::SeqCst);
                let outstanding = written.load(Ordering::SeqCst) - before;
                most_outstanding.fetch_max(outstanding, Ordering::SeqCst);
                let n: Vec<usize> = serde_json::from_str(notification.params.unwrap().get()).unwrap();
                if n[0] != before {
                    out_of_order.fetch_add(1, Ordering::SeqCst);
                }
                let handled = handled.clone();
                let done = if n[0] == COUNT - 1 { done.lock().unwrap().take() } else { None };
                Box::pin(async move {
                    // A slow handler: let the flooding writer run ahead.
                    for _ in 0..20 {
                        tokio::task::yield_now().await;
                    }
                    handled.fetch_add(1, Ordering::SeqCst);
                    if let Some(done) = done {
                        let _ = done.send(());
                    }
                })
            })
            .build()
    };
    let options = ConnectionOptions::default().notification_queue(QUEUE).read_chunk_size(64);
    let (connection, _peer, mut raw_peer) = raw_connection_with_pipe(handler, options, 64);
    tokio::spawn(connection.run());
    let flood = tokio::spawn({
        let written = written.clone();
        async move {
            for n in 0..COUNT {
                raw_peer.send(&format!(r#"{{"jsonrpc":"2.0","method":"n","params":[{n}]}}"#)).await;
                written.fetch_add(1, Ordering::SeqCst);
            }
            raw_peer
        }
    });
    within(all_handled).await.unwrap();
    within(flood).await.unwrap();
    let most = most_outstanding.load(Ordering::SeqCst);
    assert!(most <= QUEUE + SLACK, "{most} outstanding, bound {}", QUEUE + SLACK);
    assert!(most >= QUEUE, "the queue never filled ({most}): the test did not exercise backpressure");
    assert_eq!(out_of_order.load(Ordering::SeqCst), 0);
    assert_eq!(handled.load(Ordering::SeqCst), COUNT);
}

/// Every request slot is busy awaiting a permission round trip while the peer
/// sends another request before the answers: the backlog lets the answers in.
#[tokio::test]
async fn busy_request_slots_do_not_block_responses() {
    let handler = TestHandler::new()
        .on_request(|request, cx| {
            let peer = cx.peer().clone();
            Box::pin(async move {
                let permission = peer.call("session/request_permission", request.params).await.unwrap();
                Ok(permission)
            })
        })
        .build();
    let options = ConnectionOptions::default().max_concurrent_requests(2);
    let (connection, _peer, mut raw_peer) = raw_connection(handler, options);
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":["a"]}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":"b","method":"session/prompt","params":["b"]}"#).await;
    let mut asked = vec![raw_peer.recv().await, raw_peer.recv().await];
    asked.sort();
    assert_eq!(
        asked,
        vec![
            r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":["a"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":["b"]}"#,
        ]
    );
    // A third request while both slots are busy, then the answers.
    raw_peer.send(r#"{"jsonrpc":"2.0","id":"c","method":"session/prompt","params":["c"]}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":0,"result":"allow-a"}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"result":"allow-b"}"#).await;
    let mut lines = Vec::new();
    for _ in 0..3 {
        lines.push(raw_peer.recv().await);
    }
    lines.sort();
    assert_eq!(
        lines,
        vec![
            r#"{"jsonrpc":"2.0","id":"a","result":"allow-a"}"#,
            r#"{"jsonrpc":"2.0","id":"b","result":"allow-b"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"session/request_permission","params":["c"]}"#,
        ]
    );
    raw_peer.send(r#"{"jsonrpc":"2.0","id":2,"result":"allow-c"}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":"c","result":"allow-c"}"#);
}

/// A notification handler awaits a call while the peer sends more
/// notifications than the queue holds before answering: the backlog lets the
/// answer in, and the later notifications are still handled in order.
#[tokio::test]
async fn notification_handler_call_survives_a_flood() {
    const LATER: usize = 50;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handler = {
        let seen = seen.clone();
        TestHandler::new()
            .on_notification(move |notification, cx| {
                let seen = seen.clone();
                let peer = cx.peer().clone();
                Box::pin(async move {
                    if notification.method == "first" {
                        let answer = peer.call("lookup", None).await.unwrap();
                        seen.lock().unwrap().push(answer.get().to_owned());
                    } else {
                        seen.lock().unwrap().push(notification.method);
                    }
                })
            })
            .build()
    };
    let options = ConnectionOptions::default().notification_queue(2).backlog(100);
    let (connection, peer, mut raw_peer) = raw_connection(handler, options);
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"first"}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":0,"method":"lookup"}"#);
    for n in 0..LATER {
        raw_peer.send(&format!(r#"{{"jsonrpc":"2.0","method":"n{n}"}}"#)).await;
    }
    raw_peer.send(r#"{"jsonrpc":"2.0","id":0,"result":"found"}"#).await;
    // A call from outside any handler waits for every earlier notification.
    let last = tokio::spawn(async move { peer.call("last", Some(raw("[]"))).await });
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":1,"method":"last","params":[]}"#);
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"result":null}"#).await;
    within(last).await.unwrap().unwrap();
    let mut expected = vec![r#""found""#.to_owned()];
    expected.extend((0..LATER).map(|n| format!("n{n}")));
    assert_eq!(*seen.lock().unwrap(), expected);
}
