/**
 * Recovery (`src/a2a/server/recovery.ts`) on the memory and SQLite stores: a turn whose
 * lease ran out is ended FAILED (once, with the interrupted message and metadata, as the
 * log's last event), a live lease is left alone, a lease on an ended task is cleared
 * without an event, running turns have their leases renewed, and a turn that returns
 * with its task still WORKING gives its lease up.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import type { Task, TaskState } from "../../src/a2a/index.js";
import { A2aCore, demoCard, MemoryStore, SqliteStore, StoreError, type AgentExecutor, type TaskKey, type TaskStore } from "../../src/a2a/server/index.js";
import { within } from "../spawned.js";

const DIR = mkdtempSync(join(tmpdir(), "agentproto-a2a-recovery-"));
after(() => rmSync(DIR, { recursive: true, force: true }));
let files = 0;
const STORES: ReadonlyArray<[string, () => Promise<TaskStore>]> = [
  ["memory", async () => new MemoryStore()],
  ["sqlite", async () => SqliteStore.open(join(DIR, `recovery-${++files}.db`))],
];

const KEY: TaskKey = { tenant: "", id: "t-1" };

function task(state: TaskState): Task {
  return { id: "t-1", contextId: "c-1", status: { state, timestamp: new Date(1_000).toISOString() } };
}

/** A core that never sweeps on its own after the start (the tests sweep by hand). */
function core(store: TaskStore, executor: AgentExecutor = { execute: async () => undefined }): A2aCore {
  return new A2aCore(executor, { card: demoCard("http://127.0.0.1:1"), store, recovery: { sweepIntervalMs: 0 } });
}

for (const [name, make] of STORES) {
  test(`${name} store: an orphaned turn is ended FAILED once, with the interrupted message and metadata`, async () => {
    const store = await make();
    await store.commit({ key: KEY, task: task("TASK_STATE_WORKING"), expectedVersion: null, events: [{ event: { task: task("TASK_STATE_WORKING") }, last: false }], lease: { set: { owner: "dead", untilMs: 5 } } });
    const server = core(store);
    try {
      await server.recovery.sweep();
      await server.recovery.sweep();
      const rec = await store.getTask(KEY);
      assert.equal(rec?.state, "TASK_STATE_FAILED");
      assert.equal(rec?.lease, null);
      assert.match(rec?.task.status.message?.parts[0]?.text ?? "", /interrupted/);
      const events = (await store.readEvents(KEY, 0, 10)).events;
      assert.equal(events.length, 2, "one FAILED event, however many sweeps");
      const last = events[1];
      assert.equal(last?.last, true);
      assert.equal(last?.event.statusUpdate?.status.state, "TASK_STATE_FAILED");
      assert.deepEqual(JSON.parse(last?.event.statusUpdate?.metadata?.text ?? "null"), { agentproto: { interrupted: { replica: "dead", leaseUntilMs: 5 } } });
    } finally {
      await server.close();
      await store.close();
    }
  });

  test(`${name} store: a live lease is left alone, a lease on an ended task is cleared without an event`, async () => {
    const store = await make();
    const done: TaskKey = { tenant: "", id: "t-2" };
    await store.commit({ key: KEY, task: task("TASK_STATE_WORKING"), expectedVersion: null, events: [], lease: { set: { owner: "other", untilMs: Date.now() + 60_000 } } });
    await store.commit({ key: done, task: { ...task("TASK_STATE_INPUT_REQUIRED"), id: "t-2" }, expectedVersion: null, events: [], lease: { set: { owner: "dead", untilMs: 5 } } });
    const server = core(store);
    try {
      assert.equal(await server.recovery.sweep(), 0);
      assert.equal((await store.getTask(KEY))?.state, "TASK_STATE_WORKING");
      assert.equal((await store.getTask(done))?.lease, null);
      assert.deepEqual((await store.readEvents(done, 0, 10)).events, []);
      // The sweep's commit is refused while the lease is live.
      const rec = await store.getTask(KEY);
      await assert.rejects(
        store.commit({ key: KEY, task: task("TASK_STATE_FAILED"), expectedVersion: rec?.version ?? 0, events: [], lease: { clearExpired: Date.now() } }),
        (e: unknown) => e instanceof StoreError && e.code === "lease_live",
      );
    } finally {
      await server.close();
      await store.close();
    }
  });

  test(`${name} store: a running turn's lease is renewed; a turn that returns WORKING gives its lease up`, async () => {
    const store = await make();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = core(store, {
      async execute(cx, updater) {
        await updater.working();
        if (cx.message.messageId === "hold") await held;
      },
    });
    try {
      const first = await server.handle({ tenant: "", principal: null, lastEventId: null }, { operation: "SendMessage", params: { message: { messageId: "hold", role: "ROLE_USER", parts: [{ text: "x" }] }, configuration: { returnImmediately: true } } });
      assert.equal(first.kind, "value");
      const id = (first as { value: { task: Task } }).value.task.id;
      const before = (await store.getTask({ tenant: "", id }))?.lease;
      assert.equal(before?.owner, server.replica);
      assert.equal(await server.recovery.renew(), 1);
      const renewed = (await store.getTask({ tenant: "", id }))?.lease;
      assert.ok(renewed !== null && renewed !== undefined && renewed.untilMs >= (before?.untilMs ?? 0));
      release();
      const second = await within(
        server.handle({ tenant: "", principal: null, lastEventId: null }, { operation: "SendMessage", params: { message: { messageId: "go", role: "ROLE_USER", parts: [{ text: "x" }] } } }),
        "a turn that returns WORKING",
      );
      const id2 = (second as { value: { task: Task } }).value.task.id;
      const rec = await store.getTask({ tenant: "", id: id2 });
      assert.equal(rec?.state, "TASK_STATE_WORKING");
      assert.equal(rec?.lease, null);
    } finally {
      await server.close();
      await store.close();
    }
  });
}
