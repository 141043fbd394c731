//! Turn leases and the orphan rule through a real server (`crate::recovery`): a turn
//! holds a lease while it runs and not after; a task whose lease ran out is FAILED once,
//! with a final event that ends every stream on it, live or resumed; a live lease is
//! never swept; a shutdown leaves the leases of the turns it interrupted expired. The
//! servers run with the background work off and a manual clock, so every sweep and
//! renewal is one the test makes. A real `kill -9` of `agentproto serve` is in
//! `crates/cli/tests/serve.rs`; several replicas on PostgreSQL in `recovery_postgres.rs`.
#![cfg(all(feature = "server", feature = "sqlite"))]

mod common;

use std::sync::Arc;
use std::time::Duration;

use agentproto_a2a::errors::A2aError;
use agentproto_a2a::executor::{AgentExecutor, RequestContext, TaskUpdater};
use agentproto_a2a::recovery::{new_replica_id, ManualClock, RecoveryOptions, SweepReport};
use agentproto_a2a::server::A2aServer;
use agentproto_a2a::store::memory::{MemoryOptions, MemoryStore};
use agentproto_a2a::store::sqlite::SqliteStore;
use agentproto_a2a::store::{Store, TaskKey, TurnLease};
use common::*;
use serde_json::json;

const LEASE: Duration = Duration::from_secs(10);

fn driven(clock: &Arc<ManualClock>) -> RecoveryOptions {
    RecoveryOptions { replica_id: new_replica_id(), lease: LEASE, clock: clock.clone(), background: false }
}

fn sqlite_file() -> (Arc<dyn Store>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Arc::new(SqliteStore::open(dir.path().join("a2a.db")).unwrap()), dir)
}

fn memory() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new(MemoryOptions::default()))
}

async fn lease_of(store: &Arc<dyn Store>, id: &str) -> Option<TurnLease> {
    store.get_task(&TaskKey::new("", id)).await.unwrap().expect("the task is stored").lease
}

