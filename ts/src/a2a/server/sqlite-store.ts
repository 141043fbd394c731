/**
 * The durable SQLite store: the `TaskStore` contract in one database file, every query
 * on a worker thread (`sqlite-worker.ts`) so that the server's event loop never waits for
 * the disk. Writes that arrive together are committed together (one `fsync` for the
 * group); a promise of a write resolves once its commit is on disk (WAL,
 * `synchronous = FULL`).
 *
 * Values are kept as ProtoJSON text: written with the generated encoders here, read back
 * through the generated validators. The schema is the one the Rust and Python SQLite
 * stores run (`rules/store/sqlite/`, generated into `generated/a2a/store-schema.ts`), so a
 * file written by a server in any of the three languages opens here. The driver is
 * `node:sqlite` (Node 22.5+) or the optional peer dependency `better-sqlite3@12`.
 *
 *     const store = await SqliteStore.open("agentproto.db");
 */

import { Worker } from "node:worker_threads";

import { DECODERS, ENCODERS, type TypeOf } from "../../generated/a2a/v1.codec.js";
import type { StreamResponse, Task, TaskState } from "../../generated/a2a/v1.js";
import { MAX_NESTING_DEPTH, parse } from "../../codec/reader.js";
import { Ctx } from "../../codec/runtime.js";
import type { Posted, SqlReply, SqlRequest, SqliteDriver, WorkerSetup } from "./sqlite-worker.js";
import {
  isTerminal,
  StoreError,
  statusMs,
  type Commit,
  type Committed,
  type DeadLetter,
  type Delivery,
  type EventPage,
  type ListPage,
  type ListQuery,
  type PushConfigRecord,
  type StoreErrorKind,
  type TaskKey,
  type TaskRecord,
  type TaskStore,
} from "./store.js";

export type { SqliteDriver } from "./sqlite-worker.js";

/** Options of the SQLite store. */
export interface SqliteStoreOptions {
  /** `auto` (default): `node:sqlite` when the runtime has it, else `better-sqlite3`. */
  readonly driver?: SqliteDriver;
}

type Row = Record<string, unknown>;

function decode<K extends "Task" | "StreamResponse" | "TaskPushNotificationConfig">(type: K, text: string): TypeOf<K> {
  return DECODERS[type](parse(text, MAX_NESTING_DEPTH), "$", new Ctx(text)) as TypeOf<K>;
}

