//! Turn leases and retention: renewing, releasing and finding expired leases, and
//! deleting terminal tasks past their retention in bounded batches.
//!
//! Several replicas purge at once without waiting on each other: each batch takes its
//! rows with `FOR UPDATE SKIP LOCKED`. Deleting a task deletes its events, push configs
//! and queued deliveries through the foreign keys.

use deadpool_postgres::Object;

use super::{limit_i64, pg, Purged, StoreError, TaskKey};

/// One statement for every key: the rows of `$3`/`$4` (tenants, ids) not terminal. The
/// rows are locked in key order first, as every commit batch locks them: an update
/// joined straight to the keys would lock them in whatever order the join yields and
/// could deadlock with a batch.
const RENEW: &str = "WITH locked AS (SELECT t.tenant, t.id FROM a2a_tasks t \
         JOIN UNNEST($3::TEXT[], $4::TEXT[]) AS k (tenant, id) ON t.tenant = k.tenant AND t.id = k.id \
         WHERE NOT t.terminal ORDER BY t.tenant, t.id FOR UPDATE OF t) \
     UPDATE a2a_tasks t SET lease_owner = $1, lease_until_ms = $2 \
     FROM locked l WHERE t.tenant = l.tenant AND t.id = l.id";

const RELEASE: &str = "UPDATE a2a_tasks SET lease_owner = CASE WHEN $4 THEN lease_owner ELSE NULL END, \
     lease_until_ms = CASE WHEN $4 THEN 0 ELSE NULL END \
     WHERE tenant = $1 AND id = $2 AND lease_owner = $3 AND lease_until_ms IS NOT NULL";

const EXPIRED: &str = "SELECT tenant, id FROM a2a_tasks \
     WHERE lease_until_ms IS NOT NULL AND lease_until_ms < $1 ORDER BY lease_until_ms LIMIT $2";

const PURGE_TASKS: &str = "WITH doomed AS (SELECT tenant, id FROM a2a_tasks \
         WHERE terminal AND status_ts_ms < $1 ORDER BY status_ts_ms LIMIT $2 FOR UPDATE SKIP LOCKED) \
     DELETE FROM a2a_tasks t USING doomed d WHERE t.tenant = d.tenant AND t.id = d.id";

const PURGE_IDEMPOTENCY: &str = "WITH doomed AS (SELECT tenant, key FROM a2a_idempotency \
         WHERE created_ms < $1 ORDER BY created_ms LIMIT $2 FOR UPDATE SKIP LOCKED) \
     DELETE FROM a2a_idempotency i USING doomed d WHERE i.tenant = d.tenant AND i.key = d.key";

const PURGE_DEAD_LETTERS: &str = "WITH doomed AS (SELECT id FROM a2a_dead_letters \
         WHERE at_ms < $1 ORDER BY at_ms LIMIT $2 FOR UPDATE SKIP LOCKED) \
     DELETE FROM a2a_dead_letters l USING doomed d WHERE l.id = d.id";

pub(super) async fn renew_leases(
    client: &Object,
    owner: &str,
    keys: &[TaskKey],
    until_ms: i64,
) -> Result<usize, StoreError> {
    if keys.is_empty() {
        return Ok(0);
    }
    let tenants: Vec<&str> = keys.iter().map(|key| key.tenant.as_str()).collect();
    let ids: Vec<&str> = keys.iter().map(|key| key.id.as_str()).collect();
    let renew = client.prepare_cached(RENEW).await.map_err(|e| pg("prepare lease renewal", e))?;
    let renewed =
        client.execute(&renew, &[&owner, &until_ms, &tenants, &ids]).await.map_err(|e| pg("renew leases", e))?;
    Ok(usize::try_from(renewed).unwrap_or(usize::MAX))
}

pub(super) async fn release_lease(
    client: &Object,
    key: &TaskKey,
    owner: &str,
    expire: bool,
) -> Result<bool, StoreError> {
    let release = client.prepare_cached(RELEASE).await.map_err(|e| pg("prepare lease release", e))?;
    let released =
        client.execute(&release, &[&key.tenant, &key.id, &owner, &expire]).await.map_err(|e| pg("release lease", e))?;
    Ok(released > 0)
}

pub(super) async fn expired_leases(client: &Object, now_ms: i64, limit: usize) -> Result<Vec<TaskKey>, StoreError> {
    let select = client.prepare_cached(EXPIRED).await.map_err(|e| pg("prepare expired lease query", e))?;
    let rows = client.query(&select, &[&now_ms, &limit_i64(limit)]).await.map_err(|e| pg("find expired leases", e))?;
    rows.iter()
        .map(|row| {
            let read = |e| pg("find expired leases", e);
            Ok(TaskKey::new(row.try_get::<_, String>(0).map_err(read)?, row.try_get::<_, String>(1).map_err(read)?))
        })
        .collect()
}

/// Three statements, each its own transaction: a batch of each kind of row.
pub(super) async fn purge(client: &Object, before_ms: i64, limit: usize) -> Result<Purged, StoreError> {
    let limit_sql = limit_i64(limit);
    let mut counts = [0usize; 3];
    for (count, (sql, what)) in counts.iter_mut().zip([
        (PURGE_TASKS, "delete expired tasks"),
        (PURGE_IDEMPOTENCY, "delete expired idempotency keys"),
        (PURGE_DEAD_LETTERS, "delete expired dead letters"),
    ]) {
        let statement = client.prepare_cached(sql).await.map_err(|e| pg(what, e))?;
        let deleted = client.execute(&statement, &[&before_ms, &limit_sql]).await.map_err(|e| pg(what, e))?;
        *count = usize::try_from(deleted).unwrap_or(usize::MAX);
    }
    let [tasks, idempotency_keys, dead_letters] = counts;
    Ok(Purged { tasks, idempotency_keys, dead_letters })
}
