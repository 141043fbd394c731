//! ACP over the network with real processes on 127.0.0.1.
//!
//! - `agentproto bridge` in front of our Rust and Python stdio echo agents, reached by
//!   the Rust `run-prompt` example over Streamable HTTP and WebSocket (one agent process
//!   per connection, ended with it; the traces replay). Prompts that mention "tool" make
//!   the echo agents ask permission first: a request of the agent answered over the wire.
//! - Ours across languages: the Python client against the Rust `echo-agent --listen`,
//!   the Rust client against the Python one.
//! - The official SDKs: the Python SDK's clients (`official_remote_client.py`) and the
//!   TypeScript SDK's (`interop/official/acp-ts/remote.mjs`) against the Rust agent; the
//!   Rust client against the Python SDK's `AcpServer` (`official_remote_agent.py`) and the
//!   TypeScript SDK's.
//!
//! Needs `python3` with msgspec, uvicorn and `agent-client-protocol[http]`, and the
//! TypeScript SDK in `interop/official/acp-ts` (`.ci/run` installs both); our Python SDK
//! runs from its sources (`PYTHONPATH=python/src`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(30);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The `echo-agent` and `run-prompt` examples, built (or found up to date) next to our binary.
fn example(name: &str) -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    BUILT.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .args(["build", "-p", "agentproto-acp", "--example", "echo-agent", "--example", "run-prompt"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the examples failed");
    });
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_agentproto"));
    ours.parent().unwrap().join("examples").join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

fn python(module: &str) -> Command {
    let mut command = Command::new("python3");
    command.env("PYTHONPATH", repo().join("python/src")).args(["-m", module]);
    command
}

/// A server process, stopped (SIGTERM, then SIGKILL) when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    /// Starts `command`, which prints its `http://…/acp` URL on stderr.
    fn start(mut command: Command) -> Server {
        let mut child = command.stdin(Stdio::null()).stderr(Stdio::piped()).spawn().expect("the server starts");
        let stderr = child.stderr.take().unwrap();
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("http://") {
                    let url = line[at..].split_whitespace().next().unwrap_or_default().to_owned();
                    let _ = send.send(url);
                }
                eprintln!("[server] {line}");
            }
        });
        let url = receive.recv_timeout(WAIT).expect("the server printed its URL");
        Server { child, url }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a client to completion (bounded): its stdout.
fn run_client(mut command: Command) -> String {
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let output = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            assert!(status.success(), "the client failed: {status}\nstdout: {stdout}\nstderr: {stderr}");
            return stdout;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the client did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn rust_client(url: &str, websocket: bool, prompt: &str) -> String {
    let mut command = Command::new(example("run-prompt"));
    command.args(["--url", url, "--prompt", prompt]);
    if websocket {
        command.arg("--ws");
    }
    run_client(command)
}

fn python_client(url: &str, websocket: bool, prompt: &str) -> String {
    let mut command = python("agentproto.examples.run_prompt");
    command.args(["--url", url, "--prompt", prompt]);
    if websocket {
        command.arg("--ws");
    }
    run_client(command)
}

/// The children of `pid` (Linux: `/proc`).
fn children(pid: u32) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            found.extend(listed.split_whitespace().map(str::to_owned));
        }
    }
    found
}

fn no_children_left(pid: u32) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let deadline = Instant::now() + WAIT;
    while !children(pid).is_empty() {
        assert!(Instant::now() < deadline, "agent processes outlived their connections: {:?}", children(pid));
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn bridge(agent: Command, trace: Option<&Path>) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentproto"));
    command.args(["bridge", "--listen", "127.0.0.1:0"]);
    if let Some(trace) = trace {
        command.arg("--trace").arg(trace);
    }
    command.arg("--").arg(agent.get_program()).args(agent.get_args());
    for (key, value) in agent.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    Server::start(command)
}

#[test]
fn bridge_serves_our_stdio_echo_agent_over_both_transports() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let server = bridge(Command::new(example("echo-agent")), Some(&trace));
    assert!(rust_client(&server.url, false, "a tool over streamable http").contains("a tool over streamable http"));
    assert!(rust_client(&server.url, true, "over a websocket").contains("over a websocket"));
    // Each connection had its own agent, ended with it.
    no_children_left(server.pid());
    for n in 1..=2 {
        let path = dir.path().join(format!("trace.{n}"));
        let output = Command::new(env!("CARGO_BIN_EXE_agentproto")).arg("replay").arg(&path).output().unwrap();
        let report = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{report}");
        assert!(report.contains("0 errors"), "{report}");
    }
}

