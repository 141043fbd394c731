//! Several replicas on one PostgreSQL database (`crate::recovery`): a live replica's turn
//! is never swept by another; once its lease runs out, replicas sweeping at the same
//! time fail each orphan exactly once; a database of schema version 1 migrates and its
//! running turns become orphans. Servers run with the background work off and one
//! manual clock, so every renewal and sweep is one the test makes.
#![cfg(feature = "postgres")]

mod common;
#[path = "support/postgres.rs"]
mod pg;

use std::sync::Arc;
use std::time::Duration;

use agentproto_a2a::recovery::{new_replica_id, ManualClock, RecoveryOptions, SweepReport};
use agentproto_a2a::server::A2aServer;
use agentproto_a2a::store::postgres::{PostgresOptions, PostgresStore};
use agentproto_a2a::store::{Commit, LeaseChange, Store, TaskKey, TurnLease};
use agentproto_a2a::tasks::{record, task_event};
use agentproto_a2a::v1::{Task, TaskState, TaskStatus};
use common::*;
use serde_json::json;

const LEASE: Duration = Duration::from_secs(10);

fn driven(clock: &Arc<ManualClock>) -> RecoveryOptions {
    RecoveryOptions { replica_id: new_replica_id(), lease: LEASE, clock: clock.clone(), background: false }
}

async fn connect(db: &pg::TestDb) -> Arc<dyn Store> {
    let store = within("connect", PostgresStore::connect(&db.config, PostgresOptions::default())).await;
    Arc::new(store.expect("connect to PostgreSQL"))
}

