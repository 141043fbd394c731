//! Terminals, both sides: the agent's [`TerminalHandle`] on a command it runs
//! through the client, and [`Terminals`], a ready-made client implementation of
//! the five `terminal/*` requests.
//!
//! # Agent side
//!
//! An agent whose client advertised `terminal: true` asks it to run commands.
//! [`TerminalHandle::create`] sends `terminal/create` and wraps the id it gets
//! back, so the other four requests need no ids ([`TerminalHandle::output`],
//! [`TerminalHandle::wait_for_exit`], [`TerminalHandle::kill`],
//! [`TerminalHandle::release`]), and [`TerminalHandle::as_tool_call_content`]
//! embeds the terminal in a tool call.
//!
//! The agent must release every terminal it creates. Call
//! [`TerminalHandle::release`]; a handle dropped without it spawns the release
//! in the background (see [`TerminalHandle`]).
//!
//! ```no_run
//! use agentproto_acp::terminal::TerminalHandle;
//! use agentproto_acp::v1::*;
//!
//! async fn run_tests(cx: &AgentContext, session: SessionId) -> Result<String, AcpError> {
//!     let mut request = CreateTerminalRequest::new(session, "cargo");
//!     request.args = Some(vec!["test".to_owned()]);
//!     let terminal = TerminalHandle::create(cx.peer(), request).await?;
//!     terminal.wait_for_exit().await?;
//!     let output = terminal.output().await?;
//!     terminal.release().await?;
//!     Ok(output.output)
//! }
//! ```
//!
//! # Client side
//!
//! [`Terminals`] runs each command as a child process (no shell, no pseudo
//! terminal): the `args` are passed as they are, the `env` entries are added to
//! the client's own environment, stdin is the null device, and stdout and stderr go
//! into one output buffer in the order they are read. A client forwards the five
//! requests to it:
//!
//! ```no_run
//! use agentproto_acp::terminal::Terminals;
//! use agentproto_acp::v1::*;
//!
//! struct Editor {
//!     terminals: Terminals,
//! }
//!
//! impl Client for Editor {
//!     async fn create_terminal(
//!         &self,
//!         _cx: ClientContext,
//!         params: CreateTerminalRequest,
//!     ) -> Result<CreateTerminalResponse, ErrorObject> {
//!         self.terminals.create(&params).await
//!     }
//!     // … terminal_output, wait_for_terminal_exit, kill_terminal, release_terminal alike.
//! #   async fn request_permission(&self, _: ClientContext, _: RequestPermissionRequest)
//! #       -> Result<RequestPermissionResponse, ErrorObject> { unimplemented!() }
//! #   async fn session_update(&self, _: ClientContext, _: SessionNotification) {}
//! }
//! ```
//!
//! Output is kept up to the request's `outputByteLimit` (default
//! [`DEFAULT_OUTPUT_LIMIT`], and never more than
//! [`Terminals::with_max_output_limit`]). Past the limit the oldest bytes are
//! dropped, the cut moved forward to the next character boundary, and
//! `truncated` reported. Output is decoded as UTF-8 when it is read; invalid bytes
//! become U+FFFD, and a character whose last bytes have not been written yet is
//! held back while the command runs.
//!
//! A terminal belongs to the session that created it. Errors map to wire codes as
//! follows:
//!
//! | situation | code | `data` |
//! |---|---|---|
//! | unknown or released terminal id, or another session's terminal | -32002 | `{"terminalId": …}` |
//! | empty command, a NUL byte in `command`/`args`/`env`, a bad variable name | -32602 | `{"path": "$.params…", "expected": …, "found": …}` |
//! | `cwd` not absolute, outside the roots, missing, not a directory | -32602 | `{"path": "$.params.cwd", …}` |
//! | the command cannot be started | -32603 | none; the message names the command |
//!
//! [`Terminals::with_roots`] only confines the working directory. It is not a
//! sandbox: the command itself can reach whatever the client process can.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use agentproto_codec::MaybeUndefined;
use agentproto_jsonrpc::{ErrorCode, ErrorObject};
use futures::future::{self, Either};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::ClientConnection;
use crate::fs::{FsError, FsRoots};
use crate::role::AcpError;
use crate::v1::{self, V1};

// ---------------------------------------------------------------------------
// Agent side
// ---------------------------------------------------------------------------

/// A terminal the agent created on the client, by id, together with the
/// connection to reach it.
///
/// The calls go through the connection the handle was created with, so inside a
/// prompt turn they end with [`AcpError::Cancelled`] when the turn is cancelled.
/// [`TerminalHandle::release`] does not: it is sent even after a cancellation,
/// since the agent must release what it created.
///
/// **Dropped without `release`:** the handle spawns `terminal/release` on the
/// current tokio runtime and does not wait for the answer, which is ignored.
/// Outside a runtime (or while it shuts down) nothing is sent and the terminal
/// stays with the client until the connection ends. Prefer calling
/// [`TerminalHandle::release`], which reports failures.
#[derive(Debug)]
pub struct TerminalHandle {
    client: ClientConnection<V1>,
    session_id: v1::SessionId,
    terminal_id: v1::TerminalId,
    released: bool,
}

impl TerminalHandle {
    /// Sends `terminal/create` and wraps the new terminal. The client starts the
    /// command and answers at once; it does not wait for the command to finish.
    pub async fn create(
        client: &ClientConnection<V1>,
        request: v1::CreateTerminalRequest,
    ) -> Result<TerminalHandle, AcpError> {
        let session_id = request.session_id.clone();
        let response = client.create_terminal(request).await?;
        Ok(TerminalHandle { client: client.clone(), session_id, terminal_id: response.terminal_id, released: false })
    }

    /// The terminal's id, as the client assigned it.
    pub fn id(&self) -> &v1::TerminalId {
        &self.terminal_id
    }

    /// The session the terminal belongs to.
    pub fn session_id(&self) -> &v1::SessionId {
        &self.session_id
    }

    /// The tool-call content item `{"type":"terminal","terminalId":…}` that shows
    /// this terminal's live output in a tool call. Clients keep showing it after
    /// the terminal is released.
    pub fn as_tool_call_content(&self) -> v1::ToolCallContent {
        v1::ToolCallContent::Terminal(v1::Terminal::new(self.terminal_id.clone()))
    }

    /// Sends `terminal/output`: the output so far, whether it was truncated, and
    /// the exit status once the command has exited.
    pub async fn output(&self) -> Result<v1::TerminalOutputResponse, AcpError> {
        self.client.terminal_output(v1::TerminalOutputRequest::new(self.session_id.clone(), self.id().clone())).await
    }

