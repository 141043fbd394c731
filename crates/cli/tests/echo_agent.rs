//! `agentproto check agent` against our own example agent (`crates/acp/examples/echo-agent.rs`):
//! every requirement passes, none is left unexercised.

use std::path::PathBuf;
use std::process::Command;

/// The example's binary, next to ours in the target directory (`cargo test`
/// builds examples); built on demand when a narrower run left it out.
fn echo_agent() -> PathBuf {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_agentproto"));
    let path = ours.parent().unwrap().join("examples").join(format!("echo-agent{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .args(["build", "-p", "agentproto-acp", "--example", "echo-agent"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the echo-agent example failed");
    }
    path
}

#[test]
fn echo_agent_passes_every_agent_requirement() {
    let output = Command::new(env!("CARGO_BIN_EXE_agentproto"))
        .args(["check", "agent", "--json", "--timeout", "20", "--"])
        .arg(echo_agent())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    assert!(output.status.success(), "check failed: {report}");
    let results = report["results"].as_array().expect("results");
    assert!(results.len() >= 30, "{report}");
    for result in results {
        assert_eq!(result["outcome"], "pass", "{result}");
    }
}
