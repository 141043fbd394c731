/**
 * A2A 0.3 compatibility, as `crates/a2a/tests/compat_v03.rs` has it (a subset: the schema
 * walk of the pinned 0.3 JSON Schema is not ported): the 0.3 <-> 1.0 converters (parts,
 * states, `final`, `blocking`, push configs, the card, data parts, error paths, the
 * method table), and 0.3 JSON-RPC clients served end to end by the `node:http` server
 * (sends, get, cancel, a direct message, a file part, 0.3 errors, a stream, push configs).
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { A2aError } from "../../src/a2a/errors.js";
import { isFinalEvent, toV03, toV1, v03Method, v03MethodFor, type Json, type JsonObject } from "../../src/a2a/compat/v03.js";
import { DECODERS, encodeResult, type OperationName } from "../../src/a2a/index.js";
import { A2aCore, A2aHttpServer, DemoAgent, demoCard } from "../../src/a2a/server/index.js";
import { parse } from "../../src/codec/reader.js";
import { Ctx } from "../../src/codec/runtime.js";
import { within } from "../spawned.js";

const STATES: Array<[string, string]> = [
  ["submitted", "TASK_STATE_SUBMITTED"],
  ["working", "TASK_STATE_WORKING"],
  ["completed", "TASK_STATE_COMPLETED"],
  ["failed", "TASK_STATE_FAILED"],
  ["canceled", "TASK_STATE_CANCELED"],
  ["input-required", "TASK_STATE_INPUT_REQUIRED"],
  ["rejected", "TASK_STATE_REJECTED"],
  ["auth-required", "TASK_STATE_AUTH_REQUIRED"],
];

function o(v: Json | undefined): JsonObject {
  assert.ok(v !== null && typeof v === "object" && !Array.isArray(v), `an object: ${JSON.stringify(v)}`);
  return v;
}

/** A 1.0 value decodes through the generated validators. */
function decodesAs(type: "Message" | "TaskPushNotificationConfig" | "AgentCard", v: Json): void {
  const text = JSON.stringify(v);
  DECODERS[type](parse(text, 64), "$", new Ctx(text));
}

const USER_MESSAGE: Json = {
  kind: "message",
  messageId: "m-1",
  role: "user",
  parts: [
    { kind: "text", text: "Summarize these", metadata: { lang: "en" } },
    { kind: "file", file: { bytes: "dGNr", mimeType: "text/plain", name: "input.txt" } },
    { kind: "file", file: { uri: "https://example.com/report.pdf", mimeType: "application/pdf" } },
    { kind: "data", data: { count: 42 } },
  ],
};

test("0.3 messages and parts take the 1.0 shapes, and come back", () => {
  const up = o(toV1("Message", USER_MESSAGE));
  assert.equal(up["kind"], undefined);
  assert.equal(up["role"], "ROLE_USER");
  const parts = up["parts"] as Json[];
  assert.deepEqual(parts[0], { text: "Summarize these", metadata: { lang: "en" } });
  assert.deepEqual(parts[1], { raw: "dGNr", mediaType: "text/plain", filename: "input.txt" });
  assert.deepEqual(parts[2], { url: "https://example.com/report.pdf", mediaType: "application/pdf" });
  assert.deepEqual(parts[3], { data: { count: 42 } });
  decodesAs("Message", up);
  assert.deepEqual(toV03("Message", up), USER_MESSAGE);
});

test("every state maps both ways, 1.0 enum numbers too", () => {
  for (const [s03, s1] of STATES) {
    assert.equal(o(toV1("TaskStatus", { state: s03 }))["state"], s1);
    assert.equal(o(toV03("TaskStatus", { state: s1 }))["state"], s03);
  }
  assert.equal(o(toV03("TaskStatus", { state: 6 }))["state"], "input-required");
});

test("`final` follows the state on the way down and is gone on the way up", () => {
  for (const [s03, s1] of STATES) {
    const down = o(toV03("StreamEvent", { statusUpdate: { taskId: "t", contextId: "c", status: { state: s1 } } }));
    const expected = s03 !== "submitted" && s03 !== "working";
    assert.equal(down["final"], expected, s03);
    assert.equal(down["kind"], "status-update");
    assert.equal(isFinalEvent(down), expected);
    assert.equal(o(o(toV1("StreamEvent", down))["statusUpdate"])["final"], undefined);
  }
});

