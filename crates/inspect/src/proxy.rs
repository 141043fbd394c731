//! The live proxy behind `agentproto inspect`: the editor launches it in place of
//! the agent; it starts the agent, passes every byte through in both directions
//! and reports findings as messages cross.
//!
//! Each direction has its own thread doing blocking reads and writes, which keeps
//! the added latency to a copy and a flush. By default a line is queued for an
//! analysis thread and then forwarded; with `strict`, it is analysed first and an
//! invalid message is answered by the proxy instead of being forwarded. Either
//! way a line enters the engine's order before it is written, so an answer is
//! never observed before the request that caused it. Findings are rendered on
//! their own thread, away from the forwarding path.
//!
//! The trace gets each message with one `write` as it enters that order (before
//! it is forwarded), so whatever reached a peer is on disk even if the proxy is
//! killed.
//!
//! The agent runs in a process group of its own (`agentproto-process`): when
//! the agent exits, whatever is left of its group (a launcher's children) is
//! ended with it; a [`Stop`] (a signal handler) ends the group from outside;
//! and on Linux the kernel kills the agent if the proxy itself is killed
//! outright (the thread that starts the agent is the one that waits for it).

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use agentproto_process::{Group, Signal};

use crate::engine::{Answer, Engine, Verdict};
use crate::finding::{Direction, Finding};
use crate::trace::{self, now_us, Origin, Record};

/// How long the agent has to exit after a [`Stop`] forwarded a signal to it,
/// before its group gets SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// What the proxy runs and how.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The agent command and its arguments.
    pub command: Vec<OsString>,
    /// Answer invalid messages instead of forwarding them.
    pub strict: bool,
    /// Where to record a JSON Lines trace.
    pub trace: Option<PathBuf>,
    /// Messages larger than this are passed through (or dropped when strict)
    /// without being buffered; only their head is analysed.
    pub max_message_bytes: usize,
    /// Ends the agent from outside the proxy (see [`Stop`]).
    pub stop: Stop,
}

impl ProxyOptions {
    /// Options for `command` with the defaults.
    pub fn new(command: Vec<OsString>) -> ProxyOptions {
        ProxyOptions {
            command,
            strict: false,
            trace: None,
            max_message_bytes: crate::engine::DEFAULT_MAX_MESSAGE_BYTES,
            stop: Stop::default(),
        }
    }
}

/// Ends the proxied agent from another thread, e.g. a SIGTERM handler's:
/// [`Stop::request`] passes the signal on to the agent's whole process group,
/// and SIGKILL follows if the agent has not exited [`STOP_GRACE`] later (or at
/// once on a second request). [`run`] then finishes as when the agent exits by
/// itself: queued lines are analysed and end-of-session findings reported.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<(Mutex<StopState>, Condvar)>);

#[derive(Debug, Default)]
struct StopState {
    /// The agent's process group while it runs.
    group: Option<u32>,
    requested: bool,
}

impl Stop {
    /// Sends `signal` to the agent's group now (SIGKILL if a stop was already
    /// requested) and SIGKILL after [`STOP_GRACE`]. Before the agent started,
    /// it is killed as soon as it does.
    pub fn request(&self, signal: Signal) {
        let (state, _) = &*self.0;
        let mut state = lock(state);
        let again = std::mem::replace(&mut state.requested, true);
        let Some(group) = state.group else { return };
        let signal = if again { Signal::Kill } else { signal };
        let _ = agentproto_process::signal_group(group, signal);
        if signal != Signal::Kill {
            let stop = self.clone();
            thread::spawn(move || stop.kill_after_grace(group));
        }
    }

    fn kill_after_grace(&self, group: u32) {
        let (state, changed) = &*self.0;
        let deadline = Instant::now() + STOP_GRACE;
        let mut state = lock(state);
        while state.group == Some(group) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let _ = agentproto_process::signal_group(group, Signal::Kill);
                return;
            }
            state = changed.wait_timeout(state, left).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }

    fn started(&self, group: u32) {
        let mut state = lock(&self.0 .0);
        state.group = Some(group);
        if state.requested {
            let _ = agentproto_process::signal_group(group, Signal::Kill);
        }
    }

    fn exited(&self) {
        lock(&self.0 .0).group = None;
        self.0 .1.notify_all();
    }
}

/// How the proxy session ended.
#[derive(Debug)]
pub struct ProxyOutcome {
    /// The agent's exit status.
    pub status: ExitStatus,
    /// How many findings were reported, by severity: info, warning, error.
    pub counts: [usize; 3],
}