#[test]
fn bridge_serves_the_python_echo_agent() {
    let server = bridge(python("agentproto.examples.echo_agent"), None);
    assert!(rust_client(&server.url, false, "python behind a bridge").contains("python behind a bridge"));
    assert!(rust_client(&server.url, true, "and over a websocket").contains("and over a websocket"));
    no_children_left(server.pid());
}

#[test]
fn the_python_client_reaches_our_rust_agent() {
    let mut command = Command::new(example("echo-agent"));
    command.args(["--listen", "127.0.0.1:0"]);
    let server = Server::start(command);
    assert!(python_client(&server.url, false, "python to rust").contains("python to rust"));
    assert!(python_client(&server.url, true, "python to rust tool over ws").contains("python to rust tool over ws"));
}

#[test]
fn our_rust_client_reaches_the_python_agent() {
    let mut command = python("agentproto.examples.echo_agent");
    command.args(["--listen", "127.0.0.1:0"]);
    let server = Server::start(command);
    assert!(rust_client(&server.url, false, "rust to python").contains("rust to python"));
    assert!(rust_client(&server.url, true, "rust to python tool over ws").contains("rust to python tool over ws"));
}

#[test]
fn the_official_python_clients_reach_our_rust_agent() {
    let mut command = Command::new(example("echo-agent"));
    command.args(["--listen", "127.0.0.1:0"]);
    let server = Server::start(command);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/official_remote_client.py");
    for websocket in [false, true] {
        let mut client = Command::new("python3");
        client.arg(&script).arg(&server.url);
        if websocket {
            client.arg("--ws");
        }
        let turns = run_client(client);
        // Every update of a turn was handled before its prompt call returned.
        assert_eq!(
            turns, "[\"end_turn\", \"alpha beta gamma delta\"]\n[\"end_turn\", \"epsilon zeta\"]\n",
            "websocket: {websocket}"
        );
    }
}

#[test]
fn our_rust_client_reaches_the_official_python_server() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/official_remote_agent.py");
    let mut command = Command::new("python3");
    command.arg(script);
    let server = Server::start(command);
    assert!(rust_client(&server.url, false, "to the official python").contains("to the official python"));
    assert!(rust_client(&server.url, true, "and over its websocket").contains("and over its websocket"));
}

/// The official TypeScript SDK's remote peers (`interop/official/acp-ts/remote.mjs`).
fn official_ts(script: &str) -> Command {
    let sdk = repo().join("interop/official/acp-ts/node_modules/@agentclientprotocol/sdk/package.json");
    assert!(
        sdk.exists(),
        "the TypeScript SDK is not installed: run `npm ci --prefix interop/official/acp-ts` (as .ci/run does)"
    );
    let module = repo().join("interop/official/acp-ts/remote.mjs");
    let script = script.replace("REMOTE", &module.display().to_string());
    let mut command = Command::new("node");
    command.args(["--input-type=module", "-e", &script]);
    command
}

#[test]
fn our_rust_client_reaches_the_official_typescript_server() {
    let server = Server::start(official_ts(
        "import { serveOfficial } from 'REMOTE'; const s = await serveOfficial(); \
         console.error('official ts agent: listening on ' + s.url); \
         process.on('SIGTERM', async () => { await s.close(); process.exit(0); });",
    ));
    assert!(rust_client(&server.url, false, "to the official ts").contains("to the official ts"));
    assert!(rust_client(&server.url, true, "and its websocket").contains("and its websocket"));
}

#[test]
fn the_official_typescript_clients_reach_our_rust_agent() {
    let mut command = Command::new(example("echo-agent"));
    command.args(["--listen", "127.0.0.1:0"]);
    let server = Server::start(command);
    for websocket in [false, true] {
        let turns = run_client(official_ts(&format!(
            "import {{ officialTurns }} from 'REMOTE'; \
             const r = await officialTurns('{}', {{ websocket: {websocket}, prompts: ['alpha beta gamma delta', 'epsilon zeta'] }}); \
             console.log(JSON.stringify(r.turns)); process.exit(0);",
            server.url
        )));
        // Every update of a turn was handled before its prompt call returned.
        assert_eq!(
            turns.trim(),
            r#"[["end_turn",["alpha ","beta ","gamma ","delta"]],["end_turn",["epsilon ","zeta"]]]"#,
            "websocket: {websocket}"
        );
    }
}
