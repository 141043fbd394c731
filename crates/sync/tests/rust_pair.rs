//! Our client against our server: `agentproto-sync-fixture` (src/bin), a
//! `Server` on stdin/stdout with echo, callback and failure methods.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;

use agentproto_sync::frame::{encode, FrameReader, Limits, MessageType};
use agentproto_sync::{Client, ClientError, ClientOptions};
use support::{fixture_cases, Watchdog, DEADLINE};

const FIXTURE: &str = env!("CARGO_BIN_EXE_agentproto-sync-fixture");

fn spawn_fixture() -> (Client, Watchdog) {
    let client = Client::spawn(Command::new(FIXTURE), ClientOptions::default()).expect("spawn the fixture");
    let watchdog = Watchdog::new(client.killer(), DEADLINE);
    (client, watchdog)
}

#[test]
fn echo_round_trips_every_bin_size_class() {
    let (mut client, watchdog) = spawn_fixture();
    for length in [0usize, 1, 255, 256, 65_535, 65_536, 1 << 20] {
        let payload: Vec<u8> = (0..length).map(|index| (index % 253) as u8).collect();
        assert_eq!(client.request("echo", &payload).unwrap(), payload.as_slice(), "length {length}");
    }
    watchdog.finish();
    assert!(client.close().is_ok());
}

#[test]
fn large_results_arrive_whole() {
    let (mut client, watchdog) = spawn_fixture();
    let result = client.request("repeat", b"3000000").unwrap();
    assert_eq!(result.len(), 3_000_000);
    assert!(result.iter().enumerate().all(|(index, &byte)| byte == (index % 251) as u8));
    watchdog.finish();
}

#[test]
fn callbacks_are_answered_mid_request_in_order() {
    let (mut client, watchdog) = spawn_fixture();
    let mut calls = 0;
    client.register_callback("upper", move |payload, answer| {
        calls += 1;
        answer.extend(payload.iter().map(u8::to_ascii_uppercase));
        answer.extend_from_slice(format!("#{calls}").as_bytes());
        Ok(())
    });
    client.register_callback("length", |payload, answer| {
        answer.extend_from_slice(payload.len().to_string().as_bytes());
        Ok(())
    });
    let result = client.request("callback", b"upper\0abc\0length\0hello\0upper\0x").unwrap();
    assert_eq!(result, b"ABC#1\x005\0X#2");
    // The registry outlives the request.
    assert_eq!(client.request("callback", b"upper\0again").unwrap(), b"AGAIN#3");
    watchdog.finish();
}

#[test]
fn callback_failures_reach_the_server_as_call_errors() {
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::callbacks_and_their_failures(&mut client);
    watchdog.finish();
}

#[test]
fn handler_errors_panics_and_unknown_methods_become_error_tuples() {
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::handler_failures(&mut client);
    watchdog.finish();
}

#[test]
fn server_exiting_mid_request_is_child_exited_with_its_status() {
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::exit_mid_request(&mut client);
    watchdog.finish();
}

#[test]
fn killed_server_is_a_clean_error() {
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::killed_between_requests(&mut client);
    watchdog.finish();
}

#[test]
fn server_started_to_die_with_its_parent_serves_like_any_other() {
    // The option only adds a kernel death signal (Linux); the channel is the same.
    let options = ClientOptions::default().die_with_parent(true);
    let mut client = Client::spawn(Command::new(FIXTURE), options).unwrap();
    let watchdog = Watchdog::new(client.killer(), DEADLINE);
    assert_eq!(client.request("echo", b"alive").unwrap(), b"alive");
    watchdog.finish();
    client.close().unwrap();
}

#[test]
fn response_larger_than_the_client_limit_is_a_protocol_error() {
    let options = ClientOptions::default().limits(Limits { max_name: 64, max_payload: 1000 });
    let client = Client::spawn(Command::new(FIXTURE), options).unwrap();
    let watchdog = Watchdog::new(client.killer(), DEADLINE);
    let mut client = client;
    assert_eq!(client.request("repeat", b"1000").unwrap().len(), 1000);
    let outcome = client.request("repeat", b"1001");
    assert!(matches!(outcome, Err(ClientError::Protocol(_))), "{outcome:?}");
    // The stream cannot be trusted after that: the channel is closed.
    assert!(matches!(client.request("echo", b""), Err(ClientError::ChildExited(_))));
    watchdog.finish();
}

#[test]
fn server_exits_cleanly_at_end_of_input() {
    // Raw pipes rather than `Client`, to close stdin and watch the server go.
    let mut command = Command::new(FIXTURE);
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    agentproto_process::isolate(&mut command);
    let mut child = command.spawn().unwrap();
    let mut group = agentproto_process::Group::new(child.id());
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut request = Vec::new();
    encode(&mut request, MessageType::Request, b"echo", b"bye").unwrap();
    stdin.write_all(&request).unwrap();
    drop(stdin);
    let (done, finished) = mpsc::channel();
    let reader = thread::spawn(move || {
        let mut frames = FrameReader::new(stdout, Limits::default());
        let answer =
            frames.read().map(|frame| frame.map(|frame| (frame.kind, frame.name.to_vec(), frame.payload.to_vec())));
        // End of stream right after the answer: the server closed stdout.
        let tail = frames.read().map(|frame| frame.is_none());
        let _ = done.send(());
        (answer, tail)
    });
    let in_time = finished.recv_timeout(DEADLINE).is_ok();
    if !in_time {
        group.end();
    }
    let (answer, tail) = reader.join().unwrap();
    let status = child.wait().unwrap();
    group.end();
    assert!(in_time, "the fixture did not close its stdout after its stdin closed");
    assert_eq!(answer.unwrap(), Some((MessageType::Response, b"echo".to_vec(), b"bye".to_vec())));
    assert!(tail.unwrap(), "nothing after the answer");
    assert!(status.success(), "{status}");
}
