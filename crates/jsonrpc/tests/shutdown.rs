//! End of input, grace periods, and nothing kept alive.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_jsonrpc::{memory, CallError, ConnectionEvent, ConnectionOptions};
use common::{raw, raw_connection, within, Events, TestHandler};
use tokio::sync::oneshot;

#[tokio::test]
async fn end_of_input_fails_pending_calls_and_ends_run() {
    let events = Events::default();
    let (connection, peer, mut raw_peer) =
        raw_connection(TestHandler::new().build(), events.options(ConnectionOptions::default()));
    let run = tokio::spawn(connection.run());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.call("session/prompt", None).await }
    });
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":0,"method":"session/prompt"}"#);
    raw_peer.close().await;
    assert!(matches!(within(call).await.unwrap(), Err(CallError::Closed)));
    within(run).await.unwrap().unwrap();
    assert!(peer.is_closed());
    assert!(matches!(within(peer.call("later", None)).await, Err(CallError::Closed)));
    // The output was shut down: the other side sees end of file.
    raw_peer.recv_eof().await;
    events.wait_for(|event| matches!(event, ConnectionEvent::InputClosed)).await;
}

#[tokio::test]
async fn end_of_input_cancels_in_flight_requests_and_answers_them() {
    let (started, has_started) = oneshot::channel();
    let started = Mutex::new(Some(started));
    let handler = TestHandler::new()
        .on_request(move |_, _| {
            let started = started.lock().unwrap().take();
            Box::pin(async move {
                let _ = started.unwrap().send(());
                std::future::pending().await
            })
        })
        .build();
    let (connection, _peer, mut raw_peer) = raw_connection(handler, ConnectionOptions::default());
    let run = tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"slow"}"#).await;
    within(has_started).await.unwrap();
    raw_peer.close().await;
    within(run).await.unwrap().unwrap();
    assert_eq!(
        raw_peer.recv().await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"request cancelled"}}"#
    );
    raw_peer.recv_eof().await;
}

#[tokio::test]
async fn grace_period_bounds_handlers_that_ignore_cancellation() {
    let (started, has_started) = oneshot::channel();
    let started = Mutex::new(Some(started));
    let handler = TestHandler::new()
        .on_request(move |_, cx| {
            cx.handle_cancellation();
            let started = started.lock().unwrap().take();
            Box::pin(async move {
                let _ = started.unwrap().send(());
                std::future::pending().await
            })
        })
        .build();
    let options = ConnectionOptions::default().shutdown_grace(Duration::from_millis(100));
    let (connection, _peer, mut raw_peer) = raw_connection(handler, options);
    let run = tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"stubborn"}"#).await;
    within(has_started).await.unwrap();
    raw_peer.close().await;
    within(run).await.unwrap().unwrap();
    // Never answered: the handler was dropped after the grace period.
    raw_peer.recv_eof().await;
}

