/**
 * The A2A flows (`vectors/a2a/v1/flows/`, vectors/README.md "A2A flows"): each a sequence
 * of operations against a fresh `node:http` server (memory store, then SQLite) running the scripted
 * executor, once on each binding it names, through the real `A2aClient`. Baselined flows
 * are `a2a/v1/flows/<name>@<binding>` in `vectors/baselines/a2a-typescript.json`; a
 * reason starting with `race:` may pass. Every wait is bounded (10 s).
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { A2aClient, A2aTransportError, DECODERS, encodeResult, OPERATIONS, type Answer, type ClientBinding, type OperationName, type StreamEvent, type StreamResponse } from "../../src/a2a/index.js";
import { A2aCore, A2aHttpServer, demoCard, MemoryStore, SqliteStore, type AgentExecutor, type RequestContext, type TaskStore, type TaskUpdater } from "../../src/a2a/server/index.js";
import { parse } from "../../src/codec/reader.js";
import { Ctx } from "../../src/codec/runtime.js";
import { flowFiles, idOf, selected, VECTORS } from "../vector-files.js";

const BASELINE_FILE = `${VECTORS}baselines/a2a-typescript.json`;
const BASELINE: Record<string, string> = existsSync(BASELINE_FILE) ? (JSON.parse(readFileSync(BASELINE_FILE, "utf8")) as Record<string, string>) : {};
const LIMIT_MS = 10_000;

/** Every flow runs on each store: the bounded memory store and the SQLite store (a fresh file). */
type StoreName = "memory" | "sqlite";
const STORE_NAMES: readonly StoreName[] = ["memory", "sqlite"];
const SQLITE_DIR = mkdtempSync(join(tmpdir(), "agentproto-a2a-flows-"));
after(() => rmSync(SQLITE_DIR, { recursive: true, force: true }));
let sqliteFiles = 0;

