/** The network contract of the examples, as the README states it: `echo-agent --listen
 * HOST:PORT` serves at `http://HOST:PORT/acp`; `run-prompt --url URL [--ws]` runs a
 * prompt against it. Real processes, real sockets on 127.0.0.1; every child's group is
 * killed on every path. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { within } from "./spawned.js";

const EXAMPLES = fileURLToPath(new URL("../examples/", import.meta.url));
const ECHO = join(EXAMPLES, "echo-agent.js");
const RUN_PROMPT = join(EXAMPLES, "run-prompt.js");

interface Started {
  readonly exited: Promise<number | null>;
  out(): string;
  err(): string;
  /** Resolves with the first match of `pattern` in stderr (rejects if the child exits first). */
  waitErr(pattern: RegExp): Promise<RegExpExecArray>;
  kill(): void;
}

function start(args: string[]): Started {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    exited,
    out: () => stdout,
    err: () => stderr,
    waitErr: (pattern) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const found = pattern.exec(stderr);
          if (found === null) return;
          child.stderr.off("data", check);
          resolve(found);
        };
        child.stderr.on("data", check);
        void exited.then(() => reject(new Error(`the child exited: ${stderr}`)));
        check();
      }),
    kill() {
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {
        // the group is gone already
      }
    },
  };
}

for (const ws of [[], ["--ws"]]) {
  test(`run-prompt --url${ws.length > 0 ? " --ws" : ""} reaches echo-agent --listen`, async () => {
    const agent = start([ECHO, "--listen", "127.0.0.1:0", "--delay", "0"]);
    try {
      // The line comes once the socket is bound: connections queue until it accepts them.
      const url = (await within(agent.waitErr(/listening on (http:\/\/\S+\/acp)\n/), "echo-agent to listen"))[1] as string;
      const run = start([RUN_PROMPT, "--allow", "--url", url, ...ws, "--prompt", "hello over the tool network"]);
      try {
        assert.equal(await within(run.exited, "run-prompt to end"), 0, run.err());
        assert.equal(run.out(), "hello over the tool network\n");
        assert.match(run.err(), /\[permission\] echo-tool -> Allow/);
        assert.match(run.err(), /\[stop\] end_turn\s*$/);
      } finally {
        run.kill();
      }
    } finally {
      agent.kill();
      await within(agent.exited, "echo-agent to exit");
    }
  });
}

test("run-prompt reports an unreachable URL, and --ws without --url is a usage error", async () => {
  const run = start([RUN_PROMPT, "--url", "http://127.0.0.1:1/acp", "--ws"]);
  try {
    assert.equal(await within(run.exited, "run-prompt to end"), 1);
    assert.match(run.err(), /cannot connect/);
  } finally {
    run.kill();
  }
  const usage = start([RUN_PROMPT, "--ws", "--prompt", "x"]);
  try {
    assert.equal(await within(usage.exited, "run-prompt to end"), 2);
    assert.match(usage.err(), /--ws needs --url/);
  } finally {
    usage.kill();
  }
});
