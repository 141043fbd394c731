//! Loads the conformance vectors under `vectors/` and runs each through the Rust
//! receive path: the real frame reader, the envelope decoder and the generated
//! dispatch ([`agentproto_acp::receive::classify`]).
//!
//! The format is defined in `vectors/README.md`. A case passes when the outcome
//! the receive path produced matches `expect` in every field the case states and,
//! for a message that decodes, when the SDK's encoder writes the decoded params or
//! result byte for byte as the case's golden file (`<case>.canonical`) says.
//!
//! The flows (`vectors/acp/v1/flows/`, message sequences checking the protocol
//! state rules through a live connection) are run by [`flows`].

use agentproto_acp::receive::{classify, AgentV1, CallFailure, ClientV1, Finding, Incoming, Role};
use agentproto_acp::{Payload, Warning};
use agentproto_jsonrpc::frame::{Frame, FrameReader};
use agentproto_jsonrpc::{Message, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod calls;
pub mod flows;
pub mod live;
mod wire;

pub use wire::STEP_TIMEOUT;

/// One case file, as written.
#[derive(Debug, Deserialize)]
pub struct Case {
    /// The case id (its path under `vectors/` without `.json`).
    pub id: String,
    /// The requirement it checks.
    pub requirement: String,
    /// `jsonrpc` or `acp/v1`.
    pub protocol: String,
    /// `client_to_agent` or `agent_to_client`: who sends the message.
    pub direction: String,
    /// The message as JSON (kept raw so key order and number text survive;
    /// a JSON `null` here is the input `null`, not an absent input).
    #[serde(default, deserialize_with = "present")]
    pub input: Option<Box<RawValue>>,
    /// The exact line.
    #[serde(default)]
    pub input_text: Option<String>,
    /// The exact bytes, base64.
    #[serde(default)]
    pub input_base64: Option<String>,
    /// Pending requests of the receiver: id as JSON text -> method.
    #[serde(default)]
    pub pending: BTreeMap<String, String>,
    /// The expected outcome.
    pub expect: Value,
    /// The golden file beside the case: the canonical encoding of its decoded
    /// params or result (README, "Canonical encoding"), when it has one.
    #[serde(skip)]
    pub canonical: Option<Vec<u8>>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// Reads every ACP case under `root` (the `acp` corpus of `vectors/layout.json`), sorted
/// by path.
pub fn load(root: &Path) -> Result<Vec<(PathBuf, Case)>, String> {
    let mut cases = Vec::new();
    for path in agentproto_vector_files::case_files(root, "acp")? {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut case: Case = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let golden = path.with_extension("canonical");
        case.canonical = match std::fs::read(&golden) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("{}: {e}", golden.display())),
        };
        cases.push((path, case));
    }
    Ok(cases)
}

/// The bytes a case feeds to the receiver.
pub fn input_bytes(case: &Case) -> Result<Vec<u8>, String> {
    match (&case.input, &case.input_text, &case.input_base64) {
        (Some(raw), None, None) => {
            let mut bytes = agentproto_vector_files::minify(raw.get()).into_bytes();
            bytes.push(b'\n');
            Ok(bytes)
        }
        (None, Some(text), None) => Ok(text.as_bytes().to_vec()),
        (None, None, Some(b64)) => base64_decode(b64),
        _ => Err("exactly one of input, input_text, input_base64 is required".into()),
    }
}

fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return Err(format!("invalid base64 byte {c:#x}")),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Frames `bytes` with the real reader and returns the lines it produced.
fn frame(bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let mut reader = FrameReader::new(bytes);
        let mut lines = Vec::new();
        while let Some(frame) = reader.next_frame().await.map_err(|e| e.to_string())? {
            match frame {
                Frame::Line(line) => lines.push(line.to_vec()),
                Frame::Oversize(o) => return Err(format!("unexpected oversize line of {} bytes", o.len)),
            }
        }
        Ok(lines)
    })
}

/// Runs one case; `Err` says how the outcome differed from `expect`.
pub fn run(case: &Case) -> Result<(), String> {
    let bytes = input_bytes(case)?;
    let lines = frame(&bytes)?;
    let [line] = lines.as_slice() else {
        return Err(format!("expected one framed line, got {}", lines.len()));
    };
    let pending = |id: &RequestId| {
        let key = serde_json::to_string(id).unwrap_or_default();
        case.pending.get(&key).cloned()
    };
    let (observed, encoded) = match case.direction.as_str() {
        "client_to_agent" => observe(classify::<AgentV1>(line, pending)),
        "agent_to_client" => observe(classify::<ClientV1>(line, pending)),
        other => return Err(format!("unknown direction {other:?}")),
    }?;
    compare(&case.expect, &observed)?;
    match (encoded, &case.canonical) {
        (Some(actual), Some(golden)) => compare_bytes(golden, &actual),
        (Some(_), None) => Err("the message decodes but the case has no golden file (<case>.canonical)".into()),
        (None, _) => Ok(()),
    }
}

