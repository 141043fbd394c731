//! `spawn` runs the agent in a process group of its own and ends the whole
//! group: a launcher's child that ignores the end of its input is gone after a
//! drop and after `close`, whether or not the launcher itself exited.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentproto_acp::v1::*;
use agentproto_process::running;

struct Silent;

impl Client for Silent {
    async fn request_permission(
        &self,
        _: ClientContext,
        _: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, ErrorObject> {
        Ok(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))
    }

    async fn session_update(&self, _: ClientContext, _: SessionNotification) {}
}

/// A scratch file for the grandchild's pid, unique per test.
fn pid_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("agentproto-acp-group-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// The pid the launcher wrote, waiting for it for a bounded time.
async fn read_pid(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if let Ok(pid) = text.trim().parse() {
            return pid;
        }
        assert!(Instant::now() < deadline, "the launcher wrote no pid to {}", path.display());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while running(pid) {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

/// Ends the grandchild on every way out of a test, passed or not.
struct Reaper(Option<u32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(pid) = self.0.filter(|pid| running(*pid)) {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

/// `sh` that starts a `sleep` (which never reads its input) in the background,
/// writes its pid, then runs `rest`.
fn launcher(pid: &Path, rest: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(format!("sleep 600 </dev/null >/dev/null 2>&1 & echo $! > '{}'; {rest}", pid.display()));
    command
}

fn options() -> AcpOptions {
    let mut options = AcpOptions::default();
    options.exit_grace = Duration::from_millis(300);
    options
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_process_ends_the_launchers_child() {
    let path = pid_file("drop");
    let (_agent, process) = spawn_agent(launcher(&path, "exec sleep 600"), Silent, options()).unwrap();
    let mut reaper = Reaper(None);
    let grandchild = read_pid(&path).await;
    reaper.0 = Some(grandchild);
    drop(process);
    assert!(gone_within(grandchild, Duration::from_secs(10)).await, "the launcher's child {grandchild} survived");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_the_launchers_child_when_the_launcher_exits_on_eof() {
    // The launcher itself exits once its input ends; its child does not.
    let path = pid_file("close-eof");
    let (_agent, process) = spawn_agent(launcher(&path, "cat >/dev/null"), Silent, options()).unwrap();
    let mut reaper = Reaper(None);
    let grandchild = read_pid(&path).await;
    reaper.0 = Some(grandchild);
    let status = tokio::time::timeout(Duration::from_secs(20), process.close()).await.expect("close is bounded");
    assert!(status.unwrap().success(), "the launcher exited by itself");
    assert!(gone_within(grandchild, Duration::from_secs(10)).await, "the launcher's child {grandchild} survived");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_an_agent_that_ignores_eof_and_its_child() {
    let path = pid_file("close-kill");
    let (_agent, process) = spawn_agent(launcher(&path, "exec sleep 600"), Silent, options()).unwrap();
    let mut reaper = Reaper(None);
    let grandchild = read_pid(&path).await;
    reaper.0 = Some(grandchild);
    let status = tokio::time::timeout(Duration::from_secs(20), process.close()).await.expect("close is bounded");
    assert!(!status.unwrap().success(), "the agent was killed");
    assert!(gone_within(grandchild, Duration::from_secs(10)).await, "the launcher's child {grandchild} survived");
    let _ = std::fs::remove_file(&path);
}

/// `examples/run-prompt`, which `cargo test` builds beside the tests.
fn run_prompt() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(Path::parent).unwrap().join("examples/run-prompt");
    assert!(path.exists(), "{} is missing: run `cargo build -p agentproto-acp --examples`", path.display());
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_prompt_ends_the_agents_group_when_it_fails() {
    // The launcher leaves its child behind and exits at once: `initialize`
    // fails, and the example's error path must still end the group.
    let path = pid_file("run-prompt");
    let script = format!("sleep 600 </dev/null >/dev/null 2>&1 & echo $! > '{}'", path.display());
    let mut child = tokio::process::Command::new(run_prompt())
        .args(["--", "sh", "-c", &script])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut reaper = Reaper(None);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.expect("run-prompt exits").unwrap();
    assert_eq!(status.code(), Some(1), "run-prompt failed");
    let grandchild = read_pid(&path).await;
    reaper.0 = Some(grandchild);
    assert!(
        gone_within(grandchild, Duration::from_secs(10)).await,
        "the agent's child {grandchild} survived run-prompt"
    );
    let _ = std::fs::remove_file(&path);
}

/// Spawns `sleep 600` as the agent from a thread of its own that then ends
/// without closing it (the process handle is leaked, so no drop kills it), and
/// returns the agent's pid.
fn spawn_from_a_thread_that_ends(die_with_parent: bool) -> u32 {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut command = tokio::process::Command::new("sleep");
            command.arg("600");
            let options = options().die_with_parent(die_with_parent);
            let (_agent, process) = spawn_agent(command, Silent, options).unwrap();
            let pid = process.id().unwrap();
            std::mem::forget(process);
            pid
        })
    })
    .join()
    .unwrap()
}

#[tokio::test]
async fn with_die_with_parent_the_agent_ends_with_the_thread_that_spawned_it() {
    let pid = spawn_from_a_thread_that_ends(true);
    let _reaper = Reaper(Some(pid));
    assert!(gone_within(pid, Duration::from_secs(20)).await, "the agent {pid} outlived the thread that spawned it");
}

#[tokio::test]
async fn without_die_with_parent_the_agent_outlives_the_thread_that_spawned_it() {
    let pid = spawn_from_a_thread_that_ends(false);
    let _reaper = Reaper(Some(pid));
    // The thread has ended (joined): a death signal would have been sent by now.
    assert!(running(pid), "the agent {pid} ended without die_with_parent");
}
