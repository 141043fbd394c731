//! Our Rust client against our TypeScript server: `ts/src/sync/fixture.ts`, the
//! same methods as `agentproto-sync-fixture`, compiled here from its sources
//! with the TypeScript package's pinned compiler (needs `npm ci --prefix ts`)
//! and run with `node`.

mod support;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use agentproto_sync::frame::Limits;
use agentproto_sync::{Client, ClientError, ClientOptions};
use support::{repo_root, run_bounded, Watchdog, DEADLINE};

/// The compiled fixture, built once per test run into cargo's temporary
/// directory for integration tests (`target/tmp`), replacing the last build.
fn ts_fixture() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let ts = repo_root().join("ts");
        let compiler = ts.join("node_modules/.bin/tsc");
        assert!(
            compiler.is_file(),
            "the TypeScript package's compiler is missing at {}: run `npm ci --prefix ts`",
            compiler.display()
        );
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agentproto-sync-ts-fixture");
        if out.exists() {
            std::fs::remove_dir_all(&out).expect("remove the previous build");
        }
        std::fs::create_dir_all(&out).expect("create the build directory");
        let mut command = Command::new(&compiler);
        // Run outside `ts/` so that its tsconfig.json is not in the way of
        // compiling one entry point (and what it imports) on its own.
        command.current_dir(&out).args(["--module", "nodenext", "--target", "es2022", "--strict", "--types", "node"]);
        command.arg("--typeRoots").arg(ts.join("node_modules/@types"));
        command.arg("--rootDir").arg(ts.join("src/sync")).arg("--outDir").arg(&out);
        command.arg(ts.join("src/sync/fixture.ts"));
        run_bounded(command, Duration::from_secs(120));
        std::fs::write(out.join("package.json"), r#"{"type":"module"}"#).unwrap();
        let fixture = out.join("fixture.js");
        assert!(fixture.is_file(), "tsc did not write {}", fixture.display());
        fixture
    })
}

fn spawn_fixture(options: ClientOptions) -> (Client, Watchdog) {
    let mut command = Command::new("node");
    command.arg(ts_fixture());
    let client = Client::spawn(command, options).expect("spawn node with the TypeScript fixture");
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
fn echo_round_trips_every_bin_size_class() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
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
fn callbacks_are_answered_mid_request_and_failures_come_back() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
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
    watchdog.finish();
}

#[test]
fn handler_errors_exceptions_and_unknown_methods_become_error_tuples() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
    assert_eq!(server_error(client.request("fail", b"no such file")), "no such file");
    assert_eq!(server_error(client.request("panic", b"")), "handler `panic` panicked: the fixture was asked to panic");
    assert_eq!(server_error(client.request("nope", b"")), "unknown method `nope`");
    assert_eq!(server_error(client.request("repeat", b"many")), "expected a decimal count");
    assert_eq!(client.request("echo", b"still serving").unwrap(), b"still serving");
    watchdog.finish();
}

#[test]
fn server_exiting_mid_request_is_child_exited_with_its_status() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
    let pid = client.id();
    let outcome = client.request("exit", b"");
    assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.code() == Some(3)), "{outcome:?}");
    assert!(!agentproto_process::running(pid));
    watchdog.finish();
}

#[test]
fn killed_server_is_a_clean_error() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
    assert_eq!(client.request("echo", b"x").unwrap(), b"x");
    client.killer().kill();
    let outcome = client.request("echo", b"x");
    assert!(matches!(outcome, Err(ClientError::ChildExited(status)) if status.signal() == Some(9)), "{outcome:?}");
    watchdog.finish();
}

#[test]
fn response_larger_than_the_client_limit_is_a_protocol_error() {
    let (mut client, watchdog) =
        spawn_fixture(ClientOptions::default().limits(Limits { max_name: 64, max_payload: 1000 }));
    assert_eq!(client.request("repeat", b"1000").unwrap().len(), 1000);
    let outcome = client.request("repeat", b"1001");
    assert!(matches!(outcome, Err(ClientError::Protocol(_))), "{outcome:?}");
    assert!(matches!(client.request("echo", b""), Err(ClientError::ChildExited(_))));
    watchdog.finish();
}

#[test]
fn server_exits_cleanly_at_end_of_input() {
    let (client, watchdog) = spawn_fixture(ClientOptions::default());
    // `close` shuts stdin first; a server that exits at the end of its input
    // may beat the SIGKILL that follows, so either ending is accepted here,
    // and the clean one is checked through a request-free run below.
    watchdog.finish();
    let status = client.close().unwrap();
    assert!(status.success() || status.signal() == Some(9), "{status}");
    let mut command = Command::new("node");
    command.arg(ts_fixture());
    // stdin is /dev/null: the end of input at once, and no output.
    assert_eq!(run_bounded(command, DEADLINE), "");
}
