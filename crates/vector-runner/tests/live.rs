//! Drives every single-message vector through a live connection of our roles
//! (see `agentproto_vector_runner::live`): the receiving role is set up as a real
//! peer would set it up, the case's bytes are written, and what the connection does
//! (handler calls and their params, the lines it writes, how a pending call ends,
//! the findings it reports) is compared with the case's `expect`.
//!
//! The selection follows tests/vectors.rs (`AGENTPROTO_VECTORS` prefixes). A case
//! whose stateless run is baselined in `vectors/baselines/rust.json` is not driven.
//! Failures particular to the live path are listed with their reasons in
//! `crates/vector-runner/live-baseline.json`; an unlisted failure fails the test,
//! and so does a listed case that passes (stale baseline).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use agentproto_vector_runner::live::{Live, Verdict};

fn live_baseline() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("live-baseline.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

#[test]
fn every_vector_drives_the_live_connection() {
    let started = Instant::now();
    let root = agentproto_vector_files::root();
    let cases = agentproto_vector_runner::load(&root).expect("vectors load");
    let stateless = agentproto_vector_runner::baseline(&root, "rust").expect("baseline loads");
    let baseline = live_baseline();
    let filter = std::env::var("AGENTPROTO_VECTORS").ok();
    let live = Live::new().expect("runtime");
    let mut skipped: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut notes: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut driven, mut passed) = (0, 0);
    let mut failures = Vec::new();
    let mut stale = Vec::new();
    for (_, case) in &cases {
        if !agentproto_vector_runner::selected(filter.as_deref(), &case.id) {
            continue;
        }
        if let Some(reason) = stateless.get(&case.id) {
            skipped.entry(format!("baselined for the stateless run: {reason}")).or_default().push(case.id.clone());
            continue;
        }
        let verdict = live.run(case);
        if !matches!(verdict, Verdict::Skipped(_)) {
            driven += 1;
        }
        match (verdict, baseline.get(&case.id)) {
            (Verdict::Skipped(reason), _) => skipped.entry(reason).or_default().push(case.id.clone()),
            (Verdict::Passed { .. }, Some(_)) => stale.push(case.id.clone()),
            (Verdict::Passed { note }, None) => {
                passed += 1;
                if let Some(note) = note {
                    *notes.entry(note).or_default() += 1;
                }
            }
            (Verdict::Failed(why), Some(reason)) => {
                eprintln!("known live failure {} ({reason}):\n  {why}", case.id);
            }
            (Verdict::Failed(why), None) => failures.push(format!("{}: {why}", case.id)),
        }
    }
    for id in baseline.keys() {
        assert!(cases.iter().any(|(_, c)| &c.id == id), "live-baseline.json names an unknown case {id}");
    }
    let skipped_count: usize = skipped.values().map(Vec::len).sum();
    eprintln!(
        "live vectors: {driven} driven, {passed} passed, {} failed, {} baselined, {skipped_count} skipped ({:.2?})",
        failures.len(),
        baseline.len(),
        started.elapsed()
    );
    for (reason, ids) in &skipped {
        eprintln!("  skipped {} ({reason}): {}", ids.len(), ids.join(", "));
    }
    for (note, count) in &notes {
        eprintln!("  passed in part {count}: {note}");
    }
    assert!(stale.is_empty(), "baselined cases now pass live; remove them from live-baseline.json: {stale:#?}");
    assert!(failures.is_empty(), "{} vector(s) failed live:\n{}", failures.len(), failures.join("\n\n"));
    if filter.is_none() {
        assert!(driven >= 600, "expected at least 600 cases driven live, found {driven}");
    }
}
