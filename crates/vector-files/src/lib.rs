//! Finds the conformance vectors' files for the Rust runners, through `vectors/layout.json`
//! (format in `vectors/README.md`, "Layout"): which folders hold a corpus's cases, which one
//! its flows. The ACP runner (`agentproto-vector-runner`) and the A2A runner
//! (`crates/a2a/tests/vectors.rs`) read their files here and nowhere else, as the Python and
//! TypeScript runners read the same table.
//!
//! Also the pieces every runner shares: case ids from paths, the `AGENTPROTO_VECTORS`
//! selection, baselines, and the compact form of an `input`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `vectors/` of this repository.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors")
}

/// One corpus of `layout.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Corpus {
    /// Folders (relative to `vectors/`) whose `.json` files are cases.
    pub cases: Vec<String>,
    /// The folder whose `.json` files are flows; never cases.
    pub flows: String,
    /// The corpus's requirement ids.
    pub requirements: String,
}

#[derive(Deserialize)]
struct Layout {
    corpora: BTreeMap<String, Corpus>,
}

/// The corpus `name` (`acp`, `a2a`) of `root/layout.json`.
pub fn corpus(root: &Path, name: &str) -> Result<Corpus, String> {
    let path = root.join("layout.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut layout: Layout = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    layout.corpora.remove(name).ok_or_else(|| format!("{}: no corpus {name:?}", path.display()))
}

/// Every case file of the corpus, sorted by path.
pub fn case_files(root: &Path, name: &str) -> Result<Vec<PathBuf>, String> {
    let corpus = corpus(root, name)?;
    let flows = root.join(&corpus.flows);
    let mut files = Vec::new();
    for dir in &corpus.cases {
        walk(&root.join(dir), &flows, &mut files)?;
    }
    files.sort();
    Ok(files)
}

/// Every flow file of the corpus, sorted by path.
pub fn flow_files(root: &Path, name: &str) -> Result<Vec<PathBuf>, String> {
    let dir = root.join(corpus(root, name)?.flows);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() && is_json(&path) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn walk(dir: &Path, skip: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            if path != skip {
                walk(&path, skip, out)?;
            }
        } else if is_json(&path) {
            out.push(path);
        }
    }
    Ok(())
}

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
}

/// A file's id: its path under `root`, without `.json`, with `/` separators.
pub fn id_of(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path).with_extension("");
    rel.to_string_lossy().replace('\\', "/")
}

/// `root/baselines/<name>.json`: id -> why it is expected to fail; empty when there is none.
pub fn baseline(root: &Path, name: &str) -> Result<BTreeMap<String, String>, String> {
    let path = root.join("baselines").join(format!("{name}.json"));
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Whether `id` is selected by a filter like `jsonrpc/,-acp/v1/types` (the value of
/// `AGENTPROTO_VECTORS`): prefixes to run, `-`prefixes to leave out; none selects all.
pub fn selected(filter: Option<&str>, id: &str) -> bool {
    let Some(filter) = filter.filter(|f| !f.is_empty()) else { return true };
    let mut include_any = false;
    let mut included = false;
    for part in filter.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(excluded) = part.strip_prefix('-') {
            if id.starts_with(excluded) {
                return false;
            }
        } else {
            include_any = true;
            included |= id.starts_with(part);
        }
    }
    !include_any || included
}

/// JSON text with the whitespace outside strings removed: how a runner writes a case's
/// `input` (member order and number spellings as in the file).
pub fn minify(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minify_keeps_strings_and_order() {
        assert_eq!(minify("{ \"b\" : 1,\n \"a\": \"x y\\\" z\" }"), "{\"b\":1,\"a\":\"x y\\\" z\"}");
    }

    #[test]
    fn selection_by_prefix() {
        assert!(selected(None, "acp/v1/x"));
        assert!(selected(Some("acp/"), "acp/v1/x"));
        assert!(!selected(Some("jsonrpc/"), "acp/v1/x"));
        assert!(!selected(Some("acp/,-acp/v1"), "acp/v1/x"));
    }

    /// The corpora split `vectors/` without overlap: no case is a flow, every flow folder
    /// holds flows, and no case file is in two corpora.
    #[test]
    fn corpora_are_disjoint_and_not_empty() {
        let root = root();
        let mut seen = std::collections::BTreeSet::new();
        for name in ["acp", "a2a"] {
            let cases = case_files(&root, name).unwrap();
            let flows = flow_files(&root, name).unwrap();
            assert!(cases.len() > 100 && !flows.is_empty(), "{name}: {} cases, {} flows", cases.len(), flows.len());
            for path in cases.iter().chain(&flows) {
                assert!(seen.insert(path.clone()), "{} is in two places", path.display());
            }
            assert!(root.join(corpus(&root, name).unwrap().requirements).is_file());
        }
    }
}
