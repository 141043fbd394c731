/**
 * The store contract (`src/a2a/server/store.ts`) every A2A store passes: versioned
 * commits with optimistic concurrency, the event log read from a sequence number, list
 * order and pagination, push configs, leases. Parameterised over stores: a new store
 * adds a row to `STORES`: memory, and SQLite (a fresh file each).
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import type { StreamResponse, Task, TaskState } from "../../src/a2a/index.js";
import { MemoryStore, SqliteStore, StoreError, type TaskKey, type TaskStore } from "../../src/a2a/server/index.js";

/** The stores under test: a name and a factory of a fresh, empty store. */
const SQLITE_DIR = mkdtempSync(join(tmpdir(), "agentproto-a2a-sqlite-"));
after(() => rmSync(SQLITE_DIR, { recursive: true, force: true }));
let sqliteFiles = 0;

const STORES: ReadonlyArray<[string, () => Promise<TaskStore>]> = [
  ["memory", async () => new MemoryStore()],
  ["sqlite", async () => SqliteStore.open(join(SQLITE_DIR, `store-${++sqliteFiles}.db`))],
];

function task(id: string, state: TaskState = "TASK_STATE_SUBMITTED", ms = 1_000, contextId = "c-1"): Task {
  return { id, contextId, status: { state, timestamp: new Date(ms).toISOString() } };
}

function status(id: string, state: TaskState): StreamResponse {
  return { statusUpdate: { taskId: id, contextId: "c-1", status: { state } } };
}

const KEY: TaskKey = { tenant: "", id: "t-1" };

async function rejects(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => e instanceof StoreError && e.code === code);
}