    /// Sends `terminal/wait_for_exit`, which the client answers once the command has exited.
    pub async fn wait_for_exit(&self) -> Result<v1::WaitForTerminalExitResponse, AcpError> {
        let request = v1::WaitForTerminalExitRequest::new(self.session_id.clone(), self.id().clone());
        self.client.wait_for_terminal_exit(request).await
    }

    /// Sends `terminal/kill`: the command is stopped, and the terminal stays valid
    /// (its output can still be read; it must still be released).
    pub async fn kill(&self) -> Result<v1::KillTerminalResponse, AcpError> {
        self.client.kill_terminal(v1::KillTerminalRequest::new(self.session_id.clone(), self.id().clone())).await
    }

    /// Sends `terminal/release`: the client kills the command if it still runs and
    /// forgets the terminal. Sent even when the prompt turn has been cancelled.
    pub async fn release(mut self) -> Result<v1::ReleaseTerminalResponse, AcpError> {
        let client = ClientConnection { shared: self.client.shared.clone(), turn: None };
        let result = client.release_terminal(self.release_request()).await;
        self.released = true;
        result
    }

    fn release_request(&self) -> v1::ReleaseTerminalRequest {
        v1::ReleaseTerminalRequest::new(self.session_id.clone(), self.terminal_id.clone())
    }
}

impl Drop for TerminalHandle {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        // Not tied to the prompt turn: a cancelled turn must still release.
        let client = ClientConnection { shared: self.client.shared.clone(), turn: None };
        let request = self.release_request();
        runtime.spawn(async move {
            let _ = client.release_terminal(request).await;
        });
    }
}

// ---------------------------------------------------------------------------
// Client side
// ---------------------------------------------------------------------------

/// How much output a terminal keeps when the request sets no `outputByteLimit`: 1 MiB.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1024 * 1024;

/// The largest `outputByteLimit` honoured unless configured otherwise: 16 MiB.
/// A larger request is lowered to it.
pub const DEFAULT_MAX_OUTPUT_LIMIT: usize = 16 * 1024 * 1024;

/// After the command exits, how long its output pipes may stay open (held by a
/// process it started in the background) before reading stops and the exit is
/// reported.
const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// How many bytes one read from a pipe takes at most.
const READ_CHUNK: usize = 8 * 1024;

/// The JSON path of `cwd` in `terminal/create`, used in `-32602` replies.
const CWD_PATH: &str = "$.params.cwd";

/// The client's terminals: answers `terminal/create`, `terminal/output`,
/// `terminal/wait_for_exit`, `terminal/kill` and `terminal/release` by running
/// real processes (see the [module documentation](self)).
///
/// Memory is bounded per terminal by its output limit; a terminal's buffer is
/// freed when it is released. Every process still running is killed when the
/// `Terminals` is dropped (the processes are started with `kill_on_drop`, and the
/// tasks that own them are aborted).
pub struct Terminals {
    roots: Option<FsRoots>,
    default_limit: usize,
    max_limit: usize,
    next_id: AtomicU64,
    live: Mutex<HashMap<String, Live>>,
}

/// One terminal that has not been released.
struct Live {
    session_id: v1::SessionId,
    output: Arc<Mutex<OutputBuffer>>,
    /// `None` while the command runs; set once, when it has exited and its
    /// output has been read.
    exit: watch::Receiver<Option<Exit>>,
    /// Fired by `terminal/kill` and `terminal/release`.
    kill: CancellationToken,
    /// The task that owns the child process.
    task: AbortHandle,
}

impl Default for Terminals {
    fn default() -> Self {
        Terminals::new()
    }
}

impl fmt::Debug for Terminals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Terminals")
            .field("roots", &self.roots.as_ref().map(FsRoots::roots))
            .field("default_limit", &self.default_limit)
            .field("max_limit", &self.max_limit)
            .field("live", &self.len())
            .finish()
    }
}