export class SqliteStore implements TaskStore {
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (e: StoreError) => void }>();
  private nextSeq = 1;
  private closed: Promise<void> | null = null;
  private failure: StoreError | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on("message", (reply: SqlReply) => this.settle(reply));
    worker.on("error", (e: Error) => this.fail(new StoreError("backend", null, `the SQLite worker failed: ${e.message}`)));
    worker.on("exit", () => this.fail(new StoreError("backend", null, "the SQLite store is closed")));
    worker.unref();
  }

  /** Opens (and creates, or migrates) the database at `path`. @throws StoreError `backend` */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const setup: WorkerSetup = { path, driver: options.driver ?? "auto" };
    const worker = new Worker(new URL("./sqlite-worker.js", import.meta.url), { workerData: setup });
    let onMessage!: (reply: SqlReply) => void;
    let onError!: (e: Error) => void;
    let onExit!: (code: number) => void;
    const ready = await new Promise<SqlReply>((resolve, reject) => {
      onMessage = resolve;
      onError = reject;
      onExit = (code) => reject(new Error(`the SQLite worker exited (${code}) before it opened ${path}`));
      worker.once("message", onMessage).once("error", onError).once("exit", onExit);
    }).catch((e: unknown) => ({ seq: 0, ok: false, code: "backend", message: e instanceof Error ? e.message : String(e) }) as const);
    // Only these listeners: the worker's own (which start and ref its port) stay.
    worker.off("message", onMessage).off("error", onError).off("exit", onExit);
    if (!ready.ok) {
      await worker.terminate();
      throw new StoreError("backend", null, `cannot open the SQLite store ${JSON.stringify(path)}: ${ready.message}`);
    }
    return new SqliteStore(worker);
  }

  private call<T>(request: SqlRequest): Promise<T> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const seq = this.nextSeq++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ ...request, seq } satisfies Posted);
    });
  }

  private settle(reply: SqlReply): void {
    const waiter = this.pending.get(reply.seq);
    if (waiter === undefined) return;
    this.pending.delete(reply.seq);
    if (this.pending.size === 0) this.worker.unref();
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(new StoreError(reply.code as StoreErrorKind, null, reply.message));
  }

  private fail(error: StoreError): void {
    this.failure ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }

  async commit(commit: Commit): Promise<Committed> {
    const { key, task } = commit;
    const request: SqlRequest = {
      op: "commit",
      tenant: key.tenant,
      id: key.id,
      contextId: task.contextId ?? "",
      state: task.status.state,
      terminal: isTerminal(task.status.state),
      statusTsMs: statusMs(task),
      body: ENCODERS.Task(task),
      expectedVersion: commit.expectedVersion,
      events: commit.events.map((e) => ({ body: ENCODERS.StreamResponse(e.event), last: e.last })),
      lease: commit.lease === "keep" || commit.lease === "clear" || "clearExpired" in commit.lease ? commit.lease : commit.lease.set,
      pushDueMs: commit.push === true ? Date.now() : null,
      configs: (commit.configs ?? []).map((c) => ({ id: c.id, body: ENCODERS.TaskPushNotificationConfig(c.config) })),
    };
    const done = await this.call<{ version: number; seqs: number[] }>(request).catch((e: unknown) => Promise.reject(withKey(e, key)));
    return { version: done.version, events: done.seqs.map((seq, i) => ({ seq, event: commit.events[i]?.event as StreamResponse, last: commit.events[i]?.last === true })) };
  }

  async getTask(key: TaskKey): Promise<TaskRecord | null> {
    const row = await this.call<Row | null>({ op: "getTask", tenant: key.tenant, id: key.id });
    return row === null ? null : record(key, row);
  }

  async listTasks(tenant: string, query: ListQuery): Promise<ListPage> {
    const page = await this.call<{ rows: Row[]; total: number }>({
      op: "listTasks",
      tenant,
      contextId: query.contextId ?? null,
      state: query.state ?? null,
      statusAfterMs: query.statusAfterMs ?? null,
      limit: query.pageSize <= 0 ? 0 : query.pageSize + 1,
      after: query.after ?? null,
    });
    const tasks = page.rows.slice(0, Math.max(0, query.pageSize)).map((row) => record({ tenant, id: String(row["id"]) }, row));
    const last = tasks[tasks.length - 1];
    const more = page.rows.length > query.pageSize && last !== undefined;
    return { tasks, totalSize: page.total, next: more ? [last.statusTsMs, last.key.id] : null };
  }

  async readEvents(key: TaskKey, after: number, limit: number): Promise<EventPage> {
    const page = await this.call<{ events: Row[]; firstHeld: number; lastWritten: number }>({ op: "readEvents", tenant: key.tenant, id: key.id, after, limit }).catch((e: unknown) =>
      Promise.reject(withKey(e, key)),
    );
    return {
      events: page.events.map((row) => ({ seq: Number(row["seq"]), event: decode("StreamResponse", String(row["body"])), last: Number(row["last"]) === 1 })),
      firstHeld: page.firstHeld,
      lastWritten: page.lastWritten,
    };
  }

  async putPushConfig(rec: PushConfigRecord): Promise<void> {
    await this.call({ op: "putPushConfig", tenant: rec.task.tenant, taskId: rec.task.id, id: rec.id, body: ENCODERS.TaskPushNotificationConfig(rec.config) }).catch((e: unknown) => Promise.reject(withKey(e, rec.task)));
  }

  async getPushConfig(task: TaskKey, id: string): Promise<PushConfigRecord | null> {
    const body = await this.call<string | null>({ op: "getPushConfig", tenant: task.tenant, taskId: task.id, id });
    return body === null ? null : { task, id, config: decode("TaskPushNotificationConfig", body) };
  }

  async listPushConfigs(task: TaskKey, after: string | null, limit: number): Promise<PushConfigRecord[]> {
    const rows = await this.call<Row[]>({ op: "listPushConfigs", tenant: task.tenant, taskId: task.id, after, limit });
    return rows.map((row) => ({ task, id: String(row["id"]), config: decode("TaskPushNotificationConfig", String(row["body"])) }));
  }

  deletePushConfig(task: TaskKey, id: string): Promise<boolean> {
    return this.call<boolean>({ op: "deletePushConfig", tenant: task.tenant, taskId: task.id, id });
  }

  renewLeases(owner: string, keys: readonly TaskKey[], untilMs: number): Promise<number> {
    return this.call<number>({ op: "renewLeases", owner, keys: keys.map((k) => [k.tenant, k.id] as const), untilMs });
  }

  releaseLease(key: TaskKey, owner: string): Promise<boolean> {
    return this.call<boolean>({ op: "releaseLease", tenant: key.tenant, id: key.id, owner });
  }

  async expiredLeases(nowMs: number, limit: number): Promise<TaskKey[]> {
    const rows = await this.call<Row[]>({ op: "expiredLeases", nowMs, limit });
    return rows.map((row) => ({ tenant: String(row["tenant"]), id: String(row["id"]) }));
  }

  async claimDeliveries(nowMs: number, leaseUntilMs: number, limit: number): Promise<Delivery[]> {
    const rows = await this.call<Row[]>({ op: "claimDeliveries", nowMs, leaseUntilMs, limit });
    return rows.map((row) => ({
      id: Number(row["id"]),
      task: { tenant: String(row["tenant"]), id: String(row["task_id"]) },
      configId: String(row["config_id"]),
      config: typeof row["config"] === "string" ? decode("TaskPushNotificationConfig", row["config"]) : null,
      seq: Number(row["seq"]),
      event: typeof row["event"] === "string" ? row["event"] : null,
      attempts: Number(row["attempts"]),
    }));
  }

  async deliveryDone(id: number): Promise<void> {
    await this.call({ op: "deliveryDone", id });
  }

  async deliveryRetry(id: number, dueMs: number, error: string): Promise<void> {
    await this.call({ op: "deliveryRetry", id, dueMs, error });
  }

  async deliveryDead(id: number, atMs: number, error: string): Promise<void> {
    await this.call({ op: "deliveryDead", id, atMs, error });
  }

  async deadLetters(limit: number): Promise<DeadLetter[]> {
    const rows = await this.call<Row[]>({ op: "deadLetters", limit });
    return rows.map((row) => ({
      deliveryId: Number(row["delivery_id"]),
      task: { tenant: String(row["tenant"]), id: String(row["task_id"]) },
      configId: String(row["config_id"]),
      config: row["config"] ? decode("TaskPushNotificationConfig", String(row["config"])) : null,
      seq: Number(row["seq"]),
      event: row["event"] ? String(row["event"]) : null,
      attempts: Number(row["attempts"]),
      error: String(row["error"]),
      atMs: Number(row["at_ms"]),
    }));
  }

  nextDeliveryDue(): Promise<number | null> {
    return this.call<number | null>({ op: "nextDeliveryDue" });
  }

  /** Waits for the writes in flight, closes the database and ends the worker. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      if (this.failure === null) await this.call({ op: "close" }).catch(() => undefined);
      this.fail(new StoreError("backend", null, "the SQLite store is closed"));
      await this.worker.terminate();
    })();
    return this.closed;
  }
}

/** A task row as a record (its body decoded). */
function record(key: TaskKey, row: Row): TaskRecord {
  const task: Task = decode("Task", String(row["body"]));
  const owner = row["lease_owner"];
  return {
    key,
    contextId: String(row["context_id"]),
    state: String(row["state"]) as TaskState,
    statusTsMs: Number(row["status_ts_ms"]),
    version: Number(row["version"]),
    task,
    lease: owner === null || owner === undefined ? null : { owner: String(owner), untilMs: Number(row["lease_until_ms"]) },
  };
}

/** A refusal from the worker, with the key of the task it concerns. */
function withKey(e: unknown, key: TaskKey): unknown {
  return e instanceof StoreError && e.key === null ? new StoreError(e.code, key, e.message) : e;
}
