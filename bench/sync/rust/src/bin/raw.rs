//! A raw tuple client of `tsc --api`, the least a client of this server can take: it
//! writes each request tuple by hand and reads the answer with plain reads into one
//! reused buffer, parsing only the tuple header (no client library, no callbacks, no
//! JSON decoding of the answers it times). For each answer it also records when its
//! first byte arrived, which splits a transfer into the server's own time (request →
//! first byte: the server encodes the whole AST before it writes) and moving the bytes
//! (first → last byte).
//!
//! Workloads: `echo`, `load-warm` (opening the project again) and
//! `transfer-small|medium|large` (`getSourceFile`), on one server with the project open (its
//! first `initialize` and opening are not timed). The release the inputs name (`server`)
//! picks, by hand, the method that opens the project and where its answer lists the root
//! files ([`Opening`]); nothing else differs for these workloads.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use bench_sync::{main_with, unsupported, Args, BoxError, Driver, Samples, Workload};
use serde_json::{json, Value};

/// How a release opens a project: the method, and where its answer's project lists the root files.
struct Opening {
    method: &'static str,
    root_files: &'static [&'static str],
}

impl Opening {
    fn of(args: &Args) -> Result<Opening, BoxError> {
        match args.inputs["server"].as_str() {
            Some("7.0.2") => Ok(Opening { method: "updateSnapshot", root_files: &["rootFiles"] }),
            Some("7.1.0-beta") => {
                Ok(Opening { method: "createSnapshot", root_files: &["parsedCommandLine", "fileNames"] })
            }
            other => Err(format!("inputs: no opening method known for server {other:?}").into()),
        }
    }

    fn request(&self, args: &Args) -> Result<Vec<u8>, BoxError> {
        let tsconfig = args.inputs["tsconfig"].as_str().ok_or("inputs: no tsconfig")?;
        Ok(request_tuple(self.method, json!({ "openProjects": [tsconfig] }).to_string().as_bytes()))
    }

    /// The root file count of the answer's first project.
    fn roots(&self, answer: &Value) -> usize {
        let list = self.root_files.iter().fold(&answer["projects"][0], |value, key| &value[*key]);
        list.as_array().map_or(0, Vec::len)
    }
}

/// A request tuple `[1, name, payload]`, bin8/16/32 as short as fits.
fn request_tuple(name: &str, payload: &[u8]) -> Vec<u8> {
    fn bin(out: &mut Vec<u8>, bytes: &[u8]) {
        match bytes.len() {
            n if n < 256 => out.extend_from_slice(&[0xc4, n as u8]),
            n if n < 65_536 => {
                out.push(0xc5);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(0xc6);
                out.extend_from_slice(&(n as u32).to_be_bytes());
            }
        }
        out.extend_from_slice(bytes);
    }
    let mut out = vec![0x93, 0x01];
    bin(&mut out, name.as_bytes());
    bin(&mut out, payload);
    out
}

/// The header of a bin field at `at`: (its length, where its bytes start), once enough is read.
fn bin_header(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let size = match bytes.get(at)? {
        0xc4 => 1,
        0xc5 => 2,
        0xc6 => 4,
        _ => return Some((usize::MAX, 0)),
    };
    let field = bytes.get(at + 1..at + 1 + size)?;
    let length = field.iter().fold(0usize, |acc, &b| (acc << 8) | b as usize);
    Some((length, at + 1 + size))
}

/// `tsc --api` driven with hand-written tuples: no client library, no callbacks.
struct RawTsc {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buffer: Vec<u8>,
    opening: Opening,
    snapshot: u64,
    project: String,
}

