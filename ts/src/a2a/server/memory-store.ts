/**
 * The bounded in-memory store: the `TaskStore` contract in a process's memory. Bounded
 * twice: at most `maxTasks` tasks (the terminal ones are evicted in the order they ended,
 * in constant time; when every task is live, a new one is refused), and at most `maxEventsPerTask` events per log
 * (the oldest go; a reader that wanted them sees a gap).
 */

import { ENCODERS } from "../../generated/a2a/v1.codec.js";
import type { StreamResponse } from "../../generated/a2a/v1.js";
import { isTerminal, keyText, StoreError, statusMs, type Commit, type Committed, type DeadLetter, type Delivery, type EventPage, type EventRecord, type ListPage, type ListQuery, type PushConfigRecord, type TaskKey, type TaskRecord, type TaskStore } from "./store.js";

/** Options of the memory store. */
export interface MemoryStoreOptions {
  /** The most tasks kept (default 10 000). */
  readonly maxTasks?: number;
  /** The most events kept per task (default 1 000). */
  readonly maxEventsPerTask?: number;
  /** The most dead letters kept (default 1 000; the oldest go). */
  readonly maxDeadLetters?: number;
}

interface Queued {
  readonly id: number;
  readonly key: TaskKey;
  readonly configId: string;
  readonly seq: number;
  attempts: number;
  dueMs: number;
  leaseUntilMs: number;
}

interface Entry {
  readonly key: TaskKey;
  record: TaskRecord;
  /** The events held, oldest first: the first is number `firstSeq`, the others follow. Kept
   * as the events themselves, their records made when they are read (two objects fewer
   * per event for as long as the task is kept). */
  events: StreamResponse[];
  firstSeq: number;
  lastSeq: number;
  /** The number of the held event marked `last` (0: none), and of any other such. */
  lastMark: number;
  moreLasts: number[] | null;
  /** Made at the first push config (most tasks have none). */
  configs: Map<string, PushConfigRecord> | null;
  /** In the eviction queue (it was terminal when committed). */
  queued: boolean;
  /** Evicted: no longer in the index. */
  gone: boolean;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders list entries: status timestamp descending, then id descending. */
function before(a: readonly [number, string], b: readonly [number, string]): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}

const NO_CONFIGS: ReadonlyMap<string, PushConfigRecord> = new Map();

