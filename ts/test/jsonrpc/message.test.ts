import assert from "node:assert/strict";
import { test } from "node:test";

import { RawJson } from "../../src/codec/values.js";
import {
  decodeMessage,
  encodeNotification,
  encodeRequest,
  encodeResponse,
  EnvelopeError,
  type Message,
} from "../../src/jsonrpc/message.js";

function failure(line: string | Uint8Array, allowNullId = false): EnvelopeError {
  try {
    decodeMessage(line, { allowNullId });
  } catch (err) {
    assert.ok(err instanceof EnvelopeError);
    return err;
  }
  assert.fail("decoded");
}

test("a request keeps its params as received, its id exact beyond 2^53", () => {
  const message: Message = decodeMessage('{"jsonrpc":"2.0","id":9223372036854775807,"method":"m","params":{ "a" :1}}');
  assert.equal(message.kind, "request");
  assert.equal(message.id, 9223372036854775807n);
  assert.equal(message.params?.text, '{ "a" :1}');
});

test("a repeated envelope key is an invalid request at that key", () => {
  const err = failure('{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}');
  assert.deepEqual([err.code, err.id, err.path], [-32600, 1, "$.method"]);
  assert.equal(failure('{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}').id, undefined);
});

test("not JSON is a parse error with no id: invalid UTF-8, trailing data, too deep", () => {
  const invalidUtf8 = failure(new Uint8Array([0x7b, 0xff, 0x7d]));
  assert.deepEqual([invalidUtf8.code, invalidUtf8.detail], [-32700, "parse error: invalid utf-8 at line 1, column 2"]);
  assert.equal(failure('{"jsonrpc":"2.0","method":"m"} x').detail, "parse error: invalid JSON at line 1, column 32");
  assert.equal(failure('{"jsonrpc":"2.0","method":"m"').detail, "parse error: unexpected end of input at line 1, column 30");
  const deep = (n: number): string => `{"jsonrpc":"2.0","method":"m","params":${"[".repeat(n)}${"]".repeat(n)}}`;
  assert.equal(decodeMessage(deep(127)).kind, "notification");
  assert.equal(failure(deep(128)).detail, "parse error: nesting too deep");
});

test("a null request id is refused unless the protocol allows it", () => {
  const line = '{"jsonrpc":"2.0","id":null,"method":"m"}';
  assert.equal(failure(line).detail, "invalid request: `id` must not be null");
  const allowed = decodeMessage(line, { allowNullId: true });
  assert.ok(allowed.kind === "request" && allowed.id === null);
});

test("a malformed response is never answered", () => {
  const err = failure('{"jsonrpc":"2.0","id":3,"result":1,"error":{"code":1,"message":"x"}}');
  assert.deepEqual([err.kind, err.id, err.reply()], ["invalid-response", 3, null]);
});

test("messages encode compactly around raw payloads", () => {
  assert.equal(encodeRequest(1n, "m", new RawJson('{"a":\n1}')), '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}');
  assert.equal(encodeNotification("n", null), '{"jsonrpc":"2.0","method":"n"}');
  assert.equal(
    encodeResponse("x", null, { code: -32601, message: "no" }),
    '{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}',
  );
});
