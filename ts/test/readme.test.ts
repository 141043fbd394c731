/** The agent of `ts/README.md` is `fixtures/readme-agent.ts` word for word (but for its import),
 * and its client snippet is the marked part of `fixtures/readme-client.ts`, so both compile with
 * the tests; both work: the agent spawned and prompted over real pipes, the client
 * snippet run as a program against that agent. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import * as v1 from "../src/acp/v1.js";
import { Collect, within } from "./spawned.js";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));
const SOURCE = fileURLToPath(new URL("../../fixtures/readme-agent.ts", import.meta.url));
const COMPILED = fileURLToPath(new URL("../fixtures/readme-agent.js", import.meta.url));
const CLIENT_SOURCE = fileURLToPath(new URL("../../fixtures/readme-client.ts", import.meta.url));
const CLIENT = fileURLToPath(new URL("../fixtures/readme-client.js", import.meta.url));

const blocks = (): string[] => [...readFileSync(README, "utf8").matchAll(/```ts\n(.*?)```/gs)].map((m) => m[1] as string);

test("the README's agent is readme-agent.ts", () => {
  const source = readFileSync(SOURCE, "utf8").replace('from "../src/acp/v1.js"', 'from "agentproto/acp/v1"');
  assert.ok(blocks().includes(source), "no ```ts block of the README equals fixtures/readme-agent.ts");
  assert.ok(source.split("\n").length <= 22, "the README agent stays short");
});

test("the README's agent streams the prompt back", async () => {
  const client = new Collect();
  const { agent, process: child } = await v1.spawnAgent(["node", COMPILED], client);
  try {
    await within(agent.initialize({ protocolVersion: v1.PROTOCOL_VERSION }), "initialize");
    const { sessionId } = await within(agent.newSession({ cwd: "/", mcpServers: [] }), "session/new");
    const prompt: v1.ContentBlock[] = [
      { type: "text", text: "hello" },
      { type: "text", text: "world" },
    ];
    const answer = await within(agent.prompt({ sessionId, prompt }), "session/prompt");
    assert.deepEqual([answer.stopReason, client.chunks], ["end_turn", ["hello", "world"]]);
  } finally {
    // It exits on its own when its stdin closes.
    assert.equal(await child.close(), 0);
  }
});

test("the README's client snippet runs a prompt against the README's agent", async () => {
  const marked = /\/\/ README begin\n(.*)\/\/ README end\n/s.exec(readFileSync(CLIENT_SOURCE, "utf8"));
  assert.ok(marked !== null);
  assert.ok(blocks().includes(marked[1] as string), "no ```ts block of the README equals the marked part of fixtures/readme-client.ts");
  const dir = mkdtempSync(join(tmpdir(), "agentproto-readme-"));
  writeFileSync(join(dir, "agent.js"), `import ${JSON.stringify(pathToFileURL(COMPILED).href)};\n`);
  const child = spawn(process.execPath, [CLIENT], { cwd: dir, stdio: ["ignore", "pipe", "inherit"], detached: true });
  let stdout = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  try {
    const code = await within(new Promise<number | null>((resolve) => child.on("close", resolve)), "the client snippet");
    assert.equal(code, 0);
    assert.equal(stdout, "end_turn\nhi\n");
  } finally {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // the group is gone already
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