impl Terminals {
    /// No terminals yet; any absolute `cwd` is accepted, and a request without
    /// one runs in the client process's working directory.
    pub fn new() -> Terminals {
        Terminals {
            roots: None,
            default_limit: DEFAULT_OUTPUT_LIMIT,
            max_limit: DEFAULT_MAX_OUTPUT_LIMIT,
            next_id: AtomicU64::new(0),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// Requires `cwd` to resolve (symbolic links followed) to a directory inside
    /// `roots`, with the same checks as file reads (see [`crate::fs`]); a request
    /// without `cwd` runs in the first root.
    pub fn with_roots(mut self, roots: FsRoots) -> Terminals {
        self.roots = Some(roots);
        self
    }

    /// How many bytes of output to keep when a request sets no `outputByteLimit`
    /// (default [`DEFAULT_OUTPUT_LIMIT`]).
    pub fn with_default_output_limit(mut self, bytes: usize) -> Terminals {
        self.default_limit = bytes;
        self
    }

    /// The most output any terminal keeps, whatever its request asks for
    /// (default [`DEFAULT_MAX_OUTPUT_LIMIT`]).
    pub fn with_max_output_limit(mut self, bytes: usize) -> Terminals {
        self.max_limit = bytes;
        self
    }

    /// How many terminals exist that have not been released.
    pub fn len(&self) -> usize {
        lock(&self.live).len()
    }

    /// Whether every terminal has been released.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Answers `terminal/create`: checks the request, starts the command and
    /// returns a fresh terminal id without waiting for the command.
    ///
    /// Must be called inside a tokio runtime, which runs the task that reads the
    /// output and waits for the process.
    pub async fn create(&self, request: &v1::CreateTerminalRequest) -> Result<v1::CreateTerminalResponse, ErrorObject> {
        check_command(request)?;
        let cwd = self.resolve_cwd(request.cwd.value().map(String::as_str)).await?;
        let limit = match request.output_byte_limit.value() {
            Some(&requested) => usize::try_from(requested).unwrap_or(usize::MAX),
            None => self.default_limit,
        }
        .min(self.max_limit);

        let mut command = Command::new(&request.command);
        command
            .args(request.args.iter().flatten())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for variable in request.env.iter().flatten() {
            command.env(&variable.name, &variable.value);
        }
        if let Some(cwd) = &cwd {
            command.current_dir(cwd);
        }
        let child = command
            .spawn()
            .map_err(|error| ErrorObject::internal_error(format!("cannot start `{}`: {error}", request.command)))?;

        let output = Arc::new(Mutex::new(OutputBuffer::new(limit)));
        let (exit_sender, exit) = watch::channel(None);
        let kill = CancellationToken::new();
        let task = tokio::spawn(supervise(child, output.clone(), kill.clone(), exit_sender)).abort_handle();
        let id = format!("term-{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let live = Live { session_id: request.session_id.clone(), output, exit, kill, task };
        lock(&self.live).insert(id.clone(), live);
        Ok(v1::CreateTerminalResponse::new(id))
    }

    /// Answers `terminal/output`: the output kept so far, whether some was
    /// dropped, and the exit status once the command has exited (at which point
    /// the output is complete).
    pub async fn output(&self, request: &v1::TerminalOutputRequest) -> Result<v1::TerminalOutputResponse, ErrorObject> {
        let (output, exit) = self.find(&request.session_id, &request.terminal_id, |live| {
            // The exit status is read first: once it is set, the output is final.
            (live.output.clone(), live.exit.borrow().clone())
        })?;
        let (text, truncated) = lock(&output).snapshot(exit.is_some());
        let mut response = v1::TerminalOutputResponse::new(text, truncated);
        if let Some(exit) = exit {
            response.exit_status = MaybeUndefined::Value(exit.to_status());
        }
        Ok(response)
    }

    /// Answers `terminal/wait_for_exit` once the command has exited: its exit
    /// code, or the signal that ended it (on Unix, `"SIGKILL"` and the like).
    pub async fn wait_for_exit(
        &self,
        request: &v1::WaitForTerminalExitRequest,
    ) -> Result<v1::WaitForTerminalExitResponse, ErrorObject> {
        let exit = self.find(&request.session_id, &request.terminal_id, |live| live.exit.clone())?;
        match wait_exit(exit).await {
            Some(exit) => Ok(exit.to_wait_response()),
            None => Err(process_lost(&request.terminal_id)),
        }
    }

    /// Answers `terminal/kill`: kills the command (if it still runs) and answers
    /// once its exit has been recorded. The terminal stays valid.
    pub async fn kill(&self, request: &v1::KillTerminalRequest) -> Result<v1::KillTerminalResponse, ErrorObject> {
        let (kill, exit) =
            self.find(&request.session_id, &request.terminal_id, |live| (live.kill.clone(), live.exit.clone()))?;
        kill.cancel();
        match wait_exit(exit).await {
            Some(_) => Ok(v1::KillTerminalResponse::default()),
            None => Err(process_lost(&request.terminal_id)),
        }
    }

    /// Answers `terminal/release`: kills the command if it still runs and forgets
    /// the terminal; every later request for its id is answered `-32002`. A
    /// `terminal/wait_for_exit` already waiting is answered with the kill's exit
    /// status.
    pub async fn release(
        &self,
        request: &v1::ReleaseTerminalRequest,
    ) -> Result<v1::ReleaseTerminalResponse, ErrorObject> {
        let removed = {
            let mut live = lock(&self.live);
            match live.get(request.terminal_id.as_str()) {
                Some(terminal) if terminal.session_id == request.session_id => {
                    live.remove(request.terminal_id.as_str())
                }
                _ => None,
            }
        };
        let Some(terminal) = removed else { return Err(unknown_terminal(&request.terminal_id)) };
        // The task kills the process, records its exit and ends by itself.
        terminal.kill.cancel();
        Ok(v1::ReleaseTerminalResponse::default())
    }

    /// Runs `f` on the terminal `id` of `session`, or answers `-32002`.
    fn find<R>(
        &self,
        session: &v1::SessionId,
        id: &v1::TerminalId,
        f: impl FnOnce(&Live) -> R,
    ) -> Result<R, ErrorObject> {
        let live = lock(&self.live);
        match live.get(id.as_str()) {
            Some(terminal) if terminal.session_id == *session => Ok(f(terminal)),
            _ => Err(unknown_terminal(id)),
        }
    }

    /// The directory to run in: checked against the roots when there are any.
    async fn resolve_cwd(&self, cwd: Option<&str>) -> Result<Option<PathBuf>, ErrorObject> {
        let Some(roots) = &self.roots else {
            return match cwd {
                None => Ok(None),
                Some(cwd) if cwd.contains('\0') => Err(invalid(CWD_PATH, "a path without NUL bytes", cwd)),
                Some(cwd) if !Path::new(cwd).is_absolute() => Err(invalid(CWD_PATH, "an absolute path", cwd)),
                Some(cwd) => Ok(Some(PathBuf::from(cwd))),
            };
        };
        let Some(cwd) = cwd else { return Ok(roots.roots().first().cloned()) };
        let resolved = roots.resolve_read(cwd).await.map_err(|error| cwd_error(&error, cwd))?;
        match tokio::fs::metadata(&resolved).await {
            Ok(metadata) if metadata.is_dir() => Ok(Some(resolved)),
            Ok(_) => Err(invalid(CWD_PATH, "a directory", cwd)),
            Err(error) => {
                Err(ErrorObject::internal_error(format!("cannot use `{cwd}` as the working directory: {error}")))
            }
        }
    }
}

impl Drop for Terminals {
    fn drop(&mut self) {
        let live = self.live.get_mut().unwrap_or_else(PoisonError::into_inner);
        for terminal in live.values() {
            // Dropping the task drops its `Child`, which `kill_on_drop` kills.
            terminal.task.abort();
        }
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Exit {
    code: Option<u32>,
    signal: Option<String>,
}

impl Exit {
    fn from_status(status: io::Result<ExitStatus>) -> Exit {
        match status {
            // Exit codes are 0..=255 on Unix; on Windows the `i32` holds a `u32`'s bits.
            Ok(status) => Exit { code: status.code().map(|code| code as u32), signal: signal_of(status) },
            Err(_) => Exit { code: None, signal: None },
        }
    }

    fn to_status(&self) -> v1::TerminalExitStatus {
        v1::TerminalExitStatus {
            exit_code: or_null(self.code),
            signal: or_null(self.signal.clone()),
            meta: MaybeUndefined::Undefined,
        }
    }

    fn to_wait_response(&self) -> v1::WaitForTerminalExitResponse {
        v1::WaitForTerminalExitResponse {
            exit_code: or_null(self.code),
            signal: or_null(self.signal.clone()),
            meta: MaybeUndefined::Undefined,
        }
    }
}

fn or_null<T>(value: Option<T>) -> MaybeUndefined<T> {
    value.map_or(MaybeUndefined::Null, MaybeUndefined::Value)
}

#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    status.signal().map(signal_name)
}

#[cfg(not(unix))]
fn signal_of(_: ExitStatus) -> Option<String> {
    None
}

/// The name of a signal whose number is the same on Linux, macOS and the BSDs;
/// any other as its decimal number.
#[cfg(unix)]
fn signal_name(signal: i32) -> String {
    let name = match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        other => return other.to_string(),
    };
    name.to_owned()
}

/// Waits until the exit is recorded; `None` if the task ended without recording it.
async fn wait_exit(mut exit: watch::Receiver<Option<Exit>>) -> Option<Exit> {
    match exit.wait_for(Option::is_some).await {
        Ok(exit) => exit.clone(),
        Err(_) => None,
    }
}

/// Owns the child: copies its output into the buffer, kills it when `kill`
/// fires, and records its exit once the output has been read.
async fn supervise(
    mut child: Child,
    output: Arc<Mutex<OutputBuffer>>,
    kill: CancellationToken,
    exit: watch::Sender<Option<Exit>>,
) {
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let readers = pin!(future::join(pump(stdout, &output), pump(stderr, &output)));
    let wait = pin!(async {
        let exited = tokio::select! {
            status = child.wait() => Some(status),
            () = kill.cancelled() => None,
        };
        match exited {
            Some(status) => status,
            None => {
                // Fails only if the process has already been reaped; `wait` then
                // returns the status it recorded.
                let _ = child.start_kill();
                child.wait().await
            }
        }
    });
    let status = match future::select(wait, readers).await {
        Either::Left((status, readers)) => {
            // Normally the pipes are already closed; a background process that
            // inherited them may keep them open, and then reading stops.
            let _ = tokio::time::timeout(DRAIN_GRACE, readers).await;
            status
        }
        Either::Right((_, wait)) => wait.await,
    };
    exit.send_replace(Some(Exit::from_status(status)));
}

/// Copies one pipe into the buffer until it closes.
async fn pump<R: AsyncRead + Unpin>(reader: Option<R>, output: &Mutex<OutputBuffer>) {
    let Some(mut reader) = reader else { return };
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) => return,
            Ok(n) => lock(output).push(&chunk[..n]),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// The last `limit` bytes of a command's output (or fewer, after a cut on a
/// character boundary).
#[derive(Debug)]
struct OutputBuffer {
    bytes: VecDeque<u8>,
    limit: usize,
    truncated: bool,
}

impl OutputBuffer {
    fn new(limit: usize) -> OutputBuffer {
        OutputBuffer { bytes: VecDeque::new(), limit, truncated: false }
    }

    /// Appends `chunk`, dropping the oldest bytes beyond the limit.
    fn push(&mut self, chunk: &[u8]) {
        let mut cut = false;
        let chunk = if chunk.len() > self.limit {
            cut = !chunk.is_empty();
            self.bytes.clear();
            &chunk[chunk.len() - self.limit..]
        } else {
            chunk
        };
        self.bytes.extend(chunk);
        let excess = self.bytes.len().saturating_sub(self.limit);
        if excess > 0 {
            self.bytes.drain(..excess);
            cut = true;
        }
        if cut {
            self.truncated = true;
            // Start on a character: drop the rest of a character cut in two (a
            // UTF-8 character has at most three continuation bytes).
            for _ in 0..3 {
                if !self.bytes.front().is_some_and(|&byte| is_continuation(byte)) {
                    break;
                }
                self.bytes.pop_front();
            }
        }
    }

    /// The text kept and whether anything was dropped. Invalid bytes read as
    /// U+FFFD; while the command runs (`finished` false), an incomplete character
    /// at the end is left out, since its remaining bytes may still come.
    fn snapshot(&mut self, finished: bool) -> (String, bool) {
        let bytes = self.bytes.make_contiguous();
        let mut text = String::with_capacity(bytes.len());
        let mut chunks = bytes.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            text.push_str(chunk.valid());
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            let pending = !finished && chunks.peek().is_none() && is_incomplete_character(invalid);
            if !pending {
                text.push(char::REPLACEMENT_CHARACTER);
            }
        }
        let mut truncated = self.truncated;
        // Replacement characters are longer than the bytes they stand for.
        if text.len() > self.limit {
            let mut start = text.len() - self.limit;
            while !text.is_char_boundary(start) {
                start += 1;
            }
            text.drain(..start);
            truncated = true;
        }
        (text, truncated)
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// Whether `bytes` are the start of a valid character that lacks its last bytes.
fn is_incomplete_character(bytes: &[u8]) -> bool {
    matches!(std::str::from_utf8(bytes), Err(error) if error.error_len().is_none())
}

/// Checks `command`, `args` and `env` for what no process can be started with.
fn check_command(request: &v1::CreateTerminalRequest) -> Result<(), ErrorObject> {
    if request.command.is_empty() {
        return Err(invalid("$.params.command", "a non-empty command", ""));
    }
    if request.command.contains('\0') {
        return Err(invalid("$.params.command", "a command without NUL bytes", &request.command));
    }
    for (i, arg) in request.args.iter().flatten().enumerate() {
        if arg.contains('\0') {
            return Err(invalid(&format!("$.params.args[{i}]"), "an argument without NUL bytes", arg));
        }
    }
    for (i, variable) in request.env.iter().flatten().enumerate() {
        let name = &variable.name;
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            let expected = "a non-empty variable name without `=` or NUL bytes";
            return Err(invalid(&format!("$.params.env[{i}].name"), expected, name));
        }
        if variable.value.contains('\0') {
            return Err(invalid(&format!("$.params.env[{i}].value"), "a value without NUL bytes", &variable.value));
        }
    }
    Ok(())
}

/// The `-32602` reply for a `cwd` the roots refuse.
fn cwd_error(error: &FsError, cwd: &str) -> ErrorObject {
    match error {
        FsError::NotAbsolute { .. } => invalid(CWD_PATH, "an absolute path", cwd),
        FsError::ParentComponent { .. } => invalid(CWD_PATH, "a path without .. components", cwd),
        FsError::NulByte { .. } => invalid(CWD_PATH, "a path without NUL bytes", cwd),
        FsError::OutsideRoots { roots, .. } => {
            let roots: Vec<String> = roots.iter().map(|root| root.display().to_string()).collect();
            invalid(CWD_PATH, &format!("a directory inside the allowed roots ({})", roots.join(", ")), cwd)
        }
        FsError::NotFound { .. } => invalid(CWD_PATH, "an existing directory", cwd),
        other => ErrorObject::internal_error(format!("cannot use `{cwd}` as the working directory: {other}")),
    }
}

fn invalid(path: &str, expected: &str, found: &str) -> ErrorObject {
    ErrorObject::invalid_params(path, expected, found)
}

/// `-32002` with `data: {"terminalId": …}`.
fn unknown_terminal(id: &v1::TerminalId) -> ErrorObject {
    let error = ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, format!("terminal not found: `{id}`"));
    match serde_json::value::to_raw_value(&serde_json::json!({ "terminalId": id.as_str() })) {
        Ok(data) => error.with_data(data),
        Err(_) => error,
    }
}

/// The task that owned the process ended without recording an exit (it panicked
/// or was aborted).
fn process_lost(id: &v1::TerminalId) -> ErrorObject {
    ErrorObject::internal_error(format!("the process of terminal `{id}` was lost before it exited"))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::v1::*;
    use std::future::Future;
    use std::sync::atomic::AtomicUsize;
    use tokio::sync::mpsc;

    const WAIT: Duration = Duration::from_secs(10);

    async fn bounded<T>(future: impl Future<Output = T>) -> T {
        tokio::time::timeout(WAIT, future).await.expect("timed out")
    }

    /// A directory under the system temp dir, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("agentproto-terminal-test-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn text(&self) -> String {
            self.0.to_str().unwrap().to_owned()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const SESSION: &str = "s1";

    fn sh(script: &str) -> CreateTerminalRequest {
        let mut request = CreateTerminalRequest::new(SESSION, "sh");
        request.args = Some(vec!["-c".to_owned(), script.to_owned()]);
        request
    }

    fn sleep_30() -> CreateTerminalRequest {
        let mut request = CreateTerminalRequest::new(SESSION, "sleep");
        request.args = Some(vec!["30".to_owned()]);
        request
    }

    async fn create(terminals: &Terminals, request: CreateTerminalRequest) -> TerminalId {
        bounded(terminals.create(&request)).await.unwrap().terminal_id
    }

    async fn output(terminals: &Terminals, id: &TerminalId) -> Result<TerminalOutputResponse, ErrorObject> {
        bounded(terminals.output(&TerminalOutputRequest::new(SESSION, id.clone()))).await
    }

    async fn wait(terminals: &Terminals, id: &TerminalId) -> Result<WaitForTerminalExitResponse, ErrorObject> {
        bounded(terminals.wait_for_exit(&WaitForTerminalExitRequest::new(SESSION, id.clone()))).await
    }

    async fn kill(terminals: &Terminals, id: &TerminalId) -> Result<KillTerminalResponse, ErrorObject> {
        bounded(terminals.kill(&KillTerminalRequest::new(SESSION, id.clone()))).await
    }

    async fn release(terminals: &Terminals, id: &TerminalId) -> Result<ReleaseTerminalResponse, ErrorObject> {
        bounded(terminals.release(&ReleaseTerminalRequest::new(SESSION, id.clone()))).await
    }

    /// Runs `request` to its end and returns the final output.
    async fn run(terminals: &Terminals, request: CreateTerminalRequest) -> TerminalOutputResponse {
        let id = create(terminals, request).await;
        wait(terminals, &id).await.unwrap();
        let response = output(terminals, &id).await.unwrap();
        release(terminals, &id).await.unwrap();
        response
    }

    fn exited(code: u32) -> MaybeUndefined<TerminalExitStatus> {
        MaybeUndefined::Value(TerminalExitStatus {
            exit_code: MaybeUndefined::Value(code),
            signal: MaybeUndefined::Null,
            meta: MaybeUndefined::Undefined,
        })
    }

    fn data(error: &ErrorObject) -> serde_json::Value {
        serde_json::from_str(error.data.as_ref().map_or("null", |data| data.get())).unwrap()
    }

    fn assert_invalid(error: &ErrorObject, path: &str, expected_prefix: &str) {
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
        let data = data(error);
        assert_eq!(data["path"], path, "{data}");
        assert!(data["expected"].as_str().unwrap().starts_with(expected_prefix), "{data}");
    }

    fn assert_not_found(error: &ErrorObject, id: &TerminalId) {
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND, "{error:?}");
        assert_eq!(data(error), serde_json::json!({ "terminalId": id.as_str() }));
    }

    fn buffer(limit: usize, chunks: &[&[u8]]) -> OutputBuffer {
        let mut buffer = OutputBuffer::new(limit);
        for chunk in chunks {
            buffer.push(chunk);
        }
        buffer
    }

    #[test]
    fn output_buffer_keeps_the_tail_on_a_character_boundary() {
        assert_eq!(buffer(8, &[b"abc", b"def"]).snapshot(true), ("abcdef".to_owned(), false));
        assert_eq!(buffer(6, &[b"abc", b"def"]).snapshot(true), ("abcdef".to_owned(), false));
        assert_eq!(buffer(4, &[b"abc", b"def"]).snapshot(true), ("cdef".to_owned(), true));
        // One chunk larger than the limit.
        assert_eq!(buffer(2, &[b"abcdef"]).snapshot(true), ("ef".to_owned(), true));
        // "éé" is C3 A9 C3 A9: the last three bytes start inside the first é.
        assert_eq!(buffer(3, &["éé".as_bytes()]).snapshot(true), ("é".to_owned(), true));
        assert_eq!(buffer(3, &["aé".as_bytes(), "é".as_bytes()]).snapshot(true), ("é".to_owned(), true));
        // A four-byte character cut after its first byte loses its three others.
        assert_eq!(buffer(4, &["x😀".as_bytes(), b"y"]).snapshot(true), ("y".to_owned(), true));
        // Once truncated, always truncated.
        let mut b = buffer(2, &[b"abc"]);
        b.push(b"");
        assert!(b.snapshot(true).1);
    }

    #[test]
    fn output_buffer_with_limit_zero_keeps_nothing() {
        assert_eq!(buffer(0, &[]).snapshot(true), (String::new(), false));
        assert_eq!(buffer(0, &[b"", b""]).snapshot(true), (String::new(), false));
        assert_eq!(buffer(0, &[b"a"]).snapshot(true), (String::new(), true));
    }

    #[test]
    fn snapshot_holds_back_an_incomplete_character_while_running() {
        let mut b = buffer(16, &[b"a\xC3"]);
        assert_eq!(b.snapshot(false), ("a".to_owned(), false));
        assert_eq!(b.snapshot(true), ("a\u{FFFD}".to_owned(), false));
        b.push(b"\xA9");
        assert_eq!(b.snapshot(false), ("aé".to_owned(), false));
        // Bytes that can never be a character are replaced at once.
        assert_eq!(buffer(16, &[b"a\xFFb\xC3"]).snapshot(false), ("a\u{FFFD}b".to_owned(), false));
        // Replacement characters never push the text past the limit.
        let (text, truncated) = buffer(4, &[b"\xFF\xFF\xFF\xFF"]).snapshot(true);
        assert_eq!((text.as_str(), truncated), ("\u{FFFD}", true));
    }

    #[tokio::test]
    async fn runs_a_command_and_captures_its_output() {
        let terminals = Terminals::new();
        let id = create(&terminals, sh("printf hi")).await;
        assert_eq!(terminals.len(), 1);
        let exit = wait(&terminals, &id).await.unwrap();
        assert_eq!((exit.exit_code, exit.signal), (MaybeUndefined::Value(0), MaybeUndefined::Null));
        let response = output(&terminals, &id).await.unwrap();
        assert_eq!((response.output.as_str(), response.truncated), ("hi", false));
        assert_eq!(response.exit_status, exited(0));
        // Waiting again answers the same.
        assert_eq!(wait(&terminals, &id).await.unwrap().exit_code, MaybeUndefined::Value(0));
        release(&terminals, &id).await.unwrap();
        assert!(terminals.is_empty());
    }

    #[tokio::test]
    async fn reports_exit_codes() {
        let terminals = Terminals::new();
        for code in [1, 3, 255] {
            let id = create(&terminals, sh(&format!("exit {code}"))).await;
            assert_eq!(wait(&terminals, &id).await.unwrap().exit_code, MaybeUndefined::Value(code));
            assert_eq!(output(&terminals, &id).await.unwrap().exit_status, exited(code));
        }
        let id = create(&terminals, sh("kill -TERM $$")).await;
        let exit = wait(&terminals, &id).await.unwrap();
        assert_eq!((exit.exit_code, exit.signal.value().map(String::as_str)), (MaybeUndefined::Null, Some("SIGTERM")));
    }

    #[tokio::test]
    async fn captures_stderr_into_the_same_buffer() {
        let terminals = Terminals::new();
        let response = run(&terminals, sh("printf out; printf err >&2")).await;
        // The two pipes are read concurrently, so only their contents are certain.
        assert_eq!(response.output.len(), 6, "{:?}", response.output);
        assert!(response.output.contains("out") && response.output.contains("err"), "{:?}", response.output);
    }

    #[tokio::test]
    async fn passes_args_env_and_cwd() {
        let dir = TempDir::new();
        let terminals = Terminals::new();
        let mut request = sh(r#"printf '%s|%s|' "$AGENTPROTO_TEST" "$1"; pwd"#);
        request.args.as_mut().unwrap().extend(["name".to_owned(), "two words".to_owned()]);
        request.env = Some(vec![EnvVariable::new("AGENTPROTO_TEST", "value=1")]);
        request.cwd = MaybeUndefined::Value(dir.text());
        let response = run(&terminals, request).await;
        let canonical = std::fs::canonicalize(&dir.0).unwrap();
        let pwd = response.output.rsplit('|').next().unwrap().trim_end();
        assert!(response.output.starts_with("value=1|two words|"), "{:?}", response.output);
        assert_eq!(std::fs::canonicalize(pwd).unwrap(), canonical);
    }

    #[tokio::test]
    async fn kill_stops_a_running_command_and_keeps_the_terminal() {
        let terminals = Arc::new(Terminals::new());
        let id = create(&terminals, sleep_30()).await;
        let running = output(&terminals, &id).await.unwrap();
        assert!(running.exit_status.is_undefined());
        let waiter = {
            let (terminals, id) = (terminals.clone(), id.clone());
            tokio::spawn(async move { wait(&terminals, &id).await })
        };
        kill(&terminals, &id).await.unwrap();
        let exit = bounded(waiter).await.unwrap().unwrap();
        assert_eq!((exit.exit_code, exit.signal.value().map(String::as_str)), (MaybeUndefined::Null, Some("SIGKILL")));
        // Still valid: output, wait and kill all answer.
        let after = output(&terminals, &id).await.unwrap();
        assert_eq!(after.exit_status.value().and_then(|s| s.signal.value()).map(String::as_str), Some("SIGKILL"));
        assert_eq!(wait(&terminals, &id).await.unwrap().signal.value().map(String::as_str), Some("SIGKILL"));
        kill(&terminals, &id).await.unwrap();
        release(&terminals, &id).await.unwrap();
    }

    #[tokio::test]
    async fn truncates_from_the_start_at_a_character_boundary() {
        let terminals = Terminals::new();
        let mut request = sh("printf 'a\\303\\251\\303\\251'"); // "aéé", 5 bytes
        request.output_byte_limit = MaybeUndefined::Value(3);
        let response = run(&terminals, request).await;
        assert_eq!((response.output.as_str(), response.truncated), ("é", true));

        let mut request = sh("printf abc");
        request.output_byte_limit = MaybeUndefined::Value(3);
        let response = run(&terminals, request).await;
        assert_eq!((response.output.as_str(), response.truncated), ("abc", false));

        let mut request = sh("i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done");
        request.output_byte_limit = MaybeUndefined::Value(100);
        let response = run(&terminals, request).await;
        assert!(response.truncated);
        assert!(response.output.len() <= 100 && response.output.len() > 90, "{:?}", response.output);
        assert!(response.output.ends_with("\nline1999\n"), "{:?}", response.output);
    }

    #[tokio::test]
    async fn output_limits_default_and_cap() {
        let terminals = Terminals::new().with_default_output_limit(2).with_max_output_limit(4);
        let response = run(&terminals, sh("printf abcdef")).await;
        assert_eq!((response.output.as_str(), response.truncated), ("ef", true));
        let mut request = sh("printf abcdef");
        request.output_byte_limit = MaybeUndefined::Value(u64::MAX);
        let response = run(&terminals, request).await;
        assert_eq!((response.output.as_str(), response.truncated), ("cdef", true));
    }

    #[tokio::test]
    async fn release_kills_and_forgets_the_terminal() {
        let terminals = Terminals::new();
        let id = create(&terminals, sleep_30()).await;
        // A wait that is under way (polled once: it has found the terminal) ...
        let request = WaitForTerminalExitRequest::new(SESSION, id.clone());
        let mut waiter = pin!(terminals.wait_for_exit(&request));
        assert!(futures::poll!(waiter.as_mut()).is_pending());
        release(&terminals, &id).await.unwrap();
        assert!(terminals.is_empty());
        // ... sees the kill.
        let exit = bounded(waiter).await.unwrap();
        assert_eq!(exit.signal.value().map(String::as_str), Some("SIGKILL"));
        assert_not_found(&output(&terminals, &id).await.unwrap_err(), &id);
        assert_not_found(&wait(&terminals, &id).await.unwrap_err(), &id);
        assert_not_found(&kill(&terminals, &id).await.unwrap_err(), &id);
        assert_not_found(&release(&terminals, &id).await.unwrap_err(), &id);
    }

    #[tokio::test]
    async fn unknown_terminal_and_other_session_are_not_found() {
        let terminals = Terminals::new();
        let nope = TerminalId::from("nope");
        let error = output(&terminals, &nope).await.unwrap_err();
        assert_not_found(&error, &nope);
        assert_eq!(error.message, "terminal not found: `nope`");
        let id = create(&terminals, sh("printf x")).await;
        let other = TerminalOutputRequest::new("s2", id.clone());
        assert_not_found(&bounded(terminals.output(&other)).await.unwrap_err(), &id);
        let other = ReleaseTerminalRequest::new("s2", id.clone());
        assert_not_found(&bounded(terminals.release(&other)).await.unwrap_err(), &id);
        assert_eq!(terminals.len(), 1);
        release(&terminals, &id).await.unwrap();
    }

    #[tokio::test]
    async fn fresh_ids() {
        let terminals = Terminals::new();
        let a = create(&terminals, sh("true")).await;
        let b = create(&terminals, sh("true")).await;
        assert_ne!(a, b);
        release(&terminals, &a).await.unwrap();
        let c = create(&terminals, sh("true")).await;
        assert!(c != a && c != b);
        release(&terminals, &b).await.unwrap();
        release(&terminals, &c).await.unwrap();
    }

    #[tokio::test]
    async fn cwd_is_confined_to_the_roots() {
        let dir = TempDir::new();
        std::fs::create_dir(dir.0.join("root")).unwrap();
        std::fs::create_dir(dir.0.join("root/sub")).unwrap();
        std::fs::write(dir.0.join("root/file"), "").unwrap();
        let root = std::fs::canonicalize(dir.0.join("root")).unwrap();
        let terminals = Terminals::new().with_roots(FsRoots::new([&root]).unwrap());
        let refused = |cwd: &str| {
            let mut request = sh("pwd");
            request.cwd = MaybeUndefined::Value(cwd.to_owned());
            request
        };
        let cases = [
            (dir.text(), "a directory inside the allowed roots ("),
            ("/".to_owned(), "a directory inside the allowed roots ("),
            ("root".to_owned(), "an absolute path"),
            (format!("{}/sub/..", root.display()), "a path without .. components"),
            (format!("{}/missing", root.display()), "an existing directory"),
            (format!("{}/file", root.display()), "a directory"),
        ];
        for (cwd, expected) in cases {
            let error = bounded(terminals.create(&refused(&cwd))).await.unwrap_err();
            assert_invalid(&error, CWD_PATH, expected);
            assert_eq!(data(&error)["found"], cwd.as_str());
        }
        assert!(terminals.is_empty());
        // Inside the roots, and the default: the first root.
        let response = run(&terminals, refused(&format!("{}/sub", root.display()))).await;
        assert_eq!(response.output.trim_end(), root.join("sub").to_str().unwrap());
        let response = run(&terminals, sh("pwd")).await;
        assert_eq!(response.output.trim_end(), root.to_str().unwrap());
    }

    #[tokio::test]
    async fn cwd_must_be_absolute_without_roots() {
        let terminals = Terminals::new();
        let mut request = sh("pwd");
        request.cwd = MaybeUndefined::Value("relative".to_owned());
        assert_invalid(&bounded(terminals.create(&request)).await.unwrap_err(), CWD_PATH, "an absolute path");
        // `null` reads as absent.
        request.cwd = MaybeUndefined::Null;
        let response = run(&terminals, request).await;
        assert_eq!(response.exit_status, exited(0));
    }

    #[tokio::test]
    async fn invalid_command_fields_are_refused() {
        let terminals = Terminals::new();
        let error = bounded(terminals.create(&CreateTerminalRequest::new(SESSION, ""))).await.unwrap_err();
        assert_invalid(&error, "$.params.command", "a non-empty command");
        let mut request = sh("true");
        request.args.as_mut().unwrap().push("a\0b".to_owned());
        let error = bounded(terminals.create(&request)).await.unwrap_err();
        assert_invalid(&error, "$.params.args[2]", "an argument without NUL bytes");
        let mut request = sh("true");
        request.env = Some(vec![EnvVariable::new("OK", "1"), EnvVariable::new("A=B", "1")]);
        let error = bounded(terminals.create(&request)).await.unwrap_err();
        assert_invalid(&error, "$.params.env[1].name", "a non-empty variable name");
        assert!(terminals.is_empty());
    }

    #[tokio::test]
    async fn a_command_that_cannot_start_is_an_internal_error() {
        let terminals = Terminals::new();
        let request = CreateTerminalRequest::new(SESSION, "/nonexistent/agentproto-no-such-command");
        let error = bounded(terminals.create(&request)).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert!(error.message.contains("/nonexistent/agentproto-no-such-command"), "{}", error.message);
        assert!(terminals.is_empty());
    }

    #[test]
    fn terminal_tool_call_content_encoding() {
        let content = ToolCallContent::Terminal(Terminal::new("term-7"));
        assert_eq!(serde_json::to_string(&content).unwrap(), r#"{"type":"terminal","terminalId":"term-7"}"#);
    }

    // --- Agent and client over an in-memory pair ---------------------------

    /// What the test agent's prompt handler observed.
    #[derive(Debug)]
    struct Ran {
        terminal_id: TerminalId,
        output: String,
        truncated: bool,
        exit_code: MaybeUndefined<u32>,
    }

    struct TestAgent {
        ran: mpsc::UnboundedSender<Ran>,
    }

    fn failed(error: AcpError) -> ErrorObject {
        error.as_rpc().cloned().unwrap_or_else(|| ErrorObject::internal_error(error.to_string()))
    }

    impl Agent for TestAgent {
        async fn initialize(&self, _: AgentContext, _: InitializeRequest) -> Result<InitializeResponse, ErrorObject> {
            Ok(InitializeResponse::new(PROTOCOL_VERSION))
        }

        async fn new_session(&self, _: AgentContext, _: NewSessionRequest) -> Result<NewSessionResponse, ErrorObject> {
            Ok(NewSessionResponse::new("sess-1"))
        }

        async fn prompt(&self, cx: AgentContext, params: PromptRequest) -> Result<PromptResponse, ErrorObject> {
            let session = params.session_id.clone();
            let text = match params.prompt.first() {
                Some(ContentBlock::Text(text)) => text.text.clone(),
                _ => String::new(),
            };
            if text == "drop" {
                let mut request = CreateTerminalRequest::new(session, "sleep");
                request.args = Some(vec!["30".to_owned()]);
                let terminal = TerminalHandle::create(cx.peer(), request).await.map_err(failed)?;
                drop(terminal);
                return Ok(PromptResponse::new(StopReason::EndTurn));
            }
            let mut request = CreateTerminalRequest::new(session.clone(), "sh");
            request.args = Some(vec!["-c".to_owned(), "printf 'hello from a terminal'".to_owned()]);
            let terminal = TerminalHandle::create(cx.peer(), request).await.map_err(failed)?;
            assert_eq!(terminal.session_id(), &session);
            let mut call = ToolCall::new("call-1", "Greet");
            call.kind = Some(ToolKind::Execute);
            call.content = Some(vec![terminal.as_tool_call_content()]);
            let update = SessionNotification::new(session.clone(), SessionUpdate::ToolCall(call));
            cx.peer().session_update(update).await.map_err(failed)?;
            let exit = terminal.wait_for_exit().await.map_err(failed)?;
            let output = terminal.output().await.map_err(failed)?;
            let terminal_id = terminal.id().clone();
            terminal.release().await.map_err(failed)?;
            let _ = self.ran.send(Ran {
                terminal_id,
                output: output.output,
                truncated: output.truncated,
                exit_code: exit.exit_code,
            });
            Ok(PromptResponse::new(StopReason::EndTurn))
        }
    }

    struct TestClient {
        terminals: Arc<Terminals>,
        updates: mpsc::UnboundedSender<SessionUpdate>,
        released: mpsc::UnboundedSender<TerminalId>,
    }

    impl Client for TestClient {
        async fn request_permission(
            &self,
            _: ClientContext,
            _: RequestPermissionRequest,
        ) -> Result<RequestPermissionResponse, ErrorObject> {
            Err(ErrorObject::internal_error("not used in this test"))
        }

        async fn session_update(&self, _: ClientContext, params: SessionNotification) {
            let _ = self.updates.send(params.update);
        }

        async fn create_terminal(
            &self,
            _: ClientContext,
            params: CreateTerminalRequest,
        ) -> Result<CreateTerminalResponse, ErrorObject> {
            self.terminals.create(&params).await
        }

        async fn terminal_output(
            &self,
            _: ClientContext,
            params: TerminalOutputRequest,
        ) -> Result<TerminalOutputResponse, ErrorObject> {
            self.terminals.output(&params).await
        }

        async fn wait_for_terminal_exit(
            &self,
            _: ClientContext,
            params: WaitForTerminalExitRequest,
        ) -> Result<WaitForTerminalExitResponse, ErrorObject> {
            self.terminals.wait_for_exit(&params).await
        }

        async fn kill_terminal(
            &self,
            _: ClientContext,
            params: KillTerminalRequest,
        ) -> Result<KillTerminalResponse, ErrorObject> {
            self.terminals.kill(&params).await
        }

        async fn release_terminal(
            &self,
            _: ClientContext,
            params: ReleaseTerminalRequest,
        ) -> Result<ReleaseTerminalResponse, ErrorObject> {
            let response = self.terminals.release(&params).await;
            let _ = self.released.send(params.terminal_id);
            response
        }
    }

    struct Pair {
        agent: AgentConnection<V1>,
        session: SessionId,
        terminals: Arc<Terminals>,
        ran: mpsc::UnboundedReceiver<Ran>,
        updates: mpsc::UnboundedReceiver<SessionUpdate>,
        released: mpsc::UnboundedReceiver<TerminalId>,
    }

    /// An agent and a client connected in memory, initialized (the client
    /// advertising `terminal`), with one session.
    async fn pair() -> Pair {
        let (ran_tx, ran) = mpsc::unbounded_channel();
        let (updates_tx, updates) = mpsc::unbounded_channel();
        let (released_tx, released) = mpsc::unbounded_channel();
        let terminals = Arc::new(Terminals::new());
        let (agent_end, client_end) = tokio::io::duplex(64 * 1024);
        let (agent_read, agent_write) = tokio::io::split(agent_end);
        let (client_read, client_write) = tokio::io::split(client_end);
        let (agent_connection, _client) =
            connect_agent(TestAgent { ran: ran_tx }, agent_read, agent_write, AcpOptions::default());
        let client = TestClient { terminals: terminals.clone(), updates: updates_tx, released: released_tx };
        let (client_connection, agent) = connect_client(client, client_read, client_write, AcpOptions::default());
        tokio::spawn(agent_connection.run());
        tokio::spawn(client_connection.run());

        let mut initialize = InitializeRequest::new(PROTOCOL_VERSION);
        initialize.client_capabilities.terminal = true;
        bounded(agent.initialize(initialize)).await.unwrap();
        let session = bounded(agent.new_session(NewSessionRequest::new("/", Vec::new()))).await.unwrap().session_id;
        Pair { agent, session, terminals, ran, updates, released }
    }

    fn prompt(session: &SessionId, text: &str) -> PromptRequest {
        PromptRequest::new(session.clone(), vec![ContentBlock::Text(TextContent::new(text))])
    }

    #[tokio::test]
    async fn agent_runs_a_command_through_the_client() {
        let mut pair = pair().await;
        let response = bounded(pair.agent.prompt(prompt(&pair.session, "run"))).await.unwrap();
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        let ran = bounded(pair.ran.recv()).await.unwrap();
        assert_eq!(ran.output, "hello from a terminal");
        assert!(!ran.truncated);
        assert_eq!(ran.exit_code, MaybeUndefined::Value(0));
        // The tool call embedded the terminal, and the terminal was released.
        let update = bounded(pair.updates.recv()).await.unwrap();
        let SessionUpdate::ToolCall(call) = update else { panic!("expected a tool call, got {update:?}") };
        assert_eq!(call.content, Some(vec![ToolCallContent::Terminal(Terminal::new(ran.terminal_id.clone()))]));
        assert_eq!(bounded(pair.released.recv()).await.unwrap(), ran.terminal_id);
        assert!(pair.terminals.is_empty());
    }

    #[tokio::test]
    async fn a_dropped_handle_is_released() {
        let mut pair = pair().await;
        let response = bounded(pair.agent.prompt(prompt(&pair.session, "drop"))).await.unwrap();
        assert_eq!(response.stop_reason, StopReason::EndTurn);
        let released = bounded(pair.released.recv()).await.unwrap();
        assert!(pair.terminals.is_empty());
        let error = bounded(pair.terminals.output(&TerminalOutputRequest::new(pair.session.clone(), released.clone())))
            .await
            .unwrap_err();
        assert_not_found(&error, &released);
    }
}
