import assert from "node:assert/strict";
import { test } from "node:test";

import { DecodeError } from "../../src/codec/errors.js";
import { JObject, parse, type JNode } from "../../src/codec/reader.js";
import * as rt from "../../src/codec/runtime.js";

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

test("values are described as every SDK's errors name them", () => {
  const cases: [string, string][] = [
    ["null", "null"],
    ["true", "the boolean true"],
    ["5", "the integer 5"],
    ["18446744073709551615", "the integer 18446744073709551615"],
    ["18446744073709551616", "the number 18446744073709552000.0"],
    ["-0", "the number -0.0"],
    ["1.5", "the number 1.5"],
    ["1e-7", "the number 0.0000001"],
    ['"a\\"\\u0007"', 'the string "a\\"\\u0007"'],
    ["[]", "an array"],
    ["{}", "an object"],
  ];
  for (const [text, described] of cases) assert.equal(rt.describe(parse(text)), described, text);
});

test("integers are checked against their format and kept exact", () => {
  assert.equal(rt.d_u64(parse("18446744073709551615"), "$.x", cx()), 18446744073709551615n);
  assert.equal(rt.d_u64(parse("9007199254740991"), "$.x", cx()), 9007199254740991);
  assert.equal(rt.d_i64(parse("-9223372036854775808"), "$.x", cx()), -9223372036854775808n);
  const over = failure(() => rt.d_u16(parse("65536"), "$.p", cx()));
  assert.deepEqual([over.path, over.expected, over.found], ["$.p", "an integer from 0 to 65535", "the integer 65536"]);
  assert.equal(over.message, "expected an integer from 0 to 65535, found the integer 65536 at $.p");
  const fraction = failure(() => rt.d_u32(parse("1.5"), "$.p", cx()));
  assert.deepEqual([fraction.expected, fraction.found], ["an integer from 0 to 4294967295", "the number 1.5"]);
  assert.equal(
    failure(() => rt.d_i32(parse("1e999"), "$.p", cx())).detail,
    "expected a number within the range of a double, found a number beyond it",
  );
});

test("strings with a lone surrogate are refused", () => {
  const err = failure(() => rt.d_str(parse('"\\ud800x"'), "$.s", cx()));
  assert.deepEqual([err.expected, err.found], ["a string of valid Unicode", "an invalid escape"]);
  assert.equal(rt.d_str(parse('"\\ud83d\\ude00"'), "$.s", cx()), "😀");
});

test("a repeated key fails at the key, a missing one at its object", () => {
  assert.deepEqual(
    [rt.duplicate("$.params", "sessionId").path, rt.duplicate("$.params", "sessionId").found],
    ["$.params.sessionId", 'the key "sessionId" twice'],
  );
  assert.equal(rt.duplicate("$", "zed.dev").path, '$["zed.dev"]');
  assert.deepEqual([rt.missing("$.params", "cwd").expected, rt.missing("$.params", "cwd").found], ['the field "cwd"', "an object without it"]);
});

test("an unknown variant is re-emitted member by member (rule 9)", () => {
  const text = '{"data":{ "a" : 1 },  "type":"vid\\u0065o"}';
  const context = new rt.Ctx(text);
  const unknown = rt.unknown(context, parse(text) as JObject, "type", "video");
  assert.equal(unknown.raw.text, '{"data":{ "a" : 1 },"type":"video"}');
});

test("skip-invalid-items drops bad items with a warning each", () => {
  const context = cx();
  const kept = rt.items(context, parse('["a", 1, "b"]'), "$.list", rt.d_str, false, false);
  assert.deepEqual(kept, ["a", "b"]);
  assert.deepEqual(context.warnings.map((w) => w.path), ["$.list[1]"]);
});

test("string lengths count code points", () => {
  rt.minLength("$.s", "😀", 1);
  const err = failure(() => rt.minLength("$.s", "😀", 2));
  assert.deepEqual([err.expected, err.found], ["a string of at least 2 characters", "a string of 1 characters"]);
});

test("members of a flattened variant leave out the object's own keys", () => {
  assert.equal(rt.skipMembers(',"a":1,"b":{"c":2},"d":3', ["b"]), ',"a":1,"d":3');
  const node: JNode = parse("{}");
  assert.ok(node instanceof JObject);
});
