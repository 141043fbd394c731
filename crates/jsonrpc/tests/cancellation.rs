//! `$/cancel_request` both ways, timeouts, and late responses.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_jsonrpc::{CallError, CancelNotification, ConnectionEvent, ConnectionOptions};
use common::{raw, raw_connection, within, Events, TestHandler};
use tokio::sync::oneshot;

/// Signals when dropped (a handler future dropped by the connection).
struct DropSignal(Option<oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(signal) = self.0.take() {
            let _ = signal.send(());
        }
    }
}

fn slow_handler(started: oneshot::Sender<()>, dropped: oneshot::Sender<()>) -> TestHandler {
    let started = Arc::new(Mutex::new(Some(started)));
    let dropped = Arc::new(Mutex::new(Some(dropped)));
    TestHandler::new().on_request(move |_, _| {
        let started = started.lock().unwrap().take();
        let guard = DropSignal(dropped.lock().unwrap().take());
        Box::pin(async move {
            let _guard = guard;
            if let Some(started) = started {
                let _ = started.send(());
            }
            std::future::pending::<()>().await;
            unreachable!()
        })
    })
}

#[tokio::test]
async fn incoming_cancel_drops_the_handler_and_answers_cancelled() {
    let (started, has_started) = oneshot::channel();
    let (dropped, was_dropped) = oneshot::channel();
    let (connection, _peer, mut raw_peer) =
        raw_connection(slow_handler(started, dropped).build(), ConnectionOptions::default());
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt"}"#).await;
    within(has_started).await.unwrap();
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}"#).await;
    within(was_dropped).await.unwrap();
    assert_eq!(
        raw_peer.recv().await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"request cancelled"}}"#
    );
}

#[tokio::test]
async fn handler_that_handles_cancellation_sends_its_own_result() {
    let handler = TestHandler::new()
        .on_request(|_, cx| {
            cx.handle_cancellation();
            let token = cx.cancellation_token().clone();
            Box::pin(async move {
                token.cancelled().await;
                Ok(raw(r#"{"partial":true}"#))
            })
        })
        .build();
    let (connection, _peer, mut raw_peer) = raw_connection(handler, ConnectionOptions::default());
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":"p","method":"long"}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p"}}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":"p","result":{"partial":true}}"#);
}

#[tokio::test]
async fn cancel_for_an_unknown_id_is_ignored() {
    let events = Events::default();
    let handler = TestHandler::new().on_request(|_, _| Box::pin(async { Ok(raw("1")) })).build();
    let (connection, _peer, mut raw_peer) = raw_connection(handler, events.options(ConnectionOptions::default()));
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":99}}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"1"}}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":1,"result":1}"#);
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"id":1}}"#).await;
    events.wait_for(|event| matches!(event, ConnectionEvent::InvalidCancel)).await;
}

#[tokio::test]
async fn custom_cancel_notification() {
    let (started, has_started) = oneshot::channel();
    let (dropped, was_dropped) = oneshot::channel();
    let options = ConnectionOptions::default().cancel_notification(Some(CancelNotification {
        method: "cancel".into(),
        id_key: "id".into(),
        check: None,
    }));
    let (connection, _peer, mut raw_peer) = raw_connection(slow_handler(started, dropped).build(), options);
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":3,"method":"slow"}"#).await;
    within(has_started).await.unwrap();
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"cancel","params":{"id":3}}"#).await;
    within(was_dropped).await.unwrap();
    assert_eq!(
        raw_peer.recv().await,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"request cancelled"}}"#
    );
}

#[tokio::test]
async fn a_cancel_whose_params_the_check_refuses_cancels_nothing() {
    fn no_veto(params: Option<&serde_json::value::RawValue>) -> bool {
        params.is_some_and(|params| !params.get().contains("veto"))
    }
    let (started, has_started) = oneshot::channel();
    let (dropped, was_dropped) = oneshot::channel();
    let events = Events::default();
    let cancel = CancelNotification { check: Some(no_veto), ..CancelNotification::default() };
    let options = events.options(ConnectionOptions::default().cancel_notification(Some(cancel)));
    let (connection, _peer, mut raw_peer) = raw_connection(slow_handler(started, dropped).build(), options);
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":3,"method":"slow"}"#).await;
    within(has_started).await.unwrap();
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3,"veto":1}}"#).await;
    events.wait_for(|event| matches!(event, ConnectionEvent::InvalidCancel)).await;
    // The request still runs; a cancel the check accepts ends it.
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}"#).await;
    within(was_dropped).await.unwrap();
    assert_eq!(
        raw_peer.recv().await,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"request cancelled"}}"#
    );
}

#[tokio::test]
async fn dropping_a_call_sends_cancel_and_discards_the_late_response() {
    let events = Events::default();
    let (connection, peer, mut raw_peer) =
        raw_connection(TestHandler::new().build(), events.options(ConnectionOptions::default()));
    tokio::spawn(connection.run());
    {
        let call = peer.call("slow", Some(raw(r#"{"n":1}"#)));
        tokio::pin!(call);
        tokio::select! {
            result = &mut call => panic!("answered without a response: {result:?}"),
            line = raw_peer.recv() => {
                assert_eq!(line, r#"{"jsonrpc":"2.0","id":0,"method":"slow","params":{"n":1}}"#);
            }
        }
    }
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}}"#);
    raw_peer.send(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32800,"message":"request cancelled"}}"#).await;
    events.wait_for(|event| matches!(event, ConnectionEvent::LateResponse { .. })).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":42,"result":1}"#).await;
    events.wait_for(|event| matches!(event, ConnectionEvent::UnmatchedResponse { .. })).await;
    assert!(!events.snapshot().iter().any(|event| matches!(
        event,
        ConnectionEvent::UnmatchedResponse { id } if id.as_number() == Some(0)
    )));
}

#[tokio::test]
async fn call_timeout_fails_the_call_and_sends_cancel() {
    let options = ConnectionOptions::default().call_timeout(Some(Duration::from_millis(50)));
    let (connection, peer, mut raw_peer) = raw_connection(TestHandler::new().build(), options);
    tokio::spawn(connection.run());
    match within(peer.call("never", None)).await {
        Err(CallError::Timeout(timeout)) => assert_eq!(timeout, Duration::from_millis(50)),
        other => panic!("{other:?}"),
    }
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":0,"method":"never"}"#);
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}}"#);
    // The connection is still usable.
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.call_with_timeout("again", None, Duration::from_secs(5)).await }
    });
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":1,"method":"again"}"#);
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"result":"ok"}"#).await;
    assert_eq!(within(call).await.unwrap().unwrap().get(), r#""ok""#);
}
