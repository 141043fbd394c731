//! The cases every fixture server passes (`agentproto-sync-fixture` in Rust,
//! `agentproto.sync.fixture` in Python, `ts/src/sync/fixture.ts`): the same
//! methods, the same answers and the same error texts, checked the same way
//! for each, so that a server that drifts from the others fails here.

use std::os::unix::process::ExitStatusExt;

use agentproto_sync::{Client, ClientError};

pub(crate) fn server_error(outcome: Result<&[u8], ClientError>) -> String {
    match outcome {
        Err(ClientError::Server(text)) => text,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// `echo` at every bin size class, then a 3 MB `repeat`.
pub(crate) fn echo_and_large_results(client: &mut Client) {
    for length in [0usize, 1, 255, 256, 65_535, 65_536, 1 << 20] {
        let payload: Vec<u8> = (0..length).map(|index| (index % 253) as u8).collect();
        assert_eq!(client.request("echo", &payload).unwrap(), payload.as_slice(), "length {length}");
    }
    let result = client.request("repeat", b"3000000").unwrap();
    assert_eq!(result.len(), 3_000_000);
    assert!(result.iter().enumerate().all(|(index, &byte)| byte == (index % 251) as u8));
}

/// Callbacks answered mid-request, in order; their failures (an error, an
/// unknown name, a panic) reach the server as CallErrors and come back in its
/// answer; the channel goes on.
pub(crate) fn callbacks_and_their_failures(client: &mut Client) {
    let mut calls = 0;
    client.register_callback("upper", move |payload, answer| {
        calls += 1;
        answer.extend(payload.iter().map(u8::to_ascii_uppercase));
        answer.extend_from_slice(format!("#{calls}").as_bytes());
        Ok(())
    });
    client.register_callback("refuse", |_, _| Err("not today".to_owned()));
    client.register_callback("explode", |_, _| panic!("callback blew up"));
    assert_eq!(client.request("callback", b"upper\0abc\0upper\0x").unwrap(), b"ABC#1\0X#2");
    assert_eq!(server_error(client.request("callback", b"refuse\0x")), "client error: not today");
    assert_eq!(server_error(client.request("callback", b"missing\0x")), "client error: unknown callback `missing`");
    let text = server_error(client.request("callback", b"explode\0x"));
    assert_eq!(text, "client error: callback `explode` panicked: callback blew up");
    assert_eq!(server_error(client.request("callback", b"odd")), "expected name/argument pairs separated by NUL");
    assert_eq!(client.request("echo", b"fine").unwrap(), b"fine");
}

/// A handler's error, its panic or exception and an unknown method are Error
/// tuples with the Rust server's texts; the server goes on.
pub(crate) fn handler_failures(client: &mut Client) {
    assert_eq!(server_error(client.request("fail", b"no such file")), "no such file");
    assert_eq!(server_error(client.request("panic", b"")), "handler `panic` panicked: the fixture was asked to panic");
    assert_eq!(server_error(client.request("nope", b"")), "unknown method `nope`");
    assert_eq!(server_error(client.request("repeat", b"many")), "expected a decimal count");
    assert_eq!(client.request("echo", b"still serving").unwrap(), b"still serving");
}

/// `exit` makes the server exit with status 3 mid-request.
pub(crate) fn exit_mid_request(client: &mut Client) {
    let pid = client.id();
    let outcome = client.request("exit", b"");
    assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.code() == Some(3)), "{outcome:?}");
    assert!(!agentproto_process::running(pid));
}

/// A server killed between requests: the next request is a clean `ChildExited`.
pub(crate) fn killed_between_requests(client: &mut Client) {
    assert_eq!(client.request("echo", b"x").unwrap(), b"x");
    client.killer().kill();
    let outcome = client.request("echo", b"x");
    assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.signal() == Some(9)), "{outcome:?}");
}
