/**
 * The bounded in-memory store: the `TaskStore` contract in a process's memory. Bounded
 * twice: at most `maxTasks` tasks (the terminal ones are evicted in the order they ended,
 * in constant time; when every task is live, a new one is refused), and at most `maxEventsPerTask` events per log
 * (the oldest go; a reader that wanted them sees a gap).
 */

import { ENCODERS } from "../../generated/a2a/v1.codec.js";
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
  record: TaskRecord;
  events: EventRecord[];
  lastSeq: number;
  configs: Map<string, PushConfigRecord>;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders list entries: status timestamp descending, then id descending. */
function before(a: readonly [number, string], b: readonly [number, string]): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}

export class MemoryStore implements TaskStore {
  private readonly tasks = new Map<string, Entry>();
  private readonly maxTasks: number;
  private readonly maxEvents: number;
  private readonly maxDead: number;
  private readonly outbox = new Map<number, Queued>();
  /** The terminal tasks in the order they ended: the eviction order. */
  private readonly ended = new Set<string>();
  private readonly dead: DeadLetter[] = [];
  private nextDelivery = 1;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxTasks = options.maxTasks ?? 10_000;
    this.maxEvents = options.maxEventsPerTask ?? 1_000;
    this.maxDead = options.maxDeadLetters ?? 1_000;
  }

  async commit(commit: Commit): Promise<Committed> {
    const k = keyText(commit.key);
    const entry = this.tasks.get(k);
    if (commit.expectedVersion === null) {
      if (entry !== undefined) throw new StoreError("exists", commit.key, `task ${JSON.stringify(commit.key.id)} already exists`);
      this.makeRoom();
    } else {
      if (entry === undefined) throw new StoreError("not_found", commit.key, `task ${JSON.stringify(commit.key.id)} not found`);
      if (entry.record.version !== commit.expectedVersion) {
        throw new StoreError("conflict", commit.key, `task ${JSON.stringify(commit.key.id)} changed concurrently (expected version ${commit.expectedVersion}, found ${entry.record.version})`);
      }
    }
    const previous = entry?.record.lease ?? null;
    const change = commit.lease;
    if (typeof change === "object" && "clearExpired" in change && previous !== null && previous.untilMs >= change.clearExpired) {
      throw new StoreError("lease_live", commit.key, `task ${JSON.stringify(commit.key.id)} has a live turn lease (owner ${JSON.stringify(previous.owner)})`);
    }
    const lease = change === "keep" ? previous : change === "clear" || "clearExpired" in change ? null : change.set;
    const record: TaskRecord = {
      key: commit.key,
      contextId: commit.task.contextId ?? "",
      state: commit.task.status.state,
      statusTsMs: statusMs(commit.task),
      version: (entry?.record.version ?? 0) + 1,
      task: commit.task,
      lease,
    };
    const target: Entry = entry ?? { record, events: [], lastSeq: 0, configs: new Map() };
    target.record = record;
    if (isTerminal(record.state)) this.ended.add(k);
    const written: EventRecord[] = [];
    for (const e of commit.events) {
      target.lastSeq += 1;
      const ev = { seq: target.lastSeq, event: e.event, last: e.last };
      target.events.push(ev);
      written.push(ev);
    }
    if (target.events.length > this.maxEvents) target.events.splice(0, target.events.length - this.maxEvents);
    if (entry === undefined) this.tasks.set(k, target);
    for (const c of commit.configs ?? []) target.configs.set(c.id, c);
    if (commit.push === true && target.configs.size > 0) {
      const configIds = [...target.configs.keys()].sort();
      const now = Date.now();
      for (const ev of written) {
        for (const configId of configIds) {
          const id = this.nextDelivery++;
          this.outbox.set(id, { id, key: commit.key, configId, seq: ev.seq, attempts: 0, dueMs: now, leaseUntilMs: 0 });
        }
      }
    }
    return { version: record.version, events: written };
  }

  /** Evicts the terminal task that ended first when the store is full; refuses when every
   * task is live. */
  private makeRoom(): void {
    if (this.tasks.size < this.maxTasks) return;
    const first = this.ended.values().next();
    if (first.done === true) throw new StoreError("backend", null, `the memory store holds ${this.maxTasks} live tasks and takes no more`);
    const k = first.value;
    this.ended.delete(k);
    this.tasks.delete(k);
    if (this.outbox.size > 0) for (const [id, q] of this.outbox) if (keyText(q.key) === k) this.outbox.delete(id);
  }

  async getTask(key: TaskKey): Promise<TaskRecord | null> {
    return this.tasks.get(keyText(key))?.record ?? null;
  }

  async listTasks(tenant: string, query: ListQuery): Promise<ListPage> {
    const matching: TaskRecord[] = [];
    for (const e of this.tasks.values()) {
      const r = e.record;
      if (r.key.tenant !== tenant) continue;
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
    const firstHeld = events[0]?.seq ?? 0;
    // Sequence numbers are consecutive within what is held: index by arithmetic.
    const startIndex = Math.max(0, after + 1 - firstHeld);
    return { events: events.slice(startIndex, startIndex + limit), firstHeld, lastWritten: entry.lastSeq };
  }

  async putPushConfig(record: PushConfigRecord): Promise<void> {
    this.entry(record.task).configs.set(record.id, record);
  }

  async getPushConfig(task: TaskKey, id: string): Promise<PushConfigRecord | null> {
    return this.tasks.get(keyText(task))?.configs.get(id) ?? null;
  }

  async listPushConfigs(task: TaskKey, after: string | null, limit: number): Promise<PushConfigRecord[]> {
    const configs = [...(this.tasks.get(keyText(task))?.configs.values() ?? [])];
    configs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return configs.filter((c) => after === null || c.id > after).slice(0, limit);
  }

  async deletePushConfig(task: TaskKey, id: string): Promise<boolean> {
    return this.tasks.get(keyText(task))?.configs.delete(id) ?? false;
  }

  async renewLeases(owner: string, keys: readonly TaskKey[], untilMs: number): Promise<number> {
    let renewed = 0;
    for (const key of keys) {
      const e = this.tasks.get(keyText(key));
      if (e === undefined || isTerminal(e.record.state)) continue;
      e.record = { ...e.record, lease: { owner, untilMs } };
      renewed++;
    }
    return renewed;
  }

  async releaseLease(key: TaskKey, owner: string): Promise<boolean> {
    const e = this.tasks.get(keyText(key));
    if (e === undefined || e.record.lease?.owner !== owner) return false;
    e.record = { ...e.record, lease: null };
    return true;
  }

  async expiredLeases(nowMs: number, limit: number): Promise<TaskKey[]> {
    const expired: TaskRecord[] = [];
    for (const e of this.tasks.values()) if (e.record.lease !== null && e.record.lease.untilMs < nowMs) expired.push(e.record);
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
    const entry = this.tasks.get(keyText(q.key));
    const config = entry?.configs.get(q.configId)?.config ?? null;
    const first = entry?.events[0]?.seq ?? 0;
    const held = entry?.events[q.seq - first];
    const event = held !== undefined && held.seq === q.seq ? ENCODERS.StreamResponse(held.event) : null;
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
    const e = this.tasks.get(keyText(key));
    if (e === undefined) throw new StoreError("not_found", key, `task ${JSON.stringify(key.id)} not found`);
    return e;
  }
}
