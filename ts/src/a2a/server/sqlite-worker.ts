/**
 * The SQLite store's worker thread: it owns the database connection, so that no query
 * and no `fsync` runs on the server's event loop. `sqlite-store.ts` posts it requests
 * (`SqlRequest`, bodies already encoded as ProtoJSON text) and it answers each with a
 * `SqlReply`.
 *
 * Writes are group-committed: the requests that arrived together run in one
 * transaction, each write inside its own savepoint (a write that fails is rolled back
 * alone), and no answer leaves before the `COMMIT` returned. The database is in WAL mode
 * with `synchronous = FULL`, so an answer means the commit is on disk.
 *
 * The driver is `node:sqlite` when the runtime has it (Node 22.5+), else the
 * `better-sqlite3` package (an optional peer dependency); both have the synchronous
 * `prepare`/`run`/`get`/`all` API used here.
 */

import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from "../../generated/a2a/store-schema.js";

/** The subset of both drivers' statement API the store uses. */
interface Statement {
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Array<Record<string, unknown>>;
}

interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

/** Which driver to open the file with. */
export type SqliteDriver = "auto" | "node:sqlite" | "better-sqlite3";

/** What the worker is started with. */
export interface WorkerSetup {
  readonly path: string;
  readonly driver: SqliteDriver;
}

/** A lease change as the worker takes it. */
export type SqlLease = { readonly owner: string; readonly untilMs: number } | { readonly clearExpired: number } | "keep" | "clear";

/** One request to the worker. */
export type SqlRequest =
  | {
      readonly op: "commit";
      readonly tenant: string;
      readonly id: string;
      readonly contextId: string;
      readonly state: string;
      readonly terminal: boolean;
      readonly statusTsMs: number;
      readonly body: string;
      readonly expectedVersion: number | null;
      readonly events: ReadonlyArray<{ readonly body: string; readonly last: boolean }>;
      readonly lease: SqlLease;
      /** Queue one push delivery per (event, config of the task), due at this instant. */
      readonly pushDueMs: number | null;
      /** Push configs stored first. */
      readonly configs: ReadonlyArray<{ readonly id: string; readonly body: string }>;
    }
  | { readonly op: "getTask"; readonly tenant: string; readonly id: string }
  | {
      readonly op: "listTasks";
      readonly tenant: string;
      readonly contextId: string | null;
      readonly state: string | null;
      readonly statusAfterMs: number | null;
      readonly limit: number;
      readonly after: readonly [number, string] | null;
    }
  | { readonly op: "readEvents"; readonly tenant: string; readonly id: string; readonly after: number; readonly limit: number }
  | { readonly op: "putPushConfig"; readonly tenant: string; readonly taskId: string; readonly id: string; readonly body: string }
  | { readonly op: "getPushConfig"; readonly tenant: string; readonly taskId: string; readonly id: string }
  | { readonly op: "listPushConfigs"; readonly tenant: string; readonly taskId: string; readonly after: string | null; readonly limit: number }
  | { readonly op: "deletePushConfig"; readonly tenant: string; readonly taskId: string; readonly id: string }
  | { readonly op: "renewLeases"; readonly owner: string; readonly keys: ReadonlyArray<readonly [string, string]>; readonly untilMs: number }
  | { readonly op: "releaseLease"; readonly tenant: string; readonly id: string; readonly owner: string }
  | { readonly op: "expiredLeases"; readonly nowMs: number; readonly limit: number }
  | { readonly op: "claimDeliveries"; readonly nowMs: number; readonly leaseUntilMs: number; readonly limit: number }
  | { readonly op: "deliveryDone"; readonly id: number }
  | { readonly op: "deliveryRetry"; readonly id: number; readonly dueMs: number; readonly error: string }
  | { readonly op: "deliveryDead"; readonly id: number; readonly atMs: number; readonly error: string }
  | { readonly op: "deadLetters"; readonly limit: number }
  | { readonly op: "nextDeliveryDue" }
  | { readonly op: "close" };

/** A request as posted: with the id its reply carries. */
export type Posted = SqlRequest & { readonly seq: number };

/** The worker's answer to one request. */
export type SqlReply = { readonly seq: number; readonly ok: true; readonly value: unknown } | { readonly seq: number; readonly ok: false; readonly code: string; readonly message: string };

/** A refusal the store turns into a `StoreError` of that kind. */
class Refusal extends Error {
  constructor(
    readonly code: "exists" | "not_found" | "conflict" | "lease_live",
    message: string,
  ) {
    super(message);
  }
}

