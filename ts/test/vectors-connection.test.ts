/**
 * Every single-message vector case through a live connection: the side the case names
 * (`connectAgent` for client-to-agent lines, `connectClient` for agent-to-client ones)
 * serves a recording application over an in-memory pipe, the test plays the other side
 * with raw lines, and what the connection does with the case's bytes must be what
 * `classify` says (which `vectors.test.ts` holds to each case's `expect`): the handler
 * called with the same decoded params, the same error reply byte for byte, or nothing
 * dispatched and nothing written. So the corpus certifies the connection's own receive
 * path, not only the function it is built on.
 *
 * The connection is first brought to the state a stateless case presupposes, as a real
 * peer would: `initialize` with every capability advertised (unless the case answers or
 * is an `initialize`), the session the case names opened (unless the case opens it), and
 * for a line that answers calls of the receiving side (`pending`), those calls made for
 * real under the case's ids (the side numbers its calls from 0; extension calls nobody
 * answers fill the gaps). Where a connection must differ from the stateless `classify`,
 * the difference is checked for what it is: `$/cancel_request` is consumed by the
 * connection, and a request holding a kind no side can have advertised (an unknown
 * variant under a value gate) is refused -32602. Lines that answer an id our side never
 * uses (a string or `null`) are counted as not driven.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import type { Endpoint } from "../src/acp/endpoint.js";
import { ConnectionFailed, InvalidResult, PeerError } from "../src/acp/errors.js";
import type { AcpEvent } from "../src/acp/options.js";
import { classify, type ExtMessage, type Incoming } from "../src/acp/receive.js";
import * as v1 from "../src/acp/v1.js";
import { DecodeError } from "../src/codec/errors.js";
import { RawJson, UnknownVariant } from "../src/codec/values.js";
import { LineSplitter } from "../src/jsonrpc/frame.js";
import { duplex, type End } from "../src/jsonrpc/memory.js";
import { encodeMessage } from "../src/jsonrpc/message.js";
import type { ConnectionEvent } from "../src/jsonrpc/options.js";
import { caseFiles, minify, selected } from "./vector-files.js";

const LIMIT = 5000;

interface Case {
  readonly id: string;
  readonly bytes: Buffer;
  readonly side: "agent" | "client";
  /** The calls of the receiving side the line may answer: id (JSON text) to method. */
  readonly pending: ReadonlyMap<string, string>;
  readonly outcome: string;
  /** The kind of the local decode error a `call_failed` case states, if it does. */
  readonly kind: string | undefined;
}

function loadCases(): Case[] {
  const out: Case[] = [];
  for (const file of caseFiles("acp")) {
    const data = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    let bytes: Buffer;
    if (typeof data["input_text"] === "string") bytes = Buffer.from(data["input_text"], "utf8");
    else if (typeof data["input_base64"] === "string") bytes = Buffer.from(data["input_base64"], "base64");
    else bytes = Buffer.from(minify(JSON.stringify(data["input"])) + "\n", "utf8");
    // The test writes more lines after the case's: a last line the input leaves open is closed.
    if (bytes[bytes.length - 1] !== 0x0a) bytes = Buffer.concat([bytes, Buffer.from("\n")]);
    const pending = new Map(Object.entries((data["pending"] ?? {}) as Record<string, string>));
    const expect = data["expect"] as { outcome?: unknown; kind?: unknown };
    const outcome = String(expect.outcome);
    const kind = typeof expect.kind === "string" ? expect.kind : undefined;
    out.push({ id: String(data["id"]), bytes, side: data["direction"] === "client_to_agent" ? "agent" : "client", pending, outcome, kind });
  }
  return out;
}

async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), LIMIT)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A value with what can differ made visible (raw texts, unknown variants, bigints). */
function norm(x: unknown): unknown {
  if (x instanceof UnknownVariant) return { unknown: x.variantTag, raw: x.raw.text };
  if (x instanceof RawJson) return { raw: x.text };
  if (x instanceof DecodeError) return { error: x.message, path: x.path };
  if (typeof x === "bigint") return { bigint: x.toString() };
  if (Array.isArray(x)) return x.map(norm);
  if (typeof x === "object" && x !== null) return Object.fromEntries(Object.keys(x).map((k) => [k, norm((x as Record<string, unknown>)[k])]));
  return x;
}

