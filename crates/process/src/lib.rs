//! Child processes that go away with the tool that started them.
//!
//! An agent command is often a launcher (a Node or Python shim) that starts the
//! real program as its own child and waits for it. Killing the launcher alone
//! leaves that grandchild running, and an agent that ignores the end of its
//! input never exits by itself. So every child a tool of this repository starts
//! runs in a process group of its own ([`isolate`]), and the tool ends the whole
//! group ([`Group`]) on every way out: the child exited, an error, a drop, a
//! signal ([`end_all`] from a SIGINT/SIGTERM handler).
//!
//! A tool killed with SIGKILL runs no code at all. For that case, on Linux,
//! [`die_with_parent`] has the kernel send SIGKILL to the direct child when the
//! thread that started it ends (`PR_SET_PDEATHSIG`). Two limits, both of the
//! kernel's making: the signal follows the *thread* that forked, not the process
//! (so it is only for children started from a thread that lives as long as they
//! should), and it reaches the direct child only: a grandchild behind a launcher
//! survives a SIGKILL of the tool unless the launcher takes it down when it dies.
//!
//! Being in its own group also means a terminal's Ctrl-C no longer reaches the
//! child directly: a tool that isolates children must handle SIGINT itself.
//!
//! A group id is its leader's pid. The kernel does not give a pid to a new
//! process while a process group with that id has members, so signalling a
//! group whose leader has been reaped is safe while anything of it is left;
//! once nothing is, the signal finds no group (or, if the pid was given to a new
//! process that then made itself a group leader in between, that group: a race
//! of microseconds that is accepted here).

#![warn(missing_docs)]

use std::collections::BTreeSet;
use std::io;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// A signal a tool sends to a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT.
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP.
    Hangup,
    /// SIGKILL.
    Kill,
}

/// Makes the command's process the leader of a new process group (its id is
/// the child's pid). Works on `tokio::process::Command` through `as_std_mut`.
pub fn isolate(command: &mut Command) -> &mut Command {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    command
}

/// On Linux, has the kernel send SIGKILL to the child when the thread calling
/// `spawn` ends (including when the whole process is killed). Elsewhere it does
/// nothing. Use it only where the spawning thread outlives the child on
/// purpose (e.g. the thread that waits for it).
#[allow(unsafe_code)]
pub fn die_with_parent(command: &mut Command) -> &mut Command {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = rustix::process::Pid::from_raw(std::process::id() as i32);
        let hook = move || -> io::Result<()> {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // If the parent died before the line above, no signal will come:
            // the child has been given to another parent by now.
            if rustix::process::getppid() != parent {
                return Err(rustix::io::Errno::SRCH.into());
            }
            Ok(())
        };
        // SAFETY: the hook runs in the forked child before `exec`, where only
        // async-signal-safe work is allowed. It makes two system calls (`prctl`,
        // `getppid`), takes no lock and allocates nothing (its errors are raw
        // OS error codes, which `std` reports as the spawn's error).
        unsafe {
            command.pre_exec(hook);
        }
    }
    command
}

/// Whether the process `pid` exists and has not exited yet (a zombie, exited
/// but not reaped, counts as exited). On Linux it reads `/proc`.
pub fn running(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        // `/proc/PID/stat` is `PID (COMM) STATE …`; COMM may hold spaces and parentheses.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
            Err(_) => false,
        }
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        use rustix::process::{test_kill_process, Pid};
        i32::try_from(pid).ok().and_then(Pid::from_raw).is_some_and(|pid| test_kill_process(pid).is_ok())
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// The groups started and not ended yet, for [`end_all`].
static LIVE: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn live() -> MutexGuard<'static, BTreeSet<u32>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sends `signal` to every process of the group led by `leader`. A group that
/// has no process left is not an error.
pub fn signal_group(leader: u32, signal: Signal) -> io::Result<()> {
    #[cfg(unix)]
    {
        use rustix::process::{kill_process_group, Pid, Signal as Sig};
        let Some(pid) = i32::try_from(leader).ok().and_then(Pid::from_raw) else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a process group id"));
        };
        let signal = match signal {
            Signal::Interrupt => Sig::INT,
            Signal::Terminate => Sig::TERM,
            Signal::Hangup => Sig::HUP,
            Signal::Kill => Sig::KILL,
        };
        match kill_process_group(pid, signal) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (leader, signal);
        Ok(())
    }
}

/// Sends SIGKILL to every group a [`Group`] still holds. For signal handlers
/// and last-resort exits (`std::process::exit` runs no destructors).
pub fn end_all() {
    let leaders: Vec<u32> = std::mem::take(&mut *live()).into_iter().collect();
    for leader in leaders {
        let _ = signal_group(leader, Signal::Kill);
    }
}

/// A process group this process started (see [`isolate`]); dropping it ends
/// the group with SIGKILL.
#[derive(Debug)]
pub struct Group {
    leader: u32,
    ended: bool,
}

impl Group {
    /// The group led by the child with this pid.
    pub fn new(leader: u32) -> Group {
        live().insert(leader);
        Group { leader, ended: false }
    }

    /// The group's id (its leader's pid).
    pub fn id(&self) -> u32 {
        self.leader
    }

    /// Sends `signal` to the whole group (nothing once it has been ended).
    pub fn signal(&self, signal: Signal) -> io::Result<()> {
        if self.ended {
            return Ok(());
        }
        signal_group(self.leader, signal)
    }

    /// Ends every process of the group with SIGKILL. Later calls do nothing.
    pub fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        live().remove(&self.leader);
        let _ = signal_group(self.leader, Signal::Kill);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
