/** `agentproto/a2a` loads only what a browser has: no `node:` module, nothing of ACP, the
 * JSON-RPC connection or the sync channel (the client on `fetch` will run in browsers). */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

const ENTRY = new URL("../../src/a2a/index.js", import.meta.url);

test("the A2A entry point loads no node: module and nothing of ACP", () => {
  // A child process imports the entry point with a resolve hook that prints every module
  // the import resolves.
  const hook = `export async function resolve(s, c, next) { const r = await next(s, c); console.log(r.url); return r; }`;
  const script = [
    'import { register } from "node:module";',
    `register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hook)}));`,
    `await import(${JSON.stringify(ENTRY.href)});`,
  ].join("\n");
  const probe = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
  assert.equal(probe.status, 0, probe.stderr);
  const loaded = probe.stdout.split("\n").filter((l) => l !== "" && !l.startsWith("data:"));
  assert.ok(loaded.some((l) => l.endsWith("/generated/a2a/v1.codec.js")), loaded.join(" "));
  for (const url of loaded) {
    assert.ok(url.startsWith("file:"), `the A2A entry point loaded ${url}`);
    assert.ok(!/\/(acp|jsonrpc|sync)\//.test(url), `the A2A entry point loaded ${url}`);
  }
});
