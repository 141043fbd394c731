//! Unit tests of the SQLite store (the shared contract suite is tests/store_contract.rs).

use super::*;

fn record(id: &str) -> TaskRecord {
    TaskRecord {
        key: TaskKey::new("", id),
        context_id: "ctx".into(),
        state: "TASK_STATE_WORKING".into(),
        terminal: false,
        status_ts_ms: 7,
        version: 0,
        body: b"{}".to_vec().into(),
        lease: None,
    }
}

fn pragma(connection: &Connection, name: &str) -> String {
    connection
        .query_row(&format!("PRAGMA {name}"), [], |row| row.get::<_, rusqlite::types::Value>(0))
        .map(|value| match value {
            Value::Integer(n) => n.to_string(),
            Value::Text(text) => text,
            other => format!("{other:?}"),
        })
        .unwrap()
}

#[test]
fn open_creates_the_schema_in_wal_mode_with_full_sync() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("a2a.db")).unwrap();
    let writer = store.pool.writer.lock().unwrap();
    assert_eq!(pragma(&writer, "journal_mode"), "wal");
    assert_eq!(pragma(&writer, "synchronous"), "2", "FULL");
    assert_eq!(pragma(&writer, "foreign_keys"), "1");
    assert_eq!(pragma(&writer, "user_version"), SCHEMA_VERSION.to_string());
    assert_eq!(pragma(&writer, "busy_timeout"), "5000");
    assert_eq!(store.pool.readers.len(), READERS);
    for reader in &store.pool.readers {
        let reader = reader.lock().unwrap();
        assert_eq!(pragma(&reader, "query_only"), "1");
        assert_eq!(pragma(&reader, "foreign_keys"), "1");
    }
}

#[tokio::test]
async fn committed_tasks_and_events_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a2a.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        let commit = Commit {
            task: record("t1"),
            expected_version: None,
            events: vec![(b"e1".to_vec().into(), false), (b"e2".to_vec().into(), true)],
            push: false,
            lease: LeaseChange::Keep,
        };
        store.commit(commit).await.unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let task = store.get_task(&TaskKey::new("", "t1")).await.unwrap().unwrap();
    assert_eq!(task, TaskRecord { version: 1, ..record("t1") });
    let page = store.read_events(&TaskKey::new("", "t1"), 0, 10).await.unwrap();
    assert_eq!(page.events.iter().map(|event| (event.seq, event.last)).collect::<Vec<_>>(), [(1, false), (2, true)]);
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a2a.db");
    Connection::open(&path).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    let error = SqliteStore::open(&path).unwrap_err();
    assert!(matches!(error, StoreError::Backend(_)), "{error:?}");
}

#[test]
fn migration_from_0_is_all_or_nothing() {
    let connection = Connection::open_in_memory().unwrap();
    // A table in the way makes the schema script fail halfway.
    connection.execute_batch("CREATE TABLE dead_letters (x INTEGER)").unwrap();
    assert!(migrate(&connection).is_err());
    assert_eq!(pragma(&connection, "user_version"), "0");
    let tasks: i64 =
        connection.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'tasks'", [], |row| row.get(0)).unwrap();
    assert_eq!(tasks, 0, "the tables created before the failure were rolled back");
}

#[test]
fn a_version_1_database_migrates_and_its_running_turns_get_an_expired_lease() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a2a.db");
    {
        let connection = Connection::open(&path).unwrap();
        connection.execute_batch(&format!("{SCHEMA_V1}\nPRAGMA user_version = 1;")).unwrap();
        for (id, state, terminal) in [
            ("submitted", "TASK_STATE_SUBMITTED", false),
            ("working", "TASK_STATE_WORKING", false),
            ("waiting", "TASK_STATE_INPUT_REQUIRED", false),
            ("done", "TASK_STATE_COMPLETED", true),
        ] {
            connection
                .execute(
                    "INSERT INTO tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, body) \
                     VALUES ('', ?1, 'c', ?2, ?3, 5, 1, X'7B7D')",
                    params![id, state, terminal],
                )
                .unwrap();
        }
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(pragma(&store.pool.writer.lock().unwrap(), "user_version"), "2");
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let mut expired = runtime.block_on(store.expired_leases(1, 10)).unwrap();
    expired.sort();
    assert_eq!(expired, [TaskKey::new("", "submitted"), TaskKey::new("", "working")]);
    let working = runtime.block_on(store.get_task(&TaskKey::new("", "working"))).unwrap().unwrap();
    assert_eq!(working.lease, Some(TurnLease { owner: String::new(), until_ms: 0 }));
    let waiting = runtime.block_on(store.get_task(&TaskKey::new("", "waiting"))).unwrap().unwrap();
    assert_eq!((waiting.lease, waiting.version), (None, 1));
}

