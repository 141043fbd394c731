import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeDouble, encodeInteger, encodeString, RawJson, UnknownVariant } from "../../src/codec/values.js";

test("doubles are written by canonical rule 7", () => {
  const cases: [number, string][] = [
    [1, "1.0"],
    [100, "100.0"],
    [0.1, "0.1"],
    [2.5, "2.5"],
    [0.00001, "0.00001"],
    [0.000001, "1e-6"],
    [2.5e-8, "2.5e-8"],
    [1e15, "1000000000000000.0"],
    [1e16, "1e+16"],
    [1.5e16, "1.5e+16"],
    [1e21, "1e+21"],
    [123456789012345680, "1.2345678901234568e+17"],
    [-0, "-0.0"],
    [0, "0.0"],
    [-1.5, "-1.5"],
    [Number.NaN, "null"],
  ];
  for (const [value, text] of cases) assert.equal(encodeDouble(value), text, String(value));
});

test("integers are plain decimal, bigints included", () => {
  assert.equal(encodeInteger(18446744073709551615n), "18446744073709551615");
  assert.equal(encodeInteger(-42), "-42");
  assert.throws(() => encodeInteger(1.5), TypeError);
});

test("strings escape only quotes, backslashes and control characters", () => {
  assert.equal(encodeString('a"\\\b\t\n\f\r\u0001/\u007f\u2028é😀'), '"a\\"\\\\\\b\\t\\n\\f\\r\\u0001/\u007f\u2028é😀"');
});

test("raw JSON keeps its text and parses on demand", () => {
  const raw = new RawJson('{ "a" : 1 }');
  assert.equal(raw.text, '{ "a" : 1 }');
  assert.deepEqual(raw.parse(), { a: 1 });
  assert.equal(RawJson.from({ b: [1, "x"] }).text, '{"b":[1,"x"]}');
});

test("an unknown variant has no tag member, so a switch on the tag never matches it", () => {
  const unknown = new UnknownVariant("video", new RawJson('{"type":"video"}'));
  assert.equal("type" in unknown, false);
  assert.equal(unknown.variantTag, "video");
});
