/**
 * Every A2A single-message case under `vectors/a2a/v1/` (flows are `flows.test.ts`;
 * vectors/README.md, "A2A") through the TypeScript SDK's real receive paths:
 * - a request case goes as raw HTTP bytes on a TCP socket (`node:net`) to the
 *   `node:http` server on 127.0.0.1 (`A2aHttpServer`, memory store); an interceptor, the
 *   server's hook once a call is decoded, records the request and refuses the call, so
 *   nothing runs; the recorded request is re-encoded with the SDK's canonical encoder;
 * - an answer case is what a `node:net` server answers the real `A2aClient` (its
 *   `fetch`, the binding's envelope or SSE reader, the typed decode) with.
 * A decoded request or result is compared byte for byte with the case's golden file; a
 * refusal through the error the server answered.
 *
 * Known failures are listed in `vectors/baselines/a2a-typescript.json` with a reason: an
 * unlisted failure fails, and so does a listed case that passes (a stale entry).
 * `AGENTPROTO_VECTORS=a2a/v1/GetTask/,-a2a/v1/version` selects cases by id prefix.
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { A2aClient, A2aError, encodeRequest, encodeResult, isOperation, OPERATIONS, type Answer, type OperationName, type Operations } from "../../src/a2a/index.js";
import { A2aCore, A2aHttpServer, DemoAgent, demoCard } from "../../src/a2a/server/index.js";
import { exchange, answeringServer, type Exchange } from "./wire.js";
import { JObject, parse, type JNode } from "../../src/codec/reader.js";
import { member, nodeOf, same, show } from "../json-compare.js";
import { caseFiles, idOf, minify, selected, VECTORS } from "../vector-files.js";

const BASELINE_FILE = `${VECTORS}baselines/a2a-typescript.json`;
const BASELINE: Record<string, string> = existsSync(BASELINE_FILE)
  ? (JSON.parse(readFileSync(BASELINE_FILE, "utf8")) as Record<string, string>)
  : {};

interface Case {
  readonly id: string;
  readonly binding: "jsonrpc" | "rest";
  readonly direction: "client_to_server" | "server_to_client";
  readonly operation: OperationName | null;
  readonly http: JObject;
  readonly body: Buffer | null;
  readonly expect: JObject;
  readonly canonical: Buffer | null;
}

function str(object: JObject, key: string): string | undefined {
  const v = member(object, key)?.value;
  return typeof v === "string" ? v : undefined;
}

function load(path: string): Case {
  const text = readFileSync(path, "utf8");
  const data = parse(text);
  assert.ok(data instanceof JObject);
  const id = str(data, "id") ?? idOf(path);
  const http = member(data, "http")?.value;
  const expect = member(data, "expect")?.value;
  assert.ok(http instanceof JObject && expect instanceof JObject, `${id}: http and expect are objects`);
  let body: Buffer | null = null;
  const input = member(data, "input");
  if (str(data, "input_text") !== undefined) body = Buffer.from(str(data, "input_text") as string, "utf8");
  else if (str(data, "input_base64") !== undefined) body = Buffer.from(str(data, "input_base64") as string, "base64");
  else if (input !== undefined && input.value !== null) body = Buffer.from(minify(text.slice(input.start, input.end)), "utf8");
  const operation = str(data, "operation") ?? null;
  assert.ok(operation === null || isOperation(operation), `${id}: unknown operation ${operation}`);
  const golden = path.replace(/\.json$/, ".canonical");
  return {
    id,
    binding: str(data, "binding") as "jsonrpc" | "rest",
    direction: str(data, "direction") as "client_to_server" | "server_to_client",
    operation: operation as OperationName | null,
    http,
    body,
    expect,
    canonical: existsSync(golden) ? readFileSync(golden) : null,
  };
}

// ---------------------------------------------------------------------------
// Observing what the SDK does with a case

type Observed = Record<string, unknown>;

/** The parts of a refusal as its wire form states them (the `ErrorInfo`'s metadata). */
function errorParts(details: JNode | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const info = details !== undefined && details !== null && typeof details === "object" && "items" in details ? details.items[0] : undefined;
  if (!(info instanceof JObject)) return out;
  out["reason"] = member(info, "reason")?.value;
  const meta = member(info, "metadata")?.value;
  if (meta instanceof JObject) for (const key of ["path", "kind", "expected", "found"]) out[key] = member(meta, key)?.value;
  return out;
}

