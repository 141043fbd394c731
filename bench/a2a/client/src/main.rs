//! The one load client of the A2A benchmark: every server gets byte-identical requests
//! (only the port in `Host` differs) over raw TCP with `TCP_NODELAY` and keep-alive.
//! Responses are framed by `Content-Length`, by chunked transfer encoding (SSE streams),
//! or by the end of the connection; SSE streams are drained until the server ends them.
//!
//! ```text
//! bench-a2a-client requests
//! bench-a2a-client latency    --port P --request floor|echo|noop|stream|large [--warmup W] [--count N] [--hold] [--expect S]… [--forbid S]…
//! bench-a2a-client concurrent --port P [--port P2]… [--request echo] [--connections C] [--warmup W] [--batches B] [--per-connection K] [--expect S]…
//! bench-a2a-client cpu        --port P --pid PID [--pid PID2]… --clk-tck T [--request floor] [--warmup W] [--seconds S] [--expect S]…
//! ```
//!
//! Several `--port`s (replicas of one service): the concurrent connections are spread
//! over them in turn (connection k to port k mod n); the other modes use the first.
//! Several `--pid`s: the CPU probe counts the time of all of them.
//!
//! `--grpc`: the same workloads as gRPC calls (`lf.a2a.v1.A2AService`, HTTP/2 without
//! TLS, one HTTP/2 connection per client connection), see `grpc.rs`.
//!
//! Each mode prints one JSON line. Every response must be `200` and contain every
//! `--expect` string and no `--forbid` string (for a stream: the events together);
//! otherwise the line has `"status":"error"` and the exit code is 1. Percentiles are
//! nearest-rank (`sorted[min(n-1, floor(q*n))]`), as the seed's script computes them.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod grpc;

/// The seed's floor request body, exactly (181 bytes, no trailing newline).
const FLOOR_BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"historyLength":0},"message":{"messageId":"bench-fixed-id","role":"ROLE_USER","parts":[{"text":"hello"}]}}}"#;

/// The text of the `large` request: 4 MiB less 4 KiB, so that the whole body stays under
/// the 4 MiB request limit of agentproto and of a2a-protocol-sdk.
const LARGE_TEXT: usize = (4 << 20) - 4096;

/// A request body by workload name.
fn body(name: &str) -> Option<String> {
    let send = |method: &str, id: &str, text: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"configuration":{{"historyLength":0}},"message":{{"messageId":"{id}","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}}}}}"#
        )
    };
    Some(match name {
        "floor" => FLOOR_BODY.to_owned(),
        // Seed 004's echo_roundtrip in 1.0 form: 256 × "A" (the seed's params were 0.3-style).
        "echo" => send("SendMessage", "msg-bench-001", &"A".repeat(256)),
        // minimal_overhead: the id prefix `noop` selects the NoopExecutor on every server.
        "noop" => send("SendMessage", "noop-bench-001", "noop"),
        "stream" => send("SendStreamingMessage", "msg-bench-stream", "stream-bench"),
        // A maximum-size message: its body stays just under the 4 MiB the servers accept.
        "large" => send("SendMessage", "msg-bench-large", &"x".repeat(LARGE_TEXT)),
        _ => return None,
    })
}

fn request(name: &str, port: u16) -> Vec<u8> {
    let body = body(name).unwrap_or_else(|| fail(&format!("unknown request {name:?}")));
    let accept = if name == "stream" { "text/event-stream" } else { "application/json" };
    let mut out = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n\
         Accept: {accept}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

// ---------------------------------------------------------------------------
// HTTP/1.1 response framing

#[derive(Clone, Copy)]
enum Framing {
    Length(usize),
    Chunked,
    Eof,
}

struct Head {
    status: u16,
    len: usize,
    framing: Framing,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn parse_head(buf: &[u8]) -> io::Result<Option<Head>> {
    let Some(end) = find(buf, b"\r\n\r\n") else { return Ok(None) };
    let text = std::str::from_utf8(&buf[..end]).map_err(|_| bad("response head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status line"))?;
    let mut framing = Framing::Eof;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("content-length") {
            framing = Framing::Length(value.parse().map_err(|_| bad("bad Content-Length"))?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
            framing = Framing::Chunked;
            break;
        }
    }
    Ok(Some(Head { status, len: end + 4, framing }))
}

/// Decodes a chunked body starting at `buf[0]` into `out`; the bytes consumed once the
/// last chunk and the trailers are in, `None` while more must be read.
fn chunked(buf: &[u8], out: &mut Vec<u8>) -> io::Result<Option<usize>> {
    out.clear();
    let mut at = 0;
    loop {
        let Some(eol) = find(&buf[at..], b"\r\n") else { return Ok(None) };
        let line = std::str::from_utf8(&buf[at..at + eol]).map_err(|_| bad("bad chunk size"))?;
        let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| bad("bad chunk size"))?;
        at += eol + 2;
        if size == 0 {
            // Trailers (usually none), then an empty line.
            let Some(end) = find(&buf[at - 2..], b"\r\n\r\n") else { return Ok(None) };
            return Ok(Some(at - 2 + end + 4));
        }
        if buf.len() < at + size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&buf[at..at + size]);
        at += size + 2;
    }
}

