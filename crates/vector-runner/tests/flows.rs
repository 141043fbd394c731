//! Runs every flow under `vectors/acp/v1/flows/` against our agent and client roles.
//!
//! An unlisted failure fails the test, and so does a flow listed in
//! `vectors/baselines/rust.json` that now passes (stale baseline), except when
//! its reason starts with `race:`: such a defect depends on scheduling, so the
//! flow may pass now and then.
//! `AGENTPROTO_VECTORS=acp/v1/flows/agent-` selects flows by id prefix, as for cases.

use agentproto_vector_runner::flows::{load_flows, run_flow};

#[test]
fn every_flow_passes_or_is_baselined() {
    let root = agentproto_vector_files::root();
    let flows = load_flows(&root).expect("flows load");
    let baseline = agentproto_vector_runner::baseline(&root, "rust").expect("baseline loads");
    let filter = std::env::var("AGENTPROTO_VECTORS").ok();
    let prefix = format!("{}/", agentproto_vector_files::corpus(&root, "acp").expect("layout").flows);
    let mut failures = Vec::new();
    let mut stale = Vec::new();
    let mut ran = 0;
    for (path, flow) in &flows {
        let rel = path.strip_prefix(&root).unwrap_or(path).with_extension("");
        let rel = rel.to_string_lossy().replace('\\', "/");
        assert_eq!(flow.id, rel, "flow id must equal its path: {}", path.display());
        if !agentproto_vector_runner::selected(filter.as_deref(), &flow.id) {
            continue;
        }
        ran += 1;
        match (run_flow(flow), baseline.get(&flow.id)) {
            (Ok(()), Some(reason)) if reason.starts_with("race:") => {
                eprintln!("known race {} passed this time", flow.id);
            }
            (Ok(()), Some(_)) => stale.push(flow.id.clone()),
            (Ok(()), None) => {}
            (Err(why), Some(reason)) => eprintln!("known failure {} ({reason}):\n{why}\n", flow.id),
            (Err(why), None) => failures.push(why),
        }
    }
    let listed: Vec<&String> = baseline.keys().filter(|id| id.starts_with(&prefix)).collect();
    for id in &listed {
        assert!(flows.iter().any(|(_, f)| &&f.id == id), "baseline names an unknown flow {id}");
    }
    eprintln!("flows: {ran} run, {} failed, {} baselined", failures.len(), listed.len());
    assert!(stale.is_empty(), "baselined flows now pass; remove them from vectors/baselines/rust.json: {stale:#?}");
    assert!(failures.is_empty(), "{} flow(s) failed:\n\n{}", failures.len(), failures.join("\n\n"));
    if filter.is_none() {
        assert!(ran >= 40, "expected at least 40 flows, found {ran}");
    }
}
