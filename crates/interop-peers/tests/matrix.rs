//! The interop matrix: our scenario agent and client, in Rust and on our Python
//! and TypeScript SDKs, against each other and against the programs built on the
//! official TypeScript and Python SDKs (`interop/SCENARIO.md`), over real pipes,
//! every pair in its own process tree.
//!
//! Sides: `rust` (`scenario-agent`, `scenario-client`), `agentproto-python`
//! (`interop/agentproto-python/`), `agentproto-ts` (`interop/agentproto-ts/`,
//! compiled here first, see [`build_agentproto_ts`]), `ts`, `python` and
//! `rust-official` (the official SDKs, `interop/official/`; the Rust one is a cargo
//! project of its own, built here first, see [`build_official_rust`]).
//!
//! Each pair's expected outcome is listed below. A step expected to fail names
//! the official SDK's defect that makes it fail (described in
//! `interop/README.md`); ours is never bent to pass. A step that passes where a
//! failure is expected fails the test as well, so the list stays true.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::StreamExt;

const STEPS: [&str; 10] = [
    "initialize",
    "session_new",
    "prompt_echo",
    "permission",
    "fs",
    "cancel",
    "cancel_permission",
    "cancel_request",
    "error",
    "unknown_update",
];

/// How many pairs run at once. Each pair starts two runtimes (Node, CPython with an
/// SDK to import), and the 10 s bound of the `initialize` step includes the agent's
/// start-up: on a loaded 2-core machine, with four pairs starting together, the
/// official Python agent (about 1.5 s of CPU to import its SDK) took longer than that.
const CONCURRENT_PAIRS: usize = 3;

/// One pair: the client, the agent, and the steps expected to fail with why.
struct Pair {
    client: &'static str,
    agent: &'static str,
    expected_failures: &'static [(&'static str, &'static str)],
}

const PAIRS: &[Pair] = &[
    Pair { client: "rust", agent: "rust", expected_failures: &[] },
    Pair { client: "rust", agent: "ts", expected_failures: &[] },
    Pair {
        client: "rust",
        agent: "python",
        expected_failures: &[(
            "cancel_request",
            "PY-2: the Python SDK 0.12.1 ignores an incoming $/cancel_request, so the request is never answered",
        )],
    },
    Pair {
        client: "ts",
        agent: "rust",
        expected_failures: &[(
            "unknown_update",
            "TS-1: the TS SDK 2.4.0 client drops a session/update whose variant it does not know before the application sees it",
        )],
    },
    Pair {
        client: "python",
        agent: "rust",
        expected_failures: &[
            ("cancel_request", "PY-3: the Python SDK 0.12.1 cannot send $/cancel_request"),
            (
                "unknown_update",
                "PY-4: the Python SDK 0.12.1 client fails validation of an unknown update and drops it",
            ),
        ],
    },
    // Our Python SDK: as a client against every agent, as an agent under every client.
    // Between our two SDKs every step passes.
    Pair { client: "agentproto-python", agent: "rust", expected_failures: &[] },
    Pair { client: "agentproto-python", agent: "agentproto-python", expected_failures: &[] },
    Pair { client: "rust", agent: "agentproto-python", expected_failures: &[] },
    Pair { client: "agentproto-python", agent: "ts", expected_failures: &[] },
    Pair {
        client: "agentproto-python",
        agent: "python",
        expected_failures: &[(
            "cancel_request",
            "PY-2: the Python SDK 0.12.1 ignores an incoming $/cancel_request, so the request is never answered",
        )],
    },
    Pair {
        client: "ts",
        agent: "agentproto-python",
        expected_failures: &[(
            "unknown_update",
            "TS-1: the TS SDK 2.4.0 client drops a session/update whose variant it does not know before the application sees it",
        )],
    },
    Pair {
        client: "python",
        agent: "agentproto-python",
        expected_failures: &[
            ("cancel_request", "PY-3: the Python SDK 0.12.1 cannot send $/cancel_request"),
            (
                "unknown_update",
                "PY-4: the Python SDK 0.12.1 client fails validation of an unknown update and drops it",
            ),
        ],
    },
    // Our TypeScript SDK: as a client against every agent, as an agent under every client.
    // Against our Rust and Python programs, and against itself, every step passes.
    Pair { client: "agentproto-ts", agent: "agentproto-ts", expected_failures: &[] },
    Pair { client: "agentproto-ts", agent: "rust", expected_failures: &[] },
    Pair { client: "agentproto-ts", agent: "agentproto-python", expected_failures: &[] },
    Pair { client: "agentproto-ts", agent: "ts", expected_failures: &[] },
    Pair {
        client: "agentproto-ts",
        agent: "python",
        expected_failures: &[(
            "cancel_request",
            "PY-2: the Python SDK 0.12.1 ignores an incoming $/cancel_request, so the request is never answered",
        )],
    },
    Pair { client: "rust", agent: "agentproto-ts", expected_failures: &[] },
    Pair { client: "agentproto-python", agent: "agentproto-ts", expected_failures: &[] },
    Pair {
        client: "ts",
        agent: "agentproto-ts",
        expected_failures: &[(
            "unknown_update",
            "TS-1: the TS SDK 2.4.0 client drops a session/update whose variant it does not know before the application sees it",
        )],
    },
    Pair {
        client: "python",
        agent: "agentproto-ts",
        expected_failures: &[
            ("cancel_request", "PY-3: the Python SDK 0.12.1 cannot send $/cancel_request"),
            (
                "unknown_update",
                "PY-4: the Python SDK 0.12.1 client fails validation of an unknown update and drops it",
            ),
        ],
    },
    // The official Rust SDK: its agent under each of our clients, its client against
    // each of our agents.
    Pair { client: "rust", agent: "rust-official", expected_failures: &[] },
    Pair { client: "agentproto-python", agent: "rust-official", expected_failures: &[] },
    Pair { client: "agentproto-ts", agent: "rust-official", expected_failures: &[] },
    Pair { client: "rust-official", agent: "rust", expected_failures: RS_1 },
    Pair { client: "rust-official", agent: "agentproto-python", expected_failures: RS_1 },
    Pair { client: "rust-official", agent: "agentproto-ts", expected_failures: RS_1 },
];