/// Polls `check` until it holds (bounded by [`WAIT`]).
async fn eventually<F, Fut>(what: &str, check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    within(what, async {
        while !check().await {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
}

/// Starts a streamed turn of the gated executor that waits for a permit; returns the
/// stream (read up to WORKING) and the task id.
async fn hanging_turn(srv: &Server) -> (Sse, String) {
    let mut stream = srv.stream(B::Rest, Call::new("SendStreamingMessage", send(&mid("hang"), "1"))).await;
    let first = stream.expect().await;
    let id = first.payload()["task"]["id"].as_str().unwrap().to_owned();
    let working = stream.expect().await;
    assert_eq!((working.id, working.state().as_deref()), (Some(2), Some("TASK_STATE_WORKING")));
    (stream, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_holds_a_lease_while_it_runs_and_not_after() {
    let (store, _dir) = sqlite_file();
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (executor, gate, _progress) = gated(8);
    let options = driven(&clock);
    let owner = options.replica_id.clone();
    let (srv, sweeper, leases) = start_driven(|base| {
        A2aServer::builder(executor, card_with(base, |_| {})).store(store.clone()).recovery(options).unwrap()
    })
    .await;
    let (mut stream, id) = hanging_turn(&srv).await;
    assert_eq!(lease_of(&store, &id).await, Some(TurnLease { owner: owner.clone(), until_ms: 1_010_000 }));
    assert_eq!(leases.running(), 1);

    clock.advance(Duration::from_secs(6));
    assert_eq!(leases.renew().await.unwrap(), 1);
    assert_eq!(lease_of(&store, &id).await, Some(TurnLease { owner: owner.clone(), until_ms: 1_016_000 }));
    clock.advance(Duration::from_secs(6));
    assert_eq!(sweeper.sweep().await.unwrap(), SweepReport::default(), "past the first deadline, not the renewed one");

    gate.add_permits(1);
    let rest = stream.rest().await;
    assert_eq!(rest.last().and_then(|ev| ev.state()).as_deref(), Some("TASK_STATE_COMPLETED"));
    assert_eq!(lease_of(&store, &id).await, None, "a terminal task has no lease");
    eventually("the turn to end", || async { leases.running() == 0 }).await;

    // An interrupted task has none either: nothing runs until the client answers.
    let waiting = srv.call(B::Rest, "SendMessage", send(&mid("wait"), "input")).await;
    let waiting_id = waiting.ok()["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(waiting.ok()["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(lease_of(&store, &waiting_id).await, None);
    clock.advance(Duration::from_secs(3_600));
    assert_eq!(sweeper.sweep().await.unwrap().orphans_failed, 0);
}

/// Moves the task to WORKING and returns: the task is left for later messages.
struct LeavesItWorking;

impl AgentExecutor for LeavesItWorking {
    async fn execute(&self, _cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        task.working(None).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_leaves_its_task_working_releases_the_lease() {
    let (store, _dir) = sqlite_file();
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (srv, sweeper, leases) = start_driven(|base| {
        A2aServer::builder(LeavesItWorking, card_with(base, |_| {}))
            .store(store.clone())
            .recovery(driven(&clock))
            .unwrap()
    })
    .await;
    let sent = srv.call(B::Rpc, "SendMessage", send(&mid("left"), "hi")).await;
    let id = sent.ok()["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(sent.ok()["task"]["status"]["state"], "TASK_STATE_WORKING");
    eventually("the lease to be released", || async { lease_of(&store, &id).await.is_none() }).await;
    assert_eq!(leases.running(), 0);
    clock.advance(Duration::from_secs(3_600));
    assert_eq!(sweeper.sweep().await.unwrap().orphans_failed, 0, "not a lost turn");
    let got = srv.call(B::Rpc, "GetTask", json!({"id": id})).await;
    assert_eq!(got.ok()["status"]["state"], "TASK_STATE_WORKING");
}

macro_rules! contract_on_memory_and_sqlite {
    ($name:ident) => {
        mod on_memory {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                super::$name(super::memory()).await;
            }
        }
        mod on_sqlite {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let (store, _dir) = super::sqlite_file();
                super::$name(store).await;
            }
        }
    };
}

contract_on_memory_and_sqlite!(an_orphan_is_failed_once_and_every_stream_on_it_ends);

/// The replica's renewals stop (as when it dies): its turn is an orphan once the lease
/// runs out. Here the executor itself lives on, which also shows its later writes lose.
async fn an_orphan_is_failed_once_and_every_stream_on_it_ends(store: Arc<dyn Store>) {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (executor, gate, _progress) = gated(8);
    let options = driven(&clock);
    let owner = options.replica_id.clone();
    let (srv, sweeper, leases) = start_driven(|base| {
        A2aServer::builder(executor, card_with(base, |_| {})).store(store.clone()).recovery(options).unwrap()
    })
    .await;
    let (mut sent, id) = hanging_turn(&srv).await;
    let mut follower = srv.stream(B::Rpc, Call::new("SubscribeToTask", json!({"id": id}))).await;
    assert_eq!(follower.expect().await.state().as_deref(), Some("TASK_STATE_WORKING"));

    clock.advance(LEASE);
    assert_eq!(sweeper.sweep().await.unwrap().orphans_failed, 0, "a deadline of now has not passed");
    clock.advance(Duration::from_millis(1));
    let report = sweeper.sweep().await.unwrap();
    assert_eq!((report.orphans_failed, report.raced, report.errors), (1, 0, 0));
    assert_eq!(sweeper.sweep().await.unwrap().orphans_failed, 0, "swept once");

    // Both live streams get the final event and end.
    for stream in [&mut sent, &mut follower] {
        let rest = stream.rest().await;
        assert_eq!(rest.len(), 1, "{rest:#?}");
        assert_eq!((rest[0].id, rest[0].state().as_deref()), (Some(3), Some("TASK_STATE_FAILED")));
        let update = &rest[0].payload()["statusUpdate"];
        let text = update["status"]["message"]["parts"][0]["text"].as_str().unwrap();
        assert!(text.contains("interrupted"), "{text}");
        assert_eq!(update["metadata"]["agentproto"]["interrupted"]["replica"], json!(owner));
        assert_eq!(update["metadata"]["agentproto"]["interrupted"]["leaseUntilMs"], json!(1_010_000));
    }
    // A client that saw up to WORKING resumes: the Task, the final event, the end.
    let resume = Call::new("SubscribeToTask", json!({"id": id})).header("Last-Event-ID", "2");
    let resumed = srv.stream(B::Rest, resume).await.rest().await;
    let seen: Vec<_> = resumed.iter().map(|ev| (ev.id, ev.kind(), ev.state())).collect();
    assert_eq!(
        seen,
        [
            (None, "task".to_owned(), Some("TASK_STATE_FAILED".to_owned())),
            (Some(3), "statusUpdate".to_owned(), Some("TASK_STATE_FAILED".to_owned())),
        ]
    );
    let got = srv.call(B::Rest, "GetTask", json!({"id": id})).await;
    assert_eq!(got.ok()["status"]["state"], "TASK_STATE_FAILED");
    assert_eq!(lease_of(&store, &id).await, None);

    // The executor goes on, and its next write is refused: the log keeps one final event.
    gate.add_permits(1);
    eventually("the executor to give up", || async { leases.running() == 0 }).await;
    let log = store.read_events(&TaskKey::new("", &id), 0, 100).await.unwrap();
    assert_eq!(log.events.len(), 3);
    assert_eq!(log.events.iter().filter(|event| event.last).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_leaves_the_turns_it_interrupted_to_the_next_sweep() {
    let (store, _dir) = sqlite_file();
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (executor, _gate, _progress) = gated(8);
    let (srv, _sweeper, leases) = start_driven(|base| {
        A2aServer::builder(executor, card_with(base, |_| {})).store(store.clone()).recovery(driven(&clock)).unwrap()
    })
    .await;
    let (_stream, id) = hanging_turn(&srv).await;
    srv.shut_down();
    eventually("the interrupted turn's lease to be left expired", || async {
        lease_of(&store, &id).await.is_some_and(|lease| lease.until_ms == 0)
    })
    .await;
    assert_eq!(leases.running(), 0);

    // The next server on the same store sweeps it at once, without waiting for the lease.
    let next = A2aServer::builder(LeavesItWorking, card_with("http://127.0.0.1:1", |_| {}))
        .store(store.clone())
        .recovery(driven(&clock))
        .unwrap()
        .build();
    assert_eq!(next.sweeper().sweep().await.unwrap().orphans_failed, 1);
    let task = store.get_task(&TaskKey::new("", &id)).await.unwrap().unwrap();
    assert_eq!((task.state.as_str(), task.lease), ("TASK_STATE_FAILED", None));
    next.shutdown_token().cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_builder_refuses_a_lease_too_short_to_renew() {
    let options = RecoveryOptions { lease: Duration::from_millis(1), ..RecoveryOptions::default() };
    let refused = A2aServer::builder(LeavesItWorking, card_with("http://127.0.0.1:1", |_| {})).recovery(options);
    assert!(refused.is_err());
}
