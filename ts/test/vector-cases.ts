/**
 * The conformance cases under `vectors/` (flows excepted) as the vector runners read them,
 * and what the receive path's outcome looks like in a case's terms (`observe`): shared
 * by `vectors.test.ts` and `codec/no-message-text.test.ts`.
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";

import type { ExtMessage, Incoming } from "../src/acp/receive.js";
import type { AGENT } from "../src/acp/v1.js";
import { JObject, parse, type JNode } from "../src/codec/reader.js";
import { idKey, type RequestId } from "../src/jsonrpc/id.js";
import { member } from "./json-compare.js";
import { caseFiles, minify } from "./vector-files.js";

export interface Case {
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

export function loadCases(): Case[] {
  return caseFiles("acp").map(loadCase);
}

export type Observed = Record<string, unknown>;

function isExt(value: unknown): value is ExtMessage {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "ext";
}

/** The SDK encoder's text for a decoded params or result. */
function payloadText(value: unknown, typeName: string | null, receiver: typeof AGENT): string {
  if (isExt(value)) return value.payload === null ? "null" : value.payload.text;
  assert.ok(typeName !== null, "a decoded payload without a type");
  return receiver.surface.encodeNamed(typeName, value);
}

export function observe(incoming: Incoming, receiver: typeof AGENT): [Observed, string | null] {
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
    case "call-failed": {
      const observed: Observed = { outcome: "call_failed", id: incoming.id, path: incoming.path, detail: incoming.message };
      // The kind of the local decode error (a case may state it).
      if (incoming.error !== null) observed["kind"] = incoming.error.kind;
      return [observed, null];
    }
    case "ignored":
      return [{ outcome: "ignored", finding: incoming.finding.code, detail: incoming.finding.message }, null];
  }
}

/** The members of `expect.error` a case may state besides `code` and `path`, taken from
 * the reply's error `data` (vectors/README.md, "Error texts"). `kind` is a decode
 * failure's (-32602). */
export const ERROR_TEXTS = ["kind", "expected", "found", "line", "column"];

export function errorTexts(data: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof data !== "object" || data === null) return out;
  for (const key of ERROR_TEXTS) if (key in data) out[key] = (data as Record<string, unknown>)[key];
  return out;
}
