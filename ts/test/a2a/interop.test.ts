/**
 * A2A interop over real loopback HTTP, each peer in its own process, on JSON-RPC and
 * HTTP+JSON:
 *
 * - our client against our Rust server (`target/debug/agentproto serve --memory`; `make
 *   ts-test` builds it), our Python server (`python -m agentproto.examples.a2a_server`,
 *   the interpreter of `$PYTHON`, else `.venv/bin/python`, else `python3`) and the official
 *   JavaScript server (`interop/official/a2a-js/server.mjs`, @a2a-js/sdk 1.3.0 on Express);
 * - the official JavaScript client (`interop/official/a2a-js/client.mjs`) against our
 *   server (`dist/examples/a2a-server.js --db FILE`, the SQLite store);
 * - our server with `--db` killed (SIGKILL) after acknowledging tasks, and started again:
 *   every acknowledged task is there.
 *
 * The scenario: two sends, a get, a stream, a cancel of a task waiting for input (and
 * against our servers a subscription resumed with `Last-Event-ID`). Every child is ended
 * on every path; every wait is bounded.
 */

import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { clientFromCard, resolveCard, type A2aClient, type ClientBinding, type Message, type StreamEvent, type StreamResponse, type Task } from "../../src/a2a/index.js";
import { within } from "../spawned.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../../examples/a2a-server.js", import.meta.url));
const OFFICIAL = join(ROOT, "interop/official/a2a-js");
const RUST = join(ROOT, "target/debug/agentproto");
const BOUND_MS = 30_000;

/** A child process printing `listening on http://HOST:PORT`; its group is ended by `stop`. */
class Child {
  readonly process: ChildProcess;
  private out = "";
  private err = "";
  private readonly exited: Promise<number | null>;

  constructor(argv: readonly string[], cwd = ROOT) {
    this.process = spawn(argv[0] as string, argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, PYTHONUNBUFFERED: "1" } });
    this.process.stdout?.on("data", (d: Buffer) => (this.out += d.toString("utf8")));
    this.process.stderr?.on("data", (d: Buffer) => (this.err += d.toString("utf8")));
    this.exited = new Promise((resolve) => this.process.once("exit", (code) => resolve(code)));
  }

  /** The URL the child printed. */
  async url(): Promise<string> {
    const found = new Promise<string>((resolve, reject) => {
      const look = (): void => {
        const m = /listening on (http:\/\/\S+)/.exec(this.out);
        if (m !== null) {
          this.process.stdout?.off("data", look);
          resolve((m[1] as string).replace(/\/+$/, ""));
        }
      };
      this.process.stdout?.on("data", look);
      void this.exited.then((code) => reject(new Error(`the server exited (${code}) before listening: ${this.err}`)));
      look();
    });
    return within(found, `${this.process.spawnfile} to listen`, BOUND_MS);
  }

  /** Ends the child's group at once (SIGKILL: nothing runs on its way out). */
  async kill(): Promise<void> {
    try {
      process.kill(-(this.process.pid as number), "SIGKILL");
    } catch {
      return;
    }
    await within(this.exited, "the server to be killed", 10_000);
  }

  async stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    try {
      process.kill(-(this.process.pid as number), "SIGTERM");
    } catch {
      return;
    }
    try {
      await within(this.exited, "the server to stop", 10_000);
    } catch {
      try {
        process.kill(-(this.process.pid as number), "SIGKILL");
      } catch {
        // gone already
      }
      await within(this.exited, "the server to be killed", 10_000);
    }
  }
}

function python(): string {
  if (process.env["PYTHON"]) return process.env["PYTHON"];
  const venv = join(ROOT, ".venv/bin/python");
  return existsSync(venv) ? venv : "python3";
}

const RUN = crypto.randomUUID().slice(0, 8);

function message(text: string, messageId: string, taskId?: string): Message {
  return { messageId: `${messageId}-${RUN}`, role: "ROLE_USER", parts: [{ text }], ...(taskId === undefined ? {} : { taskId }) };
}