// ---------------------------------------------------------------------------
// The recording application and the preamble

interface Call {
  readonly handler: string;
  readonly params: unknown;
}

const BARRIER = "_vectors/barrier";
const MARK = "_vectors/mark";

const AGENT_CAPABILITIES = {
  loadSession: true,
  promptCapabilities: { image: true, audio: true, embeddedContext: true },
  mcpCapabilities: { http: true, sse: true },
  sessionCapabilities: { list: {}, delete: {}, resume: {}, close: {}, additionalDirectories: {} },
  auth: { logout: {} },
};
const CLIENT_CAPABILITIES = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
  elicitation: { form: {}, url: {} },
};

/** Answers that are valid results of the methods a preamble or a case calls. */
const RESULTS: Record<string, unknown> = {
  initialize: { protocolVersion: 1, agentCapabilities: AGENT_CAPABILITIES },
  prompt: { stopReason: "end_turn" },
  requestPermission: { outcome: { outcome: "cancelled" } },
  readTextFile: { content: "" },
  createTerminal: { terminalId: "t" },
  terminalOutput: { output: "", truncated: false },
  waitForTerminalExit: {},
  createElicitation: { action: "cancel" },
  listSessions: { sessions: [] },
};

/** The `modes` the opening answers carry: session-gated requests (`session/set_mode`) then apply to the session. */
const LIVE_MODES = { currentModeId: "live", availableModes: [] };

/** An application whose every handler records its call and answers with a valid result. */
function recorder(calls: Call[], session: () => string, marks: () => void): object {
  return new Proxy(
    {},
    {
      get(_target, name) {
        if (typeof name !== "string" || name === "then") return undefined;
        return (_cx: unknown, params: unknown) => {
          if (name === "extNotification" && (params as ExtMessage).method === MARK) {
            marks();
            return undefined;
          }
          if (name === "extMethod" && (params as ExtMessage).method === BARRIER) return new RawJson("{}");
          calls.push({ handler: name, params });
          if (name === "newSession" || name === "loadSession" || name === "resumeSession") return { sessionId: session(), modes: LIVE_MODES };
          if (name === "extMethod") return new RawJson("{}");
          return RESULTS[name] ?? {};
        };
      },
    },
  );
}

/** The raw other side of the pipe. */
class Remote {
  private readonly splitter = new LineSplitter();
  private readonly lines: string[] = [];

  constructor(private readonly end: End) {}

  write(bytes: Uint8Array): Promise<void> {
    return within(this.end.output.write(bytes), "writing to the connection");
  }

  send(message: unknown): Promise<void> {
    return this.write(Buffer.from(JSON.stringify(message) + "\n", "utf8"));
  }

  next(what: string): Promise<string> {
    return within(
      (async () => {
        while (this.lines.length === 0) {
          const chunk = await this.end.input.read();
          const frames = chunk === null ? this.splitter.finish() : this.splitter.feed(chunk);
          for (const f of frames) if (f instanceof Uint8Array) this.lines.push(Buffer.from(f).toString("utf8"));
          if (chunk === null && this.lines.length === 0) throw new Error(`the connection closed its output; expected ${what}`);
        }
        return this.lines.shift() as string;
      })(),
      what,
    );
  }

  close(): Promise<void> {
    return this.end.output.close();
  }
}

/** The first request or notification object of a line, if it is one (the preamble reads it). */
function requestOf(bytes: Buffer): { method?: unknown; params?: unknown } | null {
  try {
    const value = JSON.parse(bytes.toString("utf8")) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as { method?: unknown; params?: unknown }) : null;
  } catch {
    return null;
  }
}

const OPENS = new Set(["session/new", "session/load", "session/resume"]);

// ---------------------------------------------------------------------------
// One case

const counts = { driven: 0, consumed: 0, gated: 0, answered: 0, skipped: [] as string[] };
const FILL = "_vectors/fill";

