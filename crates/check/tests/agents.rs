//! `check agent` against the fixture agents: the one on our SDK and the
//! hand-written one pass; each deliberately broken variant fails exactly the
//! requirements it breaks.
//!
//! Every wait inside a check is bounded by its options; nothing here measures
//! time.

use std::time::Duration;

use agentproto_check::{AgentCheck, NoProgress, Report};

const FIXTURE: &str = env!("CARGO_BIN_EXE_agentproto-check-fixture");

fn check(args: &[&str]) -> AgentCheck {
    let mut command = vec![FIXTURE.to_owned()];
    command.extend(args.iter().map(|a| (*a).to_owned()));
    let mut check = AgentCheck::new(command);
    check.timeout = Duration::from_secs(20);
    check.reply_grace = Duration::from_secs(5);
    check.exit_grace = Duration::from_secs(10);
    check.cancel_prompt = "wait for the cancel".to_owned();
    check.large_message_size = 2 * 1024 * 1024;
    check
}

fn explain(report: &Report) -> String {
    report.render_text(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_on_our_sdk_passes_everything() {
    let report = check(&["agent"]).run(&NoProgress).await;
    assert!(report.failed_ids().is_empty(), "{}", explain(&report));
    assert!(report.not_exercised_ids().is_empty(), "{}", explain(&report));
    assert!(report.conformant());
    assert_eq!(report.peer, Some(("fixture-agent".to_owned(), "1.0.0".to_owned())));
    assert_eq!(report.protocol_version, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scripted_client_serves_files_when_asked_to() {
    let mut check = check(&["agent"]);
    check.client_fs = true;
    check.prompt = "files".to_owned();
    check.only = vec!["ACP-PROMPT".to_owned(), "ACP-CAP".to_owned(), "ACP-WIRE".to_owned()];
    let report = check.run(&NoProgress).await;
    assert!(report.failed_ids().is_empty(), "{}", explain(&report));
    assert!(report.not_exercised_ids().is_empty(), "{}", explain(&report));
    assert_eq!(report.results.len(), 7, "{}", explain(&report));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hand_written_agent_passes_everything() {
    let report = check(&["raw-agent"]).run(&NoProgress).await;
    assert!(report.failed_ids().is_empty(), "{}", explain(&report));
    assert!(report.not_exercised_ids().is_empty(), "{}", explain(&report));
}

/// Each break of the hand-written agent, and exactly what it must fail.
const BREAKS: &[(&str, &[&str])] = &[
    ("error-on-cancel", &["ACP-CANCEL-001"]),
    ("bad-prompt-result", &["ACP-PROMPT-001", "ACP-CANCEL-002", "ACP-RPC-007", "ACP-ALIVE-001"]),
    ("accept-before-init", &["ACP-INIT-008"]),
    ("crash-on-bad-json", &["ACP-RPC-002", "ACP-RPC-007"]),
    ("ignore-unknown-session", &["ACP-SESSION-003"]),
    ("ignore-cancel-request", &["ACP-CANCEL-003"]),
    ("stdout-noise", &["ACP-WIRE-001"]),
    ("answer-notifications", &["ACP-EXT-002"]),
    ("echo-version", &["ACP-INIT-003", "ACP-INIT-004"]),
    ("bad-update", &["ACP-WIRE-002"]),
    ("fs-unadvertised", &["ACP-CAP-001"]),
    ("stranger-update", &["ACP-PROMPT-002"]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_broken_agent_fails_exactly_what_it_breaks() {
    let runs = BREAKS.iter().map(|(kind, expected)| async move {
        let report = check(&["raw-agent", "--break", kind]).run(&NoProgress).await;
        (*kind, *expected, report)
    });
    let mut problems = Vec::new();
    for (kind, expected, report) in futures_join(runs).await {
        if report.failed_ids() != expected {
            problems.push(format!("--break {kind}: expected {expected:?}\n{}", explain(&report)));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auth_method_of_a_newer_schema_is_a_note_not_a_failure() {
    // `{"type":"env_var",…}` matches v1's `AuthMethod` (its agent branch takes
    // any object with `id` and `name`); a value the schema accepts never fails.
    let mut check = check(&["raw-agent", "--break", "env-var-auth"]);
    check.only = vec!["ACP-INIT-".to_owned()];
    let report = check.run(&NoProgress).await;
    assert!(report.failed_ids().is_empty(), "{}", explain(&report));
    assert!(
        report.notes.iter().any(|note| note.contains("initialize result") && note.contains("env_var")),
        "{}",
        explain(&report)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_without_an_id_to_a_notification_is_not_silence() {
    // What codex-acp 0.16.0 does with `$/cancel_request` (crates/check/FINDINGS.md).
    let report = check(&["raw-agent", "--break", "idless-cancel-reply"]).run(&NoProgress).await;
    let failed = report.failed_ids();
    for id in ["ACP-CANCEL-004", "ACP-WIRE-001"] {
        assert!(failed.contains(&id), "{id} must fail\n{}", explain(&report));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_without_sessions_still_gets_the_envelope_probes() {
    let report = check(&["raw-agent", "--break", "no-sessions"]).run(&NoProgress).await;
    assert!(report.failed_ids().contains(&"ACP-SESSION-001"), "{}", explain(&report));
    let unexercised = report.not_exercised_ids();
    for id in ["ACP-RPC-002", "ACP-RPC-004", "ACP-RPC-005", "ACP-RPC-006"] {
        assert!(!unexercised.contains(&id), "{id} needs no session and must be judged\n{}", explain(&report));
        assert!(!report.failed_ids().contains(&id), "{id}\n{}", explain(&report));
    }
    for id in ["ACP-RPC-003", "ACP-RPC-007"] {
        assert!(unexercised.contains(&id), "{id} needs a session\n{}", explain(&report));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_ignores_the_end_of_its_input_fails_only_the_exit_rule() {
    let mut check = check(&["raw-agent", "--break", "no-exit-on-eof"]);
    check.exit_grace = Duration::from_millis(300);
    let report = check.run(&NoProgress).await;
    assert_eq!(report.failed_ids(), ["ACP-EXIT-001"], "{}", explain(&report));
    assert!(report.conformant(), "ACP-EXIT-001 is a SHOULD");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_cannot_start_fails_and_only_selected_ids_are_reported() {
    let mut check = AgentCheck::new(vec!["/nonexistent/agentproto-no-such-agent".to_owned()]);
    check.only = vec!["ACP-INIT-00".to_owned()];
    let report = check.run(&NoProgress).await;
    assert!(report.results.iter().all(|r| r.requirement.id.starts_with("ACP-INIT-00")));
    assert!(report.failed_ids().contains(&"ACP-INIT-001"), "{}", explain(&report));
    assert!(!report.conformant());
    let json = report.to_json();
    assert_eq!(json["subject"], "agent");
    assert_eq!(json["conformant"], false);
    assert!(json["results"][0]["detail"].as_str().unwrap().contains("cannot start"));
}

/// Runs futures concurrently on the current runtime and collects their outputs in order.
async fn futures_join<F: std::future::Future + Send + 'static>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.expect("check task"));
    }
    out
}