#[test]
fn garbage_in_the_database_is_an_error_not_a_panic() {
    let store = SqliteStore::open_in_memory().unwrap();
    {
        let writer = store.pool.writer.lock().unwrap();
        writer
            .execute(
                "INSERT INTO tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, body) \
                 VALUES ('', 'bad', 'c', 's', 0, 0, -1, X'')",
                [],
            )
            .unwrap();
    }
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let error = runtime.block_on(store.get_task(&TaskKey::new("", "bad"))).unwrap_err();
    assert!(matches!(error, StoreError::Backend(_)), "{error:?}");
}

fn create(id: &str, events: usize) -> Commit {
    Commit {
        task: record(id),
        expected_version: None,
        events: (0..events).map(|i| (format!("e{i}").into_bytes().into(), i + 1 == events)).collect(),
        push: false,
        lease: LeaseChange::Keep,
    }
}

/// Queues `commits` as concurrent callers would, and returns where their outcomes go.
fn enqueue(store: &SqliteStore, commits: Vec<Commit>) -> Vec<oneshot::Receiver<Result<Committed, StoreError>>> {
    commits
        .into_iter()
        .map(|commit| {
            let (reply, outcome) = oneshot::channel();
            store.pool.queue().push((commit, reply));
            outcome
        })
        .collect()
}

#[test]
fn queued_commits_share_one_transaction_and_each_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("a2a.db")).unwrap();
    let outcomes = enqueue(&store, (0..10).map(|i| create(&format!("t{i}"), 2)).collect());
    store.pool.commit_queued();
    assert_eq!(store.pool.transactions.load(Ordering::Relaxed), 1);
    for mut outcome in outcomes {
        let committed = outcome.try_recv().expect("answered").expect("committed");
        assert_eq!((committed.version, committed.events.len()), (1, 2));
    }
    let writer = store.pool.writer.lock().unwrap();
    let count = |table: &str| writer.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get::<_, i64>(0));
    assert_eq!((count("tasks").unwrap(), count("events").unwrap()), (10, 20));
}

#[test]
fn a_failing_commit_is_rolled_back_alone_within_its_batch() {
    let store = SqliteStore::open_in_memory().unwrap();
    let stale = Commit { expected_version: Some(7), ..create("t1", 1) }; // t1 is at version 1 by then
    let outcomes = enqueue(&store, vec![create("t1", 1), stale, create("t1", 1), create("t2", 3)]);
    store.pool.commit_queued();
    assert_eq!(store.pool.transactions.load(Ordering::Relaxed), 1);
    let results: Vec<_> = outcomes.into_iter().map(|mut outcome| outcome.try_recv().expect("answered")).collect();
    assert!(results[0].is_ok());
    assert!(matches!(&results[1], Err(StoreError::Conflict { expected: 7, found: 1, .. })), "{:?}", results[1]);
    assert!(matches!(&results[2], Err(StoreError::Exists(_))), "{:?}", results[2]);
    assert_eq!(results[3].as_ref().unwrap().events.len(), 3);
    let writer = store.pool.writer.lock().unwrap();
    let events: i64 = writer.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0)).unwrap();
    assert_eq!(events, 4, "the failed commits wrote nothing");
}

#[test]
fn a_commit_failing_halfway_through_its_writes_is_rolled_back_alone() {
    let store = SqliteStore::open_in_memory().unwrap();
    // An event this trigger refuses fails its commit after the task row was written:
    // the batch is run again with savepoints, and only that commit is undone.
    store
        .pool
        .writer
        .lock()
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.body = CAST('refused' AS BLOB) \
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
        )
        .unwrap();
    let refused = Commit { events: vec![(b"refused".to_vec().into(), false)], ..create("t2", 0) };
    let outcomes = enqueue(&store, vec![create("t1", 1), refused, create("t3", 2)]);
    store.pool.commit_queued();
    assert_eq!(store.pool.transactions.load(Ordering::Relaxed), 1);
    let results: Vec<_> = outcomes.into_iter().map(|mut outcome| outcome.try_recv().expect("answered")).collect();
    assert_eq!(results[0].as_ref().unwrap().events.len(), 1);
    assert!(
        matches!(&results[1], Err(StoreError::Backend(message)) if message.contains("refused by the test")),
        "{:?}",
        results[1]
    );
    assert_eq!(results[2].as_ref().unwrap().events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
    let writer = store.pool.writer.lock().unwrap();
    let ids: Vec<String> = writer
        .prepare("SELECT id FROM tasks ORDER BY id")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(ids, ["t1", "t3"], "the failed commit's task row was rolled back with it");
    let events: i64 = writer.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0)).unwrap();
    assert_eq!(events, 3);
}

