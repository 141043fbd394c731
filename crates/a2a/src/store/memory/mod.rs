//! The in-memory store: bounded, for tests, demos and servers that may lose their tasks
//! on restart.
//!
//! Everything lives behind one [`std::sync::Mutex`] that is never held across an
//! `await`; every future the store returns is already complete when it is first polled.
//!
//! The store is bounded three ways (see [`MemoryOptions`]):
//! - terminal tasks whose status timestamp is older than `ttl` are evicted;
//! - when more than `capacity` tasks are held, the oldest terminal tasks are evicted;
//!   active and interrupted tasks are never evicted, so a store full of live tasks grows
//!   past its capacity rather than lose one;
//! - each task's log keeps its most recent `max_events_per_task` events, so a reader
//!   that falls behind sees a gap ([`EventPage::first_held`] greater than `after + 1`).
//!
//! Evicting a task removes its events, push configs and queued deliveries. Eviction runs
//! on every commit (it only looks at the oldest terminal tasks, so it costs little unless
//! something is due) and whenever [`MemoryStore::evict_expired`] is called.
//!
//! Turn leases and [`Store::purge`] work as in the durable stores, so the server's
//! recovery and retention run the same code on every store; nothing outlives the
//! process here anyway.

use std::collections::hash_map::Entry as Slot;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

// Randomly seeded, and much cheaper than SipHash for the short string keys hashed on
// every commit.
use foldhash::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::commit::{check, Checked, Stored};
use super::{
    BoxFuture, Commit, Committed, DeadLetter, Delivery, EventBody, EventPage, EventRecord, IdempotencyClaim,
    LeaseChange, ListPage, ListQuery, Purged, PushConfigRecord, Store, StoreError, TaskKey, TaskRecord, TurnLease,
};

/// The bounds of a [`MemoryStore`].
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryOptions {
    /// Terminal tasks whose status timestamp is older than this are evicted; `None` keeps
    /// them until `capacity` forces them out. Idempotency keys older than this (by the
    /// instant they were claimed) are forgotten too.
    pub ttl: Option<Duration>,
    /// The number of tasks held before the oldest terminal ones are evicted. Also bounds
    /// the idempotency keys and the dead letters kept.
    pub capacity: usize,
    /// The number of most recent events kept per task (at least one is always kept).
    pub max_events_per_task: usize,
}

impl Default for MemoryOptions {
    /// No TTL, 10,000 tasks, 1,000 events per task.
    fn default() -> Self {
        MemoryOptions { ttl: None, capacity: 10_000, max_events_per_task: 1_000 }
    }
}

/// A bounded store that keeps everything in process memory.
#[derive(Debug)]
pub struct MemoryStore {
    options: MemoryOptions,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    tasks: HashMap<TaskKey, Entry>,
    /// Per tenant, `(status_ts_ms, id)` of every task: the list order, walked backwards.
    by_tenant: HashMap<String, BTreeSet<(i64, String)>>,
    /// `(status_ts_ms, key)` of the terminal tasks, oldest first: the eviction order.
    terminal: BTreeSet<(i64, TaskKey)>,
    push_configs: HashMap<TaskKey, BTreeMap<String, Vec<u8>>>,
    outbox: BTreeMap<i64, Queued>,
    /// The outbox ids of each task, so that evicting a task finds its deliveries.
    outbox_by_task: HashMap<TaskKey, BTreeSet<i64>>,
    next_delivery_id: i64,
    dead_letters: VecDeque<DeadLetter>,
    idempotency: HashMap<(String, String), Idempotency>,
    /// `(created_ms, tenant, key)` of every idempotency key, oldest first.
    idempotency_order: BTreeSet<(i64, String, String)>,
}

#[derive(Debug)]
struct Entry {
    record: TaskRecord,
    events: VecDeque<EventRecord>,
    last_seq: u64,
}

#[derive(Debug)]
struct Queued {
    task: TaskKey,
    config_id: String,
    seq: u64,
    /// The event, shared with the log (which may drop it before the delivery is made);
    /// encoded when first claimed.
    event: EventBody,
    attempts: u32,
    due_ms: i64,
    lease_until_ms: i64,
}

#[derive(Debug)]
struct Idempotency {
    fingerprint: String,
    result: Option<Vec<u8>>,
    created_ms: i64,
}

/// Milliseconds since the Unix epoch by the system clock (0 if the clock is before it).
fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)).unwrap_or(0)
}

