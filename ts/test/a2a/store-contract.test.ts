/**
 * The store contract (`src/a2a/server/store.ts`) every A2A store passes: versioned
 * commits with optimistic concurrency, the event log read from a sequence number, list
 * order and pagination, push configs, leases. Parameterised over stores: a new store
 * (part 3's SQLite store) adds a row to `STORES`.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import type { StreamResponse, Task, TaskState } from "../../src/a2a/index.js";
import { MemoryStore, StoreError, type TaskKey, type TaskStore } from "../../src/a2a/server/index.js";

/** The stores under test: a name and a factory of a fresh, empty store. */
const STORES: ReadonlyArray<[string, () => Promise<TaskStore>]> = [["memory", async () => new MemoryStore()]];

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