const RS_1: &[(&str, &str)] = &[(
    "unknown_update",
    "RS-1: the Rust SDK 5.2.0 client fails to parse a session/update whose variant it does not know and drops it",
)];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn program(side: &str, role: &str) -> Vec<String> {
    let root = repo();
    let path = |p: &str| root.join(p).display().to_string();
    match (side, role) {
        ("rust", "agent") => vec![env!("CARGO_BIN_EXE_scenario-agent").to_owned()],
        ("rust", "client") => vec![env!("CARGO_BIN_EXE_scenario-client").to_owned()],
        ("ts", role) => vec!["node".to_owned(), path(&format!("interop/official/acp-ts/{role}.mjs"))],
        ("python", role) => vec!["python3".to_owned(), path(&format!("interop/official/acp-python/{role}.py"))],
        ("agentproto-python", role) => {
            vec!["python3".to_owned(), path(&format!("interop/agentproto-python/{role}.py"))]
        }
        ("agentproto-ts", role) => {
            vec!["node".to_owned(), agentproto_ts_dir().join(format!("{role}.js")).display().to_string()]
        }
        ("rust-official", role) => vec![official_rust_dir().join("debug").join(role).display().to_string()],
        _ => unreachable!("unknown side {side}"),
    }
}

fn check_prerequisites() {
    let sdk = repo().join("interop/official/acp-ts/node_modules/@agentclientprotocol/sdk/package.json");
    assert!(
        sdk.exists(),
        "the TypeScript SDK is not installed: run `npm ci --prefix interop/official/acp-ts` (as .ci/run does)"
    );
    assert!(
        python_imports("acp"),
        "the Python SDK is not installed: run `python3 -m pip install -r .ci/requirements.txt` (as .ci/run does)"
    );
    assert!(
        python_imports("agentproto"),
        "agentproto's Python SDK is not installed: run `python3 -m pip install ./python` (as .ci/run does)"
    );
    assert!(
        typescript_compiler().is_file(),
        "the TypeScript toolchain is not installed (no {}): run `npm ci --prefix ts` (as .ci/run does)",
        typescript_compiler().display()
    );
}