function decoded(event: StreamEvent<StreamResponse>): StreamResponse {
  assert.ok(event.answer?.outcome === "decoded", `an event that does not decode: ${event.data}`);
  return event.answer.value;
}

async function collect(events: AsyncIterable<StreamEvent<StreamResponse>>): Promise<Array<StreamEvent<StreamResponse>>> {
  const out: Array<StreamEvent<StreamResponse>> = [];
  for await (const e of events) out.push(e);
  return out;
}

function completedWith(task: Task | undefined, text: string): Task {
  assert.ok(task !== undefined, "a task");
  assert.equal(task.status.state, "TASK_STATE_COMPLETED");
  assert.equal(task.artifacts?.[0]?.parts[0]?.text, text);
  return task;
}

/** The scenario of our client against a server at `base`. */
async function scenario(base: string, binding: ClientBinding, subscribe: boolean): Promise<void> {
  const client: A2aClient = clientFromCard(await resolveCard(base, { timeoutMs: 10_000 }), { prefer: binding, timeoutMs: 10_000 });
  assert.equal(client.options.binding, binding);
  const first = await client.sendMessage({ message: message("hello", "m-1") });
  const second = await client.sendMessage({ message: message("again", "m-2") });
  completedWith(first.task, "hello");
  const id = completedWith(second.task, "again").id;
  completedWith(await client.getTask({ id }), "again");

  const streamed = await within(collect(client.stream("SendStreamingMessage", { message: message("streamed", "m-3") })), "the stream", BOUND_MS);
  assert.ok(decoded(streamed[0] as StreamEvent<StreamResponse>).task !== undefined, "the stream starts with the task");
  assert.equal(decoded(streamed[streamed.length - 1] as StreamEvent<StreamResponse>).statusUpdate?.status.state, "TASK_STATE_COMPLETED");

  const waiting = (await client.sendMessage({ message: message("more please", "tck-input-required") })).task;
  assert.equal(waiting?.status.state, "TASK_STATE_INPUT_REQUIRED");
  const waitingId = (waiting as Task).id;
  if (!subscribe) {
    assert.equal((await client.cancelTask({ id: waitingId })).status.state, "TASK_STATE_CANCELED");
    return;
  }
  const subscription = client.stream("SubscribeToTask", { id: waitingId });
  const snapshot = await within(subscription.next(), "the subscription's first event", BOUND_MS);
  assert.ok(snapshot.done !== true);
  assert.equal(decoded(snapshot.value).task?.id, waitingId);
  assert.equal((await client.cancelTask({ id: waitingId })).status.state, "TASK_STATE_CANCELED");
  const rest = await within(collect({ [Symbol.asyncIterator]: () => subscription }), "the subscription's end", BOUND_MS);
  assert.equal(decoded(rest[rest.length - 1] as StreamEvent<StreamResponse>).statusUpdate?.status.state, "TASK_STATE_CANCELED");
  const resumed = await within(collect(client.stream("SubscribeToTask", { id: waitingId }, { lastEventId: snapshot.value.id as string })), "the resumed subscription", BOUND_MS);
  assert.equal(decoded(resumed[resumed.length - 1] as StreamEvent<StreamResponse>).statusUpdate?.status.state, "TASK_STATE_CANCELED");
}

/** Runs our client's scenario against the server `argv` starts, on both bindings. */
function against(name: string, argv: () => readonly string[], subscribe: boolean, cwd = ROOT): void {
  describe(`our client against ${name}`, () => {
    let child: Child | null = null;
    let base = "";
    before(async () => {
      child = new Child(argv(), cwd);
      base = await child.url();
    });
    after(async () => {
      await child?.stop();
    });
    for (const binding of ["jsonrpc", "rest"] as const) {
      test(`on ${binding === "jsonrpc" ? "JSON-RPC" : "HTTP+JSON"}`, async () => within(scenario(base, binding, subscribe), "the scenario", 60_000));
    }
  });
}

