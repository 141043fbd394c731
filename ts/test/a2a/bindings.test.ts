/** The binding layer beyond what the vectors state: route matching, the SSE reader fed in
 * pieces, answers to other ids, and the wire forms of an error on both bindings. */

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  A2aError,
  decodeJsonRpcRequest,
  decodeRestRequest,
  encodeRequest,
  findRoute,
  jsonRpcErrorBody,
  matchTemplate,
  MAX_REQUEST_DEPTH,
  readJsonRpcAnswer,
  readRestAnswer,
  render,
  restErrorBody,
  SseReader,
} from "../../src/a2a/index.js";

const V1 = { "a2a-version": "1.0", "content-type": "application/json" };

test("templates match whole segments, decode variables and refuse a colon in a bare variable", () => {
  assert.deepEqual(matchTemplate("/tasks/{id}:cancel", "/tasks/t%201:cancel"), [["id", "t 1"]]);
  assert.equal(matchTemplate("/tasks/{id}", "/tasks/t-1:cancel"), null);
  assert.equal(matchTemplate("/tasks/{id}", "/tasks/"), null);
  const route = findRoute("POST", "/acme/tasks/t-1/pushNotificationConfigs");
  assert.ok(route !== null && "operation" in route);
  assert.equal(route.operation, "CreateTaskPushNotificationConfig");
  assert.deepEqual(route.vars, [["tenant", "acme"], ["task_id", "t-1"]]);
  assert.deepEqual(findRoute("PUT", "/tasks/t-1"), { allowed: ["GET"] });
});

test("a REST body's path variables win over its own members, proto names included", () => {
  const r = decodeRestRequest({
    method: "POST",
    target: "/tasks/t-1/pushNotificationConfigs",
    headers: V1,
    body: '{"task_id":"other","url":"https://example.com/h"}',
  });
  assert.equal(r.outcome, "dispatched");
  assert.equal(encodeRequest(r.request), '{"taskId":"t-1","url":"https://example.com/h"}');
});

test("a body of another Content-Type is refused on both bindings", () => {
  const headers = { "a2a-version": "1.0", "content-type": "text/plain" };
  const rest = decodeRestRequest({ method: "POST", target: "/message:send", headers, body: "{}" });
  assert.ok(rest.outcome === "refused");
  assert.equal(rest.error.kind, "InvalidRequest");
  const rpc = decodeJsonRpcRequest({ headers, query: "", body: '{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"t"}}' });
  assert.ok(rpc.outcome === "refused");
  assert.equal(jsonRpcErrorBody(rpc.id, rpc.error).slice(0, 40), '{"jsonrpc":"2.0","id":"a","error":{"code');
});

test("an error's wire forms carry the table's code, status and reason, and render once", () => {
  const e = new A2aError("TaskNotCancelable").with("taskId", "t-1");
  assert.equal(e.httpStatus(), 400);
  assert.equal(e.httpStatus("1.0.0"), 409);
  assert.equal(
    restErrorBody(e),
    '{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"Task cannot be canceled","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org","metadata":{"taskId":"t-1"}}]}}',
  );
  assert.equal(render(e), "TASK_NOT_CANCELABLE (-32002): Task cannot be canceled");
});

test("an answer to another id, or with both result and error, fails locally", () => {
  const ok = '{"jsonrpc":"2.0","id":7,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}';
  assert.equal(readJsonRpcAnswer("GetTask", ok, 7).outcome, "decoded");
  assert.equal(readJsonRpcAnswer("GetTask", ok, 8).outcome, "call_failed");
  assert.equal(readJsonRpcAnswer("GetTask", ok, "7").outcome, "call_failed");
  const peer = readRestAnswer("GetTask", 404, "");
  assert.ok(peer.outcome === "error_reply");
  assert.equal(peer.error.kind, "TaskNotFound"); // the guess from the status alone
});

test("the SSE reader assembles events across chunks and line endings", () => {
  const reader = new SseReader();
  const events = [
    ...reader.push("\ufeffid: 1\r"),
    ...reader.push("\ndata: {\"a\":"),
    ...reader.push("1}\r\n\r\n: keep-alive\n\nevent: error\ndata: x\ndata: y\n"),
    ...reader.push("\n"),
  ];
  assert.deepEqual(events, [
    { id: "1", event: undefined, data: '{"a":1}', retry: undefined },
    { id: "1", event: "error", data: "x\ny", retry: undefined },
  ]);
});

test("a request object may nest MAX_REQUEST_DEPTH levels on both bindings, no more", () => {
  const request = (depth: number): string =>
    `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"d":${"[".repeat(depth - 3)}${"]".repeat(depth - 3)}}}}`;
  for (const [depth, outcome] of [
    [MAX_REQUEST_DEPTH, "dispatched"],
    [MAX_REQUEST_DEPTH + 1, "refused"],
  ] as const) {
    const rest = decodeRestRequest({ method: "POST", target: "/message:send", headers: V1, body: request(depth) });
    assert.equal(rest.outcome, outcome, `HTTP+JSON at ${depth}`);
    const body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${request(depth)}}`;
    const rpc = decodeJsonRpcRequest({ headers: V1, query: "", body });
    assert.equal(rpc.outcome, outcome, `JSON-RPC at ${depth}`);
    if (rpc.outcome === "refused") assert.deepEqual([rpc.id, rpc.error.kind], ["null", "Parse"]);
  }
});
