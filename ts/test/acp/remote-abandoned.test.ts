/** 10,000 Streamable HTTP connections opened and abandoned against our TypeScript server,
 * run in its own process so its memory can be read from /proc: each is an `initialize`
 * POST (an ACP connection and its agent) and then nothing. With `idleTimeout` set short,
 * the server reaps them: its peak memory stays bounded (the connections do not pile up,
 * and the 1024-connection cap holds while they do), none is left afterwards and its heap
 * is back to what it was (nothing leaked), every abandoned id is unknown (404), and a new
 * client still gets two prompt turns. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { connect } from "../../src/acp/remote/index.js";
import { Collect, ECHOED, exchange, INITIALIZE, JSON_TYPE, NEW_SESSION, twoTurns, within } from "./remote-peers.js";

const SERVER = fileURLToPath(new URL("../../fixtures/abandoned-server.js", import.meta.url));
const CONNECTIONS = 10_000;
const BATCH = 200;
const IDLE_TIMEOUT = 500;
/** The server's resident memory may grow by at most this much over its size before the
 * first connection (measured 110-120 MB on the reference machine with ~1,000 live at a
 * time, mostly garbage V8 has not collected yet: ~17 kB of heap is live per connection;
 * the bound leaves room). */
const GROWTH_BOUND_MB = 200;

/** The heap after a full collection may be this much above its size before the first
 * connection once every connection is reaped (measured ~2.5 MB, of which ~2 MB with 2,000
 * connections as with 8,000: warmed-up code, not connections; a leak of 1 kB per connection
 * would add ~8 MB). */
const LEAK_BOUND_MB = 6;

/** VmRSS and VmHWM of process `pid`, in kB. */
function memoryKb(pid: number): { VmRSS: number; VmHWM: number } {
  const found = { VmRSS: 0, VmHWM: 0 };
  for (const line of readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
    const [key, value] = line.split(":");
    if (key === "VmRSS" || key === "VmHWM") found[key] = Number.parseInt((value ?? "").trim(), 10);
  }
  return found;
}

/** One `initialize` POST, left at that: its status and connection id. */
async function abandon(url: string): Promise<[number, string | undefined]> {
  const answer = await exchange(url, "POST", JSON_TYPE, INITIALIZE);
  const id = answer.headers["acp-connection-id"];
  return [answer.status, typeof id === "string" ? id : undefined];
}

test("10,000 abandoned connections are reaped by the idle timeout in bounded memory", { skip: !existsSync("/proc/self/status"), timeout: 120_000 }, async (t) => {
  const child = spawn(process.execPath, ["--expose-gc", SERVER, String(IDLE_TIMEOUT)], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let out = "";
  let waiter: (() => void) | null = null;
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
    waiter?.();
  });
  /** The child's next line of output. */
  const line = async (what: string): Promise<string> => {
    while (!out.includes("\n")) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`);
      await within(new Promise<void>((resolve) => (waiter = resolve)), what, 30_000);
    }
    const end = out.indexOf("\n");
    const found = out.slice(0, end);
    out = out.slice(end + 1);
    return found;
  };
  /** The child's heap after a full collection, and its live ACP connections. */
  const heap = async (): Promise<[number, number]> => {
    child.kill("SIGUSR2");
    const [used, connections] = (await line("the server's heap")).split(" ").map(Number);
    return [used as number, connections as number];
  };
  try {
    const url = `http://127.0.0.1:${await line("the server's port")}/acp`;
    assert.equal((await abandon(url))[0], 200); // warmed up
    const pid = child.pid as number;
    await sleep(4 * IDLE_TIMEOUT + 1000); // that one reaped too
    const [heapBefore, none] = await heap();
    assert.equal(none, 0);
    const before = memoryKb(pid).VmRSS;
    const started = performance.now();
    const statuses = new Map<number, number>();
    const sample: string[] = [];
    for (let i = 0; i < CONNECTIONS; i += BATCH) {
      const answers = await Promise.all(Array.from({ length: BATCH }, () => abandon(url)));
      for (const [status] of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const [first] = answers;
      if (first !== undefined && first[0] === 200 && first[1] !== undefined) sample.push(first[1]);
    }
    const opening = (performance.now() - started) / 1000;
    const counted = Object.fromEntries(statuses);
    assert.deepEqual([...statuses.keys()].filter((s) => s !== 200 && s !== 503), [], JSON.stringify(counted)); // 503: the cap
    assert.ok((statuses.get(200) ?? 0) > 1024, `connections were reaped while others opened: ${JSON.stringify(counted)}`);
    const memory = memoryKb(pid);
    const growthMb = (memory.VmHWM - before) / 1024;
    t.diagnostic(`ts acp server, ${CONNECTIONS} abandoned connections in ${opening.toFixed(1)} s ${JSON.stringify(counted)}: VmHWM ${memory.VmHWM} kB, ${growthMb.toFixed(1)} MB over the ${before} kB before`);
    assert.ok(growthMb < GROWTH_BOUND_MB, JSON.stringify(memory));
    // Once the idle timeout (and the reaper's period) has passed, with room for a loaded
    // machine, every one is gone, the last opened too. Asking is activity that would keep
    // a live connection, so each id is asked once.
    await sleep(4 * IDLE_TIMEOUT + 2000);
    const [heapAfter, left] = await heap();
    assert.equal(left, 0);
    const leakedMb = (heapAfter - heapBefore) / 1024 / 1024;
    t.diagnostic(`ts acp server heap after reaping: ${leakedMb.toFixed(2)} MB over before`);
    assert.ok(leakedMb < LEAK_BOUND_MB, `${heapAfter} bytes of heap after, ${heapBefore} before`);
    const known: number[] = [];
    for (const id of sample) known.push((await exchange(url, "POST", { ...JSON_TYPE, "acp-connection-id": id }, NEW_SESSION)).status);
    assert.deepEqual(known, sample.map(() => 404));
    // And the server still serves.
    const client = new Collect();
    const remote = await connect(url, client);
    try {
      assert.deepEqual(await twoTurns(remote.agent, client), ECHOED);
    } finally {
      await remote.close();
    }
  } finally {
    child.kill("SIGKILL");
    await within(exited, "the server to exit");
  }
});
