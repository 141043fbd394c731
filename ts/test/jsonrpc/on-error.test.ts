/** Handler failures reach the developer: `ConnectionOptions.onError`, by default one
 * `console.error` line naming the method and the request id. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { RequestError, type HandlerFailure } from "../../src/jsonrpc/index.js";
import { handler, setup, within } from "./harness.js";

const failing = handler(
  async (r) => {
    if (r.method === "chosen") throw new RequestError(4242, "chosen");
    throw new Error(`failed ${r.method}`);
  },
  async (n) => {
    throw new Error(`failed ${n.method}`);
  },
);

/** Runs `work` with `console.error` recorded. */
async function capturingConsole(work: () => Promise<void>): Promise<unknown[][]> {
  const original = console.error;
  const lines: unknown[][] = [];
  console.error = (...args: unknown[]) => lines.push(args);
  try {
    await work();
  } finally {
    console.error = original;
  }
  return lines;
}

test("by default a failed request handler and a failed notification handler are written to console.error", async () => {
  const lines = await capturingConsole(async () => {
    const { remote, running } = setup(failing);
    await remote.send({ jsonrpc: "2.0", id: 7, method: "work" });
    assert.equal((await remote.next()).error.code, -32603);
    await remote.send({ jsonrpc: "2.0", method: "note" });
    // A request sent after the notification is answered after it was handled.
    await remote.send({ jsonrpc: "2.0", id: 8, method: "chosen" });
    assert.equal((await remote.next()).error.code, 4242);
    await remote.close();
    await within(running, "run ends");
  });
  assert.equal(lines.length, 2, "a RequestError is an answer, not a failure");
  assert.match(String(lines[0]?.[0]), /request `work` \(id 7\) failed/);
  assert.equal((lines[0]?.[1] as Error).message, "failed work");
  assert.match(String(lines[1]?.[0]), /notification `note` failed/);
  assert.equal((lines[1]?.[1] as Error).message, "failed note");
});

test("a custom onError receives method, id and error; null reports to no one", async () => {
  const seen: HandlerFailure[] = [];
  const lines = await capturingConsole(async () => {
    const custom = setup(failing, { onError: (f) => seen.push(f) });
    await custom.remote.send({ jsonrpc: "2.0", id: "a", method: "work" });
    await custom.remote.next();
    await custom.remote.send({ jsonrpc: "2.0", method: "note" });
    await custom.remote.send({ jsonrpc: "2.0", id: "b", method: "chosen" });
    await custom.remote.next();
    await custom.remote.close();
    await within(custom.running, "run ends");

    const quiet = setup(failing, { onError: null });
    await quiet.remote.send({ jsonrpc: "2.0", id: 1, method: "work" });
    assert.equal((await quiet.remote.next()).error.message, "internal error: request handler failed");
    await quiet.remote.close();
    await within(quiet.running, "run ends");
  });
  assert.deepEqual(
    seen.map((f) => [f.method, f.id, (f.error as Error).message]),
    [
      ["work", "a", "failed work"],
      ["note", null, "failed note"],
    ],
  );
  assert.deepEqual(lines, []);
});

test("a throwing onError changes nothing on the connection", async () => {
  const { remote, running } = setup(failing, {
    onError: () => {
      throw new Error("the reporter failed");
    },
  });
  await remote.send({ jsonrpc: "2.0", id: 1, method: "work" });
  assert.equal((await remote.next()).error.code, -32603);
  await remote.send({ jsonrpc: "2.0", id: 2, method: "work" });
  assert.equal((await remote.next()).id, 2);
  await remote.close();
  await within(running, "run ends");
});
