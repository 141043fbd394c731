//! Bad input never kills a connection: envelope errors are answered per the
//! rules, responses never are, panics become -32603, oversize lines are skipped.

mod common;

use agentproto_jsonrpc::{
    CallError, ConnectionEvent, ConnectionOptions, EnvelopeErrorKind, ErrorCode, ErrorObject, Message, RequestId,
};
use common::{raw, raw_connection, within, Events, TestHandler};
use tokio::sync::oneshot;

fn echo() -> TestHandler {
    TestHandler::new().on_request(|request, _| {
        Box::pin(async move {
            match request.method.as_str() {
                "panic" => panic!("handler bug"),
                _ => Ok(request.params.unwrap_or_else(|| raw("null"))),
            }
        })
    })
}

/// The error code and id of a reply line.
fn error_of(line: &str) -> (ErrorCode, RequestId) {
    match Message::decode(line.as_bytes()) {
        Ok(Message::Response { id, result: Err(error) }) => (error.code, id),
        other => panic!("expected an error response, got {other:?} from {line}"),
    }
}

#[tokio::test]
async fn envelope_errors_are_answered_and_the_connection_lives_on() {
    let events = Events::default();
    let (connection, _peer, mut raw_peer) =
        raw_connection(echo().build(), events.options(ConnectionOptions::default()));
    tokio::spawn(connection.run());
    let cases: [(&str, ErrorCode, RequestId); 7] = [
        ("not json", ErrorCode::PARSE_ERROR, RequestId::NULL),
        (r#"{"jsonrpc":"2.0","id":1,"method":"x"} trailing"#, ErrorCode::PARSE_ERROR, RequestId::NULL),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#, ErrorCode::INVALID_REQUEST, RequestId::NULL),
        ("42", ErrorCode::INVALID_REQUEST, RequestId::NULL),
        (r#"{"id":5,"method":"x"}"#, ErrorCode::INVALID_REQUEST, RequestId::number(5)),
        (r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#, ErrorCode::INVALID_REQUEST, RequestId::NULL),
        (r#"{"jsonrpc":"2.0","id":"s","method":"x","params":3}"#, ErrorCode::INVALID_PARAMS, RequestId::string("s")),
    ];
    for (line, code, id) in cases {
        raw_peer.send(line).await;
        assert_eq!(error_of(&raw_peer.recv().await), (code, id), "{line}");
    }
    // Invalid UTF-8 too.
    raw_peer.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n").await;
    assert_eq!(error_of(&raw_peer.recv().await), (ErrorCode::PARSE_ERROR, RequestId::NULL));
    // Not answered: a notification with bad params, a response of any kind.
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"n","params":1}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":77,"result":1}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":78,"result":1,"error":{"code":1,"message":"x"}}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":9,"method":"echo","params":[9]}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":9,"result":[9]}"#);
    events
        .wait_for(|event| matches!(event, ConnectionEvent::UnmatchedResponse { id } if *id == RequestId::number(77)))
        .await;
    events.wait_for(|event| matches!(event, ConnectionEvent::ErrorWithoutId { .. })).await;
    events
        .wait_for(|event| {
            matches!(event, ConnectionEvent::InvalidMessage { error, failed_call: false }
                if error.kind() == EnvelopeErrorKind::InvalidResponse)
        })
        .await;
    events
        .wait_for(|event| {
            matches!(event, ConnectionEvent::InvalidMessage { error, .. }
                if error.kind() == EnvelopeErrorKind::InvalidNotification)
        })
        .await;
}

#[tokio::test]
async fn null_ids_are_accepted_only_when_allowed() {
    let (connection, _peer, mut raw_peer) = raw_connection(echo().build(), ConnectionOptions::default());
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":null,"method":"echo","params":[1]}"#).await;
    assert_eq!(error_of(&raw_peer.recv().await), (ErrorCode::INVALID_REQUEST, RequestId::NULL));

    let options = ConnectionOptions::default().allow_null_id(true);
    let (connection, _peer, mut raw_peer) = raw_connection(echo().build(), options);
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":null,"method":"echo","params":[1]}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":null,"result":[1]}"#);
}

#[tokio::test]
async fn skip_non_json_lines_reports_instead_of_answering() {
    let events = Events::default();
    let options = events.options(ConnectionOptions::default().skip_non_json_lines(true));
    let (connection, _peer, mut raw_peer) = raw_connection(echo().build(), options);
    tokio::spawn(connection.run());
    raw_peer.send("INFO agent starting").await;
    raw_peer.send("\x1b]0;title\x07").await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    events.wait_for(|event| matches!(event, ConnectionEvent::NonJsonLineSkipped { len: 19 })).await;
    // JSON that is not a message is still answered.
    raw_peer.send("[]").await;
    assert_eq!(error_of(&raw_peer.recv().await), (ErrorCode::INVALID_REQUEST, RequestId::NULL));
}

