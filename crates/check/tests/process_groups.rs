//! `check` ends each program it starts together with everything that program
//! started: an agent behind a launcher (a shell here, a Node shim in life)
//! leaves no process behind, even one that ignores the end of its input.
#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use agentproto_check::{AgentCheck, NoProgress};
use agentproto_process::running;

const FIXTURE: &str = env!("CARGO_BIN_EXE_agentproto-check-fixture");

/// Kills whatever the check left behind, passed or not.
struct Reaper(Vec<u32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for pid in self.0.iter().filter(|pid| running(**pid)) {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_behind_a_launcher_leaves_no_process_behind() {
    let pids = std::env::temp_dir().join(format!("agentproto-check-groups-{}", std::process::id()));
    let _ = std::fs::remove_file(&pids);
    // The launcher starts a `sleep` (which never reads its input) and becomes the agent.
    let launcher =
        format!("sleep 600 </dev/null >/dev/null 2>&1 & echo $! >> '{}'; exec '{FIXTURE}' agent", pids.display());
    let mut check = AgentCheck::new(vec!["sh".to_owned(), "-c".to_owned(), launcher]);
    check.timeout = Duration::from_secs(20);
    check.exit_grace = Duration::from_secs(10);
    check.only = vec!["ACP-INIT-001".to_owned()];
    let report = check.run(&NoProgress).await;
    let started: Vec<u32> =
        std::fs::read_to_string(&pids).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect();
    let _reaper = Reaper(started.clone());
    let _ = std::fs::remove_file(&pids);
    assert!(report.failed_ids().is_empty(), "{}", report.render_text(false));
    assert!(!started.is_empty(), "the launcher never ran");
    // Ended before `run` returned; the kernel may take a moment to tear them down.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left: Vec<u32> = started.clone();
    while !left.is_empty() && Instant::now() < deadline {
        left.retain(|pid| running(*pid));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(left.is_empty(), "left behind by the check: {left:?}");
}