/** A call's outcome, observable without awaiting it. */
interface Settled {
  done: boolean;
  ok?: unknown;
  error?: unknown;
  readonly promise: Promise<void>;
}

function settle(promise: Promise<unknown>): Settled {
  const s: Settled = {
    done: false,
    promise: promise.then(
      (value) => {
        s.done = true;
        s.ok = value;
      },
      (error: unknown) => {
        s.done = true;
        s.error = error;
      },
    ),
  };
  return s;
}

/** Params for a call of `method`: a valid request of the vectors, naming our session. */
function callFor(endpoint: Endpoint, method: string, sessionId: string): Promise<unknown> {
  if (method.startsWith("_")) return endpoint.extRequest(method, "{}");
  // A method no request case shows takes all-optional params: `{}` decoded as its type.
  const info = v1.SURFACE.requests(endpoint.role === "agent" ? "client" : "agent").get(method);
  assert.ok(info !== undefined, `${method} is not a request the peer handles`);
  const params = PARAMS.get(method) ?? v1.SURFACE.decodeNamed(info.params, new RawJson("{}"), "$.params").value;
  const own = { ...(params as Record<string, unknown>) };
  if (typeof own["sessionId"] === "string") own["sessionId"] = sessionId;
  return endpoint.request(method, own);
}

/** The outstanding call's outcome against what `classify` made of the answer. */
async function checkAnswer(expected: Incoming, kind: string | undefined, calling: { id: number; outcome: Settled }[], written: string[], label: string): Promise<void> {
  assert.deepEqual(written, [], `an answer is not answered: ${label}`);
  if (expected.kind === "ignored") {
    assert.ok(calling.every((x) => !x.outcome.done), `an ignored answer resolves nothing: ${label}`);
    return;
  }
  assert.ok(expected.kind === "response" || expected.kind === "error" || expected.kind === "call-failed", `${expected.kind}: ${label}`);
  const call = calling.find((x) => x.id === expected.id);
  assert.ok(call !== undefined, `the answered call is outstanding: ${label}`);
  await within(call.outcome.promise, `the outcome of call ${String(expected.id)}: ${label}`);
  const { ok, error } = call.outcome;
  if (expected.kind === "response") {
    assert.equal(error, undefined, `the call succeeds: ${label}\n  error: ${String(error)}`);
    const want = expected.typeName === null ? (expected.result as ExtMessage).payload : expected.result;
    assert.deepEqual(norm(ok), norm(want), `the call's result: ${label}`);
  } else if (expected.kind === "error") {
    assert.ok(error instanceof PeerError, `the call fails with the peer's error: ${label}\n  got: ${String(error)}`);
    assert.deepEqual([error.error.code, error.error.message], [expected.error.code, expected.error.message], `the peer's error: ${label}`);
  } else {
    assert.ok(error instanceof InvalidResult || error instanceof ConnectionFailed, `the call fails locally: ${label}\n  got: ${String(error)}`);
    assert.ok(error.message.includes(expected.message), `the failure names the problem (${expected.message}): ${label}\n  got: ${error.message}`);
    if (error instanceof InvalidResult) {
      // The local decode error is the one the receive path made, kind and all.
      assert.equal(error.error.kind, expected.error?.kind, `the failure's kind: ${label}`);
      if (kind !== undefined) assert.equal(error.error.kind, kind, `the case's kind: ${label}`);
    }
  }
}
const CANCEL_REQUEST = v1.SURFACE.rules.cancelRequest;

/** Whether a decoded value holds a variant its union does not list. */
function hasUnknown(x: unknown): boolean {
  if (x instanceof UnknownVariant) return true;
  if (Array.isArray(x)) return x.some(hasUnknown);
  if (typeof x === "object" && x !== null && !(x instanceof RawJson)) return Object.values(x).some(hasUnknown);
  return false;
}
const timings: number[] = [];
let started = 0;