/// Byte equality of the SDK's encoding with the golden file; a difference names the
/// first offset where they part and shows both.
pub fn compare_bytes(golden: &[u8], actual: &[u8]) -> Result<(), String> {
    if golden == actual {
        return Ok(());
    }
    let at = golden.iter().zip(actual).take_while(|(g, a)| g == a).count();
    Err(format!(
        "canonical encoding differs at byte {at} (golden {} bytes, encoded {} bytes)\n  golden:  {}\n  encoded: {}\n  {}^",
        golden.len(),
        actual.len(),
        printable(golden),
        printable(actual),
        " ".repeat("encoded: ".len() + printable(&actual[..at.min(actual.len())]).chars().count()),
    ))
}

/// Bytes as text: valid UTF-8 as it is, except control characters and invalid
/// bytes, which are written `\xNN` so that the line stays one line.
fn printable(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The outcome of a case in the vector format, for comparison with `expect`, and
/// for a decoded message the bytes the SDK's encoder writes for its params or result.
fn observe<R: Role>(incoming: Incoming<R>) -> Result<(Value, Option<Vec<u8>>), String> {
    /// Encodes with the SDK's encoder (what the runtime sends) and reads the result back.
    fn payload<P: Payload>(p: &P) -> Result<(Value, Vec<u8>), String> {
        let mut buf = Vec::new();
        p.encode_payload(&mut buf).map_err(|e| format!("re-encoding failed: {e}"))?;
        let value = serde_json::from_slice(&buf).map_err(|e| format!("re-encoded payload is not JSON: {e}"))?;
        Ok((value, buf))
    }
    fn warnings(w: &[Warning]) -> Value {
        Value::Array(w.iter().map(|w| Value::String(w.path.clone())).collect())
    }
    fn id(id: &RequestId) -> Value {
        serde_json::to_value(id).unwrap_or(Value::Null)
    }
    Ok(match incoming {
        Incoming::Request { id: request_id, request } => {
            let (params, bytes) = payload(&request.value)?;
            let observed = serde_json::json!({
                "outcome": "request",
                "method": request.value.method(),
                "id": id(&request_id),
                "type": request.value.type_name(),
                "params": params,
                "warnings": warnings(&request.warnings),
            });
            (observed, Some(bytes))
        }
        Incoming::Notification(n) => {
            let (params, bytes) = payload(&n.value)?;
            let observed = serde_json::json!({
                "outcome": "notification",
                "method": n.value.method(),
                "type": n.value.type_name(),
                "params": params,
                "warnings": warnings(&n.warnings),
            });
            (observed, Some(bytes))
        }
        Incoming::Response { id: call_id, method, result: Ok(r) } => {
            let (result, bytes) = payload(&r.value)?;
            let observed = serde_json::json!({
                "outcome": "response",
                "id": id(&call_id),
                "method": method,
                "type": r.value.type_name(),
                "result": result,
                "warnings": warnings(&r.warnings),
            });
            (observed, Some(bytes))
        }
        Incoming::Response { id: call_id, result: Err(e), .. } => (
            serde_json::json!({
                "outcome": "error_reply",
                "id": id(&call_id),
                "error": {"code": e.code.0, "message": e.message},
            }),
            None,
        ),
        Incoming::Reply { reply, finding } => {
            let Message::Response { id: reply_id, result: Err(e) } = reply else {
                return Err("a reply that is not an error response".into());
            };
            let path = match &finding {
                Finding::InvalidParams(d) => Value::String(d.path.clone()),
                Finding::BadEnvelope { path, .. } if !path.is_empty() => Value::String(path.clone()),
                _ => Value::Null,
            };
            let data: Value = match &e.data {
                Some(raw) => serde_json::from_str(raw.get()).map_err(|err| format!("error data: {err}"))?,
                None => Value::Null,
            };
            let mut error = serde_json::json!({"code": e.code.0, "message": e.message, "path": path});
            error_texts(&mut error, &data);
            let observed = serde_json::json!({"outcome": "reply_error", "id": id(&reply_id), "error": error});
            (observed, None)
        }
        Incoming::CallFailed { id: call_id, error, .. } => (
            serde_json::json!({
                "outcome": "call_failed",
                "id": id(&call_id),
                "path": error.path(),
                "kind": match &error { CallFailure::InvalidResult(d) => Value::from(d.kind.as_str()), CallFailure::InvalidResponse { .. } => Value::Null },
                "detail": match &error { CallFailure::InvalidResult(d) => d.message.clone(), CallFailure::InvalidResponse { message, .. } => message.clone() },
            }),
            None,
        ),
        Incoming::Ignored(finding) => (
            serde_json::json!({
                "outcome": "ignored",
                "finding": finding.code(),
                "detail": format!("{finding:?}"),
            }),
            None,
        ),
    })
}

/// The members of a reply's error `data` a case may state (`vectors/README.md`, "Error
/// texts"), copied into the observed error: `kind`, `expected` and `found` of a decode
/// failure, `line` and `column` of a parse error.
pub(crate) fn error_texts(error: &mut Value, data: &Value) {
    for key in ERROR_TEXTS {
        if let (Some(value), Some(error)) = (data.get(key), error.as_object_mut()) {
            error.insert(key.to_owned(), value.clone());
        }
    }
}

/// The members of `expect.error` a case may state besides `code` and `path`.
const ERROR_TEXTS: [&str; 5] = ["kind", "expected", "found", "line", "column"];

/// JSON equality with numbers compared by value (`3` equals `3.0`).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

pub(crate) fn compare(expect: &Value, observed: &Value) -> Result<(), String> {
    let mismatch = |what: &str| Err(format!("{what}: expected {expect}, observed {observed}"));
    let get = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
    if get(expect, "outcome") != get(observed, "outcome") {
        return mismatch("outcome");
    }
    for key in ["method", "id", "type", "params", "result", "finding", "path", "kind"] {
        if let Some(want) = expect.get(key) {
            if !same(want, &get(observed, key)) {
                return mismatch(key);
            }
        }
    }
    if let Some(want) = expect.get("error") {
        let got = get(observed, "error");
        for key in ["code", "message", "path"].into_iter().chain(ERROR_TEXTS) {
            if let Some(w) = want.get(key) {
                if !same(w, &get(&got, key)) {
                    return mismatch(&format!("error.{key}"));
                }
            }
        }
    }
    let outcome = get(expect, "outcome");
    if matches!(outcome.as_str(), Some("request" | "notification" | "response")) {
        let set = |v: &Value| -> BTreeSet<String> {
            v.as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_owned)).collect()
        };
        let want = expect.get("warnings").map(set).unwrap_or_default();
        if want != set(&get(observed, "warnings")) {
            return mismatch("warnings");
        }
    }
    Ok(())
}

