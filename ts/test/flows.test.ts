/**
 * Every flow vector (`vectors/acp/v1/flows/*.json`, format in `vectors/README.md`,
 * "Flows") through the real TypeScript roles, as the Python runner runs them.
 *
 * The side under test is `v1.connectAgent` or `v1.connectClient` serving one of the
 * test applications of `flow-apps.ts`, over an in-memory pipe; the flow plays the other
 * side with raw NDJSON lines. Outgoing validation (strict mode) is on. Every wait is
 * bounded by `STEP_TIMEOUT`; nothing sleeps. Known failures are listed in
 * `vectors/baselines/typescript.json` with a reason: an unlisted failure fails, and so
 * does a listed flow that passes (stale), unless its reason starts with `race:`.
 * `AGENTPROTO_VECTORS=acp/v1/flows/client-` selects flows by id prefix.
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { AcpError, PeerError } from "../src/acp/errors.js";
import type { AcpEvent } from "../src/acp/options.js";
import * as v1 from "../src/acp/v1.js";
import { RawJson } from "../src/codec/values.js";
import { LineSplitter } from "../src/jsonrpc/frame.js";
import { duplex, type End } from "../src/jsonrpc/memory.js";
import type { ConnectionEvent } from "../src/jsonrpc/options.js";
import { BARRIER, FlowAgent, FlowClient, STEP_TIMEOUT } from "./flow-apps.js";
import { flowFiles, selected, VECTORS } from "./vector-files.js";

type Json = unknown;
type Obj = Record<string, Json>;

const BASELINE_FILE = join(VECTORS, "baselines", "typescript.json");
const BASELINE: Record<string, string> = existsSync(BASELINE_FILE) ? (JSON.parse(readFileSync(BASELINE_FILE, "utf8")) as Record<string, string>) : {};

interface Flow {
  readonly id: string;
  readonly role: string;
  readonly setup: Obj;
  readonly steps: Obj[];
}

const FLOWS: Flow[] = flowFiles("acp").map((path) => {
  const data = JSON.parse(readFileSync(path, "utf8")) as Obj;
  return { id: data["id"] as string, role: data["role"] as string, setup: (data["setup"] as Obj | undefined) ?? {}, steps: data["steps"] as Obj[] };
});

class StepFailed extends assert.AssertionError {
  constructor(message: string) {
    super({ message });
  }
}

const isObj = (x: Json): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);
const show = (x: Json): string => JSON.stringify(x);

/** JSON equality with numbers compared by value. */
function same(a: Json, b: Json): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  }
  return a === b;
}

function varName(text: Json): string | null {
  if (typeof text !== "string") return null;
  const m = /^\$\{(.+)\}$/s.exec(text);
  return m === null ? null : (m[1] as string);
}

