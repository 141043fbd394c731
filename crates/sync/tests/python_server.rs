//! Our Rust client against our Python server: `python3 -m agentproto.sync.fixture`
//! (`python/src/agentproto/sync/fixture.py`), the same methods as
//! `agentproto-sync-fixture` with the same answers and texts. The Python sources
//! of this tree are put first on `PYTHONPATH`; `msgspec` must be installed
//! (`python3 -m pip install ./python`, as `.ci/run` does).

mod support;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use agentproto_sync::{Client, ClientError, ClientOptions};
use support::{repo_root, Watchdog, DEADLINE};

fn python_fixture() -> Command {
    let mut command = Command::new("python3");
    command.args(["-m", "agentproto.sync.fixture"]).env("PYTHONPATH", repo_root().join("python/src"));
    command
}

fn spawn_fixture() -> (Client, Watchdog) {
    let importable = Command::new("python3")
        .args(["-c", "import agentproto.sync.fixture"])
        .env("PYTHONPATH", repo_root().join("python/src"))
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        importable,
        "python3 cannot import agentproto.sync.fixture: run `python3 -m pip install ./python` (as .ci/run does)"
    );
    let client = Client::spawn(python_fixture(), ClientOptions::default()).expect("spawn the Python fixture");
    let watchdog = Watchdog::new(client.killer(), DEADLINE);
    (client, watchdog)
}

fn server_error(outcome: Result<&[u8], ClientError>) -> String {
    match outcome {
        Err(ClientError::Server(text)) => text,
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[test]
fn echo_and_large_results_round_trip_every_bin_size_class() {
    let (mut client, watchdog) = spawn_fixture();
    for length in [0usize, 1, 255, 256, 65_535, 65_536, 1 << 20] {
        let payload: Vec<u8> = (0..length).map(|index| (index % 253) as u8).collect();
        assert_eq!(client.request("echo", &payload).unwrap(), payload.as_slice(), "length {length}");
    }
    let result = client.request("repeat", b"3000000").unwrap();
    assert_eq!(result.len(), 3_000_000);
    assert!(result.iter().enumerate().all(|(index, &byte)| byte == (index % 251) as u8));
    watchdog.finish();
    client.close().unwrap();
}

#[test]
fn callbacks_and_their_failures_reach_the_python_server() {
    let (mut client, watchdog) = spawn_fixture();
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
    assert_eq!(client.request("echo", b"fine").unwrap(), b"fine");
    watchdog.finish();
}

#[test]
fn handler_failures_become_error_tuples_with_the_rust_servers_texts() {
    let (mut client, watchdog) = spawn_fixture();
    assert_eq!(server_error(client.request("fail", b"no such file")), "no such file");
    let text = server_error(client.request("panic", b""));
    assert_eq!(text, "handler `panic` panicked: the fixture was asked to panic");
    assert_eq!(server_error(client.request("nope", b"")), "unknown method `nope`");
    assert_eq!(client.request("echo", b"still serving").unwrap(), b"still serving");
    watchdog.finish();
}

#[test]
fn python_server_exiting_or_killed_is_child_exited() {
    let (mut client, watchdog) = spawn_fixture();
    let outcome = client.request("exit", b"");
    assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.code() == Some(3)), "{outcome:?}");
    watchdog.finish();
    let (mut client, watchdog) = spawn_fixture();
    client.killer().kill();
    let outcome = client.request("echo", b"x");
    assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.signal() == Some(9)), "{outcome:?}");
    watchdog.finish();
}