/// Runs the proxy between a client (`client_in`, `client_out`) and the agent it
/// spawns, until the agent exits and its output ends; calls `on_finding` for
/// each finding (on a separate thread, in order). The agent's stderr is
/// inherited. When the agent exits, the rest of its process group is ended.
pub fn run<I, O>(
    options: ProxyOptions,
    client_in: I,
    client_out: O,
    on_finding: impl FnMut(&Finding) + Send + 'static,
) -> io::Result<ProxyOutcome>
where
    I: Read + Send + 'static,
    O: Write + Send + 'static,
{
    let (program, args) = options
        .command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no agent command given"))?;
    // Opened first: nothing can fail between starting the agent and watching it.
    let trace = match &options.trace {
        Some(path) => Some(File::create(path)?),
        None => None,
    };
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    agentproto_process::isolate(&mut command);
    // This thread waits for the agent below, so it outlives it on purpose.
    agentproto_process::die_with_parent(&mut command);
    let mut child = command.spawn()?;
    // Dropped on every way out of this function: the whole group goes.
    let mut group = Group::new(child.id());
    options.stop.started(group.id());
    let agent_in = child.stdin.take().expect("piped stdin");
    let agent_out = child.stdout.take().expect("piped stdout");

    let (findings_tx, findings_rx) = mpsc::channel::<Finding>();
    let renderer = thread::spawn(move || {
        let mut on_finding = on_finding;
        let mut counts = [0usize; 3];
        for finding in findings_rx {
            counts[finding.severity() as usize] += 1;
            on_finding(&finding);
        }
        counts
    });

    let shared = Arc::new(Shared {
        analysis: Mutex::new(Analysis {
            engine: Engine::acp().max_message_bytes(options.max_message_bytes),
            findings: findings_tx,
        }),
        trace: Mutex::new(trace),
        queue: Mutex::new(None),
        to_agent: Mutex::new(Some(Box::new(agent_in) as Box<dyn Write + Send>)),
        to_client: Mutex::new(Some(Box::new(client_out) as Box<dyn Write + Send>)),
        strict: options.strict,
    });

    let analyser = if options.strict {
        None
    } else {
        let (queue, items) = mpsc::channel::<Record>();
        *lock(&shared.queue) = Some(queue);
        let shared = shared.clone();
        Some(thread::spawn(move || {
            for record in items {
                let mut analysis = shared.analysis();
                let verdict = match record.oversize {
                    Some(len) => analysis.engine.oversize(record.direction, len, &record.bytes),
                    None => analysis.engine.observe(record.direction, &record.bytes),
                };
                analysis.report(verdict);
            }
        }))
    };

    let upstream = {
        let shared = shared.clone();
        let max = options.max_message_bytes;
        thread::spawn(move || {
            shared.pump(Direction::ToAgent, client_in, max);
            // The client is gone: the agent sees end of input and may exit.
            shared.close(Direction::ToAgent);
        })
    };
    let downstream = {
        let shared = shared.clone();
        let max = options.max_message_bytes;
        thread::spawn(move || shared.pump(Direction::ToClient, agent_out, max))
    };
    let status = child.wait();
    options.stop.exited();
    // What is left of the group (a launcher's children, which may hold the
    // agent's stdout open) goes with the agent, so its output ends.
    group.end();
    let status = status?;
    let _ = downstream.join();
    // The client may keep its end open after the agent exited; the upstream
    // thread is then left blocked on its read and ends with the process.
    if upstream.is_finished() {
        let _ = upstream.join();
    }
    // Lines still queued are analysed before the end-of-session findings. The
    // queue closes only when its last sender goes: a blocked upstream thread holds
    // none (it takes the sender under the lock for each line).
    lock(&shared.queue).take();
    if let Some(analyser) = analyser {
        let _ = analyser.join();
    }
    let analysis = {
        let mut analysis = shared.analysis();
        let findings = analysis.engine.finish();
        for finding in findings {
            let _ = analysis.findings.send(finding);
        }
        // Closing the channel lets the renderer finish.
        let (closed, _) = mpsc::channel();
        std::mem::replace(&mut analysis.findings, closed)
    };
    drop(analysis);
    let counts = renderer.join().unwrap_or_default();
    Ok(ProxyOutcome { status, counts })
}

