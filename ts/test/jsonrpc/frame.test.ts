import assert from "node:assert/strict";
import { test } from "node:test";

import { LineSplitter, Oversize, scanPrefix, splitLines } from "../../src/jsonrpc/frame.js";

const bytes = (s: string): Uint8Array => Buffer.from(s, "utf8");
const text = (frame: unknown): string => {
  assert.ok(frame instanceof Uint8Array);
  return Buffer.from(frame).toString("utf8");
};

test("lines end at LF, a CR before it is dropped, blank lines are skipped", () => {
  const frames = splitLines(bytes('{"a":1}\r\n\n  \r\n{"b":2}\n{"c":3}'));
  assert.deepEqual(frames.map(text), ['{"a":1}', '{"b":2}', '{"c":3}']);
});

test("a multi-byte character cut across chunks arrives whole", () => {
  const splitter = new LineSplitter();
  const data = bytes('"é"\n');
  const frames = [...splitter.feed(data.subarray(0, 2)), ...splitter.feed(data.subarray(2)), ...splitter.finish()];
  assert.deepEqual(frames.map(text), ['"é"']);
});

test("an oversize line is reported with its length and reading goes on", () => {
  const splitter = new LineSplitter(8);
  const frames = [...splitter.feed(bytes("0123456789")), ...splitter.feed(bytes("abc\nok\n")), ...splitter.finish()];
  assert.equal(frames.length, 2);
  const oversize = frames[0];
  assert.ok(oversize instanceof Oversize);
  assert.equal(oversize.length, 13);
  assert.equal(Buffer.from(oversize.prefix).toString(), "0123456789");
  assert.equal(text(frames[1]), "ok");
});

test("the head of an oversize line gives its id and whether it is a call or a response", () => {
  assert.deepEqual(scanPrefix(bytes('{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"prompt":[{"te')), {
    id: 7,
    shape: "call",
  });
  assert.deepEqual(scanPrefix(bytes('{"jsonrpc":"2.0","result":{"a":[1,2]},"id":"x\\"y"')), { id: 'x"y', shape: "response" });
  assert.deepEqual(scanPrefix(bytes('{"id":18446744073709551615,"method":"m","result":1')), {
    id: 18446744073709551615n,
    shape: "unknown",
  });
  assert.deepEqual(scanPrefix(bytes('{"params":{"x":"}"},"id":1.5')), { id: undefined, shape: "unknown" });
  const splitter = new LineSplitter(16);
  const [oversize] = splitter.feed(bytes('{"id":3,"method":"m","params":{"x":1}}\n'));
  assert.ok(oversize instanceof Oversize);
  assert.deepEqual([oversize.id, oversize.shape], [3, "call"]);
});