/// A WORKING task left by a replica that is gone: its lease ended at `until_ms`.
async fn orphan(store: &Arc<dyn Store>, id: &str, until_ms: i64) {
    let mut task = Task::new(id, TaskStatus::new(TaskState::Working));
    task.context_id = "ctx".into();
    let key = TaskKey::new("", id);
    let event = task_event(&task).unwrap();
    let rec = record(&key, std::sync::Arc::new(task));
    let lease = LeaseChange::Set(TurnLease { owner: "lost-replica".into(), until_ms });
    store
        .commit(Commit { task: rec, expected_version: None, events: vec![(event.into(), false)], push: false, lease })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_never_sweep_a_live_turn_and_sweep_each_orphan_exactly_once() {
    let cluster = tokio::task::spawn_blocking(pg::PgCluster::shared).await.expect("start PostgreSQL");
    let db = cluster.database().await;
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (store_a, store_b, store_c) = (connect(&db).await, connect(&db).await, connect(&db).await);
    let (executor, gate, _progress) = gated(8);
    let (a, sweeper_a, leases_a) = start_driven(|base| {
        A2aServer::builder(executor, card_with(base, |_| {})).store(store_a.clone()).recovery(driven(&clock)).unwrap()
    })
    .await;
    let (b, sweeper_b, _) = start_driven(|base| {
        A2aServer::builder(demo(10), card_with(base, |_| {})).store(store_b.clone()).recovery(driven(&clock)).unwrap()
    })
    .await;
    let c = A2aServer::builder(demo(10), card_with("http://127.0.0.1:1", |_| {}))
        .store(store_c.clone())
        .recovery(driven(&clock))
        .unwrap()
        .build();
    let sweeper_c = c.sweeper();

    // A runs a turn and renews its lease; B sweeps past the lease's first deadline.
    let mut sent = a.stream(B::Rest, Call::new("SendStreamingMessage", send(&mid("hang"), "1"))).await;
    let id = sent.expect().await.payload()["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(sent.expect().await.state().as_deref(), Some("TASK_STATE_WORKING"));
    clock.advance(Duration::from_secs(6));
    assert_eq!(leases_a.renew().await.unwrap(), 1);
    clock.advance(Duration::from_secs(6));
    assert_eq!(sweeper_b.sweep().await.unwrap(), SweepReport::default(), "a live replica's turn is left alone");
    let got = b.call(B::Rest, "GetTask", json!({"id": id})).await;
    assert_eq!(got.ok()["status"]["state"], "TASK_STATE_WORKING");

    // A stops renewing (as when it is lost), and twenty more turns were lost before.
    let orphans: Vec<String> = (0..20).map(|n| format!("orphan-{n:02}")).collect();
    for (n, orphan_id) in orphans.iter().enumerate() {
        orphan(&store_c, orphan_id, 990_000 + n as i64).await;
    }
    clock.advance(LEASE);
    let (ra, rb, rc) =
        within("three sweeps", async { tokio::join!(sweeper_a.sweep(), sweeper_b.sweep(), sweeper_c.sweep()) }).await;
    let reports = [ra.unwrap(), rb.unwrap(), rc.unwrap()];
    let failed: usize = reports.iter().map(|report| report.orphans_failed).sum();
    assert_eq!(failed, 21, "each orphan failed by exactly one replica: {reports:#?}");
    assert!(reports.iter().all(|report| report.errors == 0), "{reports:#?}");

    for task_id in orphans.iter().chain([&id]) {
        let key = TaskKey::new("", task_id.as_str());
        let stored = store_b.get_task(&key).await.unwrap().unwrap();
        assert_eq!((stored.state.as_str(), stored.lease), ("TASK_STATE_FAILED", None), "{task_id}");
        let log = store_b.read_events(&key, 0, 100).await.unwrap();
        assert_eq!(log.events.iter().filter(|event| event.last).count(), 1, "one final event for {task_id}");
        assert!(log.events.last().unwrap().last, "{task_id}: the final event is the last one");
    }
    assert_eq!(sweeper_b.sweep().await.unwrap().orphans_failed, 0);

    // A client of the lost turn resumes on B: the Task, the final event, the end.
    let resume = Call::new("SubscribeToTask", json!({"id": id})).header("Last-Event-ID", "2");
    let resumed = b.stream(B::Rpc, resume).await.rest().await;
    let seen: Vec<_> = resumed.iter().map(|ev| (ev.id, ev.state())).collect();
    let failed_state = Some("TASK_STATE_FAILED".to_owned());
    assert_eq!(seen, [(None, failed_state.clone()), (Some(3), failed_state)]);

    // A's executor, still running here, loses its next write cleanly.
    drop(sent);
    gate.add_permits(1);
    within("A's turn to end", async {
        while leases_a.running() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let log = store_b.read_events(&TaskKey::new("", id.as_str()), 0, 100).await.unwrap();
    assert_eq!((log.events.len(), log.events.iter().filter(|event| event.last).count()), (3, 1));
    c.shutdown_token().cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_version_1_database_migrates_and_its_running_turns_become_orphans() {
    let cluster = tokio::task::spawn_blocking(pg::PgCluster::shared).await.expect("start PostgreSQL");
    let db = cluster.database().await;
    drop(connect(&db).await);
    // Back to what version 1 looked like, with four tasks written by it.
    let sql = "DROP INDEX a2a_tasks_by_lease, a2a_tasks_terminal_by_age, a2a_idempotency_by_age, \
                   a2a_dead_letters_by_age; \
               ALTER TABLE a2a_tasks DROP COLUMN lease_owner, DROP COLUMN lease_until_ms; \
               UPDATE a2a_schema SET version = 1; \
               INSERT INTO a2a_tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, body) VALUES \
                   ('', 'submitted', 'c', 'TASK_STATE_SUBMITTED', FALSE, 5, 1, '\\x7b7d'), \
                   ('', 'working', 'c', 'TASK_STATE_WORKING', FALSE, 5, 1, '\\x7b7d'), \
                   ('', 'waiting', 'c', 'TASK_STATE_INPUT_REQUIRED', FALSE, 5, 1, '\\x7b7d'), \
                   ('', 'done', 'c', 'TASK_STATE_COMPLETED', TRUE, 5, 1, '\\x7b7d');";
    within("downgrade", pg::admin_execute(&db.config, sql)).await.expect("downgrade to version 1");
    let store = connect(&db).await;
    let mut expired = store.expired_leases(1, 10).await.unwrap();
    expired.sort();
    assert_eq!(expired, [TaskKey::new("", "submitted"), TaskKey::new("", "working")]);
    let working = store.get_task(&TaskKey::new("", "working")).await.unwrap().unwrap();
    assert_eq!(working.lease, Some(TurnLease { owner: String::new(), until_ms: 0 }));
    assert_eq!(store.get_task(&TaskKey::new("", "waiting")).await.unwrap().unwrap().lease, None);
    assert_eq!(store.get_task(&TaskKey::new("", "done")).await.unwrap().unwrap().lease, None);
}