/**
 * The stored values (tasks, events, push configs) are ProtoJSON text kept as BLOBs (the
 * bytes of the UTF-8 text), as the Rust and Python stores keep them: every write binds
 * `CAST(? AS BLOB)` and every read selects `CAST(... AS TEXT)`, so both drivers hand
 * strings back whichever store wrote the row.
 */

async function openDatabase(setup: WorkerSetup): Promise<Database> {
  const failures: string[] = [];
  if (setup.driver !== "better-sqlite3") {
    try {
      const sqlite = (await import("node:sqlite" as string)) as { DatabaseSync: new (path: string) => Database };
      return new sqlite.DatabaseSync(setup.path);
    } catch (e) {
      failures.push(`node:sqlite: ${e instanceof Error ? e.message : String(e)}`);
      if (setup.driver === "node:sqlite") throw new Error(failures.join("; "));
    }
  }
  try {
    const BetterSqlite = createRequire(import.meta.url)("better-sqlite3") as new (path: string) => Database;
    return new BetterSqlite(setup.path);
  } catch (e) {
    failures.push(`better-sqlite3: ${e instanceof Error ? e.message : String(e)}`);
  }
  throw new Error(`the SQLite store needs node:sqlite (Node 22.5 or later) or the better-sqlite3 package (npm install better-sqlite3@12): ${failures.join("; ")}`);
}

function configure(db: Database): void {
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA foreign_keys = ON");
  const mode = String(Object.values(db.prepare("PRAGMA journal_mode = WAL").get() ?? {})[0] ?? "");
  if (mode.toLowerCase() !== "wal" && mode.toLowerCase() !== "memory") throw new Error(`sqlite refused WAL mode (journal_mode is ${JSON.stringify(mode)})`);
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA temp_store = MEMORY");
  migrate(db);
}

/**
 * Brings the file to `SQLITE_SCHEMA_VERSION` with the shared migrations
 * (`rules/store/sqlite/`, generated; the Rust and Python stores run the same), every
 * missing step in one transaction; refuses a newer file, and a file of a pre-release
 * layout of the TypeScript or Python store rather than misread it.
 */
