//! `agentproto inspect` when it ends: the trace holds every message that passed
//! even if the proxy is killed, `replay` reads a trace whose last line was cut
//! short, and the agent's whole process group goes with the proxy (on SIGTERM,
//! on SIGKILL, and when the agent exits but leaves a child behind).
//!
//! The agent is `stubborn_agent.py`. Every wait is bounded; every process a
//! test starts is ended on every way out ([`Cleanup`]).
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agentproto_process::{running, Group, Signal};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(30);
const AGENTPROTO: &str = env!("CARGO_BIN_EXE_agentproto");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentproto-lifecycle-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn agent_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stubborn_agent.py")
}

/// Polls `check` until it holds or `limit` passes.
fn within(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The pid the agent recorded as `name`, waiting for it for a bounded time.
fn recorded(dir: &Path, name: &str) -> u32 {
    let mut pid = None;
    let found = within(WAIT, || {
        pid = std::fs::read_to_string(dir.join(name)).ok().and_then(|text| text.trim().parse().ok());
        pid.is_some()
    });
    assert!(found, "no pid in {}", dir.join(name).display());
    pid.unwrap()
}

/// Ends whatever a test started, however it ends.
struct Cleanup {
    inspect: Option<(Child, Group)>,
    pids: Vec<u32>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some((mut child, mut group)) = self.inspect.take() {
            group.end();
            let _ = child.wait();
        }
        for pid in self.pids.iter().filter(|pid| running(**pid)) {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

/// `agentproto inspect` between this test (the client) and an agent.
struct Session {
    cleanup: Cleanup,
    input: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    pid: u32,
}

impl Session {
    fn start(flags: &[&str], agent: &[&str]) -> Session {
        let mut command = Command::new(AGENTPROTO);
        command.arg("inspect").args(flags).arg("--").args(agent);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        // Its own group, so that the test signals the proxy alone.
        let mut child = agentproto_process::isolate(&mut command).spawn().unwrap();
        let pid = child.id();
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in output.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Session { cleanup: Cleanup { inspect: Some((child, Group::new(pid))), pids: Vec::new() }, input, lines, pid }
    }

    /// Sends a request and waits for its answer, which proves it passed.
    fn call(&mut self, id: u64, method: &str) {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{{\"protocolVersion\":1}}}}\n"
        );
        let input = self.input.as_mut().unwrap();
        input.write_all(line.as_bytes()).unwrap();
        input.flush().unwrap();
        let answer = self.lines.recv_timeout(WAIT).expect("an answer through the proxy");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
    }

    fn watch(&mut self, pid: u32) {
        self.cleanup.pids.push(pid);
    }

    /// Waits for the proxy to exit.
    fn exit_status(&mut self) -> ExitStatus {
        let (child, _) = self.cleanup.inspect.as_mut().unwrap();
        let mut status = None;
        let exited = within(WAIT, || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        assert!(exited, "inspect did not exit within {WAIT:?}");
        status.unwrap()
    }
}

fn trace_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "a record was cut: {text:?}");
    text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn replay(trace: &Path) -> std::process::Output {
    Command::new(AGENTPROTO).arg("replay").arg(trace).output().unwrap()
}

#[test]
fn sigkill_leaves_every_passed_message_in_the_trace_and_the_kernel_ends_the_agent() {
    let dir = scratch("sigkill");
    let trace = dir.join("trace.jsonl");
    let script = agent_script();
    let mut session = Session::start(
        &["--trace", trace.to_str().unwrap()],
        &["python3", script.to_str().unwrap(), dir.to_str().unwrap(), "stay"],
    );
    let agent = recorded(&dir, "agent");
    session.watch(agent);
    session.call(0, "initialize");
    session.call(1, "_ping");
    session.call(2, "_ping");
    // SIGKILL: the proxy runs no code at all.
    let (child, _) = session.cleanup.inspect.as_mut().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    let records = trace_lines(&trace);
    assert_eq!(records.len(), 6, "every message that passed is on disk: {records:?}");
    let replayed = replay(&trace);
    assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stdout));
    // The agent ignores the end of its input; the kernel's death signal ends it.
    assert!(within(WAIT, || !running(agent)), "the agent {agent} outlived the killed proxy");
}

#[test]
fn sigterm_ends_the_agents_group_and_the_session_as_usual() {
    let dir = scratch("sigterm");
    let trace = dir.join("trace.jsonl");
    let script = agent_script();
    let mut session = Session::start(
        &["--trace", trace.to_str().unwrap()],
        &["python3", script.to_str().unwrap(), dir.to_str().unwrap(), "child"],
    );
    let agent = recorded(&dir, "agent");
    session.watch(agent);
    let grandchild = recorded(&dir, "child");
    session.watch(grandchild);
    session.call(0, "initialize");
    session.call(1, "_ping");
    agentproto_process::signal_group(session.pid, Signal::Terminate).unwrap();
    let status = session.exit_status();
    assert_eq!(status.code(), Some(143), "128 + SIGTERM");
    assert!(within(WAIT, || !running(agent)), "the agent {agent} outlived the proxy");
    assert!(within(WAIT, || !running(grandchild)), "the agent's child {grandchild} outlived the proxy");
    assert_eq!(trace_lines(&trace).len(), 4, "every message that passed is on disk");
}

#[test]
fn a_child_left_behind_by_an_exiting_agent_is_ended_and_the_proxy_exits() {
    // The agent exits at the end of its input; its child keeps the agent's
    // stdout open and would keep the proxy waiting for the end of that output.
    let dir = scratch("leftover");
    let script = agent_script();
    let launcher = format!(
        "sleep 600 </dev/null & echo $! > '{}/child'; exec python3 '{}' '{}' exit",
        dir.display(),
        script.display(),
        dir.display()
    );
    let mut session = Session::start(&[], &["sh", "-c", &launcher]);
    let agent = recorded(&dir, "agent");
    session.watch(agent);
    let grandchild = recorded(&dir, "child");
    session.watch(grandchild);
    session.call(0, "initialize");
    session.input.take();
    let status = session.exit_status();
    assert!(status.success(), "the agent's exit status: {status}");
    assert!(within(WAIT, || !running(grandchild)), "the agent's child {grandchild} outlived the session");
}

#[test]
fn replay_reads_a_trace_whose_last_line_was_cut_short() {
    let dir = scratch("torn");
    let trace = dir.join("trace.jsonl");
    let whole = concat!(
        r#"{"t":1,"dir":"c2a","raw":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}"}"#,
        "\n",
        r#"{"t":2,"dir":"a2c","raw":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1}}"}"#,
        "\n",
    );
    std::fs::write(
        &trace,
        format!("{whole}{{\"t\":3,\"dir\":\"c2a\",\"raw\":\"{{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,"),
    )
    .unwrap();
    let replayed = replay(&trace);
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert_eq!(replayed.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("2 messages, 0 errors"), "{stdout}");
    assert!(stderr.contains("note") && stderr.contains("line 3 is cut short"), "{stderr}");
}
