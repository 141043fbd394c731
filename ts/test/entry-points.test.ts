/**
 * The package's entry points: every one in `package.json` resolves to a built module,
 * and a surface's `codec` entry point (messages without a connection) is the same
 * surface its full entry point re-exports, without loading the roles.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import * as codec from "../src/acp/v1-codec.js";
import * as v1 from "../src/acp/v1.js";

const ROOT = new URL("../../", import.meta.url);

test("every entry point of package.json names a built module and its types", () => {
  const manifest = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as {
    exports: Record<string, { types: string; default: string }>;
  };
  assert.ok("./acp/v1/codec" in manifest.exports);
  for (const [name, entry] of Object.entries(manifest.exports)) {
    for (const file of [entry.default, entry.types]) {
      assert.ok(existsSync(fileURLToPath(new URL(file, ROOT))), `${name}: ${file} is missing`);
    }
  }
});

test("the codec entry point is the surface the full entry point re-exports", () => {
  assert.equal(codec.SURFACE, v1.SURFACE);
  assert.equal(codec.AGENT, v1.AGENT);
  assert.equal(codec.classify, v1.classify);
  const line = '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}';
  const incoming = codec.classify(line, codec.AGENT, () => undefined);
  assert.equal(incoming.kind, "request");
});

test("loading the codec entry point loads neither the roles nor the connection", () => {
  // A child process imports the entry point with a resolve hook that prints every file
  // the import resolves.
  const hook = `export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.startsWith("file:")) console.log(r.url); return r; }`;
  const script = [
    'import { register } from "node:module";',
    `register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hook)}));`,
    `await import(${JSON.stringify(new URL("dist/src/acp/v1-codec.js", ROOT).href)});`,
  ].join("\n");
  const probe = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
  assert.equal(probe.status, 0, probe.stderr);
  const loaded = new Set(probe.stdout.split("\n").filter((l) => l.includes("/dist/src/")).map((l) => l.slice(l.indexOf("/dist/src/") + 10)));
  assert.ok(loaded.has("generated/acp/v1.codec.js"), [...loaded].join(" "));
  for (const file of loaded) {
    assert.ok(!/roles|endpoint|connection|agent\.js|client\.js|process\.js/.test(file), `the codec entry point loaded ${file}`);
  }
});
