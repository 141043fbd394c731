//! The crate's layers, checked on its source (a tidy test, in the manner of
//! rust-analyzer's): a module may name (`crate::…`, `super::…` resolved) only modules of
//! its own layer or below it.
//!
//! From the bottom: the protocol (types, codecs, errors, 0.3 conversion: no I/O); the
//! client; the task layer (tasks, stores, event streams, executor API, recovery, push);
//! the binding-neutral core of the server; the bindings (HTTP, gRPC) and the server's
//! assembly. `demo` is an example and may use anything.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layer of a module path (`server/http/rest`), lowest first.
fn layer(module: &str) -> Option<usize> {
    const LAYERS: &[&[&str]] = &[
        // 0: the protocol, without I/O.
        &["lib", "generated", "v1", "protojson", "text", "errors", "compat", "card", "grpc/wire"],
        // 1: the client (HTTP+JSON, JSON-RPC, SSE; gRPC's client transport).
        &["client", "retry", "grpc/client", "grpc/mod", "grpc/codec", "grpc/codec_tests", "grpc/reflect"],
        // 2: the task layer.
        &["tasks", "store", "stream", "executor", "recovery", "push"],
        // 3: the binding-neutral server.
        &[
            "server/core",
            "server/send",
            "server/call",
            "server/reply",
            "server/cancel",
            "server/push_configs",
            "server/replicas",
            "server/turn",
            "server/auth",
            // An answer's JSON around the task's shared texts (what `server/reply` gives
            // the bindings to send).
            "server/spliced",
            // What every call goes through, whatever its binding: the authenticator's
            // verdict, the interceptors.
            "server/layers/auth",
            "server/layers/interceptor",
        ],
        // 4: the bindings, the HTTP middleware (which answers in each binding's error
        // shape) and the server's assembly.
        // The accept loops (`listen`), what they watch on a connection (`watch`) and the
        // descriptors their cap comes from belong to the assembly.
        &[
            "server/http",
            "grpc/server",
            "grpc/listen",
            "server/listen",
            "server/watch",
            "server/descriptors",
            "server/layers",
            "server/mod",
        ],
    ];
    if module.starts_with("demo") {
        return Some(LAYERS.len());
    }
    LAYERS.iter().position(|names| names.iter().any(|n| module == *n || module.starts_with(&format!("{n}/"))))
}

/// Modules that sit on the same layer but must not know each other.
const APART: &[(&str, &str)] = &[
    // The bindings are siblings: each speaks to the core, not to another binding.
    ("grpc/server", "server/http"),
    ("server/http", "grpc"),
    // The 0.3 conversion is pure: the 0.3 binding lives with the JSON-RPC binding.
    ("compat", "server"),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `server/http/rest.rs` -> `server/http/rest`; `store/mod.rs` -> `store/mod`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src").with_extension("");
    rel.to_string_lossy().replace('\\', "/")
}

/// The directory a `super::` in `module` refers to, as a module path.
fn parent(module: &str) -> String {
    let mut parts: Vec<&str> = module.split('/').collect();
    // `a/b/mod` and `a/b/c` both have `a/b` as `self`'s directory: `super` is `a` for
    // `mod.rs` files and `a/b` otherwise.
    let last = parts.pop();
    if last == Some("mod") {
        parts.pop();
    }
    parts.join("/")
}

/// The module paths a line of code names through `crate::` or `super::`.
fn named(module: &str, code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", String::new()), ("super::", parent(module))] {
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: Vec<&str> = rest
                .split("::")
                .map(|seg| seg.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or(""))
                .take_while(|seg| !seg.is_empty() && seg.chars().next().is_some_and(char::is_lowercase))
                .collect();
            let mut target = if base.is_empty() { String::new() } else { format!("{base}/") };
            target.push_str(&path.join("/"));
            if !target.is_empty() && !path.is_empty() {
                out.push(target);
            }
        }
    }
    out
}

#[test]
fn no_module_names_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut broken = BTreeSet::new();
    for file in &files {
        let module = module_of(&src, file);
        let Some(own) = layer(&module) else {
            broken.insert(format!("{module}: in no layer (add it to `layer` in tests/layers.rs)"));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file is readable");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for target in named(&module, code) {
                // A module named by its directory is its `mod.rs` (`crate::server::X`).
                let Some(theirs) = layer(&target).or_else(|| layer(&format!("{target}/mod"))) else { continue };
                if theirs > own {
                    broken.insert(format!("{module}:{}: names {target} (layer {theirs} > {own})", n + 1));
                }
                for (a, b) in APART {
                    let is = |m: &str, p: &str| m == p || m.starts_with(&format!("{p}/"));
                    if is(&module, a) && is(&target, b) {
                        broken.insert(format!("{module}:{}: names {target} ({a} and {b} stay apart)", n + 1));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "imports across layers:\n  {}", broken.into_iter().collect::<Vec<_>>().join("\n  "));
}

#[test]
fn the_reader_resolves_super_and_crate_paths() {
    assert_eq!(named("server/http/rest", "use super::core::Answer;"), ["server/http/core"]);
    assert_eq!(named("server/http/mod", "use super::core::{Answer};"), ["server/core"]);
    assert_eq!(named("grpc/server", "use crate::server::http::HttpOptions;"), ["server/http"]);
    assert_eq!(named("store/mod", "other_crate::y"), Vec::<String>::new());
    assert_eq!(layer("server/http/v03"), Some(4));
    assert_eq!(layer("store/postgres/listener"), Some(2));
    assert_eq!(layer("nowhere"), None);
}
