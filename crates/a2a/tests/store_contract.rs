//! One contract suite for every `Store`: each test below is a function of the store, and
//! `contract!` runs it against the memory store, the SQLite store in memory, the SQLite
//! store on a file (which adds the reader connections) and, with the `postgres` feature,
//! the PostgreSQL store on a fresh database of a throwaway server (`support/postgres.rs`;
//! the PostgreSQL-only tests are in `store_postgres.rs`).
#![cfg(all(feature = "server", feature = "sqlite"))]

#[cfg(feature = "postgres")]
#[path = "support/postgres.rs"]
mod pg;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use agentproto_a2a::store::memory::{MemoryOptions, MemoryStore};
use agentproto_a2a::store::sqlite::SqliteStore;
use agentproto_a2a::store::{
    Commit, EventBody, IdempotencyClaim, LeaseChange, ListQuery, Purged, PushConfigRecord, Store, StoreError, TaskKey,
    TaskRecord, TurnLease,
};

/// Every wait of this suite is bounded by this.
const WAIT: Duration = Duration::from_secs(5);

/// A claim instant well after anything the tests queue.
const NOW: i64 = 1_000_000;

fn memory_store() -> (Arc<dyn Store>, Option<tempfile::TempDir>) {
    let options = MemoryOptions { ttl: None, capacity: 100_000, max_events_per_task: 100_000 };
    (Arc::new(MemoryStore::new(options)), None)
}

fn sqlite_memory_store() -> (Arc<dyn Store>, Option<tempfile::TempDir>) {
    (Arc::new(SqliteStore::open_in_memory().expect("open sqlite in memory")), None)
}

fn sqlite_file_store() -> (Arc<dyn Store>, Option<tempfile::TempDir>) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = SqliteStore::open(dir.path().join("a2a.db")).expect("open sqlite file");
    (Arc::new(store), Some(dir))
}

/// A PostgreSQL store on a fresh database; the database goes with the [`pg::TestDb`].
#[cfg(feature = "postgres")]
async fn postgres_store() -> (Arc<dyn Store>, pg::TestDb) {
    use agentproto_a2a::store::postgres::{PostgresOptions, PostgresStore};
    let cluster = tokio::task::spawn_blocking(pg::PgCluster::shared).await.expect("start PostgreSQL");
    let db = cluster.database().await;
    let store = PostgresStore::connect(&db.config, PostgresOptions::default()).await.expect("connect to PostgreSQL");
    (Arc::new(store), db)
}

macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                let (store, _dir) = super::memory_store();
                tokio::time::timeout(super::WAIT, super::$name(store)).await.expect("test timed out");
            })*
        }
        mod sqlite_memory {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                let (store, _dir) = super::sqlite_memory_store();
                tokio::time::timeout(super::WAIT, super::$name(store)).await.expect("test timed out");
            })*
        }
        mod sqlite_file {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                let (store, _dir) = super::sqlite_file_store();
                tokio::time::timeout(super::WAIT, super::$name(store)).await.expect("test timed out");
            })*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                // Starting the server and creating the database are outside the bound.
                let (store, _db) = super::postgres_store().await;
                tokio::time::timeout(super::WAIT, super::$name(store)).await.expect("test timed out");
            })*
        }
    };
}

contract!(
    create_stores_version_one_and_get_returns_it,
    create_of_an_existing_task_is_exists,
    update_with_a_stale_version_is_conflict,
    update_of_a_missing_task_is_not_found,
    events_get_consecutive_sequence_numbers_across_commits,
    read_events_pages_by_after_and_limit,
    read_events_of_an_unknown_task_is_not_found,
    list_orders_by_timestamp_then_id_descending_and_filters,
    list_pages_through_equal_timestamps_without_skipping_or_repeating,
    list_is_per_tenant,
    push_configs_are_put_replaced_listed_and_deleted,
    push_config_of_an_unknown_task_is_not_found,
    commit_with_push_queues_one_delivery_per_event_and_config,
    claimed_deliveries_are_hidden_until_the_lease_ends,
    retried_delivery_counts_attempts_and_is_due_again_later,
    done_delivery_is_gone,
    dead_delivery_moves_to_the_dead_letters,
    delivery_whose_config_was_deleted_is_dropped,
    idempotency_key_is_claimed_seen_completed_and_released,
    concurrent_idempotency_claims_have_one_winner,
    concurrent_commits_keep_sequence_numbers_strictly_increasing,
    commits_set_keep_and_clear_the_turn_lease,
    renewal_gives_a_lease_to_tasks_that_are_not_terminal,
    release_ends_only_the_owners_lease,
    expired_leases_are_listed_earliest_first,
    a_clear_expired_commit_is_refused_while_the_lease_is_live,
    purge_deletes_old_terminal_tasks_with_everything_of_theirs,
    decoded_events_read_back_and_are_delivered_as_their_encoding,
);

fn key(id: &str) -> TaskKey {
    TaskKey::new("", id)
}

