//! The A2A conformance vectors (`vectors/a2a/v1/`, format in `vectors/README.md`, "A2A")
//! through the Rust SDK's real receive paths:
//! - request cases as raw HTTP bytes over a 127.0.0.1 socket to an `A2aServer` (memory
//!   store), the decoded request observed by an interceptor and re-encoded;
//! - answer cases as the bytes a socket answers the real `A2aClient` with;
//! - flows against a server running the scripted executor the flows name.
//!
//! Every decoded value is encoded with our encoder and compared with the case's golden
//! file byte for byte. An unlisted failure fails the test, and so does a case listed in
//! `vectors/baselines/a2a-rust.json` that passes (stale baseline), except flows whose
//! reason starts with `race:`. `AGENTPROTO_VECTORS=a2a/v1/GetTask/,-a2a/v1/version`
//! selects by id prefix.
#![cfg(all(feature = "client", feature = "server"))]

#[path = "vectors/answers.rs"]
mod answers;
#[path = "vectors/case.rs"]
mod case;
#[path = "vectors/flows.rs"]
mod flows;
#[path = "vectors/requests.rs"]
mod requests;
#[path = "vectors/wire.rs"]
mod wire;

/// `a2a/v1/flows/`: the ids of flows start with it (`vectors/layout.json`).
fn flows_prefix() -> String {
    let corpus = agentproto_vector_files::corpus(&agentproto_vector_files::root(), "a2a").expect("vectors/layout.json");
    format!("{}/", corpus.flows)
}

/// Checks results against the baseline: failures not listed, and listed ids that passed.
fn judge(results: Vec<(String, Result<(), String>)>, baseline: &std::collections::BTreeMap<String, String>) {
    let mut failures = Vec::new();
    let mut stale = Vec::new();
    let ran = results.len();
    for (id, result) in results {
        match (result, baseline.get(&id)) {
            (Ok(()), Some(reason)) if !reason.starts_with("race:") => stale.push(id),
            (Ok(()), _) | (Err(_), Some(_)) => {}
            (Err(why), None) => failures.push(format!("{id}: {why}")),
        }
    }
    eprintln!("a2a vectors: {ran} run, {} failed unexpectedly, {} stale", failures.len(), stale.len());
    assert!(stale.is_empty(), "baselined cases now pass; remove them from vectors/baselines/a2a-rust.json: {stale:#?}");
    assert!(failures.is_empty(), "{} A2A vector(s) failed:\n{}", failures.len(), failures.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_a2a_case_passes_or_is_baselined() {
    let cases = case::load_cases();
    let baseline = case::baseline();
    let flows = flows_prefix();
    for id in baseline.keys().filter(|id| !id.starts_with(&flows)) {
        assert!(cases.iter().any(|c| &c.id == id), "the baseline names an unknown case {id}");
    }
    let server = requests::Server::start().await;
    let mut results = Vec::new();
    for c in cases.iter().filter(|c| case::selected(&c.id)) {
        let result = match c.direction.as_str() {
            "client_to_server" => requests::run(&server, c).await,
            "server_to_client" => answers::run(c).await,
            other => Err(format!("unknown direction {other}")),
        };
        results.push((c.id.clone(), result));
    }
    if std::env::var("AGENTPROTO_VECTORS").is_err() {
        assert!(results.len() >= 150, "the A2A corpus must hold at least 150 cases, found {}", results.len());
    }
    judge(results, &baseline);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_a2a_flow_passes_or_is_baselined() {
    let flows = flows::load_flows();
    let baseline = case::baseline();
    let prefix = flows_prefix();
    for id in baseline.keys().filter(|id| id.starts_with(&prefix)) {
        let flow = id.rsplit_once('@').map_or(id.as_str(), |(f, _)| f);
        assert!(flows.iter().any(|f| f.id == flow), "the baseline names an unknown flow {id}");
    }
    let mut results = Vec::new();
    for f in flows.iter().filter(|f| case::selected(&f.id)) {
        assert_eq!(f.executor, "scripted", "{}: the runner provides the scripted executor only", f.id);
        for b in &f.bindings {
            // A flow runs once per binding; its baseline entries name the binding: `<id>@rest`.
            results.push((format!("{}@{b}", f.id), flows::run(f, b).await));
        }
    }
    if std::env::var("AGENTPROTO_VECTORS").is_err() {
        assert!(!results.is_empty(), "no A2A flows found");
    }
    judge(results, &baseline);
}
