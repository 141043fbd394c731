/** ACP over the network against other implementations, over real sockets on 127.0.0.1,
 * two prompt turns each with streamed updates, over Streamable HTTP and WebSocket:
 *
 * - the official TypeScript SDK (2.4.0, `interop/official/acp-ts/remote.mjs`): its
 *   client against our agent, our client against its `AcpServer`;
 * - our Python SDK: our client against `python -m agentproto.examples.echo_agent
 *   --listen`, and `python -m agentproto.examples.run_prompt --url` against our agent.
 *
 * Every child process is ended on every path; every wait is bounded. */

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { connect } from "../../src/acp/remote/index.js";
import { Collect, ECHOED, echoServer, PROMPTS, serving, twoTurns, within } from "./remote-peers.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const OFFICIAL = `${ROOT}interop/official/acp-ts/remote.mjs`;
const OFFICIAL_INSTALLED = existsSync(`${ROOT}interop/official/acp-ts/node_modules/ws/package.json`);
const VENV_PYTHON = `${ROOT}.venv/bin/python`;
const PYTHON = existsSync(VENV_PYTHON) ? VENV_PYTHON : "python3";
const SLOW = 20_000;

interface Official {
  officialTurns(url: string, options: { websocket: boolean; prompts: string[] }): Promise<{ turns: [string, string[]][]; permissions: number }>;
  serveOfficial(): Promise<{ url: string; close(): Promise<void> }>;
}

async function official(): Promise<Official> {
  return (await import(OFFICIAL)) as Official;
}

const skipOfficial = OFFICIAL_INSTALLED ? false : "the official SDK is not installed (npm ci --prefix interop/official/acp-ts)";

for (const websocket of [false, true]) {
  const over = websocket ? "WebSocket" : "Streamable HTTP";

  test(`the official TypeScript client runs two turns against our agent over ${over}`, { skip: skipOfficial }, async () => {
    const { officialTurns } = await official();
    await serving(echoServer(), async (url) => {
      const result = await within(officialTurns(url, { websocket, prompts: ["alpha beta gamma delta", "now a tool please"] }), "the official client's turns", SLOW);
      // Our agent streams each word with the space after it; the official client must
      // have handled every update of a turn before its prompt call returned.
      assert.deepEqual(result.turns, [
        ["end_turn", ["alpha ", "beta ", "gamma ", "delta"]],
        ["end_turn", ["now ", "a ", "tool ", "please"]],
      ]);
      assert.equal(result.permissions, 1);
    });
  });

  test(`our client runs two turns against the official AcpServer over ${over}`, { skip: skipOfficial }, async () => {
    const { serveOfficial } = await official();
    const server = await serveOfficial();
    try {
      const client = new Collect();
      const remote = await within(connect(server.url, client, { websocket }), "connecting");
      try {
        const turns = await within(twoTurns(remote.agent, client), "the turns", SLOW);
        assert.deepEqual(turns, [
          ["end_turn", `${PROMPTS[0]} `, 8],
          ["end_turn", `${PROMPTS[1]} `, 4],
        ]);
        assert.ok(remote.connectionId);
      } finally {
        await remote.close();
      }
    } finally {
      await within(server.close(), "the official server to stop");
    }
  });

  test(`our client runs two turns against our Python agent over ${over}`, async () => {
    const agent = spawnGroup(PYTHON, ["-m", "agentproto.examples.echo_agent", "--listen", "127.0.0.1:0", "--delay", "0"]);
    try {
      const url = await within(listeningUrl(agent.child), "the Python agent to listen", SLOW);
      const client = new Collect();
      const remote = await within(connect(url, client, { websocket }), "connecting");
      try {
        assert.deepEqual(await within(twoTurns(remote.agent, client), "the turns", SLOW), ECHOED);
      } finally {
        await remote.close();
      }
    } finally {
      await agent.end();
    }
  });

  test(`the Python run_prompt example reaches our agent over ${over}`, async () => {
    await serving(echoServer(), async (url) => {
      const args = ["-m", "agentproto.examples.run_prompt", "--allow", "--url", url, ...(websocket ? ["--ws"] : []), "--prompt", "hello over the tool network"];
      const run = spawnGroup(PYTHON, args);
      try {
        const code = await within(run.exited, "run_prompt to end", SLOW);
        assert.equal(code, 0, run.stderr());
        assert.equal(run.stdout(), "hello over the tool network\n");
        assert.match(run.stderr(), /\[permission\] echo-tool -> Allow/);
        assert.match(run.stderr(), /\[stop\] end_turn\s*$/);
      } finally {
        await run.end();
      }
    });
  });
}

/** A child in a process group of its own, its output kept; `end()` kills the group. */
function spawnGroup(command: string, args: string[]): { child: ChildProcess; exited: Promise<number | null>; stdout(): string; stderr(): string; end(): Promise<void> } {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], detached: true, cwd: ROOT });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => {
    child.on("close", (code) => resolve(code));
    child.on("error", () => resolve(null));
  });
  return {
    child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async end() {
      try {
        process.kill(-(child.pid as number), "SIGTERM");
      } catch {
        return; // the group is gone already
      }
      await within(exited, "the child to exit").catch(() => {
        try {
          process.kill(-(child.pid as number), "SIGKILL");
        } catch {
          // gone meanwhile
        }
      });
    },
  };
}

/** The URL an example prints once its socket is bound (`listening on URL` on stderr). */
function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (data: Buffer): void => {
      seen += data.toString("utf8");
      const found = /listening on (http:\/\/\S+\/acp)/.exec(seen);
      if (found !== null) {
        child.stderr?.off("data", onData);
        resolve(found[1] as string);
      }
    };
    child.stderr?.on("data", onData);
    child.on("close", () => reject(new Error(`the agent exited before listening: ${seen}`)));
  });
}
