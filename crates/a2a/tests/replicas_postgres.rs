//! Replicas on one PostgreSQL database, in one test process (`server::replicas`): events
//! written on one reach live subscribers on another as they are written, notices lost
//! while a listener was disconnected are made good when it reconnects, the sweeper's
//! final event crosses replicas, cancels reach the replica running the turn (or are done
//! by the requester when that replica does not answer), and a push worker delivers
//! outbox rows written elsewhere, woken by the bus.
#![cfg(feature = "postgres")]

mod common;
#[path = "support/postgres.rs"]
mod pg;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentproto_a2a::errors::A2aError;
use agentproto_a2a::executor::{AgentExecutor, RequestContext, TaskUpdater};
use agentproto_a2a::push::PushOptions;
use agentproto_a2a::recovery::RecoveryOptions;
use agentproto_a2a::server::{A2aServer, Builder};
use agentproto_a2a::store::postgres::{ListenOptions, PgListener, PostgresOptions, PostgresStore};
use agentproto_a2a::store::{Commit, LeaseChange, PushConfigRecord, Store, TaskKey, TurnLease};
use agentproto_a2a::tasks::{record, task_event};
use agentproto_a2a::v1::{Task, TaskState, TaskStatus};
use common::*;
use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify};

async fn cluster() -> &'static pg::PgCluster {
    tokio::task::spawn_blocking(pg::PgCluster::shared).await.expect("start PostgreSQL")
}

async fn store(db: &pg::TestDb) -> PostgresStore {
    within("connect", PostgresStore::connect(&db.config, PostgresOptions::default())).await.expect("connect")
}

/// A replica on `db`, serving, once its bus listens.
async fn replica<E: AgentExecutor>(db: &pg::TestDb, executor: E) -> Server {
    replica_with(db, executor, |builder| builder).await
}

async fn replica_with<E: AgentExecutor>(
    db: &pg::TestDb,
    executor: E,
    edit: impl FnOnce(Builder<E>) -> Builder<E>,
) -> Server {
    let builder = A2aServer::builder(executor, card_with("http://127.0.0.1:1", |_| {}));
    let builder = edit(within("join the database", builder.postgres(&db.config)).await.expect("postgres"));
    let mut status = None;
    let server = start_with(|_| builder, |server| status = server.bus_status()).await;
    let mut status = status.expect("a server on PostgreSQL has a bus");
    within("the bus to listen", status.wait_for(|s| s.connected)).await.unwrap();
    server
}

