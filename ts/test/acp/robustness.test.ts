/**
 * The receive path on damaged input: every vector line, mutated by a seeded generator
 * (bytes dropped, repeated, replaced by JSON tokens), is classified without an exception
 * escaping, and every payload that decodes re-encodes to bytes that decode to the same
 * bytes again (decode then encode is stable).
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { classify, type Incoming, type Receiver } from "../../src/acp/receive.js";
import { AGENT, CLIENT } from "../../src/acp/v1.js";
import { JObject, parse } from "../../src/codec/reader.js";
import { RawJson } from "../../src/codec/values.js";
import { encodeNotification, encodeRequest, encodeResponse } from "../../src/jsonrpc/message.js";
import { caseFiles, minify } from "../vector-files.js";

const TOKENS = ["{", "}", "[", "]", '"', ",", ":", "0", "-", "1e400", "18446744073709551616", "-0", "null", "true", "\\u0000", "\\ud800", "é", " ", '"type"', "1.5"].map(
  (t) => Buffer.from(t, "utf8"),
);
const MUTATIONS_PER_LINE = 12;

/** A small deterministic generator (mulberry32), so a failure reproduces. */
function generator(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

interface Line {
  readonly bytes: Buffer;
  readonly receiver: Receiver;
  readonly pending: ReadonlyMap<string, string>;
}

/** The line of every single-message case (flows excepted). */
function vectorLines(): Line[] {
  const out: Line[] = [];
  for (const path of caseFiles("acp")) {
    const text = readFileSync(path, "utf8");
    const data = JSON.parse(text) as { direction: string; input_text?: string; pending?: Record<string, string> };
    const input = (parse(text) as JObject).members.find((m) => m.key === "input");
    const line = input !== undefined ? minify(text.slice(input.start, input.end)) : data.input_text;
    if (line === undefined) continue; // input_base64: bytes that are not text
    const receiver = data.direction === "client_to_agent" ? AGENT : CLIENT;
    out.push({ bytes: Buffer.from(line.replace(/\r?\n$/, ""), "utf8"), receiver, pending: new Map(Object.entries(data.pending ?? {})) });
  }
  return out;
}

function mutate(line: Buffer, next: (n: number) => number): Buffer {
  if (line.length === 0) return line;
  const i = next(line.length);
  const token = TOKENS[next(TOKENS.length)] as Buffer;
  switch (next(4)) {
    case 0:
      return Buffer.concat([line.subarray(0, i), line.subarray(Math.min(line.length, i + 1 + next(5)))]);
    case 1:
      return Buffer.concat([line.subarray(0, i), token, line.subarray(i + 1)]);
    case 2:
      return Buffer.concat([line.subarray(0, i), line.subarray(i, Math.min(line.length, i + 1 + next(30))), line.subarray(i)]);
    default:
      return Buffer.concat([line.subarray(0, i), token, line.subarray(i)]);
  }
}

/** The canonical text of a decoded payload, or `null` when nothing decoded. */
function payload(incoming: Incoming, receiver: Receiver): string | null {
  const encode = (value: unknown, type: string | null): string => {
    if (typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "ext") {
      const raw = (value as { payload: RawJson | null }).payload;
      return raw === null ? "null" : raw.text;
    }
    assert.ok(type !== null);
    return receiver.surface.encodeNamed(type, value);
  };
  if (incoming.kind === "request" || incoming.kind === "notification") return encode(incoming.params, incoming.typeName);
  if (incoming.kind === "response") return encode(incoming.result, incoming.typeName);
  return null;
}

test("damaged lines never throw, and what decodes re-encodes stably", () => {
  const next = generator(20261123);
  let decoded = 0;
  let total = 0;
  for (const line of vectorLines()) {
    const lookup = (id: unknown): string | undefined => line.pending.get(JSON.stringify(typeof id === "bigint" ? String(id) : id));
    for (let k = 0; k <= MUTATIONS_PER_LINE; k++) {
      const bytes = k === 0 ? line.bytes : mutate(line.bytes, next);
      total++;
      const incoming = classify(bytes, line.receiver, lookup);
      const first = payload(incoming, line.receiver);
      if (first === null) continue;
      decoded++;
      const raw = new RawJson(first);
      let again: string;
      if (incoming.kind === "request") again = encodeRequest(incoming.id, incoming.method, raw);
      else if (incoming.kind === "notification") again = encodeNotification(incoming.method, raw);
      else if (incoming.kind === "response") again = encodeResponse(incoming.id, raw);
      else continue;
      const second = classify(again, line.receiver, lookup);
      assert.equal(second.kind, incoming.kind, `${bytes.toString()} -> ${again}`);
      assert.equal(payload(second, line.receiver), first, `${bytes.toString()} -> ${again}`);
    }
  }
  assert.ok(decoded > 1000 && total > 5000, `${decoded} of ${total} decoded`);
});