struct Analysis {
    engine: Engine,
    findings: mpsc::Sender<Finding>,
}

impl Analysis {
    fn report(&mut self, verdict: Verdict) {
        for finding in verdict.findings {
            let _ = self.findings.send(finding);
        }
    }
}

struct Shared {
    analysis: Mutex<Analysis>,
    /// The trace file. Written under the lock that orders lines (the queue's,
    /// or the analysis lock when strict), so records are in the engine's order.
    trace: Mutex<Option<File>>,
    /// Lines waiting for analysis (not strict); closed at the end.
    queue: Mutex<Option<mpsc::Sender<Record>>>,
    to_agent: Mutex<Option<Box<dyn Write + Send>>>,
    to_client: Mutex<Option<Box<dyn Write + Send>>>,
    strict: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    fn analysis(&self) -> MutexGuard<'_, Analysis> {
        lock(&self.analysis)
    }

    /// Appends one record to the trace with a single write. A failing trace
    /// file must not break the session it records.
    fn trace(&self, record: &Record) {
        if let Some(file) = lock(&self.trace).as_mut() {
            let _ = file.write_all(&record.to_line());
        }
    }

    fn output(&self, direction: Direction) -> &Mutex<Option<Box<dyn Write + Send>>> {
        match direction {
            Direction::ToAgent => &self.to_agent,
            Direction::ToClient => &self.to_client,
        }
    }

    /// Writes bytes towards `direction`'s receiver; a gone receiver is closed.
    fn write(&self, direction: Direction, bytes: &[u8], flush: bool) {
        let mut output = lock(self.output(direction));
        let Some(writer) = output.as_mut() else { return };
        let result = writer.write_all(bytes).and_then(|()| if flush { writer.flush() } else { Ok(()) });
        if result.is_err() {
            *output = None;
        }
    }

    /// Traces a line and queues it for analysis (not strict), in one order.
    fn enqueue(&self, record: Record) {
        let queue = lock(&self.queue);
        self.trace(&record);
        if let Some(queue) = queue.as_ref() {
            let _ = queue.send(record);
        }
    }

    fn close(&self, direction: Direction) {
        lock(self.output(direction)).take();
    }

    /// Copies one direction until its input ends.
    fn pump(&self, direction: Direction, input: impl Read, max: usize) {
        let mut lines = Lines::new(input, max);
        // The first bytes of the line over the limit being passed through.
        let mut head = Vec::new();
        loop {
            match lines.next() {
                Ok(Some(Piece::Line(bytes))) => self.on_line(direction, &bytes),
                Ok(Some(Piece::Oversize { bytes, end })) => {
                    let room = trace::HEAD_BYTES.saturating_sub(head.len());
                    head.extend_from_slice(&bytes[..room.min(bytes.len())]);
                    if let Some(len) = end {
                        head.truncate(len);
                        let record = Record {
                            time_us: now_us(),
                            direction,
                            origin: Origin::Peer,
                            bytes: trace::head(&head).to_vec(),
                            oversize: Some(len as u64),
                        };
                        head.clear();
                        if self.strict {
                            let mut analysis = self.analysis();
                            let verdict = analysis.engine.oversize(direction, len as u64, &record.bytes);
                            self.trace(&record);
                            analysis.report(verdict);
                        } else {
                            self.enqueue(record);
                        }
                    }
                    if !self.strict {
                        self.write(direction, &bytes, end.is_some());
                    }
                }
                Ok(None) | Err(_) => return,
            }
        }
    }

    fn on_line(&self, direction: Direction, bytes: &[u8]) {
        let content = strip_newline(bytes);
        if !self.strict {
            // Queued before it is written: whatever the line causes comes after it.
            self.enqueue(Record::now(direction, Origin::Peer, content));
            self.write(direction, bytes, true);
            return;
        }
        let mut analysis = self.analysis();
        let mut verdict = analysis.engine.observe(direction, content);
        let answer = verdict.answer.take();
        self.trace(&Record::now(direction, Origin::Peer, content));
        analysis.report(verdict);
        match answer {
            None => {
                // Written under the analysis lock, so the receiver sees lines in
                // the order the engine observed them.
                self.write(direction, bytes, true);
            }
            Some(Answer::Drop) => {}
            Some(Answer::ToSender(reply)) => {
                let back = direction.reverse();
                analysis.engine.observe_own(back, &reply);
                self.trace(&Record::now(back, Origin::Inspector, &reply));
                self.write(back, &with_newline(reply), true);
            }
            Some(Answer::ToReceiver(replacement)) => {
                analysis.engine.observe_own(direction, &replacement);
                self.trace(&Record::now(direction, Origin::Inspector, &replacement));
                self.write(direction, &with_newline(replacement), true);
            }
        }
    }
}

