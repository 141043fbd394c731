/**
 * The store contract of the A2A server: where tasks, their event logs, push
 * configurations and turn leases live.
 *
 * Every write that changes a task is one `commit`: the new task, the events the change
 * produced (numbered per task from 1, never reused) and what happens to the turn lease,
 * checked against the version the writer read (optimistic concurrency: a writer that lost
 * a race gets a `conflict`, reads again and re-applies). A store keeps typed values; a
 * database store encodes them with the generated encoders and decodes them on the way
 * out. The memory store is `memory-store.ts`; the contract tests that every store passes
 * are `test/a2a/store-contract.test.ts`.
 */

import type { StreamResponse, Task, TaskPushNotificationConfig, TaskState } from "../../generated/a2a/v1.js";

/** A task's identity: its tenant (`""` for the default one) and its id. */
export interface TaskKey {
  readonly tenant: string;
  readonly id: string;
}

/** Who runs a task's turn, and until when (ms since the Unix epoch) it is presumed alive. */
export interface TurnLease {
  readonly owner: string;
  readonly untilMs: number;
}

/** One task as stored. */
export interface TaskRecord {
  readonly key: TaskKey;
  readonly contextId: string;
  readonly state: TaskState;
  /** Status timestamp in ms since the Unix epoch: the list order. */
  readonly statusTsMs: number;
  /** Incremented by every commit; the first commit stores version 1. */
  readonly version: number;
  /** The whole task. Stores and readers treat it as immutable. */
  readonly task: Task;
  readonly lease: TurnLease | null;
}

/** One event of a task's log. */
export interface EventRecord {
  /** Per task, from 1, strictly increasing. */
  readonly seq: number;
  readonly event: StreamResponse;
  /** The task's last event (a terminal status): streams end after it. */
  readonly last: boolean;
}

/** What a commit does to the task's turn lease. `clearExpired`: clears it, and the commit
 * happens only if the lease (if any) ended before that instant; a live one refuses it
 * (`lease_live`), so a sweep never ends a turn whose lease was renewed meanwhile. */
export type LeaseChange = { readonly set: TurnLease } | { readonly clearExpired: number } | "keep" | "clear";

/** One change to one task. */
export interface Commit {
  readonly key: TaskKey;
  readonly task: Task;
  /** `null`: the task must not exist (create); a number: the stored version must be it. */
  readonly expectedVersion: number | null;
  readonly events: ReadonlyArray<{ readonly event: StreamResponse; readonly last: boolean }>;
  readonly lease: LeaseChange;
  /** Queue one push delivery per (event, push config the task has now), due at once, in
   * the same atomic step as the events (the durable outbox). */
  readonly push?: boolean;
  /** Push configs stored with this commit, before its deliveries are queued (a create's
   * inline config gets the task's first events). */
  readonly configs?: readonly PushConfigRecord[];
}

/** What a commit stored. */
export interface Committed {
  readonly version: number;
  readonly events: readonly EventRecord[];
}

/** A page of a task's log. */
export interface EventPage {
  readonly events: readonly EventRecord[];
  /** The lowest sequence number still held (0 when the log is empty). Greater than
   * `after + 1`: events were evicted and the reader has a gap. */
  readonly firstHeld: number;
  /** The highest sequence number written (0 when none). */
  readonly lastWritten: number;
}

/** The `ListTasks` filter and page. Order: status timestamp descending, then id
 * descending; `after` is the `(statusTsMs, id)` of the previous page's last task. */
export interface ListQuery {
  readonly contextId?: string;
  readonly state?: TaskState;
  /** Only tasks whose status timestamp is at or after this instant (ms). */
  readonly statusAfterMs?: number;
  /** At most this many tasks (0: none, only `totalSize`). */
  readonly pageSize: number;
  readonly after?: readonly [number, string];
}

/** One page of `ListTasks`. */
export interface ListPage {
  readonly tasks: readonly TaskRecord[];
  /** How many tasks match the filter, before paging. */
  readonly totalSize: number;
  /** The cursor of the next page; `null` on the last one. */
  readonly next: readonly [number, string] | null;
}

/** A push configuration as stored (its `id` assigned). */
export interface PushConfigRecord {
  readonly task: TaskKey;
  readonly id: string;
  readonly config: TaskPushNotificationConfig;
}

/** One queued push delivery: an event of a task to one of its push configs. */
export interface Delivery {
  /** The outbox row (unique in the store). */
  readonly id: number;
  readonly task: TaskKey;
  readonly configId: string;
  /** The config as stored now; `null` when it was deleted since (the delivery is dead). */
  readonly config: TaskPushNotificationConfig | null;
  readonly seq: number;
  /** The event's ProtoJSON text, the body of the request (`null`: evicted from the log). */
  readonly event: string | null;
  /** Attempts made before this one. */
  readonly attempts: number;
}

