/**
 * One SQLite file, several languages: the TypeScript store runs the shared migrations
 * (`rules/store/sqlite/`, generated), so a file the Rust server (`agentproto serve --db
 * FILE`) wrote opens here with its tasks read, and a task written here is served by the
 * Rust server. A file of the pre-release TypeScript or Python layout is refused.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

import { clientFromCard, resolveCard, type Task } from "../../src/a2a/index.js";
import { SqliteStore, StoreError } from "../../src/a2a/server/index.js";
import { within } from "../spawned.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const RUST = join(ROOT, "target/debug/agentproto");
const DIR = mkdtempSync(join(tmpdir(), "agentproto-shared-sqlite-"));
const BOUND_MS = 20_000;
after(() => rmSync(DIR, { recursive: true, force: true }));

/** Runs `agentproto serve --db path` for the length of `body`, then ends it. */
async function withRustServer(path: string, body: (url: string) => Promise<void>): Promise<void> {
  const child = spawn(RUST, ["serve", "--addr", "127.0.0.1:0", "--db", path], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    let out = "";
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString("utf8")));
    const url = await within(
      new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString("utf8");
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m !== null) resolve((m[1] as string).replace(/\/+$/, ""));
        });
        void exited.then(() => reject(new Error(`the Rust server exited before listening: ${err}`)));
      }),
      "the Rust server to listen",
      BOUND_MS,
    );
    await body(url);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    try {
      await within(exited, "the Rust server to stop", 10_000);
    } catch {
      child.kill("SIGKILL");
      await within(exited, "the Rust server to be killed", 10_000);
    }
  }
}

test("a file written by the Rust server is read by the TypeScript store, and back", { skip: existsSync(RUST) ? false : "build the Rust server first: cargo build -p agentproto-cli" }, async () => {
  const path = join(DIR, "shared.db");
  let written = "";
  await withRustServer(path, async (url) => {
    const client = clientFromCard(await resolveCard(url, { timeoutMs: 10_000 }), { timeoutMs: 10_000 });
    const done = await client.sendMessage({ message: { messageId: "tck-complete-task-1", role: "ROLE_USER", parts: [{ text: "x" }] } });
    assert.equal(done.task?.status.state, "TASK_STATE_COMPLETED");
    written = (done.task as Task).id;
  });
  const store = await SqliteStore.open(path);
  try {
    const record = await store.getTask({ tenant: "", id: written });
    assert.ok(record !== null, "the Rust server's task is read");
    assert.equal(record.task.status.state, "TASK_STATE_COMPLETED");
    assert.ok((await store.readEvents({ tenant: "", id: written }, 0, 100)).events.length > 0, "and its events");
    // Stamped now: the Rust server's retention would delete a finished task of 1970.
    const mine: Task = { id: "ts-1", contextId: "c", status: { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() } };
    await store.commit({ key: { tenant: "", id: "ts-1" }, task: mine, expectedVersion: null, events: [{ event: { task: mine }, last: true }], lease: "keep" });
  } finally {
    await store.close();
  }
  await withRustServer(path, async (url) => {
    const client = clientFromCard(await resolveCard(url, { timeoutMs: 10_000 }), { timeoutMs: 10_000 });
    assert.equal((await client.getTask({ id: "ts-1" })).status.state, "TASK_STATE_COMPLETED");
    assert.equal((await client.getTask({ id: written })).status.state, "TASK_STATE_COMPLETED");
  });
});

/** Writes `script` into a new file with whichever driver the runtime has. */
async function rawFile(name: string, script: string): Promise<string> {
  const path = join(DIR, name);
  type Db = { exec(sql: string): void; close(): void };
  let db: Db;
  try {
    const sqlite = (await import("node:sqlite" as string)) as { DatabaseSync: new (path: string) => Db };
    db = new sqlite.DatabaseSync(path);
  } catch {
    db = new (createRequire(import.meta.url)("better-sqlite3") as new (path: string) => Db)(path);
  }
  db.exec(script);
  db.close();
  return path;
}

test("a file of a pre-release layout is refused with the layout named", async () => {
  const layouts: Array<[string, string]> = [
    ["TypeScript", "CREATE TABLE tasks (tenant TEXT, id TEXT, status_ts_ms INTEGER, lease_owner TEXT, lease_until_ms INTEGER); PRAGMA user_version = 1;"],
    ["Python", "CREATE TABLE tasks (tenant TEXT, id TEXT, status_ms INTEGER, body BLOB); PRAGMA user_version = 2;"],
  ];
  for (const [who, script] of layouts) {
    const path = await rawFile(`old-${who}.db`, script);
    await assert.rejects(SqliteStore.open(path), (e: unknown) => e instanceof StoreError && e.message.includes(`pre-release ${who} store`));
  }
});