export class MemoryStore implements TaskStore {
  /** The tasks by tenant, then id: no key text is built to find one. */
  private readonly tenants = new Map<string, Map<string, Entry>>();
  private size = 0;
  private readonly maxTasks: number;
  private readonly maxEvents: number;
  private readonly maxDead: number;
  private readonly outbox = new Map<number, Queued>();
  /** The terminal tasks in the order they ended, from `endedHead` on: the eviction order. */
  private ended: Array<Entry | undefined> = [];
  private endedHead = 0;
  private readonly dead: DeadLetter[] = [];
  private nextDelivery = 1;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxTasks = options.maxTasks ?? 10_000;
    this.maxEvents = options.maxEventsPerTask ?? 1_000;
    this.maxDead = options.maxDeadLetters ?? 1_000;
  }

  /** The entry last committed: the commits of a turn (and its lease's release) come with
   * the same key object, and find it without two map lookups. */
  private recent: Entry | null = null;

  private find(key: TaskKey): Entry | undefined {
    const recent = this.recent;
    if (recent !== null && recent.key === key && key.id === recent.record.key.id && key.tenant === recent.record.key.tenant) return recent;
    return this.tenants.get(key.tenant)?.get(key.id);
  }

  async commit(commit: Commit): Promise<Committed> {
    return this.commitNow(commit);
  }

  /** `commit`, done at once: the server's commits skip its promise (the memory store never
   * waits). @throws StoreError as `commit` rejects */
  commitNow(commit: Commit): Committed {
    const key = commit.key;
    const entry = this.find(key);
    if (commit.expectedVersion === null) {
      if (entry !== undefined) throw new StoreError("exists", key, `task ${JSON.stringify(key.id)} already exists`);
      this.makeRoom();
    } else {
      if (entry === undefined) throw new StoreError("not_found", key, `task ${JSON.stringify(key.id)} not found`);
      if (entry.record.version !== commit.expectedVersion) {
        throw new StoreError("conflict", key, `task ${JSON.stringify(key.id)} changed concurrently (expected version ${commit.expectedVersion}, found ${entry.record.version})`);
      }
    }
    const previous = entry === undefined ? null : entry.record.lease;
    const change = commit.lease;
    let lease: TaskRecord["lease"];
    if (change === "keep") lease = previous;
    else if (change === "clear") lease = null;
    else if ("set" in change) lease = change.set;
    else {
      if (previous !== null && previous.untilMs >= change.clearExpired) {
        throw new StoreError("lease_live", key, `task ${JSON.stringify(key.id)} has a live turn lease (owner ${JSON.stringify(previous.owner)})`);
      }
      lease = null;
    }
    const task = commit.task;
    const record: TaskRecord = {
      key,
      contextId: task.contextId ?? "",
      state: task.status.state,
      statusTsMs: statusMs(task),
      version: entry === undefined ? 1 : entry.record.version + 1,
      task,
      lease,
    };
    let target: Entry;
    if (entry === undefined) {
      target = { key, record, events: [], firstSeq: 1, lastSeq: 0, lastMark: 0, moreLasts: null, configs: null, queued: false, gone: false };
      let ids = this.tenants.get(key.tenant);
      if (ids === undefined) this.tenants.set(key.tenant, (ids = new Map()));
      ids.set(key.id, target);
      this.size++;
    } else {
      target = entry;
      target.record = record;
    }
    this.recent = target;
    if (!target.queued && isTerminal(record.state)) {
      target.queued = true;
      this.ended.push(target);
    }
    const written: EventRecord[] = [];
    const events = commit.events;
    for (let i = 0; i < events.length; i++) {
      const e = events[i] as Commit["events"][number];
      const seq = ++target.lastSeq;
      target.events.push(e.event);
      if (e.last) {
        if (target.lastMark === 0) target.lastMark = seq;
        else (target.moreLasts ??= []).push(seq);
      }
      written.push({ seq, event: e.event, last: e.last });
    }
    if (target.events.length > this.maxEvents) {
      const drop = target.events.length - this.maxEvents;
      target.events.splice(0, drop);
      target.firstSeq += drop;

    }
    const configs = commit.configs;
    if (configs !== undefined && configs.length > 0) {
      const held = (target.configs ??= new Map());
      for (const c of configs) held.set(c.id, c);
    }
    if (commit.push === true && target.configs !== null && target.configs.size > 0) {
      const configIds = [...target.configs.keys()].sort();
      const now = Date.now();
      for (const ev of written) {
        for (const configId of configIds) {
          const id = this.nextDelivery++;
          this.outbox.set(id, { id, key, configId, seq: ev.seq, attempts: 0, dueMs: now, leaseUntilMs: 0 });
        }
      }
    }
    return { version: record.version, events: written };
  }

  /** Evicts the terminal task that ended first when the store is full; refuses when every
   * task is live. */
  private makeRoom(): void {
    if (this.size < this.maxTasks) return;
    const ended = this.ended;
    while (this.endedHead < ended.length) {
      const e = ended[this.endedHead] as Entry;
      ended[this.endedHead++] = undefined;
      e.queued = false;
      // A task committed out of its terminal state since (only a store's own caller can).
      if (e.gone || !isTerminal(e.record.state)) continue;
      this.evict(e);
      this.compactEnded();
      return;
    }
    this.compactEnded();
    throw new StoreError("backend", null, `the memory store holds ${this.maxTasks} live tasks and takes no more`);
  }

  /** Drops the queue's consumed head once it is most of the array. */
  private compactEnded(): void {
    if (this.endedHead > 1024 && this.endedHead * 2 > this.ended.length) {
      this.ended = this.ended.slice(this.endedHead);
      this.endedHead = 0;
    } else if (this.endedHead === this.ended.length) {
      this.ended.length = 0;
      this.endedHead = 0;
    }
  }

  private evict(e: Entry): void {
    const ids = this.tenants.get(e.key.tenant);
    // An entry not `gone` is the one its key finds.
    if (ids === undefined || !ids.delete(e.key.id)) return;
    if (this.recent === e) this.recent = null;
    if (ids.size === 0) this.tenants.delete(e.key.tenant);
    this.size--;
    e.gone = true;
    if (this.outbox.size > 0) for (const [id, q] of this.outbox) if (q.key.tenant === e.key.tenant && q.key.id === e.key.id) this.outbox.delete(id);
  }

  async getTask(key: TaskKey): Promise<TaskRecord | null> {
    return this.getTaskNow(key);
  }

  /** `getTask`, done at once. */
  getTaskNow(key: TaskKey): TaskRecord | null {
    const e = this.find(key);
    return e === undefined ? null : e.record;
  }

  async listTasks(tenant: string, query: ListQuery): Promise<ListPage> {
    const matching: TaskRecord[] = [];
    for (const e of this.tenants.get(tenant)?.values() ?? []) {
      const r = e.record;
      if (query.contextId !== undefined && r.contextId !== query.contextId) continue;
      if (query.state !== undefined && r.state !== query.state) continue;
      if (query.statusAfterMs !== undefined && r.statusTsMs < query.statusAfterMs) continue;
      matching.push(r);
    }
    matching.sort((a, b) => (before([a.statusTsMs, a.key.id], [b.statusTsMs, b.key.id]) ? -1 : 1));
    const after = query.after;
    const start = after === undefined ? 0 : matching.findIndex((r) => before(after, [r.statusTsMs, r.key.id]));
    const from = start < 0 ? matching.length : start;
    const tasks = matching.slice(from, from + query.pageSize);
    const lastShown = tasks[tasks.length - 1];
    const more = from + tasks.length < matching.length && lastShown !== undefined;
    return { tasks, totalSize: matching.length, next: more ? [lastShown.statusTsMs, lastShown.key.id] : null };
  }

  async readEvents(key: TaskKey, after: number, limit: number): Promise<EventPage> {
    const entry = this.entry(key);
    const events = entry.events;
    if (events.length === 0) return { events: [], firstHeld: 0, lastWritten: entry.lastSeq };
    const firstHeld = entry.firstSeq;
    // Sequence numbers are consecutive within what is held: index by arithmetic.
    const startIndex = Math.max(0, after + 1 - firstHeld);
    const end = Math.min(events.length, startIndex + Math.max(0, limit));
    const out: EventRecord[] = [];
    for (let i = startIndex; i < end; i++) {
      const seq = firstHeld + i;
      out.push({ seq, event: events[i] as StreamResponse, last: seq === entry.lastMark || (entry.moreLasts !== null && entry.moreLasts.includes(seq)) });
    }
    return { events: out, firstHeld, lastWritten: entry.lastSeq };
  }

  async putPushConfig(record: PushConfigRecord): Promise<void> {
    (this.entry(record.task).configs ??= new Map()).set(record.id, record);
  }

  async getPushConfig(task: TaskKey, id: string): Promise<PushConfigRecord | null> {
    return this.find(task)?.configs?.get(id) ?? null;
  }

  async listPushConfigs(task: TaskKey, after: string | null, limit: number): Promise<PushConfigRecord[]> {
    const configs = [...(this.find(task)?.configs ?? NO_CONFIGS).values()];
    configs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return configs.filter((c) => after === null || c.id > after).slice(0, limit);
  }

  async deletePushConfig(task: TaskKey, id: string): Promise<boolean> {
    return this.find(task)?.configs?.delete(id) ?? false;
  }

  async renewLeases(owner: string, keys: readonly TaskKey[], untilMs: number): Promise<number> {
    let renewed = 0;
    for (const key of keys) {
      const e = this.find(key);
      if (e === undefined || isTerminal(e.record.state)) continue;
      e.record = withLease(e.record, { owner, untilMs });
      renewed++;
    }
    return renewed;
  }

  async releaseLease(key: TaskKey, owner: string): Promise<boolean> {
    const e = this.find(key);
    if (e === undefined || e.record.lease?.owner !== owner) return false;
    e.record = withLease(e.record, null);
    return true;
  }

  async expiredLeases(nowMs: number, limit: number): Promise<TaskKey[]> {
    const expired: TaskRecord[] = [];
    for (const ids of this.tenants.values()) for (const e of ids.values()) if (e.record.lease !== null && e.record.lease.untilMs < nowMs) expired.push(e.record);
    expired.sort((a, b) => (a.lease?.untilMs ?? 0) - (b.lease?.untilMs ?? 0));
    return expired.slice(0, limit).map((r) => r.key);
  }

  async claimDeliveries(nowMs: number, leaseUntilMs: number, limit: number): Promise<Delivery[]> {
    const due = [...this.outbox.values()].filter((q) => q.dueMs <= nowMs && q.leaseUntilMs <= nowMs);
    due.sort((a, b) => compareText(keyText(a.key), keyText(b.key)) || compareText(a.configId, b.configId) || a.seq - b.seq);
    return due.slice(0, limit).map((q) => {
      q.leaseUntilMs = leaseUntilMs;
      return this.delivery(q);
    });
  }

  private delivery(q: Queued): Delivery {
    const entry = this.find(q.key);
    const config = entry?.configs?.get(q.configId)?.config ?? null;
    const at = entry === undefined ? -1 : q.seq - entry.firstSeq;
    const held = entry !== undefined && at >= 0 ? entry.events[at] : undefined;
    const event = held !== undefined ? ENCODERS.StreamResponse(held) : null;
    return { id: q.id, task: q.key, configId: q.configId, config, seq: q.seq, event, attempts: q.attempts };
  }

  async deliveryDone(id: number): Promise<void> {
    this.outbox.delete(id);
  }

  async deliveryRetry(id: number, dueMs: number, _error: string): Promise<void> {
    const q = this.outbox.get(id);
    if (q === undefined) return;
    q.attempts += 1;
    q.dueMs = dueMs;
    q.leaseUntilMs = 0;
  }

  async deliveryDead(id: number, atMs: number, error: string): Promise<void> {
    const q = this.outbox.get(id);
    if (q === undefined) return;
    this.outbox.delete(id);
    const d = this.delivery(q);
    this.dead.push({ deliveryId: id, task: q.key, configId: q.configId, config: d.config, seq: q.seq, event: d.event, attempts: q.attempts + 1, error, atMs });
    if (this.dead.length > this.maxDead) this.dead.splice(0, this.dead.length - this.maxDead);
  }

  async deadLetters(limit: number): Promise<DeadLetter[]> {
    return this.dead.slice(0, limit);
  }

  async nextDeliveryDue(): Promise<number | null> {
    let next: number | null = null;
    for (const q of this.outbox.values()) {
      const at = Math.max(q.dueMs, q.leaseUntilMs);
      if (next === null || at < next) next = at;
    }
    return next;
  }

  async close(): Promise<void> {}

  private entry(key: TaskKey): Entry {
    const e = this.find(key);
    if (e === undefined) throw new StoreError("not_found", key, `task ${JSON.stringify(key.id)} not found`);
    return e;
  }
}

/** `record` with another lease (a record handed out is never changed). */
function withLease(r: TaskRecord, lease: TaskRecord["lease"]): TaskRecord {
  return { key: r.key, contextId: r.contextId, state: r.state, statusTsMs: r.statusTsMs, version: r.version, task: r.task, lease };
}
