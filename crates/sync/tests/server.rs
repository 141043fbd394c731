//! `Server` over in-memory streams: what it answers, and how a client that
//! breaks the protocol ends the serving loop.

use std::io::Write;
use std::sync::{Arc, Mutex};

use agentproto_sync::frame::{encode, FrameReader, Limits, MessageType};
use agentproto_sync::{ProtocolError, Server, ServerError};

/// Everything the server writes, readable after `serve` returns.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<Vec<u8>>>);

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn tuples(parts: &[(MessageType, &str, &[u8])]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for &(kind, name, payload) in parts {
        encode(&mut bytes, kind, name.as_bytes(), payload).unwrap();
    }
    bytes
}

/// A tuple written by the server: type, name, payload.
type Written = (MessageType, String, Vec<u8>);

fn written(output: &Output) -> Vec<Written> {
    let bytes = output.0.lock().unwrap().clone();
    let mut reader = FrameReader::new(bytes.as_slice(), Limits::default());
    let mut frames = Vec::new();
    while let Some(frame) = reader.read().unwrap() {
        frames.push((frame.kind, String::from_utf8(frame.name.to_vec()).unwrap(), frame.payload.to_vec()));
    }
    frames
}

/// A server whose `ask` handler calls the client's `question` callback with
/// its payload and answers `answer: …`.
fn asking_server() -> Server {
    let mut server = Server::new();
    server.handle("ask", |peer, payload, out| {
        let answer = peer.call("question", payload)?;
        out.extend_from_slice(b"answer: ");
        out.extend_from_slice(answer);
        Ok(())
    });
    server
}

fn serve(server: &mut Server, input: Vec<u8>) -> (Result<(), ServerError>, Vec<Written>) {
    let output = Output::default();
    let outcome = server.serve(std::io::Cursor::new(input), output.clone());
    (outcome, written(&output))
}

#[test]
fn requests_and_callback_answers_are_served_until_end_of_input() {
    let input = tuples(&[
        (MessageType::Request, "ask", b"why"),
        (MessageType::CallResponse, "question", b"because"),
        (MessageType::Request, "ask", b"who"),
        (MessageType::CallError, "question", b"cannot say"),
    ]);
    let (outcome, frames) = serve(&mut asking_server(), input);
    outcome.unwrap();
    let expected: Vec<Written> = vec![
        (MessageType::Call, "question".into(), b"why".to_vec()),
        (MessageType::Response, "ask".into(), b"answer: because".to_vec()),
        (MessageType::Call, "question".into(), b"who".to_vec()),
        (MessageType::Error, "ask".into(), b"client error: cannot say".to_vec()),
    ];
    assert_eq!(frames, expected);
}

#[test]
fn a_tuple_other_than_a_request_between_requests_ends_serving() {
    let input = tuples(&[(MessageType::CallResponse, "question", b"early")]);
    let (outcome, frames) = serve(&mut asking_server(), input);
    let error = outcome.unwrap_err();
    assert!(
        matches!(&error, ServerError::Protocol(ProtocolError::UnexpectedType { kind: MessageType::CallResponse, name }) if name == "question"),
        "{error:?}"
    );
    assert!(frames.is_empty());
}

#[test]
fn a_callback_answer_with_another_name_ends_serving_without_an_answer() {
    let input = tuples(&[(MessageType::Request, "ask", b"x"), (MessageType::CallResponse, "other", b"y")]);
    let (outcome, frames) = serve(&mut asking_server(), input);
    let error = outcome.unwrap_err();
    assert!(matches!(&error, ServerError::Protocol(ProtocolError::NameMismatch { .. })), "{error:?}");
    assert_eq!(frames.len(), 1, "only the call was written: {frames:?}");
}

#[test]
fn a_new_request_during_a_callback_ends_serving() {
    let input = tuples(&[(MessageType::Request, "ask", b"x"), (MessageType::Request, "ask", b"y")]);
    let (outcome, _) = serve(&mut asking_server(), input);
    let error = outcome.unwrap_err();
    assert!(
        matches!(&error, ServerError::Protocol(ProtocolError::UnexpectedType { kind: MessageType::Request, .. })),
        "{error:?}"
    );
}

#[test]
fn end_of_input_during_a_callback_is_reported() {
    let input = tuples(&[(MessageType::Request, "ask", b"x")]);
    let (outcome, _) = serve(&mut asking_server(), input);
    let error = outcome.unwrap_err();
    assert!(matches!(&error, ServerError::EndedDuringCall { name } if name == "question"), "{error:?}");
}

#[test]
fn a_malformed_tuple_ends_serving_with_a_frame_error() {
    let (outcome, _) = serve(&mut asking_server(), vec![0x93, 0x01, 0xa3, b'a', b's', b'k']);
    let error = outcome.unwrap_err();
    assert!(matches!(&error, ServerError::Protocol(ProtocolError::Frame(_))), "{error:?}");
}

#[test]
fn requests_over_the_limit_are_refused() {
    let mut server = asking_server().with_limits(Limits { max_name: 64, max_payload: 4 });
    let (outcome, _) = serve(&mut server, tuples(&[(MessageType::Request, "ask", b"12345")]));
    assert!(matches!(outcome, Err(ServerError::Protocol(ProtocolError::Frame(_)))), "{outcome:?}");
}