function substitute(value: Json, vars: Map<string, Json>): Json {
  const name = varName(value);
  if (name !== null) {
    if (!vars.has(name)) throw new StepFailed(`variable ${String(value)} is not bound yet`);
    return vars.get(name);
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (isObj(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}

/** Structural match: `"$any"` matches anything, `"${name}"` binds or must equal, an
 * object with `"$partial": true` allows more members, numbers compare by value. */
function matches(pattern: Json, actual: Json, vars: Map<string, Json>, at = "$"): void {
  if (pattern === "$any") return;
  const name = varName(pattern);
  if (name !== null) {
    if (vars.has(name)) {
      if (!same(vars.get(name), actual)) throw new StepFailed(`at ${at}: ${String(pattern)} is ${show(vars.get(name))}, found ${show(actual)}`);
    } else vars.set(name, actual);
    return;
  }
  if (isObj(pattern)) {
    if (!isObj(actual)) throw new StepFailed(`at ${at}: expected an object, found ${show(actual)}`);
    for (const [key, want] of Object.entries(pattern)) {
      if (key === "$partial") continue;
      if (!Object.prototype.hasOwnProperty.call(actual, key)) throw new StepFailed(`at ${at}: member \`${key}\` is missing`);
      matches(want, actual[key], vars, `${at}.${key}`);
    }
    if (pattern["$partial"] !== true) {
      const extra = Object.keys(actual).filter((k) => !Object.prototype.hasOwnProperty.call(pattern, k));
      if (extra.length > 0) throw new StepFailed(`at ${at}: unexpected member \`${extra[0]}\``);
    }
    return;
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) throw new StepFailed(`at ${at}: expected an array, found ${show(actual)}`);
    if (pattern.length !== actual.length) throw new StepFailed(`at ${at}: expected ${pattern.length} items, found ${actual.length}`);
    pattern.forEach((want, i) => matches(want, actual[i], vars, `${at}[${i}]`));
    return;
  }
  if (!same(pattern, actual)) throw new StepFailed(`at ${at}: expected ${show(pattern)}, found ${show(actual)}`);
}

/** Matches each pattern to a different unused line (backtracking). */
function assign(patterns: Json[], actual: Json[], used: boolean[], vars: Map<string, Json>): Map<string, Json> | null {
  if (patterns.length === 0) return vars;
  const [first, ...rest] = patterns;
  for (let i = 0; i < actual.length; i++) {
    if (used[i]) continue;
    const attempt = new Map(vars);
    try {
      matches(first, actual[i], attempt);
    } catch (err) {
      if (err instanceof StepFailed) continue;
      throw err;
    }
    used[i] = true;
    const done = assign(rest, actual, used, attempt);
    if (done !== null) return done;
    used[i] = false;
  }
  return null;
}

/** Rejects with `StepFailed(message)` after `STEP_TIMEOUT`. */
async function bounded<T>(promise: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new StepFailed(message)), STEP_TIMEOUT)))]);
  } finally {
    clearTimeout(timer);
  }
}

type Outcome = { ok: true; value: Json } | { ok: false; error: unknown };

interface Call {
  readonly method: string;
  outcome: Promise<Outcome> | null;
}

/** The typed call of `method` on the client application's handle; its result re-encoded (`null` for a notification). */
async function startCall(agent: v1.AgentConnection, method: string, params: Json): Promise<Json> {
  const info = v1.METHODS.find((m) => m.name === method && m.side === "agent");
  if (info === undefined) throw new StepFailed(`the runner cannot call \`${method}\``);
  const typed = v1.SURFACE.decodeNamed(info.params, new RawJson(JSON.stringify(params)), "$.params").value;
  const fn = (agent as unknown as Record<string, (p: unknown) => Promise<unknown>>)[info.handler] as (p: unknown) => Promise<unknown>;
  const result = await fn.call(agent, typed);
  if (result === undefined || info.result === null) return null;
  return JSON.parse(v1.SURFACE.encodeNamed(info.result, result));
}

function describe(outcome: Outcome): string {
  if (outcome.ok) return `ok ${show(outcome.value)}`;
  const e = outcome.error;
  if (e instanceof PeerError) return `error ${show({ code: e.error.code, message: e.error.message })}`;
  if (e instanceof AcpError) return `local_error ${e.variant} (${e.message})`;
  return `threw ${String(e)}`;
}

class Run {
  private readonly splitter = new LineSplitter();
  private readonly lines: string[] = [];
  vars = new Map<string, Json>();
  readonly calls: Call[] = [];
  private barriers = 0;

  constructor(
    private readonly end: End,
    private readonly agent: v1.AgentConnection | null,
    private readonly flow: Flow,
  ) {}

  async step(step: Obj): Promise<void> {
    const entries = Object.entries(step);
    if (entries.length !== 1) throw new StepFailed(`a step is an object with one member, found ${show(step)}`);
    const [kind, body] = entries[0] as [string, Json];
    if (kind === "send") await this.send(substitute(body, this.vars));
    else if (kind === "expect") this.expect(body, await this.nextLine(`expected ${show(body)}, but`));
    else if (kind === "expect_unordered") await this.expectUnordered(body as Json[]);
    else if (kind === "expect_silence") await this.silence();
    else if (kind === "call") this.call(body as Obj);
    else if (kind === "expect_call") await this.expectCall(body as Obj);
    else throw new StepFailed(`unknown step kind ${kind}`);
  }

