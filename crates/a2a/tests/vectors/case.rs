//! The A2A case files (`vectors/a2a/v1/…`, format in `vectors/README.md`, "A2A"):
//! loading, the request body bytes, the baseline, and JSON comparison.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

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
            return Some(agentproto_vector_files::minify(raw.get()).into_bytes());
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

/// Every case of the `a2a` corpus (`vectors/layout.json`), sorted by path, with its golden
/// file.
pub(crate) fn load_cases() -> Vec<Case> {
    let root = agentproto_vector_files::root();
    let mut cases = Vec::new();
    for path in agentproto_vector_files::case_files(&root, "a2a").unwrap_or_else(|e| panic!("{e}")) {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut case: Case = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(case.id, agentproto_vector_files::id_of(&root, &path), "a case's id is its path");
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

/// `vectors/baselines/a2a-rust.json`: case or flow id -> why it fails.
pub(crate) fn baseline() -> BTreeMap<String, String> {
    agentproto_vector_files::baseline(&agentproto_vector_files::root(), "a2a-rust").unwrap_or_else(|e| panic!("{e}"))
}

/// `AGENTPROTO_VECTORS=a2a/v1/GetTask/,-a2a/v1/version`: selection by id prefix.
pub(crate) fn selected(id: &str) -> bool {
    agentproto_vector_files::selected(std::env::var("AGENTPROTO_VECTORS").ok().as_deref(), id)
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
