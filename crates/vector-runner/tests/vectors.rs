//! Runs every vector under `vectors/` through the Rust receive path and, for each
//! message that decodes, compares the SDK's encoding of it with the case's golden
//! file (`<case>.canonical`) byte for byte.
//!
//! An unlisted failure fails the test, and so does a case listed in
//! `vectors/baselines/rust.json` that now passes (stale baseline).
//! `AGENTPROTO_VECTORS=jsonrpc/,-acp/v1/types` selects cases by id prefix.

#[test]
fn every_vector_passes_or_is_baselined() {
    let root = agentproto_vector_files::root();
    let cases = agentproto_vector_runner::load(&root).expect("vectors load");
    let baseline = agentproto_vector_runner::baseline(&root, "rust").expect("baseline loads");
    let filter = std::env::var("AGENTPROTO_VECTORS").ok();
    let mut failures = Vec::new();
    let mut stale = Vec::new();
    let mut ran = 0;
    for (path, case) in &cases {
        let rel = path.strip_prefix(&root).unwrap_or(path).with_extension("");
        let rel = rel.to_string_lossy().replace('\\', "/");
        assert_eq!(case.id, rel, "case id must equal its path: {}", path.display());
        if !agentproto_vector_runner::selected(filter.as_deref(), &case.id) {
            continue;
        }
        ran += 1;
        let result = agentproto_vector_runner::run(case);
        match (result, baseline.get(&case.id)) {
            (Ok(()), Some(_)) => stale.push(case.id.clone()),
            (Ok(()), None) | (Err(_), Some(_)) => {}
            (Err(why), None) => failures.push(format!("{}: {why}", case.id)),
        }
    }
    // Flow ids are checked by tests/flows.rs.
    for id in baseline.keys().filter(|id| !id.starts_with("acp/v1/flows/")) {
        assert!(cases.iter().any(|(_, c)| &c.id == id), "baseline names an unknown case {id}");
    }
    eprintln!("vectors: {ran} run, {} failed, {} baselined", failures.len(), baseline.len());
    assert!(stale.is_empty(), "baselined cases now pass; remove them from vectors/baselines/rust.json: {stale:#?}");
    assert!(failures.is_empty(), "{} vector(s) failed:\n{}", failures.len(), failures.join("\n"));
    if filter.is_none() {
        assert!(ran >= 300, "the corpus must hold at least 300 cases, found {ran}");
    }
}
