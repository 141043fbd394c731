//! What only the PostgreSQL store has to show: several stores (as several server
//! processes would) on one database, the group commit's transactions, the notice a
//! commit sends, migrations, the server builder, and the test server's own clean-up. The
//! contract every store meets is `store_contract.rs`, which runs on PostgreSQL too.
#![cfg(feature = "postgres")]

#[path = "support/postgres.rs"]
mod pg;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use agentproto_a2a::store::postgres::{PostgresOptions, PostgresStore, NOTIFY_CHANNEL, SCHEMA_VERSION};
use agentproto_a2a::store::{Commit, LeaseChange, PushConfigRecord, Store, StoreError, TaskKey, TaskRecord};
use futures::StreamExt;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

/// Every wait of these tests is bounded by this.
const WAIT: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(WAIT, f).await.unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// A fresh database and a store on it.
async fn fresh() -> (pg::TestDb, PostgresStore) {
    let cluster = tokio::task::spawn_blocking(pg::PgCluster::shared).await.expect("start PostgreSQL");
    let db = cluster.database().await;
    let store = connect(&db).await;
    (db, store)
}

async fn connect(db: &pg::TestDb) -> PostgresStore {
    within("connect", PostgresStore::connect(&db.config, PostgresOptions::default())).await.expect("connect")
}

fn key(id: &str) -> TaskKey {
    TaskKey::new("", id)
}

fn task(id: &str, context_id: &str) -> TaskRecord {
    TaskRecord {
        key: key(id),
        context_id: context_id.into(),
        state: "TASK_STATE_WORKING".into(),
        terminal: false,
        status_ts_ms: 10,
        version: 0,
        body: b"{}".to_vec().into(),
        lease: None,
    }
}

fn commit(id: &str, expected_version: Option<u64>, events: &[&str], push: bool) -> Commit {
    Commit {
        task: task(id, "ctx"),
        expected_version,
        events: events.iter().map(|body| (body.as_bytes().to_vec().into(), false)).collect(),
        push,
        lease: LeaseChange::Keep,
    }
}

/// Makes any statement that writes an event whose body is `boom` fail.
async fn install_boom_trigger(db: &pg::TestDb) {
    let sql = "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS \
               $$ BEGIN RAISE EXCEPTION 'boom'; END $$; \
               CREATE TRIGGER boom BEFORE INSERT ON a2a_events FOR EACH ROW \
               WHEN (NEW.body = 'boom'::BYTEA) EXECUTE FUNCTION boom();";
    within("install trigger", pg::admin_execute(&db.config, sql)).await.expect("install trigger");
}

/// A connection that `LISTEN`s on the store's channel; the payloads arrive on the receiver.
async fn listen(db: &pg::TestDb) -> (tokio_postgres::Client, mpsc::UnboundedReceiver<String>) {
    let (client, mut connection) =
        within("listen", tokio_postgres::connect(&db.config, tokio_postgres::NoTls)).await.expect("connect");
    let (sender, receiver) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(notice) = message {
                assert_eq!(notice.channel(), NOTIFY_CHANNEL);
                let _ = sender.send(notice.payload().to_owned());
            }
        }
    });
    within("LISTEN", client.batch_execute(&format!("LISTEN {NOTIFY_CHANNEL}"))).await.expect("LISTEN");
    (client, receiver)
}