async function drive(c: Case): Promise<void> {
  const line = c.bytes.subarray(0, c.bytes.length - (c.bytes[c.bytes.length - 1] === 0x0a ? 1 : 0));
  const receiver = c.side === "agent" ? v1.AGENT : v1.CLIENT;
  const expected: Incoming = classify(line, receiver, (id) => c.pending.get(JSON.stringify(id)));
  const message = requestOf(line as Buffer);
  const method = typeof message?.method === "string" ? message.method : null;
  const params = message?.params;
  const named = typeof params === "object" && params !== null && typeof (params as { sessionId?: unknown }).sessionId === "string" ? ((params as { sessionId: string }).sessionId) : null;
  const sessionId = named ?? "vectors-session";
  const plan = [...c.pending].map(([id, m]) => [JSON.parse(id) as unknown, m] as const).sort((a, b) => Number(a[0]) - Number(b[0]));
  if (plan.some(([id]) => typeof id !== "number")) {
    counts.skipped.push(`${c.id}: answers a call whose id is not a number (the side numbers its calls)`);
    return;
  }
  const answersInitialize = plan.length === 1 && plan[0]?.[0] === 0 && plan[0][1] === "initialize";

  started = performance.now();
  const calls: Call[] = [];
  const events: (ConnectionEvent | AcpEvent)[] = [];
  let marked = 0;
  let onMark = (): void => {};
  const app = recorder(calls, () => sessionId, () => {
    marked++;
    onMark();
  });
  const [ours, theirs] = duplex();
  // Handler failures reach the observer; the default console report would only be noise here.
  const options = { observer: (e: ConnectionEvent | AcpEvent) => events.push(e), onError: null };
  const served = c.side === "agent" ? v1.connectAgent(app as v1.Agent, ours.input, ours.output, options) : v1.connectClient(app as v1.Client, ours.input, ours.output, options);
  const run = served.connection.run();
  const remote = new Remote(theirs);
  const calling: { id: number; outcome: Settled }[] = [];
  let nextId = 0;
  try {
    // The preamble: the state a stateless case presupposes.
    if (c.side === "agent") {
      if (method !== "initialize") {
        await remote.send({ jsonrpc: "2.0", id: "vectors-init", method: "initialize", params: { protocolVersion: 1, clientCapabilities: CLIENT_CAPABILITIES } });
        assert.match(await remote.next("the initialize answer"), /"id":"vectors-init","result"/);
        if (named !== null && (method === null || !OPENS.has(method))) {
          await remote.send({ jsonrpc: "2.0", id: "vectors-new", method: "session/new", params: { cwd: "/", mcpServers: [] } });
          assert.match(await remote.next("the session/new answer"), /"id":"vectors-new","result"/);
        }
        calls.length = 0;
      }
    } else {
      const agent = (served as { agent: v1.AgentConnection }).agent;
      const init = agent.initialize({ protocolVersion: 1, clientCapabilities: CLIENT_CAPABILITIES });
      const request = JSON.parse(await remote.next("the client's initialize")) as { id: number };
      if (answersInitialize) {
        calling.push({ id: 0, outcome: settle(init) });
      } else {
        await remote.send({ jsonrpc: "2.0", id: request.id, result: { protocolVersion: 1, agentCapabilities: AGENT_CAPABILITIES } });
        await within(init, "the client's initialize call");
      }
      nextId = 1;
      if (!answersInitialize && (named !== null || plan.length > 0)) {
        const opened = agent.newSession({ cwd: "/", mcpServers: [] });
        const next = JSON.parse(await remote.next("the client's session/new")) as { id: number };
        await remote.send({ jsonrpc: "2.0", id: next.id, result: { sessionId, modes: LIVE_MODES } });
        await within(opened, "the client's session/new call");
        nextId = 2;
      }
    }
    if (!answersInitialize && plan.length > 0) {
      // The calls the case's line answers, outstanding under the case's ids: the side
      // numbers its calls from 0, so extension calls nobody answers fill the gaps.
      const handle = c.side === "agent" ? (served as { client: v1.ClientConnection }).client : (served as { agent: v1.AgentConnection }).agent;
      const endpoint = handle.endpoint;
      for (const [id, m] of plan) {
        if ((id as number) < nextId) {
          counts.skipped.push(`${c.id}: answers call ${String(id)}, which the preamble's own calls already used`);
          return;
        }
        while (nextId <= (id as number)) {
          const filler = nextId < (id as number);
          const outcome = filler ? settle(endpoint.extRequest(FILL, "{}")) : settle(callFor(endpoint, m, sessionId));
          // A call refused before it is sent (a gate, the session state) says why at once.
          const refused = outcome.promise.then(() => Promise.reject(new Error(`${c.id}: call ${nextId} (${filler ? FILL : m}) was not sent: ${String(outcome.error ?? outcome.ok)}`)));
          const sent = JSON.parse(await Promise.race([remote.next(`call ${nextId}`), refused])) as { id: unknown; method: unknown };
          refused.catch(() => {});
          assert.deepEqual([sent.id, sent.method], [nextId, filler ? FILL : m], `${c.id}: the outstanding calls`);
          if (!filler) calling.push({ id: nextId, outcome });
          nextId++;
        }
      }
    }
    const before = events.length;

    // The case, then a notification the worker handles after it and a request whose
    // answer comes after everything the case made the connection write.
    await remote.write(c.bytes);
    const handled = new Promise<void>((resolve) => (onMark = resolve));
    await remote.send({ jsonrpc: "2.0", method: MARK });
    await remote.send({ jsonrpc: "2.0", id: "vectors-barrier", method: BARRIER });
    const written: string[] = [];
    for (;;) {
      const out = await remote.next("the barrier's answer");
      if (out.includes('"id":"vectors-barrier"')) break;
      written.push(out);
    }
    // A connection left uninitialized (a refused `initialize`) drops the mark unhandled.
    const dropped = events.some((e) => e.kind === "notification-before-initialize" && e.method === MARK);
    if (marked === 0 && !dropped) await within(handled, "the mark notification");

    timings.push(performance.now() - started);
    const label = `${c.id}\n  line: ${line.toString()}\n  classify: ${expected.kind}\n  written: ${written.join(" | ")}\n  calls: ${calls.map((x) => x.handler).join(", ")}\n  events: ${events.slice(before).map((e) => e.kind).join(", ")}`;
    if (expected.kind === "notification" && expected.method === CANCEL_REQUEST) {
      // Consumed by the connection (it cancels the request it names), never the application's.
      assert.deepEqual([calls, written], [[], []], `the cancel notification is the connection's: ${label}`);
      counts.consumed++;
      counts.driven++;
      return;
    }
    if (expected.kind === "request" && hasUnknown(expected.params) && calls.length === 0) {
      // A value gate: the role refuses a kind nobody can have advertised (an unknown
      // variant), which `classify`, knowing no capabilities, keeps.
      assert.equal(written.length, 1, `one answer: ${label}`);
      const reply = JSON.parse(written[0] as string) as { id: unknown; error?: { code: number; data?: { path?: string } } };
      assert.equal(reply.error?.code, -32602, `the gate's refusal: ${label}`);
      assert.deepEqual(reply.id, expected.id, `the gate's refusal: ${label}`);
      counts.gated++;
      counts.driven++;
      return;
    }
    if (plan.length > 0) {
      await checkAnswer(expected, c.kind, calling, written, label);
      counts.answered++;
      counts.driven++;
      return;
    }
    switch (expected.kind) {
      case "request":
      case "notification": {
        assert.equal(calls.length, 1, `one handler call expected: ${label}`);
        const call = calls[0] as Call;
        assert.deepEqual(norm(call.params), norm(expected.params), `the handler's params: ${label}`);
        // What was salvaged is reported as the receive path found it.
        const salvaged = events.slice(before).flatMap((e) => (e.kind === "salvaged" ? e.warnings.map((w) => w.path) : []));
        assert.deepEqual(salvaged, expected.warnings.map((w) => w.path), `the salvage warnings: ${label}`);
        if (expected.kind === "request") assert.equal(written.length, 1, `one answer: ${label}`);
        else assert.deepEqual(written, [], `a notification is not answered: ${label}`);
        break;
      }
      case "reply":
        assert.deepEqual(calls, [], `nothing dispatched: ${label}`);
        assert.deepEqual(written, [encodeMessage(expected.reply)], `the error reply: ${label}`);
        break;
      case "ignored":
        assert.deepEqual(calls, [], `nothing dispatched: ${label}`);
        assert.deepEqual(written, [], `nothing written: ${label}`);
        break;
      default:
        assert.fail(`a case without pending calls classified as ${expected.kind}: ${label}`);
    }
    counts.driven++;
  } finally {
    await remote.close();
    await within(run, "the connection ends");
  }
}