/// Where `interop/agentproto-ts/` is built: cargo's temporary directory for
/// integration tests, so that neither `ts/dist` (built after the Rust tests by
/// `make test`, and possibly by a concurrent `make ts-build`) nor the source tree
/// is involved.
fn agentproto_ts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("agentproto-ts-interop")
}

/// The TypeScript compiler of `ts/`'s pinned `typescript` package: the native
/// executable that `ts/node_modules/.bin/tsc` (a Node launcher) starts, run
/// directly so that the process the test bounds and kills is the compiler itself.
fn typescript_compiler() -> PathBuf {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    repo().join(format!("ts/node_modules/@typescript/typescript-{os}-{arch}/lib/tsc"))
}

/// Runs the compiler with `args` in `cwd`, bounded; panics with its output when it fails.
async fn tsc(cwd: &Path, args: &[&str]) {
    let run = tokio::process::Command::new(typescript_compiler())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .unwrap_or_else(|_| panic!("tsc {args:?} did not finish within 180 s"))
        .expect("run tsc");
    assert!(
        output.status.success(),
        "tsc {args:?} (in {}) failed:\n{}{}",
        cwd.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Builds `interop/agentproto-ts/{agent,client}.ts` the way a user of the npm package
/// would: the SDK's sources (`ts/src`, with `ts/tsconfig.json`'s options) compiled into
/// `node_modules/agentproto/dist` beside a copy of `ts/package.json`, then the two
/// programs, copied next to that `node_modules`, type-checked under `--strict` against
/// the package's declarations (its `exports` map: the public entry points only) and
/// compiled beside their copies.
async fn build_agentproto_ts() {
    // Without `..` components: tsc matches `include` patterns on the spelled path.
    let root = repo().canonicalize().expect("the repository's root");
    let ts = root.join("ts");
    let out = agentproto_ts_dir();
    if out.exists() {
        std::fs::remove_dir_all(&out).expect("remove the previous build");
    }
    let package = out.join("node_modules/agentproto");
    std::fs::create_dir_all(&package).expect("create the build directory");
    std::fs::copy(ts.join("package.json"), package.join("package.json")).expect("copy ts/package.json");
    let string = |p: &Path| serde_json::Value::String(p.display().to_string());
    let config = serde_json::json!({
        "extends": string(&ts.join("tsconfig.json")),
        "compilerOptions": {
            "rootDir": string(&ts),
            "outDir": string(&package.join("dist")),
            "sourceMap": false,
            "typeRoots": [string(&ts.join("node_modules/@types"))],
        },
        "include": [string(&ts.join("src/**/*.ts"))],
    });
    std::fs::write(out.join("sdk.tsconfig.json"), config.to_string()).expect("write sdk.tsconfig.json");
    tsc(&out, &["-p", "sdk.tsconfig.json"]).await;
    for program in ["agent.ts", "client.ts"] {
        std::fs::copy(root.join("interop/agentproto-ts").join(program), out.join(program))
            .unwrap_or_else(|e| panic!("copy interop/agentproto-ts/{program}: {e}"));
    }
    std::fs::write(out.join("package.json"), r#"{"type":"module"}"#).expect("write package.json");
    let types = ts.join("node_modules/@types").display().to_string();
    let mut args = vec!["--strict", "--noUncheckedIndexedAccess", "--module", "nodenext", "--target", "es2022"];
    args.extend(["--types", "node", "--typeRoots", &types, "--rootDir", ".", "--outDir", ".", "agent.ts", "client.ts"]);
    tsc(&out, &args).await;
}

/// Where `interop/official/acp-rust/` is built: `interop-official-rust` beside
/// cargo's temporary directory, in the workspace's target directory. The project
/// has its own workspace and lockfile, so the official crate's dependencies (it
/// turns on serde_json's `preserve_order`) never mix with ours.
fn official_rust_dir() -> PathBuf {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().expect("the target directory").join("interop-official-rust")
}

/// Builds the official Rust SDK's scenario agent and client (a debug build, from
/// the project's own `Cargo.lock`), bounded; panics with cargo's output when it fails.
/// The first build compiles the SDK and its dependencies (a few minutes on a busy
/// two-core machine); later ones only check that nothing changed.
async fn build_official_rust() {
    let manifest = repo().join("interop/official/acp-rust/Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let build = tokio::process::Command::new(cargo)
        .args(["build", "--locked", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", official_rust_dir())
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(900), build)
        .await
        .unwrap_or_else(|_| panic!("building {} did not finish within 900 s", manifest.display()))
        .expect("run cargo");
    assert!(
        output.status.success(),
        "building the official Rust SDK's scenario programs failed (cargo build --locked --manifest-path {}):\n{}",
        manifest.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Whether `python3` can import `module`.
fn python_imports(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs one pair and returns its step lines, parsed.
async fn run(pair: &Pair) -> Result<Vec<(String, bool, String)>, String> {
    let mut command = program(pair.client, "client");
    command.push("--".to_owned());
    command.extend(program(pair.agent, "agent"));
    let child = tokio::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .map_err(|_| format!("{command:?} did not finish within 120 s"))?
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!("{command:?} exited with {}", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("bad line {line:?}: {e}"))?;
            Ok((
                value["step"].as_str().unwrap_or_default().to_owned(),
                value["ok"].as_bool().unwrap_or(false),
                value["detail"].as_str().unwrap_or_default().to_owned(),
            ))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_sdks_interoperate_with_ours() {
    check_prerequisites();
    tokio::join!(build_agentproto_ts(), build_official_rust());
    let mut results: Vec<(usize, Result<_, _>)> = futures::stream::iter(PAIRS.iter().enumerate())
        .map(|(index, pair)| async move { (index, run(pair).await) })
        .buffer_unordered(CONCURRENT_PAIRS)
        .collect()
        .await;
    results.sort_by_key(|(index, _)| *index);
    let mut problems = Vec::new();
    for (pair, (_, result)) in PAIRS.iter().zip(results) {
        let name = format!("{} client -> {} agent", pair.client, pair.agent);
        let steps = match result {
            Ok(steps) => steps,
            Err(e) => {
                problems.push(format!("{name}: {e}"));
                continue;
            }
        };
        let seen: Vec<&str> = steps.iter().map(|(step, _, _)| step.as_str()).collect();
        if seen != STEPS {
            problems.push(format!("{name}: steps {seen:?}, expected {STEPS:?}"));
            continue;
        }
        for (step, ok, detail) in &steps {
            let expected = pair.expected_failures.iter().find(|(s, _)| s == step);
            match (ok, expected) {
                (true, None) | (false, Some(_)) => {}
                (false, None) => problems.push(format!("{name}: step {step} failed: {detail}")),
                (true, Some((_, why))) => problems
                    .push(format!("{name}: step {step} passed, but a failure is recorded ({why}); update the list")),
            }
        }
    }
    assert!(problems.is_empty(), "interop problems:\n{}", problems.join("\n"));
}

/// An agent that prints noise on stdout before speaking ACP: our client skips
/// and reports those lines, and the session works.
#[tokio::test]
async fn noise_on_the_agents_stdout_does_not_break_the_session() {
    let agent = env!("CARGO_BIN_EXE_scenario-agent");
    let script = format!("printf 'starting up...\\n\\033[32mready\\033[0m\\n'; exec '{agent}'");
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(env!("CARGO_BIN_EXE_scenario-client"))
            .args(["--", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the run finished in time")
    .expect("the client ran");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let failed: Vec<&str> = stdout.lines().filter(|l| l.contains(r#""ok":false"#)).collect();
    assert_eq!(stdout.lines().count(), STEPS.len(), "{stdout}");
    assert!(failed.is_empty(), "{failed:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("NonJsonLineSkipped").count(), 2, "the two noise lines are reported: {stderr}");
}
