/** The network snippet of `ts/README.md` is the marked part of `fixtures/readme-remote.ts`
 * word for word, and that program runs: it serves, connects over WebSocket, prompts. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { within } from "./spawned.js";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));
const SOURCE = fileURLToPath(new URL("../../fixtures/readme-remote.ts", import.meta.url));
const PROGRAM = fileURLToPath(new URL("../fixtures/readme-remote.js", import.meta.url));

test("the README's network snippet serves, connects and prompts", async () => {
  const marked = /\/\/ README begin\n(.*)\/\/ README end\n/s.exec(readFileSync(SOURCE, "utf8"));
  assert.ok(marked !== null);
  const blocks = [...readFileSync(README, "utf8").matchAll(/```ts\n(.*?)```/gs)].map((m) => m[1] as string);
  assert.ok(blocks.includes(marked[1] as string), "no ```ts block of the README equals the marked part of fixtures/readme-remote.ts");
  const child = spawn(process.execPath, [PROGRAM], { stdio: ["ignore", "pipe", "inherit"], detached: true });
  let stdout = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  try {
    const code = await within(new Promise<number | null>((resolve) => child.on("close", resolve)), "the network snippet");
    assert.equal(code, 0);
    assert.equal(stdout, "end_turn\nhi\n");
  } finally {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // the group is gone already
    }
  }
});
