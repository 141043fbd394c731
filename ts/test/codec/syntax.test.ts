// The position of a parse error: the first character that cannot continue a JSON text
// (the same cases as crates/jsonrpc/src/syntax.rs and python/tests/codec/test_syntax.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { firstInvalid, firstInvalidUtf8 } from "../../src/codec/syntax.js";
import { decodeMessage, EnvelopeError } from "../../src/jsonrpc/message.js";

test("whole JSON texts have no position", () => {
  for (const text of ["{}", " [ ] ", '{"a":[1,-0.5e+3,"\\u00e9\\n",true,false,null,{}]}', "0", '"x"\r\n']) {
    assert.equal(firstInvalid(text), null, text);
  }
});

test("the first character that cannot continue is reported", () => {
  const cases: [string, number, number][] = [
    ['{"a":1,}', 1, 8],
    ['{"a" 1}', 1, 6],
    ["{} x", 1, 4],
    ["01", 1, 2],
    ["-x", 1, 2],
    ["1.x", 1, 3],
    ["trux", 1, 4],
    ["hello", 1, 1],
    ["[1 2]", 1, 4],
    ["[1}", 1, 3],
    ['{"k":"a\\x"}', 1, 9],
    ['{"k":"\\u12G4"}', 1, 11],
    ['"a\tb"', 1, 3],
    ["\ufeff{}", 1, 1],
    ['{"é":"ü" ,]', 1, 11],
    ['{"😀":1 ,]', 1, 9],
    ['{\n  "a": 1\n  "b": 2\n}', 3, 3],
  ];
  for (const [text, line, column] of cases) assert.deepEqual(firstInvalid(text), { line, column, eof: false }, text);
});

test("a text cut short ends at the end of input", () => {
  const cases: [string, number][] = [["", 1], ['{"jsonrpc":"2.0","id":1,"method":', 34], ["[1,", 4], ["tr", 3], ['"ab', 4], ["1e+", 4]];
  for (const [text, column] of cases) assert.deepEqual(firstInvalid(text), { line: 1, column, eof: true }, text);
});

test("the parse error reply carries the position", () => {
  try {
    decodeMessage(new TextEncoder().encode('{"jsonrpc":"2.0",\n"method" "n"}'));
    assert.fail("decoded");
  } catch (err) {
    assert.ok(err instanceof EnvelopeError);
    assert.equal(err.detail, "parse error: invalid JSON at line 2, column 10");
    const error = err.toErrorObject();
    assert.equal(error.data?.text, '{"path":"$","line":2,"column":10}');
  }
});

test("invalid UTF-8 is placed at its first bad byte, in characters", () => {
  const line = new Uint8Array([0x7b, 0x22, 0xc3, 0xa9, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]);
  assert.equal(firstInvalidUtf8(line), 7);
  try {
    decodeMessage(line);
    assert.fail("decoded");
  } catch (err) {
    assert.ok(err instanceof EnvelopeError);
    assert.deepEqual([err.detail, err.position], ["parse error: invalid utf-8 at line 1, column 7", { line: 1, column: 7 }]);
  }
});