fn task(id: &str, context_id: &str, state: &str, status_ts_ms: i64) -> TaskRecord {
    TaskRecord {
        key: key(id),
        context_id: context_id.into(),
        state: state.into(),
        terminal: state == "TASK_STATE_COMPLETED",
        status_ts_ms,
        version: 0,
        body: format!("{{\"id\":\"{id}\"}}").into_bytes().into(),
        lease: None,
    }
}

fn create(record: TaskRecord, events: &[&str]) -> Commit {
    Commit {
        task: record,
        expected_version: None,
        events: events.iter().map(|body| (body.as_bytes().to_vec().into(), false)).collect(),
        push: false,
        lease: LeaseChange::Keep,
    }
}

fn update(record: TaskRecord, expected: u64, events: &[&str], push: bool) -> Commit {
    Commit {
        task: record,
        expected_version: Some(expected),
        events: events.iter().map(|body| (body.as_bytes().to_vec().into(), false)).collect(),
        push,
        lease: LeaseChange::Keep,
    }
}

fn config(task_id: &str, id: &str, url: &str) -> PushConfigRecord {
    PushConfigRecord { task: key(task_id), id: id.into(), body: format!("{{\"url\":\"{url}\"}}").into_bytes() }
}

async fn create_stores_version_one_and_get_returns_it(store: Arc<dyn Store>) {
    let committed = store.commit(create(task("t1", "c1", "TASK_STATE_SUBMITTED", 10), &[])).await.unwrap();
    assert_eq!(committed.version, 1);
    assert!(committed.events.is_empty());
    let stored = store.get_task(&key("t1")).await.unwrap().expect("task stored");
    assert_eq!(stored, TaskRecord { version: 1, ..task("t1", "c1", "TASK_STATE_SUBMITTED", 10) });
    assert_eq!(store.get_task(&key("t2")).await.unwrap(), None);
    assert_eq!(store.get_task(&TaskKey::new("other", "t1")).await.unwrap(), None);
}

async fn create_of_an_existing_task_is_exists(store: Arc<dyn Store>) {
    store.commit(create(task("t1", "c1", "TASK_STATE_SUBMITTED", 10), &[])).await.unwrap();
    let error = store.commit(create(task("t1", "c1", "TASK_STATE_WORKING", 11), &["e"])).await.unwrap_err();
    assert!(matches!(&error, StoreError::Exists(k) if *k == key("t1")), "{error:?}");
    let stored = store.get_task(&key("t1")).await.unwrap().unwrap();
    assert_eq!((stored.version, stored.state.as_str()), (1, "TASK_STATE_SUBMITTED"));
    assert_eq!(store.read_events(&key("t1"), 0, 10).await.unwrap().last_written, 0);
}

async fn update_with_a_stale_version_is_conflict(store: Arc<dyn Store>) {
    store.commit(create(task("t1", "c1", "TASK_STATE_SUBMITTED", 10), &[])).await.unwrap();
    let committed = store.commit(update(task("t1", "c1", "TASK_STATE_WORKING", 11), 1, &["a"], false)).await.unwrap();
    assert_eq!(committed.version, 2);
    let error = store.commit(update(task("t1", "c1", "TASK_STATE_FAILED", 12), 1, &["b"], false)).await.unwrap_err();
    assert!(matches!(error, StoreError::Conflict { expected: 1, found: 2, .. }), "{error:?}");
    let page = store.read_events(&key("t1"), 0, 10).await.unwrap();
    assert_eq!(page.events.len(), 1, "the refused commit appended nothing");
}

async fn update_of_a_missing_task_is_not_found(store: Arc<dyn Store>) {
    let error = store.commit(update(task("t1", "c1", "TASK_STATE_WORKING", 11), 1, &[], false)).await.unwrap_err();
    assert!(matches!(&error, StoreError::NotFound(k) if *k == key("t1")), "{error:?}");
}

