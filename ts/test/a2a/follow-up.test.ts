/**
 * A follow-up message to a task whose turn is still running, as the Rust server takes it:
 * recorded in the history, run as a turn of its own beside the running one; CancelTask
 * then reaches both turns, and the task is unregistered once the last one ends.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import type { Task } from "../../src/a2a/index.js";
import { A2aCore, demoCard, MemoryStore, type CallContext } from "../../src/a2a/server/index.js";
import { within } from "../spawned.js";

const CX: CallContext = { tenant: "", principal: null, lastEventId: null };

/** Resolves once `check` holds, looking again after each event-loop turn (bounded). */
async function until(check: () => boolean, what: string): Promise<void> {
  await within(
    new Promise<void>((resolve) => {
      const look = (): void => (check() ? resolve() : void setImmediate(look));
      look();
    }),
    what,
  );
}

test("a follow-up while a turn runs gets a turn of its own; cancel reaches both", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let firstAborted = false;
  let firstEnded!: () => void;
  const firstDone = new Promise<void>((resolve) => (firstEnded = resolve));
  let seenBefore: Task | undefined;
  const store = new MemoryStore();
  const core = new A2aCore(
    {
      async execute(cx, updater) {
        if (cx.message.messageId === "first") {
          await updater.working();
          const aborted = new Promise<void>((resolve) => cx.signal.addEventListener("abort", () => resolve(), { once: true }));
          await Promise.race([held, aborted]);
          firstAborted = cx.signal.aborted;
          firstEnded();
          return;
        }
        seenBefore = cx.task;
        await updater.requireInput(updater.textMessage("say more"));
      },
    },
    { card: demoCard("http://127.0.0.1:1"), store, recovery: { sweepIntervalMs: 0 } },
  );
  try {
    const first = await core.handle(CX, { operation: "SendMessage", params: { message: { messageId: "first", role: "ROLE_USER", parts: [{ text: "start" }] }, configuration: { returnImmediately: true } } });
    const id = (first as { value: { task: Task } }).value.task.id;
    assert.equal(core.running.size, 1);

    const next = await within(
      core.handle(CX, { operation: "SendMessage", params: { message: { messageId: "next", role: "ROLE_USER", taskId: id, parts: [{ text: "more" }] } } }),
      "the follow-up's answer",
    );
    const task = (next as { value: { task: Task } }).value.task;
    assert.equal(task.status.state, "TASK_STATE_INPUT_REQUIRED");
    assert.deepEqual(
      task.history?.filter((m) => m.role === "ROLE_USER").map((m) => m.messageId),
      ["first", "next"],
    );
    assert.equal(seenBefore?.status.state, "TASK_STATE_WORKING", "the follow-up's turn sees the task as the running turn left it");
    // The first turn still runs: the task stays registered (CancelTask and lease renewal
    // find it).
    assert.deepEqual([...core.turns.values()], [1]);
    assert.equal(core.running.size, 1);

    const canceled = await within(core.handle(CX, { operation: "CancelTask", params: { id } }), "the cancel");
    assert.equal((canceled as { value: Task }).value.status.state, "TASK_STATE_CANCELED");
    await within(firstDone, "the first turn's end");
    assert.ok(firstAborted, "the cancel aborted the first turn's signal");
    await until(() => core.running.size === 0 && core.turns.size === 0, "the task unregistered");
  } finally {
    release();
    await core.close();
  }
});
