/** The encoding helpers refuse values of the wrong JavaScript type instead of writing `undefined` or `null`. */

import assert from "node:assert/strict";
import { test } from "node:test";

import * as rt from "../../src/codec/runtime.js";
import { RawJson } from "../../src/codec/values.js";
import { SURFACE } from "../../src/acp/v1-codec.js";

const refuses = (f: () => unknown, expected: string, found: string): void => {
  assert.throws(f, (e: unknown) => e instanceof rt.EncodeError && e.expected === expected && e.found === found);
};

test("each scalar helper writes its own type and refuses the others", () => {
  assert.equal(rt.str("a\"b"), '"a\\"b"');
  refuses(() => rt.str(undefined as unknown as string), "a string", "undefined");
  refuses(() => rt.str(42 as unknown as string), "a string", "the number 42");
  assert.equal(rt.int(7), "7");
  assert.equal(rt.int(2n ** 60n), "1152921504606846976");
  refuses(() => rt.int(1.5), "an integer", "the number 1.5");
  refuses(() => rt.int("3" as unknown as number), "an integer", 'the string "3"');
  assert.equal(rt.f64(0.5), "0.5");
  refuses(() => rt.f64(Number.NaN), "a finite number", "the number NaN");
  refuses(() => rt.f64(Number.POSITIVE_INFINITY), "a finite number", "the number Infinity");
  assert.equal(rt.bool(false), "false");
  refuses(() => rt.bool(0 as unknown as boolean), "a boolean", "the number 0");
  assert.equal(rt.raw(new RawJson("[1]")), "[1]");
  refuses(() => rt.raw(null as unknown as RawJson), "JSON (a RawJson)", "null");
  refuses(() => rt.list(undefined as unknown as number[], rt.int), "an array", "undefined");
  refuses(() => rt.map([] as unknown as Record<string, number>, rt.int), "an object", "an array");
});

test("no generated encoder writes the text `undefined`", () => {
  const chunk = { sessionUpdate: "agent_message_chunk", content: { type: "text" } };
  assert.throws(() => SURFACE.encodeNamed("SessionNotification", { sessionId: "s", update: chunk }), rt.EncodeError);
  assert.throws(() => SURFACE.encodeNamed("NewSessionResponse", { id: "x" }), rt.EncodeError);
  assert.equal(SURFACE.encodeNamed("NewSessionResponse", { sessionId: "x", modes: undefined }), '{"sessionId":"x"}');
});
