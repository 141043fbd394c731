//! The raw transport under both checks: a peer's byte streams as an outbox of
//! lines we write verbatim (so a check can send bad bytes on purpose) and an
//! inbox of framed, envelope-decoded messages, plus the child processes.
//!
//! Framing and the envelope come from `agentproto-jsonrpc` (`FrameReader` with a
//! size bound, `Message::decode_with`); nothing here knows ACP method names.

use std::collections::VecDeque;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_jsonrpc::frame::{Frame, FrameLimits, FrameReader};
use agentproto_jsonrpc::{DecodeOptions, EnvelopeError, Message};
use agentproto_process::Group;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How much of a bad line is kept for a report.
const EXCERPT: usize = 160;

/// One thing that arrived from the peer.
#[derive(Debug)]
pub(crate) enum Wire {
    /// A JSON-RPC message (params and results still raw).
    Message(Message),
    /// A line that is not a JSON-RPC message.
    Invalid {
        /// The start of the line, lossily decoded.
        excerpt: String,
        /// Why it is not a message.
        error: EnvelopeError,
    },
    /// A line over the size bound, discarded.
    Oversize(u64),
    /// The peer closed its side (end of input).
    Closed,
    /// Reading failed.
    Failed(String),
}

/// The start of `bytes` as text, for a report.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(EXCERPT)]).into_owned();
    if bytes.len() > EXCERPT {
        format!("{text}…")
    } else {
        text
    }
}

/// The receiving half: decoded lines in arrival order.
#[derive(Debug)]
pub(crate) struct Inbox {
    rx: mpsc::Receiver<Wire>,
    ended: bool,
}

impl Inbox {
    /// The next arrival, or `None` if nothing arrives before `deadline`. After
    /// [`Wire::Closed`] or [`Wire::Failed`] every call returns `Closed` at once.
    pub(crate) async fn next_until(&mut self, deadline: Instant) -> Option<Wire> {
        if self.ended {
            return Some(Wire::Closed);
        }
        match tokio::time::timeout_at(deadline, self.rx.recv()).await {
            Err(_) => None,
            Ok(None) => {
                self.ended = true;
                Some(Wire::Closed)
            }
            Ok(Some(wire)) => {
                if matches!(wire, Wire::Closed | Wire::Failed(_)) {
                    self.ended = true;
                }
                Some(wire)
            }
        }
    }
}

type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// The sending half: whole lines, written and flushed one at a time. Clones
/// share the stream.
#[derive(Clone)]
pub(crate) struct Outbox {
    writer: Arc<tokio::sync::Mutex<Option<Writer>>>,
    /// How long one line may take to be written (a peer that stops reading
    /// would otherwise block the check forever).
    write_timeout: Duration,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Outbox")
    }
}

impl Outbox {
    /// Writes `line` and a newline, then flushes; fails if that takes longer
    /// than the write timeout.
    pub(crate) async fn send(&self, line: &[u8]) -> io::Result<()> {
        let write = async {
            let mut guard = self.writer.lock().await;
            let writer =
                guard.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "closed by the checker"))?;
            let mut bytes = Vec::with_capacity(line.len() + 1);
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
            writer.write_all(&bytes).await?;
            writer.flush().await
        };
        match tokio::time::timeout(self.write_timeout, write).await {
            Ok(result) => result,
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the peer read nothing for {:?} (its input is full)", self.write_timeout),
            )),
        }
    }

    /// Closes the stream (the peer sees end of input).
    pub(crate) async fn close(&self) {
        if let Some(mut writer) = self.writer.lock().await.take() {
            let _ = writer.shutdown().await;
        }
    }
}

/// Wraps a pair of byte streams; a task reads and decodes `reader` until it ends.
pub(crate) fn link(
    reader: impl AsyncRead + Send + Unpin + 'static,
    writer: impl AsyncWrite + Send + Unpin + 'static,
    max_message_size: usize,
    write_timeout: Duration,
) -> (Outbox, Inbox) {
    let (tx, rx) = mpsc::channel(256);
    tokio::spawn(async move {
        let limits = FrameLimits { max_message_size, ..FrameLimits::default() };
        let mut frames = FrameReader::with_limits(reader, limits);
        let options = DecodeOptions::default().allow_null_id(true);
        loop {
            let wire = match frames.next_frame().await {
                Ok(Some(Frame::Line(line))) => match Message::decode_with(line, &options) {
                    Ok(message) => Wire::Message(message),
                    Err(error) => Wire::Invalid { excerpt: excerpt(line), error },
                },
                Ok(Some(Frame::Oversize(line))) => Wire::Oversize(line.len),
                Ok(None) => Wire::Closed,
                Err(e) => Wire::Failed(e.to_string()),
            };
            let last = matches!(wire, Wire::Closed | Wire::Failed(_));
            if tx.send(wire).await.is_err() || last {
                return;
            }
        }
    });
    let writer: Writer = Box::new(writer);
    let outbox = Outbox { writer: Arc::new(tokio::sync::Mutex::new(Some(writer))), write_timeout };
    (outbox, Inbox { rx, ended: false })
}

