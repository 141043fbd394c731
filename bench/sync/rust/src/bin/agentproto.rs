//! The sync-channel driver on agentproto's Rust crate (`agentproto-sync`, blocking std
//! I/O): spawns the pinned `tsc --api` and runs seed 002's workloads on it (bench/README.md,
//! "Sync channel"). What differs between the servers goes through the typed `tsc` layer:
//! `tsc::initialize` configured with the release the inputs name (it fails if the server
//! answers like another one) and `Session::open_project` (`updateSnapshot` on 7.0.2,
//! `createSnapshot` on 7.1). Other JSON params are built with `serde_json` per call and JSON
//! results decoded into `serde_json::Value`, as a user of `Client::request_json` does;
//! binary results (`getSourceFile`) are the client's reused buffer, read in place by
//! `agentproto_sync::ast::SourceFile` (either format).

use std::process::Command;
use std::time::Instant;

use agentproto_sync::ast::{kind, SourceFile};
use agentproto_sync::tsc::{self, ServerApi};
use agentproto_sync::{Client, ClientOptions};
use bench_sync::{input_file, input_str, main_with, unsupported, Args, BoxError, Driver, Samples, Workload};
use serde_json::{json, Value};

fn spawn(args: &Args) -> Result<Client, BoxError> {
    let mut command = Command::new(&args.tsc);
    command.arg("--api").arg("--cwd").arg(&args.project);
    // The main thread spawns every server and outlives them all.
    Ok(Client::spawn(command, ClientOptions::default().die_with_parent(true))?)
}

/// The release the inputs name (`server`), as the typed layer's method set.
fn server_api(args: &Args) -> Result<ServerApi, BoxError> {
    let release = input_str(&args.inputs, "server")?;
    [ServerApi::V7_0, ServerApi::V7_1]
        .into_iter()
        .find(|api| api.typescript() == release)
        .ok_or_else(|| format!("inputs: no method set known for typescript {release}").into())
}

/// `initialize` through the typed layer, configured with the inputs' release.
fn initialize(client: &mut Client, args: &Args) -> Result<tsc::Session, BoxError> {
    Ok(tsc::initialize(client, Some(server_api(args)?))?)
}

/// The release's method opening the project: (snapshot id, project id, root file count).
fn open_project(typed: &tsc::Session, client: &mut Client, tsconfig: &str) -> Result<(u64, String, usize), BoxError> {
    let opened = typed.open_project(client, tsconfig)?;
    let project = opened.projects.into_iter().next().ok_or("no project opened")?;
    Ok((opened.snapshot, project.id, project.root_files.len()))
}

/// The server every workload but `spawn` and `load-cold` shares, with the project open.
struct Session {
    client: Client,
    typed: tsc::Session,
    snapshot: u64,
    project: String,
    roots: usize,
}

#[derive(Default)]
struct Agentproto {
    session: Option<Session>,
}

impl Agentproto {
    fn session(&mut self, args: &Args) -> Result<&mut Session, BoxError> {
        if self.session.is_none() {
            let mut client = spawn(args)?;
            let typed = initialize(&mut client, args)?;
            let (snapshot, project, roots) = open_project(&typed, &mut client, input_str(&args.inputs, "tsconfig")?)?;
            self.session = Some(Session { client, typed, snapshot, project, roots });
        }
        Ok(self.session.as_mut().expect("just opened"))
    }
}

fn source_file_params(session: &Session, file: &str) -> Result<Vec<u8>, BoxError> {
    Ok(serde_json::to_vec(&json!({ "snapshot": session.snapshot, "project": session.project, "file": file }))?)
}

fn positions(inputs: &Value) -> Result<Vec<u64>, BoxError> {
    let list = inputs["positions"].as_array().ok_or("inputs: no positions")?;
    list.iter().map(|p| p.as_u64().ok_or_else(|| "inputs: a position is not an integer".into())).collect()
}