/** The scripted executor of the flows: it acts on the first word of the message's text. */
class ScriptedExecutor implements AgentExecutor {
  async execute(cx: RequestContext, task: TaskUpdater): Promise<void> {
    const text = cx.text();
    const space = text.indexOf(" ");
    const word = space < 0 ? text : text.slice(0, space);
    const rest = space < 0 ? "" : text.slice(space + 1);
    switch (word) {
      case "echo":
        await task.working();
        await task.addArtifact({ artifactId: "echo", parts: [{ text: rest }] });
        return task.complete();
      case "wait":
        await task.working();
        await task.addArtifact({ artifactId: "progress", parts: [{ text: "started" }] });
        // Until the task is canceled; the server's default cancellation moves it to CANCELED.
        await new Promise<void>((resolve) => (cx.signal.aborted ? resolve() : cx.signal.addEventListener("abort", () => resolve(), { once: true })));
        return;
      case "ask":
        return task.requireInput();
      case "reply":
        return task.reply({ messageId: crypto.randomUUID(), role: "ROLE_AGENT", parts: [{ text: rest }] });
      default:
        return task.complete();
    }
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Vars = Map<string, Json>;

const VAR = /^\$\{([A-Za-z0-9_]+)\}$/;

/** `value` with every `"${name}"` string replaced by the variable. */
function substitute(value: Json, vars: Vars): Json {
  if (typeof value === "string") {
    const m = VAR.exec(value);
    if (m === null) return value;
    const bound = vars.get(m[1] as string);
    assert.ok(bound !== undefined, `variable ${value} is not bound yet`);
    return bound;
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}

/** Whether `value` matches `pattern`; binds variables into `vars` on success. */
function matches(pattern: Json, value: Json | undefined, vars: Vars): boolean {
  if (pattern === "$any") return value !== undefined;
  if (typeof pattern === "string") {
    const m = VAR.exec(pattern);
    if (m !== null) {
      const name = m[1] as string;
      const bound = vars.get(name);
      if (bound === undefined) {
        if (value === undefined) return false;
        vars.set(name, value);
        return true;
      }
      return JSON.stringify(bound) === JSON.stringify(value);
    }
    return pattern === value;
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(value) || value.length !== pattern.length) return false;
    return pattern.every((p, i) => matches(p, value[i], vars));
  }
  if (pattern !== null && typeof pattern === "object") {
    const oneOf = pattern["$one_of"];
    if (Array.isArray(oneOf)) {
      for (const option of oneOf) {
        const trial = new Map(vars);
        if (matches(option, value, trial)) {
          for (const [k, v] of trial) vars.set(k, v);
          return true;
        }
      }
      return false;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value) || value === undefined) return false;
    for (const [key, p] of Object.entries(pattern)) {
      if (key === "$partial") continue;
      if (p === "$absent") {
        if (key in value) return false;
        continue;
      }
      if (!matches(p, value[key], vars)) return false;
    }
    if (pattern["$partial"] !== true) for (const key of Object.keys(value)) if (!(key in pattern)) return false;
    return true;
  }
  return pattern === value;
}

/** An answer as patterns see it. */
function shape(operation: OperationName, answer: Answer<unknown>): Json {
  if (answer.outcome === "decoded") return { result: JSON.parse(encodeResult(operation, answer.value as never)) as Json };
  if (answer.outcome === "call_failed") return { call_failed: answer.error.message };
  const e = answer.error;
  return { error: e.httpStatus === undefined ? { reason: e.reason ?? null, code: e.code ?? null } : { reason: e.reason ?? null, http_status: e.httpStatus } };
}

/** The typed request of `operation` from the flow's JSON params. */
function typed(operation: OperationName, params: Json): never {
  const text = JSON.stringify(params);
  return (DECODERS[OPERATIONS[operation].params] as (v: unknown, p: string, cx: Ctx) => unknown)(parse(text), "$", new Ctx(text)) as never;
}

/** Resolves `promise` within the limit, or fails with `what`. */
function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${LIMIT_MS} ms`)), LIMIT_MS)));
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** An open stream: its events as they come, and its end. */
class OpenStream {
  private readonly items: Array<StreamEvent<StreamResponse> | "end"> = [];
  private wake: (() => void) | null = null;
  readonly abort = new AbortController();

  constructor(
    readonly operation: OperationName,
    open: (signal: AbortSignal) => AsyncGenerator<StreamEvent<StreamResponse>>,
  ) {
    const events = open(this.abort.signal);
    void (async () => {
      try {
        for await (const ev of events) this.put(ev);
      } catch (e) {
        if (!(e instanceof A2aTransportError)) throw e;
      }
      this.put("end");
    })();
  }

  private put(item: StreamEvent<StreamResponse> | "end"): void {
    this.items.push(item);
    this.wake?.();
  }

  async next(): Promise<StreamEvent<StreamResponse> | "end"> {
    while (this.items.length === 0) await bounded(new Promise<void>((resolve) => (this.wake = resolve)), `the stream's next event`);
    return this.items.shift() as StreamEvent<StreamResponse> | "end";
  }
}

