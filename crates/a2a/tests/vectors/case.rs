//! The A2A case files (`vectors/a2a/v1/…`, format in `vectors/README.md`, "A2A"):
//! loading, the request body bytes, the baseline, and JSON comparison.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// `vectors/` of the repository.
pub(crate) fn vectors_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors")
}

/// The HTTP side of a case: a request (method, path, headers) or an answer (status,
/// headers).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Http {
    pub(crate) method: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) status: Option<u16>,
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
}

/// One case file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    pub(crate) id: String,
    pub(crate) requirement: String,
    pub(crate) description: String,
    pub(crate) protocol: String,
    pub(crate) direction: String,
    pub(crate) binding: String,
    pub(crate) operation: Option<String>,
    pub(crate) http: Http,
    pub(crate) input: Option<Box<RawValue>>,
    pub(crate) input_text: Option<String>,
    pub input_base64: Option<String>,
    pub(crate) expect: Value,
    #[serde(skip)]
    pub(crate) canonical: Option<Vec<u8>>,
}

impl Case {
    /// The body bytes: `input` minified as written in the file (member order and number
    /// spellings kept), `input_text` as is, `input_base64` decoded; `None` without one.
    pub(crate) fn body(&self) -> Option<Vec<u8>> {
        if let Some(raw) = &self.input {
            return Some(minify(raw.get()).into_bytes());
        }
        if let Some(text) = &self.input_text {
            return Some(text.clone().into_bytes());
        }
        self.input_base64
            .as_ref()
            .map(|b| base64::engine::general_purpose::STANDARD.decode(b).expect("input_base64 is base64"))
    }

    /// `expect.outcome`.
    pub(crate) fn outcome(&self) -> &str {
        self.expect["outcome"].as_str().unwrap_or("")
    }
}

/// Whitespace outside strings removed.
pub(crate) fn minify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// Every case under `vectors/a2a/v1/` (flows excepted), sorted by path, with its golden file.
pub(crate) fn load_cases() -> Vec<Case> {
    let root = vectors_root();
    let mut files = Vec::new();
    collect(&root.join("a2a/v1"), &mut files);
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&root).unwrap().with_extension("");
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel.starts_with("a2a/v1/flows/") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut case: Case = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(case.id, rel, "a case's id is its path: {}", path.display());
        assert!(
            case.protocol == "a2a/v1" && !case.requirement.is_empty() && !case.description.is_empty(),
            "{}: protocol a2a/v1, a requirement and a description",
            case.id
        );
        case.canonical = std::fs::read(path.with_extension("canonical")).ok();
        cases.push(case);
    }
    cases
}

pub(crate) fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// `vectors/baselines/a2a-rust.json`: case or flow id -> why it fails.
pub(crate) fn baseline() -> BTreeMap<String, String> {
    let path = vectors_root().join("baselines/a2a-rust.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `AGENTPROTO_VECTORS=a2a/v1/GetTask/,-a2a/v1/version`: selection by id prefix.
pub(crate) fn selected(id: &str) -> bool {
    let Ok(filter) = std::env::var("AGENTPROTO_VECTORS") else { return true };
    let (mut include, mut any_include) = (false, false);
    for f in filter.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        if let Some(ex) = f.strip_prefix('-') {
            if id.starts_with(ex) {
                return false;
            }
        } else {
            any_include = true;
            include |= id.starts_with(f);
        }
    }
    include || !any_include
}

/// JSON values equal, numbers compared by value (`1` equals `1.0`).
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64() && x.as_i64() == y.as_i64())
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// The golden file compared with what our encoder wrote.
pub(crate) fn check_golden(case: &Case, written: &[u8]) -> Result<(), String> {
    let Some(golden) = &case.canonical else {
        return Err("no .canonical golden file beside a case whose message decodes".into());
    };
    if golden.as_slice() == written {
        return Ok(());
    }
    let at = golden.iter().zip(written).position(|(a, b)| a != b).unwrap_or(golden.len().min(written.len()));
    Err(format!(
        "canonical bytes differ at offset {at}:\n  golden:  {}\n  written: {}",
        String::from_utf8_lossy(golden),
        String::from_utf8_lossy(written)
    ))
}

/// Compares the members `expected` states with `actual` (members not stated are free).
pub(crate) fn stated(expected: &Value, actual: &Value, what: &str) -> Result<(), String> {
    let Some(exp) = expected.as_object() else { return Ok(()) };
    for (k, v) in exp {
        let got = actual.get(k).unwrap_or(&Value::Null);
        if !json_eq(v, got) {
            return Err(format!("{what}.{k}: expected {v}, found {got}"));
        }
    }
    Ok(())
}
