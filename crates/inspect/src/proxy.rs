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

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

use crate::engine::{Answer, Engine, Verdict};
use crate::finding::{Direction, Finding};
use crate::trace::{now_us, Origin, Record};

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
    /// without being buffered or analysed.
    pub max_message_bytes: usize,
}

impl ProxyOptions {
    /// Options for `command` with the defaults.
    pub fn new(command: Vec<OsString>) -> ProxyOptions {
        ProxyOptions {
            command,
            strict: false,
            trace: None,
            max_message_bytes: crate::engine::DEFAULT_MAX_MESSAGE_BYTES,
        }
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
/// spawns, until the agent's output ends; calls `on_finding` for each finding
/// (on a separate thread, in order). The agent's stderr is inherited.
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
    let mut child: Child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let agent_in = child.stdin.take().expect("piped stdin");
    let agent_out = child.stdout.take().expect("piped stdout");
    let trace = match &options.trace {
        Some(path) => Some(BufWriter::new(File::create(path)?)),
        None => None,
    };

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
            trace,
            findings: findings_tx,
        }),
        queue: Mutex::new(None),
        to_agent: Mutex::new(Some(Box::new(agent_in) as Box<dyn Write + Send>)),
        to_client: Mutex::new(Some(Box::new(client_out) as Box<dyn Write + Send>)),
        strict: options.strict,
    });

    let analyser = if options.strict {
        None
    } else {
        let (queue, items) = mpsc::channel::<Item>();
        *lock(&shared.queue) = Some(queue);
        let shared = shared.clone();
        Some(thread::spawn(move || {
            for item in items {
                let mut analysis = shared.analysis();
                match item.bytes {
                    Some(bytes) => {
                        let verdict = analysis.engine.observe(item.direction, &bytes);
                        analysis.record_at(item.time_us, item.direction, Origin::Peer, &bytes, verdict);
                    }
                    None => {
                        let verdict = analysis.engine.oversize(item.direction, item.len);
                        // The trace keeps no bytes of a message it could not hold.
                        analysis.record_at(item.time_us, item.direction, Origin::Peer, b"", verdict);
                    }
                }
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
    let _ = downstream.join();
    let status = child.wait()?;
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
        if let Some(trace) = &mut analysis.trace {
            trace.flush()?;
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
    trace: Option<BufWriter<File>>,
    findings: mpsc::Sender<Finding>,
}

impl Analysis {
    fn record(&mut self, direction: Direction, origin: Origin, bytes: &[u8], verdict: Verdict) {
        self.record_at(now_us(), direction, origin, bytes, verdict);
    }

    fn record_at(&mut self, time_us: u64, direction: Direction, origin: Origin, bytes: &[u8], verdict: Verdict) {
        if let Some(trace) = &mut self.trace {
            // A failing trace file must not break the session it records.
            let record = Record { time_us, direction, origin, bytes: bytes.to_vec() };
            let _ = record.write_to(trace);
        }
        for finding in verdict.findings {
            let _ = self.findings.send(finding);
        }
    }
}

/// A line for the analysis thread (not strict).
struct Item {
    direction: Direction,
    time_us: u64,
    /// The line without its newline; `None` for a message over the limit.
    bytes: Option<Vec<u8>>,
    len: usize,
}

struct Shared {
    analysis: Mutex<Analysis>,
    /// Lines waiting for analysis (not strict); closed at the end.
    queue: Mutex<Option<mpsc::Sender<Item>>>,
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

    fn enqueue(&self, item: Item) {
        if let Some(queue) = lock(&self.queue).as_ref() {
            let _ = queue.send(item);
        }
    }

    fn close(&self, direction: Direction) {
        lock(self.output(direction)).take();
    }

    /// Copies one direction until its input ends.
    fn pump(&self, direction: Direction, input: impl Read, max: usize) {
        let mut lines = Lines::new(input, max);
        loop {
            match lines.next() {
                Ok(Some(Piece::Line(bytes))) => self.on_line(direction, &bytes),
                Ok(Some(Piece::Oversize { bytes, end })) => {
                    if let Some(len) = end {
                        if self.strict {
                            let mut analysis = self.analysis();
                            let verdict = analysis.engine.oversize(direction, len);
                            analysis.record(direction, Origin::Peer, b"", verdict);
                        } else {
                            self.enqueue(Item { direction, time_us: now_us(), bytes: None, len });
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
            self.enqueue(Item { direction, time_us: now_us(), bytes: Some(content.to_vec()), len: content.len() });
            self.write(direction, bytes, true);
            return;
        }
        let mut analysis = self.analysis();
        let mut verdict = analysis.engine.observe(direction, content);
        let answer = verdict.answer.take();
        analysis.record(direction, Origin::Peer, content, verdict);
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
                analysis.record(back, Origin::Inspector, &reply, Verdict::default());
                self.write(back, &with_newline(reply), true);
            }
            Some(Answer::ToReceiver(replacement)) => {
                analysis.engine.observe_own(direction, &replacement);
                analysis.record(direction, Origin::Inspector, &replacement, Verdict::default());
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
