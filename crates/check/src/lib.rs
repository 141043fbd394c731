//! ACP conformance checks for agents and for clients.
//!
//! * [`AgentCheck`] starts an agent command and plays a scripted client against
//!   it: `initialize` variants and version negotiation, sessions, prompt turns,
//!   `session/cancel`, `$/cancel_request`, unknown sessions and methods,
//!   extensions, bad input and a large message.
//! * [`ClientCheck`] starts a client command and plays a scripted agent against
//!   it: either on the client's own stdin/stdout, or behind a `{agent}`
//!   placeholder in the command line that is replaced by a relay command the
//!   client starts as its agent.
//!
//! Both return a [`Report`]: one row per [`Requirement`] (stable ids such as
//! `ACP-INIT-001`, a level, a statement and a spec reference), each passed,
//! failed (with what was seen, and a JSON path where there is one) or not
//! exercised. Everything the peer sends is decoded through the generated,
//! validating types of `agentproto-acp`, so a wrong shape is a failure with its
//! path (a union variant the schema version does not list is a note: see
//! `common::warnings`). Every wait is bounded by the options' timeouts; nothing
//! waits on a clock to synchronise. Every program a check starts runs in a
//! process group of its own, which is ended when the check is done with it.
//!
//! The checks write raw lines (so they can send bad bytes on purpose) through a
//! small transport over `agentproto-jsonrpc`'s framing and envelope decoder.

use std::path::PathBuf;
use std::time::Duration;

mod agent;
mod client;
mod common;
pub mod relay;
pub mod report;
pub mod requirement;
mod wire;

pub use report::{NoProgress, Outcome, Progress, Report, RequirementResult, Subject};
pub use requirement::{Level, Requirement};
pub use wire::StderrMode;

/// How the scripted client answers `session/request_permission`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionPolicy {
    /// Pick an "allow" option (the first option if there is none).
    #[default]
    Allow,
    /// Pick a "reject" option (the first option if there is none).
    Reject,
}

/// Options of `check agent`.
#[derive(Debug, Clone)]
pub struct AgentCheck {
    /// The agent's command line.
    pub command: Vec<String>,
    /// How long any one answer may take.
    pub timeout: Duration,
    /// How long to wait for an answer a conformant agent sends at once but a
    /// broken one may never send (the reply to a bad line, the answer after
    /// `$/cancel_request`).
    pub reply_grace: Duration,
    /// How long the agent may take to exit once its stdin is closed.
    pub exit_grace: Duration,
    /// The text of ordinary prompts.
    pub prompt: String,
    /// The text of prompts that are cancelled while they run; it should keep
    /// the agent busy for a while.
    pub cancel_prompt: String,
    /// The size of the large request, in bytes.
    pub large_message_size: usize,
    /// The longest line accepted from the agent.
    pub max_message_size: usize,
    /// What to do with the agent's stderr.
    pub stderr: StderrMode,
    /// Requirement id prefixes to report (all when empty).
    pub only: Vec<String>,
    /// How permission requests are answered.
    pub permission: PermissionPolicy,
    /// An auth method id to `authenticate` with after `initialize`.
    pub auth_method: Option<String>,
    /// Advertise `fs.readTextFile` and `fs.writeTextFile` and serve them inside
    /// the session's working directory (a scratch directory of the check).
    /// Without it the client advertises no capability, and any `fs/*` call
    /// fails ACP-CAP-001.
    pub client_fs: bool,
}

/// The default text of ordinary prompts.
pub const DEFAULT_PROMPT: &str = "Reply with one short sentence. Do not use any tools.";

/// The default text of prompts that get cancelled.
pub const DEFAULT_CANCEL_PROMPT: &str = "Count slowly from one to two hundred, writing every number as a word \
     on its own line, and do not use any tools. This is a cancellation test: you will be interrupted.";

impl AgentCheck {
    /// Defaults for `command`: 30 s per answer, 2 s reply grace, 5 s to exit,
    /// a 10 MiB large message, a 64 MiB line bound.
    pub fn new(command: Vec<String>) -> AgentCheck {
        AgentCheck {
            command,
            timeout: Duration::from_secs(30),
            reply_grace: Duration::from_secs(2),
            exit_grace: Duration::from_secs(5),
            prompt: DEFAULT_PROMPT.to_owned(),
            cancel_prompt: DEFAULT_CANCEL_PROMPT.to_owned(),
            large_message_size: 10 * 1024 * 1024,
            max_message_size: 64 * 1024 * 1024,
            stderr: StderrMode::Capture,
            only: Vec::new(),
            permission: PermissionPolicy::Allow,
            auth_method: None,
            client_fs: false,
        }
    }

    /// Whether the report includes `id`.
    pub fn selects(&self, id: &str) -> bool {
        selects(&self.only, id)
    }

    /// Runs the check.
    pub async fn run(&self, progress: &dyn Progress) -> Report {
        agent::run(self, progress).await
    }
}

/// Options of `check client`.
#[derive(Debug, Clone)]
pub struct ClientCheck {
    /// The client's command line. An argument `{agent}` is replaced by one
    /// word, the relay program (`relay[0]`), which the client starts with no
    /// arguments; `{agent}` inside a longer argument by the whole relay command
    /// with its address and token, as one shell-quoted string. Without it, the
    /// client speaks ACP on its own stdin/stdout. See [`relay`].
    pub command: Vec<String>,
    /// The command line that starts a relay (`agentproto check relay`), to
    /// which the address and token are appended; its first word alone must
    /// relay too when started with no arguments and [`relay::ENV`] set (as
    /// `agentproto` does). Needed only with `{agent}`.
    pub relay: Vec<String>,
    /// How long any one answer may take, and how long the client may stay
    /// silent before the run ends.
    pub timeout: Duration,
    /// How long the client may take to exit once the run is over.
    pub exit_grace: Duration,
    /// The longest line accepted from the client.
    pub max_message_size: usize,
    /// What to do with the client's stderr (and, with `{agent}`, its stdout).
    pub stderr: StderrMode,
    /// Requirement id prefixes to report (all when empty).
    pub only: Vec<String>,
}

impl ClientCheck {
    /// Defaults for `command`: 30 s per answer, 5 s to exit, a 64 MiB line bound.
    pub fn new(command: Vec<String>) -> ClientCheck {
        ClientCheck {
            command,
            relay: Vec::new(),
            timeout: Duration::from_secs(30),
            exit_grace: Duration::from_secs(5),
            max_message_size: 64 * 1024 * 1024,
            stderr: StderrMode::Capture,
            only: Vec::new(),
        }
    }

    /// Whether the report includes `id`.
    pub fn selects(&self, id: &str) -> bool {
        selects(&self.only, id)
    }

    /// Runs the check.
    pub async fn run(&self, progress: &dyn Progress) -> Report {
        client::run(self, progress).await
    }
}

fn selects(only: &[String], id: &str) -> bool {
    only.is_empty() || only.iter().any(|prefix| id.starts_with(prefix.as_str()))
}

/// A scratch directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("agentproto-check-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::create_dir_all(&path);
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        TempDir(path)
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        &self.0
    }

    pub(crate) fn path_string(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
