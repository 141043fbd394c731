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
        body: b"{}".to_vec(),
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
fn open_creates_schema_1_in_wal_mode_with_full_sync() {
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
            events: vec![(b"e1".to_vec(), false), (b"e2".to_vec(), true)],
            push: false,
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