/// What one exchange produced. The body is in the connection's buffers.
#[derive(Clone, Copy)]
struct Exchange {
    status: u16,
    wire_bytes: usize,
}

/// Shared by both connection kinds: `buf` holds what was read; returns the response if
/// it is complete (`eof`: the peer closed), with its body copied into `body`.
fn complete(buf: &[u8], eof: bool, body: &mut Vec<u8>) -> io::Result<Option<(Exchange, usize)>> {
    let Some(head) = parse_head(buf)? else {
        return if eof { Err(bad("connection closed before a response")) } else { Ok(None) };
    };
    let rest = &buf[head.len..];
    let used = match head.framing {
        Framing::Length(n) if rest.len() >= n => {
            body.clear();
            body.extend_from_slice(&rest[..n]);
            Some(head.len + n)
        }
        Framing::Length(_) => None,
        Framing::Chunked => chunked(rest, body)?.map(|n| head.len + n),
        Framing::Eof if eof => {
            body.clear();
            body.extend_from_slice(rest);
            Some(buf.len())
        }
        Framing::Eof => None,
    };
    match used {
        Some(n) => Ok(Some((Exchange { status: head.status, wire_bytes: n }, n))),
        None if eof => Err(bad("connection closed inside a response")),
        None => Ok(None),
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

/// A blocking keep-alive connection (sequential latency: the least client overhead).
struct Conn {
    port: u16,
    stream: TcpStream,
    buf: Vec<u8>,
    body: Vec<u8>,
    reconnects: u64,
}

impl Conn {
    fn open(port: u16) -> io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Conn { port, stream, buf: Vec::with_capacity(1 << 16), body: Vec::with_capacity(1 << 16), reconnects: 0 })
    }

    fn exchange(&mut self, req: &[u8]) -> io::Result<Exchange> {
        self.stream.write_all(req)?;
        let mut chunk = [0u8; 1 << 16];
        loop {
            let n = self.stream.read(&mut chunk)?;
            self.buf.extend_from_slice(&chunk[..n]);
            if let Some((ex, used)) = complete(&self.buf, n == 0, &mut self.body)? {
                self.buf.drain(..used);
                if n == 0 {
                    // Framed by the end of the connection: open a new one for the next request.
                    *self = Conn { reconnects: self.reconnects + 1, ..Conn::open(self.port)? };
                }
                return Ok(ex);
            }
        }
    }
}

/// The same over tokio (concurrent sends: one thread drives every connection).
struct AsyncConn {
    port: u16,
    stream: tokio::net::TcpStream,
    buf: Vec<u8>,
    body: Vec<u8>,
}

impl AsyncConn {
    async fn open(port: u16) -> io::Result<AsyncConn> {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        stream.set_nodelay(true)?;
        Ok(AsyncConn { port, stream, buf: Vec::with_capacity(1 << 14), body: Vec::with_capacity(1 << 14) })
    }

