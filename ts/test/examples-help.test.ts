/** `--help` and bad command lines of both example programs: usage on stdout and exit 0,
 * or usage on stderr and exit 2. Every child's group is killed on every path. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { within } from "./spawned.js";

const EXAMPLES = fileURLToPath(new URL("../examples/", import.meta.url));

async function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // stdin stays open and empty: an example that started serving instead of exiting would time out.
  const child = spawn(process.execPath, [join(EXAMPLES, script), ...args], { stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  try {
    return { code: await within(closed, `${script} ${args.join(" ")} to end`), stdout, stderr };
  } finally {
    child.stdin.destroy();
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // the group is gone already
    }
  }
}

for (const [script, name] of [
  ["run-prompt.js", "run-prompt"],
  ["echo-agent.js", "echo-agent"],
] as const) {
  for (const flag of ["--help", "-h"]) {
    test(`${name} ${flag} prints its usage on stdout and exits 0`, async () => {
      const out = await run(script, [flag]);
      assert.equal(out.code, 0, out.stderr);
      assert.match(out.stdout, new RegExp(`^usage: ${name} `));
      assert.match(out.stdout, /--help/);
      assert.equal(out.stderr, "");
    });
  }

  test(`${name} with an unknown flag prints the usage on stderr and exits 2`, async () => {
    const out = await run(script, ["--frobnicate"]);
    assert.equal(out.code, 2);
    assert.equal(out.stdout, "");
    assert.match(out.stderr, new RegExp(`^${name}: unknown argument --frobnicate\\nusage: ${name} `));
  });
}

test("echo-agent refuses a --delay that is not a number (exit 2)", async () => {
  const out = await run("echo-agent.js", ["--delay", "soon"]);
  assert.equal(out.code, 2);
  assert.match(out.stderr, /--delay needs a number of seconds, found soon/);
});