#[test]
fn a_batch_is_at_most_max_batch_and_the_queue_is_emptied() {
    let store = SqliteStore::open_in_memory().unwrap();
    let outcomes = enqueue(&store, (0..MAX_BATCH + 3).map(|i| create(&format!("t{i}"), 1)).collect());
    store.pool.commit_queued();
    assert_eq!(store.pool.transactions.load(Ordering::Relaxed), 2);
    assert!(store.pool.queue().is_empty());
    for mut outcome in outcomes {
        outcome.try_recv().expect("answered").expect("committed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_through_the_store_are_all_durable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a2a.db");
    let store = SqliteStore::open(&path).unwrap();
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.commit(create(&format!("t{i}"), 1)).await })
        })
        .collect();
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(30), task).await.unwrap().unwrap().unwrap();
    }
    let transactions = store.pool.transactions.load(Ordering::Relaxed);
    assert!((1..=200).contains(&transactions), "{transactions}");
    drop(store);
    let reopened = SqliteStore::open(&path).unwrap();
    let page = reopened.list_tasks("", ListQuery { page_size: 1000, ..ListQuery::default() }).await.unwrap();
    assert_eq!(page.tasks.len(), 200);
}

#[tokio::test]
async fn dropping_the_last_clone_stops_the_committer_and_closes_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a2a.db");
    let store = SqliteStore::open(&path).unwrap();
    let clone = store.clone();
    clone.commit(create("t1", 1)).await.unwrap();
    drop(clone);
    // Another clone lives: the committer still takes commits.
    store.commit(create("t2", 1)).await.unwrap();
    let wal = dir.path().join("a2a.db-wal");
    assert!(wal.exists());
    drop(store);
    // SQLite removes the write-ahead log when its last connection closes: the committer
    // thread, which holds the writer, has ended by the time the drop returns.
    assert!(!wal.exists(), "the writer connection is still open");
    let reopened = SqliteStore::open(&path).unwrap();
    let page = reopened.list_tasks("", ListQuery { page_size: 10, ..ListQuery::default() }).await.unwrap();
    assert_eq!(page.tasks.len(), 2);
}

/// A commit creating task `id` whose body is `size` bytes, with one event.
fn large(id: &str, size: usize) -> Commit {
    let body = format!("{{\"pad\":\"{}\"}}", "x".repeat(size));
    Commit { task: TaskRecord { body: body.into_bytes().into(), ..record(id) }, ..create(id, 1) }
}

fn file_size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |metadata| metadata.len())
}

/// Limits small enough for a test to pass them many times over.
const SMALL: Limits = Limits { after: 256 << 10, idle: Duration::from_secs(3600) };

#[tokio::test]
async fn the_log_stays_bounded_under_a_stream_of_commits_and_the_writer_never_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a2a.db");
    let store = SqliteStore::open_with(&path, SMALL).unwrap();
    assert_eq!(pragma(&store.pool.writer.lock().unwrap(), "wal_autocheckpoint"), "0");
    let wal = dir.path().join("a2a.db-wal");
    let mut largest = 0;
    for i in 0..200 {
        store.commit(large(&format!("t{i}"), 64 << 10)).await.unwrap();
        largest = largest.max(file_size(&wal));
    }
    // 200 × 64 KiB = 12.5 MiB went through the log; it held `after` (256 KiB) and what
    // was committed during a checkpoint, then started again from its beginning.
    assert!(largest <= 4 << 20, "the log grew to {largest} bytes");
    let stats = store.pool.checkpoints.as_ref().unwrap().stats();
    assert!(stats.restarted > 0, "{stats:?}");
    assert_eq!(stats.last_error, None);
    // Everything but what the log holds was copied into the database file.
    assert!(file_size(&path) >= 200 * (64 << 10) - (2 << 20), "{} bytes", file_size(&path));
    drop(store);
    let reopened = SqliteStore::open(&path).unwrap();
    let page = reopened.list_tasks("", ListQuery { page_size: 1000, ..ListQuery::default() }).await.unwrap();
    assert_eq!(page.tasks.len(), 200);
    for task in &page.tasks {
        assert_eq!(task.body.len(), (64 << 10) + 10, "{:?}", task.key);
        assert_eq!(reopened.read_events(&task.key, 0, 10).await.unwrap().events.len(), 1);
    }
}