/** A delivery given up on. */
export interface DeadLetter {
  readonly deliveryId: number;
  readonly task: TaskKey;
  readonly configId: string;
  readonly config: TaskPushNotificationConfig | null;
  readonly seq: number;
  readonly event: string | null;
  /** Attempts made, the last included. */
  readonly attempts: number;
  /** What the last attempt found. */
  readonly error: string;
  readonly atMs: number;
}

/** Why a store operation failed: the first four are answers the caller acts on,
 * `backend` is the store itself failing. */
export type StoreErrorKind = "exists" | "not_found" | "conflict" | "lease_live" | "backend";

/** A store operation that failed (a local error: it never crosses the wire as such). */
export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorKind,
    readonly key: TaskKey | null,
    detail: string,
  ) {
    super(detail);
    this.name = "StoreError";
  }
}

/** Everything an A2A server keeps. Methods may be called concurrently; each is atomic. */
export interface TaskStore {
  /** Applies one change atomically. @throws StoreError `exists`, `not_found`, `conflict`, `lease_live` */
  commit(commit: Commit): Promise<Committed>;
  /** The task, or `null`. */
  getTask(key: TaskKey): Promise<TaskRecord | null>;
  /** One page of the tenant's tasks matching `query`. */
  listTasks(tenant: string, query: ListQuery): Promise<ListPage>;
  /** Events with `seq > after`, at most `limit`, in order. @throws StoreError `not_found` */
  readEvents(key: TaskKey, after: number, limit: number): Promise<EventPage>;
  /** Inserts or replaces a push config; the task must exist. @throws StoreError `not_found` */
  putPushConfig(record: PushConfigRecord): Promise<void>;
  getPushConfig(task: TaskKey, id: string): Promise<PushConfigRecord | null>;
  /** A task's configs ordered by id, those with `id > after`, at most `limit`. */
  listPushConfigs(task: TaskKey, after: string | null, limit: number): Promise<PushConfigRecord[]>;
  /** Whether a config was removed. */
  deletePushConfig(task: TaskKey, id: string): Promise<boolean>;
  /** Gives each of `keys` that exists and is not terminal the lease; returns how many. Not a commit. */
  renewLeases(owner: string, keys: readonly TaskKey[], untilMs: number): Promise<number>;
  /** Removes `owner`'s lease of a task; whether it held it. Not a commit. */
  releaseLease(key: TaskKey, owner: string): Promise<boolean>;
  /** Tasks whose lease ends before `nowMs`, earliest first, at most `limit`. */
  expiredLeases(nowMs: number, limit: number): Promise<TaskKey[]>;
  /** Takes up to `limit` deliveries due at `nowMs` (queued and not claimed, or claimed
   * under a lease that ended), ordered by task, config and sequence, and hides them from
   * other claimers until `leaseUntilMs`. */
  claimDeliveries(nowMs: number, leaseUntilMs: number, limit: number): Promise<Delivery[]>;
  /** Removes a delivery that succeeded (an unknown id is no error). */
  deliveryDone(id: number): Promise<void>;
  /** Records a failed attempt; the delivery is due again at `dueMs`. */
  deliveryRetry(id: number, dueMs: number, error: string): Promise<void>;
  /** Moves a delivery to the dead letters. */
  deliveryDead(id: number, atMs: number, error: string): Promise<void>;
  /** The oldest dead letters first. */
  deadLetters(limit: number): Promise<DeadLetter[]>;
  /** The earliest instant a queued delivery is due (a claimed one: when its lease ends). */
  nextDeliveryDue(): Promise<number | null>;
  /** Releases what the store holds (a database connection). */
  close(): Promise<void>;
}

/** Completed, failed, canceled and rejected tasks never change again. */
export function isTerminal(state: TaskState): boolean {
  return state === "TASK_STATE_COMPLETED" || state === "TASK_STATE_FAILED" || state === "TASK_STATE_CANCELED" || state === "TASK_STATE_REJECTED";
}

/** Input- and auth-required tasks wait for the client. */
export function isInterrupted(state: TaskState): boolean {
  return state === "TASK_STATE_INPUT_REQUIRED" || state === "TASK_STATE_AUTH_REQUIRED";
}

/** Terminal and interrupted states end a turn. */
export function endsTurn(state: TaskState): boolean {
  return isTerminal(state) || isInterrupted(state);
}

/** A task's status timestamp in ms (0 without one). */
export function statusMs(task: Task): number {
  const ts = task.status.timestamp;
  if (ts === undefined) return 0;
  // One value remembered: the commits of one turn mostly carry the same status time.
  if (ts !== lastTs) {
    lastTs = ts;
    lastMs = Date.parse(ts);
  }
  return lastMs;
}

let lastTs: string | null = null;
let lastMs = 0;

/** The map key of a task key. */
export function keyText(key: TaskKey): string {
  return `${key.tenant.length}:${key.tenant}/${key.id}`;
}