function migrate(db: Database): void {
  const version = Number(Object.values(db.prepare("PRAGMA user_version").get() ?? {})[0] ?? 0);
  if (version > SQLITE_SCHEMA_VERSION) throw new Error(`sqlite schema version ${version} is newer than this build's (${SQLITE_SCHEMA_VERSION})`);
  if (!Number.isInteger(version) || version < 0) throw new Error(`sqlite schema version ${version} is not a version`);
  refusePreRelease(db, version);
  if (version === SQLITE_SCHEMA_VERSION) return;
  const steps = SQLITE_MIGRATIONS.slice(version).join("");
  try {
    db.exec(`BEGIN IMMEDIATE;\n${steps}\nPRAGMA user_version = ${SQLITE_SCHEMA_VERSION};\nCOMMIT;`);
  } catch (e) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // no transaction was open
    }
    throw new Error(`sqlite: cannot migrate the schema from version ${version}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * The pre-release TypeScript store wrote its own version 1 (the lease columns of version
 * 2 already there) and the pre-release Python store its own versions 1 and 2 (the status
 * time in `status_ms`): their numbers overlap the shared ones, so their columns tell them.
 */
function refusePreRelease(db: Database, version: number): void {
  const columns = new Set(db.prepare("PRAGMA table_info(tasks)").all().map((row) => String(row["name"])));
  if (columns.has("status_ms")) {
    throw new Error(`sqlite: this file was written by a pre-release Python store (schema version ${version} with tasks.status_ms), a layout no release reads; start from a new file`);
  }
  if (version === 1 && columns.has("lease_owner")) {
    throw new Error("sqlite: this file was written by a pre-release TypeScript store (schema version 1 with tasks.lease_owner), a layout no release reads; start from a new file");
  }
}

/** The requests that change the database (run inside the batch's transaction). */
const WRITES = new Set<SqlRequest["op"]>(["commit", "putPushConfig", "deletePushConfig", "renewLeases", "releaseLease", "claimDeliveries", "deliveryDone", "deliveryRetry", "deliveryDead"]);

class Worker {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Database) {}

  private q(sql: string): Statement {
    let s = this.statements.get(sql);
    if (s === undefined) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  /** Runs a batch: the writes in one transaction, each in a savepoint. */
  batch(requests: readonly Posted[]): SqlReply[] {
    const writes = requests.some((r) => WRITES.has(r.op));
    const replies: SqlReply[] = [];
    if (writes) this.q("BEGIN IMMEDIATE").run();
    for (const r of requests) {
      const write = WRITES.has(r.op);
      if (write) this.q("SAVEPOINT one").run();
      try {
        const value = this.run(r);
        if (write) this.q("RELEASE one").run();
        replies.push({ seq: r.seq, ok: true, value });
      } catch (e) {
        if (write) {
          this.q("ROLLBACK TO one").run();
          this.q("RELEASE one").run();
        }
        replies.push(failure(r.seq, e));
      }
    }
    if (writes) {
      try {
        this.q("COMMIT").run();
      } catch (e) {
        try {
          this.q("ROLLBACK").run();
        } catch {
          // no transaction left to roll back
        }
        // Nothing of the batch is stored: every write of it failed.
        return requests.map((r, i) => (WRITES.has(r.op) ? failure(r.seq, e) : (replies[i] as SqlReply)));
      }
    }
    return replies;
  }

  private run(r: SqlRequest): unknown {
    switch (r.op) {
      case "commit":
        return this.commit(r);
      case "getTask":
        return this.q("SELECT context_id, state, status_ts_ms, version, CAST(body AS TEXT) AS body, lease_owner, lease_until_ms FROM tasks WHERE tenant = ? AND id = ?").get(r.tenant, r.id) ?? null;
      case "listTasks":
        return this.listTasks(r);
      case "readEvents": {
        const task = this.q("SELECT last_seq FROM tasks WHERE tenant = ? AND id = ?").get(r.tenant, r.id);
        if (task === undefined) throw new Refusal("not_found", `task ${JSON.stringify(r.id)} not found`);
        const first = this.q("SELECT min(seq) AS first FROM events WHERE tenant = ? AND task_id = ?").get(r.tenant, r.id);
        const events = r.limit <= 0 ? [] : this.q("SELECT seq, CAST(body AS TEXT) AS body, last FROM events WHERE tenant = ? AND task_id = ? AND seq > ? ORDER BY seq LIMIT ?").all(r.tenant, r.id, r.after, r.limit);
        return { events, firstHeld: Number(first?.["first"] ?? 0), lastWritten: Number(task["last_seq"]) };
      }
      case "putPushConfig":
        if (this.q("SELECT 1 FROM tasks WHERE tenant = ? AND id = ?").get(r.tenant, r.taskId) === undefined) throw new Refusal("not_found", `task ${JSON.stringify(r.taskId)} not found`);
        this.q("INSERT INTO push_configs (tenant, task_id, id, body) VALUES (?, ?, ?, CAST(? AS BLOB)) ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body").run(r.tenant, r.taskId, r.id, r.body);
        return null;
      case "getPushConfig":
        return this.q("SELECT CAST(body AS TEXT) AS body FROM push_configs WHERE tenant = ? AND task_id = ? AND id = ?").get(r.tenant, r.taskId, r.id)?.["body"] ?? null;
      case "listPushConfigs":
        return this.q("SELECT id, CAST(body AS TEXT) AS body FROM push_configs WHERE tenant = ? AND task_id = ? AND id > ? ORDER BY id LIMIT ?").all(r.tenant, r.taskId, r.after ?? "", r.limit);
      case "deletePushConfig":
        return Number(this.q("DELETE FROM push_configs WHERE tenant = ? AND task_id = ? AND id = ?").run(r.tenant, r.taskId, r.id).changes) > 0;
      case "renewLeases": {
        let renewed = 0;
        const renew = this.q("UPDATE tasks SET lease_owner = ?, lease_until_ms = ? WHERE tenant = ? AND id = ? AND terminal = 0");
        for (const [tenant, id] of r.keys) renewed += Number(renew.run(r.owner, r.untilMs, tenant, id).changes);
        return renewed;
      }
      case "releaseLease":
        return Number(this.q("UPDATE tasks SET lease_owner = NULL, lease_until_ms = NULL WHERE tenant = ? AND id = ? AND lease_owner = ?").run(r.tenant, r.id, r.owner).changes) > 0;
      case "expiredLeases":
        return this.q("SELECT tenant, id FROM tasks WHERE lease_until_ms IS NOT NULL AND lease_until_ms < ? ORDER BY lease_until_ms LIMIT ?").all(r.nowMs, r.limit);
      case "claimDeliveries":
        return this.claim(r.nowMs, r.leaseUntilMs, r.limit);
      case "deliveryDone":
        this.q("DELETE FROM outbox WHERE id = ?").run(r.id);
        return null;
      case "deliveryRetry":
        this.q("UPDATE outbox SET attempts = attempts + 1, due_ms = ?, lease_until_ms = 0, last_error = ? WHERE id = ?").run(r.dueMs, r.error, r.id);
        return null;
      case "deliveryDead":
        this.q(
          `INSERT INTO dead_letters (delivery_id, tenant, task_id, config_id, config, seq, event, attempts, error, at_ms)
           SELECT o.id, o.tenant, o.task_id, o.config_id, coalesce(p.body, X''), o.seq, coalesce(e.body, X''), o.attempts + 1, ?, ?
           FROM outbox o
           LEFT JOIN push_configs p ON p.tenant = o.tenant AND p.task_id = o.task_id AND p.id = o.config_id
           LEFT JOIN events e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq
           WHERE o.id = ?`,
        ).run(r.error, r.atMs, r.id);
        this.q("DELETE FROM outbox WHERE id = ?").run(r.id);
        return null;
      case "deadLetters":
        return this.q("SELECT delivery_id, tenant, task_id, config_id, CAST(config AS TEXT) AS config, seq, CAST(event AS TEXT) AS event, attempts, error, at_ms FROM dead_letters ORDER BY id LIMIT ?").all(r.limit);
      case "nextDeliveryDue": {
        const row = this.q("SELECT min(max(due_ms, lease_until_ms)) AS due FROM outbox").get();
        return row?.["due"] === null || row?.["due"] === undefined ? null : Number(row["due"]);
      }
      case "close":
        return null;
    }
  }

  private commit(r: Extract<SqlRequest, { op: "commit" }>): unknown {
    const row = this.q("SELECT version, last_seq, lease_owner, lease_until_ms FROM tasks WHERE tenant = ? AND id = ?").get(r.tenant, r.id);
    if (r.expectedVersion === null) {
      if (row !== undefined) throw new Refusal("exists", `task ${JSON.stringify(r.id)} already exists`);
    } else {
      if (row === undefined) throw new Refusal("not_found", `task ${JSON.stringify(r.id)} not found`);
      if (Number(row["version"]) !== r.expectedVersion) {
        throw new Refusal("conflict", `task ${JSON.stringify(r.id)} changed concurrently (expected version ${r.expectedVersion}, found ${Number(row["version"])})`);
      }
    }
    const version = (row === undefined ? 0 : Number(row["version"])) + 1;
    let lastSeq = row === undefined ? 0 : Number(row["last_seq"]);
    const lease = r.lease;
    if (typeof lease === "object" && "clearExpired" in lease && row?.["lease_owner"] !== null && row?.["lease_owner"] !== undefined && Number(row["lease_until_ms"]) >= lease.clearExpired) {
      throw new Refusal("lease_live", `task ${JSON.stringify(r.id)} has a live turn lease (owner ${JSON.stringify(row["lease_owner"])})`);
    }
    const keep = lease === "keep";
    const setTo = typeof lease === "object" && "owner" in lease ? lease : null;
    const owner = keep ? (row?.["lease_owner"] ?? null) : setTo === null ? null : setTo.owner;
    const until = keep ? (row?.["lease_until_ms"] ?? null) : setTo === null ? null : setTo.untilMs;
    const seqs: number[] = [];
    const firstSeq = lastSeq + 1;
    lastSeq += r.events.length;
    if (row === undefined) {
      this.q(
        "INSERT INTO tasks (tenant, id, context_id, state, terminal, status_ts_ms, version, last_seq, body, lease_owner, lease_until_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS BLOB), ?, ?)",
      ).run(r.tenant, r.id, r.contextId, r.state, r.terminal ? 1 : 0, r.statusTsMs, version, lastSeq, r.body, owner, until);
    } else {
      this.q("UPDATE tasks SET context_id = ?, state = ?, terminal = ?, status_ts_ms = ?, version = ?, last_seq = ?, body = CAST(? AS BLOB), lease_owner = ?, lease_until_ms = ? WHERE tenant = ? AND id = ?").run(
        r.contextId,
        r.state,
        r.terminal ? 1 : 0,
        r.statusTsMs,
        version,
        lastSeq,
        r.body,
        owner,
        until,
        r.tenant,
        r.id,
      );
    }
    for (const c of r.configs) {
      this.q("INSERT INTO push_configs (tenant, task_id, id, body) VALUES (?, ?, ?, CAST(? AS BLOB)) ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body").run(r.tenant, r.id, c.id, c.body);
    }
    const insert = this.q("INSERT INTO events (tenant, task_id, seq, body, last) VALUES (?, ?, ?, CAST(? AS BLOB), ?)");
    r.events.forEach((e, i) => {
      insert.run(r.tenant, r.id, firstSeq + i, e.body, e.last ? 1 : 0);
      seqs.push(firstSeq + i);
    });
    if (r.pushDueMs !== null && seqs.length > 0) {
      const configs = this.q("SELECT id FROM push_configs WHERE tenant = ? AND task_id = ? ORDER BY id").all(r.tenant, r.id);
      const queue = this.q("INSERT INTO outbox (tenant, task_id, config_id, seq, due_ms) VALUES (?, ?, ?, ?, ?)");
      for (const seq of seqs) for (const c of configs) queue.run(r.tenant, r.id, c["id"], seq, r.pushDueMs);
    }
    return { version, seqs };
  }

  private listTasks(r: Extract<SqlRequest, { op: "listTasks" }>): unknown {
    const where = ["tenant = ?"];
    const params: unknown[] = [r.tenant];
    if (r.contextId !== null) (where.push("context_id = ?"), params.push(r.contextId));
    if (r.state !== null) (where.push("state = ?"), params.push(r.state));
    if (r.statusAfterMs !== null) (where.push("status_ts_ms >= ?"), params.push(r.statusAfterMs));
    const filter = where.join(" AND ");
    const total = Number(this.q(`SELECT count(*) AS n FROM tasks WHERE ${filter}`).get(...params)?.["n"] ?? 0);
    if (r.limit <= 0) return { rows: [], total };
    const paged = [...params];
    let cursor = "";
    if (r.after !== null) {
      cursor = " AND (status_ts_ms < ? OR (status_ts_ms = ? AND id < ?))";
      paged.push(r.after[0], r.after[0], r.after[1]);
    }
    const rows = this.q(`SELECT id, context_id, state, status_ts_ms, version, CAST(body AS TEXT) AS body, lease_owner, lease_until_ms FROM tasks WHERE ${filter}${cursor} ORDER BY status_ts_ms DESC, id DESC LIMIT ?`).all(...paged, r.limit);
    return { rows, total };
  }

  /** Claims due deliveries: each gets a lease, so no other claimer takes it meanwhile. */
  private claim(nowMs: number, leaseUntilMs: number, limit: number): unknown {
    const due = this.q(
      `SELECT o.id, o.tenant, o.task_id, o.config_id, o.seq, o.attempts, CAST(p.body AS TEXT) AS config, CAST(e.body AS TEXT) AS event
       FROM outbox o
       LEFT JOIN push_configs p ON p.tenant = o.tenant AND p.task_id = o.task_id AND p.id = o.config_id
       LEFT JOIN events e ON e.tenant = o.tenant AND e.task_id = o.task_id AND e.seq = o.seq
       WHERE o.due_ms <= ? AND o.lease_until_ms <= ?
       ORDER BY o.tenant, o.task_id, o.config_id, o.seq LIMIT ?`,
    ).all(nowMs, nowMs, limit);
    const lease = this.q("UPDATE outbox SET lease_until_ms = ? WHERE id = ?");
    for (const d of due) lease.run(leaseUntilMs, d["id"]);
    return due;
  }
}

function failure(seq: number, e: unknown): SqlReply {
  if (e instanceof Refusal) return { seq, ok: false, code: e.code, message: e.message };
  return { seq, ok: false, code: "backend", message: `sqlite: ${e instanceof Error ? e.message : String(e)}` };
}

async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) return;
  const setup = workerData as WorkerSetup;
  let worker: Worker;
  let db: Database;
  try {
    db = await openDatabase(setup);
    configure(db);
    worker = new Worker(db);
  } catch (e) {
    port.postMessage({ seq: 0, ok: false, code: "backend", message: e instanceof Error ? e.message : String(e) } satisfies SqlReply);
    return;
  }
  port.postMessage({ seq: 0, ok: true, value: null } satisfies SqlReply);
  let queued: Posted[] = [];
  let scheduled = false;
  const drain = (): void => {
    scheduled = false;
    const requests = queued;
    queued = [];
    const closing = requests.findIndex((r) => r.op === "close");
    const now = closing < 0 ? requests : requests.slice(0, closing + 1);
    for (const reply of worker.batch(now)) port.postMessage(reply);
    if (closing >= 0) {
      db.close();
      port.close();
    }
  };
  port.on("message", (request: Posted) => {
    queued.push(request);
    if (!scheduled) {
      scheduled = true;
      setImmediate(drain);
    }
  });
}

await main();
