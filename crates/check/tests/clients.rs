//! `check client` against the fixture clients: the one on our SDK passes, on
//! its own stdio and behind the `{agent}` relay; each deliberately broken
//! variant of the hand-written one fails exactly the requirements it breaks.

use std::time::Duration;

use agentproto_check::{ClientCheck, NoProgress, Report};

const FIXTURE: &str = env!("CARGO_BIN_EXE_agentproto-check-fixture");

fn check(args: &[&str]) -> ClientCheck {
    let mut command = vec![FIXTURE.to_owned()];
    command.extend(args.iter().map(|a| (*a).to_owned()));
    let mut check = ClientCheck::new(command);
    check.relay = vec![FIXTURE.to_owned(), "relay".to_owned()];
    check.timeout = Duration::from_secs(20);
    check.exit_grace = Duration::from_secs(10);
    check
}

fn explain(report: &Report) -> String {
    report.render_text(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_on_our_sdk_passes_on_its_own_stdio() {
    let report = check(&["client", "--prompt", "hello"]).run(&NoProgress).await;
    assert!(report.failed_ids().is_empty(), "{}", explain(&report));
    // One plain prompt never cancels a turn.
    assert_eq!(report.not_exercised_ids(), ["ACP-CLIENT-PERM-002"], "{}", explain(&report));
    assert_eq!(report.peer, Some(("fixture-client".to_owned(), "1.0.0".to_owned())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_on_our_sdk_passes_behind_the_relay_and_cancels_pending_permissions() {
    let args = ["client", "--prompt", "permission", "--cancel-on-permission", "--", "{agent}"];
    let report = check(&args).run(&NoProgress).await;
    assert!(report.failed_ids().is_empty(), "{}", explain(&report));
    let judged = |id: &str| report.results.iter().find(|r| r.requirement.id == id).map(|r| r.outcome.as_str());
    assert_eq!(judged("ACP-CLIENT-PERM-002"), Some("pass"), "{}", explain(&report));
    assert_eq!(judged("ACP-CLIENT-EXT-003"), Some("pass"), "{}", explain(&report));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_whose_agent_option_takes_one_word_passes_behind_the_relay() {
    // `--agent PROGRAM` runs its one word as a path, never split (as acpx's
    // `--agent` takes one string): `{agent}` must be a command in one word.
    let report = check(&["client", "--prompt", "hello", "--agent", "{agent}"]).run(&NoProgress).await;
    assert!(report.failed_ids().is_empty(), "{}", explain(&report));
    assert_eq!(report.peer, Some(("fixture-client".to_owned(), "1.0.0".to_owned())), "{}", explain(&report));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hand_written_client_passes() {
    let report = check(&["raw-client"]).run(&NoProgress).await;
    assert!(report.failed_ids().is_empty(), "{}", explain(&report));
}

/// Each break of the hand-written client, and exactly what it must fail.
const BREAKS: &[(&str, &[&str])] = &[
    ("no-initialize", &["ACP-CLIENT-INIT-001"]),
    ("bad-permission", &["ACP-CLIENT-PERM-001"]),
    ("ext-result", &["ACP-CLIENT-RPC-001", "ACP-CLIENT-RPC-002"]),
    ("relative-cwd", &["ACP-CLIENT-SESSION-001"]),
    ("gated", &["ACP-CLIENT-CAP-001"]),
    ("crash-on-unknown-update", &["ACP-CLIENT-EXT-003"]),
    ("keep-permission-on-cancel", &["ACP-CLIENT-PERM-002"]),
    ("image-prompt", &["ACP-CLIENT-CAP-002"]),
    ("noise", &["ACP-CLIENT-WIRE-001"]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_broken_client_fails_exactly_what_it_breaks() {
    let handles: Vec<_> = BREAKS
        .iter()
        .map(|(kind, expected)| {
            tokio::spawn(async move {
                let report = check(&["raw-client", "--break", kind]).run(&NoProgress).await;
                (*kind, *expected, report)
            })
        })
        .collect();
    let mut problems = Vec::new();
    for handle in handles {
        let (kind, expected, report) = handle.await.expect("check task");
        if report.failed_ids() != expected {
            problems.push(format!("--break {kind}: expected {expected:?}\n{}", explain(&report)));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_starts_its_agent_fails_the_first_requirement() {
    // `{agent}` is given, but the program exits without running it.
    let mut check = ClientCheck::new(vec!["sh".to_owned(), "-c".to_owned(), "exit 0".to_owned(), "{agent}".to_owned()]);
    check.relay = vec![FIXTURE.to_owned(), "relay".to_owned()];
    let report = check.run(&NoProgress).await;
    assert_eq!(report.failed_ids(), ["ACP-CLIENT-INIT-001"], "{}", explain(&report));
}

#[test]
fn the_requirements_document_is_generated_from_the_tables() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("REQUIREMENTS.md");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        text == agentproto_check::requirement::markdown(),
        "{} is stale: run `cargo run -q -p agentproto-cli -- check requirements --markdown > crates/check/REQUIREMENTS.md`",
        path.display()
    );
}
