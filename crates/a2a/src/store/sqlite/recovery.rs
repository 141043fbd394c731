//! Turn leases and retention: renewing, releasing and finding expired leases, and
//! deleting terminal tasks past their retention in bounded batches.
//!
//! Deleting a task deletes its events, push configs and queued deliveries through the
//! foreign keys. SQLite puts the freed pages on its free list and reuses them for later
//! writes, so under a steady load the file stops growing once the oldest tasks start to
//! expire (it does not shrink: that would take a `VACUUM`).

use super::*;

pub(super) fn renew_leases_tx(
    connection: &mut Connection,
    owner: &str,
    keys: &[TaskKey],
    until_ms: i64,
) -> Result<usize, StoreError> {
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| backend("begin lease renewal", e))?;
    let mut renewed = 0;
    {
        let mut renew = tx
            .prepare_cached(
                "UPDATE tasks SET lease_owner = ?3, lease_until_ms = ?4 \
                 WHERE tenant = ?1 AND id = ?2 AND terminal = 0",
            )
            .map_err(|e| backend("prepare lease renewal", e))?;
        for key in keys {
            renewed +=
                renew.execute(params![key.tenant, key.id, owner, until_ms]).map_err(|e| backend("renew lease", e))?;
        }
    }
    tx.commit().map_err(|e| backend("commit lease renewal", e))?;
    Ok(renewed)
}

pub(super) fn release_lease_tx(
    connection: &mut Connection,
    key: &TaskKey,
    owner: &str,
    expire: bool,
) -> Result<bool, StoreError> {
    let released = connection
        .execute(
            "UPDATE tasks SET lease_owner = CASE WHEN ?4 THEN lease_owner ELSE NULL END, \
             lease_until_ms = CASE WHEN ?4 THEN 0 ELSE NULL END \
             WHERE tenant = ?1 AND id = ?2 AND lease_owner = ?3 AND lease_until_ms IS NOT NULL",
            params![key.tenant, key.id, owner, expire],
        )
        .map_err(|e| backend("release lease", e))?;
    Ok(released > 0)
}

pub(super) fn expired_leases_read(
    connection: &mut Connection,
    now_ms: i64,
    limit: usize,
) -> Result<Vec<TaskKey>, StoreError> {
    let mut select = connection
        .prepare_cached(
            "SELECT tenant, id FROM tasks WHERE lease_until_ms IS NOT NULL AND lease_until_ms < ?1 \
             ORDER BY lease_until_ms LIMIT ?2",
        )
        .map_err(|e| backend("prepare expired lease query", e))?;
    let rows = select
        .query_map(params![now_ms, limit_i64(limit)], |row| {
            Ok(TaskKey::new(row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(|e| backend("find expired leases", e))?;
    rows.collect::<Result<_, _>>().map_err(|e| backend("find expired leases", e))
}

/// One transaction: a batch of each kind of row.
pub(super) fn purge_tx(connection: &mut Connection, before_ms: i64, limit: usize) -> Result<Purged, StoreError> {
    let tx =
        connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| backend("begin purge", e))?;
    let limit_sql = limit_i64(limit);
    let tasks = tx
        .execute(
            "DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks \
             WHERE terminal = 1 AND status_ts_ms < ?1 ORDER BY status_ts_ms LIMIT ?2)",
            params![before_ms, limit_sql],
        )
        .map_err(|e| backend("delete expired tasks", e))?;
    let idempotency_keys = tx
        .execute(
            "DELETE FROM idempotency WHERE rowid IN (SELECT rowid FROM idempotency \
             WHERE created_ms < ?1 ORDER BY created_ms LIMIT ?2)",
            params![before_ms, limit_sql],
        )
        .map_err(|e| backend("delete expired idempotency keys", e))?;
    let dead_letters = tx
        .execute(
            "DELETE FROM dead_letters WHERE id IN (SELECT id FROM dead_letters \
             WHERE at_ms < ?1 ORDER BY at_ms LIMIT ?2)",
            params![before_ms, limit_sql],
        )
        .map_err(|e| backend("delete expired dead letters", e))?;
    tx.commit().map_err(|e| backend("commit purge", e))?;
    Ok(Purged { tasks, idempotency_keys, dead_letters })
}