async fn events_get_consecutive_sequence_numbers_across_commits(store: Arc<dyn Store>) {
    let first = store.commit(create(task("t1", "c1", "TASK_STATE_SUBMITTED", 10), &["a", "b"])).await.unwrap();
    assert_eq!(first.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
    let mut last = task("t1", "c1", "TASK_STATE_COMPLETED", 12);
    last.body = b"done".to_vec().into();
    let commit = Commit {
        task: last,
        expected_version: Some(1),
        events: vec![(b"c".to_vec().into(), false), (b"d".to_vec().into(), true)],
        push: false,
        lease: LeaseChange::Keep,
    };
    let second = store.commit(commit).await.unwrap();
    assert_eq!(second.events.iter().map(|e| (e.seq, e.last)).collect::<Vec<_>>(), [(3, false), (4, true)]);
    let page = store.read_events(&key("t1"), 0, 10).await.unwrap();
    let read: Vec<_> = page.events.iter().map(|e| (e.seq, e.body.bytes().unwrap().to_vec(), e.last)).collect();
    assert_eq!(
        read,
        [(1, b"a".to_vec(), false), (2, b"b".to_vec(), false), (3, b"c".to_vec(), false), (4, b"d".to_vec(), true)]
    );
    assert_eq!((page.first_held, page.last_written), (1, 4));
}

async fn read_events_pages_by_after_and_limit(store: Arc<dyn Store>) {
    let bodies: Vec<String> = (1..=7).map(|n| format!("e{n}")).collect();
    let bodies: Vec<&str> = bodies.iter().map(String::as_str).collect();
    store.commit(create(task("t1", "c1", "TASK_STATE_WORKING", 10), &bodies)).await.unwrap();
    let page = store.read_events(&key("t1"), 2, 3).await.unwrap();
    assert_eq!(page.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [3, 4, 5]);
    assert_eq!((page.first_held, page.last_written), (1, 7));
    let page = store.read_events(&key("t1"), 5, 10).await.unwrap();
    assert_eq!(page.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [6, 7]);
    let page = store.read_events(&key("t1"), 7, 10).await.unwrap();
    assert!(page.events.is_empty());
    assert_eq!(page.last_written, 7);

    store.commit(create(task("t2", "c1", "TASK_STATE_SUBMITTED", 10), &[])).await.unwrap();
    let empty = store.read_events(&key("t2"), 0, 10).await.unwrap();
    assert_eq!((empty.events.len(), empty.first_held, empty.last_written), (0, 0, 0));
}

async fn read_events_of_an_unknown_task_is_not_found(store: Arc<dyn Store>) {
    let error = store.read_events(&key("nope"), 0, 10).await.unwrap_err();
    assert!(matches!(error, StoreError::NotFound(_)), "{error:?}");
}

async fn list_orders_by_timestamp_then_id_descending_and_filters(store: Arc<dyn Store>) {
    for (id, context_id, state, ts) in [
        ("a", "c1", "TASK_STATE_WORKING", 30),
        ("b", "c2", "TASK_STATE_COMPLETED", 20),
        ("c", "c1", "TASK_STATE_COMPLETED", 30),
        ("d", "c1", "TASK_STATE_WORKING", 10),
        ("e", "c2", "TASK_STATE_WORKING", 40),
    ] {
        store.commit(create(task(id, context_id, state, ts), &[])).await.unwrap();
    }
    let ids = |page: &agentproto_a2a::store::ListPage| page.tasks.iter().map(|t| t.key.id.clone()).collect::<Vec<_>>();

    let all = store.list_tasks("", ListQuery { page_size: 10, ..ListQuery::default() }).await.unwrap();
    assert_eq!(ids(&all), ["e", "c", "a", "b", "d"]);
    assert_eq!((all.total_size, all.next.clone()), (5, None));

    let query = ListQuery { context_id: Some("c1".into()), page_size: 2, ..ListQuery::default() };
    let first = store.list_tasks("", query.clone()).await.unwrap();
    assert_eq!(ids(&first), ["c", "a"]);
    assert_eq!(first.total_size, 3, "counted over the filter before paging");
    assert_eq!(first.next, Some((30, "a".to_string())));
    let second = store.list_tasks("", ListQuery { after: first.next.clone(), ..query }).await.unwrap();
    assert_eq!(ids(&second), ["d"]);
    assert_eq!((second.total_size, second.next), (3, None));

    let state = ListQuery { state: Some("TASK_STATE_WORKING".into()), page_size: 10, ..ListQuery::default() };
    assert_eq!(ids(&store.list_tasks("", state).await.unwrap()), ["e", "a", "d"]);
    let recent = ListQuery { status_after_ms: Some(30), page_size: 10, ..ListQuery::default() };
    let recent = store.list_tasks("", recent).await.unwrap();
    assert_eq!((ids(&recent), recent.total_size), (vec!["e".to_string(), "c".into(), "a".into()], 3));

    // A commit moves a task in the order.
    let stored = store.get_task(&key("d")).await.unwrap().unwrap();
    store.commit(update(task("d", "c1", "TASK_STATE_WORKING", 50), stored.version, &[], false)).await.unwrap();
    let all = store.list_tasks("", ListQuery { page_size: 10, ..ListQuery::default() }).await.unwrap();
    assert_eq!(ids(&all), ["d", "e", "c", "a", "b"]);
}

async fn list_pages_through_equal_timestamps_without_skipping_or_repeating(store: Arc<dyn Store>) {
    let mut expected = Vec::new();
    for n in 0..57 {
        // Most tasks share one timestamp; a few lie on either side of it.
        let ts = match n % 10 {
            0 => 500,
            9 => 1_500,
            _ => 1_000,
        };
        let id = format!("task-{n:03}");
        store.commit(create(task(&id, "ctx", "TASK_STATE_WORKING", ts), &[])).await.unwrap();
        expected.push((ts, id));
    }
    expected.sort_by(|a, b| b.cmp(a));
    let expected: Vec<String> = expected.into_iter().map(|(_, id)| id).collect();

    for page_size in [1, 5, 7, 56, 57, 100] {
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let query = ListQuery { page_size, after: after.clone(), ..ListQuery::default() };
            let page = store.list_tasks("", query).await.unwrap();
            assert_eq!(page.total_size, 57);
            assert!(page.tasks.len() <= page_size);
            seen.extend(page.tasks.iter().map(|t| t.key.id.clone()));
            match page.next {
                Some(next) => after = Some(next),
                None => break,
            }
            assert!(seen.len() <= 57, "pages repeat tasks");
        }
        assert_eq!(seen, expected, "page size {page_size}");
    }
}

