//! The examples' command lines, run as built: `--help` prints the usage and exits 0, a
//! mistake prints it on stderr and exits 2 (`cargo test` builds the examples beside
//! the tests, as normal programs).

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(|p| p.parent()).unwrap().join("examples").join(name);
    assert!(path.exists(), "{} is missing: run `cargo build -p agentproto-acp --examples`", path.display());
    path
}

/// Runs the example with `args` and stdin closed (so `echo-agent`, were it to start
/// serving, ends at once instead of waiting).
fn run(name: &str, args: &[&str]) -> Output {
    Command::new(example(name)).args(args).stdin(Stdio::null()).output().expect("the example starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn run_prompt_help_is_usage_on_stdout() {
    for flag in [&["--help"][..], &["-h"], &["--allow", "-h", "--", "agent"]] {
        let out = run("run-prompt", flag);
        assert_eq!(out.status.code(), Some(0), "{flag:?}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("run-prompt"), "{flag:?}: {}", text(&out.stdout));
        assert!(out.stderr.is_empty(), "{flag:?}: {}", text(&out.stderr));
    }
}

#[test]
fn run_prompt_mistakes_are_usage_errors() {
    for (args, says) in [
        (&["--verbose", "--", "agent"][..], "unknown argument \"--verbose\""),
        (&["--prompt"], "--prompt needs a value"),
        (&["--"], "no agent command after --"),
        (&[], "missing -- <agent command>"),
    ] {
        let out = run("run-prompt", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(says) && err.contains("run-prompt"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    }
}

#[test]
fn echo_agent_help_and_unknown_flags() {
    for flag in ["--help", "-h"] {
        let out = run("echo-agent", &[flag]);
        assert_eq!(out.status.code(), Some(0), "{flag}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("echo-agent"), "{flag}: {}", text(&out.stdout));
    }
    let out = run("echo-agent", &["--verbose"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown argument \"--verbose\""), "{}", text(&out.stderr));
}