fn duration_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl MemoryStore {
    /// An empty store with these bounds.
    pub fn new(options: MemoryOptions) -> Self {
        MemoryStore { options, state: Mutex::new(State::default()) }
    }

    /// Evicts the terminal tasks older than the TTL at `now_ms` (and the idempotency keys
    /// claimed before then), then the oldest terminal tasks beyond the capacity. Returns
    /// the number of tasks evicted.
    pub fn evict_expired(&self, now_ms: i64) -> Result<usize, StoreError> {
        let mut state = self.lock()?;
        Ok(state.evict(&self.options, now_ms, None))
    }

    /// The number of tasks held.
    pub fn task_count(&self) -> Result<usize, StoreError> {
        Ok(self.lock()?.tasks.len())
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, StoreError> {
        self.state.lock().map_err(|_| StoreError::Backend("memory store lock poisoned".into()))
    }

    fn commit_at(&self, commit: Commit, now_ms: i64) -> Result<Committed, StoreError> {
        let mut guard = self.lock()?;
        let state = &mut *guard;
        let key = commit.task.key.clone();
        let stored = state.tasks.get(&key).map(|entry| Stored {
            version: entry.record.version,
            last_seq: entry.last_seq,
            lease_until_ms: entry.record.lease.as_ref().map(|lease| lease.until_ms),
        });
        let checked = check(&commit, stored)?;
        let Checked { version, last_seq, .. } = checked;

        let mut record = commit.task;
        record.version = version;
        let (ts, terminal) = (record.status_ts_ms, record.terminal);
        let mut appended = Vec::with_capacity(commit.events.len());
        for (offset, (body, last)) in commit.events.into_iter().enumerate() {
            appended.push(EventRecord { seq: checked.seq(offset), body, last });
        }
        let keep = self.options.max_events_per_task.max(1);
        // The entry is updated in place; the list and eviction indexes change only when
        // the task's place in them does (`placed`: where it was, `None` for a new task).
        let (entry, placed) = match state.tasks.entry(key.clone()) {
            Slot::Occupied(slot) => {
                let entry = slot.into_mut();
                record.lease = lease_after(commit.lease, entry.record.lease.take());
                let old = std::mem::replace(&mut entry.record, record);
                (entry, Some((old.status_ts_ms, old.terminal)))
            }
            Slot::Vacant(slot) => {
                record.lease = lease_after(commit.lease, None);
                (slot.insert(Entry { record, events: VecDeque::new(), last_seq }), None)
            }
        };
        if let Some(event) = appended.last() {
            entry.last_seq = event.seq;
        }
        entry.events.extend(appended.iter().cloned());
        while entry.events.len() > keep {
            entry.events.pop_front();
        }
        match placed {
            Some(place) if place == (ts, terminal) => {}
            Some((old_ts, old_terminal)) => {
                state.unindex(&key, old_ts, old_terminal);
                state.index(&key, ts, terminal);
            }
            None => state.index(&key, ts, terminal),
        }

        if commit.push && !appended.is_empty() {
            let config_ids: Vec<String> =
                state.push_configs.get(&key).map(|configs| configs.keys().cloned().collect()).unwrap_or_default();
            for event in &appended {
                for config_id in &config_ids {
                    state.enqueue(&key, config_id, event);
                }
            }
        }

        state.evict(&self.options, now_ms, Some(&key));
        Ok(Committed { version, events: appended })
    }

    fn list_tasks_now(&self, tenant: &str, query: &ListQuery) -> Result<ListPage, StoreError> {
        let state = self.lock()?;
        let empty = BTreeSet::new();
        let index = state.by_tenant.get(tenant).unwrap_or(&empty);
        let matching = |(_, id): &&(i64, String)| -> Option<&TaskRecord> {
            let entry = state.tasks.get(&TaskKey::new(tenant, id.as_str()))?;
            let record = &entry.record;
            let keep = query.context_id.as_ref().is_none_or(|context| &record.context_id == context)
                && query.state.as_ref().is_none_or(|wanted| &record.state == wanted)
                && query.status_after_ms.is_none_or(|after| record.status_ts_ms >= after);
            keep.then_some(record)
        };
        let total_size = index.iter().filter(|row| matching(row).is_some()).count() as u64;
        let after_cursor: Box<dyn Iterator<Item = &(i64, String)>> = match &query.after {
            Some(cursor) => Box::new(index.range(..cursor.clone()).rev()),
            None => Box::new(index.iter().rev()),
        };
        let mut rows = after_cursor.filter_map(|row| matching(&row));
        let tasks: Vec<TaskRecord> = rows.by_ref().take(query.page_size).cloned().collect();
        let more = query.page_size > 0 && rows.next().is_some();
        let next = match tasks.last() {
            Some(last) if more => Some((last.status_ts_ms, last.key.id.clone())),
            _ => None,
        };
        Ok(ListPage { tasks, total_size, next })
    }

    fn read_events_now(&self, key: &TaskKey, after: u64, limit: usize) -> Result<EventPage, StoreError> {
        let state = self.lock()?;
        let entry = state.tasks.get(key).ok_or_else(|| StoreError::NotFound(key.clone()))?;
        let first_held = entry.events.front().map_or(0, |event| event.seq);
        // The log is contiguous, so the first event after `after` is found by offset.
        let skip = match after.checked_sub(first_held) {
            Some(held_before) if first_held > 0 => usize::try_from(held_before.saturating_add(1)).unwrap_or(usize::MAX),
            _ => 0,
        };
        let events = entry.events.iter().skip(skip).take(limit).cloned().collect();
        Ok(EventPage { events, first_held, last_written: entry.last_seq })
    }

    fn claim_deliveries_now(&self, now_ms: i64, lease_ms: i64, limit: usize) -> Result<Vec<Delivery>, StoreError> {
        let mut guard = self.lock()?;
        let state = &mut *guard;
        let mut claimed = Vec::new();
        let mut orphaned = Vec::new();
        let lease_until_ms = now_ms.saturating_add(lease_ms);
        for (&id, queued) in state.outbox.iter_mut() {
            if claimed.len() >= limit {
                break;
            }
            if queued.due_ms > now_ms || queued.lease_until_ms > now_ms {
                continue;
            }
            let config = state.push_configs.get(&queued.task).and_then(|configs| configs.get(&queued.config_id));
            let Some(config) = config else {
                orphaned.push(id);
                continue;
            };
            queued.event.encode()?;
            queued.lease_until_ms = lease_until_ms;
            claimed.push(Delivery {
                id,
                task: queued.task.clone(),
                config_id: queued.config_id.clone(),
                config: config.clone(),
                seq: queued.seq,
                event: queued.event.bytes()?.to_vec(),
                attempts: queued.attempts,
            });
        }
        for id in orphaned {
            state.dequeue(id);
        }
        Ok(claimed)
    }

    /// The memory store does not keep the error of a retried attempt: nothing reads it
    /// back before the delivery is retried or given up on (which records its own error).
    fn delivery_retry_now(&self, id: i64, retry_at_ms: i64) -> Result<(), StoreError> {
        let mut state = self.lock()?;
        if let Some(queued) = state.outbox.get_mut(&id) {
            queued.attempts = queued.attempts.saturating_add(1);
            queued.due_ms = retry_at_ms;
            queued.lease_until_ms = 0;
        }
        Ok(())
    }

    fn delivery_dead_now(&self, id: i64, at_ms: i64, error: &str) -> Result<(), StoreError> {
        let mut state = self.lock()?;
        let Some(queued) = state.dequeue(id) else { return Ok(()) };
        let config = state
            .push_configs
            .get(&queued.task)
            .and_then(|configs| configs.get(&queued.config_id))
            .cloned()
            .unwrap_or_default();
        state.dead_letters.push_back(DeadLetter {
            delivery: Delivery {
                id,
                task: queued.task,
                config_id: queued.config_id,
                config,
                seq: queued.seq,
                event: queued.event.bytes()?.to_vec(),
                attempts: queued.attempts.saturating_add(1),
            },
            error: error.to_owned(),
            at_ms,
        });
        while state.dead_letters.len() > self.options.capacity.max(1) {
            state.dead_letters.pop_front();
        }
        Ok(())
    }

    fn renew_leases_now(&self, owner: &str, keys: &[TaskKey], until_ms: i64) -> Result<usize, StoreError> {
        let mut state = self.lock()?;
        let mut renewed = 0;
        for key in keys {
            let Some(entry) = state.tasks.get_mut(key) else { continue };
            if !entry.record.terminal {
                entry.record.lease = Some(TurnLease { owner: owner.to_owned(), until_ms });
                renewed += 1;
            }
        }
        Ok(renewed)
    }

    fn release_lease_now(&self, key: &TaskKey, owner: &str, expire: bool) -> Result<bool, StoreError> {
        let mut state = self.lock()?;
        let Some(entry) = state.tasks.get_mut(key) else { return Ok(false) };
        let record = &mut entry.record;
        if record.lease.as_ref().is_none_or(|lease| lease.owner != owner) {
            return Ok(false);
        }
        if expire {
            record.lease = Some(TurnLease { owner: owner.to_owned(), until_ms: 0 });
        } else {
            record.lease = None;
        }
        Ok(true)
    }

    /// A walk over every task: the store is bounded, and a sweep runs seconds apart.
    fn expired_leases_now(&self, now_ms: i64, limit: usize) -> Result<Vec<TaskKey>, StoreError> {
        let state = self.lock()?;
        let mut expired: Vec<(i64, &TaskKey)> = state
            .tasks
            .values()
            .filter_map(|entry| {
                let lease = entry.record.lease.as_ref()?;
                (lease.until_ms < now_ms).then_some((lease.until_ms, &entry.record.key))
            })
            .collect();
        expired.sort_unstable();
        Ok(expired.into_iter().take(limit).map(|(_, key)| key.clone()).collect())
    }

    fn purge_now(&self, before_ms: i64, limit: usize) -> Result<Purged, StoreError> {
        let mut guard = self.lock()?;
        let state = &mut *guard;
        let victims: Vec<TaskKey> = state
            .terminal
            .iter()
            .take_while(|(status_ts_ms, _)| *status_ts_ms < before_ms)
            .take(limit)
            .map(|(_, key)| key.clone())
            .collect();
        for key in &victims {
            state.remove_task(key);
        }
        let mut idempotency_keys = 0;
        while idempotency_keys < limit {
            let Some((created_ms, tenant, key)) = state.idempotency_order.first().cloned() else { break };
            if created_ms >= before_ms {
                break;
            }
            state.idempotency_order.pop_first();
            state.idempotency.remove(&(tenant, key));
            idempotency_keys += 1;
        }
        let mut dead_letters = 0;
        // Kept in the order they were recorded, so the oldest are in front.
        while dead_letters < limit && state.dead_letters.front().is_some_and(|letter| letter.at_ms < before_ms) {
            state.dead_letters.pop_front();
            dead_letters += 1;
        }
        Ok(Purged { tasks: victims.len(), idempotency_keys, dead_letters })
    }

    fn claim_idempotency_now(
        &self,
        tenant: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
    ) -> Result<IdempotencyClaim, StoreError> {
        let mut state = self.lock()?;
        state.forget_idempotency(&self.options, now_ms);
        let map_key = (tenant.to_owned(), key.to_owned());
        if let Some(seen) = state.idempotency.get(&map_key) {
            return Ok(IdempotencyClaim::Seen { fingerprint: seen.fingerprint.clone(), result: seen.result.clone() });
        }
        state.idempotency_order.insert((now_ms, map_key.0.clone(), map_key.1.clone()));
        state
            .idempotency
            .insert(map_key, Idempotency { fingerprint: fingerprint.to_owned(), result: None, created_ms: now_ms });
        state.forget_idempotency(&self.options, now_ms);
        Ok(IdempotencyClaim::Claimed)
    }
}

/// The lease a commit leaves on a task that held `stored` (`None` for a new task).
fn lease_after(change: LeaseChange, stored: Option<TurnLease>) -> Option<TurnLease> {
    match change {
        LeaseChange::Keep => stored,
        LeaseChange::Set(lease) => Some(lease),
        LeaseChange::Clear | LeaseChange::ClearExpired(_) => None,
    }
}

impl State {
    /// Lists task `key` in its tenant at `ts`, and among terminal tasks if `terminal`.
    fn index(&mut self, key: &TaskKey, ts: i64, terminal: bool) {
        match self.by_tenant.get_mut(&key.tenant) {
            Some(index) => index.insert((ts, key.id.clone())),
            None => self.by_tenant.entry(key.tenant.clone()).or_default().insert((ts, key.id.clone())),
        };
        if terminal {
            self.terminal.insert((ts, key.clone()));
        }
    }

    /// Undoes [`State::index`] with the same arguments.
    fn unindex(&mut self, key: &TaskKey, ts: i64, terminal: bool) {
        if let Some(index) = self.by_tenant.get_mut(&key.tenant) {
            index.remove(&(ts, key.id.clone()));
            if index.is_empty() {
                self.by_tenant.remove(&key.tenant);
            }
        }
        if terminal {
            self.terminal.remove(&(ts, key.clone()));
        }
    }

    fn enqueue(&mut self, key: &TaskKey, config_id: &str, event: &EventRecord) {
        self.next_delivery_id += 1;
        let id = self.next_delivery_id;
        self.outbox.insert(
            id,
            Queued {
                task: key.clone(),
                config_id: config_id.to_owned(),
                seq: event.seq,
                event: event.body.clone(),
                attempts: 0,
                due_ms: 0,
                lease_until_ms: 0,
            },
        );
        self.outbox_by_task.entry(key.clone()).or_default().insert(id);
    }

    fn dequeue(&mut self, id: i64) -> Option<Queued> {
        let queued = self.outbox.remove(&id)?;
        if let Some(ids) = self.outbox_by_task.get_mut(&queued.task) {
            ids.remove(&id);
            if ids.is_empty() {
                self.outbox_by_task.remove(&queued.task);
            }
        }
        Some(queued)
    }

    /// Evicts what the bounds allow at `now_ms`, never the task named by `keep` (the one
    /// just committed: its writer is about to publish its events).
    fn evict(&mut self, options: &MemoryOptions, now_ms: i64, keep: Option<&TaskKey>) -> usize {
        let cutoff = options.ttl.map(|ttl| now_ms.saturating_sub(duration_ms(ttl)));
        let mut excess = self.tasks.len().saturating_sub(options.capacity);
        let mut victims: Vec<TaskKey> = Vec::new();
        // Oldest terminal tasks first: each is evicted while it is expired or the store is
        // over capacity; the first one that is neither ends the walk.
        for (status_ts_ms, key) in &self.terminal {
            let expired = cutoff.is_some_and(|cutoff| *status_ts_ms < cutoff);
            if !expired && excess == 0 {
                break;
            }
            if Some(key) == keep {
                continue;
            }
            victims.push(key.clone());
            excess = excess.saturating_sub(1);
        }
        let evicted = victims.len();
        for key in victims {
            self.remove_task(&key);
        }
        self.forget_idempotency(options, now_ms);
        evicted
    }

    fn remove_task(&mut self, key: &TaskKey) {
        if let Some(entry) = self.tasks.remove(key) {
            self.unindex(key, entry.record.status_ts_ms, entry.record.terminal);
        }
        self.push_configs.remove(key);
        if let Some(ids) = self.outbox_by_task.remove(key) {
            for id in ids {
                self.outbox.remove(&id);
            }
        }
    }

    fn forget_idempotency(&mut self, options: &MemoryOptions, now_ms: i64) {
        let cutoff = options.ttl.map(|ttl| now_ms.saturating_sub(duration_ms(ttl)));
        while let Some((created_ms, tenant, key)) = self.idempotency_order.first().cloned() {
            let expired = cutoff.is_some_and(|cutoff| created_ms < cutoff);
            if !expired && self.idempotency_order.len() <= options.capacity.max(1) {
                break;
            }
            self.idempotency_order.pop_first();
            self.idempotency.remove(&(tenant, key));
        }
    }
}

fn ready<T: Send + 'static>(value: T) -> BoxFuture<'static, T> {
    Box::pin(std::future::ready(value))
}

impl Store for MemoryStore {
    fn commit(&self, commit: Commit) -> BoxFuture<'_, Result<Committed, StoreError>> {
        ready(self.commit_at(commit, now_ms()))
    }

    fn get_task(&self, key: &TaskKey) -> BoxFuture<'_, Result<Option<TaskRecord>, StoreError>> {
        ready(self.lock().map(|state| state.tasks.get(key).map(|entry| entry.record.clone())))
    }

    fn list_tasks(&self, tenant: &str, query: ListQuery) -> BoxFuture<'_, Result<ListPage, StoreError>> {
        ready(self.list_tasks_now(tenant, &query))
    }

    fn read_events(&self, key: &TaskKey, after: u64, limit: usize) -> BoxFuture<'_, Result<EventPage, StoreError>> {
        ready(self.read_events_now(key, after, limit))
    }

    fn put_push_config(&self, config: PushConfigRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        ready(self.lock().and_then(|mut state| {
            if !state.tasks.contains_key(&config.task) {
                return Err(StoreError::NotFound(config.task));
            }
            state.push_configs.entry(config.task).or_default().insert(config.id, config.body);
            Ok(())
        }))
    }

    fn get_push_config(&self, task: &TaskKey, id: &str) -> BoxFuture<'_, Result<Option<PushConfigRecord>, StoreError>> {
        ready(self.lock().map(|state| {
            let body = state.push_configs.get(task).and_then(|configs| configs.get(id))?;
            Some(PushConfigRecord { task: task.clone(), id: id.to_owned(), body: body.clone() })
        }))
    }

    fn list_push_configs(
        &self,
        task: &TaskKey,
        after: Option<&str>,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<PushConfigRecord>, StoreError>> {
        ready(self.lock().map(|state| {
            let Some(configs) = state.push_configs.get(task) else { return Vec::new() };
            configs
                .iter()
                .filter(|(id, _)| after.is_none_or(|after| id.as_str() > after))
                .take(limit)
                .map(|(id, body)| PushConfigRecord { task: task.clone(), id: id.clone(), body: body.clone() })
                .collect()
        }))
    }

    fn delete_push_config(&self, task: &TaskKey, id: &str) -> BoxFuture<'_, Result<bool, StoreError>> {
        ready(self.lock().map(|mut state| {
            let Some(configs) = state.push_configs.get_mut(task) else { return false };
            let removed = configs.remove(id).is_some();
            if configs.is_empty() {
                state.push_configs.remove(task);
            }
            removed
        }))
    }

    fn claim_deliveries(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<Delivery>, StoreError>> {
        ready(self.claim_deliveries_now(now_ms, lease_ms, limit))
    }

    fn delivery_done(&self, id: i64) -> BoxFuture<'_, Result<(), StoreError>> {
        ready(self.lock().map(|mut state| {
            state.dequeue(id);
        }))
    }

    fn delivery_retry(&self, id: i64, retry_at_ms: i64, _error: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        ready(self.delivery_retry_now(id, retry_at_ms))
    }

    fn delivery_dead(&self, id: i64, at_ms: i64, error: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        ready(self.delivery_dead_now(id, at_ms, error))
    }

    fn dead_letters(&self, limit: usize) -> BoxFuture<'_, Result<Vec<DeadLetter>, StoreError>> {
        ready(self.lock().map(|state| state.dead_letters.iter().take(limit).cloned().collect()))
    }

    fn next_delivery_due(&self) -> BoxFuture<'_, Result<Option<i64>, StoreError>> {
        ready(
            self.lock().map(|state| state.outbox.values().map(|queued| queued.due_ms.max(queued.lease_until_ms)).min()),
        )
    }

    fn claim_idempotency(
        &self,
        tenant: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
    ) -> BoxFuture<'_, Result<IdempotencyClaim, StoreError>> {
        ready(self.claim_idempotency_now(tenant, key, fingerprint, now_ms))
    }

    fn complete_idempotency(&self, tenant: &str, key: &str, result: Vec<u8>) -> BoxFuture<'_, Result<(), StoreError>> {
        ready(self.lock().map(|mut state| {
            if let Some(seen) = state.idempotency.get_mut(&(tenant.to_owned(), key.to_owned())) {
                seen.result = Some(result);
            }
        }))
    }

    fn release_idempotency(&self, tenant: &str, key: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        ready(self.lock().map(|mut state| {
            if let Some(seen) = state.idempotency.remove(&(tenant.to_owned(), key.to_owned())) {
                state.idempotency_order.remove(&(seen.created_ms, tenant.to_owned(), key.to_owned()));
            }
        }))
    }

    fn renew_leases(&self, owner: &str, keys: Vec<TaskKey>, until_ms: i64) -> BoxFuture<'_, Result<usize, StoreError>> {
        ready(self.renew_leases_now(owner, &keys, until_ms))
    }

    fn release_lease(&self, key: &TaskKey, owner: &str, expire: bool) -> BoxFuture<'_, Result<bool, StoreError>> {
        ready(self.release_lease_now(key, owner, expire))
    }

    fn expired_leases(&self, now_ms: i64, limit: usize) -> BoxFuture<'_, Result<Vec<TaskKey>, StoreError>> {
        ready(self.expired_leases_now(now_ms, limit))
    }

    fn purge(&self, before_ms: i64, limit: usize) -> BoxFuture<'_, Result<Purged, StoreError>> {
        ready(self.purge_now(before_ms, limit))
    }
}

#[cfg(test)]
mod tests;
