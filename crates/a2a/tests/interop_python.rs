//! The official Python SDK's client (a2a-sdk 1.3.0, `interop/official/a2a-python/client.py`)
//! against our server, on every binding, over real loopback HTTP (and HTTP/2 for gRPC,
//! with the `grpc` feature). The scenario runs
//! ten steps (send, direct message, get, list, stream, cancel, cancel of a finished
//! task, unknown task, push-config CRUD, subscribe then cancel) and prints one JSON
//! line per step. `AGENTPROTO_A2A_PYTHON=0` skips it on machines without the SDK.
#![cfg(all(feature = "server", feature = "sqlite"))]

use std::path::PathBuf;
use std::time::Duration;

use agentproto_a2a::demo::{card_with_bindings, DemoAgent};
use agentproto_a2a::push::PushOptions;
use agentproto_a2a::server::A2aServer;
use agentproto_a2a::store::sqlite::SqliteStore;
use serde_json::Value;

fn python() -> Option<String> {
    match std::env::var("AGENTPROTO_A2A_PYTHON").ok().as_deref() {
        Some("0") => None,
        None | Some("" | "1") => Some("python3".to_owned()),
        Some(path) => Some(path.to_owned()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_passes_its_scenario_against_our_server() {
    let Some(python) = python() else {
        eprintln!("skipped: AGENTPROTO_A2A_PYTHON=0");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let store = std::sync::Arc::new(SqliteStore::open(dir.path().join("a.db")).unwrap());
    // The scenario registers push configs on loopback: let them through the SSRF guard,
    // which refuses them when they are set otherwise.
    let push = PushOptions { allow_loopback: true, ..PushOptions::default() };
    #[cfg(feature = "grpc")]
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    #[cfg(feature = "grpc")]
    let grpc_at = Some(grpc.local_addr().unwrap().to_string());
    #[cfg(not(feature = "grpc"))]
    let grpc_at: Option<String> = None;
    let card = card_with_bindings(&base, "/a2a/rest", grpc_at.as_deref());
    let server = A2aServer::builder(DemoAgent::default(), card).store(store).push(push).build();
    #[cfg(feature = "grpc")]
    let server = server.grpc(grpc);
    let shutdown = server.shutdown_token();
    let serving = tokio::spawn(server.serve(listener));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/official/a2a-python/client.py");
    let bindings: &[&str] =
        if cfg!(feature = "grpc") { &["JSONRPC", "HTTP+JSON", "GRPC"] } else { &["JSONRPC", "HTTP+JSON"] };
    for &binding in bindings {
        let out = tokio::time::timeout(
            Duration::from_secs(60),
            tokio::process::Command::new(&python)
                .arg(&script)
                .args(["--card-url", &base, "--binding", binding, "--timeout", "10"])
                .kill_on_drop(true)
                .output(),
        )
        .await
        .expect("the scenario finishes within 60 s")
        .expect("python3 runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let steps: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let failed: Vec<&Value> = steps.iter().filter(|s| s["ok"] != Value::Bool(true)).collect();
        assert!(
            steps.len() >= 11,
            "{binding}: too few steps\nstdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            failed.is_empty() && out.status.success(),
            "{binding}: failed steps {failed:#?}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), serving).await.expect("graceful shutdown").unwrap().unwrap();
}
