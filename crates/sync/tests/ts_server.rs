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
use support::{fixture_cases, repo_root, run_bounded, Watchdog, DEADLINE};

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

#[test]
fn echo_round_trips_every_bin_size_class() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
    fixture_cases::echo_and_large_results(&mut client);
    watchdog.finish();
    client.close().unwrap();
}

#[test]
fn callbacks_are_answered_mid_request_and_failures_come_back() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
    fixture_cases::callbacks_and_their_failures(&mut client);
    watchdog.finish();
}

#[test]
fn handler_errors_exceptions_and_unknown_methods_become_error_tuples() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
    fixture_cases::handler_failures(&mut client);
    watchdog.finish();
}

#[test]
fn server_exiting_mid_request_is_child_exited_with_its_status() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
    fixture_cases::exit_mid_request(&mut client);
    watchdog.finish();
}

#[test]
fn killed_server_is_a_clean_error() {
    let (mut client, watchdog) = spawn_fixture(ClientOptions::default());
    fixture_cases::killed_between_requests(&mut client);
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
