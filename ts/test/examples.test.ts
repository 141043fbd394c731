/** The two example programs over real pipes: run-prompt against echo-agent, the echo
 * agent honouring `session/cancel`, and a spawned agent's whole process group going
 * when it is closed. Every child is closed or killed on every path. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import * as v1 from "../src/acp/v1.js";
import { Collect, within } from "./spawned.js";

const EXAMPLES = fileURLToPath(new URL("../examples/", import.meta.url));
const ECHO = join(EXAMPLES, "echo-agent.js");
const RUN_PROMPT = join(EXAMPLES, "run-prompt.js");

/** Runs a command to its end (bounded; its group is killed on timeout). */
async function runCommand(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  try {
    const code = await within(closed, `${args.join(" ")} to end`);
    return { code, stdout, stderr };
  } finally {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // the group is gone already
    }
  }
}

test("run-prompt runs a prompt against echo-agent, allowing its tool call", async () => {
  const run = await runCommand([RUN_PROMPT, "--allow", "--prompt", "please use a tool now", "--", process.execPath, ECHO, "--delay", "0"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "please use a tool now\n");
  assert.match(run.stderr, /\[tool\] echo-tool Pretend to edit a file/);
  assert.match(run.stderr, /\[permission\] echo-tool -> Allow/);
  assert.match(run.stderr, /"status":"completed"/);
  assert.match(run.stderr, /\[stop\] end_turn/);
});

test("run-prompt rejects by default, and exits 2 without an agent command", async () => {
  const run = await runCommand([RUN_PROMPT, "--prompt", "tool", "--", process.execPath, ECHO, "--delay", "0"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /\[permission\] echo-tool -> Reject/);
  assert.match(run.stderr, /"status":"failed"/);
  const usage = await runCommand([RUN_PROMPT, "--allow"]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /usage: run-prompt/);
});

test("echo-agent ends a cancelled turn with `cancelled` and stops streaming", async () => {
  const client = new Collect();
  const { agent, process: child } = await v1.spawnAgent([process.execPath, ECHO, "--delay", "0.03"], client);
  try {
    await within(agent.initialize({ protocolVersion: v1.PROTOCOL_VERSION }), "initialize");
    const { sessionId } = await within(agent.newSession({ cwd: "/", mcpServers: [] }), "session/new");
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    const turn = agent.prompt({ sessionId, prompt: [{ type: "text", text: words }] });
    await within(client.chunksArrived(1), "the first chunk");
    await agent.cancel({ sessionId });
    const answer = await within(turn, "the cancelled turn");
    assert.equal(answer.stopReason, "cancelled");
    assert.ok(client.chunks.length < 200, `all ${client.chunks.length} words were streamed`);
    // The session still works after the cancel.
    const again = await within(agent.prompt({ sessionId, prompt: [{ type: "text", text: "x" }] }), "the next turn");
    assert.equal(again.stopReason, "end_turn");
  } finally {
    assert.equal(await child.close(), 0, "the agent exits by itself once its stdin closes");
  }
});

test("closing a spawned agent kills its whole process group", async () => {
  const dir = mkdtempSync(join(tmpdir(), "agentproto-ts-"));
  const pidFile = join(dir, "sleeper.pid");
  const script = `sleep 1000 & echo $! > '${pidFile}'; exec '${process.execPath}' '${ECHO}'`;
  const { agent, process: child } = await v1.spawnAgent(["sh", "-c", script], new Collect());
  let sleeper = 0;
  try {
    await within(agent.initialize({ protocolVersion: v1.PROTOCOL_VERSION }), "initialize");
    sleeper = Number(readFileSync(pidFile, "utf8").trim());
    assert.ok(sleeper > 0);
    assert.equal(alive(sleeper), true);
  } finally {
    await child.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // SIGKILL was sent to the group; the sleeper is gone (or a zombie) once the kernel delivered it.
  await within(
    (async () => {
      while (alive(sleeper)) await new Promise<void>((resolve) => setImmediate(resolve));
    })(),
    "the sleeper to die",
  );
});

/** Whether `pid` runs (a zombie counts as dead). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
