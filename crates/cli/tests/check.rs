//! The `agentproto check` verb from the built binary: usage errors, the text
//! and JSON reports, exit statuses, the hidden relay behind `{agent}`, and the
//! official TypeScript and Python SDK programs of `interop/official/` as peers.
//!
//! The official SDKs' failures are listed with the reason; a change in either
//! direction fails the test, so the list stays true (`crates/check/FINDINGS.md`
//! describes each one).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

const AGENTPROTO: &str = env!("CARGO_BIN_EXE_agentproto");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn interop(path: &str) -> String {
    repo().join("interop/official").join(path).display().to_string()
}

fn check_prerequisites() {
    let sdk = repo().join("interop/official/acp-ts/node_modules/@agentclientprotocol/sdk/package.json");
    assert!(
        sdk.exists(),
        "the TypeScript SDK is not installed: run `npm ci --prefix interop/official/acp-ts` (as .ci/run does)"
    );
    let python = std::process::Command::new("python3")
        .args(["-c", "import acp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(
        python.is_ok_and(|s| s.success()),
        "the Python SDK is not installed: run `python3 -m pip install -r .ci/requirements.txt` (as .ci/run does)"
    );
}

struct Run {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }

    fn ids(&self, outcome: &str) -> Vec<String> {
        let json = self.json();
        json["results"]
            .as_array()
            .expect("results")
            .iter()
            .filter(|r| r["outcome"] == outcome)
            .map(|r| r["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

async fn agentproto(args: &[&str]) -> Run {
    let child = tokio::process::Command::new(AGENTPROTO)
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start agentproto");
    let output = tokio::time::timeout(Duration::from_secs(180), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("agentproto {args:?} did not finish within 180 s"))
        .expect("agentproto output");
    Run {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_is_a_usage_error() {
    let run = agentproto(&["check", "agent"]).await;
    assert_eq!(run.status, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("COMMAND"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_cannot_start_fails_with_status_1() {
    let run = agentproto(&["check", "agent", "--only", "ACP-INIT-001", "--", "/nonexistent/agent"]).await;
    assert_eq!(run.status, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("ACP-INIT-001  MUST    FAIL"), "{}", run.stdout);
    assert!(run.stdout.contains("cannot start `/nonexistent/agent`"), "{}", run.stdout);
    assert!(run.stdout.contains("NOT conformant (1 MUST failure)"), "{}", run.stdout);
}

/// An official SDK's scenario agent and the requirements it fails, with why.
type Expected = (&'static str, &'static [&'static str], &'static [(&'static str, &'static str)]);

/// What `check agent` finds in each official SDK's scenario agent.
const AGENTS: &[Expected] = &[
    (
        "ts",
        &["node", "acp-ts/agent.mjs"],
        &[
            (
                "ACP-SESSION-003",
                "TS-A1: the SDK keeps no session table, and the agent (written as the SDK documents) answers a prompt \
                 for a session it never created",
            ),
            (
                "ACP-CANCEL-003",
                "TS-A2: on $/cancel_request the SDK only aborts the handler's signal; a handler that does not watch it \
                 keeps the request unanswered",
            ),
        ],
    ),
    (
        "python",
        &["python3", "acp-python/agent.py"],
        &[
            ("ACP-INIT-008", "PY-A1: no initialize gate: session/new before initialize creates a session"),
            ("ACP-SESSION-003", "PY-A2: no session table: a prompt for an unknown session runs"),
            ("ACP-CANCEL-003", "PY-2: $/cancel_request is not supported; the request is never answered"),
            ("ACP-RPC-002", "PY-A3: a line that is not JSON is logged and skipped, never answered -32700"),
            ("ACP-RPC-004", "PY-A4: jsonrpc \"1.0\" is not checked; the request is processed"),
            ("ACP-RPC-005", "PY-A5: a JSON array raises in the receive loop and the connection closes"),
            ("ACP-RPC-007", "PY-A5: the batch ends the connection"),
        ],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_agent_against_the_official_sdk_agents() {
    check_prerequisites();
    let runs = AGENTS.iter().map(|(name, command, expected)| {
        let mut args: Vec<String> = [
            "check",
            "agent",
            "--json",
            "--timeout",
            "20",
            "--reply-grace",
            "2",
            "--large-message-size",
            "4194304",
            "--prompt",
            "echo hello world",
            "--cancel-prompt",
            "wait",
            "--",
        ]
        .map(str::to_owned)
        .to_vec();
        args.push(command[0].to_owned());
        args.push(interop(command[1]));
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            (*name, *expected, agentproto(&args).await)
        }
    });
    let mut problems = Vec::new();
    for (name, expected, run) in futures_join(runs).await {
        let wanted: Vec<&str> = expected.iter().map(|(id, _)| *id).collect();
        let failed = run.ids("fail");
        if failed != wanted {
            problems.push(format!("{name} agent: expected failures {wanted:?}, got {failed:?}\n{}", run.stdout));
        }
        let must_failed = run.json()["summary"]["mustFailed"].as_u64().unwrap_or_default();
        let status = if must_failed > 0 { 1 } else { 0 };
        if run.status != Some(status) {
            problems.push(format!("{name} agent: exit status {:?}, expected {status}", run.status));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_client_against_the_official_sdk_clients_through_the_relay() {
    check_prerequisites();
    let clients = [("ts", ["node", "acp-ts/client.mjs"]), ("python", ["python3", "acp-python/client.py"])];
    let runs = clients.map(|(name, command)| {
        let client = interop(command[1]);
        async move {
            let args =
                ["check", "client", "--json", "--timeout", "20", "--", command[0], client.as_str(), "--", "{agent}"];
            (name, agentproto(&args).await)
        }
    });
    let mut problems = Vec::new();
    for (name, run) in futures_join(runs).await {
        if run.status != Some(0) || !run.ids("fail").is_empty() {
            problems.push(format!("{name} client: status {:?}\n{}\n{}", run.status, run.stdout, run.stderr));
        }
        // The scenario clients only send scenario prompts, which skip the default script.
        if run.ids("not_exercised") != ["ACP-CLIENT-RPC-003"] {
            problems.push(format!("{name} client: unexpected not-exercised set\n{}", run.stdout));
        }
        let json = run.json();
        if json["peer"]["name"] != format!("{name}-scenario-client") {
            problems.push(format!("{name} client: peer {}", json["peer"]));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Our Python SDK's example programs (`python/`, run from its sources) pass both checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_python_examples_are_conformant() {
    let python_path = format!("PYTHONPATH={}", repo().join("python/src").display());
    let agent = [
        "check",
        "agent",
        "--json",
        "--timeout",
        "20",
        "--prompt",
        "echo hello world",
        "--",
        "env",
        &python_path,
        "python3",
        "-m",
        "agentproto.examples.echo_agent",
    ];
    let client = [
        "check",
        "client",
        "--json",
        "--timeout",
        "20",
        "--",
        "env",
        &python_path,
        "python3",
        "-m",
        "agentproto.examples.run_prompt",
        "--",
        "{agent}",
    ];
    let (agent, client) = tokio::join!(agentproto(&agent), agentproto(&client));
    for (name, run) in [("echo_agent", agent), ("run_prompt", client)] {
        assert_eq!(run.status, Some(0), "{name}: {}\n{}", run.stdout, run.stderr);
        assert!(run.ids("fail").is_empty(), "{name}: {}", run.stdout);
    }
}

/// Our TypeScript SDK's example programs (`ts/`, compiled from its sources into this
/// test's own directory, so a concurrent `make ts-build` cannot race it) pass both checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_typescript_examples_are_conformant() {
    let ts = repo().join("ts");
    let tsc = ts.join("node_modules/.bin/tsc");
    assert!(tsc.exists(), "the TypeScript toolchain is not installed: run `npm ci --prefix ts` (as .ci/run does)");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ts-examples");
    let built = std::process::Command::new(&tsc)
        .args(["-p", "tsconfig.examples.json", "--outDir"])
        .arg(&out)
        .current_dir(&ts)
        .output()
        .expect("run tsc");
    assert!(
        built.status.success(),
        "tsc failed:\n{}{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    let echo_agent = out.join("examples/echo-agent.js").display().to_string();
    let run_prompt = out.join("examples/run-prompt.js").display().to_string();
    let agent =
        ["check", "agent", "--json", "--timeout", "20", "--prompt", "echo hello world", "--", "node", &echo_agent];
    let client = ["check", "client", "--json", "--timeout", "20", "--", "node", &run_prompt, "--", "{agent}"];
    let (agent, client) = tokio::join!(agentproto(&agent), agentproto(&client));
    for (name, run) in [("echo-agent", agent), ("run-prompt", client)] {
        assert_eq!(run.status, Some(0), "{name}: {}\n{}", run.stdout, run.stderr);
        assert!(run.ids("fail").is_empty(), "{name}: {}", run.stdout);
    }
}

/// Runs futures concurrently and collects their outputs in order.
async fn futures_join<F: std::future::Future + Send + 'static>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.expect("task"));
    }
    out
}