/** Where the HTTP+JSON binding is mounted (the cases' paths are relative to it). */
const REST_PREFIX = "/a2a/rest";

/** The server every request case goes to, and what its interceptor recorded. */
const recorded: Array<[OperationName, string]> = [];
let server: A2aHttpServer | null = null;

async function startServer(): Promise<A2aHttpServer> {
  const s = new A2aHttpServer(
    (url) =>
      new A2aCore(new DemoAgent(), {
        card: demoCard(url),
        interceptors: [
          (_cx, request) => {
            recorded.push([request.operation, encodeRequest(request)]);
            throw new A2aError("Internal", "recorded by the vector runner");
          },
        ],
      }),
  );
  await s.listen(0, "127.0.0.1");
  return s;
}

function headerPairs(c: Case): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const h = member(c.http, "headers")?.value;
  if (h instanceof JObject) for (const m of h.members) if (typeof m.value === "string") out.push([m.key, m.value]);
  return out;
}

async function observeRequest(c: Case): Promise<[Observed, string | null]> {
  assert.ok(server !== null);
  recorded.length = 0;
  const path = str(c.http, "path") ?? "";
  const target = c.binding === "jsonrpc" ? `/${path}` : `${REST_PREFIX}${path}`;
  const port = Number(new URL(server.url).port);
  const reply: Exchange = await exchange(port, str(c.http, "method") ?? "POST", target, headerPairs(c), c.body);
  const seen = recorded.splice(0);
  if (seen.length > 0) {
    const [[operation, encoded]] = seen as [[OperationName, string]];
    return [{ outcome: "dispatched", operation, type: OPERATIONS[operation].params, params: parse(encoded), http_status: reply.status }, encoded];
  }
  if (reply.status === 204) return [{ outcome: "refused", http_status: 204 }, null];
  const ct = reply.headers.get("content-type") ?? "";
  assert.ok(ct.startsWith("application/") && ct.includes("json"), `an error answer of media type ${JSON.stringify(ct)}: ${reply.body.toString("utf8")}`);
  const wire = parse(reply.body.toString("utf8"));
  assert.ok(wire instanceof JObject, "the error answer is an object");
  const error = member(wire, "error")?.value;
  assert.ok(error instanceof JObject, "the answer holds an error");
  if (c.binding === "jsonrpc") {
    assert.equal(member(wire, "jsonrpc")?.value, "2.0");
    return [{ outcome: "refused", id: member(wire, "id")?.value, http_status: reply.status, error: { code: member(error, "code")?.value, ...errorParts(member(error, "data")?.value) } }, null];
  }
  return [{ outcome: "refused", http_status: reply.status, error: { status: member(error, "status")?.value, ...errorParts(member(error, "details")?.value) } }, null];
}

/** The fixed request the client under test sends for each operation (its decoding of
 * the answer does not depend on it). */