impl Driver for Agentproto {
    fn run(&mut self, args: &Args, workload: &Workload) -> Result<Value, BoxError> {
        let inputs = &args.inputs;
        let echo_payload = input_str(inputs, "echo_payload")?.as_bytes();
        let mut samples = Samples::new(workload);
        let name = workload.name.as_str();
        let detail = match name {
            "spawn" => {
                let mut spawn_call = Vec::new();
                for index in 0..workload.total() {
                    let started = Instant::now();
                    let mut client = spawn(args)?;
                    let spawned = started.elapsed();
                    let answered = client.request("echo", echo_payload)? == echo_payload;
                    samples.record(started.elapsed());
                    client.close()?;
                    if !answered {
                        return Err("echo answered other bytes".into());
                    }
                    if index >= workload.warmup {
                        spawn_call.push(spawned.as_nanos() as u64);
                    }
                }
                json!({ "spawn_call_ns": spawn_call })
            }
            "load-cold" => {
                let mut roots = 0;
                for _ in 0..workload.total() {
                    let mut client = spawn(args)?;
                    let typed = initialize(&mut client, args)?;
                    let started = Instant::now();
                    let opened = open_project(&typed, &mut client, input_str(inputs, "tsconfig")?)?;
                    samples.record(started.elapsed());
                    roots = opened.2;
                    client.close()?;
                }
                json!({ "root_files": roots })
            }
            "load-warm" => {
                let tsconfig = input_str(inputs, "tsconfig")?;
                let session = self.session(args)?;
                for _ in 0..workload.total() {
                    let started = Instant::now();
                    let (snapshot, _, roots) = open_project(&session.typed, &mut session.client, tsconfig)?;
                    samples.record(started.elapsed());
                    // Untimed: release the previous snapshot, as disposing it does in the official client.
                    let _: Option<Value> =
                        session.client.request_json("release", &json!({ "snapshot": session.snapshot }))?;
                    session.snapshot = snapshot;
                    session.roots = roots;
                }
                json!({ "root_files": session.roots })
            }
            "echo" => {
                let session = self.session(args)?;
                let mut length = 0;
                for _ in 0..workload.total() {
                    let started = Instant::now();
                    let answer = session.client.request("echo", echo_payload)?;
                    samples.record(started.elapsed());
                    if answer != echo_payload {
                        return Err("echo answered other bytes".into());
                    }
                    length = answer.len();
                }
                json!({ "bytes": length })
            }
            _ if name.starts_with("transfer-") => {
                let file = input_file(inputs, name)?;
                let session = self.session(args)?;
                let mut length = 0;
                for _ in 0..workload.total() {
                    let started = Instant::now();
                    let params = source_file_params(session, file)?;
                    length = session.client.request("getSourceFile", &params)?.len();
                    samples.record(started.elapsed());
                }
                json!({ "bytes": length })
            }
            _ if name.starts_with("materialize-") => {
                let file = input_file(inputs, name)?;
                let session = self.session(args)?;
                let (mut nodes, mut length) = (0, 0);
                for _ in 0..workload.total() {
                    let params = source_file_params(session, file)?;
                    let bytes = session.client.request("getSourceFile", &params)?;
                    let started = Instant::now();
                    let source_file = SourceFile::new(bytes)?;
                    nodes = source_file.root().descendants().count();
                    samples.record(started.elapsed());
                    length = bytes.len();
                }
                json!({ "nodes": nodes, "bytes": length })
            }
            "symbol-once" => {
                let file = input_str(inputs, "symbol_file")?;
                let position = inputs["symbol_position"].as_u64().ok_or("inputs: no symbol_position")?;
                let session = self.session(args)?;
                let mut symbol = Value::Null;
                for _ in 0..workload.total() {
                    let started = Instant::now();
                    let params = json!({ "snapshot": session.snapshot, "project": session.project, "file": file, "position": position });
                    let answer: Option<Value> = session.client.request_json("getSymbolAtPosition", &params)?;
                    samples.record(started.elapsed());
                    symbol = answer.unwrap_or(Value::Null);
                }
                json!({ "name": symbol["name"] })
            }
            "symbol-each" => {
                let file = input_str(inputs, "symbol_file")?;
                let positions = positions(inputs)?;
                let session = self.session(args)?;
                let mut found = 0;
                for _ in 0..workload.total() {
                    found = 0;
                    let started = Instant::now();
                    for &position in &positions {
                        let params = json!({ "snapshot": session.snapshot, "project": session.project, "file": file, "position": position });
                        let answer: Option<Value> = session.client.request_json("getSymbolAtPosition", &params)?;
                        if answer.is_some_and(|symbol| !symbol.is_null()) {
                            found += 1;
                        }
                    }
                    samples.record(started.elapsed());
                }
                json!({ "calls": positions.len(), "found": found })
            }
            "symbol-batched" => {
                let file = input_str(inputs, "symbol_file")?;
                let positions = positions(inputs)?;
                let session = self.session(args)?;
                let mut found = 0;
                for _ in 0..workload.total() {
                    let started = Instant::now();
                    let params = json!({ "snapshot": session.snapshot, "project": session.project, "file": file, "positions": positions });
                    let answer: Option<Value> = session.client.request_json("getSymbolsAtPositions", &params)?;
                    samples.record(started.elapsed());
                    let list =
                        answer.as_ref().and_then(Value::as_array).ok_or("getSymbolsAtPositions: not an array")?;
                    if list.len() != positions.len() {
                        return Err("getSymbolsAtPositions: one answer per position expected".into());
                    }
                    found = list.iter().filter(|symbol| !symbol.is_null()).count();
                }
                json!({ "positions": positions.len(), "found": found })
            }
            "identifiers" => {
                // Not timed: where each identifier of the symbol file starts (its end minus
                // its text in UTF-16 code units), the positions every implementation asks about.
                let file = input_str(inputs, "symbol_file")?;
                let session = self.session(args)?;
                let params = source_file_params(session, file)?;
                let source_file = SourceFile::new(session.client.request("getSourceFile", &params)?)?;
                let mut starts = Vec::new();
                for node in source_file.root().descendants().filter(|node| node.kind() == kind::IDENTIFIER) {
                    let text = std::str::from_utf8(node.text().ok_or("an identifier without text")?)?;
                    starts.push(node.end() as usize - text.encode_utf16().count());
                }
                samples.record(std::time::Duration::ZERO);
                json!({ "file": file, "positions": starts })
            }
            _ => return Ok(unsupported(workload, "no such workload")),
        };
        Ok(samples.line(workload, detail))
    }

    fn close(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = session.client.close();
        }
    }
}

fn main() {
    main_with(&mut Agentproto::default());
}