/// What to do with a child's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StderrMode {
    /// Keep its last lines for the report (the default).
    #[default]
    Capture,
    /// Pass it through to this process's stderr.
    Inherit,
    /// Discard it.
    Discard,
}

/// How many lines of a child's output are kept.
const TAIL_LINES: usize = 20;

/// The last lines of a stream, filled by a background task.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.0.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(line);
        }
    }

    pub(crate) fn lines(&self) -> Vec<String> {
        self.0.lock().map(|lines| lines.iter().cloned().collect()).unwrap_or_default()
    }

    /// Reads `stream` line by line into the tail until it ends.
    pub(crate) fn drain(&self, stream: impl AsyncRead + Send + Unpin + 'static) {
        let tail = self.clone();
        tokio::spawn(async move {
            let limits = FrameLimits { max_message_size: 4096, read_chunk_size: 4096 };
            let mut frames = FrameReader::with_limits(stream, limits);
            while let Ok(Some(frame)) = frames.next_frame().await {
                match frame {
                    Frame::Line(line) => tail.push(String::from_utf8_lossy(line).into_owned()),
                    Frame::Oversize(line) => tail.push(format!("[a line of {} bytes]", line.len)),
                }
            }
        });
    }
}

/// A program a check started, in a process group of its own: whatever it
/// starts in turn (a launcher's real agent, a client's agent) is ended with it
/// when the check is done with it, or when the `Program` is dropped.
#[derive(Debug)]
pub(crate) struct Program {
    /// Declared first, so it is ended before `child` is reaped on a drop.
    group: Group,
    child: Child,
    stderr: Tail,
}

/// How a program ended when a check was done with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited by itself within the grace period.
    Exited(ExitStatus),
    /// It was still running and was killed.
    Killed,
}

fn command(argv: &[String], stderr: StderrMode) -> io::Result<Command> {
    let Some((program, args)) = argv.split_first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty command line"));
    };
    let mut command = Command::new(program);
    command.args(args).kill_on_drop(true).stderr(match stderr {
        StderrMode::Capture => Stdio::piped(),
        StderrMode::Inherit => Stdio::inherit(),
        StderrMode::Discard => Stdio::null(),
    });
    agentproto_process::isolate(command.as_std_mut());
    // Started from the runtime's worker threads, which live as long as the check:
    // if the check is killed outright, the kernel kills its children.
    agentproto_process::die_with_parent(command.as_std_mut());
    Ok(command)
}

impl Program {
    fn new(child: Child, stderr: Tail) -> io::Result<Program> {
        let pid = child.id().ok_or_else(|| io::Error::other("the child exited at once"))?;
        Ok(Program { group: Group::new(pid), child, stderr })
    }
}

impl Program {
    /// Starts `argv` with its stdin and stdout as an ACP link.
    pub(crate) fn spawn_linked(
        argv: &[String],
        stderr: StderrMode,
        max_message_size: usize,
        write_timeout: Duration,
    ) -> io::Result<(Program, Outbox, Inbox)> {
        let mut child = command(argv, stderr)?.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let tail = Tail::default();
        if let Some(err) = child.stderr.take() {
            tail.drain(err);
        }
        let stdin = child.stdin.take().ok_or_else(|| io::Error::other("no stdin pipe"))?;
        let stdout = child.stdout.take().ok_or_else(|| io::Error::other("no stdout pipe"))?;
        let (outbox, inbox) = link(stdout, stdin, max_message_size, write_timeout);
        Ok((Program::new(child, tail)?, outbox, inbox))
    }

    /// Starts `argv` with no link on its stdio and `env` added to its
    /// environment: stdin is empty, and stdout is kept with stderr.
    pub(crate) fn spawn_detached(argv: &[String], stderr: StderrMode, env: &[(&str, String)]) -> io::Result<Program> {
        let stdout = if stderr == StderrMode::Capture { Stdio::piped() } else { Stdio::null() };
        let mut command = command(argv, stderr)?;
        command.envs(env.iter().map(|(key, value)| (*key, value.as_str())));
        let mut child = command.stdin(Stdio::null()).stdout(stdout).spawn()?;
        let tail = Tail::default();
        if let Some(err) = child.stderr.take() {
            tail.drain(err);
        }
        if let Some(out) = child.stdout.take() {
            tail.drain(out);
        }
        Program::new(child, tail)
    }

    /// Resolves once it exits.
    pub(crate) async fn exited(&mut self) {
        let _ = self.child.wait().await;
    }

    /// Whether it has exited already (without waiting).
    pub(crate) fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits up to `grace` for it to exit, then kills it; either way the rest
    /// of its process group is ended.
    pub(crate) async fn finish(&mut self, grace: Duration) -> Exit {
        let exit = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => Exit::Exited(status),
            _ => Exit::Killed,
        };
        self.group.end();
        if exit == Exit::Killed {
            // Also by pid, in case the program left its group (`setsid`).
            let _ = self.child.kill().await;
        }
        exit
    }

    /// The last lines it wrote to stderr (empty unless captured).
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.stderr.lines()
    }
}
