//! The schema and its migrations.

use super::{backend, pg, StoreError};

/// The schema version this build writes; the advisory lock migrations run under
/// ("a2aschem" in ASCII), so that processes starting at once migrate one after the
/// other; and `MIGRATIONS[n]`, which takes the schema from version `n` to `n + 1`. All
/// generated from `rules/store/postgres/` (the Python store runs the same scripts). Key
/// columns are `COLLATE "C"`: byte-wise comparison, the order of the other stores (see
/// the module documentation). Version 2 gives a task that was SUBMITTED or WORKING when a
/// build without leases last wrote it a lease that has already expired, so the first
/// sweep ends it: upgrade every replica at once.
pub const SCHEMA_VERSION: i64 = store_schema::SCHEMA_VERSION;
use crate::generated::store_schema::postgres::{self as store_schema, MIGRATIONS, MIGRATION_LOCK};

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
