//! The two claims: push deliveries (leased, retried, dead-lettered) and idempotency keys.

use super::*;

pub(super) fn claim_tx(
    connection: &mut Connection,
    now_ms: i64,
    lease_ms: i64,
    limit: usize,
) -> Result<Vec<Delivery>, StoreError> {
    let tx =
        connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| backend("begin claim", e))?;
    let candidates: Vec<i64> = {
        // Insertion order: a task's deliveries to one config go out in event order.
        let mut select = tx
            .prepare_cached("SELECT id FROM outbox WHERE due_ms <= ?1 AND lease_until_ms <= ?1 ORDER BY id LIMIT ?2")
            .map_err(|e| backend("prepare claim", e))?;
        let rows = select
            .query_map(params![now_ms, limit_i64(limit)], |row| row.get(0))
            .map_err(|e| backend("find due deliveries", e))?;
        rows.collect::<Result<_, _>>().map_err(|e| backend("find due deliveries", e))?
    };
    let mut claimed = Vec::with_capacity(candidates.len());
    {
        let mut read = tx
            .prepare_cached(
                "SELECT o.tenant, o.task_id, o.config_id, o.seq, o.attempts, p.body, e.body \
                 FROM outbox o \
                 LEFT JOIN push_configs p ON p.tenant = o.tenant AND p.task_id = o.task_id AND p.id = o.config_id \
                 LEFT JOIN events e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq \
                 WHERE o.id = ?1",
            )
            .map_err(|e| backend("prepare delivery read", e))?;
        let mut lease = tx
            .prepare_cached("UPDATE outbox SET lease_until_ms = ?2 WHERE id = ?1")
            .map_err(|e| backend("prepare lease", e))?;
        let mut drop_row =
            tx.prepare_cached("DELETE FROM outbox WHERE id = ?1").map_err(|e| backend("prepare delete", e))?;
        for id in candidates {
            type Row = (String, String, String, i64, i64, Option<Vec<u8>>, Option<Vec<u8>>);
            let row: Row = read
                .query_row(params![id], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?))
                })
                .map_err(|e| backend("read delivery", e))?;
            let (tenant, task_id, config_id, seq, attempts, config, event) = row;
            let (Some(config), Some(event)) = (config, event) else {
                // The config was deleted (or the event pruned) since it was queued.
                drop_row.execute(params![id]).map_err(|e| backend("drop orphaned delivery", e))?;
                continue;
            };
            lease.execute(params![id, now_ms.saturating_add(lease_ms)]).map_err(|e| backend("lease delivery", e))?;
            claimed.push(Delivery {
                id,
                task: TaskKey::new(tenant, task_id),
                config_id,
                config,
                seq: to_u64(seq, "sequence number")?,
                event,
                attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
            });
        }
    }
    tx.commit().map_err(|e| backend("commit claim", e))?;
    Ok(claimed)
}

pub(super) fn dead_tx(connection: &mut Connection, id: i64, at_ms: i64, error: &str) -> Result<(), StoreError> {
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| backend("begin dead letter", e))?;
    tx.execute(
        "INSERT INTO dead_letters (delivery_id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms) \
         SELECT o.id, o.tenant, o.task_id, o.config_id, COALESCE(p.body, X''), o.seq, COALESCE(e.body, X''), \
                o.attempts + 1, ?2, ?3 \
         FROM outbox o \
         LEFT JOIN push_configs p ON p.tenant = o.tenant AND p.task_id = o.task_id AND p.id = o.config_id \
         LEFT JOIN events e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq \
         WHERE o.id = ?1",
        params![id, error, at_ms],
    )
    .map_err(|e| backend("insert dead letter", e))?;
    tx.execute("DELETE FROM outbox WHERE id = ?1", params![id]).map_err(|e| backend("delete delivery", e))?;
    tx.commit().map_err(|e| backend("commit dead letter", e))
}

pub(super) fn dead_letters_read(connection: &mut Connection, limit: usize) -> Result<Vec<DeadLetter>, StoreError> {
    let mut select = connection
        .prepare_cached(
            "SELECT delivery_id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms \
             FROM dead_letters ORDER BY id LIMIT ?1",
        )
        .map_err(|e| backend("prepare dead letter read", e))?;
    type Row = (i64, String, String, String, Vec<u8>, i64, Vec<u8>, i64, String, i64);
    let rows = select
        .query_map(params![limit_i64(limit)], |row| -> rusqlite::Result<Row> {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
                row.get(7)?,
                row.get(8)?,
                row.get(9)?,
            ))
        })
        .map_err(|e| backend("read dead letters", e))?;
    let mut letters = Vec::new();
    for row in rows {
        let (id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms) =
            row.map_err(|e| backend("read dead letters", e))?;
        letters.push(DeadLetter {
            delivery: Delivery {
                id,
                task: TaskKey::new(tenant, task_id),
                config_id,
                config,
                seq: to_u64(seq, "sequence number")?,
                event,
                attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
            },
            error,
            at_ms,
        });
    }
    Ok(letters)
}

pub(super) fn claim_idempotency_tx(
    connection: &mut Connection,
    tenant: &str,
    key: &str,
    fingerprint: &str,
    now_ms: i64,
) -> Result<IdempotencyClaim, StoreError> {
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| backend("begin idempotency claim", e))?;
    let inserted = tx
        .execute(
            "INSERT INTO idempotency (tenant, key, fingerprint, result, created_ms) VALUES (?1, ?2, ?3, NULL, ?4) \
             ON CONFLICT (tenant, key) DO NOTHING",
            params![tenant, key, fingerprint, now_ms],
        )
        .map_err(|e| backend("claim idempotency key", e))?;
    let claim = if inserted == 1 {
        IdempotencyClaim::Claimed
    } else {
        let (fingerprint, result) = tx
            .query_row(
                "SELECT fingerprint, result FROM idempotency WHERE tenant = ?1 AND key = ?2",
                params![tenant, key],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(|e| backend("read idempotency key", e))?;
        IdempotencyClaim::Seen { fingerprint, result }
    };
    tx.commit().map_err(|e| backend("commit idempotency claim", e))?;
    Ok(claim)
}
