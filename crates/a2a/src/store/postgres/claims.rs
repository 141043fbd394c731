//! Push configs and the two claims: push deliveries (leased, retried, dead-lettered)
//! and idempotency keys.

use deadpool_postgres::Object;
use tokio_postgres::Row;

use super::{
    backend, limit_i64, pg, to_u64, DeadLetter, Delivery, IdempotencyClaim, PushConfigRecord, StoreError, TaskKey,
};

/// Inserts or replaces a config of a task that exists; no row written means no task.
const PUT_CONFIG: &str = "INSERT INTO a2a_push_configs (tenant, task_id, id, body) \
     SELECT $1::TEXT, $2::TEXT, $3::TEXT, $4::BYTEA WHERE EXISTS (SELECT 1 FROM a2a_tasks WHERE tenant = $1 AND id = $2) \
     ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body";

pub(super) async fn put_push_config(client: &Object, config: PushConfigRecord) -> Result<(), StoreError> {
    let put = client.prepare_cached(PUT_CONFIG).await.map_err(|e| pg("prepare push config write", e))?;
    let written = client
        .execute(&put, &[&config.task.tenant, &config.task.id, &config.id, &config.body])
        .await
        .map_err(|e| pg("write push config", e))?;
    if written == 0 {
        return Err(StoreError::NotFound(config.task));
    }
    Ok(())
}

pub(super) async fn get_push_config(
    client: &Object,
    task: TaskKey,
    id: String,
) -> Result<Option<PushConfigRecord>, StoreError> {
    let select = client
        .prepare_cached("SELECT body FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3")
        .await
        .map_err(|e| pg("prepare push config read", e))?;
    let row = client.query_opt(&select, &[&task.tenant, &task.id, &id]).await.map_err(|e| pg("read push config", e))?;
    let Some(row) = row else { return Ok(None) };
    let body = row.try_get(0).map_err(|e| pg("read push config", e))?;
    Ok(Some(PushConfigRecord { task, id, body }))
}

