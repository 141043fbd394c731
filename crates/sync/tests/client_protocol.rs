//! The client against scripted servers that break the protocol: each is a
//! shell that prints fixed bytes and then waits for its stdin to close.

mod support;

use std::process::Command;

use agentproto_sync::frame::{FrameError, MessageType};
use agentproto_sync::{Client, ClientError, ClientOptions, ProtocolError};
use support::{Watchdog, DEADLINE};

/// Starts `sh -c script` as the server, sends one `echo` request and returns
/// the outcome.
fn request_against(script: &str) -> Result<Vec<u8>, ClientError> {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    let mut client = Client::spawn(command, ClientOptions::default()).unwrap();
    let watchdog = Watchdog::new(client.killer(), DEADLINE);
    let outcome = client.request("echo", b"hi").map(<[u8]>::to_vec);
    // Whatever happened, the channel is unusable afterwards and says so at once.
    if !matches!(outcome, Ok(_) | Err(ClientError::Server(_))) {
        assert!(matches!(client.request("echo", b""), Err(ClientError::ChildExited(_))));
    }
    watchdog.finish();
    outcome
}

fn protocol_error(outcome: Result<Vec<u8>, ClientError>) -> ProtocolError {
    match outcome {
        Err(ClientError::Protocol(error)) => error,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[test]
fn answer_for_another_method_is_a_name_mismatch() {
    // [4, "other", ""]
    let error = protocol_error(request_against(r"printf '\223\004\304\005other\304\000'; exec cat >/dev/null"));
    match error {
        ProtocolError::NameMismatch { kind, expected, found } => {
            assert_eq!((kind, expected.as_str(), found.as_str()), (MessageType::Response, "echo", "other"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn error_for_another_method_is_a_name_mismatch() {
    // [5, "other", "boom"]
    let error = protocol_error(request_against(r"printf '\223\005\304\005other\304\004boom'; exec cat >/dev/null"));
    assert!(matches!(error, ProtocolError::NameMismatch { kind: MessageType::Error, .. }), "{error:?}");
}

#[test]
fn request_from_the_server_is_unexpected() {
    // [1, "echo", ""]
    let error = protocol_error(request_against(r"printf '\223\001\304\004echo\304\000'; exec cat >/dev/null"));
    assert!(matches!(error, ProtocolError::UnexpectedType { kind: MessageType::Request, .. }), "{error:?}");
}

#[test]
fn bytes_that_are_not_a_tuple_are_a_frame_error() {
    let error = protocol_error(request_against(r"printf 'hello'; exec cat >/dev/null"));
    assert!(matches!(error, ProtocolError::Frame(FrameError::ArrayHeader { found: b'h' })), "{error:?}");
}

#[test]
fn server_error_tuple_carries_the_text() {
    // [5, "echo", "no echo today"]
    let outcome = request_against(r"printf '\223\005\304\004echo\304\015no echo today'; exec cat >/dev/null");
    assert!(matches!(&outcome, Err(ClientError::Server(text)) if text == "no echo today"), "{outcome:?}");
}

#[test]
fn server_that_exits_without_answering_reports_its_status() {
    let outcome = request_against("exit 7");
    assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.code() == Some(7)), "{outcome:?}");
}

#[test]
fn server_that_dies_mid_tuple_reports_its_status() {
    // The answer's payload announces 200 bytes; two arrive.
    let outcome = request_against(r"printf '\223\004\304\004echo\304\310ab'; exit 5");
    assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.code() == Some(5)), "{outcome:?}");
}