const CASES = loadCases();

/** For each method, the params of the shortest request case that decodes: valid params
 * to make outstanding calls with. */
const PARAMS = new Map<string, unknown>();
for (const c of [...CASES].sort((a, b) => a.bytes.length - b.bytes.length)) {
  if (c.outcome !== "request") continue;
  const incoming = classify(c.bytes.subarray(0, c.bytes.length - 1), c.side === "agent" ? v1.AGENT : v1.CLIENT, () => undefined);
  if (incoming.kind !== "request" || incoming.typeName === null || incoming.warnings.length > 0 || hasUnknown(incoming.params)) continue;
  if (!PARAMS.has(incoming.method)) PARAMS.set(incoming.method, incoming.params);
}

test("every single-message vector case through a live connection answers as classify does", async () => {
  const failures: string[] = [];
  for (const c of CASES) {
    if (!selected(c.id)) continue;
    try {
      await drive(c);
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      failures.push(text.startsWith(c.id) || text.includes(`: ${c.id}\n`) ? text : `${c.id}: ${text}\n  line: ${c.bytes.toString().slice(0, 300)}`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} cases differ:\n${failures.join("\n\n")}`);
  if ((process.env["AGENTPROTO_VECTORS"] ?? "") === "") assert.ok(counts.driven > 600, `only ${counts.driven} cases driven`);
});

test.after(() => {
  timings.sort((a, b) => a - b);
  console.log(`median ${timings[timings.length >> 1]?.toFixed(1)} ms, max ${timings[timings.length - 1]?.toFixed(1)} ms`);
  console.log(
    `vectors through a live connection: ${counts.driven} driven (${counts.answered} answering outstanding calls, ${counts.consumed} cancel notifications consumed by the connection, ${counts.gated} refused by a value gate), ${counts.skipped.length} not driven:\n  ${counts.skipped.join("\n  ")}`,
  );
});

// The connection reads `$/cancel_request` itself (it cancels the request named): it must
// accept exactly the params `classify` accepts, on both sides.
const CANCEL_PARAMS = [
  '{"requestId":7}',
  '{"requestId":"req-1","_meta":{"k":1}}',
  '{"requestId":null}',
  '{"requestId":-0}',
  '{"requestId":9223372036854775808}',
  '{"requestId":1.5}',
  '{"requestId":true}',
  '{"requestId":7,"_meta":5}',
  "{}",
];

test("the connection acts on exactly the cancel notifications classify accepts", async () => {
  for (const side of ["agent", "client"] as const) {
    for (const params of CANCEL_PARAMS) {
      const line = `{"jsonrpc":"2.0","method":"$/cancel_request","params":${params}}`;
      const expected = classify(line, side === "agent" ? v1.AGENT : v1.CLIENT, () => undefined);
      const events: (ConnectionEvent | AcpEvent)[] = [];
      const [ours, theirs] = duplex();
      // Handler failures reach the observer; the default console report would only be noise here.
      const options = { observer: (e: ConnectionEvent | AcpEvent) => events.push(e), onError: null };
      const app = recorder([], () => "s", () => {});
      const served = side === "agent" ? v1.connectAgent(app as v1.Agent, ours.input, ours.output, options) : v1.connectClient(app as v1.Client, ours.input, ours.output, options);
      const run = served.connection.run();
      const remote = new Remote(theirs);
      await remote.write(Buffer.from(line + "\n"));
      await remote.send({ jsonrpc: "2.0", id: "vectors-barrier", method: BARRIER });
      await remote.next("the barrier's answer");
      await remote.close();
      await within(run, "the connection ends");
      const invalid = events.some((e) => e.kind === "invalid-cancel");
      assert.equal(invalid, expected.kind !== "notification", `${side} side, params ${params}: classify says ${expected.kind}`);
    }
  }
});