fn strip_newline(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

fn with_newline(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.push(b'\n');
    bytes
}

/// A piece of one direction's byte stream.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    /// A whole line within the limit, with its newline when it had one.
    Line(Vec<u8>),
    /// Part of a line over the limit; `end` is the line's total length (without
    /// its newline) on its last part.
    Oversize { bytes: Vec<u8>, end: Option<usize> },
}

/// Splits a byte stream into lines, never holding more than `max` bytes of one.
struct Lines<R> {
    input: BufReader<R>,
    max: usize,
    /// Bytes of the current line so far, while it is over the limit.
    oversize: Option<usize>,
}

impl<R: Read> Lines<R> {
    fn new(input: R, max: usize) -> Lines<R> {
        Lines { input: BufReader::with_capacity(64 * 1024, input), max, oversize: None }
    }

    fn next(&mut self) -> io::Result<Option<Piece>> {
        if let Some(seen) = self.oversize {
            return self.next_oversize(seen);
        }
        let mut line = Vec::new();
        loop {
            let buffer = self.input.fill_buf()?;
            if buffer.is_empty() {
                return Ok((!line.is_empty()).then_some(Piece::Line(line)));
            }
            match buffer.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    line.extend_from_slice(&buffer[..=at]);
                    self.input.consume(at + 1);
                    let len = strip_newline(&line).len();
                    if len > self.max {
                        return Ok(Some(Piece::Oversize { bytes: line, end: Some(len) }));
                    }
                    return Ok(Some(Piece::Line(line)));
                }
                None => {
                    let taken = buffer.len();
                    line.extend_from_slice(buffer);
                    self.input.consume(taken);
                    if line.len() > self.max {
                        self.oversize = Some(line.len());
                        return Ok(Some(Piece::Oversize { bytes: line, end: None }));
                    }
                }
            }
        }
    }

    fn next_oversize(&mut self, seen: usize) -> io::Result<Option<Piece>> {
        let buffer = self.input.fill_buf()?;
        if buffer.is_empty() {
            self.oversize = None;
            return Ok(Some(Piece::Oversize { bytes: Vec::new(), end: Some(seen) }));
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => {
                let bytes = buffer[..=at].to_vec();
                self.input.consume(at + 1);
                self.oversize = None;
                let tail = strip_newline(&bytes).len();
                Ok(Some(Piece::Oversize { bytes, end: Some(seen + tail) }))
            }
            None => {
                let bytes = buffer.to_vec();
                self.input.consume(bytes.len());
                self.oversize = Some(seen + bytes.len());
                Ok(Some(Piece::Oversize { bytes, end: None }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(input: &[u8], max: usize) -> Vec<Piece> {
        let mut lines = Lines::new(input, max);
        let mut out = Vec::new();
        while let Some(piece) = lines.next().unwrap() {
            out.push(piece);
        }
        out
    }

    #[test]
    fn lines_keep_their_exact_bytes() {
        assert_eq!(
            pieces(b"{}\n{\"a\":1}\r\n\nlast", 100),
            [
                Piece::Line(b"{}\n".to_vec()),
                Piece::Line(b"{\"a\":1}\r\n".to_vec()),
                Piece::Line(b"\n".to_vec()),
                Piece::Line(b"last".to_vec())
            ]
        );
    }

    #[test]
    fn oversize_lines_stream_through_and_report_their_length() {
        let mut input = vec![b'x'; 10];
        input.extend_from_slice(b"\n{}\n");
        let got = pieces(&input, 4);
        let total: Vec<u8> = got
            .iter()
            .take_while(|p| matches!(p, Piece::Oversize { .. }))
            .flat_map(|p| match p {
                Piece::Oversize { bytes, .. } => bytes.clone(),
                Piece::Line(_) => unreachable!(),
            })
            .collect();
        assert_eq!(total, [&[b'x'; 10][..], b"\n"].concat());
        assert!(got.iter().any(|p| matches!(p, Piece::Oversize { end: Some(10), .. })), "{got:?}");
        assert_eq!(got.last(), Some(&Piece::Line(b"{}\n".to_vec())));
    }
}
