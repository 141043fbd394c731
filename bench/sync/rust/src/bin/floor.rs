//! The raw pipe floor of the sync-channel benchmark: no protocol, no parsing, the same
//! pipes and process pair as a client and its server.
//!
//! The parent starts a copy of itself with `--serve` (stdin and stdout piped). Per
//! iteration it writes an 8-byte request (a little-endian u32: how many bytes to answer,
//! then 4 zero bytes) and reads exactly that many bytes back into a reused buffer; the
//! child reads each request with `read_exact` and answers from a buffer filled once,
//! with one `write_all`. Both sides use unbuffered blocking reads and writes on the
//! pipes (the kernel's 64 KiB pipe buffer in between).
//!
//! Workloads: `echo` (answers as long as the echo `Response` tuple: the floor of a tiny
//! round trip) and `transfer-small|medium|large` (answers as long as that file's
//! `getSourceFile` payload, from the inputs' `transfer_bytes`: the floor of moving it).

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use bench_sync::{main_with, unsupported, Args, BoxError, Driver, Samples, Workload};
use serde_json::{json, Value};

fn serve() -> std::io::Result<()> {
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut answer: Vec<u8> = Vec::new();
    let mut request = [0u8; 8];
    loop {
        match input.read_exact(&mut request) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(error) => return Err(error),
        }
        let length = u32::from_le_bytes([request[0], request[1], request[2], request[3]]) as usize;
        if answer.len() < length {
            answer = (0..length).map(|index| (index % 251) as u8).collect();
        }
        output.write_all(&answer[..length])?;
        output.flush()?;
    }
}

struct Pair {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buffer: Vec<u8>,
}

impl Pair {
    fn start() -> Result<Pair, BoxError> {
        let mut child = Command::new(std::env::current_exe()?)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the child's pipes are missing".into());
        };
        Ok(Pair { child, stdin, stdout, buffer: Vec::new() })
    }

    fn round_trip(&mut self, length: usize) -> std::io::Result<()> {
        let mut request = [0u8; 8];
        request[..4].copy_from_slice(&(length as u32).to_le_bytes());
        self.stdin.write_all(&request)?;
        if self.buffer.len() < length {
            self.buffer.resize(length, 0);
        }
        self.stdout.read_exact(&mut self.buffer[..length])
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Default)]
struct Floor {
    pair: Option<Pair>,
}

impl Driver for Floor {
    fn run(&mut self, args: &Args, workload: &Workload) -> Result<Value, BoxError> {
        let name = workload.name.as_str();
        let length = match name {
            "echo" => args.inputs["echo_tuple_bytes"].as_u64().ok_or("inputs: no echo_tuple_bytes")?,
            _ if name.starts_with("transfer-") => {
                let size = name.trim_start_matches("transfer-");
                args.inputs["transfer_bytes"][size]
                    .as_u64()
                    .ok_or_else(|| format!("inputs: no transfer_bytes.{size}"))?
            }
            _ => return Ok(unsupported(workload, "the floor only moves bytes (echo, transfer-*)")),
        } as usize;
        if self.pair.is_none() {
            self.pair = Some(Pair::start()?);
        }
        let pair = self.pair.as_mut().expect("just started");
        let mut samples = Samples::new(workload);
        for _ in 0..workload.total() {
            let started = Instant::now();
            pair.round_trip(length)?;
            samples.record(started.elapsed());
        }
        Ok(samples.line(workload, json!({ "bytes": length, "request_bytes": 8 })))
    }

    fn close(&mut self) {
        if let Some(pair) = self.pair.take() {
            pair.stop();
        }
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--serve") {
        if let Err(error) = serve() {
            eprintln!("bench-sync-floor --serve: {error}");
            std::process::exit(1);
        }
        return;
    }
    main_with(&mut Floor::default());
}
