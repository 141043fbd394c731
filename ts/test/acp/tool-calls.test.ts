import assert from "node:assert/strict";
import { test } from "node:test";

import { ToolCallStore } from "../../src/acp/tool-calls.js";
import { RawJson, UnknownVariant } from "../../src/codec/values.js";

test("a tool_call creates, updates patch: a value replaces, null resets, absent keeps", () => {
  const store = new ToolCallStore();
  const created = store.applyToolCall("s", { toolCallId: "t", title: "Edit", kind: "edit", rawInput: new RawJson('{"a":1}') });
  assert.deepEqual([created.kind, created.isNew, created.previousStatus, created.statusChanged], ["created", true, null, true]);
  const updated = store.applyToolCallUpdate("s", { toolCallId: "t", status: "in_progress", kind: null, rawInput: new RawJson("null") });
  assert.deepEqual([updated.kind, updated.previousStatus, updated.status], ["updated", "pending", "in_progress"]);
  const state = store.get("s", "t");
  assert.ok(state !== undefined);
  assert.deepEqual([state.title, state.kind, state.rawInput, state.updates, state.toolCalls], ["Edit", "other", null, 1, 1]);
});

test("out-of-order sequences are accepted and said to be so", () => {
  const store = new ToolCallStore();
  const early = store.applyToolCallUpdate("s", { toolCallId: "t", status: "in_progress" });
  assert.deepEqual([early.kind, early.isNew, early.isOutOfOrder], ["created-from-update", true, true]);
  assert.equal(store.get("s", "t")?.title, "");
  const announced = store.applyToolCall("s", { toolCallId: "t", title: "Read" });
  assert.deepEqual([announced.kind, announced.isOutOfOrder], ["announced", true]);
  assert.equal(store.get("s", "t")?.status, "in_progress", "absent status kept by the upsert");
  assert.equal(store.applyToolCall("s", { toolCallId: "t", title: "Read again" }).kind, "repeated");
  assert.equal(store.get("s", "t")?.createdByUpdate, true);
});

test("status regressions are applied and flagged; final to other final counts", () => {
  const store = new ToolCallStore();
  store.applyToolCall("s", { toolCallId: "t", title: "x", status: "completed" });
  const back = store.applyToolCallUpdate("s", { toolCallId: "t", status: "in_progress" });
  assert.deepEqual([back.status, back.statusRegressed], ["in_progress", true]);
  store.applyToolCallUpdate("s", { toolCallId: "t", status: "completed" });
  assert.equal(store.applyToolCallUpdate("s", { toolCallId: "t", status: "failed" }).statusRegressed, true);
  assert.equal(store.applyToolCallUpdate("s", { toolCallId: "t", status: "failed" }).statusRegressed, false);
});

test("sessions keep first-seen order; cancel flags the unfinished; removal forgets", () => {
  const store = new ToolCallStore();
  store.apply({ sessionId: "s", update: { sessionUpdate: "tool_call", toolCallId: "b", title: "B" } });
  store.apply({ sessionId: "s", update: { sessionUpdate: "tool_call", toolCallId: "a", title: "A", status: "completed" } });
  store.apply({ sessionId: "other", update: { sessionUpdate: "tool_call_update", toolCallId: "c" } });
  assert.equal(store.apply({ sessionId: "s", update: { sessionUpdate: "plan", entries: [] } }), null);
  assert.equal(store.applyUpdate("s", new UnknownVariant("future", new RawJson('{"sessionUpdate":"future"}')) as never), null);
  assert.deepEqual(store.calls("s").map((c) => c.toolCallId), ["b", "a"]);
  assert.deepEqual(store.sessions(), ["s", "other"]);
  assert.equal(store.markCancelled("s"), 1);
  assert.equal(store.markCancelled("s"), 0);
  assert.equal(store.get("s", "b")?.cancelled, true);
  assert.equal(store.size, 3);
  assert.deepEqual(store.removeSession("s").map((c) => c.toolCallId), ["b", "a"]);
  assert.equal(store.remove("other", "c")?.toolCallId, "c");
  assert.equal(store.size, 0);
});
