/** ACP over Streamable HTTP and WebSocket, ours against ours, over real sockets on
 * 127.0.0.1: the echo agent served by `agentproto/acp/remote`, our client. */

import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import { test } from "node:test";

import { connect, listen } from "../../src/acp/remote/index.js";
import { PeerError } from "../../src/acp/errors.js";
import { ErrorCode } from "../../src/jsonrpc/error.js";
import type { EchoAgent } from "../../src/examples/echo-agent.js";
import { Collect, ECHOED, echoServer, exchange, INITIALIZE, JSON_TYPE, serving, twoTurns, within } from "./remote-peers.js";

for (const websocket of [false, true]) {
  const over = websocket ? "WebSocket" : "Streamable HTTP";

  test(`two prompt turns over ${over} stream their updates before each answer`, async () => {
    const server = echoServer();
    await serving(server, async (url) => {
      const client = new Collect();
      const remote = await connect(url, client, { websocket });
      try {
        assert.deepEqual(await twoTurns(remote.agent, client), ECHOED);
        assert.ok(remote.connectionId !== null && server.connections.has(remote.connectionId));
      } finally {
        await remote.close();
      }
    });
  });

  test(`over ${over}, each connection gets its own agent and closing ends the server side`, async () => {
    const made: EchoAgent[] = [];
    const server = echoServer({}, made);
    await serving(server, async (url) => {
      const first = new Collect();
      const second = new Collect();
      const a = await connect(url, first, { websocket });
      const b = await connect(url, second, { websocket });
      let ended: Promise<void>[] = [];
      try {
        assert.deepEqual(await twoTurns(a.agent, first), ECHOED);
        assert.deepEqual(await twoTurns(b.agent, second), ECHOED);
        assert.equal(server.connections.size, 2);
        ended = [...server.connections.values()].map((c) => c.done);
      } finally {
        await a.close();
        await b.close();
      }
      await within(Promise.all(ended), "both served connections to end");
      assert.equal(server.connections.size, 0);
      // Each agent opened its own first session: the factory ran once per connection.
      assert.equal(made.length, 2);
    });
  });
}

test("a connection nobody uses is reaped after the idle timeout", async () => {
  const server = echoServer({ idleTimeout: 200 });
  await serving(server, async (url) => {
    const answer = await exchange(url, "POST", JSON_TYPE, INITIALIZE);
    assert.equal(answer.status, 200);
    const id = answer.headers["acp-connection-id"] as string;
    const served = server.connections.get(id);
    assert.ok(served !== undefined);
    await within(served.done, "the reaper to end the connection"); // nothing else ends it
    assert.equal(server.connections.has(id), false);
    assert.equal((await exchange(url, "DELETE", { "acp-connection-id": id })).status, 404);
  });
});

test("the client keeps the cookies the server sets and returns them on every request", async () => {
  const server = echoServer();
  const seen: [string, string | undefined][] = [];
  const listening = await listen(server, "127.0.0.1", 0);
  // Put a cookie on every answer, and note the cookie every request carries.
  const [onRequest] = listening.http.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  listening.http.removeAllListeners("request");
  listening.http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    seen.push([req.method ?? "", req.headers.cookie]);
    res.setHeader("set-cookie", "route=b7; Path=/");
    onRequest?.(req, res);
  });
  try {
    const client = new Collect();
    const remote = await connect(listening.url, client);
    try {
      assert.deepEqual(await twoTurns(remote.agent, client), ECHOED);
      assert.deepEqual([...remote.cookies], [["route", "b7"]]);
    } finally {
      await remote.close();
    }
  } finally {
    await within(listening.close(), "the server to stop");
  }
  // Every request after the first carried the cookie: POSTs, both streams, the DELETE.
  assert.deepEqual(seen[0], ["POST", undefined]);
  assert.ok(seen.length > 5);
  assert.deepEqual(new Set(seen.slice(1).map(([, cookie]) => cookie)), new Set(["route=b7"]));
  assert.deepEqual(new Set(seen.map(([method]) => method)), new Set(["POST", "GET", "DELETE"]));
});

test("a message the server refuses fails its call with -32600 and the connection goes on", async () => {
  const server = echoServer({ maxBodyBytes: 4096 });
  await serving(server, async (url) => {
    const client = new Collect();
    const remote = await connect(url, client);
    try {
      await within(remote.agent.initialize({ protocolVersion: 1 }), "initialize");
      const { sessionId } = await within(remote.agent.newSession({ cwd: "/", mcpServers: [] }), "session/new");
      const big = remote.agent.prompt({ sessionId, prompt: [{ type: "text", text: "x".repeat(10_000) }] });
      const refused = await within(big.then(() => null, (err: unknown) => err), "the refused prompt");
      assert.ok(refused instanceof PeerError, String(refused));
      assert.equal(refused.error.code, ErrorCode.INVALID_REQUEST);
      assert.match(refused.error.message, /HTTP 413/);
      const small = await within(remote.agent.prompt({ sessionId, prompt: [{ type: "text", text: "still here" }] }), "the next prompt");
      assert.equal(small.stopReason, "end_turn");
      assert.equal(client.chunks.join(""), "still here");
    } finally {
      await remote.close();
    }
  });
});