test("`blocking` becomes `returnImmediately`, negated; absent stays absent", () => {
  const params = (configuration: Json): Json => ({ message: USER_MESSAGE, configuration });
  assert.equal(o(o(toV1("MessageSendParams", params({ blocking: false })))["configuration"])["returnImmediately"], true);
  assert.equal(o(o(toV1("MessageSendParams", params({ blocking: true })))["configuration"])["returnImmediately"], false);
  assert.equal(o(o(toV1("MessageSendParams", params({})))["configuration"])["returnImmediately"], undefined);
});

test("push configs flatten and keep the first scheme", () => {
  const c = { taskId: "t-1", pushNotificationConfig: { id: "c", url: "https://h", authentication: { schemes: ["Bearer", "Basic"] } } };
  const up = toV1("TaskPushNotificationConfig", c);
  assert.deepEqual(up, { taskId: "t-1", id: "c", url: "https://h", authentication: { scheme: "Bearer" } });
  decodesAs("TaskPushNotificationConfig", up);
  assert.throws(
    () => toV1("PushNotificationConfig", { url: "u", authentication: { schemes: [] } }),
    (e: unknown) => e instanceof A2aError && e.kind === "InvalidParams" && e.message.includes("$.authentication.schemes"),
  );
});

test("a 1.0 card becomes a 0.3 card; a card declaring 0.3 interfaces offers only those", () => {
  const base = "http://127.0.0.1:9999";
  const card = JSON.parse(encodeResult("GetExtendedAgentCard", demoCard(base))) as JsonObject;
  const c03 = o(toV03("AgentCard", card));
  assert.equal(c03["url"], `${base}/`);
  assert.equal(c03["preferredTransport"], "JSONRPC");
  assert.equal(c03["protocolVersion"], "0.3.0");
  assert.deepEqual((c03["additionalInterfaces"] as Json[])[1], { url: `${base}/a2a/rest`, transport: "HTTP+JSON" });
  const mixed = structuredClone(card);
  (mixed["supportedInterfaces"] as Json[]).push({ url: "https://old.example.com/", protocolBinding: "JSONRPC", protocolVersion: "0.3" });
  o(mixed["capabilities"])["extendedAgentCard"] = true;
  const only = o(toV03("AgentCard", mixed));
  assert.equal(only["url"], "https://old.example.com/");
  assert.equal(only["additionalInterfaces"], undefined);
  assert.equal(only["supportsAuthenticatedExtendedCard"], true);
  const up = toV1("AgentCard", c03);
  decodesAs("AgentCard", up);
  assert.equal((o(up)["supportedInterfaces"] as Json[]).length, 2);
});

test("a 1.0 data part that is not an object is wrapped", () => {
  assert.deepEqual(toV03("Part", { data: [1, 2] }), { kind: "data", data: { value: [1, 2] } });
});

test("bad input names its path", () => {
  const cases: Array<["Message" | "Task" | "StreamEvent" | "MessageSendParams" | "AgentCard", Json, string]> = [
    ["Message", { kind: "message", messageId: "m", role: "robot", parts: [] }, "$.role"],
    ["Message", { messageId: "m", role: "user", parts: [{ kind: "video" }] }, "$.parts[0].kind"],
    ["Message", { messageId: "m", role: "user", parts: [{}] }, "$.parts[0].kind"],
    ["Message", { messageId: "m", role: "user", parts: [{ kind: "file", file: { name: "x" } }] }, "$.parts[0].file"],
    ["Message", { messageId: "m", role: "user", parts: [{ kind: "text", text: 7 }] }, "$.parts[0].text"],
    ["Message", { messageId: "m", role: "user", parts: "no" }, "$.parts"],
    ["Message", { kind: "task", messageId: "m" }, "$.kind"],
    ["Task", { id: "t", status: { state: "sleeping" } }, "$.status.state"],
    ["StreamEvent", { kind: "weird" }, "$.kind"],
    ["MessageSendParams", { message: {}, configuration: { blocking: "yes" } }, "$.configuration.blocking"],
    ["AgentCard", { name: "x" }, "$.url"],
    ["Task", [], "$"],
  ];
  for (const [shape, value, path] of cases) {
    assert.throws(
      () => toV1(shape, value),
      (e: unknown) => e instanceof A2aError && e.kind === "InvalidParams" && e.metadata.some(([k, v]) => k === "path" && v === path),
      `${shape} ${JSON.stringify(value)} at ${path}`,
    );
  }
  assert.throws(() => toV03("Part", { text: "a", url: "b" }), (e: unknown) => e instanceof A2aError && e.kind === "InvalidParams");
  assert.throws(() => toV03("StreamEvent", {}), (e: unknown) => e instanceof A2aError && e.kind === "InvalidParams");
});

