/** The ProtoJSON helpers (`src/a2a/protojson.ts`): int32 notations, base64 in both alphabets,
 * RFC 3339 normalisation, enum numbers; each checked against the exact canonical text. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { base64Decode, base64Encode, d_enum, d_int32, integerOf, timestampText } from "../../src/a2a/protojson.js";
import { DecodeError } from "../../src/codec/errors.js";
import { parse } from "../../src/codec/reader.js";
import { Ctx } from "../../src/codec/runtime.js";

function int32(json: string): number | string {
  try {
    return d_int32(parse(json), "$.n", new Ctx(json));
  } catch (err) {
    assert.ok(err instanceof DecodeError);
    return err.kind;
  }
}

test("an int32 is read from any integral notation, as a number or a string", () => {
  for (const [json, want] of [
    ["5", 5],
    ['"5"', 5],
    ["10.0", 10],
    ["1e1", 10],
    ['"2.5e1"', 25],
    ['"-0"', 0],
    ["-2147483648", -2147483648],
    ['"2147483647"', 2147483647],
  ] as const) {
    assert.equal(int32(json), want, json);
  }
});

test("an int32 out of range, fractional or not a number is out-of-range; another type is wrong-type", () => {
  for (const json of ["2147483648", "-2147483649", "1.5", '"five"', '"1.5"', '"25e-2"', '"+5"', '""', '"1e30"']) {
    assert.equal(int32(json), "out-of-range", json);
  }
  assert.equal(int32("true"), "wrong-type");
  assert.equal(int32("[1]"), "wrong-type");
});

test("integerOf is exact beyond 2^53", () => {
  assert.equal(integerOf("12345678901234567890"), 12345678901234567890n);
  assert.equal(integerOf("1.50e1"), 15n);
  assert.equal(integerOf("0.5"), null);
});

test("base64 reads both alphabets, padded or not, and writes padded standard base64", () => {
  for (const [text, bytes] of [
    ["aGk", [104, 105]],
    ["aGk=", [104, 105]],
    ["-_8", [251, 255]],
    ["+/8=", [251, 255]],
    ["", []],
    ["aGVsbG8=", [104, 101, 108, 108, 111]],
  ] as const) {
    assert.deepEqual(base64Decode(text), new Uint8Array(bytes), text);
  }
  for (const bad of ["not base64!", "a", "aGk==", "aG=k", "aGl=", "+-8=", "aGk=="]) assert.equal(base64Decode(bad), null, bad);
  assert.equal(base64Encode(new Uint8Array([251, 255])), "+/8=");
  assert.equal(base64Encode(new Uint8Array([104, 101, 108, 108, 111])), "aGVsbG8=");
  assert.equal(base64Encode(new Uint8Array([1, 2, 3])), "AQID");
});

test("timestamps are normalised to UTC with milliseconds", () => {
  for (const [text, want] of [
    ["2026-11-21T12:00:00.123456+02:00", "2026-11-21T10:00:00.123Z"],
    ["2026-01-02t03:04:05z", "2026-01-02T03:04:05.000Z"],
    ["2024-02-29T23:30:00-01:00", "2024-03-01T00:30:00.000Z"],
    ["2026-01-02T03:04:05.9Z", "2026-01-02T03:04:05.900Z"],
    ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"],
  ] as const) {
    assert.equal(timestampText(text), want, text);
  }
  for (const bad of ["yesterday", "2026-02-30T00:00:00Z", "2026-01-02T03:04:05", "2026-01-02T24:00:00Z", "2026-01-02T03:04:05.1234567890Z", "0001-01-01T00:00:00+00:01", "2026-01-02 03:04:05Z"]) {
    assert.equal(timestampText(bad), null, bad);
  }
});

test("an enum is read by name or number; the zero, unknown names and numbers are not-listed", () => {
  const names = ["ROLE_USER", "ROLE_AGENT"] as const;
  const read = (json: string): string => {
    try {
      return d_enum(parse(json), "$.role", names, [1, 2]);
    } catch (err) {
      assert.ok(err instanceof DecodeError);
      return `${err.kind}: ${err.expected} / ${err.found}`;
    }
  };
  assert.equal(read('"ROLE_AGENT"'), "ROLE_AGENT");
  assert.equal(read("2"), "ROLE_AGENT");
  assert.equal(read('"ROLE_UNSPECIFIED"'), 'not-listed: one of "ROLE_USER", "ROLE_AGENT" / the string "ROLE_UNSPECIFIED"');
  assert.equal(read("0"), "not-listed: one of 1 (ROLE_USER), 2 (ROLE_AGENT) / the integer 0");
  assert.equal(read("1.5"), "wrong-type: an enum value name or number / the number 1.5");
});
