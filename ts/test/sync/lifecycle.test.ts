// The server child's life: a failed start, a request that hangs until a
// watchdog thread kills the group, and servers ended when their owner exits.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { SyncClient } from "../../src/sync/client.js";
import { ChildExitedError, SpawnError } from "../../src/sync/errors.js";
import { running, signalGroup } from "../../src/sync/process.js";
import { DEADLINE_MS, Watchdog } from "./support.js";

test("a command that cannot start is a SpawnError, thrown at once", () => {
  assert.throws(() => SyncClient.spawn("/nonexistent/agentproto-sync-server"), SpawnError);
});

test("a request that never gets an answer ends when a watchdog thread kills the group", async () => {
  // The server reads nothing and answers nothing; only the kill ends the request.
  const client = SyncClient.spawn("sh", ["-c", "exec sleep 600"]);
  const watchdog = new Watchdog(client, 300);
  try {
    assert.throws(
      () => client.request("echo", "anyone?"),
      (error: unknown) => error instanceof ChildExitedError && error.status?.signal === "SIGKILL",
    );
    await assert.rejects(watchdog.finish(), /a request hung/, "the watchdog reports that it killed the child");
    assert.ok(!running(client.pid));
  } finally {
    client.close();
  }
});

test("servers still open when their owner exits are killed with their groups", async () => {
  // The owner opens a client to a server that ignores its input (and so would
  // outlive the owner), prints the server's pid, and exits without closing.
  // The server inherits the owner's stderr pipe: that pipe closes only when
  // the server is gone too, which is what `close` waits for here.
  const clientModule = new URL("../../src/sync/client.js", import.meta.url).href;
  const owner = `import { SyncClient } from ${JSON.stringify(clientModule)};
    const client = SyncClient.spawn("sh", ["-c", "exec sleep 600"]);
    process.stdout.write(String(client.pid));
    process.exit(0);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", owner], { stdio: ["ignore", "pipe", "pipe"], detached: true });
  const ownerPid = child.pid ?? assert.fail("spawn");
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.resume();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    signalGroup(ownerPid, "SIGKILL");
    if (/^\d+$/.test(output)) signalGroup(Number(output), "SIGKILL");
  }, DEADLINE_MS);
  try {
    const code = await new Promise((done) => child.once("close", done));
    assert.ok(!timedOut, "the server outlived its owner");
    assert.equal(code, 0);
    assert.match(output, /^\d+$/);
    assert.ok(!running(Number(output)));
  } finally {
    clearTimeout(timer);
    signalGroup(ownerPid, "SIGKILL");
  }
});
