//! Our Rust client against our Python server: `python3 -m agentproto.sync.fixture`
//! (`python/src/agentproto/sync/fixture.py`), the same methods as
//! `agentproto-sync-fixture` with the same answers and texts. The Python sources
//! of this tree are put first on `PYTHONPATH`; `msgspec` must be installed
//! (`python3 -m pip install ./python`, as `.ci/run` does).

mod support;

use std::process::Command;

use agentproto_sync::{Client, ClientOptions};
use support::{fixture_cases, repo_root, Watchdog, DEADLINE};

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

#[test]
fn echo_and_large_results_round_trip_every_bin_size_class() {
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::echo_and_large_results(&mut client);
    watchdog.finish();
    client.close().unwrap();
}

#[test]
fn callbacks_and_their_failures_reach_the_python_server() {
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::callbacks_and_their_failures(&mut client);
    watchdog.finish();
}

#[test]
fn handler_failures_become_error_tuples_with_the_rust_servers_texts() {
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::handler_failures(&mut client);
    watchdog.finish();
}

#[test]
fn python_server_exiting_or_killed_is_child_exited() {
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::exit_mid_request(&mut client);
    watchdog.finish();
    let (mut client, watchdog) = spawn_fixture();
    fixture_cases::killed_between_requests(&mut client);
    watchdog.finish();
}
