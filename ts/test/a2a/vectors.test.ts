/**
 * Every A2A single-message case under `vectors/a2a/v1/` (flows excepted; vectors/README.md,
 * "A2A") through the TypeScript SDK's binding layer: a request's HTTP method, target,
 * headers and body through `decodeJsonRpcRequest` / `decodeRestRequest` (the envelope or
 * route, the version check, the generated validator), an answer's status, headers and body
 * through `readJsonRpcAnswer` / `readRestAnswer` (an SSE body through `SseReader` first).
 * A decoded request or result is re-encoded with the SDK's canonical encoder and compared
 * byte for byte with the case's golden file; a refusal is compared through its wire form
 * (the JSON-RPC error response or the AIP-193 body the server would send).
 *
 * The runner rules want requests to reach a real server over TCP and answers a real
 * client: until the `node:http` server and the `fetch` client exist, this runner goes
 * through the pure binding layer they will sit on (the same functions, without sockets).
 *
 * Known failures are listed in `vectors/baselines/a2a-typescript.json` with a reason: an
 * unlisted failure fails, and so does a listed case that passes (a stale entry).
 * `AGENTPROTO_VECTORS=a2a/v1/GetTask/,-a2a/v1/version` selects cases by id prefix.
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";

import {
  decodeJsonRpcRequest,
  decodeRestRequest,
  encodeRequest,
  encodeResult,
  isOperation,
  OPERATIONS,
  readJsonRpcAnswer,
  readRestAnswer,
  readRestStreamEvent,
  jsonRpcErrorBody,
  restErrorBody,
  SseReader,
  type Answer,
  type Headers,
  type OperationName,
} from "../../src/a2a/index.js";
import { JObject, parse, type JNode } from "../../src/codec/reader.js";
import { member, nodeOf, same, show } from "../json-compare.js";
import { caseFiles, idOf, minify, selected, VECTORS } from "../vector-files.js";

const BASELINE_FILE = `${VECTORS}baselines/a2a-typescript.json`;
const BASELINE: Record<string, string> = existsSync(BASELINE_FILE)
  ? (JSON.parse(readFileSync(BASELINE_FILE, "utf8")) as Record<string, string>)
  : {};

/** The id the client under test sends its call with. */
const CALL_ID = 7;

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

function headersOf(c: Case): Headers {
  const out: Record<string, string> = {};
  const h = member(c.http, "headers")?.value;
  if (h instanceof JObject) for (const m of h.members) if (typeof m.value === "string") out[m.key.toLowerCase()] = m.value;
  return out;
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

function observeRequest(c: Case): [Observed, string | null] {
  const headers = headersOf(c);
  const target = str(c.http, "path") ?? "";
  if (c.binding === "jsonrpc") {
    const query = target.startsWith("?") ? target.slice(1) : "";
    const r = decodeJsonRpcRequest({ headers, query, body: c.body ?? "" });
    if (r.outcome === "dispatched") {
      const encoded = encodeRequest(r.request);
      const observed = { outcome: "dispatched", operation: r.request.operation, type: OPERATIONS[r.request.operation].params, params: parse(encoded), http_status: r.id === null ? 204 : 200 };
      return [observed, encoded];
    }
    const wire = parse(jsonRpcErrorBody(r.id, r.error));
    assert.ok(wire instanceof JObject);
    const error = member(wire, "error")?.value;
    assert.ok(error instanceof JObject);
    const observed = {
      outcome: "refused",
      id: member(wire, "id")?.value,
      http_status: r.notification ? 204 : r.error.jsonRpcHttpStatus,
      error: { code: member(error, "code")?.value, ...errorParts(member(error, "data")?.value) },
    };
    return [observed, null];
  }
  const r = decodeRestRequest({ method: str(c.http, "method") ?? "GET", target, headers, body: c.body });
  if (r.outcome === "dispatched") {
    const encoded = encodeRequest(r.request);
    return [{ outcome: "dispatched", operation: r.request.operation, type: OPERATIONS[r.request.operation].params, params: parse(encoded), http_status: 200 }, encoded];
  }
  const wire = parse(restErrorBody(r.error));
  assert.ok(wire instanceof JObject);
  const error = member(wire, "error")?.value;
  assert.ok(error instanceof JObject);
  const observed = {
    outcome: "refused",
    http_status: member(error, "code")?.value,
    error: { status: member(error, "status")?.value, ...errorParts(member(error, "details")?.value) },
  };
  return [observed, null];
}

function observeAnswer(c: Case): [Observed, string | null] {
  const operation = c.operation;
  assert.ok(operation !== null, "an answer case names its operation");
  const status = Number((member(c.http, "status")?.value as { text?: string } | undefined)?.text ?? "200");
  let body = c.body === null ? null : c.body.toString("utf8");
  if (c.binding === "jsonrpc" && body !== null) {
    body = body.replaceAll('"$request-id-as-string"', JSON.stringify(String(CALL_ID))).replaceAll('"$request-id"', String(CALL_ID));
  }
  const stream = headersOf(c)["content-type"] === "text/event-stream";
  let answer: Answer<unknown>;
  if (stream) {
    const events = new SseReader().push(`data: ${body ?? ""}\n\n`);
    const first = events[0];
    assert.ok(first !== undefined, "the stream yields an event");
    answer = c.binding === "jsonrpc" ? readJsonRpcAnswer(operation, first.data, CALL_ID) : readRestStreamEvent(operation, first.event, first.data, status);
  } else {
    answer = c.binding === "jsonrpc" ? readJsonRpcAnswer(operation, body ?? "", CALL_ID) : readRestAnswer(operation, status, body);
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

function run(c: Case): void {
  const [observed, encoded] = c.direction === "client_to_server" ? observeRequest(c) : observeAnswer(c);
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

for (const c of CASES) {
  if (!selected(c.id)) continue;
  test(c.id, () => {
    const reason = BASELINE[c.id];
    if (reason === undefined) {
      run(c);
      passed++;
      return;
    }
    let failed = false;
    try {
      run(c);
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