  async send(message: Json): Promise<void> {
    await bounded(this.end.output.write(Buffer.from(JSON.stringify(message) + "\n")), `sending ${show(message)} did not complete in time`);
  }

  async nextLine(context: string): Promise<string> {
    const read = async (): Promise<string> => {
      while (this.lines.length === 0) {
        const chunk = await this.end.input.read();
        const frames = chunk === null ? this.splitter.finish() : this.splitter.feed(chunk);
        for (const f of frames) if (f instanceof Uint8Array) this.lines.push(Buffer.from(f).toString("utf8"));
        if (chunk === null && this.lines.length === 0) throw new StepFailed(`${context} our side closed its output`);
      }
      return this.lines.shift() as string;
    };
    return bounded(read(), `${context} nothing was written within ${STEP_TIMEOUT} ms`);
  }

  expect(pattern: Json, line: string): void {
    let actual: Json;
    try {
      actual = JSON.parse(line);
    } catch {
      throw new StepFailed(`expected ${show(pattern)}, got a line that is not JSON: ${line}`);
    }
    const vars = new Map(this.vars);
    try {
      matches(pattern, actual, vars);
    } catch (err) {
      if (!(err instanceof StepFailed)) throw err;
      throw new StepFailed(`${err.message}\n  expected: ${show(pattern)}\n  actual:   ${line}`);
    }
    this.vars = vars;
  }

  async expectUnordered(patterns: Json[]): Promise<void> {
    const lines: string[] = [];
    for (let i = 0; i < patterns.length; i++) lines.push(await this.nextLine(`expected ${patterns.length} message(s) in any order, got ${lines.length}, then`));
    const actual = lines.map((l) => JSON.parse(l) as Json);
    const vars = assign(patterns, actual, actual.map(() => false), new Map(this.vars));
    if (vars === null) throw new StepFailed(`the lines do not match the patterns in any order\n  expected (any order): ${show(patterns)}\n  actual:\n    ${lines.join("\n    ")}`);
    this.vars = vars;
  }

  /** Sends the barrier notification and request; the next line must answer the request. */
  async silence(): Promise<void> {
    const n = ++this.barriers;
    const id = `flow-barrier-${n}`;
    await this.send({ jsonrpc: "2.0", method: BARRIER, params: { n } });
    await this.send({ jsonrpc: "2.0", id, method: BARRIER, params: { n } });
    const line = await this.nextLine(`expected the answer to barrier ${id}, but`);
    const actual = JSON.parse(line) as Obj;
    if (actual["id"] !== id) throw new StepFailed(`expected silence (up to barrier ${id}), but our side wrote: ${line}`);
    const error = actual["error"];
    if (!("result" in actual) && !(isObj(error) && error["code"] === -32600)) throw new StepFailed(`barrier ${id} was answered with an error: ${line}`);
  }

  call(body: Obj): void {
    if (this.agent === null) throw new StepFailed("`call` steps are for the client role only");
    const method = body["method"] as string;
    const params = substitute(body["params"] ?? {}, this.vars) as Obj;
    const caps = this.flow.setup["clientCapabilities"];
    if (method === "initialize" && caps !== undefined && !("clientCapabilities" in params)) params["clientCapabilities"] = caps;
    const outcome = startCall(this.agent, method, params).then(
      (value): Outcome => ({ ok: true, value }),
      (error: unknown): Outcome => ({ ok: false, error }),
    );
    this.calls.push({ method, outcome });
  }

