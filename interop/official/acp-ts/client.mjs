// Scenario client (interop/SCENARIO.md) on the official TypeScript SDK,
// @agentclientprotocol/sdk 2.4.0.
//
//   node interop/official/acp-ts/client.mjs -- <agent command> [args...]
//
// Spawns the agent, runs the steps over one connection and one session, and
// prints one JSON line per step on stdout.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const { methods } = acp;
const STEP_MS = 10_000;
const STEPS = [
  "initialize", "session_new", "prompt_echo", "permission", "fs", "cancel",
  "cancel_permission", "cancel_request", "error", "unknown_update",
];

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const agentArgv = dash >= 0 ? argv.slice(dash + 1) : [];
if (agentArgv.length === 0) {
  console.error("usage: client.mjs -- <agent command> [args...]");
  process.exit(2);
}

let reported = 0;
function report(step, ok, detail) {
  reported += 1;
  process.stdout.write(JSON.stringify({ step, ok, detail }) + "\n");
}

class Timeout extends Error {}

// Rejects with Timeout if `promise` has not settled within `ms`.
function bounded(promise, what, ms = STEP_MS) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`timed out after ${ms / 1000} s waiting for ${what}`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

// Everything the application is told about, in arrival order.
const events = [];
const listeners = new Set();
function record(event) {
  events.push(event);
  for (const listener of listeners) listener();
}
// Resolves with the first event at index >= from that matches.
function waitFor(from, match, what) {
  return bounded(new Promise((resolve) => {
    const check = () => {
      const hit = events.slice(from).find(match);
      if (hit) {
        listeners.delete(check);
        resolve(hit);
      }
    };
    listeners.add(check);
    check();
  }), what);
}

// Updates seen on the wire before the SDK parses them, to tell "never sent"
// apart from "sent but not delivered to the application".
const wireUpdates = [];

const isChunk = (e, text) =>
  e.kind === "update" && e.update.sessionUpdate === "agent_message_chunk" &&
  e.update.content?.type === "text" && (text === undefined || e.update.content.text === text);
const chunkTexts = (seen) => seen.filter((e) => isChunk(e)).map((e) => e.update.content.text);

// How the next session/request_permission is answered: "allow" right away, or
// "hold" until the script answers it through `heldPermission`.
let permissionMode = "allow";
let heldPermission = null;

const app = acp
  .client({ name: "ts-scenario-client" })
  .onNotification(methods.client.session.update, ({ params }) => {
    record({ kind: "update", update: params.update });
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    record({ kind: "permission", params });
    if (permissionMode === "allow") return { outcome: { outcome: "selected", optionId: "allow" } };
    return new Promise((resolve) => {
      heldPermission = { answer: resolve };
    });
  })
  .onRequest(methods.client.fs.readTextFile, async ({ params }) => ({
    content: await readFile(params.path, "utf8"),
  }))
  .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
    await writeFile(params.path, params.content, "utf8");
    return {};
  });

