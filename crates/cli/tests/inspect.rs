//! `agentproto inspect` end to end: the binary between a scripted client (this
//! test) and a scripted agent (`scripted_agent.py`), over real pipes.
//!
//! - Transparent: over a long session every byte each side wrote reaches the
//!   other unchanged (CRLF lines, spacing, escapes, non-ASCII, a 1 MB line), no
//!   finding is reported for a valid session, and the trace replays clean.
//! - Strict: an invalid request is answered by the inspector and never reaches
//!   the agent; an invalid result is replaced by an error for the client.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

/// One step of a session, from the client's point of view.
enum Step {
    /// The client writes this; the agent must read exactly this.
    Send(String),
    /// The agent writes this; the client must read exactly this.
    Recv(String),
    /// The client writes this; the inspector must keep it from the agent.
    SendDropped(String),
    /// The agent writes `agent_wrote` (if any); the client reads one line that
    /// must pass `check`.
    RecvChecked { agent_wrote: Option<String>, check: fn(&Value) },
}

fn line(value: Value) -> String {
    format!("{value}\n")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentproto-inspect-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `steps` through `agentproto inspect <flags> -- scripted_agent.py`; returns
/// the inspector's stderr and the bytes the agent received.
fn run(dir: &Path, flags: &[&str], steps: Vec<Step>) -> (String, Vec<u8>) {
    let agent_script: Vec<Value> = steps
        .iter()
        .filter_map(|step| match step {
            Step::Send(raw) => Some(json!({"dir": "c2a", "raw": raw})),
            Step::Recv(raw) => Some(json!({"dir": "a2c", "raw": raw})),
            Step::RecvChecked { agent_wrote: Some(raw), .. } => Some(json!({"dir": "a2c", "raw": raw})),
            _ => None,
        })
        .collect();
    let script = dir.join("script.json");
    std::fs::write(&script, serde_json::to_vec(&agent_script).unwrap()).unwrap();
    let received = dir.join("received");
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripted_agent.py");
    let mut child: Child = Command::new(env!("CARGO_BIN_EXE_agentproto"))
        .arg("inspect")
        .args(flags)
        .arg("--")
        .arg("python3")
        .arg(&agent)
        .arg(&script)
        .arg(&received)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut errors = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = errors.read_to_string(&mut text);
        text
    });
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        for (number, step) in steps.into_iter().enumerate() {
            match step {
                Step::Send(raw) | Step::SendDropped(raw) => {
                    input.write_all(raw.as_bytes()).unwrap();
                    input.flush().unwrap();
                }
                Step::Recv(raw) => {
                    let mut got = vec![0; raw.len()];
                    output.read_exact(&mut got).unwrap();
                    assert!(
                        got == raw.as_bytes(),
                        "step {number}: expected {raw:?}, got {:?}",
                        String::from_utf8_lossy(&got)
                    );
                }
                Step::RecvChecked { check, .. } => {
                    let mut got = String::new();
                    output.read_line(&mut got).unwrap();
                    check(&serde_json::from_str(&got).unwrap_or_else(|e| panic!("step {number}: {e}: {got:?}")));
                }
            }
        }
        drop(input);
        let mut rest = Vec::new();
        output.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "unexpected output after the script: {:?}", String::from_utf8_lossy(&rest));
        let _ = done.send(());
    });
    if finished.recv_timeout(WAIT).is_err() {
        let _ = child.kill();
        panic!("the scripted session did not finish within {WAIT:?}; stderr: {}", stderr.join().unwrap());
    }
    let status = child.wait().unwrap();
    let stderr = stderr.join().unwrap();
    assert!(status.success(), "inspect exited with {status}; stderr:\n{stderr}");
    (stderr, std::fs::read(received).unwrap())
}

