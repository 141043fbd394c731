//! What the Rust sync-channel drivers share (bench/sync/README part of bench/README.md):
//! the command line, the inputs file, the sample loop and the JSON output line.
//!
//! ```text
//! <driver> --tsc PATH --project DIR --inputs INPUTS.json --workload NAME:WARMUP:ITERATIONS [--workload ...]
//! ```
//!
//! One JSON line per workload, in the order given:
//! `{"status":"ok","workload":NAME,"warmup":W,"iterations":N,"samples_ns":[...],"detail":{...}}`,
//! `{"status":"unsupported","workload":NAME,"reason":"..."}` for a workload the
//! implementation cannot run, or `{"status":"error",...}` (exit code 1).

use std::error::Error;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

/// A failure of one workload.
pub type BoxError = Box<dyn Error>;

/// One workload to run: its name and its untimed and timed iteration counts.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The workload's name (`echo`, `transfer-large`, …).
    pub name: String,
    /// Untimed iterations first.
    pub warmup: u32,
    /// Timed iterations after them.
    pub iterations: u32,
}

impl Workload {
    /// Warm-up plus timed iterations.
    pub fn total(&self) -> u32 {
        self.warmup + self.iterations
    }
}

/// The command line: the server binary, the project directory, the inputs and the workloads.
#[derive(Debug)]
pub struct Args {
    /// The `tsc` binary with the `--api` server.
    pub tsc: PathBuf,
    /// The project directory (absolute: the server's `--cwd`).
    pub project: PathBuf,
    /// The inputs file the runner wrote (files, positions, payload sizes).
    pub inputs: Value,
    /// The workloads, in order.
    pub workloads: Vec<Workload>,
}

/// Reads the command line (`std::env::args`).
pub fn parse_args() -> Result<Args, BoxError> {
    let mut tsc = None;
    let mut project = None;
    let mut inputs = None;
    let mut workloads = Vec::new();
    let mut argv = std::env::args().skip(1);
    while let Some(flag) = argv.next() {
        let value = argv.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--tsc" => tsc = Some(PathBuf::from(value)),
            "--project" => project = Some(PathBuf::from(value)),
            "--inputs" => inputs = Some(serde_json::from_slice(&std::fs::read(&value)?)?),
            "--workload" => {
                let mut parts = value.split(':');
                let (Some(name), Some(warmup), Some(iterations), None) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    return Err(format!("--workload {value}: expected NAME:WARMUP:ITERATIONS").into());
                };
                workloads.push(Workload {
                    name: name.to_owned(),
                    warmup: warmup.parse()?,
                    iterations: iterations.parse()?,
                });
            }
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    let project: PathBuf = project.ok_or("--project is required")?;
    if !project.is_absolute() {
        return Err("--project must be absolute (tsc --api panics on a relative --cwd)".into());
    }
    Ok(Args { tsc: tsc.ok_or("--tsc is required")?, project, inputs: inputs.ok_or("--inputs is required")?, workloads })
}

/// The timed samples of one workload: warm-up iterations are dropped.
#[derive(Debug)]
pub struct Samples {
    warmup: u32,
    seen: u32,
    ns: Vec<u64>,
}

impl Samples {
    /// Samples for `workload`.
    pub fn new(workload: &Workload) -> Samples {
        Samples { warmup: workload.warmup, seen: 0, ns: Vec::with_capacity(workload.iterations as usize) }
    }

    /// Records one iteration's time (kept only past the warm-up).
    pub fn record(&mut self, elapsed: Duration) {
        if self.seen >= self.warmup {
            self.ns.push(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
        }
        self.seen += 1;
    }

    /// The output line of a finished workload.
    pub fn line(self, workload: &Workload, detail: Value) -> Value {
        json!({
            "status": "ok",
            "workload": workload.name,
            "warmup": workload.warmup,
            "iterations": self.ns.len(),
            "samples_ns": self.ns,
            "detail": detail,
        })
    }
}

/// The line of a workload this implementation does not run.
pub fn unsupported(workload: &Workload, reason: &str) -> Value {
    json!({ "status": "unsupported", "workload": workload.name, "reason": reason })
}

/// A string field of the inputs.
pub fn input_str<'a>(inputs: &'a Value, key: &str) -> Result<&'a str, BoxError> {
    inputs[key].as_str().ok_or_else(|| format!("inputs: `{key}` is not a string").into())
}

/// The file of a transfer or materialize workload (`transfer-large` → `files.large`).
pub fn input_file<'a>(inputs: &'a Value, workload: &str) -> Result<&'a str, BoxError> {
    let size = workload.rsplit('-').next().unwrap_or_default();
    inputs["files"][size].as_str().ok_or_else(|| format!("inputs: no file for {workload}").into())
}

/// One implementation under test: runs workloads, and ends its children when told.
pub trait Driver {
    /// Runs one workload, returning its output line.
    fn run(&mut self, args: &Args, workload: &Workload) -> Result<Value, BoxError>;
    /// Ends and reaps every child process still running.
    fn close(&mut self);
}

/// Runs every workload of the command line on `driver`, printing one line each. An
/// error prints an error line and exits with status 1, after `driver.close()`.
pub fn main_with(driver: &mut dyn Driver) {
    let args = match parse_args() {
        Ok(args) => args,
        Err(error) => {
            println!("{}", json!({ "status": "error", "error": error.to_string() }));
            std::process::exit(2);
        }
    };
    for workload in &args.workloads {
        match driver.run(&args, workload) {
            Ok(line) => println!("{line}"),
            Err(error) => {
                println!("{}", json!({ "status": "error", "workload": workload.name, "error": error.to_string() }));
                driver.close();
                std::process::exit(1);
            }
        }
    }
    driver.close();
}