async fn list_is_per_tenant(store: Arc<dyn Store>) {
    store.commit(create(task("t1", "c1", "TASK_STATE_WORKING", 10), &[])).await.unwrap();
    let mut other = task("t1", "c1", "TASK_STATE_WORKING", 10);
    other.key = TaskKey::new("acme", "t1");
    store.commit(create(other, &["x"])).await.unwrap();
    let page = store.list_tasks("acme", ListQuery { page_size: 10, ..ListQuery::default() }).await.unwrap();
    assert_eq!(page.tasks.iter().map(|t| t.key.clone()).collect::<Vec<_>>(), [TaskKey::new("acme", "t1")]);
    let none = store.list_tasks("nobody", ListQuery { page_size: 10, ..ListQuery::default() }).await.unwrap();
    assert_eq!((none.tasks.len(), none.total_size), (0, 0));
    assert_eq!(store.read_events(&key("t1"), 0, 10).await.unwrap().last_written, 0);
}

async fn push_configs_are_put_replaced_listed_and_deleted(store: Arc<dyn Store>) {
    store.commit(create(task("t1", "c1", "TASK_STATE_WORKING", 10), &[])).await.unwrap();
    for id in ["b", "a", "c"] {
        store.put_push_config(config("t1", id, "https://one.example")).await.unwrap();
    }
    store.put_push_config(config("t1", "b", "https://two.example")).await.unwrap();
    let got = store.get_push_config(&key("t1"), "b").await.unwrap().unwrap();
    assert_eq!(got, config("t1", "b", "https://two.example"));
    assert_eq!(store.get_push_config(&key("t1"), "z").await.unwrap(), None);

    let ids = |configs: Vec<PushConfigRecord>| configs.into_iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(ids(store.list_push_configs(&key("t1"), None, 10).await.unwrap()), ["a", "b", "c"]);
    assert_eq!(ids(store.list_push_configs(&key("t1"), None, 2).await.unwrap()), ["a", "b"]);
    assert_eq!(ids(store.list_push_configs(&key("t1"), Some("b"), 10).await.unwrap()), ["c"]);

    assert!(store.delete_push_config(&key("t1"), "a").await.unwrap());
    assert!(!store.delete_push_config(&key("t1"), "a").await.unwrap());
    assert_eq!(ids(store.list_push_configs(&key("t1"), None, 10).await.unwrap()), ["b", "c"]);
    assert!(store.list_push_configs(&key("t2"), None, 10).await.unwrap().is_empty());
}

async fn push_config_of_an_unknown_task_is_not_found(store: Arc<dyn Store>) {
    let error = store.put_push_config(config("nope", "a", "https://one.example")).await.unwrap_err();
    assert!(matches!(error, StoreError::NotFound(_)), "{error:?}");
}

async fn commit_with_push_queues_one_delivery_per_event_and_config(store: Arc<dyn Store>) {
    store.commit(create(task("t1", "c1", "TASK_STATE_SUBMITTED", 10), &[])).await.unwrap();
    store.put_push_config(config("t1", "a", "https://a.example")).await.unwrap();
    store.put_push_config(config("t1", "b", "https://b.example")).await.unwrap();
    assert_eq!(store.next_delivery_due().await.unwrap(), None);
    store.commit(update(task("t1", "c1", "TASK_STATE_WORKING", 11), 1, &["e1", "e2"], false)).await.unwrap();
    assert_eq!(store.next_delivery_due().await.unwrap(), None, "push: false queues nothing");
    store.commit(update(task("t1", "c1", "TASK_STATE_WORKING", 12), 2, &["e3", "e4"], true)).await.unwrap();
    assert!(store.next_delivery_due().await.unwrap().is_some_and(|due| due <= NOW));

    let claimed = store.claim_deliveries(NOW, 1_000, 10).await.unwrap();
    let mut got: Vec<_> = claimed
        .iter()
        .map(|d| (d.config_id.clone(), d.seq, String::from_utf8_lossy(&d.event).into_owned(), d.attempts))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("a".to_string(), 3, "e3".to_string(), 0),
            ("a".into(), 4, "e4".into(), 0),
            ("b".into(), 3, "e3".into(), 0),
            ("b".into(), 4, "e4".into(), 0),
        ]
    );
    let to_b = claimed.iter().find(|d| d.config_id == "b").unwrap();
    assert_eq!((to_b.task.clone(), to_b.config.clone()), (key("t1"), config("t1", "b", "https://b.example").body));
    let ids: BTreeSet<i64> = claimed.iter().map(|d| d.id).collect();
    assert_eq!(ids.len(), 4, "distinct delivery ids");
    // One config's deliveries come in event order.
    let to_a: Vec<u64> = claimed.iter().filter(|d| d.config_id == "a").map(|d| d.seq).collect();
    assert_eq!(to_a, [3, 4]);
}