fn initialize() -> Vec<Step> {
    vec![
        // CRLF and spacing must survive.
        Step::Send(
            "{ \"jsonrpc\" : \"2.0\", \"id\" : 0, \"method\" : \"initialize\", \"params\" : {\"protocolVersion\":1,\"clientCapabilities\":{\"fs\":{\"readTextFile\":true}}} }\r\n"
                .to_owned(),
        ),
        Step::Recv(line(json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false}}}))),
        Step::Send(line(json!({"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}))),
        Step::Recv(line(json!({"jsonrpc":"2.0","id":"new","result":{"sessionId":"s1"}}))),
    ]
}

fn update(update: Value) -> String {
    line(json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":update}}))
}

#[test]
fn inspect_is_transparent_over_a_long_session() {
    let mut steps = initialize();
    for turn in 0..200u32 {
        steps.push(Step::Send(line(json!({"jsonrpc":"2.0","id":turn + 1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":format!("turn {turn}: héllo ✓ 🦀 \"quoted\" \\ \u{7}")}]}}))));
        for chunk in ["Hello", ", ", "wörld", " \u{2028} ", "\u{1F980}"] {
            steps.push(Step::Recv(update(
                json!({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":chunk}}),
            )));
        }
        if turn % 10 == 0 {
            let tool = format!("t{turn}");
            steps.push(Step::Recv(update(json!({"sessionUpdate":"tool_call","toolCallId":tool,"title":"Edit file","kind":"edit","status":"pending"}))));
            steps.push(Step::Recv(line(json!({"jsonrpc":"2.0","id":turn,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/tmp/a.txt"}}))));
            steps
                .push(Step::Send(line(json!({"jsonrpc":"2.0","id":turn,"result":{"content":"line one\nline two\n"}}))));
            steps.push(Step::Recv(line(json!({"jsonrpc":"2.0","id":format!("perm-{turn}"),"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":tool},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"}]}}))));
            steps.push(Step::Send(line(json!({"jsonrpc":"2.0","id":format!("perm-{turn}"),"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}))));
            steps.push(Step::Recv(update(
                json!({"sessionUpdate":"tool_call_update","toolCallId":tool,"status":"completed"}),
            )));
        }
        if turn == 100 {
            // A 1 MB line, and a blank line, pass through unchanged.
            steps.push(Step::Recv(update(
                json!({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x".repeat(1 << 20)}}),
            )));
            steps.push(Step::Recv("\n".to_owned()));
        }
        steps.push(Step::Recv(line(json!({"jsonrpc":"2.0","id":turn + 1,"result":{"stopReason":"end_turn"}}))));
    }
    let sent: Vec<u8> = steps
        .iter()
        .filter_map(|step| match step {
            Step::Send(raw) => Some(raw.as_bytes()),
            _ => None,
        })
        .flatten()
        .copied()
        .collect();
    let messages = steps.len();
    let dir = scratch("transparent");
    let trace = dir.join("trace.jsonl");
    let (stderr, received) = run(&dir, &["--trace", trace.to_str().unwrap()], steps);
    assert!(received == sent, "the agent did not receive the client's bytes unchanged");
    assert!(stderr.is_empty(), "findings on a valid session:\n{stderr}");

    let trace_text = std::fs::read_to_string(&trace).unwrap();
    assert_eq!(trace_text.lines().count(), messages, "one trace record per message");
    let replay = Command::new(env!("CARGO_BIN_EXE_agentproto"))
        .args(["replay", "--format", "json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(replay.status.success(), "replay: {}", String::from_utf8_lossy(&replay.stdout));
    assert!(replay.stdout.is_empty(), "replay findings: {}", String::from_utf8_lossy(&replay.stdout));
}

#[test]
fn strict_inspect_answers_invalid_messages_itself() {
    let mut steps = initialize();
    steps.push(Step::SendDropped(line(
        json!({"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":42,"mcpServers":[]}}),
    )));
    steps.push(Step::RecvChecked {
        agent_wrote: None,
        check: |reply| {
            assert_eq!(reply["id"], 7, "{reply}");
            assert_eq!(reply["error"]["code"], -32602, "{reply}");
            assert_eq!(reply["error"]["data"]["path"], "$.params.cwd", "{reply}");
        },
    });
    steps.push(Step::Send(line(
        json!({"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}),
    )));
    steps.push(Step::RecvChecked {
        agent_wrote: Some(line(json!({"jsonrpc":"2.0","id":8,"result":{"stopReason":"dunno"}}))),
        check: |reply| {
            assert_eq!(reply["id"], 8, "{reply}");
            assert_eq!(reply["error"]["code"], -32603, "{reply}");
        },
    });
    let dir = scratch("strict");
    let trace = dir.join("trace.jsonl");
    let (stderr, _) = run(&dir, &["--strict", "--json", "--trace", trace.to_str().unwrap()], steps);
    let codes: Vec<String> = stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["code"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(codes, ["ACP.SCHEMA.INVALID_PARAMS", "ACP.SCHEMA.INVALID_RESULT"], "{stderr}");
    let trace_text = std::fs::read_to_string(&trace).unwrap();
    assert_eq!(trace_text.matches("\"origin\":\"inspector\"").count(), 2, "{trace_text}");

    // The trace replays to the same findings; errors make the exit status 1.
    let replay = Command::new(env!("CARGO_BIN_EXE_agentproto"))
        .args(["replay", "--format", "json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(1));
    let replayed: Vec<String> = String::from_utf8(replay.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["code"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(replayed, codes);
}

fn finding_codes(json_lines: &str) -> Vec<String> {
    json_lines.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["code"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn an_oversize_request_and_its_answer_replay_to_the_live_findings() {
    let mut steps = initialize();
    // Over the limit: passed through unread, and answered by the agent, which
    // recovered its id; the answer is no stray, live or replayed.
    steps.push(Step::Send(line(json!({"jsonrpc":"2.0","id":9,"method":"_big","params":{"blob":"x".repeat(400)}}))));
    steps.push(Step::Recv(line(json!({"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"too large"}}))));
    let dir = scratch("oversize");
    let trace = dir.join("trace.jsonl");
    let (stderr, _) = run(&dir, &["--json", "--max-message-bytes", "256", "--trace", trace.to_str().unwrap()], steps);
    let live = finding_codes(&stderr);
    assert_eq!(live, ["ACP.TRANSPORT.MAX_MESSAGE_BYTES_EXCEEDED"], "{stderr}");
    let trace_text = std::fs::read_to_string(&trace).unwrap();
    assert!(trace_text.contains("\"oversize\":"), "{trace_text}");

    let replay = Command::new(env!("CARGO_BIN_EXE_agentproto"))
        .args(["replay", "--format", "json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(1), "the size finding is an error");
    assert_eq!(finding_codes(&String::from_utf8(replay.stdout).unwrap()), live);
}