#[tokio::test]
async fn an_idle_store_truncates_its_log_and_goes_on_after() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a2a.db");
    let idle = Limits { idle: Duration::from_millis(20), ..SMALL };
    let store = SqliteStore::open_with(&path, idle).unwrap();
    let wal = dir.path().join("a2a.db-wal");
    for i in 0..3 {
        store.commit(large(&format!("t{i}"), 100 << 10)).await.unwrap();
    }
    assert!(file_size(&wal) > 0);
    let checkpoints = Arc::clone(store.pool.checkpoints.as_ref().unwrap());
    assert!(checkpoints.wait_for(Duration::from_secs(30), |stats| stats.truncated >= 1), "{:?}", checkpoints.stats());
    assert_eq!(file_size(&wal), 0, "the log file is cut to nothing");
    // The next commit starts a new log, and the next idle period cuts it again.
    store.commit(large("t3", 100 << 10)).await.unwrap();
    assert!(file_size(&wal) > 0);
    assert!(checkpoints.wait_for(Duration::from_secs(30), |stats| stats.truncated >= 2), "{:?}", checkpoints.stats());
    assert_eq!(file_size(&wal), 0);
    let page = store.list_tasks("", ListQuery { page_size: 10, ..ListQuery::default() }).await.unwrap();
    assert_eq!(page.tasks.len(), 4);
    assert_eq!(checkpoints.stats().last_error, None);
}

#[test]
fn an_in_memory_store_has_no_checkpointer() {
    let store = SqliteStore::open_in_memory().unwrap();
    assert!(store.pool.checkpoints.is_none());
}

/// Bodies large enough to be written in place (`tasks.rs`) read back as they were, on
/// create and on update, task and events, with large commits at once through the gate.
#[tokio::test]
async fn large_bodies_are_written_in_place_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("a2a.db")).unwrap();
    let body = |fill: char, size: usize| format!("{{\"pad\":\"{}\"}}", fill.to_string().repeat(size)).into_bytes();
    let key = TaskKey::new("", "big");
    let first = body('a', 300 << 10);
    let event = body('e', 200 << 10);
    let commit = Commit {
        task: TaskRecord { body: first.clone().into(), ..record("big") },
        events: vec![(event.clone().into(), false)],
        ..create("big", 0)
    };
    store.commit(commit).await.unwrap();
    assert_eq!(store.get_task(&key).await.unwrap().unwrap().body.bytes().unwrap(), first);
    // An update to a larger body, then one to a smaller: each row holds exactly its body.
    for (fill, size, version) in [('b', 2 << 20, 1), ('c', 100 << 10, 2)] {
        let next = body(fill, size);
        let commit = Commit {
            task: TaskRecord { body: next.clone().into(), ..record("big") },
            expected_version: Some(version),
            events: vec![(event.clone().into(), false)],
            push: false,
            lease: LeaseChange::Keep,
        };
        store.commit(commit).await.unwrap();
        assert_eq!(store.get_task(&key).await.unwrap().unwrap().body.bytes().unwrap(), next);
    }
    let page = store.read_events(&key, 0, 10).await.unwrap();
    assert_eq!(page.events.len(), 3);
    assert!(page.events.iter().all(|e| e.body.bytes().unwrap() == event));
    // Large commits of other tasks at once, more than the gate's room: all are stored.
    let commits = (0..6).map(|i| {
        let id = format!("many-{i}");
        let task = TaskRecord { body: body('m', 8 << 20).into(), ..record(&id) };
        store.commit(Commit { task, ..create(&id, 1) })
    });
    for done in futures::future::join_all(commits).await {
        done.unwrap();
    }
}

/// A large task still decoded is serialized by the committer straight into its row, on
/// create and on update, and reads back as its plain encoding.
#[tokio::test]
async fn a_large_decoded_task_is_streamed_into_its_row() {
    use crate::v1::{Message, Part, PartContent, Role, Task, TaskState, TaskStatus};
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("a2a.db")).unwrap();
    let key = TaskKey::new("", "streamed");
    let task_with = |text: &str| {
        let mut task = Task::new("streamed", TaskStatus::new(TaskState::Working));
        let part = Part::new(PartContent::Text(format!("{text}\"\n").repeat(LARGE_COMMIT / 8).into()));
        task.history.push(Message::new("m-1", Role::User, vec![part]));
        std::sync::Arc::new(task)
    };
    for (i, text) in ["first", "second, longer"].into_iter().enumerate() {
        let task = task_with(text);
        let body = TaskBody::from_task(task.clone());
        let commit = Commit {
            task: TaskRecord { body, ..record("streamed") },
            expected_version: (i > 0).then_some(i as u64),
            ..create("streamed", 1)
        };
        store.commit(commit).await.unwrap();
        let stored = store.get_task(&key).await.unwrap().unwrap().body.bytes().unwrap();
        assert_eq!(stored, serde_json::to_vec(&*task).unwrap());
    }
}