#[tokio::test]
async fn request_handler_panic_becomes_internal_error() {
    let events = Events::default();
    let (connection, _peer, mut raw_peer) =
        raw_connection(echo().build(), events.options(ConnectionOptions::default()));
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"panic"}"#).await;
    assert_eq!(error_of(&raw_peer.recv().await), (ErrorCode::INTERNAL_ERROR, RequestId::number(1)));
    match events.wait_for(|event| matches!(event, ConnectionEvent::RequestHandlerPanicked { .. })).await {
        ConnectionEvent::RequestHandlerPanicked { method, message, .. } => {
            assert_eq!(method, "panic");
            assert_eq!(message, "handler bug");
        }
        _ => unreachable!(),
    }
    raw_peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":2,"result":[2]}"#);
}

#[tokio::test]
async fn notification_handler_panic_is_reported_and_the_worker_goes_on() {
    let events = Events::default();
    let (done, finished) = oneshot::channel();
    let done = std::sync::Mutex::new(Some(done));
    let handler = TestHandler::new()
        .on_notification(move |notification, _| {
            if notification.method == "boom" {
                panic!("synchronous panic before the future");
            }
            let done = if notification.method == "fine" { done.lock().unwrap().take() } else { None };
            Box::pin(async move {
                if notification.method == "boom-later" {
                    panic!("panic inside the future");
                }
                let _ = done.unwrap().send(());
            })
        })
        .build();
    let (connection, _peer, mut raw_peer) = raw_connection(handler, events.options(ConnectionOptions::default()));
    tokio::spawn(connection.run());
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"boom"}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"boom-later"}"#).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","method":"fine"}"#).await;
    within(finished).await.unwrap();
    let panics = events
        .snapshot()
        .iter()
        .filter(|event| matches!(event, ConnectionEvent::NotificationHandlerPanicked { .. }))
        .count();
    assert_eq!(panics, 2);
}

#[tokio::test]
async fn invalid_response_fails_the_pending_call() {
    let (connection, peer, mut raw_peer) = raw_connection(echo().build(), ConnectionOptions::default());
    tokio::spawn(connection.run());
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.call("x", None).await }
    });
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":0,"method":"x"}"#);
    raw_peer.send(r#"{"jsonrpc":"2.0","id":0,"result":1,"error":{"code":1,"message":"x"}}"#).await;
    match within(call).await.unwrap() {
        Err(CallError::InvalidResponse(error)) => {
            assert_eq!(error.kind(), EnvelopeErrorKind::InvalidResponse);
            assert_eq!(error.path(), "$");
        }
        other => panic!("{other:?}"),
    }
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.call("y", None).await }
    });
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":1,"method":"y"}"#);
    raw_peer.send(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}"#).await;
    match within(call).await.unwrap() {
        Err(CallError::InvalidResponse(error)) => assert_eq!(error.path(), "$.error.code"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn oversize_lines_are_skipped_answered_or_fail_the_call() {
    let events = Events::default();
    let options = events.options(ConnectionOptions::default().max_message_size(1024).read_chunk_size(256));
    let (connection, peer, mut raw_peer) = raw_connection(echo().build(), options);
    tokio::spawn(connection.run());
    let big = "x".repeat(10_000);
    raw_peer.send(&format!(r#"{{"jsonrpc":"2.0","id":5,"method":"echo","params":["{big}"]}}"#)).await;
    let reply = raw_peer.recv().await;
    assert_eq!(error_of(&reply), (ErrorCode::INVALID_REQUEST, RequestId::number(5)));
    // A notification that is too large is only reported.
    raw_peer.send(&format!(r#"{{"jsonrpc":"2.0","method":"n","params":["{big}"]}}"#)).await;
    raw_peer.send(r#"{"jsonrpc":"2.0","id":6,"method":"echo","params":[6]}"#).await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":6,"result":[6]}"#);
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.call("big", None).await }
    });
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":0,"method":"big"}"#);
    let response = format!(r#"{{"jsonrpc":"2.0","id":0,"result":["{big}"]}}"#);
    raw_peer.send(&response).await;
    match within(call).await.unwrap() {
        Err(CallError::ResponseTooLarge(len)) => assert_eq!(len, response.len() as u64),
        other => panic!("{other:?}"),
    }
    let oversize =
        events.snapshot().iter().filter(|event| matches!(event, ConnectionEvent::OversizeMessage { .. })).count();
    assert_eq!(oversize, 3);
}

#[tokio::test]
async fn crlf_and_blank_lines_on_a_connection() {
    let (connection, _peer, mut raw_peer) = raw_connection(echo().build(), ConnectionOptions::default());
    tokio::spawn(connection.run());
    raw_peer.send_bytes(b"\r\n\n  \n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\r\n").await;
    assert_eq!(raw_peer.recv().await, r#"{"jsonrpc":"2.0","id":1,"result":[1]}"#);
}

#[test]
fn error_object_helpers_are_used_by_handlers() {
    // The validation constructor used for `-32602` answers.
    let error = ErrorObject::invalid_params("$.params.sessionId", "string", "null");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
}