for (const [name, make] of STORES) {
  const check = (what: string, body: (store: TaskStore) => Promise<void>): void => {
    test(`${name} store: ${what}`, async () => {
      const store = await make();
      try {
        await body(store);
      } finally {
        await store.close();
      }
    });
  };

  check("a create stores version 1 and numbers its events from 1", async (store) => {
    const done = await store.commit({ key: KEY, task: task("t-1"), expectedVersion: null, events: [{ event: { task: task("t-1") }, last: false }, { event: status("t-1", "TASK_STATE_WORKING"), last: false }], lease: "keep" });
    assert.equal(done.version, 1);
    assert.deepEqual(done.events.map((e) => e.seq), [1, 2]);
    const rec = await store.getTask(KEY);
    assert.equal(rec?.version, 1);
    assert.equal(rec?.state, "TASK_STATE_SUBMITTED");
    assert.equal(rec?.statusTsMs, 1_000);
  });

  check("a second create of one task is refused", async (store) => {
    await store.commit({ key: KEY, task: task("t-1"), expectedVersion: null, events: [], lease: "keep" });
    await rejects(store.commit({ key: KEY, task: task("t-1"), expectedVersion: null, events: [], lease: "keep" }), "exists");
  });

  check("an update against a stale version is a conflict, against the current one commits", async (store) => {
    await store.commit({ key: KEY, task: task("t-1"), expectedVersion: null, events: [], lease: "keep" });
    await store.commit({ key: KEY, task: task("t-1", "TASK_STATE_WORKING"), expectedVersion: 1, events: [{ event: status("t-1", "TASK_STATE_WORKING"), last: false }], lease: "keep" });
    await rejects(store.commit({ key: KEY, task: task("t-1", "TASK_STATE_COMPLETED"), expectedVersion: 1, events: [], lease: "keep" }), "conflict");
    const done = await store.commit({ key: KEY, task: task("t-1", "TASK_STATE_COMPLETED"), expectedVersion: 2, events: [{ event: status("t-1", "TASK_STATE_COMPLETED"), last: true }], lease: "clear" });
    assert.equal(done.version, 3);
    assert.deepEqual(done.events.map((e) => [e.seq, e.last]), [[2, true]]);
  });

  check("an update of a missing task is not_found", async (store) => {
    await rejects(store.commit({ key: KEY, task: task("t-1"), expectedVersion: 1, events: [], lease: "keep" }), "not_found");
    await rejects(store.readEvents(KEY, 0, 10), "not_found");
    assert.equal(await store.getTask(KEY), null);
  });

  check("events are read after a sequence number, at most a limit", async (store) => {
    const events = [1, 2, 3, 4, 5].map(() => ({ event: status("t-1", "TASK_STATE_WORKING"), last: false }));
    await store.commit({ key: KEY, task: task("t-1"), expectedVersion: null, events, lease: "keep" });
    const page = await store.readEvents(KEY, 2, 2);
    assert.deepEqual(page.events.map((e) => e.seq), [3, 4]);
    assert.equal(page.firstHeld, 1);
    assert.equal(page.lastWritten, 5);
    assert.deepEqual((await store.readEvents(KEY, 5, 10)).events, []);
    assert.equal((await store.readEvents(KEY, Number.MAX_SAFE_INTEGER, 0)).lastWritten, 5);
  });

  check("tasks are listed by status time then id, descending, in pages with a cursor", async (store) => {
    for (const [id, ms] of [["a", 3], ["b", 1], ["c", 3], ["d", 2]] as const) {
      await store.commit({ key: { tenant: "", id }, task: task(id, "TASK_STATE_COMPLETED", ms), expectedVersion: null, events: [], lease: "keep" });
    }
    await store.commit({ key: { tenant: "other", id: "z" }, task: task("z"), expectedVersion: null, events: [], lease: "keep" });
    const first = await store.listTasks("", { pageSize: 3 });
    assert.deepEqual(first.tasks.map((t) => t.key.id), ["c", "a", "d"]);
    assert.equal(first.totalSize, 4);
    assert.ok(first.next !== null);
    const second = await store.listTasks("", { pageSize: 3, after: first.next });
    assert.deepEqual(second.tasks.map((t) => t.key.id), ["b"]);
    assert.equal(second.next, null);
    assert.deepEqual((await store.listTasks("", { pageSize: 10, statusAfterMs: 2 })).tasks.map((t) => t.key.id), ["c", "a", "d"]);
    assert.deepEqual((await store.listTasks("other", { pageSize: 10, state: "TASK_STATE_SUBMITTED" })).tasks.map((t) => t.key.id), ["z"]);
    assert.equal((await store.listTasks("", { pageSize: 0 })).totalSize, 4);
  });

  check("push configs need their task, list by id after a cursor, and delete", async (store) => {
    await rejects(store.putPushConfig({ task: KEY, id: "x", config: { taskId: "t-1", id: "x", url: "https://example.com/" } }), "not_found");
    await store.commit({ key: KEY, task: task("t-1"), expectedVersion: null, events: [], lease: "keep" });
    for (const id of ["b", "a", "c"]) await store.putPushConfig({ task: KEY, id, config: { taskId: "t-1", id, url: `https://example.com/${id}` } });
    assert.equal((await store.getPushConfig(KEY, "b"))?.config.url, "https://example.com/b");
    assert.deepEqual((await store.listPushConfigs(KEY, null, 2)).map((c) => c.id), ["a", "b"]);
    assert.deepEqual((await store.listPushConfigs(KEY, "b", 10)).map((c) => c.id), ["c"]);
    assert.equal(await store.deletePushConfig(KEY, "b"), true);
    assert.equal(await store.deletePushConfig(KEY, "b"), false);
    assert.equal(await store.getPushConfig(KEY, "b"), null);
  });

  check("a commit with push queues one delivery per event and config; claims lease them; done, retry and dead", async (store) => {
    await store.commit({ key: KEY, task: task("t-1"), expectedVersion: null, events: [], lease: "keep" });
    for (const id of ["b", "a"]) await store.putPushConfig({ task: KEY, id, config: { taskId: "t-1", id, url: `https://example.com/${id}` } });
    await store.commit({ key: KEY, task: task("t-1", "TASK_STATE_WORKING"), expectedVersion: 1, events: [{ event: status("t-1", "TASK_STATE_WORKING"), last: false }], lease: "keep" });
    assert.equal(await store.nextDeliveryDue(), null, "a commit without push queues nothing");
    const before = Date.now();
    const events = [status("t-1", "TASK_STATE_WORKING"), status("t-1", "TASK_STATE_COMPLETED")];
    await store.commit({ key: KEY, task: task("t-1", "TASK_STATE_COMPLETED"), expectedVersion: 2, events: events.map((event, i) => ({ event, last: i === 1 })), lease: "clear", push: true });
    const due = await store.nextDeliveryDue();
    assert.ok(due !== null && due >= before && due <= Date.now());
    const now = Date.now();
    const claimed = await store.claimDeliveries(now, now + 1_000, 10);
    assert.deepEqual(claimed.map((d) => [d.configId, d.seq, d.attempts]), [["a", 2, 0], ["a", 3, 0], ["b", 2, 0], ["b", 3, 0]]);
    assert.equal(claimed[0]?.config?.url, "https://example.com/a");
    assert.deepEqual(JSON.parse(claimed[1]?.event ?? "null"), { statusUpdate: { taskId: "t-1", contextId: "c-1", status: { state: "TASK_STATE_COMPLETED" } } });
    assert.deepEqual(await store.claimDeliveries(now, now + 1_000, 10), [], "claimed deliveries are hidden while leased");
    const [done, retried, dead] = claimed as [(typeof claimed)[0], (typeof claimed)[0], (typeof claimed)[0]];
    await store.deliveryDone(done.id);
    await store.deliveryRetry(retried.id, now + 500, "HTTP 503");
    await store.deliveryDead(dead.id, now, "HTTP 404");
    const letters = await store.deadLetters(10);
    assert.deepEqual(letters.map((l) => [l.deliveryId, l.configId, l.seq, l.attempts, l.error, l.atMs]), [[dead.id, "b", 2, 1, "HTTP 404", now]]);
    assert.equal(letters[0]?.config?.url, "https://example.com/b");
    const later = await store.claimDeliveries(now + 2_000, now + 3_000, 10);
    assert.deepEqual(later.map((d) => [d.id, d.attempts]), [[retried.id, 1], [(claimed[3] as (typeof claimed)[0]).id, 0]]);
  });

  check("leases are set by commits, renewed, released and found expired", async (store) => {
    await store.commit({ key: KEY, task: task("t-1", "TASK_STATE_WORKING"), expectedVersion: null, events: [], lease: { set: { owner: "r1", untilMs: 100 } } });
    assert.deepEqual((await store.getTask(KEY))?.lease, { owner: "r1", untilMs: 100 });
    assert.deepEqual(await store.expiredLeases(101, 10), [KEY]);
    assert.equal(await store.renewLeases("r1", [KEY, { tenant: "", id: "missing" }], 500), 1);
    assert.deepEqual(await store.expiredLeases(101, 10), []);
    assert.equal(await store.releaseLease(KEY, "r2"), false);
    assert.equal(await store.releaseLease(KEY, "r1"), true);
    assert.equal((await store.getTask(KEY))?.lease, null);
  });
}

