/**
 * The `node:http` A2A server's HTTP behaviour beyond the vectors: the card's caching
 * headers, the body limit (413 from Content-Length), the connection cap (503 with
 * Retry-After), the auth hook and the tenant a principal is bound to, and an SSE stream
 * through the client.
 */

import assert from "node:assert/strict";
import { connect } from "node:net";
import { test } from "node:test";

import { A2aClient, A2aError, resolveCard } from "../../src/a2a/index.js";
import { A2aCore, A2aHttpServer, DemoAgent, demoCard, type ServerOptions } from "../../src/a2a/server/index.js";
import { exchange } from "./wire.js";

async function withServer(options: ServerOptions, body: (server: A2aHttpServer, port: number) => Promise<void>): Promise<void> {
  const server = new A2aHttpServer((url) => new A2aCore(new DemoAgent(), { card: demoCard(url) }), options);
  const address = await server.listen(0, "127.0.0.1");
  try {
    await body(server, address.port);
  } finally {
    await server.close();
  }
}

const V1: Array<[string, string]> = [["A2A-Version", "1.0"], ["Content-Type", "application/json"]];

test("the card has an ETag and Cache-Control, and answers 304 to If-None-Match", async () => {
  await withServer({ cardMaxAge: 60 }, async (server, port) => {
    const first = await exchange(port, "GET", "/.well-known/agent-card.json", [], null);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("cache-control"), "public, max-age=60");
    const etag = first.headers.get("etag");
    assert.ok(etag !== undefined && etag.startsWith('"'));
    const again = await exchange(port, "GET", "/.well-known/agent-card.json", [["If-None-Match", etag]], null);
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    const card = await resolveCard(server.url);
    assert.equal(card.name, "agentproto demo agent");
  });
});

test("HTTP+JSON successes are application/a2a+json, errors and JSON-RPC application/json (as Rust)", async () => {
  await withServer({}, async (_server, port) => {
    const message = { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] };
    const rest = await exchange(port, "POST", "/a2a/rest/message:send", V1, Buffer.from(JSON.stringify({ message })));
    assert.equal(rest.status, 200);
    assert.equal(rest.headers.get("content-type"), "application/a2a+json");
    const missing = await exchange(port, "GET", "/a2a/rest/tasks/nope", V1, null);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get("content-type"), "application/json");
    const rpc = await exchange(port, "POST", "/", V1, Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message } })));
    assert.equal(rpc.status, 200);
    assert.equal(rpc.headers.get("content-type"), "application/json");
  });
});

test("a body over the limit is refused 413 from its Content-Length", async () => {
  await withServer({ maxBodyBytes: 64 }, async (_server, port) => {
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x".repeat(100) } }));
    const jsonRpc = await exchange(port, "POST", "/", V1, body);
    assert.equal(jsonRpc.status, 413);
    assert.equal(JSON.parse(jsonRpc.body.toString()).error.data[0].reason, "PAYLOAD_TOO_LARGE");
    const rest = await exchange(port, "POST", "/a2a/rest/message:send", V1, body);
    assert.equal(rest.status, 413);
  });
});

/** Sends a JSON-RPC head announcing `length` body bytes and `sent` of them; resolves with
 * what the server answers (until it closes) and when the answer began, from the send. */
function partialBody(port: number, length: number, sent: string): Promise<{ text: string; afterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let afterMs = -1;
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${sent}`);
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error("no answer within 5 s")));
    socket.on("data", (chunk: Buffer) => {
      if (afterMs < 0) afterMs = Date.now() - started;
      chunks.push(chunk);
    });
    socket.once("error", reject);
    socket.once("close", () => resolve({ text: Buffer.concat(chunks).toString(), afterMs }));
  });
}

test("a body that does not arrive within the body timeout is answered 408, each in its own time", async () => {
  await withServer({ bodyTimeoutMs: 300 }, async (_server, port) => {
    const first = partialBody(port, 100, '{"jsonrpc":');
    await new Promise((resolve) => setTimeout(resolve, 150));
    // A whole request meanwhile is answered at once.
    const whole = await exchange(port, "POST", "/", V1, Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "missing" } })));
    assert.equal(JSON.parse(whole.body.toString()).error.data[0].reason, "TASK_NOT_FOUND");
    const second = partialBody(port, 100, "{");
    for (const { text, afterMs } of [await first, await second]) {
      assert.match(text, /^HTTP\/1\.1 408 /);
      assert.match(text, /connection: close/i);
      assert.ok(afterMs >= 280, `answered after ${afterMs} ms, before the timeout`);
      assert.ok(afterMs < 3_000, `answered after ${afterMs} ms`);
    }
  });
});

test("a connection over the cap is answered 503 with Retry-After", async () => {
  await withServer({ maxConnections: 1 }, async (_server, port) => {
    const held = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => held.once("connect", () => resolve()));
    try {
      // The first connection is counted once the server accepted it: the second is refused.
      let refused = await exchange(port, "GET", "/.well-known/agent-card.json", [], null);
      for (let i = 0; i < 50 && refused.status !== 503; i++) refused = await exchange(port, "GET", "/.well-known/agent-card.json", [], null);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get("retry-after"), "1");
    } finally {
      held.destroy();
    }
  });
});

test("the auth hook refuses, and a principal bound to a tenant only reaches that tenant", async () => {
  const options: ServerOptions = {
    authenticate: (req) => {
      const token = req.headers["authorization"];
      if (token === "Bearer acme") return { subject: "alice", tenant: "acme" };
      throw new A2aError("Unauthenticated", "a bearer token is required");
    },
  };
  await withServer(options, async (server, port) => {
    const none = await exchange(port, "GET", "/a2a/rest/tasks", V1, null);
    assert.equal(none.status, 401);
    const client = new A2aClient({ url: `${server.url}/a2a/rest`, binding: "rest", headers: { authorization: "Bearer acme" } });
    const sent = await client.sendMessage({ message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello" }] } });
    assert.ok(sent.task !== undefined);
    const listed = await client.listTasks({ tenant: "acme" });
    assert.deepEqual(listed.tasks.map((t) => t.id), [sent.task.id]);
    const other = await client.call("ListTasks", { tenant: "globex" });
    assert.equal(other.outcome, "error_reply");
    assert.equal(other.outcome === "error_reply" ? other.error.reason : "", "PERMISSION_DENIED");
  });
});

test("a streamed send yields the task's events through the client, ending at the turn's end", async () => {
  await withServer({}, async (server) => {
    for (const binding of ["jsonrpc", "rest"] as const) {
      const client = new A2aClient({ url: binding === "jsonrpc" ? `${server.url}/` : `${server.url}/a2a/rest`, binding });
      const states: string[] = [];
      for await (const ev of client.stream("SendStreamingMessage", { message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hi" }] } })) {
        assert.ok(ev.answer?.outcome === "decoded");
        const v = ev.answer.value;
        states.push(v.task?.status.state ?? v.statusUpdate?.status.state ?? (v.artifactUpdate !== undefined ? "artifact" : "message"));
      }
      assert.deepEqual(states, ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "artifact", "TASK_STATE_COMPLETED"]);
    }
  });
});
