/** A decode failure is a value with a kind, made where it happens; its message is
 * rendered from its parts; a warning carries the failure behind it. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { outgoingProblem } from "../../src/acp/outgoing.js";
import * as v1 from "../../src/acp/v1.js";
import { DecodeError } from "../../src/codec/errors.js";
import { DECODE_ERROR_KINDS, type DecodeErrorKind } from "../../src/codec/kind.js";
import { parse } from "../../src/codec/reader.js";
import * as rt from "../../src/codec/runtime.js";
import { RawJson } from "../../src/codec/values.js";

function failure(run: () => unknown): DecodeError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof DecodeError, String(err));
    return err;
  }
  assert.fail("no failure");
}

const cx = (): rt.Ctx => new rt.Ctx("");
const parts = (e: DecodeError): [string, DecodeErrorKind, string, string] => [e.path, e.kind, e.expected, e.found];

test("a DecodeError's message is rendered from its parts, with no override", () => {
  const e = new DecodeError("$.params.x", "wrong-type", "a string", "null");
  assert.equal(e.message, "expected a string, found null at $.params.x");
  assert.equal(e.detail, "expected a string, found null");
  assert.equal(String(e), "DecodeError: expected a string, found null at $.params.x");
  assert.equal(e.kind, "wrong-type");
  // Four parameters: a free-text fifth cannot be given (the message is never stored apart).
  assert.equal(DecodeError.length, 4);
});

test("each runtime check makes its failure with the kind the table names", () => {
  const cases: [() => unknown, [string, DecodeErrorKind, string, string]][] = [
    [() => rt.d_str(parse("5"), "$.a", cx()), ["$.a", "wrong-type", "a string", "the integer 5"]],
    [() => rt.d_u16(parse("65536"), "$.a", cx()), ["$.a", "out-of-range", "an integer from 0 to 65535", "the integer 65536"]],
    [() => rt.d_u32(parse("1.5"), "$.a", cx()), ["$.a", "out-of-range", "an integer from 0 to 4294967295", "the number 1.5"]],
    [() => rt.d_i64(parse('"7"'), "$.a", cx()), ["$.a", "wrong-type", "an integer from -9223372036854775808 to 9223372036854775807", 'the string "7"']],
    [() => rt.d_i32(parse("1e999"), "$.a", cx()), ["$.a", "number-too-large", "a number within the range of a double", "a number beyond it"]],
    [() => rt.d_f64(parse("-1e999"), "$.a", cx()), ["$.a", "number-too-large", "a number within the range of a double", "a number beyond it"]],
    [() => rt.d_enum(parse('"x"'), "$.a", ["end_turn", "refusal"]), ["$.a", "not-listed", 'one of "end_turn", "refusal"', 'the string "x"']],
    [() => rt.d_str(parse('"\\ud800"'), "$.a", cx()), ["$.a", "invalid-unicode", "a string of valid Unicode", "an invalid escape"]],
    [() => rt.minLength("$.a", "", 1), ["$.a", "too-short", "a string of at least 1 characters", "a string of 0 characters"]],
    [() => rt.minItems("$.a", [], 1), ["$.a", "too-short", "an array of at least 1 items", "an array of 0 items"]],
    [() => { throw rt.missing("$.a", "sessionId"); }, ["$.a", "missing-field", 'the field "sessionId"', "an object without it"]],
    [() => { throw rt.duplicate("$.a", "sessionId"); }, ["$.a.sessionId", "repeated-key", "each key once", 'the key "sessionId" twice']],
    [() => { throw rt.noVariant("$.a", parse("5"), "one of A, B"); }, ["$.a", "no-variant", "one of A, B", "the integer 5"]],
    [() => { throw rt.notJson("$.a", '{"a":1,}', 0); }, ["$.a", "not-json", "JSON text", "text that is not JSON (line 1, column 8)"]],
    [() => { throw rt.tooDeep("$.a"); }, ["$.a", "not-json", "JSON text nested at most 128 deep", "text nested deeper"]],
  ];
  for (const [run, want] of cases) {
    const e = failure(run);
    assert.deepEqual(parts(e), want);
    assert.ok(DECODE_ERROR_KINDS.includes(e.kind));
    assert.equal(e.message, `expected ${want[2]}, found ${want[3]} at ${want[0]}`);
  }
});

test("a payload that is not JSON fails with kind not-json, its position from the grammar", () => {
  const e = failure(() => v1.SURFACE.decode("CancelNotification", new RawJson('{"sessionId":"s"}x'), "$.params"));
  assert.deepEqual(parts(e), ["$.params", "not-json", "JSON text", "text that is not JSON (line 1, column 18)"]);
  const open = failure(() => v1.SURFACE.decode("CancelNotification", new RawJson('{"sessionId":"s'), "$.params"));
  assert.deepEqual(parts(open), ["$.params", "not-json", "JSON text", "text that is not JSON (line 1, column 16)"]);
  const deep = failure(() => v1.SURFACE.decode("CancelNotification", new RawJson(`{"_meta":${"[".repeat(200)}${"]".repeat(200)}}`), "$.params"));
  assert.deepEqual(parts(deep), ["$.params", "not-json", "JSON text nested at most 128 deep", "text nested deeper"]);
});

test("a salvaged value's warning carries the failure that dropped it; its message is rendered from it", () => {
  const text = '{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":"bogus_kind"}}';
  const decoded = v1.SURFACE.decode("SessionNotification", new RawJson(text), "$.params");
  assert.equal(decoded.warnings.length, 1);
  const w = decoded.warnings[0];
  assert.ok(w !== undefined);
  assert.equal(w.kind, "salvaged");
  assert.equal(w.path, "$.params.update.kind");
  assert.equal(w.error.kind, "not-listed");
  assert.equal(w.error.path, "$.params.update.kind");
  assert.equal(w.error.found, 'the string "bogus_kind"');
  assert.equal(w.message, `dropped invalid value: ${w.error.detail} at ${w.error.path}`);
});

test("an unknown variant's warning carries an unknown-variant failure naming the tag", () => {
  const text = '{"sessionId":"s","prompt":[{"type":"video","url":"u"}]}';
  const decoded = v1.SURFACE.decode("PromptRequest", new RawJson(text), "$.params");
  const w = decoded.warnings[0];
  assert.ok(w !== undefined);
  assert.deepEqual([w.path, w.kind, w.message], ["$.params.prompt[0]", "unknown-variant", 'unknown ContentBlock variant "video" kept as raw JSON']);
  assert.deepEqual(parts(w.error), ["$.params.prompt[0]", "unknown-variant", "a known variant of ContentBlock", 'the string "video"']);
});

test("an outgoing check refuses with the first warning's own error (no error built from a warning's message)", () => {
  const unknown = outgoingProblem(v1.SURFACE, "PromptRequest", '{"sessionId":"s","prompt":[{"type":"video"}]}', "$.params");
  assert.ok(unknown !== null);
  assert.deepEqual(parts(unknown), ["$.params.prompt[0]", "unknown-variant", "a known variant of ContentBlock", 'the string "video"']);
  const text = '{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":"bogus_kind"}}';
  const salvaged = outgoingProblem(v1.SURFACE, "SessionNotification", text, "$.params");
  const decoded = v1.SURFACE.decode("SessionNotification", new RawJson(text), "$.params");
  assert.ok(salvaged !== null);
  assert.deepEqual(parts(salvaged), parts(decoded.warnings[0]?.error as DecodeError));
  assert.equal(salvaged.kind, "not-listed");
});

test("a null read as the default carries what the validator says of null", () => {
  const decoded = v1.SURFACE.decode("McpServer", new RawJson('{"name":"n","command":"c","args":null,"env":[]}'), "$.params");
  const w = decoded.warnings[0];
  assert.ok(w !== undefined);
  assert.deepEqual([w.path, w.kind, w.message], ["$.params.args", "salvaged", "null read as the default value"]);
  assert.deepEqual(parts(w.error), ["$.params.args", "wrong-type", "an array", "null"]);
});
