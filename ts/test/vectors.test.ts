/**
 * Every conformance case under `vectors/` (flows excepted) through the real receive path:
 * framing (`jsonrpc/frame`), the envelope (`jsonrpc/message`), dispatch by method and
 * direction and the typed decode (`acp/receive`'s `classify`); the outcome compared with
 * `expect` as `python/tests/test_vectors.py` and the Rust runner compare it, and the
 * canonical encoding of a decoded payload compared byte for byte with the golden file.
 *
 * Known failures are listed in `vectors/baselines/typescript.json` with a reason: an
 * unlisted failure fails, and so does a listed case that passes (a stale entry).
 * `AGENTPROTO_VECTORS=jsonrpc/,-acp/v1/types` selects cases by id prefix.
 */

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { test } from "node:test";

import { classify, type ExtMessage, type Incoming } from "../src/acp/receive.js";
import { AGENT, CLIENT } from "../src/acp/v1.js";
import { JObject, parse, type JNode } from "../src/codec/reader.js";
import { Oversize, splitLines } from "../src/jsonrpc/frame.js";
import { idKey, type RequestId } from "../src/jsonrpc/id.js";
import { member, nodeOf, same, show } from "./json-compare.js";
import { minify, VECTORS, walk } from "./vector-files.js";

const BASELINE_FILE = join(VECTORS, "baselines", "typescript.json");

interface Case {
  readonly id: string;
  readonly file: string;
  readonly data: JObject;
  readonly expect: JObject;
  readonly input: Uint8Array;
  readonly canonical: Buffer | null;
  readonly direction: string;
  readonly pending: ReadonlyMap<string, string>;
}

function loadCase(file: string): Case {
  const text = readFileSync(file, "utf8");
  const data = parse(text);
  assert.ok(data instanceof JObject, `${file}: not an object`);
  const str = (key: string): string => {
    const value = member(data, key)?.value;
    assert.equal(typeof value, "string", `${file}: ${key}`);
    return value as string;
  };
  const id = str("id");
  const kinds = ["input", "input_text", "input_base64"].filter((k) => member(data, k) !== undefined);
  assert.equal(kinds.length, 1, `${id}: exactly one of input, input_text, input_base64`);
  let input: Uint8Array;
  if (kinds[0] === "input_text") input = Buffer.from(str("input_text"), "utf8");
  else if (kinds[0] === "input_base64") input = Buffer.from(str("input_base64"), "base64");
  else {
    const m = member(data, "input");
    assert.ok(m !== undefined);
    input = Buffer.from(minify(text.slice(m.start, m.end)) + "\n", "utf8");
  }
  const pending = new Map<string, string>();
  const pendingNode = member(data, "pending")?.value;
  if (pendingNode instanceof JObject) {
    for (const m of pendingNode.members) pending.set(idKey(idOf(parse(m.key))), m.value as string);
  }
  const expect = member(data, "expect")?.value;
  assert.ok(expect instanceof JObject, `${id}: expect`);
  const golden = file.replace(/\.json$/, ".canonical");
  return {
    id,
    file,
    data,
    expect,
    input,
    canonical: existsSync(golden) ? readFileSync(golden) : null,
    direction: str("direction"),
    pending,
  };
}

function idOf(node: JNode): RequestId {
  if (node === null || typeof node === "string") return node;
  if (typeof node === "object" && "text" in node) {
    const big = BigInt(node.text);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  }
  throw new Error(`not an id: ${String(node)}`);
}

function loadCases(): Case[] {
  const files = walk(VECTORS)
    .filter((path) => {
      const parts = relative(VECTORS, path).split(sep);
      if (parts.length === 1 || parts[0] === "baselines" || parts[0] === "tools") return false;
      return !(parts.length > 3 && parts[2] === "flows");
    })
    .sort();
  return files.map(loadCase);
}

function selected(id: string): boolean {
  const parts = (process.env["AGENTPROTO_VECTORS"] ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.some((p) => p.startsWith("-") && id.startsWith(p.slice(1)))) return false;
  const includes = parts.filter((p) => !p.startsWith("-"));
  return includes.length === 0 || includes.some((p) => id.startsWith(p));
}

const CASES = loadCases();
const BASELINE: Record<string, string> = existsSync(BASELINE_FILE)
  ? (JSON.parse(readFileSync(BASELINE_FILE, "utf8")) as Record<string, string>)
  : {};

// ---------------------------------------------------------------------------
// Running a case

type Observed = Record<string, unknown>;

function isExt(value: unknown): value is ExtMessage {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "ext";
}

/** The SDK encoder's text for a decoded params or result. */
function payloadText(value: unknown, typeName: string | null, receiver: typeof AGENT): string {
  if (isExt(value)) return value.payload === null ? "null" : value.payload.text;
  assert.ok(typeName !== null, "a decoded payload without a type");
  return receiver.surface.encodeNamed(typeName, value);
}