test("the method table covers every 0.3 method, and ListTasks has none", () => {
  const names: Array<[string, OperationName]> = [
    ["message/send", "SendMessage"],
    ["message/stream", "SendStreamingMessage"],
    ["tasks/get", "GetTask"],
    ["tasks/cancel", "CancelTask"],
    ["tasks/resubscribe", "SubscribeToTask"],
    ["tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"],
    ["tasks/pushNotificationConfig/get", "GetTaskPushNotificationConfig"],
    ["tasks/pushNotificationConfig/list", "ListTaskPushNotificationConfigs"],
    ["tasks/pushNotificationConfig/delete", "DeleteTaskPushNotificationConfig"],
    ["agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"],
  ];
  for (const [name, operation] of names) {
    assert.equal(v03Method(name)?.operation, operation);
    assert.equal(v03MethodFor(operation)?.name, name);
  }
  assert.equal(v03MethodFor("ListTasks"), undefined);
});

// End to end: 0.3 JSON-RPC calls (no A2A-Version header) to a real server.

async function withServer(body: (base: string) => Promise<void>): Promise<void> {
  const server = new A2aHttpServer((url) => new A2aCore(new DemoAgent({ delayMs: 50 }), { card: demoCard(url) }));
  await server.listen(0);
  try {
    await body(server.url);
  } finally {
    await server.close();
  }
}

async function post(base: string, body: Json, headers: Record<string, string> = {}): Promise<Response> {
  return within(fetch(`${base}/`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }), "an answer");
}

async function call(base: string, method: string, params: Json): Promise<JsonObject> {
  const r = await post(base, { jsonrpc: "2.0", id: 7, method, params });
  assert.ok(r.headers.get("content-type")?.startsWith("application/json"), `a JSON answer, HTTP ${r.status}`);
  const v = o((await r.json()) as Json);
  assert.equal(v["jsonrpc"], "2.0");
  assert.equal(v["id"], 7);
  return v;
}

function sendParams(messageId: string): Json {
  return { message: { kind: "message", messageId, role: "user", parts: [{ kind: "text", text: "hi" }] } };
}

test("a 0.3 client sends, gets and cancels, and gets a direct message and a file part", async () => {
  await withServer(async (base) => {
    const r = await call(base, "message/send", sendParams("tck-complete-task-1"));
    const task = o(r["result"]);
    assert.equal(task["kind"], "task", JSON.stringify(r));
    assert.equal(o(task["status"])["state"], "completed");
    const g = o((await call(base, "tasks/get", { id: task["id"] as string, historyLength: 1 }))["result"]);
    assert.equal(g["id"], task["id"]);
    assert.equal(g["kind"], "task");
    assert.equal((g["history"] as Json[]).length, 1);

    const waiting = o((await call(base, "message/send", sendParams("tck-input-required-1")))["result"]);
    assert.equal(o(waiting["status"])["state"], "input-required");
    const canceled = o((await call(base, "tasks/cancel", { id: waiting["id"] as string }))["result"]);
    assert.equal(o(canceled["status"])["state"], "canceled");

    const m = o((await call(base, "message/send", sendParams("tck-message-response-1")))["result"]);
    assert.equal(m["kind"], "message");
    assert.equal(m["role"], "agent");
    assert.deepEqual((m["parts"] as Json[])[0], { kind: "text", text: "Direct message response" });

    const f = o((await call(base, "message/send", sendParams("tck-artifact-file-1")))["result"]);
    const part = (o((f["artifacts"] as Json[])[0])["parts"] as Json[])[0];
    assert.deepEqual(part, { kind: "file", file: { bytes: "dGNr", mimeType: "text/plain", name: "output.txt" } });
  });
});

