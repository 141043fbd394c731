/** Spawned agents: the process group dies with its client, however the client leaves
 * (normal exit, uncaught exception), even without `close()`; an agent that ignores its
 * stdin is killed after the grace; one that dies fails the pending call; Ctrl-C in
 * run-prompt cancels the turn. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ConnectionFailed } from "../src/acp/errors.js";
import * as v1 from "../src/acp/v1.js";
import { Collect, within } from "./spawned.js";

const CLIENT = fileURLToPath(new URL("../fixtures/orphan-client.js", import.meta.url));
const ECHO = fileURLToPath(new URL("../examples/echo-agent.js", import.meta.url));
const RUN_PROMPT = fileURLToPath(new URL("../examples/run-prompt.js", import.meta.url));

/** Whether `pid` runs (a zombie counts as dead). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

for (const mode of ["exit", "throw"]) {
  test(`the agent's group dies when the client leaves by ${mode}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentproto-orphan-"));
    const pidFile = join(dir, "pids");
    // No pipes: an agent that outlives its client must not keep this process waiting on them.
    const client = spawn(process.execPath, [CLIENT, mode, pidFile], { stdio: "ignore", detached: true });
    const exited = new Promise<number | null>((resolve) => client.on("exit", (code) => resolve(code)));
    let pids: number[] = [];
    try {
      const code = await within(exited, "the client to end");
      assert.equal(code, mode === "exit" ? 0 : 1);
      pids = readFileSync(pidFile, "utf8").trim().split(" ").map(Number);
      assert.equal(pids.length, 2);
      await within(
        (async () => {
          while (pids.some(alive)) await new Promise<void>((resolve) => setImmediate(resolve));
        })(),
        "the agent and its group to die",
      );
    } finally {
      if (pids.length === 0) {
        try {
          pids = readFileSync(pidFile, "utf8").trim().split(" ").map(Number);
        } catch {
          // the agent was never started
        }
      }
      for (const pgid of [client.pid as number, pids[0] ?? 0]) {
        try {
          if (pgid > 0) process.kill(-pgid, "SIGKILL");
        } catch {
          // gone already
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("an agent that ignores its stdin is killed after the grace", async () => {
  const { process: child } = await v1.spawnAgent(["sleep", "1000"], new Collect(), { exitGrace: 200 });
  assert.equal(await within(child.close(), "close"), null);
  assert.equal(child.child.signalCode, "SIGKILL");
});

test("an agent that dies fails the pending call", async () => {
  const { agent, process: child } = await v1.spawnAgent(["sh", "-c", "read line; exit 3"], new Collect());
  try {
    await assert.rejects(within(agent.initialize({ protocolVersion: v1.PROTOCOL_VERSION }), "initialize"), ConnectionFailed);
  } finally {
    assert.equal(await child.close(), 3);
  }
});

test("spawning a missing program rejects", async () => {
  await assert.rejects(v1.spawnAgent(["/nonexistent/agentproto-agent"], new Collect()), /ENOENT/);
});

test("Ctrl-C in run-prompt cancels the turn, which ends `cancelled`", async () => {
  const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ");
  const child = spawn(process.execPath, [RUN_PROMPT, "--prompt", words, "--", process.execPath, ECHO, "--delay", "0.02"], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  try {
    await within(new Promise<void>((resolve) => child.stdout.once("data", () => resolve())), "the first word");
    child.stdout.resume();
    process.kill(child.pid as number, "SIGINT");
    assert.equal(await within(closed, "run-prompt to end"), 0, stderr);
    assert.match(stderr, /\[stop\] cancelled/);
  } finally {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // gone already
    }
  }
});