impl RawTsc {
    fn start(args: &Args) -> Result<RawTsc, BoxError> {
        let mut child = Command::new(&args.tsc)
            .arg("--api")
            .arg("--cwd")
            .arg(&args.project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the server's pipes are missing".into());
        };
        let opening = match Opening::of(args) {
            Ok(opening) => opening,
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(error);
            }
        };
        let buffer = vec![0; 1 << 16];
        let mut raw = RawTsc { child, stdin, stdout, buffer, opening, snapshot: 0, project: String::new() };
        let opened = raw.json("initialize", b"null").and_then(|_| {
            let tuple = raw.opening.request(args)?;
            let (start, end, _) = raw.exchange(&tuple)?;
            Ok(serde_json::from_slice::<Value>(&raw.buffer[start..end])?)
        });
        match opened {
            Ok(answer) => {
                raw.snapshot = answer["snapshot"].as_u64().ok_or("opening the project: no snapshot")?;
                let project = answer["projects"][0]["id"].as_str().ok_or("opening the project: no project")?;
                raw.project = project.to_owned();
                Ok(raw)
            }
            Err(error) => {
                raw.stop();
                Err(error)
            }
        }
    }

    fn json(&mut self, method: &str, params: &[u8]) -> Result<Value, BoxError> {
        let (start, end, _) = self.exchange(&request_tuple(method, params))?;
        if start == end {
            return Ok(Value::Null); // an empty result: "undefined"
        }
        Ok(serde_json::from_slice(&self.buffer[start..end])?)
    }

    /// Writes `tuple`, reads one answer tuple whole: (payload start, payload end, first byte time).
    fn exchange(&mut self, tuple: &[u8]) -> Result<(usize, usize, Instant), BoxError> {
        self.stdin.write_all(tuple)?;
        let mut filled = 0;
        let mut first = None;
        loop {
            if filled == self.buffer.len() {
                self.buffer.resize(self.buffer.len() * 2, 0);
            }
            let read = self.stdout.read(&mut self.buffer[filled..])?;
            if read == 0 {
                return Err("the server closed its output".into());
            }
            first.get_or_insert_with(Instant::now);
            filled += read;
            let bytes = &self.buffer[..filled];
            if bytes.len() < 2 {
                continue;
            }
            if bytes[0] != 0x93 || bytes[1] != 4 {
                return Err(format!("not a Response tuple: {:02x?}", &bytes[..2]).into());
            }
            let Some((name_length, name_start)) = bin_header(bytes, 2) else { continue };
            let Some((length, start)) = bin_header(bytes, name_start + name_length) else { continue };
            if name_length == usize::MAX || length == usize::MAX {
                return Err("not a bin field".into());
            }
            if self.buffer.len() < start + length {
                self.buffer.resize(start + length, 0);
            }
            if filled >= start + length {
                return Ok((start, start + length, first.expect("a byte was read")));
            }
        }
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Default)]
struct Raw {
    raw: Option<RawTsc>,
}

impl Driver for Raw {
    fn run(&mut self, args: &Args, workload: &Workload) -> Result<Value, BoxError> {
        if self.raw.is_none() {
            self.raw = Some(RawTsc::start(args)?);
        }
        let raw = self.raw.as_mut().expect("just started");
        let mut samples = Samples::new(workload);
        let mut first_byte = Vec::new();
        let name = workload.name.as_str();
        if name == "load-warm" {
            // As the clients do (which leaves the server in the same state before the
            // transfers): the project opened again, the answer parsed and the old snapshot
            // released after the clock.
            let tuple = raw.opening.request(args)?;
            let mut roots = 0;
            for _ in 0..workload.total() {
                let started = Instant::now();
                let (start, end, _) = raw.exchange(&tuple)?;
                samples.record(started.elapsed());
                let answer: Value = serde_json::from_slice(&raw.buffer[start..end])?;
                roots = raw.opening.roots(&answer);
                let old = std::mem::replace(&mut raw.snapshot, answer["snapshot"].as_u64().ok_or("no snapshot")?);
                raw.json("release", json!({ "snapshot": old }).to_string().as_bytes())?;
            }
            return Ok(samples.line(workload, json!({ "root_files": roots })));
        }
        if name != "echo" && !name.starts_with("transfer-") {
            return Ok(unsupported(workload, "the raw client only sends echo, the project opening and getSourceFile"));
        }
        let tuple = if name == "echo" {
            request_tuple("echo", args.inputs["echo_payload"].as_str().ok_or("inputs: no echo_payload")?.as_bytes())
        } else {
            let size = name.trim_start_matches("transfer-");
            let file = args.inputs["files"][size].as_str().ok_or_else(|| format!("inputs: no file for {size}"))?;
            let params = json!({ "snapshot": raw.snapshot, "project": raw.project, "file": file });
            request_tuple("getSourceFile", params.to_string().as_bytes())
        };
        let mut length = 0;
        for index in 0..workload.total() {
            let started = Instant::now();
            let (start, end, first) = raw.exchange(&tuple)?;
            samples.record(started.elapsed());
            length = end - start;
            if index >= workload.warmup {
                first_byte.push((first - started).as_nanos() as u64);
            }
        }
        Ok(samples.line(workload, json!({ "bytes": length, "first_byte_ns": first_byte })))
    }

    fn close(&mut self) {
        if let Some(raw) = self.raw.take() {
            raw.stop();
        }
    }
}

fn main() {
    main_with(&mut Raw::default());
}