pub use agentproto_vector_files::{baseline, selected};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round() {
        assert_eq!(base64_decode("/w==").unwrap(), vec![0xff]);
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
    }

    #[test]
    fn byte_mismatch_names_the_offset() {
        assert!(compare_bytes(b"{\"a\":1}", b"{\"a\":1}").is_ok());
        let why = compare_bytes(b"{\"a\":1.0}", b"{\"a\":1}").unwrap_err();
        assert!(why.contains("differs at byte 6"), "{why}");
        assert!(why.contains("golden:  {\"a\":1.0}") && why.contains("encoded: {\"a\":1}"), "{why}");
        assert!(printable(b"a\n\xff").ends_with("a\\x0a\\xff"));
    }

    /// The number and string rules stated in `vectors/README.md` ("Canonical
    /// encoding") are what serde_json writes; `vectors/tools/canonical.py` implements
    /// the same table.
    #[test]
    fn canonical_scalars_are_serde_json() {
        let f = |x: f64| serde_json::to_string(&x).unwrap();
        for (x, text) in [
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (-2.5e-8, "-2.5e-8"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e100, "1e+100"),
            (0.5, "0.5"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e21, "1e+21"),
            (123456.789, "123456.789"),
            (0.00001, "0.00001"),
            (0.000001, "1e-6"),
            (1.5e-7, "1.5e-7"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (f64::NAN, "null"),
        ] {
            assert_eq!(f(x), text, "{x:e}");
        }
        let s = serde_json::to_string("\"\\/\u{8}\t\n\u{c}\r\u{1}\u{1f}\u{7f}é\u{2028}😀").unwrap();
        assert_eq!(s, "\"\\\"\\\\/\\b\\t\\n\\f\\r\\u0001\\u001f\u{7f}é\u{2028}😀\"");
    }
}
