//! What the integration tests share: the pinned peer's paths, bounded waits,
//! the official walk, and the same walk over our reader.

#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

pub(crate) mod fixture_cases;

use agentproto_sync::ast::SourceFile;
use agentproto_sync::tsc::ServerApi;
use agentproto_sync::{Client, ClientOptions, Killer};

/// How long any one test may talk to a child before the child is killed.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// Both pinned servers, every test of the real peer runs against each.
pub(crate) const SERVERS: [ServerApi; 2] = [ServerApi::V7_0, ServerApi::V7_1];

/// `interop/tsc-api`, where `walk.mjs` lives and `npm ci` installs `typescript@7.0.2`.
pub(crate) fn interop_dir() -> PathBuf {
    repo_root().join("interop/tsc-api")
}

/// The npm folder of one pinned server: `interop/tsc-api` (7.0.2) or `interop/tsc-api/7.1` (7.1.0-beta).
pub(crate) fn install_dir(server: ServerApi) -> PathBuf {
    match server {
        ServerApi::V7_1 => interop_dir().join("7.1"),
        _ => interop_dir(),
    }
}

/// The platform package's `lib` directory: the `tsc` binary and the `lib.*.d.ts` files.
pub(crate) fn tsc_lib_dir(server: ServerApi) -> PathBuf {
    install_dir(server).join("node_modules/@typescript/typescript-linux-x64/lib")
}

/// A pinned `tsc` binary; a missing one fails the test (never a silent skip).
pub(crate) fn tsc_binary(server: ServerApi) -> PathBuf {
    let binary = tsc_lib_dir(server).join("tsc");
    let install = install_dir(server);
    assert!(
        binary.is_file(),
        "the pinned TypeScript {} API server is missing at {}: run `npm ci --prefix {} --no-audit --no-fund`",
        server.typescript(),
        binary.display(),
        install.strip_prefix(repo_root()).unwrap_or(&install).display()
    );
    binary
}

/// `tsc --api --cwd CWD` plus `extra` arguments of one server, as a client.
pub(crate) fn spawn_tsc(server: ServerApi, cwd: &Path, extra: &[&str]) -> Client {
    assert!(cwd.is_absolute(), "tsc --api panics on a relative --cwd");
    let mut command = Command::new(tsc_binary(server));
    command.arg("--api").arg("--cwd").arg(cwd).args(extra);
    Client::spawn(command, ClientOptions::default()).expect("spawn tsc --api")
}

/// Kills a child if the test has not finished with it within a deadline, so
/// that a blocked request returns (with an error) instead of hanging the test.
pub(crate) struct Watchdog {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<thread::JoinHandle<bool>>,
}

impl Watchdog {
    pub(crate) fn new(killer: Killer, deadline: Duration) -> Watchdog {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::spawn(move || match stopped.recv_timeout(deadline) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                killer.kill();
                true
            }
            _ => false,
        });
        Watchdog { stop: Some(stop), thread: Some(thread) }
    }

    /// Stops watching; panics if the deadline had passed (the child was killed).
    pub(crate) fn finish(mut self) {
        assert!(!self.stop_thread(), "the child was killed after {DEADLINE:?}: a request hung");
    }

    fn stop_thread(&mut self) -> bool {
        drop(self.stop.take());
        self.thread.take().map(|thread| thread.join().unwrap_or(false)).unwrap_or(false)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Runs a child to completion with piped stdout, killing its process group
/// if it takes longer than `deadline`. Returns its stdout.
pub(crate) fn run_bounded(mut command: Command, deadline: Duration) -> String {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    agentproto_process::isolate(&mut command);
    let mut child = command.spawn().expect("spawn");
    let mut group = agentproto_process::Group::new(child.id());
    let mut stdout = child.stdout.take().expect("piped stdout");
    let (done, finished) = mpsc::channel();
    let reader = thread::spawn(move || {
        let mut output = String::new();
        let outcome = stdout.read_to_string(&mut output).map(|_| output);
        let _ = done.send(());
        outcome
    });
    let timed_out = finished.recv_timeout(deadline).is_err();
    group.end();
    let status = child.wait().expect("reap");
    let output = reader.join().expect("reader thread").expect("read stdout");
    assert!(!timed_out, "{command:?} did not finish within {deadline:?}");
    assert!(status.success(), "{command:?} failed with {status}");
    output
}

/// What the official walk (`interop/tsc-api/walk.mjs`) reports for a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Walk {
    pub(crate) nodes: u64,
    pub(crate) digest: String,
}

/// Runs `walk.mjs` (the official JS client of `server`'s package, on the same binary) over `files`.
pub(crate) fn official_walk(server: ServerApi, cwd: &Path, project: &Path, files: &[&Path]) -> Vec<Walk> {
    tsc_binary(server);
    let mut command = Command::new("node");
    command
        .arg(interop_dir().join("walk.mjs"))
        .arg("--install")
        .arg(install_dir(server))
        .arg("--cwd")
        .arg(cwd)
        .arg("--project")
        .arg(project)
        .args(files);
    let output = run_bounded(command, Duration::from_secs(120));
    let walks: Vec<Walk> = output
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("walk.mjs prints JSON lines");
            Walk {
                nodes: value["nodes"].as_u64().expect("nodes"),
                digest: value["digest"].as_str().expect("digest").to_owned(),
            }
        })
        .collect();
    assert_eq!(walks.len(), files.len(), "walk.mjs output: {output}");
    walks
}

/// The same walk over our reader: the nodes a recursive `forEachChild` visits
/// below the root, and the FNV-1a digest of their (kind, pos, end).
pub(crate) fn our_walk(file: &SourceFile<'_>) -> Walk {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
    let mut nodes = 0u64;
    for node in file.root().descendants() {
        nodes += 1;
        for value in [node.kind(), node.pos() as u32, node.end() as u32] {
            for byte in value.to_le_bytes() {
                digest ^= u64::from(byte);
                digest = digest.wrapping_mul(PRIME);
            }
        }
    }
    Walk { nodes, digest: format!("{digest:016x}") }
}

/// A temporary project of real files: `tsconfig.json` and `src/*.ts`.
pub(crate) struct Project {
    pub(crate) dir: tempfile::TempDir,
}

pub(crate) const POINT_TS: &str = "export interface Point { x: number; y: number }\n\
/** Adds two points. */\n\
export function add(a: Point, b: Point): Point {\n    return { x: a.x + b.x, y: a.y + b.y };\n}\n";

pub(crate) const MAIN_TS: &str = "import { add, type Point } from \"./point\";\n\
const origin: Point = { x: 0, y: 0 };\n\
export const moved = add(origin, { x: `${1}`.length, y: 2 });\n";

impl Project {
    /// `src/point.ts` and `src/main.ts` with a strict, lib-less tsconfig.
    pub(crate) fn write() -> Project {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("tsconfig.json"),
            r#"{"compilerOptions":{"strict":true,"noLib":true,"target":"es2022","module":"esnext"},"files":["src/point.ts","src/main.ts"]}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("src/point.ts"), POINT_TS).unwrap();
        std::fs::write(dir.path().join("src/main.ts"), MAIN_TS).unwrap();
        Project { dir }
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub(crate) fn tsconfig(&self) -> PathBuf {
        self.root().join("tsconfig.json")
    }

    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.root().join("src").join(name)
    }
}