function observe(incoming: Incoming, receiver: typeof AGENT): [Observed, string | null] {
  switch (incoming.kind) {
    case "request": {
      const text = payloadText(incoming.params, incoming.typeName, receiver);
      const warnings = incoming.warnings.map((w) => w.path);
      return [{ outcome: "request", method: incoming.method, id: incoming.id, type: incoming.typeName, params: parse(text), warnings }, text];
    }
    case "notification": {
      const text = payloadText(incoming.params, incoming.typeName, receiver);
      const warnings = incoming.warnings.map((w) => w.path);
      return [{ outcome: "notification", method: incoming.method, type: incoming.typeName, params: parse(text), warnings }, text];
    }
    case "response": {
      const text = payloadText(incoming.result, incoming.typeName, receiver);
      const warnings = incoming.warnings.map((w) => w.path);
      const observed = { outcome: "response", id: incoming.id, method: incoming.method, type: incoming.typeName };
      return [{ ...observed, result: parse(text), warnings }, text];
    }
    case "error":
      return [{ outcome: "error_reply", id: incoming.id, error: { code: incoming.error.code, message: incoming.error.message } }, null];
    case "reply": {
      const finding = incoming.finding;
      let path: string | null = null;
      if (finding.code === "invalid-params" && finding.error !== null) path = finding.error.path;
      else if (finding.code === "bad-envelope" && finding.path !== "") path = finding.path;
      const error = incoming.reply.error;
      assert.ok(error !== null, "a reply that is not an error response");
      const observedError: Record<string, unknown> = { code: error.code, message: error.message, path, ...errorTexts(error.data?.parse()) };
      return [{ outcome: "reply_error", id: incoming.reply.id, error: observedError }, null];
    }
    case "call-failed":
      return [{ outcome: "call_failed", id: incoming.id, path: incoming.path, detail: incoming.message }, null];
    case "ignored":
      return [{ outcome: "ignored", finding: incoming.finding.code, detail: incoming.finding.message }, null];
  }
}

/** The members of `expect.error` a case may state besides `code` and `path`, taken from
 * the reply's error `data` (vectors/README.md, "Error texts"). */
const ERROR_TEXTS = ["expected", "found", "line", "column"];

function errorTexts(data: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof data !== "object" || data === null) return out;
  for (const key of ERROR_TEXTS) if (key in data) out[key] = (data as Record<string, unknown>)[key];
  return out;
}

function compare(expect: JObject, observed: Observed): void {
  const mismatch = (what: string): Error =>
    new assert.AssertionError({ message: `${what}: expected ${show(expect)}, observed ${show(nodeOf(observed))}` });
  const outcome = member(expect, "outcome")?.value;
  if (outcome !== observed["outcome"]) throw mismatch("outcome");
  for (const key of ["method", "id", "type", "params", "result", "finding", "path"]) {
    const wanted = member(expect, key);
    if (wanted !== undefined && !same(wanted.value, nodeOf(observed[key]))) throw mismatch(key);
  }
  const error = member(expect, "error")?.value;
  if (error instanceof JObject) {
    const got = (observed["error"] ?? {}) as Record<string, unknown>;
    for (const key of ["code", "message", "path", ...ERROR_TEXTS]) {
      const wanted = member(error, key);
      if (wanted !== undefined && !same(wanted.value, nodeOf(got[key]))) throw mismatch(`error.${key}`);
    }
  }
  if (outcome === "request" || outcome === "notification" || outcome === "response") {
    const wanted = new Set<string>();
    const list = member(expect, "warnings")?.value;
    if (list !== undefined && list !== null && typeof list === "object" && "items" in list) {
      for (const item of list.items) wanted.add(item as string);
    }
    const got = new Set(observed["warnings"] as string[]);
    if (wanted.size !== got.size || [...wanted].some((w) => !got.has(w))) throw mismatch("warnings");
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
  const frames = splitLines(c.input);
  assert.equal(frames.length, 1, `expected one framed line, got ${frames.length}`);
  const line = frames[0];
  assert.ok(line !== undefined && !(line instanceof Oversize), "unexpected oversize line");
  const receiver = c.direction === "client_to_agent" ? AGENT : CLIENT;
  const incoming = classify(line, receiver, (id) => c.pending.get(idKey(id)));
  const [observed, encoded] = observe(incoming, receiver);
  compare(c.expect, observed);
  if (encoded !== null) {
    assert.ok(c.canonical !== null, "the message decodes but the case has no golden file (<case>.canonical)");
    compareBytes(c.canonical, Buffer.from(encoded, "utf8"));
  }
}

// ---------------------------------------------------------------------------
// Tests

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

test("the baseline lists only existing cases and flows", () => {
  const flowsDir = join(VECTORS, "acp", "v1", "flows");
  const flows = readdirSync(flowsDir)
    .filter((name) => name.endsWith(".json"))
    .map((name) => `acp/v1/flows/${name.slice(0, -".json".length)}`);
  const ids = new Set([...CASES.map((c) => c.id), ...flows]);
  assert.deepEqual(Object.keys(BASELINE).filter((id) => !ids.has(id)), []);
});

test("the cases were found", () => {
  assert.ok(CASES.length > 600, `only ${CASES.length} cases`);
});

test.after(() => {
  const listed = CASES.filter((c) => selected(c.id) && BASELINE[c.id] !== undefined).length;
  console.log(`vectors: ${passed} passed, ${listed} baselined, ${CASES.filter((c) => selected(c.id)).length} selected`);
});