/// The artifact number of a `Gated` event (its text starts with the index).
fn artifact_index(ev: &Ev) -> usize {
    let text = ev.payload()["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str().unwrap().to_owned();
    text[..6].parse().unwrap()
}

/// A WORKING task whose lease `owner` holds until `until_ms`, written straight to the
/// store (a replica that is not this test's).
async fn planted(store: &PostgresStore, id: &str, owner: &str, until_ms: i64) -> TaskKey {
    let mut task = Task::new(id, TaskStatus::new(TaskState::Working));
    task.context_id = "ctx".into();
    let key = TaskKey::new("", id);
    let event = task_event(&task).unwrap();
    let rec = record(&key, std::sync::Arc::new(task));
    let lease = LeaseChange::Set(TurnLease { owner: owner.into(), until_ms });
    let commit = Commit { task: rec, expected_version: None, events: vec![(event.into(), false)], push: false, lease };
    store.commit(commit).await.unwrap();
    key
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_subscriber_on_one_replica_sees_each_event_of_a_turn_on_another_as_it_is_written() {
    let db = cluster().await.database().await;
    let (executor, gate, mut progress) = gated(16);
    let a = replica(&db, executor).await;
    let b = replica(&db, demo(10)).await;

    let mut on_a = a.stream(B::Rest, Call::new("SendStreamingMessage", send(&mid("gated"), "6"))).await;
    let id = on_a.expect().await.payload()["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(on_a.expect().await.state().as_deref(), Some("TASK_STATE_WORKING"));
    let mut on_b = b.stream(B::Rpc, Call::new("SubscribeToTask", json!({"id": id}))).await;
    assert_eq!(on_b.expect().await.state().as_deref(), Some("TASK_STATE_WORKING"));
    for n in 1..=6 {
        // One event written at a time: B must have it before the next is written.
        gate.add_permits(1);
        emitted(&mut progress, n).await;
        let ev = within("the event on B", on_b.expect()).await;
        assert_eq!(artifact_index(&ev), n - 1, "{}", ev.data);
        assert_eq!(ev.id, Some(n as u64 + 2), "sequence numbers follow the log");
    }
    let last = on_b.expect().await;
    assert_eq!(last.state().as_deref(), Some("TASK_STATE_COMPLETED"));
    assert_eq!(on_b.rest().await, Vec::new(), "the stream ends after the last event");
    // A's own stream saw the same log.
    let on_a_rest: Vec<(Option<u64>, Value)> = on_a.rest().await.iter().map(|ev| (ev.id, ev.payload())).collect();
    assert_eq!(on_a_rest.len(), 7);
    assert_eq!(on_a_rest.last().unwrap(), &(last.id, last.payload()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn notices_missed_while_the_listener_was_away_are_delivered_when_it_listens_again() {
    let cluster = cluster().await;
    let db = cluster.database().await;
    // B listens as a role of its own, which the test can lock out of the database.
    let role = format!("listener_{}_{}", std::process::id(), uuid::Uuid::new_v4().simple());
    let admin = cluster.config("postgres");
    pg::admin_execute(&admin, &format!("CREATE ROLE {role} LOGIN")).await.unwrap();
    let listen_config = format!("host={} port=5432 user={role} dbname={}", cluster.socket_dir().display(), db.name);
    let fast = ListenOptions {
        min_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        ..Default::default()
    };
    let listener = PgListener::new(&listen_config, fast).unwrap();
    let mut status = listener.status();
    let b_store = store(&db).await;
    let (executor, gate, mut progress) = gated(16);
    let a = replica(&db, executor).await;
    let b = start(|base| A2aServer::builder(demo(10), card_with(base, |_| {})).postgres_store(b_store, listener)).await;
    within("B to listen", status.wait_for(|s| s.connected)).await.unwrap();

    let mut on_a = a.stream(B::Rest, Call::new("SendStreamingMessage", send(&mid("gated"), "4"))).await;
    let id = on_a.expect().await.payload()["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(on_a.expect().await.state().as_deref(), Some("TASK_STATE_WORKING"));
    let mut on_b = b.stream(B::Rest, Call::new("SubscribeToTask", json!({"id": id}))).await;
    assert_eq!(on_b.expect().await.state().as_deref(), Some("TASK_STATE_WORKING"));
    gate.add_permits(1);
    emitted(&mut progress, 1).await;
    assert_eq!(artifact_index(&within("the first event on B", on_b.expect()).await), 0);

    // B's listener is cut off and cannot come back; A writes two events meanwhile.
    pg::admin_execute(&admin, &format!("ALTER ROLE {role} NOLOGIN")).await.unwrap();
    pg::admin_execute(
        &admin,
        &format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'"),
    )
    .await
    .unwrap();
    within("B to lose its listener", status.wait_for(|s| !s.connected)).await.unwrap();
    gate.add_permits(2);
    emitted(&mut progress, 3).await;
    // Let it back in: what it missed arrives once it listens again, then live events.
    pg::admin_execute(&admin, &format!("ALTER ROLE {role} LOGIN")).await.unwrap();
    within("B to listen again", status.wait_for(|s| s.connected && s.connections == 2)).await.unwrap();
    for n in 1..=2 {
        assert_eq!(artifact_index(&within("a missed event on B", on_b.expect()).await), n);
    }
    gate.add_permits(1);
    assert_eq!(artifact_index(&within("a live event on B", on_b.expect()).await), 3);
    assert_eq!(on_b.expect().await.state().as_deref(), Some("TASK_STATE_COMPLETED"));
    assert_eq!(on_b.rest().await, Vec::new());
    drop((a, b, on_a));
    let _ = pg::admin_execute(&admin, &format!("DROP ROLE IF EXISTS {role}")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_final_event_of_an_orphan_swept_by_one_replica_reaches_a_subscriber_on_another() {
    let db = cluster().await.database().await;
    let writer = store(&db).await;
    // A turn lost with its replica: WORKING, its lease long expired.
    let key = planted(&writer, "orphan", "lost-replica", 1).await;
    // Neither server sweeps by itself: B sweeps when told, C serves the subscriber.
    let driven = || RecoveryOptions { background: false, ..RecoveryOptions::default() };
    let b = A2aServer::builder(demo(10), card_with("http://127.0.0.1:1", |_| {}));
    let b = within("join", b.postgres(&db.config)).await.unwrap().recovery(driven()).unwrap();
    let (_b, sweeper_b, _) = start_driven(move |_| b).await;
    let c = replica_with(&db, demo(10), |builder| builder.recovery(driven()).unwrap()).await;
    let mut on_c = c.stream(B::Rest, Call::new("SubscribeToTask", json!({"id": key.id}))).await;
    assert_eq!(on_c.expect().await.state().as_deref(), Some("TASK_STATE_WORKING"));
    // One more event from elsewhere: once C has it, C's subscriber is past its replay
    // and waits for live events.
    let rec = writer.get_task(&key).await.unwrap().unwrap();
    let event = br#"{"statusUpdate":{"taskId":"orphan","contextId":"ctx","status":{"state":"TASK_STATE_WORKING"}}}"#;
    let commit = Commit {
        task: rec.clone(),
        expected_version: Some(rec.version),
        events: vec![(event.to_vec().into(), false)],
        push: false,
        lease: LeaseChange::Keep,
    };
    writer.commit(commit).await.unwrap();
    assert_eq!(within("the second event on C", on_c.expect()).await.id, Some(2));

    let report = sweeper_b.sweep().await.unwrap();
    assert_eq!(report.orphans_failed, 1, "{report:?}");
    let last = within("the final event on C", on_c.expect()).await;
    assert_eq!(last.state().as_deref(), Some("TASK_STATE_FAILED"), "{}", last.data);
    assert_eq!(last.id, Some(3));
    assert_eq!(on_c.rest().await, Vec::new(), "the stream ends");
}

/// An executor that stays WORKING until canceled, and reports its `cancel` calls.
struct Canceled {
    canceled: mpsc::UnboundedSender<String>,
}

impl AgentExecutor for Canceled {
    async fn execute(&self, cx: RequestContext, task: TaskUpdater) -> Result<(), A2aError> {
        task.working(None).await?;
        cx.cancelled.cancelled().await;
        Ok(())
    }

    async fn cancel(&self, task: TaskUpdater) -> Result<(), A2aError> {
        let _ = self.canceled.send(task.task_id().to_owned());
        task.cancel().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_on_one_replica_reaches_the_executor_on_the_replica_running_the_turn() {
    let db = cluster().await.database().await;
    let (canceled, mut cancels) = mpsc::unbounded_channel();
    let a = replica(&db, Canceled { canceled }).await;
    // A long wait: the owner's answer, not the fallback, must end this cancel.
    let b = replica_with(&db, demo(10), |builder| builder.cancel_wait(Duration::from_secs(120))).await;
    let mut on_a = a.stream(B::Rest, Call::new("SendStreamingMessage", send("hold-1", "x"))).await;
    let id = on_a.expect().await.payload()["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(on_a.expect().await.state().as_deref(), Some("TASK_STATE_WORKING"));

    let answer = within("the cancel", b.call(B::Rpc, "CancelTask", json!({"id": id}))).await;
    let task = answer.ok();
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{task}");
    assert_eq!(cancels.try_recv().ok().as_deref(), Some(id.as_str()), "A's executor canceled the turn");
    let last = on_a.expect().await;
    assert_eq!(last.state().as_deref(), Some("TASK_STATE_CANCELED"));
    assert!(last.payload()["statusUpdate"].get("metadata").is_none(), "{}", last.data);
    assert_eq!(on_a.rest().await, Vec::new());
    // Canceling again is refused as it is on one server.
    b.call(B::Rest, "CancelTask", json!({"id": id})).await.err(TASK_NOT_CANCELABLE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_the_turns_replica_does_not_answer_is_done_by_the_requester() {
    let db = cluster().await.database().await;
    let writer = store(&db).await;
    let b = replica_with(&db, demo(10), |builder| builder.cancel_wait(Duration::from_millis(300))).await;
    // A live lease held by a replica that never answers (cut off from the database).
    let key = planted(&writer, "held-by-a-ghost", "ghost-replica", now_ms() + 600_000).await;
    let task = within("the cancel", b.call(B::Rest, "CancelTask", json!({"id": key.id}))).await.ok().clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{task}");
    let log = within(
        "the log",
        b.stream(B::Rest, Call::new("SubscribeToTask", json!({"id": key.id})).header("Last-Event-ID", "1")),
    )
    .await
    .rest()
    .await;
    let last = log.last().unwrap().payload();
    assert_eq!(
        last["statusUpdate"]["metadata"]["agentproto"]["cancelUnanswered"]["replica"], "ghost-replica",
        "{last}"
    );

    // A lease naming a live replica that has no turn on the task: it says so at once and
    // the requester cancels (a fallback after the wait would time this test out).
    let c = replica_with(&db, demo(10), |builder| builder.cancel_wait(Duration::from_secs(120))).await;
    let a_store = store(&db).await;
    let a = A2aServer::builder(demo(10), card_with("http://127.0.0.1:1", |_| {}))
        .postgres_store(a_store, PgListener::new(&db.config, ListenOptions::default()).unwrap())
        .build();
    let mut listening = a.bus_status().unwrap();
    within("A to listen", listening.wait_for(|s| s.connected)).await.unwrap();
    let key = planted(&writer, "no-turn-there", a.leases().owner(), now_ms() + 600_000).await;
    let task = within("the cancel", c.call(B::Rest, "CancelTask", json!({"id": key.id}))).await.ok().clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{task}");
    a.shutdown_token().cancel();
}

/// Push receiver: every body it got, in arrival order.
#[derive(Default)]
struct Hook {
    bodies: Mutex<Vec<String>>,
    arrived: Notify,
}

async fn hook(seen: Arc<Hook>) -> String {
    async fn receive(axum::extract::State(seen): axum::extract::State<Arc<Hook>>, body: String) -> &'static str {
        seen.bodies.lock().unwrap().push(body);
        seen.arrived.notify_waiters();
        "ok"
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = axum::Router::new().route("/hook", axum::routing::post(receive)).with_state(seen);
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn received(seen: &Hook, count: usize) -> Vec<String> {
    within(&format!("{count} push deliveries"), async {
        loop {
            let notified = seen.arrived.notified();
            let bodies = seen.bodies.lock().unwrap().clone();
            if bodies.len() >= count {
                return bodies;
            }
            notified.await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_push_worker_delivers_outbox_rows_another_replica_wrote_woken_by_the_bus() {
    let db = cluster().await.database().await;
    let seen = Arc::new(Hook::default());
    let url = hook(Arc::clone(&seen)).await;
    // The worker never polls on its own within the test: only a wake-up moves it.
    let push =
        PushOptions { allow_loopback: true, poll_interval: Duration::from_secs(3_600), ..PushOptions::default() };
    let _b = replica_with(&db, demo(10), |builder| builder.push(push)).await;
    // Another replica's commits, written with a bare store (no worker, no hub).
    let writer = store(&db).await;
    let mut expected = Vec::new();
    for round in 0..2 {
        let id = format!("pushed-{round}");
        let key = planted(&writer, &id, "elsewhere", now_ms() + 600_000).await;
        let config = json!({"id": "c", "taskId": id, "url": url}).to_string().into_bytes();
        writer.put_push_config(PushConfigRecord { task: key.clone(), id: "c".into(), body: config }).await.unwrap();
        let rec = writer.get_task(&key).await.unwrap().unwrap();
        let events: Vec<(Vec<u8>, bool)> =
            (0..3).map(|n| (format!("{{\"n\":\"{id}-{n}\"}}").into_bytes(), false)).collect();
        expected.extend(events.iter().map(|(body, _)| String::from_utf8(body.clone()).unwrap()));
        let commit = Commit {
            task: rec.clone(),
            expected_version: Some(rec.version),
            events: events.into_iter().map(|(body, last)| (body.into(), last)).collect(),
            push: true,
            lease: LeaseChange::Keep,
        };
        writer.commit(commit).await.unwrap();
        // The second round comes once the worker has gone back to sleep after the first.
        let mut bodies = received(&seen, expected.len()).await;
        bodies.sort();
        let mut want = expected.clone();
        want.sort();
        assert_eq!(bodies, want, "each event once");
    }
}