const FIXED: { readonly [K in OperationName]: Operations[K]["params"] } = {
  SendMessage: { message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
  SendStreamingMessage: { message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
  GetTask: { id: "t-1" },
  ListTasks: {},
  CancelTask: { id: "t-1" },
  SubscribeToTask: { id: "t-1" },
  CreateTaskPushNotificationConfig: { taskId: "t-1", url: "https://example.com/push" },
  GetTaskPushNotificationConfig: { taskId: "t-1", id: "c-1" },
  ListTaskPushNotificationConfigs: { taskId: "t-1" },
  GetExtendedAgentCard: {},
  DeleteTaskPushNotificationConfig: { taskId: "t-1", id: "c-1" },
};

async function observeAnswer(c: Case): Promise<[Observed, string | null]> {
  const operation = c.operation;
  assert.ok(operation !== null, "an answer case names its operation");
  const status = Number((member(c.http, "status")?.value as { text?: string } | undefined)?.text ?? "200");
  const stream = headerPairs(c).some(([k, v]) => k.toLowerCase() === "content-type" && v === "text/event-stream");
  const peer = await answeringServer(status, headerPairs(c), c.body, c.binding === "jsonrpc", stream);
  try {
    const client = new A2aClient({ url: c.binding === "jsonrpc" ? `${peer.url}/` : peer.url, binding: c.binding, retries: 0, resumes: 0, timeoutMs: 5000 });
    let answer: Answer<unknown>;
    if (operation === "SendStreamingMessage" || operation === "SubscribeToTask") {
      let first: Answer<unknown> | null = null;
      for await (const ev of client.stream(operation, FIXED[operation] as never, { resumes: 0 })) {
        if (ev.answer === null) continue;
        first = ev.answer;
        break;
      }
      assert.ok(first !== null, "the stream yields an event");
      answer = first;
    } else {
      answer = await client.call(operation, FIXED[operation] as never);
    }
    if (answer.outcome === "decoded") {
      const encoded = encodeResult(operation, answer.value as never);
      return [{ outcome: "decoded", type: OPERATIONS[operation].result, result: parse(encoded) }, encoded];
    }
    if (answer.outcome === "call_failed") {
      const decode = answer.error.decode;
      return [{ outcome: "call_failed", path: decode?.path, kind: decode?.kind }, null];
    }
    const e = answer.error;
    return [{ outcome: "error_reply", http_status: e.httpStatus, error: { code: e.code, status: e.status, reason: e.reason } }, null];
  } finally {
    await peer.close();
  }
}

// ---------------------------------------------------------------------------
// Comparing

function compare(expect: JObject, observed: Observed): void {
  const mismatch = (what: string): Error =>
    new assert.AssertionError({ message: `${what}: expected ${show(expect)}, observed ${show(nodeOf(observed))}` });
  if (member(expect, "outcome")?.value !== observed["outcome"]) throw mismatch("outcome");
  for (const key of ["operation", "type", "params", "result", "id", "http_status", "path", "kind"]) {
    const wanted = member(expect, key);
    if (wanted !== undefined && !same(wanted.value, nodeOf(observed[key]))) throw mismatch(key);
  }
  const error = member(expect, "error")?.value;
  if (error instanceof JObject) {
    const got = (observed["error"] ?? {}) as Record<string, unknown>;
    for (const m of error.members) {
      if (!same(m.value, nodeOf(got[m.key]))) throw mismatch(`error.${m.key}`);
    }
  }
}

function compareBytes(golden: Buffer, actual: Buffer): void {
  if (golden.equals(actual)) return;
  let at = 0;
  while (at < golden.length && at < actual.length && golden[at] === actual[at]) at++;
  throw new assert.AssertionError({
    message:
      `canonical encoding differs at byte ${at} (golden ${golden.length} bytes, encoded ${actual.length} bytes)\n` +
      `  golden:  ${golden.toString("utf8")}\n  encoded: ${actual.toString("utf8")}`,
  });
}

async function run(c: Case): Promise<void> {
  const [observed, encoded] = c.direction === "client_to_server" ? await observeRequest(c) : await observeAnswer(c);
  compare(c.expect, observed);
  if (encoded !== null) {
    assert.ok(c.canonical !== null, "the message decodes but the case has no golden file (<case>.canonical)");
    compareBytes(c.canonical, Buffer.from(encoded, "utf8"));
  }
}

// ---------------------------------------------------------------------------
// Tests

const CASES = caseFiles("a2a").map(load);
let passed = 0;

test.before(async () => {
  server = await startServer();
});

test.after(async () => {
  await server?.close();
});

for (const c of CASES) {
  if (!selected(c.id)) continue;
  test(c.id, async () => {
    const reason = BASELINE[c.id];
    if (reason === undefined) {
      await run(c);
      passed++;
      return;
    }
    let failed = false;
    try {
      await run(c);
    } catch (err) {
      if (!(err instanceof assert.AssertionError)) throw err;
      failed = true; // a known failure, listed with its reason
    }
    assert.ok(failed, `stale baseline entry: ${c.id} passes now (listed as: ${reason})`);
  });
}

test("the A2A baseline lists only existing cases", () => {
  const ids = new Set(CASES.map((c) => c.id));
  assert.deepEqual(
    Object.keys(BASELINE).filter((id) => !ids.has(id) && !id.startsWith("a2a/v1/flows/")),
    [],
  );
});

test("the A2A cases were found", () => {
  assert.ok(CASES.length > 300, `only ${CASES.length} cases`);
});

test.after(() => {
  const chosen = CASES.filter((c) => selected(c.id));
  const listed = chosen.filter((c) => BASELINE[c.id] !== undefined).length;
  console.log(`a2a vectors: ${passed} passed, ${listed} baselined, ${chosen.length} selected`);
});
