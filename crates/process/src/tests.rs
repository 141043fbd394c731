//! A launcher that leaves a grandchild behind: the group ends it, the direct
//! child alone would not.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::*;

/// `end_all` reaches every group of the process: the tests take turns.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `sh` that starts a `sleep` in the background, prints its pid and waits.
fn launcher() -> (Child, u32) {
    let mut command = Command::new("sh");
    command.args(["-c", "sleep 600 & echo $!; wait"]).stdin(Stdio::null()).stdout(Stdio::piped());
    let mut child = isolate(&mut command).spawn().expect("start sh");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("the grandchild's pid");
    (child, line.trim().parse().expect("a pid"))
}

fn gone_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while running(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

#[test]
fn dropping_the_group_ends_the_grandchild_too() {
    let _turn = serial();
    let (mut child, grandchild) = launcher();
    assert!(running(grandchild));
    let group = Group::new(child.id());
    drop(group);
    assert!(gone_within(grandchild, Duration::from_secs(10)), "the grandchild {grandchild} survived");
    let _ = child.wait();
}

#[test]
fn killing_the_direct_child_alone_leaves_the_grandchild() {
    let _turn = serial();
    let (mut child, grandchild) = launcher();
    let mut group = Group::new(child.id());
    child.kill().expect("kill the launcher");
    child.wait().expect("reap the launcher");
    assert!(running(grandchild), "the grandchild went with its parent; this test shows nothing");
    group.end();
    assert!(gone_within(grandchild, Duration::from_secs(10)), "the grandchild {grandchild} survived");
}

#[test]
fn end_all_reaches_every_live_group() {
    let _turn = serial();
    let (mut first, first_grandchild) = launcher();
    let (mut second, second_grandchild) = launcher();
    let groups = [Group::new(first.id()), Group::new(second.id())];
    end_all();
    for pid in [first_grandchild, second_grandchild] {
        assert!(gone_within(pid, Duration::from_secs(10)), "{pid} survived");
    }
    drop(groups);
    let _ = (first.wait(), second.wait());
}

#[test]
fn a_child_dies_with_the_thread_that_started_it() {
    let _turn = serial();
    // `sleep` ignores its input; only the death signal can end it here.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut command = Command::new("sleep");
        command.arg("600");
        // Reaped by the test below with `waitpid`, once the kernel has killed it.
        #[allow(clippy::zombie_processes)]
        let child = die_with_parent(isolate(&mut command)).spawn().expect("start sleep");
        let _ = tx.send(child.id());
        // The thread ends here without waiting: the kernel sends SIGKILL.
    });
    let pid = rx.recv_timeout(Duration::from_secs(10)).expect("the child's pid");
    let mut group = Group::new(pid);
    assert!(gone_within(pid, Duration::from_secs(10)), "{pid} outlived the thread that started it");
    group.end();
    // Reap it (it is this process's child) so no zombie stays behind.
    #[cfg(unix)]
    {
        use rustix::process::{waitpid, Pid, WaitOptions};
        let _ = waitpid(Pid::from_raw(pid as i32), WaitOptions::empty());
    }
}