async fn decoded_events_read_back_and_are_delivered_as_their_encoding(store: Arc<dyn Store>) {
    use agentproto_a2a::v1::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
    store.commit(create(task("t1", "c1", "TASK_STATE_SUBMITTED", 10), &[])).await.unwrap();
    store.put_push_config(config("t1", "a", "https://a.example")).await.unwrap();
    let event =
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent::new("t1", "c1", TaskStatus::new(TaskState::Working)));
    let encoded = serde_json::to_vec(&event).unwrap();
    let mut commit = update(task("t1", "c1", "TASK_STATE_WORKING", 11), 1, &[], true);
    commit.events = vec![(EventBody::from_event(event), false)];
    let committed = store.commit(commit).await.unwrap();
    assert_eq!(committed.events[0].body, encoded);
    let page = store.read_events(&key("t1"), 0, 10).await.unwrap();
    assert_eq!((page.events.len(), &page.events[0].body.bytes().unwrap()[..]), (1, &encoded[..]));
    let claimed = store.claim_deliveries(NOW, 1_000, 10).await.unwrap();
    assert_eq!(claimed.iter().map(|d| d.event.clone()).collect::<Vec<_>>(), [encoded]);
}

/// A task with one push config and `events` deliveries queued to it.
async fn queue_deliveries(store: &Arc<dyn Store>, events: &[&str]) {
    store.commit(create(task("t1", "c1", "TASK_STATE_SUBMITTED", 10), &[])).await.unwrap();
    store.put_push_config(config("t1", "a", "https://a.example")).await.unwrap();
    store.commit(update(task("t1", "c1", "TASK_STATE_WORKING", 11), 1, events, true)).await.unwrap();
}

async fn claimed_deliveries_are_hidden_until_the_lease_ends(store: Arc<dyn Store>) {
    queue_deliveries(&store, &["e1", "e2", "e3"]).await;
    let first = store.claim_deliveries(NOW, 1_000, 2).await.unwrap();
    assert_eq!(first.iter().map(|d| d.seq).collect::<Vec<_>>(), [1, 2]);
    let second = store.claim_deliveries(NOW, 1_000, 10).await.unwrap();
    assert_eq!(second.iter().map(|d| d.seq).collect::<Vec<_>>(), [3]);
    assert!(store.claim_deliveries(NOW + 999, 1_000, 10).await.unwrap().is_empty());
    assert_eq!(store.next_delivery_due().await.unwrap(), Some(NOW + 1_000), "due again when the lease ends");
    // A crashed worker's deliveries come back, not counted as attempts.
    let again = store.claim_deliveries(NOW + 1_000, 1_000, 10).await.unwrap();
    assert_eq!(again.iter().map(|d| (d.seq, d.attempts)).collect::<Vec<_>>(), [(1, 0), (2, 0), (3, 0)]);
}

async fn retried_delivery_counts_attempts_and_is_due_again_later(store: Arc<dyn Store>) {
    queue_deliveries(&store, &["e1"]).await;
    let claimed = store.claim_deliveries(NOW, 60_000, 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    store.delivery_retry(claimed[0].id, NOW + 100, "503 service unavailable").await.unwrap();
    assert_eq!(store.next_delivery_due().await.unwrap(), Some(NOW + 100));
    assert!(store.claim_deliveries(NOW + 99, 60_000, 10).await.unwrap().is_empty());
    let retried = store.claim_deliveries(NOW + 100, 60_000, 10).await.unwrap();
    assert_eq!(retried.iter().map(|d| (d.id, d.attempts)).collect::<Vec<_>>(), [(claimed[0].id, 1)]);
}

async fn done_delivery_is_gone(store: Arc<dyn Store>) {
    queue_deliveries(&store, &["e1"]).await;
    let claimed = store.claim_deliveries(NOW, 1_000, 10).await.unwrap();
    store.delivery_done(claimed[0].id).await.unwrap();
    assert_eq!(store.next_delivery_due().await.unwrap(), None);
    assert!(store.claim_deliveries(NOW + 10_000, 1_000, 10).await.unwrap().is_empty());
    store.delivery_done(claimed[0].id).await.unwrap();
}

async fn dead_delivery_moves_to_the_dead_letters(store: Arc<dyn Store>) {
    queue_deliveries(&store, &["e1", "e2"]).await;
    let claimed = store.claim_deliveries(NOW, 1_000, 10).await.unwrap();
    store.delivery_retry(claimed[0].id, NOW, "timeout").await.unwrap();
    let retried = store.claim_deliveries(NOW, 1_000, 10).await.unwrap();
    assert_eq!(retried.len(), 1);
    store.delivery_dead(retried[0].id, NOW + 5, "410 gone").await.unwrap();

    let dead = store.dead_letters(10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].error.as_str(), dead[0].at_ms), ("410 gone", NOW + 5));
    let delivery = &dead[0].delivery;
    assert_eq!((delivery.id, delivery.seq, delivery.event.as_slice()), (retried[0].id, 1, &b"e1"[..]));
    assert_eq!(delivery.attempts, 2, "every attempt made, the last one included");
    assert_eq!(delivery.config, config("t1", "a", "https://a.example").body);
    let rest = store.claim_deliveries(NOW + 10_000, 1_000, 10).await.unwrap();
    assert_eq!(rest.iter().map(|d| d.seq).collect::<Vec<_>>(), [2], "the dead one is no longer queued");
    assert!(store.dead_letters(0).await.unwrap().is_empty());
}