async function run(agent) {
  const dir = await mkdtemp(join(tmpdir(), "acp-interop-ts-"));
  let sessionId;

  // Sends a prompt; `done` settles with what the application had seen when the
  // prompt's response arrived.
  const prompt = (text) => {
    const from = events.length;
    const done = agent
      .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
      .then((result) => ({ result, seen: events.slice(from) }),
        (error) => ({ error, seen: events.slice(from) }));
    return { from, done };
  };
  const describe = (r) =>
    r.error ? `prompt failed: ${r.error.message}` : `stopReason ${r.result.stopReason}`;

  const steps = {
    async initialize() {
      const r = await bounded(agent.request(methods.agent.initialize, {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
        clientInfo: { name: "ts-scenario-client", version: "0.0.0" },
      }), "initialize");
      return [r.protocolVersion === 1, `protocolVersion ${r.protocolVersion}, agent ${r.agentInfo?.name}`];
    },
    async session_new() {
      const r = await bounded(agent.request(methods.agent.session.new, { cwd: dir, mcpServers: [] }), "session/new");
      sessionId = r.sessionId;
      return [typeof sessionId === "string" && sessionId !== "", `sessionId ${sessionId}`];
    },
    async prompt_echo() {
      const r = await bounded(prompt("echo hello brave world").done, "the prompt result");
      const words = chunkTexts(r.seen);
      const ok = words.join(" ") === "hello brave world" && r.result?.stopReason === "end_turn";
      return [ok, `chunks before result ${JSON.stringify(words)}, ${describe(r)}`];
    },
    async permission() {
      permissionMode = "allow";
      const r = await bounded(prompt("permission").done, "the prompt result");
      const at = (match) => r.seen.findIndex(match);
      const call = at((e) => e.kind === "update" && e.update.sessionUpdate === "tool_call" && e.update.toolCallId === "call-1");
      const asked = at((e) => e.kind === "permission");
      const said = at((e) => isChunk(e, "permission:allow"));
      const done = at((e) => e.kind === "update" && e.update.sessionUpdate === "tool_call_update" && e.update.status === "completed");
      const ok = call >= 0 && asked >= 0 && call < said && said < done && r.result?.stopReason === "end_turn";
      return [ok, `order tool_call=${call} permission=${asked} chunk=${said} completed=${done} (-1: missing), ${describe(r)}`];
    },
    async fs() {
      const input = join(dir, "in.txt");
      await writeFile(input, "abc\n", "utf8");
      const r = await bounded(prompt(`fs ${input}`).done, "the prompt result");
      let out = null;
      try { out = await readFile(`${input}.out`, "utf8"); } catch { /* missing file reported below */ }
      const chunks = chunkTexts(r.seen);
      const ok = out === "ABC\n" && chunks.includes("read:4") && r.result?.stopReason === "end_turn";
      return [ok, `in.txt.out ${JSON.stringify(out)}, chunks ${JSON.stringify(chunks)}, ${describe(r)}`];
    },
    async cancel() {
      const p = prompt("wait");
      await waitFor(p.from, (e) => isChunk(e, "waiting"), "chunk 'waiting'");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      const r = await bounded(p.done, "the prompt result after session/cancel");
      return [r.result?.stopReason === "cancelled", describe(r)];
    },
    async cancel_permission() {
      permissionMode = "hold";
      heldPermission = null;
      const p = prompt("permission");
      await waitFor(p.from, (e) => e.kind === "permission", "session/request_permission");
      await agent.notify(methods.agent.session.cancel, { sessionId });
      // The SDK leaves the held request pending on session/cancel, so the
      // script answers it as the protocol requires.
      heldPermission.answer({ outcome: { outcome: "cancelled" } });
      const r = await bounded(p.done, "the prompt result after session/cancel");
      const chunks = chunkTexts(r.seen);
      const ok = chunks.includes("permission:cancelled") && r.result?.stopReason === "cancelled";
      return [ok, `permission answered cancelled by the script (the SDK does not answer it on session/cancel); chunks ${JSON.stringify(chunks)}, ${describe(r)}`];
    },
    async cancel_request() {
      const cancel = new AbortController();
      const pending = agent.request("_agentproto/slow", {}, { cancellationSignal: cancel.signal });
      cancel.abort(); // the SDK writes $/cancel_request after the request itself
      try {
        const result = await bounded(pending, "the answer to _agentproto/slow after $/cancel_request");
        return [false, `$/cancel_request sent by the SDK (cancellationSignal); request succeeded: ${JSON.stringify(result)}`];
      } catch (error) {
        if (error instanceof Timeout) throw error;
        return [error.code === -32800, `$/cancel_request sent by the SDK (cancellationSignal); request failed with code ${error.code}: ${error.message}`];
      }
    },
    async error() {
      const r = await bounded(prompt("error").done, "the prompt result");
      if (!r.error) return [false, `prompt succeeded: ${describe(r)}`];
      const { code, data } = r.error;
      return [code === 4242 && data?.reason === "scenario", `error code ${code}, data ${JSON.stringify(data)}`];
    },
    async unknown_update() {
      const wireFrom = wireUpdates.length;
      const r = await bounded(prompt("unknown-update").done, "the prompt result");
      const unknown = r.seen.findIndex((e) => e.kind === "update" && e.update.sessionUpdate === "agentproto_future_update");
      const after = r.seen.findIndex((e) => isChunk(e, "after-unknown"));
      const onWire = wireUpdates.slice(wireFrom).some((u) => u?.sessionUpdate === "agentproto_future_update");
      const ok = unknown >= 0 && unknown < after && r.result?.stopReason === "end_turn";
      const seen = unknown >= 0 ? `delivered: ${JSON.stringify(r.seen[unknown].update)}`
        : `not delivered to the application (${onWire ? "it was on the wire; the SDK dropped it" : "not on the wire either"})`;
      return [ok, `unknown update ${seen}; after-unknown ${after >= 0 ? "seen" : "missing"}; ${describe(r)}`];
    },
  };

  let skip = false;
  for (const name of STEPS) {
    if (skip) {
      report(name, false, "skipped");
      continue;
    }
    try {
      const [ok, detail] = await steps[name]();
      report(name, ok, detail);
      if (!ok && (name === "initialize" || name === "session_new")) skip = true;
    } catch (error) {
      report(name, false, error instanceof Timeout ? error.message : `error: ${error?.message ?? error}`);
      if (name === "initialize" || name === "session_new") skip = true;
    }
  }
}

const child = spawn(agentArgv[0], agentArgv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
let spawnFailed = false;
// Settles when the agent has exited, or at once if it could not be started.
const exited = new Promise((resolve) => {
  child.once("exit", (code, signal) => resolve({ code, signal }));
  child.once("error", (error) => {
    console.error(`[ts-scenario-client] cannot start agent: ${error.message}`);
    spawnFailed = true;
    resolve({ code: null, signal: null });
  });
});

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const tapped = {
  writable: stream.writable,
  readable: stream.readable.pipeThrough(new TransformStream({
    transform(message, controller) {
      if (message.method === methods.client.session.update) wireUpdates.push(message.params?.update);
      controller.enqueue(message);
    },
  })),
};

try {
  await app.connectWith(tapped, run);
} catch (error) {
  // connectWith also rejects when the connection broke during the run (for
  // example the agent died); that only matters if steps went unreported.
  console.error(`[ts-scenario-client] connection error: ${error?.message ?? error}`);
}

// Close the agent's stdin and give it a bounded time to exit.
child.stdin.end();
try {
  const { code, signal } = await bounded(exited, "the agent to exit");
  console.error(`[ts-scenario-client] agent exited (code ${code}, signal ${signal})`);
} catch {
  console.error("[ts-scenario-client] agent did not exit in time; killing it");
  child.kill("SIGKILL");
}
process.exit(reported === STEPS.length && !spawnFailed ? 0 : 1);
