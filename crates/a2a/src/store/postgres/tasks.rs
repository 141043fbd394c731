//! Tasks and their event logs: reads, lists and replays (the commit is `commit.rs`).

use deadpool_postgres::Object;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use super::{limit_i64, pg, to_u64, EventPage, ListPage, ListQuery, StoreError, TaskKey, TaskRecord};
use crate::store::{EventRecord, TaskBody, TurnLease};

const TASK_COLUMNS: &str =
    "tenant, id, context_id, state, terminal, status_ts_ms, version, body, lease_owner, lease_until_ms";

pub(super) async fn get_task(client: &Object, key: &TaskKey) -> Result<Option<TaskRecord>, StoreError> {
    let select = client
        .prepare_cached(&format!("SELECT {TASK_COLUMNS} FROM a2a_tasks WHERE tenant = $1 AND id = $2"))
        .await
        .map_err(|e| pg("prepare task read", e))?;
    let row = client.query_opt(&select, &[&key.tenant, &key.id]).await.map_err(|e| pg("read task", e))?;
    row.as_ref().map(|row| task_record_at(row, 0)).transpose()
}

/// The count and the page in one statement, so both come from one snapshot.
pub(super) async fn list_tasks(client: &Object, tenant: &str, query: &ListQuery) -> Result<ListPage, StoreError> {
    let mut filter = String::from("tenant = $1");
    let mut params: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(tenant.to_owned())];
    if let Some(context_id) = &query.context_id {
        params.push(Box::new(context_id.clone()));
        filter.push_str(&format!(" AND context_id = ${}", params.len()));
    }
    if let Some(state) = &query.state {
        params.push(Box::new(state.clone()));
        filter.push_str(&format!(" AND state = ${}", params.len()));
    }
    if let Some(after_ms) = query.status_after_ms {
        params.push(Box::new(after_ms));
        filter.push_str(&format!(" AND status_ts_ms >= ${}", params.len()));
    }
    let count = format!("SELECT COUNT(*) AS total FROM a2a_tasks WHERE {filter}");
    let sql = if query.page_size == 0 {
        count
    } else {
        let mut page_filter = filter;
        if let Some((cursor_ts, cursor_id)) = &query.after {
            params.push(Box::new(*cursor_ts));
            params.push(Box::new(cursor_id.clone()));
            let (ts, id) = (params.len() - 1, params.len());
            page_filter.push_str(&format!(" AND (status_ts_ms, id) < (${ts}, ${id})"));
        }
        // One row more than the page tells whether a next page exists.
        params.push(Box::new(limit_i64(query.page_size).saturating_add(1)));
        format!(
            "SELECT c.total, p.* FROM ({count}) c LEFT JOIN LATERAL (SELECT {TASK_COLUMNS} FROM a2a_tasks \
             WHERE {page_filter} ORDER BY status_ts_ms DESC, id DESC LIMIT ${}) p ON TRUE \
             ORDER BY p.status_ts_ms DESC, p.id DESC",
            params.len()
        )
    };
    let select = client.prepare_cached(&sql).await.map_err(|e| pg("prepare task list", e))?;
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|param| &**param as &(dyn ToSql + Sync)).collect();
    let rows = client.query(&select, &refs).await.map_err(|e| pg("list tasks", e))?;

    let mut total = 0;
    let mut tasks = Vec::new();
    let mut more = false;
    for row in &rows {
        total = row.try_get::<_, i64>(0).map_err(|e| pg("count tasks", e))?;
        if query.page_size == 0 {
            break;
        }
        let id: Option<String> = row.try_get(2).map_err(|e| pg("list tasks", e))?;
        if id.is_none() {
            // The page is empty: the lateral join gave one row of NULLs.
            break;
        }
        if tasks.len() == query.page_size {
            more = true;
            break;
        }
        tasks.push(task_record_at(row, 1)?);
    }
    let next = match tasks.last() {
        Some(last) if more => Some((last.status_ts_ms, last.key.id.clone())),
        _ => None,
    };
    Ok(ListPage { tasks, total_size: to_u64(total, "count")?, next })
}

/// The task of a row whose [`TASK_COLUMNS`] start at column `first`.
fn task_record_at(row: &Row, first: usize) -> Result<TaskRecord, StoreError> {
    let read = |e| pg("read task", e);
    Ok(TaskRecord {
        key: TaskKey::new(
            row.try_get::<_, String>(first).map_err(read)?,
            row.try_get::<_, String>(first + 1).map_err(read)?,
        ),
        context_id: row.try_get(first + 2).map_err(read)?,
        state: row.try_get(first + 3).map_err(read)?,
        terminal: row.try_get(first + 4).map_err(read)?,
        status_ts_ms: row.try_get(first + 5).map_err(read)?,
        version: to_u64(row.try_get(first + 6).map_err(read)?, "version")?,
        body: TaskBody::from_bytes(row.try_get::<_, Vec<u8>>(first + 7).map_err(read)?),
        lease: {
            let owner: Option<String> = row.try_get(first + 8).map_err(read)?;
            let until_ms: Option<i64> = row.try_get(first + 9).map_err(read)?;
            until_ms.map(|until_ms| TurnLease { owner: owner.unwrap_or_default(), until_ms })
        },
    })
}

/// The task's last sequence number, the first event held and the page, in one
/// statement (one snapshot).
const READ_EVENTS: &str = "SELECT t.last_seq, \
         (SELECT MIN(seq) FROM a2a_events WHERE tenant = $1 AND task_id = $2), e.seq, e.body, e.last \
     FROM a2a_tasks t LEFT JOIN LATERAL (SELECT seq, body, last FROM a2a_events \
         WHERE tenant = t.tenant AND task_id = t.id AND seq > $3 ORDER BY seq LIMIT $4) e ON TRUE \
     WHERE t.tenant = $1 AND t.id = $2 ORDER BY e.seq";

pub(super) async fn read_events(
    client: &Object,
    key: &TaskKey,
    after: u64,
    limit: usize,
) -> Result<EventPage, StoreError> {
    let select = client.prepare_cached(READ_EVENTS).await.map_err(|e| pg("prepare event read", e))?;
    let after_sql = i64::try_from(after).unwrap_or(i64::MAX);
    let rows = client
        .query(&select, &[&key.tenant, &key.id, &after_sql, &limit_i64(limit)])
        .await
        .map_err(|e| pg("read events", e))?;
    let Some(first) = rows.first() else { return Err(StoreError::NotFound(key.clone())) };
    let read = |e| pg("read events", e);
    let last_written: i64 = first.try_get(0).map_err(read)?;
    let first_held: Option<i64> = first.try_get(1).map_err(read)?;
    let mut events = Vec::with_capacity(rows.len());
    for row in &rows {
        let seq: Option<i64> = row.try_get(2).map_err(read)?;
        let Some(seq) = seq else { break };
        events.push(EventRecord {
            seq: to_u64(seq, "sequence number")?,
            body: row.try_get::<_, Vec<u8>>(3).map_err(read)?.into(),
            last: row.try_get(4).map_err(read)?,
        });
    }
    Ok(EventPage {
        events,
        first_held: to_u64(first_held.unwrap_or(0), "sequence number")?,
        last_written: to_u64(last_written, "sequence number")?,
    })
}