async fn delivery_whose_config_was_deleted_is_dropped(store: Arc<dyn Store>) {
    queue_deliveries(&store, &["e1", "e2"]).await;
    assert!(store.delete_push_config(&key("t1"), "a").await.unwrap());
    assert!(store.claim_deliveries(NOW, 1_000, 10).await.unwrap().is_empty());
    assert_eq!(store.next_delivery_due().await.unwrap(), None, "dropped, not just skipped");
}

async fn idempotency_key_is_claimed_seen_completed_and_released(store: Arc<dyn Store>) {
    assert_eq!(store.claim_idempotency("", "k1", "fp-1", NOW).await.unwrap(), IdempotencyClaim::Claimed);
    assert_eq!(
        store.claim_idempotency("", "k1", "fp-2", NOW).await.unwrap(),
        IdempotencyClaim::Seen { fingerprint: "fp-1".into(), result: None }
    );
    assert_eq!(store.claim_idempotency("acme", "k1", "fp-2", NOW).await.unwrap(), IdempotencyClaim::Claimed);
    store.complete_idempotency("", "k1", b"answer".to_vec()).await.unwrap();
    assert_eq!(
        store.claim_idempotency("", "k1", "fp-1", NOW).await.unwrap(),
        IdempotencyClaim::Seen { fingerprint: "fp-1".into(), result: Some(b"answer".to_vec()) }
    );
    store.release_idempotency("", "k1").await.unwrap();
    assert_eq!(store.claim_idempotency("", "k1", "fp-3", NOW).await.unwrap(), IdempotencyClaim::Claimed);
}

async fn concurrent_idempotency_claims_have_one_winner(store: Arc<dyn Store>) {
    let claims: Vec<_> = (0..16)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.claim_idempotency("", "shared", &format!("fp-{n}"), NOW).await })
        })
        .collect();
    let mut winners = Vec::new();
    let mut seen = BTreeSet::new();
    for (n, claim) in claims.into_iter().enumerate() {
        match claim.await.unwrap().unwrap() {
            IdempotencyClaim::Claimed => winners.push(format!("fp-{n}")),
            IdempotencyClaim::Seen { fingerprint, .. } => {
                seen.insert(fingerprint);
            }
        }
    }
    assert_eq!(winners.len(), 1);
    assert!(seen.iter().all(|fingerprint| *fingerprint == winners[0]), "{seen:?} vs {winners:?}");
}

async fn concurrent_commits_keep_sequence_numbers_strictly_increasing(store: Arc<dyn Store>) {
    store.commit(create(task("t1", "c1", "TASK_STATE_WORKING", 10), &[])).await.unwrap();
    const WRITERS: usize = 8;
    const COMMITS: usize = 25;
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut seqs = Vec::new();
                let mut done = 0;
                while done < COMMITS {
                    let current = store.get_task(&key("t1")).await.unwrap().unwrap();
                    let body = format!("w{writer}-{done}");
                    let commit = update(task("t1", "c1", "TASK_STATE_WORKING", 10), current.version, &[&body], false);
                    match store.commit(commit).await {
                        Ok(committed) => {
                            seqs.extend(committed.events.iter().map(|e| e.seq));
                            done += 1;
                        }
                        Err(StoreError::Conflict { .. }) => tokio::task::yield_now().await,
                        Err(other) => panic!("commit failed: {other}"),
                    }
                }
                seqs
            })
        })
        .collect();
    let mut all = Vec::new();
    for writer in writers {
        let seqs = writer.await.unwrap();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "one writer's commits get increasing numbers");
        all.extend(seqs);
    }
    all.sort_unstable();
    let total = (WRITERS * COMMITS) as u64;
    assert_eq!(all, (1..=total).collect::<Vec<_>>(), "no number given twice or skipped");
    let stored = store.get_task(&key("t1")).await.unwrap().unwrap();
    assert_eq!(stored.version, total + 1);
    let page = store.read_events(&key("t1"), 0, 1_000).await.unwrap();
    assert_eq!(page.events.iter().map(|e| e.seq).collect::<Vec<_>>(), (1..=total).collect::<Vec<_>>());
}

fn lease(owner: &str, until_ms: i64) -> TurnLease {
    TurnLease { owner: owner.into(), until_ms }
}