    async fn exchange(&mut self, req: &[u8]) -> io::Result<Exchange> {
        self.stream.write_all(req).await?;
        let mut chunk = [0u8; 1 << 14];
        loop {
            let n = tokio::time::timeout(Duration::from_secs(30), self.stream.read(&mut chunk))
                .await
                .map_err(|_| bad("no response within 30 s"))??;
            self.buf.extend_from_slice(&chunk[..n]);
            if let Some((ex, used)) = complete(&self.buf, n == 0, &mut self.body)? {
                self.buf.drain(..used);
                if n == 0 {
                    *self = AsyncConn::open(self.port).await?;
                }
                return Ok(ex);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Checks and statistics

struct Checks {
    expect: Vec<String>,
    forbid: Vec<String>,
}

impl Checks {
    fn verify(&self, ex: Exchange, body: &[u8]) -> Result<(), String> {
        if ex.status != 200 {
            return Err(format!("status {}: {}", ex.status, String::from_utf8_lossy(body)));
        }
        for s in &self.expect {
            if find(body, s.as_bytes()).is_none() {
                return Err(format!("no {s:?} in {}", String::from_utf8_lossy(body)));
            }
        }
        for s in &self.forbid {
            if find(body, s.as_bytes()).is_some() {
                return Err(format!("{s:?} in {}", String::from_utf8_lossy(body)));
            }
        }
        Ok(())
    }
}

/// SSE events in a drained stream body: its `data:` lines.
fn events(body: &[u8]) -> usize {
    body.split(|&b| b == b'\n').filter(|l| l.starts_with(b"data:")).count()
}

fn percentile(sorted: &[u64], q: f64) -> u64 {
    let at = ((q * sorted.len() as f64) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(at).copied().unwrap_or(0)
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn fail(what: &str) -> ! {
    println!(r#"{{"status":"error","error":{}}}"#, json_str(what));
    std::process::exit(1)
}

// ---------------------------------------------------------------------------
// Modes

struct Args {
    mode: String,
    port: u16,
    /// Every `--port` given, the first being `port`.
    ports: Vec<u16>,
    request: String,
    warmup: usize,
    count: usize,
    connections: usize,
    batches: usize,
    per_connection: usize,
    pids: Vec<u32>,
    clk_tck: u64,
    seconds: f64,
    checks: Checks,
    grpc: bool,
    /// `--hold` (latency): after the warm-up, print `{"status":"warm"}` and wait for one line
    /// on stdin before the timed requests; after the result line, wait for another before
    /// closing the connection. The runner opens and closes a counting window on the server
    /// (instructions, allocations) around exactly the timed requests.
    hold: bool,
}

fn parse_args() -> Args {
    let mut it = std::env::args().skip(1);
    let mode = it.next().unwrap_or_else(|| fail("usage: bench-a2a-client requests|latency|concurrent|cpu …"));
    let mut a = Args {
        mode,
        port: 0,
        ports: Vec::new(),
        request: "echo".to_owned(),
        warmup: 100,
        count: 1000,
        connections: 50,
        batches: 20,
        per_connection: 20,
        pids: Vec::new(),
        clk_tck: 100,
        seconds: 1.0,
        checks: Checks { expect: Vec::new(), forbid: Vec::new() },
        grpc: false,
        hold: false,
    };
    while let Some(flag) = it.next() {
        if flag == "--grpc" || flag == "--hold" {
            a.grpc |= flag == "--grpc";
            a.hold |= flag == "--hold";
            continue;
        }
        let value = it.next().unwrap_or_else(|| fail(&format!("{flag} needs a value")));
        let num = |v: &str| v.parse::<u64>().unwrap_or_else(|_| fail(&format!("{flag}: not a number: {v}")));
        match flag.as_str() {
            "--port" => a.ports.push(num(&value) as u16),
            "--request" => a.request = value,
            "--warmup" => a.warmup = num(&value) as usize,
            "--count" => a.count = num(&value) as usize,
            "--connections" => a.connections = num(&value) as usize,
            "--batches" => a.batches = num(&value) as usize,
            "--per-connection" => a.per_connection = num(&value) as usize,
            "--pid" => a.pids.push(num(&value) as u32),
            "--clk-tck" => a.clk_tck = num(&value),
            "--seconds" => a.seconds = value.parse().unwrap_or_else(|_| fail("--seconds: not a number")),
            "--expect" => a.checks.expect.push(value),
            "--forbid" => a.checks.forbid.push(value),
            _ => fail(&format!("unknown flag {flag}")),
        }
    }
    if a.hold && a.count == 0 {
        fail("--hold needs at least one timed request (--count)");
    }
    a.port = a.ports.first().copied().unwrap_or(0);
    if a.ports.is_empty() {
        a.ports.push(0);
    }
    a
}

/// Every request, as the servers receive it (port 0 in `Host`), for the runner's checks.
fn requests() {
    let names = ["floor", "echo", "noop", "stream", "large"];
    let fields: Vec<String> = names
        .iter()
        .map(|n| {
            let raw = request(n, 0);
            format!("{}:{}", json_str(n), json_str(&String::from_utf8_lossy(&raw)))
        })
        .collect();
    println!(r#"{{"status":"ok","mode":"requests","requests":{{{}}}}}"#, fields.join(","));
}

/// With `--hold`: once the warm-up is done (`warm`: say so first) and once the result line is
/// out, waits for the runner's go line on stdin.
fn hold(a: &Args, warm: bool) {
    if !a.hold {
        return;
    }
    let mut out = io::stdout();
    if warm {
        let _ = writeln!(out, r#"{{"status":"warm"}}"#);
    }
    let _ = out.flush();
    let mut line = String::new();
    if io::stdin().read_line(&mut line).unwrap_or(0) == 0 {
        fail("--hold: stdin closed before the go line");
    }
}

fn latency(a: &Args) -> io::Result<()> {
    let req = request(&a.request, a.port);
    let mut conn = Conn::open(a.port)?;
    let mut times = Vec::with_capacity(a.count);
    let (mut wire, mut body_bytes, mut evs) = (0, 0, 0);
    for i in 0..a.warmup + a.count {
        if i == a.warmup {
            hold(a, true);
        }
        let start = Instant::now();
        let ex = conn.exchange(&req)?;
        let ns = start.elapsed().as_nanos() as u64;
        if let Err(e) = a.checks.verify(ex, &conn.body) {
            fail(&format!("request {i}: {e}"));
        }
        if i >= a.warmup {
            times.push(ns);
        }
        (wire, body_bytes, evs) = (ex.wire_bytes, conn.body.len(), events(&conn.body));
    }
    let sample = String::from_utf8_lossy(&conn.body).into_owned();
    print_latency(a, req.len(), times, (wire, body_bytes, evs), conn.reconnects, &sample);
    hold(a, false);
    Ok(())
}

/// The latency line; `sizes` are the last answer's wire bytes, body bytes and events.
fn print_latency(
    a: &Args,
    request_bytes: usize,
    mut times: Vec<u64>,
    sizes: (usize, usize, usize),
    reconnects: u64,
    sample: &str,
) {
    let (wire, body_bytes, evs) = sizes;
    let total: u64 = times.iter().sum();
    times.sort_unstable();
    println!(
        r#"{{"status":"ok","mode":"latency","request":{},"request_bytes":{},"warmup":{},"count":{},"p50_ns":{},"p90_ns":{},"p99_ns":{},"min_ns":{},"max_ns":{},"mean_ns":{},"response_bytes":{},"body_bytes":{},"events":{},"reconnects":{},"sample":{}}}"#,
        json_str(&a.request),
        request_bytes,
        a.warmup,
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.9),
        percentile(&times, 0.99),
        times.first().copied().unwrap_or(0),
        times.last().copied().unwrap_or(0),
        total / times.len().max(1) as u64,
        wire,
        body_bytes,
        evs,
        reconnects,
        json_str(sample),
    );
}

async fn run_all(conns: Vec<AsyncConn>, req: &'static [u8], each: usize, checks: &'static Checks) -> Vec<AsyncConn> {
    let mut set = tokio::task::JoinSet::new();
    for (k, mut conn) in conns.into_iter().enumerate() {
        set.spawn(async move {
            for _ in 0..each {
                let ex = conn.exchange(req).await.unwrap_or_else(|e| fail(&format!("connection {k}: {e}")));
                if let Err(e) = checks.verify(ex, &conn.body) {
                    fail(&format!("connection {k}: {e}"));
                }
            }
            (k, conn)
        });
    }
    let mut out: Vec<(usize, AsyncConn)> = set.join_all().await;
    out.sort_by_key(|(k, _)| *k);
    out.into_iter().map(|(_, c)| c).collect()
}

fn concurrent(a: Args) -> io::Result<()> {
    let req: &'static [u8] = request(&a.request, a.port).leak();
    let checks: &'static Checks =
        Box::leak(Box::new(Checks { expect: a.checks.expect.clone(), forbid: a.checks.forbid.clone() }));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let mut conns = Vec::with_capacity(a.connections);
        for k in 0..a.connections {
            conns.push(AsyncConn::open(a.ports[k % a.ports.len()]).await?);
        }
        conns = run_all(conns, req, a.warmup, checks).await;
        // Batches: every connection sends one request at once; the time until all answered.
        let mut batch = Vec::with_capacity(a.batches);
        for _ in 0..a.batches {
            let start = Instant::now();
            conns = run_all(conns, req, 1, checks).await;
            batch.push(start.elapsed().as_nanos() as u64);
        }
        // Sustained: every connection sends `per_connection` requests back to back.
        let start = Instant::now();
        run_all(conns, req, a.per_connection, checks).await;
        let sustained = start.elapsed().as_nanos() as u64;
        print_concurrent(&a, batch, sustained);
        Ok(())
    })
}

/// The concurrent line: the batch times and the sustained phase's duration.
fn print_concurrent(a: &Args, mut batch: Vec<u64>, sustained: u64) {
    let served = (a.connections * a.per_connection) as u64;
    batch.sort_unstable();
    println!(
        r#"{{"status":"ok","mode":"concurrent","request":{},"connections":{},"warmup":{},"batches":{},"batch_p50_ns":{},"batch_min_ns":{},"batch_max_ns":{},"batch_ns":[{}],"sustained_requests":{},"sustained_ns":{},"sustained_rps":{}}}"#,
        json_str(&a.request),
        a.connections,
        a.warmup,
        batch.len(),
        percentile(&batch, 0.5),
        batch.first().copied().unwrap_or(0),
        batch.last().copied().unwrap_or(0),
        batch.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
        served,
        sustained,
        (served as f64 * 1e9 / sustained.max(1) as f64).round() as u64,
    );
}

/// utime + stime of a process, in clock ticks (`/proc/<pid>/stat`, fields 14 and 15).
fn cpu_ticks(pid: u32) -> io::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after = stat.rsplit_once(')').map(|(_, r)| r).ok_or_else(|| bad("bad /proc stat"))?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let get = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).ok_or_else(|| bad("bad /proc stat"));
    Ok(get(11)? + get(12)?)
}

fn cpu(a: &Args) -> io::Result<()> {
    if a.pids.is_empty() {
        fail("cpu needs --pid");
    }
    let ticks_now = || a.pids.iter().try_fold(0u64, |sum, &pid| Ok::<u64, io::Error>(sum + cpu_ticks(pid)?));
    let req = request(&a.request, a.port);
    let mut conn = Conn::open(a.port)?;
    for i in 0..a.warmup {
        let ex = conn.exchange(&req)?;
        if let Err(e) = a.checks.verify(ex, &conn.body) {
            fail(&format!("warm-up request {i}: {e}"));
        }
    }
    let budget = Duration::from_secs_f64(a.seconds);
    let before = ticks_now()?;
    let start = Instant::now();
    let mut served = 0u64;
    while start.elapsed() < budget {
        let ex = conn.exchange(&req)?;
        if let Err(e) = a.checks.verify(ex, &conn.body) {
            fail(&format!("request {served}: {e}"));
        }
        served += 1;
    }
    let wall = start.elapsed().as_nanos() as u64;
    let ticks = ticks_now()? - before;
    print_cpu(a, served, wall, ticks);
    Ok(())
}

/// The CPU line: requests served, wall time and the servers' CPU ticks meanwhile.
fn print_cpu(a: &Args, served: u64, wall: u64, ticks: u64) {
    let cpu_ns = ticks * 1_000_000_000 / a.clk_tck.max(1);
    println!(
        r#"{{"status":"ok","mode":"cpu","request":{},"warmup":{},"requests":{},"wall_ns":{},"cpu_ticks":{},"clk_tck":{},"cpu_ns":{},"cpu_ns_per_request":{}}}"#,
        json_str(&a.request),
        a.warmup,
        served,
        wall,
        ticks,
        a.clk_tck,
        cpu_ns,
        cpu_ns / served.max(1),
    );
}

fn main() {
    let a = parse_args();
    let result = match a.mode.as_str() {
        "requests" => {
            requests();
            Ok(())
        }
        "latency" if a.grpc => grpc_modes::latency(&a),
        "concurrent" if a.grpc => grpc_modes::concurrent(a),
        "cpu" if a.grpc => grpc_modes::cpu(&a),
        "latency" => latency(&a),
        "concurrent" => concurrent(a),
        "cpu" => cpu(&a),
        other => fail(&format!("unknown mode {other}")),
    };
    if let Err(e) = result {
        fail(&e.to_string());
    }
}

/// The three timed modes over gRPC; same lines as over HTTP.
mod grpc_modes {
    use super::*;

    fn runtime() -> io::Result<tokio::runtime::Runtime> {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    }

    fn workload(a: &Args) -> (String, Vec<u8>, bool) {
        let (path, body) =
            grpc::request(&a.request).unwrap_or_else(|| fail(&format!("unknown request {:?}", a.request)));
        (path, body, a.request == "stream")
    }

    async fn checked(conn: &mut grpc::Conn, a: &Args, path: &str, body: &[u8], streaming: bool, what: &str) -> usize {
        let wire = conn.call(path, body, streaming).await.unwrap_or_else(|e| fail(&format!("{what}: {e}")));
        if let Err(e) = grpc::verify(&conn.messages, &a.checks.expect, &a.checks.forbid) {
            fail(&format!("{what}: {e}"));
        }
        wire
    }

    pub(super) fn latency(a: &Args) -> io::Result<()> {
        let (path, body, streaming) = workload(a);
        runtime()?.block_on(async {
            let mut conn = grpc::Conn::open(a.port).await?;
            let mut times = Vec::with_capacity(a.count);
            let mut wire = 0;
            for i in 0..a.warmup + a.count {
                if i == a.warmup {
                    super::hold(a, true);
                }
                let start = Instant::now();
                wire = checked(&mut conn, a, &path, &body, streaming, &format!("request {i}")).await;
                let ns = start.elapsed().as_nanos() as u64;
                if i >= a.warmup {
                    times.push(ns);
                }
            }
            let body_bytes = conn.messages.iter().map(Vec::len).sum();
            // Binary: the first answer message in hex, cut at 128 bytes.
            let first = conn.messages.first().map(Vec::as_slice).unwrap_or_default();
            let sample: String = first.iter().take(128).map(|b| format!("{b:02x}")).collect();
            print_latency(a, body.len(), times, (wire, body_bytes, conn.messages.len()), 0, &sample);
            super::hold(a, false);
            Ok(())
        })
    }

    async fn run_all(
        conns: Vec<grpc::Conn>,
        a: &'static Args,
        req: &'static (String, Vec<u8>, bool),
        each: usize,
    ) -> Vec<grpc::Conn> {
        let mut set = tokio::task::JoinSet::new();
        for (k, mut conn) in conns.into_iter().enumerate() {
            set.spawn(async move {
                for _ in 0..each {
                    checked(&mut conn, a, &req.0, &req.1, req.2, &format!("connection {k}")).await;
                }
                (k, conn)
            });
        }
        let mut out: Vec<(usize, grpc::Conn)> = set.join_all().await;
        out.sort_by_key(|(k, _)| *k);
        out.into_iter().map(|(_, c)| c).collect()
    }

    pub(super) fn concurrent(a: Args) -> io::Result<()> {
        let a: &'static Args = Box::leak(Box::new(a));
        let req: &'static (String, Vec<u8>, bool) = Box::leak(Box::new(workload(a)));
        runtime()?.block_on(async move {
            let mut conns = Vec::with_capacity(a.connections);
            for k in 0..a.connections {
                conns.push(grpc::Conn::open(a.ports[k % a.ports.len()]).await?);
            }
            conns = run_all(conns, a, req, a.warmup).await;
            let mut batch = Vec::with_capacity(a.batches);
            for _ in 0..a.batches {
                let start = Instant::now();
                conns = run_all(conns, a, req, 1).await;
                batch.push(start.elapsed().as_nanos() as u64);
            }
            let start = Instant::now();
            run_all(conns, a, req, a.per_connection).await;
            print_concurrent(a, batch, start.elapsed().as_nanos() as u64);
            Ok(())
        })
    }

    pub(super) fn cpu(a: &Args) -> io::Result<()> {
        if a.pids.is_empty() {
            fail("cpu needs --pid");
        }
        let ticks_now = || a.pids.iter().try_fold(0u64, |sum, &pid| Ok::<u64, io::Error>(sum + cpu_ticks(pid)?));
        let (path, body, streaming) = workload(a);
        runtime()?.block_on(async {
            let mut conn = grpc::Conn::open(a.port).await?;
            for i in 0..a.warmup {
                checked(&mut conn, a, &path, &body, streaming, &format!("warm-up request {i}")).await;
            }
            let budget = Duration::from_secs_f64(a.seconds);
            let before = ticks_now()?;
            let start = Instant::now();
            let mut served = 0u64;
            while start.elapsed() < budget {
                checked(&mut conn, a, &path, &body, streaming, &format!("request {served}")).await;
                served += 1;
            }
            let wall = start.elapsed().as_nanos() as u64;
            print_cpu(a, served, wall, ticks_now()? - before);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_large_body_is_just_under_the_request_limit() {
        let body = body("large").unwrap();
        assert!(body.len() < 4 << 20, "{} bytes", body.len());
        assert!(body.len() > (4 << 20) - 8192, "{} bytes", body.len());
        let (_, grpc) = grpc::request("large").unwrap();
        assert!(grpc.len() < 4 << 20, "{} bytes", grpc.len());
    }
}
