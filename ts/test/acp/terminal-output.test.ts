/** `OutputBuffer`: the last bytes of a command's output, cut at a character boundary. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { OutputBuffer } from "../../src/acp/terminal-output.js";

const bytes = (text: string): Buffer => Buffer.from(text, "utf8");

test("output under the limit is kept whole and not truncated", () => {
  const buffer = new OutputBuffer(16);
  buffer.push(bytes("hello "));
  buffer.push(bytes("world"));
  assert.deepEqual(buffer.snapshot(false), { text: "hello world", truncated: false });
  assert.equal(buffer.length, 11);
});

test("past the limit the oldest bytes go and the cut moves to the next character", () => {
  const buffer = new OutputBuffer(5);
  buffer.push(bytes("é".repeat(10))); // 20 bytes: the last 5 start inside an `é`
  assert.deepEqual(buffer.snapshot(true), { text: "éé", truncated: true });
  buffer.push(bytes("a"));
  assert.deepEqual(buffer.snapshot(true), { text: "ééa", truncated: true });
  buffer.push(bytes("b")); // one byte over: the first `é` loses its lead byte, so it goes whole
  assert.deepEqual(buffer.snapshot(true), { text: "éab", truncated: true });
});

test("many small writes keep exactly the last bytes, as one large write would", () => {
  const limit = 1000;
  const buffer = new OutputBuffer(limit);
  let all = "";
  for (let i = 0; i < 5000; i++) {
    const line = `line ${i}\n`;
    all += line;
    buffer.push(bytes(line));
  }
  const { text, truncated } = buffer.snapshot(true);
  assert.equal(truncated, true);
  assert.equal(text, all.slice(all.length - limit));
});

test("a character whose last bytes are not written yet is held back until the command ends", () => {
  const buffer = new OutputBuffer(64);
  const euro = bytes("€"); // three bytes
  buffer.push(Buffer.concat([bytes("cost "), euro.subarray(0, 2)]));
  assert.equal(buffer.snapshot(false).text, "cost ");
  assert.equal(buffer.snapshot(true).text, "cost \ufffd");
  buffer.push(euro.subarray(2));
  assert.equal(buffer.snapshot(false).text, "cost €");
});

test("invalid bytes read as U+FFFD and the text still fits the limit", () => {
  const buffer = new OutputBuffer(4);
  buffer.push(Buffer.from([0xff, 0xfe, 0x61, 0x62]));
  const { text, truncated } = buffer.snapshot(true);
  assert.ok(Buffer.byteLength(text, "utf8") <= 4, `too long: ${JSON.stringify(text)}`);
  assert.ok(text.endsWith("ab"));
  assert.equal(truncated, true);
});

test("a limit of zero keeps nothing and reports the truncation", () => {
  const buffer = new OutputBuffer(0);
  buffer.push(bytes("gone"));
  assert.deepEqual(buffer.snapshot(true), { text: "", truncated: true });
});

test("a byte-order mark the command writes is output like any other character", () => {
  const buffer = new OutputBuffer(16);
  buffer.push(Buffer.from([0xef, 0xbb, 0xbf, 0x61]));
  assert.deepEqual(buffer.snapshot(true), { text: "\ufeffa", truncated: false });
});