against(
  "our Rust server",
  () => {
    assert.ok(existsSync(RUST), "build the Rust server first: cargo build -p agentproto-cli (make ts-test does)");
    return [RUST, "serve", "--memory", "--addr", "127.0.0.1:0"];
  },
  true,
);
against("our Python server", () => [python(), "-m", "agentproto.examples.a2a_server", "--addr", "127.0.0.1:0", "--memory"], true);
against(
  "the official JavaScript server (@a2a-js/sdk on Express)",
  () => {
    assert.ok(existsSync(join(OFFICIAL, "node_modules/@a2a-js/sdk")), "install the official SDK first: npm ci --prefix interop/official/a2a-js (make node-deps)");
    return [process.execPath, join(OFFICIAL, "server.mjs")];
  },
  false,
  OFFICIAL,
);

const DB_DIR = mkdtempSync(join(tmpdir(), "agentproto-a2a-interop-"));
after(() => rmSync(DB_DIR, { recursive: true, force: true }));

describe("the official JavaScript client (@a2a-js/sdk) against our server (SQLite store)", () => {
  let child: Child | null = null;
  let base = "";
  before(async () => {
    child = new Child([process.execPath, EXAMPLE, "--addr", "127.0.0.1:0", "--db", join(DB_DIR, "official-client.db")]);
    base = await child.url();
  });
  after(async () => {
    await child?.stop();
  });
  for (const binding of ["JSONRPC", "HTTP+JSON"]) {
    test(`on ${binding}`, async () => {
      assert.ok(existsSync(join(OFFICIAL, "node_modules/@a2a-js/sdk")), "install the official SDK first: npm ci --prefix interop/official/a2a-js (make node-deps)");
      const run = new Child([process.execPath, join(OFFICIAL, "client.mjs"), "--card-url", base, "--binding", binding, "--timeout", "10"], OFFICIAL);
      let out = "";
      run.process.stdout?.on("data", (d: Buffer) => (out += d.toString("utf8")));
      const code = await within(new Promise<number | null>((resolve) => run.process.once("exit", (c) => resolve(c))), "the official client to finish", 60_000).finally(() => run.stop());
      const steps = out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { step: string; ok: boolean; detail: unknown });
      const failed = steps.filter((s) => !s.ok);
      assert.equal(code, 0, JSON.stringify(failed.length > 0 ? failed : steps));
      assert.deepEqual(steps.map((s) => s.step), ["card", "send", "get", "stream", "cancel"]);
    });
  }
});

test("our server with --db keeps every acknowledged task across a SIGKILL and a restart", async () => {
  const db = join(DB_DIR, "restart.db");
  let child = new Child([process.execPath, EXAMPLE, "--addr", "127.0.0.1:0", "--db", db]);
  const ids: string[] = [];
  try {
    const client = clientFromCard(await resolveCard(await child.url(), { timeoutMs: 10_000 }), { timeoutMs: 10_000 });
    // Four senders at once, so that commits are grouped; each answer acknowledges a task.
    await Promise.all(
      [0, 1, 2, 3].map(async (sender) => {
        for (let i = 0; i < 5; i++) ids.push(completedWith((await client.sendMessage({ message: message(`kept ${sender}.${i}`, `m-kept-${sender}-${i}`) })).task, `kept ${sender}.${i}`).id);
      }),
    );
  } finally {
    await child.kill();
  }
  child = new Child([process.execPath, EXAMPLE, "--addr", "127.0.0.1:0", "--db", db]);
  try {
    const client = clientFromCard(await resolveCard(await child.url(), { timeoutMs: 10_000 }), { timeoutMs: 10_000 });
    assert.equal(ids.length, 20);
    for (const id of ids) assert.equal((await client.getTask({ id })).status.state, "TASK_STATE_COMPLETED");
  } finally {
    await child.stop();
  }
});