async function runFlow(flow: { [key: string]: Json }, binding: ClientBinding, store: StoreName): Promise<void> {
  const taskStore: TaskStore = store === "memory" ? new MemoryStore() : await SqliteStore.open(join(SQLITE_DIR, `flow-${++sqliteFiles}.db`));
  const server = new A2aHttpServer((url) => new A2aCore(new ScriptedExecutor(), { card: demoCard(url), store: taskStore }));
  await server.listen(0, "127.0.0.1");
  const client = new A2aClient({ url: binding === "jsonrpc" ? `${server.url}/` : `${server.url}/a2a/rest`, binding, retries: 0, resumes: 0, timeoutMs: LIMIT_MS });
  const streams = new Map<string, OpenStream>();
  const vars: Vars = new Map();
  try {
    for (const [index, step] of (flow["steps"] as Array<{ [key: string]: { [key: string]: Json } }>).entries()) {
      const [kind, body] = Object.entries(step)[0] as [string, { [key: string]: Json }];
      const where = `step ${index} (${kind})`;
      const operation = body["operation"] as OperationName | undefined;
      if (kind === "call") {
        const op = operation as OperationName;
        const answer = await bounded(client.call(op, typed(op, substitute(body["params"] ?? {}, vars))), where);
        const got = shape(op, answer);
        assert.ok(matches(body["expect"] as Json, got, vars), `${where}: ${op} answered ${JSON.stringify(got)}, expected ${JSON.stringify(body["expect"])}`);
      } else if (kind === "open" || kind === "open_refused") {
        const op = operation as "SendStreamingMessage" | "SubscribeToTask";
        const last = body["last_event_id"];
        const params = typed(op, substitute(body["params"] ?? {}, vars));
        const lastEventId = last === undefined ? {} : { lastEventId: String(substitute(last, vars)) };
        const s = new OpenStream(op, (signal) => client.stream(op, params, { resumes: 0, signal, ...lastEventId }));
        if (kind === "open") streams.set(body["stream"] as string, s);
        else {
          const first = await s.next();
          assert.ok(first !== "end" && first.answer !== null, `${where}: the refused stream yields its error`);
          const got = shape(op, first.answer);
          assert.ok(matches(body["expect"] as Json, got, vars), `${where}: answered ${JSON.stringify(got)}, expected ${JSON.stringify(body["expect"])}`);
        }
      } else if (kind === "events") {
        const s = streams.get(body["stream"] as string);
        assert.ok(s !== undefined, `${where}: no stream ${String(body["stream"])}`);
        for (const pattern of body["expect"] as Json[]) {
          const ev = await s.next();
          assert.ok(ev !== "end", `${where}: the stream ended, expected ${JSON.stringify(pattern)}`);
          assert.ok(ev.answer !== null, `${where}: a control event ${String(ev.event)}`);
          const got = { ...(ev.id === undefined ? {} : { id: ev.id }), ...(ev.event === undefined ? {} : { event: ev.event }), ...(shape(s.operation, ev.answer) as { [key: string]: Json }) };
          assert.ok(matches(pattern, got, vars), `${where}: event ${JSON.stringify(got)}, expected ${JSON.stringify(pattern)}`);
        }
      } else if (kind === "ended") {
        const s = streams.get(body["stream"] as string);
        const ev = await (s as OpenStream).next();
        assert.equal(ev === "end" ? "end" : JSON.stringify(ev.data), "end", `${where}: the stream goes on`);
      } else if (kind === "close") {
        (streams.get(body["stream"] as string) as OpenStream).abort.abort();
      } else {
        assert.fail(`${where}: unknown step`);
      }
    }
  } finally {
    await server.close();
    await taskStore.close();
  }
}

for (const path of flowFiles("a2a")) {
  const flow = JSON.parse(readFileSync(path, "utf8")) as { [key: string]: Json };
  const id = (flow["id"] as string | undefined) ?? idOf(path);
  for (const [binding, store] of (flow["bindings"] as ClientBinding[]).flatMap((b) => STORE_NAMES.map((s) => [b, s] as const))) {
    const name = `${id}@${binding}`;
    if (!selected(name)) continue;
    test(store === "memory" ? name : `${name} (${store} store)`, async () => {
      const reason = BASELINE[name];
      if (reason === undefined) return runFlow(flow, binding, store);
      let failed = false;
      try {
        await runFlow(flow, binding, store);
      } catch (err) {
        if (!(err instanceof assert.AssertionError) && !(err instanceof Error)) throw err;
        failed = true;
      }
      assert.ok(failed || reason.startsWith("race:"), `stale baseline entry: ${name} passes now (listed as: ${reason})`);
    });
  }
}
