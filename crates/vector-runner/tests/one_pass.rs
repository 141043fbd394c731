//! The one-pass receive path against the careful two-pass one, over the corpus and
//! mutants of it.
//!
//! `receive::classify` first tries to decode a call's params while it reads the envelope,
//! with lenient members decoded straight from the input (the optimistic attempt), and
//! falls back to two passes — envelope, then params from their text, lenient members
//! captured and re-read — whenever that fails. The fast way must never change an
//! answer: for every line, classifying it normally and with optimistic decoding turned
//! off (`agentproto_codec::set_careful_only`) must give the same outcome, value,
//! warnings and error text. The mutants keep the JSON valid and change one value's type
//! (so lenient members are salvaged, unions meet unknown variants and required members
//! go wrong at every depth), or move `params` ahead of `method`.

use agentproto_acp::receive::{classify, AgentV1, ClientV1};
use agentproto_jsonrpc::RequestId;

/// Values a scalar is replaced with, one at a time.
const REPLACEMENTS: [&str; 10] = ["null", "0", "-1", "1.5", "\"x\"", "true", "{}", "[]", "\"\"", "[{}]"];

#[test]
fn one_pass_and_two_pass_classify_every_line_alike() {
    let root = agentproto_vector_files::root();
    let cases = agentproto_vector_runner::load(&root).expect("vectors load");
    let (mut lines, mut mutants) = (0usize, 0usize);
    for (_, case) in &cases {
        let Ok(bytes) = agentproto_vector_runner::input_bytes(case) else { continue };
        let pending = |id: &RequestId| case.pending.get(&serde_json::to_string(id).unwrap_or_default()).cloned();
        for line in bytes.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
            lines += 1;
            let mut variants = vec![line.to_vec()];
            variants.extend(scalar_mutants(line));
            variants.extend(params_first(line));
            mutants += variants.len() - 1;
            for variant in &variants {
                let (fast, careful) = match case.direction.as_str() {
                    "client_to_agent" => both_ways(|| format!("{:?}", classify::<AgentV1>(variant, pending))),
                    _ => both_ways(|| format!("{:?}", classify::<ClientV1>(variant, pending))),
                };
                assert_eq!(
                    fast,
                    careful,
                    "case {}: one pass and two passes differ on {}",
                    case.id,
                    String::from_utf8_lossy(variant)
                );
            }
        }
    }
    eprintln!("one pass vs two passes: {lines} lines, {mutants} mutants");
    assert!(lines >= 300 && mutants >= 5_000, "too little was compared: {lines} lines, {mutants} mutants");
}

/// Runs `f` normally and with optimistic decoding off.
fn both_ways(f: impl Fn() -> String) -> (String, String) {
    let fast = f();
    agentproto_codec::set_careful_only(true);
    let careful = f();
    agentproto_codec::set_careful_only(false);
    (fast, careful)
}

/// The line with one scalar (string, number, literal) replaced by each of
/// [`REPLACEMENTS`]; object keys stay.
fn scalar_mutants(line: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (start, end) in scalar_spans(line) {
        for replacement in REPLACEMENTS {
            if &line[start..end] == replacement.as_bytes() {
                continue;
            }
            let mut mutant = line[..start].to_vec();
            mutant.extend_from_slice(replacement.as_bytes());
            mutant.extend_from_slice(&line[end..]);
            out.push(mutant);
        }
    }
    out
}

/// Byte spans of the scalar values of a JSON text (not keys). A rough tokenizer:
/// enough for the corpus's lines, and any span it gets wrong only makes a mutant that
/// is not JSON, which both ways must still classify alike.
fn scalar_spans(line: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < line.len() && line[i] != b'"' {
                    i += if line[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(line.len());
                let rest = line[i..].iter().find(|b| !b.is_ascii_whitespace());
                if rest != Some(&b':') {
                    spans.push((start, i));
                }
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                let start = i;
                while i < line.len() && !matches!(line[i], b',' | b'}' | b']' | b' ') {
                    i += 1;
                }
                spans.push((start, i));
            }
            _ => i += 1,
        }
    }
    spans
}

/// The line with its top-level `"params":…` member moved to the front, when it has one
/// (the one pass then cannot know the method in time).
fn params_first(line: &[u8]) -> Option<Vec<u8>> {
    let value: serde_json::Value = serde_json::from_slice(line).ok()?;
    let object = value.as_object()?;
    let params = object.get("params")?;
    let mut text = format!("{{\"params\":{}", serde_json::to_string(params).ok()?);
    for (key, member) in object.iter().filter(|(key, _)| key.as_str() != "params") {
        text.push(',');
        text.push_str(&serde_json::to_string(key).ok()?);
        text.push(':');
        text.push_str(&serde_json::to_string(member).ok()?);
    }
    text.push('}');
    Some(text.into_bytes())
}