/// Creates a WORKING task `id` holding `lease` (if any).
async fn leased(store: &Arc<dyn Store>, id: &str, lease: Option<TurnLease>) {
    let mut commit = create(task(id, "c1", "TASK_STATE_WORKING", 10), &[]);
    commit.lease = lease.map_or(LeaseChange::Keep, LeaseChange::Set);
    store.commit(commit).await.unwrap();
}

async fn stored_lease(store: &Arc<dyn Store>, id: &str) -> Option<TurnLease> {
    store.get_task(&key(id)).await.unwrap().expect("task").lease
}

async fn commits_set_keep_and_clear_the_turn_lease(store: Arc<dyn Store>) {
    leased(&store, "t1", Some(lease("a", 100))).await;
    assert_eq!(stored_lease(&store, "t1").await, Some(lease("a", 100)));
    store.commit(update(task("t1", "c1", "TASK_STATE_WORKING", 11), 1, &["e"], false)).await.unwrap();
    assert_eq!(stored_lease(&store, "t1").await, Some(lease("a", 100)), "Keep keeps it");
    let mut set = update(task("t1", "c1", "TASK_STATE_WORKING", 12), 2, &[], false);
    set.lease = LeaseChange::Set(lease("b", 200));
    store.commit(set).await.unwrap();
    assert_eq!(stored_lease(&store, "t1").await, Some(lease("b", 200)));
    let mut clear = update(task("t1", "c1", "TASK_STATE_INPUT_REQUIRED", 13), 3, &[], false);
    clear.lease = LeaseChange::Clear;
    store.commit(clear).await.unwrap();
    let stored = store.get_task(&key("t1")).await.unwrap().unwrap();
    assert_eq!((stored.lease, stored.version), (None, 4));
    // The lease field of the record given is not what is stored.
    let mut ignored = create(task("t2", "c1", "TASK_STATE_WORKING", 10), &[]);
    ignored.task.lease = Some(lease("x", 1));
    store.commit(ignored).await.unwrap();
    assert_eq!(stored_lease(&store, "t2").await, None);
}

async fn renewal_gives_a_lease_to_tasks_that_are_not_terminal(store: Arc<dyn Store>) {
    leased(&store, "t1", Some(lease("a", 100))).await;
    leased(&store, "t2", None).await;
    store.commit(create(task("t3", "c1", "TASK_STATE_COMPLETED", 10), &[])).await.unwrap();
    let keys = vec![key("t1"), key("t2"), key("t3"), key("missing")];
    assert_eq!(store.renew_leases("b", keys, 500).await.unwrap(), 2);
    assert_eq!(stored_lease(&store, "t1").await, Some(lease("b", 500)));
    assert_eq!(stored_lease(&store, "t2").await, Some(lease("b", 500)));
    assert_eq!(stored_lease(&store, "t3").await, None, "a terminal task gets no lease");
    let t1 = store.get_task(&key("t1")).await.unwrap().unwrap();
    assert_eq!(t1.version, 1, "a renewal is not a commit");
    assert_eq!(store.renew_leases("b", Vec::new(), 500).await.unwrap(), 0);
}

async fn release_ends_only_the_owners_lease(store: Arc<dyn Store>) {
    leased(&store, "t1", Some(lease("a", 100))).await;
    assert!(!store.release_lease(&key("t1"), "b", false).await.unwrap());
    assert_eq!(stored_lease(&store, "t1").await, Some(lease("a", 100)));
    assert!(store.release_lease(&key("t1"), "a", true).await.unwrap());
    assert_eq!(stored_lease(&store, "t1").await, Some(lease("a", 0)), "expired, not removed");
    assert!(store.release_lease(&key("t1"), "a", false).await.unwrap());
    assert_eq!(stored_lease(&store, "t1").await, None);
    assert!(!store.release_lease(&key("t1"), "a", false).await.unwrap());
    assert!(!store.release_lease(&key("missing"), "a", false).await.unwrap());
    assert_eq!(store.get_task(&key("t1")).await.unwrap().unwrap().version, 1);
}

async fn expired_leases_are_listed_earliest_first(store: Arc<dyn Store>) {
    for (id, until) in [("t1", Some(300)), ("t2", Some(100)), ("t3", Some(200)), ("t4", None), ("t5", Some(1_000))] {
        leased(&store, id, until.map(|until| lease("a", until))).await;
    }
    assert_eq!(store.expired_leases(301, 10).await.unwrap(), [key("t2"), key("t3"), key("t1")]);
    assert_eq!(store.expired_leases(301, 2).await.unwrap(), [key("t2"), key("t3")]);
    assert!(store.expired_leases(100, 10).await.unwrap().is_empty(), "a deadline of now has not passed");
}