test("the memory store keeps at most its bounds: old terminal tasks go, old events leave a gap", async () => {
  const store = new MemoryStore({ maxTasks: 2, maxEventsPerTask: 3 });
  await store.commit({ key: { tenant: "", id: "old" }, task: task("old", "TASK_STATE_COMPLETED", 1), expectedVersion: null, events: [], lease: "keep" });
  await store.commit({ key: { tenant: "", id: "live" }, task: task("live", "TASK_STATE_WORKING", 2), expectedVersion: null, events: [], lease: "keep" });
  await store.commit({ key: KEY, task: task("t-1"), expectedVersion: null, events: [1, 2, 3, 4, 5].map(() => ({ event: status("t-1", "TASK_STATE_WORKING"), last: false })), lease: "keep" });
  assert.equal(await store.getTask({ tenant: "", id: "old" }), null);
  const page = await store.readEvents(KEY, 0, 10);
  assert.equal(page.firstHeld, 3);
  assert.deepEqual(page.events.map((e) => e.seq), [3, 4, 5]);
  await rejects(store.commit({ key: { tenant: "", id: "more" }, task: task("more"), expectedVersion: null, events: [], lease: "keep" }), "backend");
});

test("the SQLite store keeps everything across a reopen", async () => {
  const path = join(SQLITE_DIR, "reopen.db");
  const first = await SqliteStore.open(path);
  await first.commit({ key: KEY, task: task("t-1", "TASK_STATE_WORKING"), expectedVersion: null, events: [{ event: status("t-1", "TASK_STATE_WORKING"), last: false }], lease: { set: { owner: "r1", untilMs: 5 } } });
  await first.putPushConfig({ task: KEY, id: "a", config: { taskId: "t-1", id: "a", url: "https://example.com/a", token: "secret" } });
  await first.close();
  const second = await SqliteStore.open(path);
  try {
    const rec = await second.getTask(KEY);
    assert.equal(rec?.version, 1);
    assert.deepEqual(rec?.task, task("t-1", "TASK_STATE_WORKING"));
    assert.deepEqual(rec?.lease, { owner: "r1", untilMs: 5 });
    assert.deepEqual((await second.readEvents(KEY, 0, 10)).events.map((e) => e.event), [status("t-1", "TASK_STATE_WORKING")]);
    assert.equal((await second.getPushConfig(KEY, "a"))?.config.token, "secret");
  } finally {
    await second.close();
  }
  await assert.rejects(second.getTask(KEY), (e: unknown) => e instanceof StoreError && e.code === "backend", "a closed store refuses");
});

test("the SQLite store commits concurrent writes together, each alone: a conflict fails only itself", async () => {
  const store = await SqliteStore.open(join(SQLITE_DIR, "group.db"));
  try {
    const keys = Array.from({ length: 20 }, (_, i) => ({ tenant: "", id: `g-${i}` }));
    const creates = keys.map((key) => store.commit({ key, task: task(key.id), expectedVersion: null, events: [{ event: { task: task(key.id) }, last: false }], lease: "keep" }));
    const duplicate = store.commit({ key: keys[0] as TaskKey, task: task("g-0"), expectedVersion: null, events: [], lease: "keep" });
    // Settled from the start: the duplicate may be refused before any create is answered.
    const results = await Promise.allSettled([...creates, duplicate]);
    assert.deepEqual(results.map((r) => r.status), [...keys.map(() => "fulfilled"), "rejected"]);
    assert.equal((await store.listTasks("", { pageSize: 0 })).totalSize, 20);
    assert.deepEqual((await store.readEvents(keys[0] as TaskKey, 0, 10)).events.map((e) => e.seq), [1]);
  } finally {
    await store.close();
  }
});

test("the SQLite store names the drivers it needs when none loads", async () => {
  let nodeSqlite = true;
  try {
    await import("node:sqlite" as string);
  } catch {
    nodeSqlite = false;
  }
  const opening = SqliteStore.open(join(SQLITE_DIR, "driver.db"), { driver: "node:sqlite" });
  if (nodeSqlite) {
    await (await opening).close();
    return;
  }
  await assert.rejects(opening, (e: unknown) => e instanceof StoreError && e.code === "backend" && /node:sqlite/.test(e.message));
});