async fn next_notice(receiver: &mut mpsc::UnboundedReceiver<String>) -> serde_json::Value {
    let payload = within("a notification", receiver.recv()).await.expect("listener ended");
    serde_json::from_str(&payload).expect("JSON payload")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_stores_on_one_database_keep_versions_and_sequence_numbers() {
    let (db, first) = fresh().await;
    let second = connect(&db).await;
    first.commit(commit("t1", None, &[], false)).await.unwrap();
    const WRITERS: usize = 8;
    const COMMITS: usize = 20;
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            // Half the writers go through each store, as two server processes would.
            let store: Arc<dyn Store> = Arc::new(if writer % 2 == 0 { first.clone() } else { second.clone() });
            tokio::spawn(async move {
                let (mut seqs, mut conflicts) = (Vec::new(), 0);
                while seqs.len() < COMMITS {
                    let current = store.get_task(&key("t1")).await.unwrap().unwrap();
                    let body = format!("w{writer}-{}", seqs.len());
                    match store.commit(commit("t1", Some(current.version), &[&body], false)).await {
                        Ok(committed) => seqs.extend(committed.events.iter().map(|e| e.seq)),
                        Err(StoreError::Conflict { .. }) => conflicts += 1,
                        Err(other) => panic!("commit failed: {other}"),
                    }
                }
                (seqs, conflicts)
            })
        })
        .collect();
    let mut all = Vec::new();
    for writer in writers {
        let (seqs, _conflicts) = within("writers", writer).await.unwrap();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]));
        all.extend(seqs);
    }
    all.sort_unstable();
    let total = (WRITERS * COMMITS) as u64;
    assert_eq!(all, (1..=total).collect::<Vec<_>>(), "every number given once");
    let stored = second.get_task(&key("t1")).await.unwrap().unwrap();
    assert_eq!(stored.version, total + 1, "one version per successful commit, none lost");
    let page = first.read_events(&key("t1"), 0, 1_000).await.unwrap();
    assert_eq!(page.events.len() as u64, total);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_workers_never_claim_one_delivery() {
    let (db, first) = fresh().await;
    let second = connect(&db).await;
    first.commit(commit("t1", None, &[], false)).await.unwrap();
    for config in ["a", "b"] {
        let body = format!("{{\"url\":\"https://{config}.example\"}}").into_bytes();
        first.put_push_config(PushConfigRecord { task: key("t1"), id: config.into(), body }).await.unwrap();
    }
    let events: Vec<String> = (0..150).map(|n| format!("e{n}")).collect();
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    first.commit(commit("t1", Some(1), &events, true)).await.unwrap();

    // Eight claimers, four per store, all at one instant with a lease longer than the
    // test: a delivery handed out twice can only come from a race between claims.
    let claimers: Vec<_> = (0..8)
        .map(|n| {
            let store = if n % 2 == 0 { first.clone() } else { second.clone() };
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let claimed = store.claim_deliveries(1_000, 3_600_000, 7).await.unwrap();
                    if claimed.is_empty() {
                        return got;
                    }
                    got.extend(claimed.into_iter().map(|d| (d.id, d.config_id, d.seq)));
                }
            })
        })
        .collect();
    let mut all = Vec::new();
    for claimer in claimers {
        all.extend(within("claimers", claimer).await.unwrap());
    }
    let ids: BTreeSet<i64> = all.iter().map(|(id, _, _)| *id).collect();
    assert_eq!(ids.len(), all.len(), "a delivery was claimed twice");
    let pairs: BTreeSet<(String, u64)> = all.into_iter().map(|(_, config, seq)| (config, seq)).collect();
    assert_eq!(pairs.len(), 300, "every delivery claimed once");
    assert!(first.claim_deliveries(1_000, 1_000, 10).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_commit_whose_transaction_fails_leaves_nothing() {
    let (db, store) = fresh().await;
    install_boom_trigger(&db).await;
    let (_listener, mut notices) = listen(&db).await;
    store.commit(commit("t1", None, &[], false)).await.unwrap();
    let body = b"{\"url\":\"https://a.example\"}".to_vec();
    store.put_push_config(PushConfigRecord { task: key("t1"), id: "a".into(), body }).await.unwrap();

    let mut doomed = commit("t1", Some(1), &["fine", "boom"], true);
    doomed.task.state = "TASK_STATE_COMPLETED".into();
    let error = store.commit(doomed).await.unwrap_err();
    assert!(matches!(&error, StoreError::Backend(message) if message.contains("boom")), "{error:?}");

    let stored = store.get_task(&key("t1")).await.unwrap().unwrap();
    assert_eq!((stored.version, stored.state.as_str()), (1, "TASK_STATE_WORKING"), "the task row is as it was");
    let page = store.read_events(&key("t1"), 0, 10).await.unwrap();
    assert_eq!((page.events.len(), page.last_written), (0, 0), "no event, no sequence number used");
    assert_eq!(store.next_delivery_due().await.unwrap(), None, "no delivery queued");

    // The next commit gets the numbers the failed one would have had, and its notice is
    // the first one sent: the failed commit sent none.
    let committed = store.commit(commit("t1", Some(1), &["next"], true)).await.unwrap();
    assert_eq!((committed.version, committed.events[0].seq), (2, 1));
    assert_eq!(next_notice(&mut notices).await, serde_json::json!({"tenant": "", "id": "t1", "last_seq": 1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_commit_is_rolled_back_alone_within_its_batch() {
    let (db, store) = fresh().await;
    install_boom_trigger(&db).await;
    let before = store.commit_transactions();
    let results = store
        .commit_batch(vec![
            commit("t2", None, &["x", "y", "z"], false),
            commit("t1", None, &["a"], false),
            commit("t1", Some(7), &["stale"], false),
            commit("t1", None, &["again"], false),
            commit("t3", None, &["ok", "boom"], false),
            commit("t1", Some(1), &["b"], false),
        ])
        .await;
    // The failing statement aborts the first transaction; the rest of the batch runs again
    // without that commit, in a second one.
    assert_eq!(store.commit_transactions(), before + 2, "two transactions");
    assert_eq!(results[0].as_ref().unwrap().events.len(), 3);
    assert_eq!(results[1].as_ref().unwrap().version, 1);
    assert!(matches!(&results[2], Err(StoreError::Conflict { expected: 7, found: 1, .. })), "{:?}", results[2]);
    assert!(matches!(&results[3], Err(StoreError::Exists(_))), "{:?}", results[3]);
    assert!(matches!(&results[4], Err(StoreError::Backend(m)) if m.contains("boom")), "{:?}", results[4]);
    let last = results[5].as_ref().unwrap();
    assert_eq!((last.version, last.events[0].seq), (2, 2), "one task's commits keep their order");
    assert_eq!(store.get_task(&key("t3")).await.unwrap(), None, "the failed create left no row");
    let t1 = store.read_events(&key("t1"), 0, 10).await.unwrap();
    assert_eq!(t1.events.iter().map(|e| e.body.bytes().unwrap()).collect::<Vec<_>>(), [&b"a"[..], b"b"]);
}

/// A batch that updates tasks is two round trips whatever its size (BEGIN and the locks;
/// the writes, one notice and COMMIT), in one transaction, and its notice lists each task it wrote
/// events to once, with the task's last sequence number.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_of_updates_costs_two_round_trips_one_transaction_and_one_notice() {
    let (db, store) = fresh().await;
    let (_listener, mut notices) = listen(&db).await;
    // The statements get prepared on the pool's connection (one more round trip, once).
    within("warm-up", store.commit(commit("warm", None, &["w"], false))).await.expect("warm-up");
    assert_eq!(next_notice(&mut notices).await, serde_json::json!({"tenant": "", "id": "warm", "last_seq": 1}));
    let before = store.stats();
    let results = within(
        "batch",
        store.commit_batch(vec![
            commit("b", None, &["1", "2"], false),
            commit("a", None, &["1"], false),
            commit("b", Some(1), &["3"], true),
            commit("c", None, &[], false),
            commit("a", Some(7), &["stale"], false),
        ]),
    )
    .await;
    let versions: Vec<Result<u64, String>> =
        results.iter().map(|r| r.as_ref().map(|c| c.version).map_err(ToString::to_string)).collect();
    assert_eq!(&versions[..4], [Ok(1), Ok(1), Ok(2), Ok(1)]);
    assert!(matches!(&results[4], Err(StoreError::Conflict { expected: 7, found: 1, .. })), "{:?}", results[4]);
    let after = store.stats();
    assert_eq!(after.commits - before.commits, 5);
    assert_eq!(after.transactions - before.transactions, 1);
    assert_eq!(after.round_trips - before.round_trips, 2);
    // BEGIN, a lock for each of the two updated tasks, four writes (the stale commit
    // writes nothing), the notice, COMMIT.
    assert_eq!(after.statements - before.statements, 9);
    assert_eq!(after.other_calls, before.other_calls);
    assert_eq!(
        next_notice(&mut notices).await,
        serde_json::json!([{"tenant": "", "id": "a", "last_seq": 1}, {"tenant": "", "id": "b", "last_seq": 3}])
    );
    let b = within("events", store.read_events(&key("b"), 0, 10)).await.expect("events");
    assert_eq!(b.events.iter().map(|e| e.body.bytes().unwrap()).collect::<Vec<_>>(), [&b"1"[..], b"2", b"3"]);
}

/// A create needs no lock (its INSERT finds a task already there): a create alone is one
/// statement, its own transaction, its notice inside; a batch of creates is one round trip.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creates_cost_one_round_trip() {
    let (db, store) = fresh().await;
    let (_listener, mut notices) = listen(&db).await;
    within("warm-up", store.commit(commit("warm", None, &["w"], false))).await.expect("warm-up");
    assert_eq!(next_notice(&mut notices).await, serde_json::json!({"tenant": "", "id": "warm", "last_seq": 1}));

    let before = store.stats();
    let created = within("create", store.commit(commit("one", None, &["a", "b"], true))).await.expect("create");
    assert_eq!((created.version, created.events.len()), (1, 2));
    let after = store.stats();
    let cost = (after.round_trips - before.round_trips, after.statements - before.statements);
    assert_eq!(cost, (1, 1), "one statement in one round trip");
    assert_eq!(after.transactions - before.transactions, 1);
    assert_eq!(next_notice(&mut notices).await, serde_json::json!({"tenant": "", "id": "one", "last_seq": 2}));
    let refused = within("create again", store.commit(commit("one", None, &["c"], false))).await;
    assert!(matches!(refused, Err(StoreError::Exists(_))), "{refused:?}");

    let before = store.stats();
    let results = within(
        "batch of creates",
        store.commit_batch(vec![
            commit("x", None, &["1"], false),
            commit("one", None, &["again"], false),
            commit("y", None, &[], false),
        ]),
    )
    .await;
    assert_eq!(results[0].as_ref().map(|c| c.version).ok(), Some(1));
    assert!(matches!(&results[1], Err(StoreError::Exists(_))), "{:?}", results[1]);
    assert_eq!(results[2].as_ref().map(|c| c.version).ok(), Some(1));
    let after = store.stats();
    // BEGIN, three creates (one finds its task there), the notice, COMMIT.
    let cost = (after.round_trips - before.round_trips, after.statements - before.statements);
    assert_eq!(cost, (1, 6));
    let one = within("events", store.read_events(&key("one"), 0, 10)).await.expect("events");
    assert_eq!(one.events.iter().map(|e| e.body.bytes().unwrap()).collect::<Vec<_>>(), [&b"a"[..], b"b"]);
    // The notice of the batch: the task that lost its create may be named (a notice is a
    // hint to read the log); the one written is.
    let notice = next_notice(&mut notices).await;
    let named: Vec<&str> = notice.as_array().expect("a batch notice").iter().filter_map(|e| e["id"].as_str()).collect();
    assert!(named.contains(&"x"), "{notice}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_whose_commit_fails_at_commit_time_stores_nothing() {
    let (db, store) = fresh().await;
    // A deferred constraint trigger runs at COMMIT, after every savepoint was released.
    let sql = "CREATE FUNCTION late_boom() RETURNS trigger LANGUAGE plpgsql AS \
               $$ BEGIN RAISE EXCEPTION 'late boom'; END $$; \
               CREATE CONSTRAINT TRIGGER late_boom AFTER INSERT ON a2a_tasks DEFERRABLE INITIALLY DEFERRED \
               FOR EACH ROW WHEN (NEW.context_id = 'doomed') EXECUTE FUNCTION late_boom();";
    within("install trigger", pg::admin_execute(&db.config, sql)).await.expect("install trigger");
    let mut doomed = commit("t2", None, &["e"], false);
    doomed.task.context_id = "doomed".into();
    let results = store.commit_batch(vec![commit("t1", None, &["e"], false), doomed]).await;
    for result in &results {
        assert!(matches!(result, Err(StoreError::Backend(m)) if m.contains("late boom")), "{result:?}");
    }
    assert_eq!(store.get_task(&key("t1")).await.unwrap(), None, "the batch was not committed");
    assert_eq!(store.get_task(&key("t2")).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn commits_with_events_notify_with_the_task_and_its_last_sequence_number() {
    let (db, store) = fresh().await;
    let (_listener, mut notices) = listen(&db).await;
    store.commit(commit("t1", None, &["a", "b"], false)).await.unwrap();
    assert_eq!(next_notice(&mut notices).await, serde_json::json!({"tenant": "", "id": "t1", "last_seq": 2}));
    store.commit(commit("t1", Some(1), &[], false)).await.unwrap();
    let mut other = commit("t9", None, &["c"], false);
    other.task.key = TaskKey::new("acme", "t9");
    store.commit(other).await.unwrap();
    // The commit without events sent nothing: the next notice is the one after it.
    assert_eq!(next_notice(&mut notices).await, serde_json::json!({"tenant": "acme", "id": "t9", "last_seq": 1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migration_runs_once_and_a_newer_schema_is_refused() {
    let cluster = tokio::task::spawn_blocking(pg::PgCluster::shared).await.expect("start PostgreSQL");
    let db = cluster.database().await;
    // Four processes starting at once on an empty database: all open it.
    let opening: Vec<_> = (0..4)
        .map(|_| {
            let config = db.config.clone();
            tokio::spawn(async move { PostgresStore::connect(&config, PostgresOptions::default()).await })
        })
        .collect();
    for store in opening {
        within("connect", store).await.unwrap().expect("every store opens");
    }
    let (client, connection) = tokio_postgres::connect(&db.config, tokio_postgres::NoTls).await.unwrap();
    let driver = tokio::spawn(connection);
    let versions: Vec<i64> =
        client.query("SELECT version FROM a2a_schema", &[]).await.unwrap().iter().map(|row| row.get(0)).collect();
    assert_eq!(versions, [SCHEMA_VERSION]);
    client.execute("UPDATE a2a_schema SET version = $1", &[&(SCHEMA_VERSION + 1)]).await.unwrap();
    drop(client);
    let _ = driver.await;
    let error = PostgresStore::connect(&db.config, PostgresOptions::default()).await.unwrap_err();
    assert!(matches!(&error, StoreError::Backend(m) if m.contains("newer")), "{error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_server_builder_keeps_tasks_in_postgres() {
    use agentproto_a2a::demo::{card, DemoAgent};
    use agentproto_a2a::server::A2aServer;

    let cluster = tokio::task::spawn_blocking(pg::PgCluster::shared).await.expect("start PostgreSQL");
    let db = cluster.database().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server =
        within("builder", A2aServer::builder(DemoAgent::default(), card(&base)).postgres(&db.config)).await.unwrap();
    let server = server.build();
    let shutdown = server.shutdown_token();
    let serving = tokio::spawn(server.serve(listener));
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "tck-complete-task-pg", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let answer: serde_json::Value = within(
        "SendMessage",
        reqwest::Client::new().post(format!("{base}/")).header("A2A-Version", "1.0").json(&body).send(),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let id = answer["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{answer}")).to_owned();
    shutdown.cancel();
    within("shutdown", serving).await.unwrap().unwrap();

    // Another process's store sees the task and its log.
    let store = connect(&db).await;
    let stored = store.get_task(&key(&id)).await.unwrap().expect("task stored in PostgreSQL");
    assert_eq!(stored.state, "TASK_STATE_COMPLETED");
    let page = store.read_events(&key(&id), 0, 100).await.unwrap();
    assert!(page.events.last().is_some_and(|event| event.last), "{page:?}");
}

#[test]
fn a_stopped_cluster_leaves_no_process_and_no_directory() {
    let cluster = pg::PgCluster::start().unwrap_or_else(|error| panic!("PostgreSQL for the tests: {error}"));
    let (dir, pid) = (cluster.socket_dir().to_owned(), cluster.server_pid());
    assert!(agentproto_process::running(pid));
    assert!(dir.join("data").join("PG_VERSION").exists());
    drop(cluster);
    assert!(!agentproto_process::running(pid), "the server was stopped");
    assert!(!dir.exists(), "{} was removed", dir.display());
}

/// A batch that PostgreSQL picks as a deadlock victim is run again, not failed. Another
/// session holds task B, the batch locks A and waits for B, then the other session asks
/// for A: a cycle. The batch's session waited first, and the other one set a longer
/// `deadlock_timeout`, so the batch's session finds the cycle and PostgreSQL aborts the
/// batch's transaction. The store runs the batch again; once the other session ends,
/// both commits land, each exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_that_loses_a_deadlock_is_run_again() {
    let (db, store) = fresh().await;
    for id in ["dl-a", "dl-b"] {
        within("create", store.commit(commit(id, None, &["created"], false))).await.expect("create");
    }
    let (other, connection) =
        within("connect", tokio_postgres::connect(&db.config, tokio_postgres::NoTls)).await.expect("connect");
    tokio::spawn(connection);
    let hold_b = "SET deadlock_timeout = '60s'; BEGIN; \
                  SELECT 1 FROM a2a_tasks WHERE tenant = '' AND id = 'dl-b' FOR UPDATE";
    within("hold B", other.batch_execute(hold_b)).await.expect("hold B");

    let batch_store = store.clone();
    let batch = tokio::spawn(async move {
        batch_store
            .commit_batch(vec![commit("dl-a", Some(1), &["a2"], false), commit("dl-b", Some(1), &["b2"], false)])
            .await
    });
    // Until the batch's session waits for B's row (it holds A by then).
    let mut waiting = 0i64;
    for _ in 0..3_000 {
        let row = within(
            "pg_stat_activity",
            other.query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
                &[],
            ),
        )
        .await
        .expect("pg_stat_activity");
        waiting = row.get(0);
        if waiting > 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(waiting, 1, "the batch never waited for task B");
    // Asking for A closes the cycle; this returns once the batch's transaction is aborted.
    within("lock A", other.batch_execute("SELECT 1 FROM a2a_tasks WHERE tenant = '' AND id = 'dl-a' FOR UPDATE"))
        .await
        .expect("lock A after the batch lost the deadlock");
    within("end the other transaction", other.batch_execute("ROLLBACK")).await.expect("rollback");

    let results = within("the batch", batch).await.expect("batch task");
    let versions: Vec<Result<u64, String>> =
        results.iter().map(|r| r.as_ref().map(|c| c.version).map_err(ToString::to_string)).collect();
    assert_eq!(versions, vec![Ok(2), Ok(2)], "both commits land once the batch is run again");
    for (id, body) in [("dl-a", "a2"), ("dl-b", "b2")] {
        let page = within("events", store.read_events(&key(id), 0, 10)).await.expect("events");
        let bodies: Vec<_> = page.events.iter().map(|e| e.body.bytes().unwrap()).collect();
        assert_eq!(bodies, vec![&b"created"[..], body.as_bytes()], "the log of {id}: each event once");
    }
}