async fn a_clear_expired_commit_is_refused_while_the_lease_is_live(store: Arc<dyn Store>) {
    leased(&store, "t1", Some(lease("a", 500))).await;
    let sweep = |expected, before| {
        let mut commit = update(task("t1", "c1", "TASK_STATE_FAILED", 20), expected, &["failed"], false);
        commit.events[0].1 = true;
        commit.lease = LeaseChange::ClearExpired(before);
        commit
    };
    let refused = store.commit(sweep(1, 500)).await.unwrap_err();
    assert!(matches!(refused, StoreError::LeaseLive(_)), "{refused:?}");
    let stale = store.commit(sweep(7, 501)).await.unwrap_err();
    assert!(matches!(stale, StoreError::Conflict { .. }), "{stale:?}");
    let stored = store.get_task(&key("t1")).await.unwrap().unwrap();
    assert_eq!((stored.version, stored.state.as_str()), (1, "TASK_STATE_WORKING"), "nothing written");
    assert_eq!(store.read_events(&key("t1"), 0, 10).await.unwrap().last_written, 0);

    let swept = store.commit(sweep(1, 501)).await.unwrap();
    assert_eq!((swept.version, swept.events[0].seq), (2, 1));
    assert_eq!(stored_lease(&store, "t1").await, None);
    assert!(store.expired_leases(i64::MAX, 10).await.unwrap().is_empty());

    leased(&store, "t2", None).await;
    let mut unleased = update(task("t2", "c1", "TASK_STATE_FAILED", 20), 1, &[], false);
    unleased.lease = LeaseChange::ClearExpired(i64::MAX);
    let refused = store.commit(unleased).await.unwrap_err();
    assert!(matches!(refused, StoreError::LeaseLive(_)), "a task without a lease is not an orphan: {refused:?}");
}

async fn purge_deletes_old_terminal_tasks_with_everything_of_theirs(store: Arc<dyn Store>) {
    // An old terminal task with a log, a push config and a queued delivery.
    store.commit(create(task("old-1", "c1", "TASK_STATE_WORKING", 50), &["e1"])).await.unwrap();
    store.put_push_config(config("old-1", "a", "https://a.example")).await.unwrap();
    store.commit(update(task("old-1", "c1", "TASK_STATE_COMPLETED", 100), 1, &["e2"], true)).await.unwrap();
    store.commit(create(task("old-2", "c1", "TASK_STATE_COMPLETED", 200), &["e1"])).await.unwrap();
    store.commit(create(task("young", "c1", "TASK_STATE_COMPLETED", 5_000), &["e1"])).await.unwrap();
    store.commit(create(task("live", "c1", "TASK_STATE_WORKING", 10), &["e1"])).await.unwrap();
    // A dead letter recorded long ago, on the live task.
    store.put_push_config(config("live", "b", "https://b.example")).await.unwrap();
    store.commit(update(task("live", "c1", "TASK_STATE_WORKING", 10), 1, &["e2"], true)).await.unwrap();
    let live_delivery = store.claim_deliveries(NOW, 1_000, 10).await.unwrap();
    let live_delivery = live_delivery.iter().find(|d| d.task == key("live")).expect("the live task's delivery");
    store.delivery_dead(live_delivery.id, 100, "410 gone").await.unwrap();
    assert_eq!(store.claim_idempotency("", "old-key", "fp", 100).await.unwrap(), IdempotencyClaim::Claimed);
    assert_eq!(store.claim_idempotency("", "young-key", "fp", 5_000).await.unwrap(), IdempotencyClaim::Claimed);

    let first = store.purge(1_000, 1).await.unwrap();
    assert_eq!(first, Purged { tasks: 1, idempotency_keys: 1, dead_letters: 1 });
    assert!(first.full(1));
    assert_eq!(store.get_task(&key("old-1")).await.unwrap(), None, "the oldest goes first");
    assert!(store.get_task(&key("old-2")).await.unwrap().is_some());
    let second = store.purge(1_000, 10).await.unwrap();
    assert_eq!(second, Purged { tasks: 1, idempotency_keys: 0, dead_letters: 0 });
    assert!(!second.full(10));
    assert_eq!(store.purge(1_000, 10).await.unwrap(), Purged::default());

    for gone in ["old-1", "old-2"] {
        assert_eq!(store.get_task(&key(gone)).await.unwrap(), None);
        let error = store.read_events(&key(gone), 0, 10).await.unwrap_err();
        assert!(matches!(error, StoreError::NotFound(_)), "{error:?}");
        assert!(store.list_push_configs(&key(gone), None, 10).await.unwrap().is_empty());
    }
    assert!(store.claim_deliveries(NOW + 10_000, 1_000, 10).await.unwrap().is_empty(), "its delivery went too");
    let page = store.list_tasks("", ListQuery { page_size: 10, ..ListQuery::default() }).await.unwrap();
    let mut left: Vec<String> = page.tasks.iter().map(|t| t.key.id.clone()).collect();
    left.sort();
    assert_eq!(left, ["live", "young"], "active and young tasks are kept");
    assert_eq!(store.read_events(&key("live"), 0, 10).await.unwrap().events.len(), 2);
    assert!(store.dead_letters(10).await.unwrap().is_empty());
    assert_eq!(store.claim_idempotency("", "old-key", "fp", 6_000).await.unwrap(), IdempotencyClaim::Claimed);
    assert!(matches!(
        store.claim_idempotency("", "young-key", "fp", 6_000).await.unwrap(),
        IdempotencyClaim::Seen { .. }
    ));
}