pub(super) async fn list_push_configs(
    client: &Object,
    task: &TaskKey,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<PushConfigRecord>, StoreError> {
    let select = client
        .prepare_cached(
            "SELECT id, body FROM a2a_push_configs \
             WHERE tenant = $1 AND task_id = $2 AND ($3::TEXT IS NULL OR id > $3) ORDER BY id LIMIT $4",
        )
        .await
        .map_err(|e| pg("prepare push config list", e))?;
    let rows = client
        .query(&select, &[&task.tenant, &task.id, &after, &limit_i64(limit)])
        .await
        .map_err(|e| pg("list push configs", e))?;
    rows.iter()
        .map(|row| {
            let read = |e| pg("list push configs", e);
            Ok(PushConfigRecord {
                task: task.clone(),
                id: row.try_get(0).map_err(read)?,
                body: row.try_get(1).map_err(read)?,
            })
        })
        .collect()
}

pub(super) async fn delete_push_config(client: &Object, task: &TaskKey, id: &str) -> Result<bool, StoreError> {
    let delete = client
        .prepare_cached("DELETE FROM a2a_push_configs WHERE tenant = $1 AND task_id = $2 AND id = $3")
        .await
        .map_err(|e| pg("prepare push config delete", e))?;
    let removed =
        client.execute(&delete, &[&task.tenant, &task.id, &id]).await.map_err(|e| pg("delete push config", e))?;
    Ok(removed > 0)
}

/// The due deliveries in queue order, locked; rows another claimer holds are skipped,
/// not waited for. A missing config or event comes back as NULL.
const CLAIM: &str = "SELECT o.id, o.tenant, o.task_id, o.config_id, o.seq, o.attempts, p.body, e.body \
     FROM a2a_outbox o \
     LEFT JOIN a2a_push_configs p ON p.tenant = o.tenant AND p.task_id = o.task_id AND p.id = o.config_id \
     LEFT JOIN a2a_events e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq \
     WHERE o.due_ms <= $1 AND o.lease_until_ms <= $1 \
     ORDER BY o.id LIMIT $2 FOR UPDATE OF o SKIP LOCKED";

pub(super) async fn claim_deliveries(
    client: &mut Object,
    now_ms: i64,
    lease_ms: i64,
    limit: usize,
) -> Result<Vec<Delivery>, StoreError> {
    let tx = client.transaction().await.map_err(|e| pg("begin claim", e))?;
    let select = tx.prepare_cached(CLAIM).await.map_err(|e| pg("prepare claim", e))?;
    let rows = tx.query(&select, &[&now_ms, &limit_i64(limit)]).await.map_err(|e| pg("find due deliveries", e))?;
    let mut claimed = Vec::with_capacity(rows.len());
    let mut orphaned: Vec<i64> = Vec::new();
    for row in &rows {
        let read = |e| pg("read delivery", e);
        let id: i64 = row.try_get(0).map_err(read)?;
        let config: Option<Vec<u8>> = row.try_get(6).map_err(read)?;
        let event: Option<Vec<u8>> = row.try_get(7).map_err(read)?;
        let (Some(config), Some(event)) = (config, event) else {
            // The config was deleted (or the event is gone) since it was queued.
            orphaned.push(id);
            continue;
        };
        claimed.push(Delivery {
            id,
            task: TaskKey::new(row.try_get::<_, String>(1).map_err(read)?, row.try_get::<_, String>(2).map_err(read)?),
            config_id: row.try_get(3).map_err(read)?,
            config,
            seq: to_u64(row.try_get(4).map_err(read)?, "sequence number")?,
            event,
            attempts: u32::try_from(row.try_get::<_, i64>(5).map_err(read)?).unwrap_or(u32::MAX),
        });
    }
    if !orphaned.is_empty() {
        let drop_rows = tx
            .prepare_cached("DELETE FROM a2a_outbox WHERE id = ANY($1)")
            .await
            .map_err(|e| pg("prepare delete", e))?;
        tx.execute(&drop_rows, &[&orphaned]).await.map_err(|e| pg("drop orphaned deliveries", e))?;
    }
    if !claimed.is_empty() {
        let ids: Vec<i64> = claimed.iter().map(|delivery| delivery.id).collect();
        let lease = tx
            .prepare_cached("UPDATE a2a_outbox SET lease_until_ms = $2 WHERE id = ANY($1)")
            .await
            .map_err(|e| pg("prepare lease", e))?;
        tx.execute(&lease, &[&ids, &now_ms.saturating_add(lease_ms)]).await.map_err(|e| pg("lease deliveries", e))?;
    }
    tx.commit().await.map_err(|e| pg("commit claim", e))?;
    Ok(claimed)
}

pub(super) async fn delivery_done(client: &Object, id: i64) -> Result<(), StoreError> {
    let delete =
        client.prepare_cached("DELETE FROM a2a_outbox WHERE id = $1").await.map_err(|e| pg("prepare delete", e))?;
    client.execute(&delete, &[&id]).await.map_err(|e| pg("delete delivery", e))?;
    Ok(())
}

pub(super) async fn delivery_retry(client: &Object, id: i64, retry_at_ms: i64, error: &str) -> Result<(), StoreError> {
    let update = client
        .prepare_cached(
            "UPDATE a2a_outbox SET attempts = attempts + 1, due_ms = $2, lease_until_ms = 0, last_error = $3 \
             WHERE id = $1",
        )
        .await
        .map_err(|e| pg("prepare retry", e))?;
    client.execute(&update, &[&id, &retry_at_ms, &error]).await.map_err(|e| pg("reschedule delivery", e))?;
    Ok(())
}

/// Moves an outbox row to the dead letters in one statement.
const DEAD: &str = "WITH gone AS (DELETE FROM a2a_outbox WHERE id = $1 RETURNING *) \
     INSERT INTO a2a_dead_letters \
         (delivery_id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms) \
     SELECT g.id, g.tenant, g.task_id, g.config_id, COALESCE(p.body, ''::BYTEA), g.seq, COALESCE(e.body, ''::BYTEA), \
         g.attempts + 1, $2::TEXT, $3::BIGINT \
     FROM gone g \
     LEFT JOIN a2a_push_configs p ON p.tenant = g.tenant AND p.task_id = g.task_id AND p.id = g.config_id \
     LEFT JOIN a2a_events e ON e.tenant = g.tenant AND e.task_id = g.task_id AND e.seq = g.seq";

pub(super) async fn delivery_dead(client: &Object, id: i64, at_ms: i64, error: &str) -> Result<(), StoreError> {
    let dead = client.prepare_cached(DEAD).await.map_err(|e| pg("prepare dead letter", e))?;
    client.execute(&dead, &[&id, &error, &at_ms]).await.map_err(|e| pg("move delivery to the dead letters", e))?;
    Ok(())
}

fn dead_letter(row: &Row) -> Result<DeadLetter, StoreError> {
    let read = |e| pg("read dead letters", e);
    Ok(DeadLetter {
        delivery: Delivery {
            id: row.try_get(0).map_err(read)?,
            task: TaskKey::new(row.try_get::<_, String>(1).map_err(read)?, row.try_get::<_, String>(2).map_err(read)?),
            config_id: row.try_get(3).map_err(read)?,
            config: row.try_get(4).map_err(read)?,
            seq: to_u64(row.try_get(5).map_err(read)?, "sequence number")?,
            event: row.try_get(6).map_err(read)?,
            attempts: u32::try_from(row.try_get::<_, i64>(7).map_err(read)?).unwrap_or(u32::MAX),
        },
        error: row.try_get(8).map_err(read)?,
        at_ms: row.try_get(9).map_err(read)?,
    })
}

pub(super) async fn dead_letters(client: &Object, limit: usize) -> Result<Vec<DeadLetter>, StoreError> {
    let select = client
        .prepare_cached(
            "SELECT delivery_id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms \
             FROM a2a_dead_letters ORDER BY id LIMIT $1",
        )
        .await
        .map_err(|e| pg("prepare dead letter read", e))?;
    let rows = client.query(&select, &[&limit_i64(limit)]).await.map_err(|e| pg("read dead letters", e))?;
    rows.iter().map(dead_letter).collect()
}

pub(super) async fn next_delivery_due(client: &Object) -> Result<Option<i64>, StoreError> {
    // A leased delivery comes back when its lease ends.
    let select = client
        .prepare_cached("SELECT MIN(GREATEST(due_ms, lease_until_ms)) FROM a2a_outbox")
        .await
        .map_err(|e| pg("prepare next due read", e))?;
    let row = client.query_one(&select, &[]).await.map_err(|e| pg("read next due delivery", e))?;
    row.try_get(0).map_err(|e| pg("read next due delivery", e))
}

/// How many times a claim retries when the key it found is released before it reads it.
const CLAIM_ATTEMPTS: usize = 16;

/// `INSERT … ON CONFLICT DO NOTHING` waits for a concurrent claimer of the same key and
/// then inserts nothing; the read that follows runs in a new snapshot, so it sees that
/// claim. If the key was released in between, the claim starts over.
pub(super) async fn claim_idempotency(
    client: &Object,
    tenant: &str,
    key: &str,
    fingerprint: &str,
    now_ms: i64,
) -> Result<IdempotencyClaim, StoreError> {
    let insert = client
        .prepare_cached(
            "INSERT INTO a2a_idempotency (tenant, key, fingerprint, result, created_ms) \
             VALUES ($1, $2, $3, NULL, $4) ON CONFLICT (tenant, key) DO NOTHING",
        )
        .await
        .map_err(|e| pg("prepare idempotency claim", e))?;
    let select = client
        .prepare_cached("SELECT fingerprint, result FROM a2a_idempotency WHERE tenant = $1 AND key = $2")
        .await
        .map_err(|e| pg("prepare idempotency read", e))?;
    for _ in 0..CLAIM_ATTEMPTS {
        let inserted = client
            .execute(&insert, &[&tenant, &key, &fingerprint, &now_ms])
            .await
            .map_err(|e| pg("claim idempotency key", e))?;
        if inserted == 1 {
            return Ok(IdempotencyClaim::Claimed);
        }
        let row = client.query_opt(&select, &[&tenant, &key]).await.map_err(|e| pg("read idempotency key", e))?;
        if let Some(row) = row {
            let read = |e| pg("read idempotency key", e);
            return Ok(IdempotencyClaim::Seen {
                fingerprint: row.try_get(0).map_err(read)?,
                result: row.try_get(1).map_err(read)?,
            });
        }
    }
    Err(backend("claim idempotency key", format_args!("{key:?} was claimed and released {CLAIM_ATTEMPTS} times over")))
}

pub(super) async fn complete_idempotency(
    client: &Object,
    tenant: &str,
    key: &str,
    result: &[u8],
) -> Result<(), StoreError> {
    let update = client
        .prepare_cached("UPDATE a2a_idempotency SET result = $3 WHERE tenant = $1 AND key = $2")
        .await
        .map_err(|e| pg("prepare idempotent result write", e))?;
    client.execute(&update, &[&tenant, &key, &result]).await.map_err(|e| pg("store idempotent result", e))?;
    Ok(())
}

pub(super) async fn release_idempotency(client: &Object, tenant: &str, key: &str) -> Result<(), StoreError> {
    let delete = client
        .prepare_cached("DELETE FROM a2a_idempotency WHERE tenant = $1 AND key = $2")
        .await
        .map_err(|e| pg("prepare idempotency release", e))?;
    client.execute(&delete, &[&tenant, &key]).await.map_err(|e| pg("release idempotency key", e))?;
    Ok(())
}