#[tokio::test]
async fn queued_notifications_are_still_handled_after_end_of_input() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handler = {
        let seen = seen.clone();
        TestHandler::new()
            .on_notification(move |notification, _| {
                let seen = seen.clone();
                Box::pin(async move {
                    tokio::task::yield_now().await;
                    seen.lock().unwrap().push(notification.method);
                })
            })
            .build()
    };
    let (connection, _peer, mut raw_peer) = raw_connection(handler, ConnectionOptions::default());
    let run = tokio::spawn(connection.run());
    for n in 0..20 {
        raw_peer.send(&format!(r#"{{"jsonrpc":"2.0","method":"n{n}"}}"#)).await;
    }
    raw_peer.close().await;
    within(run).await.unwrap().unwrap();
    let expected: Vec<String> = (0..20).map(|n| format!("n{n}")).collect();
    assert_eq!(*seen.lock().unwrap(), expected);
}

#[tokio::test]
async fn notify_after_the_connection_ended_fails_closed() {
    let (connection, peer, mut raw_peer) = raw_connection(TestHandler::new().build(), ConnectionOptions::default());
    let run = tokio::spawn(connection.run());
    raw_peer.close().await;
    within(run).await.unwrap().unwrap();
    assert!(matches!(within(peer.notify("x", None)).await, Err(CallError::Closed)));
    assert!(matches!(within(peer.flush()).await, Err(CallError::Closed)));
}

#[tokio::test]
async fn dropping_run_stops_everything_and_the_other_side_sees_end_of_input() {
    let (started, has_started) = oneshot::channel();
    let started = Mutex::new(Some(started));
    let handler = TestHandler::new()
        .on_request(move |_, _| {
            let started = started.lock().unwrap().take();
            Box::pin(async move {
                if let Some(started) = started {
                    let _ = started.send(());
                }
                std::future::pending().await
            })
        })
        .build();
    let weak = Arc::downgrade(&handler);
    let (a, b) =
        memory::pair(handler, ConnectionOptions::default(), TestHandler::new().build(), ConnectionOptions::default());
    let a_run = tokio::spawn(a.connection.run());
    let b_run = tokio::spawn(b.connection.run());
    let call = tokio::spawn({
        let peer = b.peer.clone();
        async move { peer.call("hang", None).await }
    });
    within(has_started).await.unwrap();
    a_run.abort();
    assert!(within(a_run).await.unwrap_err().is_cancelled());
    // B reads end of file: its pending call fails and its run ends.
    assert!(matches!(within(call).await.unwrap(), Err(CallError::Closed)));
    within(b_run).await.unwrap().unwrap();
    drop(a.peer);
    drop(b.peer);
    // The request task held the last reference to A's handler; it was stopped.
    within(async {
        while weak.upgrade().is_some() {
            tokio::task::yield_now().await;
        }
    })
    .await;
}

#[tokio::test]
async fn both_sides_of_a_pair_end_when_one_input_closes() {
    let (a, b) = memory::pair(
        TestHandler::new().build(),
        ConnectionOptions::default(),
        TestHandler::new().build(),
        ConnectionOptions::default(),
    );
    let a_run = tokio::spawn(a.connection.run());
    let b_run = tokio::spawn(b.connection.run());
    within(b.peer.notify("bye", Some(raw("{}")))).await.unwrap();
    within(b.peer.flush()).await.unwrap();
    a_run.abort();
    let _ = within(a_run).await;
    within(b_run).await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_a_notification_handler_spawns_ends_before_run_returns() {
    let (open, gate) = oneshot::channel::<()>();
    let gate = Mutex::new(Some(gate));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handler = TestHandler::new()
        .on_notification({
            let done = done.clone();
            move |_, cx| {
                let (gate, done) = (gate.lock().unwrap().take(), done.clone());
                cx.spawn(async move {
                    if let Some(gate) = gate {
                        let _ = gate.await;
                    }
                    for _ in 0..50 {
                        tokio::task::yield_now().await;
                    }
                    done.store(true, std::sync::atomic::Ordering::SeqCst);
                });
                Box::pin(async {})
            }
        })
        .build();
    let (connection, _peer, mut raw_peer) = raw_connection(handler, ConnectionOptions::default());
    let run = tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"later"}"#).await;
    raw_peer.close().await;
    // The work can only finish after this, and `run` only after the work.
    open.send(()).unwrap();
    within(run).await.unwrap().unwrap();
    assert!(done.load(std::sync::atomic::Ordering::SeqCst), "run returned before the spawned work ended");
}

#[tokio::test]
async fn work_a_notification_handler_spawns_is_dropped_when_the_grace_runs_out() {
    struct Dropped(Option<oneshot::Sender<()>>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            let _ = self.0.take().map(|tell| tell.send(()));
        }
    }
    let (tell, dropped) = oneshot::channel();
    let tell = Mutex::new(Some(tell));
    let handler = TestHandler::new()
        .on_notification(move |_, cx| {
            let guard = Dropped(tell.lock().unwrap().take());
            cx.spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await
            });
            Box::pin(async {})
        })
        .build();
    let options = ConnectionOptions::default().shutdown_grace(Duration::from_millis(100));
    let (connection, _peer, mut raw_peer) = raw_connection(handler, options);
    let run = tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"forever"}"#).await;
    raw_peer.close().await;
    within(run).await.unwrap().unwrap();
    within(dropped).await.expect("the spawned work was dropped");
}
