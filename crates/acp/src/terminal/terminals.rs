//! [`Terminals`]: the client side, running commands as child processes.

use std::collections::HashMap;
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

use agentproto_process::Group;

use crate::fs::{FsError, FsRoots};
use crate::v1::{self};

use super::output::OutputBuffer;

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
pub(super) const CWD_PATH: &str = "$.params.cwd";

/// The client's terminals: answers `terminal/create`, `terminal/output`,
/// `terminal/wait_for_exit`, `terminal/kill` and `terminal/release` by running
/// real processes (see the [module documentation](crate::terminal)).
///
/// Memory is bounded per terminal by its output limit; a terminal's buffer is
/// freed when it is released.
///
/// Each command runs in a process group of its own, and the whole group ends
/// with the command: when it exits (whatever it left running in the background
/// goes too), when it is killed or released, and when the `Terminals` is
/// dropped.
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
        agentproto_process::isolate(command.as_std_mut());
        let child = command
            .spawn()
            .map_err(|error| ErrorObject::internal_error(format!("cannot start `{}`: {error}", request.command)))?;
        let Some(pid) = child.id() else {
            return Err(ErrorObject::internal_error(format!(
                "`{}` exited before it could be watched",
                request.command
            )));
        };
        let group = Group::new(pid);

        let output = Arc::new(Mutex::new(OutputBuffer::new(limit)));
        let (exit_sender, exit) = watch::channel(None);
        let kill = CancellationToken::new();
        let task = tokio::spawn(supervise(child, group, output.clone(), kill.clone(), exit_sender)).abort_handle();
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
            // Dropping the task drops its `Group`, which kills the command's group.
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

/// Owns the child and its group: copies its output into the buffer, kills the
/// group when `kill` fires or the child exits, and records the exit once the
/// output has been read.
async fn supervise(
    mut child: Child,
    mut group: Group,
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
        // The group goes either way: what the command started must not outlive
        // it. Right after the leader's exit, so its id cannot have been reused
        // by an unrelated group yet.
        group.end();
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
