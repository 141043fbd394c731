/** ACP over the network against the official Rust transport crate,
 * `agent-client-protocol-http` 5.0.0 (with the official SDK 5.2.0), over real sockets on
 * 127.0.0.1: our TypeScript client against its server (`remote-agent`) and its client
 * (`remote-client`) against our agent, over Streamable HTTP and WebSocket, two prompt
 * turns each with every streamed update handled before its turn's answer. Both programs
 * live in `interop/official/acp-rust/` (its `remote` feature) and are built into
 * `target/interop-official-rust`, as the Rust suite's `remote_official_rust` test
 * does (after it, here only checked up to date). Every child is ended; every wait bounded. */

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { connect } from "../../src/acp/remote/index.js";
import { Collect, ECHOED, echoServer, serving, twoTurns, within } from "./remote-peers.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const TARGET = `${ROOT}target/interop-official-rust`;
const SLOW = 20_000;

/** Builds (or finds up to date) the official peers: an error message, or null. */
function build(): string | null {
  const cargo = process.env["CARGO"] ?? "cargo";
  const args = ["build", "--locked", "--quiet", "--features", "remote", "--bin", "remote-agent", "--bin", "remote-client"];
  args.push("--manifest-path", `${ROOT}interop/official/acp-rust/Cargo.toml`);
  const done = spawnSync(cargo, args, { env: { ...process.env, CARGO_TARGET_DIR: TARGET }, stdio: ["ignore", "inherit", "inherit"], timeout: 1_500_000 });
  return done.status === 0 ? null : `building interop/official/acp-rust failed: ${String(done.error ?? done.status)}`;
}

let built: string | null | undefined;
function official(name: string): string {
  built ??= build();
  if (built !== null) throw new Error(built);
  return `${TARGET}/debug/${name}`;
}

/** The official server on 127.0.0.1, for the length of `body`. */
async function officialServer<T>(body: (url: string) => Promise<T>): Promise<T> {
  const child = spawn(official("remote-agent"), [], { stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const url = await within(
      new Promise<string>((resolve, reject) => {
        let err = "";
        child.stderr.on("data", (chunk: Buffer) => {
          err += chunk.toString("utf8");
          const at = err.indexOf("http://");
          if (at >= 0 && err.indexOf("\n", at) > at) resolve(err.slice(at, err.indexOf("\n", at)).trim());
        });
        child.once("exit", (code) => reject(new Error(`the official server exited (${code}): ${err}`)));
      }),
      "the official server's URL",
      SLOW,
    );
    return await body(url);
  } finally {
    child.kill("SIGKILL");
    await within(exited, "the official server to exit");
  }
}

/** The official client against `url`, to completion: its stdout. */
async function officialClient(url: string, websocket: boolean): Promise<string> {
  const child = spawn(official("remote-client"), websocket ? [url, "--ws"] : [url], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const code = new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c))); // close: its output read
  try {
    assert.equal(await within(code, "the official client to finish", SLOW), 0, err);
    return out;
  } finally {
    child.kill("SIGKILL");
  }
}

for (const websocket of [false, true]) {
  const over = websocket ? "WebSocket" : "Streamable HTTP";

  test(`our client runs two turns against the official Rust server over ${over}`, { timeout: 1_600_000 }, async () => {
    await officialServer(async (url) => {
      const client = new Collect();
      const remote = await within(connect(url, client, { websocket }), "connecting");
      try {
        // That server streams each word (with the space after it but the last) first.
        assert.deepEqual(await twoTurns(remote.agent, client), ECHOED);
      } finally {
        await remote.close();
      }
    });
  });

  test(`the official Rust client runs two turns against our agent over ${over}`, { timeout: 1_600_000 }, async () => {
    await serving(echoServer(), async (url) => {
      // Every update of a turn was handled before its prompt call returned.
      assert.equal(await officialClient(url, websocket), '["end_turn","alpha beta gamma delta"]\n["end_turn","epsilon zeta"]\n');
    });
  });
}
