//! The schema and its migrations.

use super::{backend, pg, StoreError};

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = 2;

/// The advisory lock migrations run under ("a2aschem" in ASCII), so that processes
/// starting at once migrate one after the other.
const MIGRATION_LOCK: i64 = 0x6132_6173_6368_656d;

/// `MIGRATIONS[n]` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [SCHEMA_V1, SCHEMA_V2];

/// Version 1. Key columns are `COLLATE "C"`: byte-wise comparison, the order of the
/// other stores (see the module documentation).
const SCHEMA_V1: &str = r#"
CREATE TABLE a2a_tasks (
    tenant TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    context_id TEXT COLLATE "C" NOT NULL,
    state TEXT COLLATE "C" NOT NULL,
    terminal BOOLEAN NOT NULL,
    status_ts_ms BIGINT NOT NULL,
    version BIGINT NOT NULL,
    last_seq BIGINT NOT NULL DEFAULT 0,
    body BYTEA NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX a2a_tasks_by_status_ts ON a2a_tasks (tenant, status_ts_ms DESC, id DESC);
CREATE INDEX a2a_tasks_by_context ON a2a_tasks (tenant, context_id, status_ts_ms DESC, id DESC);
CREATE TABLE a2a_events (
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    body BYTEA NOT NULL,
    last BOOLEAN NOT NULL,
    PRIMARY KEY (tenant, task_id, seq),
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE a2a_push_configs (
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    body BYTEA NOT NULL,
    PRIMARY KEY (tenant, task_id, id),
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE TABLE a2a_outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    config_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    due_ms BIGINT NOT NULL,
    lease_until_ms BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    FOREIGN KEY (tenant, task_id) REFERENCES a2a_tasks (tenant, id) ON DELETE CASCADE
);
CREATE INDEX a2a_outbox_by_due ON a2a_outbox (due_ms);
CREATE INDEX a2a_outbox_by_task ON a2a_outbox (tenant, task_id);
CREATE TABLE a2a_dead_letters (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id BIGINT NOT NULL,
    tenant TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    config_id TEXT COLLATE "C" NOT NULL,
    config BYTEA NOT NULL,
    seq BIGINT NOT NULL,
    event BYTEA NOT NULL,
    attempts BIGINT NOT NULL,
    error TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);
CREATE TABLE a2a_idempotency (
    tenant TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT NOT NULL,
    result BYTEA,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant, key)
);
"#;

/// Version 2: turn leases, and the indexes retention deletes by. A task that was
/// SUBMITTED or WORKING when a build without leases last wrote it had a turn running
/// then, which nothing runs now once every replica runs this build: it gets a lease that
/// has already expired (owner `''`), so the first sweep ends it. Upgrade every replica
/// at once (a replica of the old build still running a turn would see it failed).
const SCHEMA_V2: &str = r#"
ALTER TABLE a2a_tasks ADD COLUMN lease_owner TEXT COLLATE "C", ADD COLUMN lease_until_ms BIGINT;
UPDATE a2a_tasks SET lease_owner = '', lease_until_ms = 0
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
CREATE INDEX a2a_tasks_by_lease ON a2a_tasks (lease_until_ms) WHERE lease_until_ms IS NOT NULL;
CREATE INDEX a2a_tasks_terminal_by_age ON a2a_tasks (status_ts_ms) WHERE terminal;
CREATE INDEX a2a_idempotency_by_age ON a2a_idempotency (created_ms);
CREATE INDEX a2a_dead_letters_by_age ON a2a_dead_letters (at_ms);
"#;

/// Brings the database to [`SCHEMA_VERSION`] in one transaction: a failure halfway
/// leaves it as it was.
pub(super) async fn migrate(client: &mut deadpool_postgres::Object) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(|e| pg("begin migration", e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| pg("take the migration lock", e))?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS a2a_schema (version BIGINT NOT NULL)")
        .await
        .map_err(|e| pg("create the schema version table", e))?;
    let found: Option<i64> = tx
        .query_opt("SELECT version FROM a2a_schema", &[])
        .await
        .map_err(|e| pg("read the schema version", e))?
        .map(|row| row.try_get(0))
        .transpose()
        .map_err(|e| pg("read the schema version", e))?;
    let from = found.unwrap_or(0);
    if from > SCHEMA_VERSION {
        return Err(backend(
            "open",
            format_args!("schema version {from} is newer than this build's ({SCHEMA_VERSION})"),
        ));
    }
    if from < 0 {
        return Err(backend("open", format_args!("schema version {from} is not a version")));
    }
    if from == SCHEMA_VERSION {
        return Ok(());
    }
    for (step, script) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        tx.batch_execute(script).await.map_err(|e| pg(&format!("migrate to schema version {}", step + 1), e))?;
    }
    let written = if found.is_some() {
        tx.execute("UPDATE a2a_schema SET version = $1", &[&SCHEMA_VERSION]).await
    } else {
        tx.execute("INSERT INTO a2a_schema (version) VALUES ($1)", &[&SCHEMA_VERSION]).await
    };
    written.map_err(|e| pg("write the schema version", e))?;
    tx.commit().await.map_err(|e| pg("commit migration", e))
}
