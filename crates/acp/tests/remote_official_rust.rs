//! ACP over the network against the official Rust transport crate,
//! `agent-client-protocol-http` 5.0.0 (with the official SDK 5.2.0), over real sockets on
//! 127.0.0.1: our Rust client against its server (`remote-agent`) and its client
//! (`remote-client`) against our Rust server, over Streamable HTTP and WebSocket, two
//! prompt turns each with every streamed update handled before its turn's answer. Both
//! programs live in `interop/official/acp-rust/` (a cargo project of its own, its
//! `remote` feature), built here into `target/interop-official-rust` (the first
//! build compiles the crate's HTTP stack: minutes on a busy two-core machine). The
//! Python and TypeScript suites run the same programs against their own client and agent.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agentproto_acp::remote::{connect, RemoteOptions, RemoteServer, ServerLimits};
use agentproto_acp::v1::*;
use tokio_util::sync::CancellationToken;

mod remote_peers;
use remote_peers::{within, Collect, Words, WAIT};

const PROMPTS: [&str; 2] = ["alpha beta gamma delta", "epsilon zeta"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `remote-agent` or `remote-client` of `interop/official/acp-rust`, built (or found up to
/// date) from the project's own lockfile, bounded.
fn official(name: &str) -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let target = repo().join("target/interop-official-rust");
    BUILT.call_once(|| {
        let manifest = repo().join("interop/official/acp-rust/Cargo.toml");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut build = Command::new(cargo)
            .args(["build", "--locked", "--quiet", "--features", "remote", "--bin", "remote-agent"])
            .args(["--bin", "remote-client", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &target)
            .stdin(Stdio::null())
            .spawn()
            .expect("cargo runs");
        let deadline = Instant::now() + Duration::from_secs(1500);
        let status = loop {
            if let Some(status) = build.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = build.kill();
                let _ = build.wait();
                panic!("building {} did not finish in time", manifest.display());
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(status.success(), "building the official Rust remote peers failed ({})", manifest.display());
    });
    target.join("debug").join(name)
}

/// The official server, killed when dropped.
struct OfficialServer {
    child: Child,
    url: String,
}

impl OfficialServer {
    fn start() -> OfficialServer {
        let mut child = Command::new(official("remote-agent"))
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the official server starts");
        let stderr = child.stderr.take().unwrap();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("http://") {
                    let _ = send.send(line[at..].trim().to_owned());
                }
                eprintln!("[official server] {line}");
            }
        });
        let url = receive.recv_timeout(WAIT).expect("the official server printed its URL");
        OfficialServer { child, url }
    }
}

impl Drop for OfficialServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn our_client_against_the_official_server(websocket: bool) {
    let server = tokio::task::spawn_blocking(OfficialServer::start).await.unwrap();
    let collect = Collect::default();
    let remote = RemoteOptions::new().websocket(websocket);
    let (agent, transport) =
        within(connect::<V1, _>(&server.url, collect.clone(), AcpOptions::default(), remote)).await.unwrap();
    within(agent.initialize(InitializeRequest::new(PROTOCOL_VERSION))).await.unwrap();
    let session = within(agent.open_session("/")).await.unwrap();
    for turn in PROMPTS {
        collect.text.lock().unwrap().clear();
        *collect.chunks.lock().unwrap() = 0;
        let answer = within(session.prompt(turn)).await.unwrap();
        assert_eq!(answer.stop_reason, StopReason::EndTurn);
        // Every update of the turn, one per word, arrived before its answer.
        assert_eq!(collect.text.lock().unwrap().as_str(), turn, "websocket: {websocket}");
        assert_eq!(*collect.chunks.lock().unwrap(), turn.split(' ').count());
    }
    within(transport.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_against_the_official_rust_server_over_streamable_http() {
    our_client_against_the_official_server(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_against_the_official_rust_server_over_websocket() {
    our_client_against_the_official_server(true).await;
}

/// Runs the official client against `url` to completion, bounded: its stdout.
fn official_client(url: &str, websocket: bool) -> String {
    let mut command = Command::new(official("remote-client"));
    command.arg(url);
    if websocket {
        command.arg("--ws");
    }
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let output = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(status.success(), "the official client failed: {status}\nstdout: {stdout}\nstderr: {stderr}");
            return stdout;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the official client did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_rust_client_against_our_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/acp", listener.local_addr().unwrap());
    let server = RemoteServer::agent::<V1, _, _>(Words::default, AcpOptions::default(), ServerLimits::default());
    let stop = CancellationToken::new();
    let until = stop.clone();
    tokio::spawn(async move { server.serve(listener, until).await });
    for websocket in [false, true] {
        let url = url.clone();
        let turns = tokio::task::spawn_blocking(move || official_client(&url, websocket)).await.unwrap();
        // Every update of a turn was handled before its prompt call returned.
        assert_eq!(
            turns, "[\"end_turn\",\"alpha beta gamma delta\"]\n[\"end_turn\",\"epsilon zeta\"]\n",
            "websocket: {websocket}"
        );
    }
    stop.cancel();
}
