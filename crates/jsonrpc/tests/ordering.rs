//! Calls, responses and the ordering guarantee over an in-memory pair.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentproto_jsonrpc::{memory, CallError, ConnectionEvent, ConnectionOptions, ErrorCode, ErrorObject};
use common::{raw, within, TestHandler};
use tokio::sync::{oneshot, Notify};

#[tokio::test]
async fn call_round_trip_both_ways() {
    let echo = || {
        TestHandler::new()
            .on_request(|request, _| {
                Box::pin(async move {
                    match request.method.as_str() {
                        "echo" => Ok(request.params.unwrap_or_else(|| raw("null"))),
                        "fail" => Err(ErrorObject::new(ErrorCode(-1), "failed")),
                        _ => Err(ErrorObject::method_not_found(&request.method)),
                    }
                })
            })
            .build()
    };
    let (a, b) = memory::pair(echo(), ConnectionOptions::default(), echo(), ConnectionOptions::default());
    tokio::spawn(a.connection.run());
    tokio::spawn(b.connection.run());
    let result = within(a.peer.call("echo", Some(raw(r#"{"x":[1,"y"]}"#)))).await.unwrap();
    assert_eq!(result.get(), r#"{"x":[1,"y"]}"#);
    let result = within(b.peer.call("echo", Some(raw("[true]")))).await.unwrap();
    assert_eq!(result.get(), "[true]");
    match within(a.peer.call("fail", None)).await {
        Err(CallError::Rpc(error)) => assert_eq!(error.code, ErrorCode(-1)),
        other => panic!("{other:?}"),
    }
    match within(a.peer.call("nope", None)).await {
        Err(CallError::Rpc(error)) => assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND),
        other => panic!("{other:?}"),
    }
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Point {
        x: i32,
    }
    let point: Point = within(a.peer.call_typed("echo", &Point { x: 3 })).await.unwrap();
    assert_eq!(point, Point { x: 3 });
    match within(a.peer.call_typed::<_, String>("echo", &Point { x: 3 })).await {
        Err(CallError::Decode(_)) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn many_concurrent_calls_are_correlated() {
    let echo = TestHandler::new().on_request(|request, _| Box::pin(async move { Ok(request.params.unwrap()) })).build();
    let (a, b) =
        memory::pair(TestHandler::new().build(), ConnectionOptions::default(), echo, ConnectionOptions::default());
    tokio::spawn(a.connection.run());
    tokio::spawn(b.connection.run());
    let calls = (0..200).map(|n| {
        let peer = a.peer.clone();
        async move {
            let result = peer.call("echo", Some(raw(&format!("[{n}]")))).await.unwrap();
            assert_eq!(result.get(), format!("[{n}]"));
        }
    });
    within(futures::future::join_all(calls)).await;
}

/// (a) A prompt-like call whose peer sends 1000 notifications before the
/// response: the caller sees all 1000 handled, in order, first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_waits_for_earlier_notifications() {
    const UPDATES: usize = 1000;
    let agent = TestHandler::new()
        .on_request(|_, cx| {
            let peer = cx.peer().clone();
            Box::pin(async move {
                for n in 0..UPDATES {
                    peer.notify("update", Some(raw(&format!("[{n}]")))).await.unwrap();
                }
                Ok(raw(r#"{"stopReason":"end_turn"}"#))
            })
        })
        .build();
    let handled = Arc::new(Mutex::new(Vec::new()));
    let client = {
        let handled = handled.clone();
        TestHandler::new()
            .on_notification(move |notification, _| {
                let handled = handled.clone();
                Box::pin(async move {
                    // Make the handler genuinely asynchronous.
                    tokio::task::yield_now().await;
                    let n: Vec<usize> = serde_json::from_str(notification.params.unwrap().get()).unwrap();
                    handled.lock().unwrap().push(n[0]);
                })
            })
            .build()
    };
    let (client_side, agent_side) =
        memory::pair(client, ConnectionOptions::default(), agent, ConnectionOptions::default());
    tokio::spawn(client_side.connection.run());
    tokio::spawn(agent_side.connection.run());
    for _ in 0..3 {
        handled.lock().unwrap().clear();
        let result = within(client_side.peer.call("session/prompt", None)).await.unwrap();
        assert_eq!(result.get(), r#"{"stopReason":"end_turn"}"#);
        let handled = handled.lock().unwrap().clone();
        assert_eq!(handled, (0..UPDATES).collect::<Vec<_>>());
    }
}

/// (b) A notification handler that awaits a call to the peer completes, even
/// when a later notification was read before the call's response.
#[tokio::test]
async fn notification_handler_can_await_a_call() {
    let both_sent = Arc::new(Notify::new());
    let agent = {
        let both_sent = both_sent.clone();
        TestHandler::new()
            .on_request(move |request, cx| {
                let both_sent = both_sent.clone();
                let peer = cx.peer().clone();
                Box::pin(async move {
                    match request.method.as_str() {
                        "start" => {
                            peer.notify("first", None).await.unwrap();
                            peer.notify("second", None).await.unwrap();
                            both_sent.notify_one();
                            Ok(raw("null"))
                        }
                        // Answer only after "second" was queued, so the client reads
                        // "second" before this response.
                        "lookup" => {
                            both_sent.notified().await;
                            Ok(raw("42"))
                        }
                        _ => Err(ErrorObject::method_not_found(&request.method)),
                    }
                })
            })
            .build()
    };
    let (done, finished) = oneshot::channel();
    let done = Arc::new(Mutex::new(Some(done)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = {
        let seen = seen.clone();
        TestHandler::new()
            .on_notification(move |notification, cx| {
                let done = done.clone();
                let seen = seen.clone();
                let peer = cx.peer().clone();
                Box::pin(async move {
                    if notification.method == "first" {
                        let result = peer.call("lookup", None).await.unwrap();
                        seen.lock().unwrap().push(format!("first:{}", result.get()));
                    } else {
                        seen.lock().unwrap().push(notification.method.clone());
                        if let Some(done) = done.lock().unwrap().take() {
                            let _ = done.send(());
                        }
                    }
                })
            })
            .build()
    };
    let (client_side, agent_side) =
        memory::pair(client, ConnectionOptions::default(), agent, ConnectionOptions::default());
    tokio::spawn(client_side.connection.run());
    tokio::spawn(agent_side.connection.run());
    within(client_side.peer.call("start", None)).await.unwrap();
    within(finished).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec!["first:42".to_owned(), "second".to_owned()]);
}

/// (c) A request handler that awaits a call to the peer (a prompt awaiting a
/// permission round trip) completes.
#[tokio::test]
async fn request_handler_can_await_a_call() {
    let agent = TestHandler::new()
        .on_request(|_, cx| {
            let peer = cx.peer().clone();
            Box::pin(async move {
                peer.notify("update", None).await.unwrap();
                let outcome = peer.call("session/request_permission", None).await.unwrap();
                Ok(raw(&format!(r#"{{"permission":{}}}"#, outcome.get())))
            })
        })
        .build();
    let updates = Arc::new(AtomicUsize::new(0));
    let client = {
        let updates = updates.clone();
        TestHandler::new()
            .on_request(|_, _| Box::pin(async { Ok(raw(r#""allow""#)) }))
            .on_notification(move |_, _| {
                updates.fetch_add(1, Ordering::SeqCst);
                Box::pin(async {})
            })
            .build()
    };
    // One request slot per side: the agent's only slot is busy awaiting the
    // client while the client's only slot answers.
    let options = ConnectionOptions::default().max_concurrent_requests(1);
    let (client_side, agent_side) = memory::pair(client, options.clone(), agent, options);
    tokio::spawn(client_side.connection.run());
    tokio::spawn(agent_side.connection.run());
    let result = within(client_side.peer.call("session/prompt", None)).await.unwrap();
    assert_eq!(result.get(), r#"{"permission":"allow"}"#);
    assert_eq!(updates.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn notifications_are_handled_one_at_a_time_in_order() {
    let running = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (done, finished) = oneshot::channel();
    let done = Arc::new(Mutex::new(Some(done)));
    let client = {
        let running = running.clone();
        let seen = seen.clone();
        TestHandler::new()
            .on_notification(move |notification, _| {
                let running = running.clone();
                let seen = seen.clone();
                let done = done.clone();
                Box::pin(async move {
                    assert_eq!(running.fetch_add(1, Ordering::SeqCst), 0, "handlers overlap");
                    tokio::task::yield_now().await;
                    let n: Vec<u32> = serde_json::from_str(notification.params.unwrap().get()).unwrap();
                    seen.lock().unwrap().push(n[0]);
                    running.fetch_sub(1, Ordering::SeqCst);
                    if n[0] == 99 {
                        let _ = done.lock().unwrap().take().unwrap().send(());
                    }
                })
            })
            .build()
    };
    let (client_side, agent_side) =
        memory::pair(client, ConnectionOptions::default(), TestHandler::new().build(), ConnectionOptions::default());
    tokio::spawn(client_side.connection.run());
    tokio::spawn(agent_side.connection.run());
    for n in 0..100 {
        within(agent_side.peer.notify("n", Some(raw(&format!("[{n}]"))))).await.unwrap();
    }
    within(finished).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), (0..100).collect::<Vec<_>>());
}

#[tokio::test]
async fn flush_waits_for_the_write() {
    let (a, b) = memory::pair(
        TestHandler::new().build(),
        ConnectionOptions::default(),
        TestHandler::new().build(),
        ConnectionOptions::default(),
    );
    tokio::spawn(a.connection.run());
    tokio::spawn(b.connection.run());
    within(a.peer.notify("x", None)).await.unwrap();
    within(a.peer.flush()).await.unwrap();
}

/// An incoming request starts only after the notifications read before it were
/// handled (a permission request never overtakes the tool call it is about).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_waits_for_earlier_notifications() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let (note_log, request_log) = (log.clone(), log.clone());
    let handler = TestHandler::new()
        .on_notification(move |notification, _| {
            let log = note_log.clone();
            Box::pin(async move {
                // A slow notification handler: the request must still wait for it.
                tokio::task::yield_now().await;
                log.lock().unwrap().push(notification.method);
            })
        })
        .on_request(move |request, _| {
            let log = request_log.clone();
            Box::pin(async move {
                log.lock().unwrap().push(request.method);
                Ok(raw("null"))
            })
        })
        .build();
    let (connection, _peer, mut remote) = common::raw_connection(handler, ConnectionOptions::default());
    tokio::spawn(connection.run());
    for n in 0..20 {
        remote.send(&format!(r#"{{"jsonrpc":"2.0","method":"note{n}"}}"#)).await;
    }
    remote.send(r#"{"jsonrpc":"2.0","id":1,"method":"ask"}"#).await;
    assert_eq!(within(remote.recv()).await, r#"{"jsonrpc":"2.0","id":1,"result":null}"#);
    let log = log.lock().unwrap().clone();
    assert_eq!(log.len(), 21);
    assert_eq!(log.last().map(String::as_str), Some("ask"), "{log:?}");
}

/// `call_cancellable`: the cancel notification goes out and the caller still
/// receives the peer's answer.
#[tokio::test]
async fn cancellable_call_receives_the_answer_to_its_cancel() {
    let (started_tx, started) = oneshot::channel::<()>();
    let started_tx = Arc::new(Mutex::new(Some(started_tx)));
    let slow = TestHandler::new()
        .on_request(move |_, _| {
            if let Some(tx) = started_tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
            Box::pin(std::future::pending())
        })
        .build();
    let (a, b) =
        memory::pair(TestHandler::new().build(), ConnectionOptions::default(), slow, ConnectionOptions::default());
    tokio::spawn(a.connection.run());
    tokio::spawn(b.connection.run());
    let token = tokio_util::sync::CancellationToken::new();
    let call = {
        let (peer, token) = (a.peer.clone(), token.clone());
        tokio::spawn(async move { peer.call_cancellable("slow", None, &token).await })
    };
    within(started).await.unwrap();
    token.cancel();
    match within(call).await.unwrap() {
        Err(CallError::Rpc(error)) => assert_eq!(error.code, ErrorCode::REQUEST_CANCELLED),
        other => panic!("{other:?}"),
    }
}

/// A result hook runs as the answer is read: a request the peer sends right
/// after the answer (same write) already sees its effect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn result_hook_runs_before_later_messages_are_dispatched() {
    let opened = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = opened.clone();
    let handler = TestHandler::new()
        .on_request(move |_, _| {
            let open = seen.load(Ordering::SeqCst);
            Box::pin(async move { Ok(raw(if open { "true" } else { "false" })) })
        })
        .build();
    let (connection, peer, mut remote) = common::raw_connection(handler, ConnectionOptions::default());
    tokio::spawn(connection.run());
    let flag = opened.clone();
    let hook: agentproto_jsonrpc::ResultHook = Box::new(move |result| {
        assert_eq!(result.get(), r#"{"id":"s1"}"#);
        flag.store(true, Ordering::SeqCst);
    });
    let call = tokio::spawn(async move { peer.call_observing("open", None, None, Some(hook)).await });
    let request = remote.recv().await;
    assert!(request.contains(r#""method":"open""#), "{request}");
    remote
        .send(concat!(
            r#"{"jsonrpc":"2.0","id":0,"result":{"id":"s1"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"c","method":"check"}"#
        ))
        .await;
    assert_eq!(remote.recv().await, r#"{"jsonrpc":"2.0","id":"c","result":true}"#);
    assert_eq!(within(call).await.unwrap().unwrap().get(), r#"{"id":"s1"}"#);
}

/// A panicking hook is reported; the call still gets its answer and the
/// connection goes on.
#[tokio::test]
async fn panicking_result_hook_is_reported_and_the_call_resolves() {
    let events = common::Events::default();
    let echo = TestHandler::new().on_request(|request, _| Box::pin(async move { Ok(request.params.unwrap()) })).build();
    let (a, b) = memory::pair(
        TestHandler::new().build(),
        events.options(ConnectionOptions::default()),
        echo,
        ConnectionOptions::default(),
    );
    tokio::spawn(a.connection.run());
    tokio::spawn(b.connection.run());
    let hook: agentproto_jsonrpc::ResultHook = Box::new(|_| panic!("hook failed"));
    let result = within(a.peer.call_observing("echo", Some(raw("[1]")), None, Some(hook))).await.unwrap();
    assert_eq!(result.get(), "[1]");
    let event =
        events.wait_for(|event| matches!(event, agentproto_jsonrpc::ConnectionEvent::ResultHookPanicked { .. })).await;
    assert!(format!("{event:?}").contains("hook failed"), "{event:?}");
    assert_eq!(within(a.peer.call("echo", Some(raw("[2]")))).await.unwrap().get(), "[2]");
}

/// Requests and notifications carry their read order.
#[tokio::test]
async fn contexts_carry_the_read_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (requests, notifications) = (seen.clone(), seen.clone());
    let handler = TestHandler::new()
        .on_request(move |request, cx| {
            requests.lock().unwrap().push(format!("{} before {}", request.method, cx.notifications_before()));
            Box::pin(async move { Ok(raw("null")) })
        })
        .on_notification(move |notification, cx| {
            notifications.lock().unwrap().push(format!("{} is {}", notification.method, cx.index()));
            Box::pin(async {})
        })
        .build();
    let (connection, _peer, mut remote) = common::raw_connection(handler, ConnectionOptions::default());
    tokio::spawn(connection.run());
    remote.send(r#"{"jsonrpc":"2.0","id":1,"method":"r1"}"#).await;
    remote.recv().await;
    remote.send(r#"{"jsonrpc":"2.0","method":"n1"}"#).await;
    remote.send(r#"{"jsonrpc":"2.0","method":"n2"}"#).await;
    remote.send(r#"{"jsonrpc":"2.0","id":2,"method":"r2"}"#).await;
    remote.recv().await;
    assert_eq!(*seen.lock().unwrap(), ["r1 before 0", "n1 is 1", "n2 is 2", "r2 before 2"]);
}

/// The read hook sees every request on the reader, in read order, numbered from
/// 1, before its handler starts, even though the handlers start in any order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_seen_in_read_order_before_their_handlers_start() {
    let read = Arc::new(Mutex::new(Vec::new()));
    let (reads, checked) = (read.clone(), read.clone());
    let handler = TestHandler::new()
        .on_read(move |request, cx| reads.lock().unwrap().push((request.method.clone(), cx.index())))
        .on_request(move |request, cx| {
            let seen = checked.lock().unwrap().contains(&(request.method.clone(), cx.index()));
            Box::pin(async move { Ok(raw(if seen { "true" } else { "false" })) })
        })
        .build();
    let (connection, _peer, mut remote) = common::raw_connection(handler, ConnectionOptions::default());
    tokio::spawn(connection.run());
    let lines: Vec<String> = (1..=50)
        .map(|n| format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"r{n}"}}"#))
        .chain([r#"{"jsonrpc":"2.0","method":"between"}"#.to_owned()])
        .collect();
    remote.send(&lines.join("\n")).await;
    for _ in 1..=50 {
        let answer: serde_json::Value = serde_json::from_str(&remote.recv().await).unwrap();
        assert_eq!(answer["result"], true, "{answer}");
    }
    let expected: Vec<(String, u64)> = (1..=50).map(|n| (format!("r{n}"), n)).collect();
    assert_eq!(*read.lock().unwrap(), expected);
}

/// A panicking read hook is reported; the request is still handled.
#[tokio::test]
async fn a_panicking_read_hook_is_reported_and_the_request_handled() {
    let events = common::Events::default();
    let handler = TestHandler::new()
        .on_read(|_, _| panic!("read hook failed"))
        .on_request(|_, _| Box::pin(async { Ok(raw("1")) }))
        .build();
    let (connection, _peer, mut remote) = common::raw_connection(handler, events.options(ConnectionOptions::default()));
    tokio::spawn(connection.run());
    remote.send(r#"{"jsonrpc":"2.0","id":7,"method":"r"}"#).await;
    assert_eq!(remote.recv().await, r#"{"jsonrpc":"2.0","id":7,"result":1}"#);
    let event = events.wait_for(|e| matches!(e, ConnectionEvent::RequestHandlerPanicked { .. })).await;
    assert!(format!("{event:?}").contains("read hook failed"), "{event:?}");
}