  async expectCall(body: Obj): Promise<void> {
    const method = body["method"] as string;
    const call = this.calls.find((c) => c.method === method && c.outcome !== null);
    if (call === undefined || call.outcome === null) throw new StepFailed(`no unchecked \`${method}\` call to check`);
    const pending = call.outcome;
    call.outcome = null;
    const outcome = await bounded(pending, `the \`${method}\` call did not end within ${STEP_TIMEOUT} ms`);
    const vars = new Map(this.vars);
    try {
      if ("ok" in body) {
        if (!outcome.ok) throw new StepFailed("a different kind of outcome");
        matches(body["ok"], outcome.value, vars, "$ok");
      } else if ("error" in body) {
        if (outcome.ok || !(outcome.error instanceof PeerError)) throw new StepFailed("a different kind of outcome");
        const e = outcome.error.error;
        const got: Obj = { code: e.code, message: e.message };
        if (e.data !== undefined) got["data"] = JSON.parse(e.data.text);
        matches(body["error"], got, vars, "$error");
      } else if ("local_error" in body) {
        if (outcome.ok || !(outcome.error instanceof AcpError) || outcome.error instanceof PeerError) throw new StepFailed("a different kind of outcome");
        if (outcome.error.variant !== body["local_error"]) throw new StepFailed(`local error ${outcome.error.variant} (${outcome.error.message})`);
      } else throw new StepFailed("expect_call needs one of `ok`, `error`, `local_error`");
    } catch (err) {
      if (!(err instanceof StepFailed)) throw err;
      throw new StepFailed(`the \`${method}\` call: ${err.message}\n  expected: ${show(body)}\n  actual:   ${describe(outcome)}`);
    }
    this.vars = vars;
  }
}

async function runFlow(flow: Flow, events: (ConnectionEvent | AcpEvent)[]): Promise<void> {
  const [ours, theirs] = duplex(1 << 20);
  // Strict on, as the runner rules say; a short grace, since the flow's end leaves
  // turns waiting that only the shutdown ends. Handler failures the flows cause on
  // purpose reach the observer, not the console.
  const options = { strict: true, observer: (e: ConnectionEvent | AcpEvent) => events.push(e), onError: null, connection: { shutdownGrace: 1000 } };
  let agent: v1.AgentConnection | null = null;
  let running: Promise<void>;
  if (flow.role === "agent") {
    running = v1.connectAgent(new FlowAgent(flow.setup), ours.input, ours.output, options).connection.run();
  } else if (flow.role === "client") {
    const connected = v1.connectClient(new FlowClient(flow.setup), ours.input, ours.output, options);
    agent = connected.agent;
    running = connected.connection.run();
  } else throw new StepFailed(`unknown role ${flow.role}`);
  running.catch(() => {});
  const run = new Run(theirs, agent, flow);
  try {
    for (const [index, step] of flow.steps.entries()) {
      try {
        await run.step(step);
      } catch (err) {
        if (err instanceof StepFailed) throw new StepFailed(`step ${index}: ${err.message}`);
        throw err;
      }
    }
  } finally {
    await theirs.output.close();
    theirs.input.cancel(); // nobody reads our output any more: its writes must not block
    await bounded(running.then(() => {}, () => {}), "the connection did not end after its input closed");
  }
}

async function runOne(flow: Flow): Promise<void> {
  const events: (ConnectionEvent | AcpEvent)[] = [];
  try {
    await runFlow(flow, events);
  } catch (err) {
    if (!(err instanceof StepFailed)) throw err;
    const shown = events.map((e) => e.kind + ("method" in e ? ` ${e.method}` : "")).join("\n    ");
    throw new StepFailed(`${flow.id}: ${err.message}` + (events.length > 0 ? `\n  events of our side:\n    ${shown}` : ""));
  }
}

let passed = 0;

for (const flow of FLOWS) {
  if (!selected(flow.id)) continue;
  test(flow.id, async () => {
    const reason = BASELINE[flow.id];
    if (reason === undefined) {
      await runOne(flow);
      passed++;
      return;
    }
    let failed = false;
    try {
      await runOne(flow);
    } catch (err) {
      if (!(err instanceof assert.AssertionError)) throw err;
      failed = true; // a known failure, listed with its reason
    }
    assert.ok(failed || reason.startsWith("race:"), `stale baseline entry: ${flow.id} passes now (listed as: ${reason})`);
  });
}

test("the flows were found", () => {
  assert.ok(FLOWS.length >= 40, `only ${FLOWS.length} flows`);
  for (const flow of FLOWS) assert.ok(flow.id.startsWith("acp/v1/flows/"));
});

test.after(() => {
  console.log(`flows: ${passed} passed of ${FLOWS.filter((f) => selected(f.id)).length} selected`);
});
