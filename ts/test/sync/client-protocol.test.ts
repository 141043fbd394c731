// The client against scripted servers that break the protocol: each is a
// shell that prints fixed bytes and then waits for its stdin to close.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ChildExitedError, type ProtocolErrorDetail, ProtocolError, ServerError } from "../../src/sync/errors.js";
import { MessageType } from "../../src/sync/frame.js";
import { withClient } from "./support.js";

/** Starts `sh -c script` as the server, sends one `echo` request, and returns what it threw. */
async function requestAgainst(script: string): Promise<unknown> {
  let thrown: unknown;
  await withClient("sh", ["-c", script], (client) => {
    try {
      client.request("echo", "hi");
    } catch (error) {
      thrown = error;
    }
    // Whatever happened, the channel is unusable afterwards and says so at once.
    if (!(thrown instanceof ServerError)) assert.throws(() => client.request("echo"), ChildExitedError);
  });
  return thrown;
}

async function protocolError(script: string): Promise<ProtocolErrorDetail> {
  const error = await requestAgainst(script);
  assert.ok(error instanceof ProtocolError, `expected a protocol error, got ${String(error)}`);
  return error.detail;
}

test("an answer for another method is a name mismatch", async () => {
  // [4, "other", ""]
  const detail = await protocolError(String.raw`printf '\223\004\304\005other\304\000'; exec cat >/dev/null`);
  assert.deepEqual(detail, { reason: "name-mismatch", kind: MessageType.Response, expected: "echo", found: "other" });
});

test("an error for another method is a name mismatch", async () => {
  // [5, "other", "boom"]
  const detail = await protocolError(String.raw`printf '\223\005\304\005other\304\004boom'; exec cat >/dev/null`);
  assert.ok(detail.reason === "name-mismatch" && detail.kind === MessageType.Error, JSON.stringify(detail));
});

test("a request from the server is unexpected", async () => {
  // [1, "echo", ""]
  const detail = await protocolError(String.raw`printf '\223\001\304\004echo\304\000'; exec cat >/dev/null`);
  assert.deepEqual(detail, { reason: "unexpected-type", kind: MessageType.Request, name: "echo" });
});

test("bytes that are not a tuple are a frame error", async () => {
  const detail = await protocolError("printf 'hello'; exec cat >/dev/null");
  assert.ok(detail.reason === "frame");
  assert.deepEqual(detail.error.detail, { reason: "array-header", found: 0x68 });
});

test("an Error tuple carries the server's text and keeps the channel", async () => {
  // [5, "echo", "no echo today"]
  const error = await requestAgainst(String.raw`printf '\223\005\304\004echo\304\015no echo today'; exec cat >/dev/null`);
  assert.ok(error instanceof ServerError);
  assert.equal(error.text, "no echo today");
  assert.equal(error.message, "server error: no echo today");
});

test("a server that exits without answering reports its status", async () => {
  const error = await requestAgainst("exit 7");
  assert.ok(error instanceof ChildExitedError);
  assert.deepEqual(error.status, { code: 7, signal: null });
});

test("a server that dies mid-tuple reports its status", async () => {
  // The answer's payload announces 200 bytes; two arrive.
  const error = await requestAgainst(String.raw`printf '\223\004\304\004echo\304\310ab'; exit 5`);
  assert.ok(error instanceof ChildExitedError);
  assert.deepEqual(error.status, { code: 5, signal: null });
});