test("a 0.3 client gets 0.3 errors; a 1.0 method without the header is -32009; with it, 1.0", async () => {
  await withServer(async (base) => {
    const e = o((await call(base, "tasks/get", { id: "no-such-task" }))["error"]);
    assert.equal(e["code"], -32001);
    assert.equal(o(e["data"])["taskId"], "no-such-task");
    const bad = o((await call(base, "message/send", { message: { messageId: "m", role: "robot", parts: [] } }))["error"]);
    assert.equal(bad["code"], -32602);
    assert.equal(o(bad["data"])["path"], "$.params.message.role");
    assert.equal(o((await call(base, "GetTask", { id: "x" }))["error"])["code"], -32009);
    const v1 = o((await (await post(base, { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }, { "A2A-Version": "1.0" })).json()) as Json);
    assert.equal(o(v1["error"])["code"], -32001);
    assert.ok(Array.isArray(o(v1["error"])["data"]));
  });
});

test("a 0.3 client streams: the task first, one final status last; resubscribing to a finished task is -32004", async () => {
  await withServer(async (base) => {
    const r = await post(base, { jsonrpc: "2.0", id: "s-1", method: "message/stream", params: sendParams("tck-stream-001-x") });
    assert.equal(r.status, 200);
    assert.ok(r.headers.get("content-type")?.startsWith("text/event-stream"));
    const text = await within(r.text(), "the stream's end");
    const events = text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => o(JSON.parse(l.slice(6)) as Json));
    assert.ok(events.length >= 3, text);
    for (const e of events) assert.equal(e["id"], "s-1");
    const results = events.map((e) => o(e["result"]));
    assert.equal(results[0]?.["kind"], "task");
    assert.ok(results.some((x) => x["kind"] === "artifact-update"));
    const last = results[results.length - 1] as JsonObject;
    assert.equal(last["kind"], "status-update");
    assert.equal(last["final"], true);
    assert.equal(o(last["status"])["state"], "completed");
    assert.equal(results.filter((x) => x["final"] === true).length, 1);
    const e = o((await call(base, "tasks/resubscribe", { id: results[0]?.["id"] as string }))["error"]);
    assert.equal(e["code"], -32004);
  });
});

test("a 0.3 client sets, gets (the task's default config), lists and deletes push configs", async () => {
  await withServer(async (base) => {
    const id = o((await call(base, "message/send", sendParams("tck-input-required-2")))["result"])["id"] as string;
    const set = o((await call(base, "tasks/pushNotificationConfig/set", { taskId: id, pushNotificationConfig: { url: "https://hooks.example.com/a2a", token: "tok" } }))["result"]);
    assert.equal(set["taskId"], id);
    assert.equal(o(set["pushNotificationConfig"])["url"], "https://hooks.example.com/a2a");
    const get = o((await call(base, "tasks/pushNotificationConfig/get", { id }))["result"]);
    assert.equal(o(get["pushNotificationConfig"])["token"], "tok");
    assert.equal(((await call(base, "tasks/pushNotificationConfig/list", { id }))["result"] as Json[]).length, 1);
    const del = await call(base, "tasks/pushNotificationConfig/delete", { id, pushNotificationConfigId: o(set["pushNotificationConfig"])["id"] as string });
    assert.ok("result" in del && del["result"] === null, JSON.stringify(del));
    assert.deepEqual((await call(base, "tasks/pushNotificationConfig/list", { id }))["result"], []);
    assert.equal(o((await call(base, "agent/getAuthenticatedExtendedCard", null))["error"])["code"], -32004);
  });
});
