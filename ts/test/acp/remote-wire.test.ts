/** The Streamable HTTP and WebSocket profiles on the wire: status codes, streams,
 * refusals, limits and bad input, with raw requests against the echo agent served by
 * `agentproto/acp/remote` on 127.0.0.1. */

import assert from "node:assert/strict";
import * as net from "node:net";
import { test } from "node:test";

import { ErrorCode } from "../../src/jsonrpc/error.js";
import { CloseCode, encodeFrame } from "../../src/acp/remote/websocket.js";
import {
  echoServer,
  exchange,
  initialize,
  INITIALIZE,
  JSON_TYPE,
  NEW_SESSION,
  nextMessage,
  openStream,
  post,
  prompt,
  rawSocket,
  serving,
  within,
  type RawStream,
} from "./remote-peers.js";

const LIMITS = { maxBodyBytes: 64 * 1024, keepaliveInterval: 200 };

async function newSession(url: string, connection: string, main: RawStream): Promise<string> {
  assert.equal(await post(url, connection, NEW_SESSION), 202);
  const answer = await main.next();
  assert.equal(answer["id"], 1);
  return (answer["result"] as { sessionId: string }).sessionId;
}

test("updates and the answer come in order on the session stream", async () => {
  await serving(echoServer(LIMITS), async (url) => {
    const id = await initialize(url);
    const main = await openStream(url, { "acp-connection-id": id });
    try {
      assert.equal(main.response.statusCode, 200);
      assert.equal(main.response.headers["content-type"], "text/event-stream");
      const session = await newSession(url, id, main);
      const stream = await openStream(url, { "acp-connection-id": id, "acp-session-id": session });
      try {
        assert.equal(stream.response.statusCode, 200);
        for (const turn of [0, 1]) {
          const words = Array.from({ length: 50 }, (_, i) => `w${turn}x${i} `);
          assert.equal(await post(url, id, prompt(10 + turn, session, words.join("")), session), 202);
          const seen: string[] = [];
          let message = await stream.next();
          while (!("id" in message)) {
            seen.push(((message["params"] as { update: { content: { text: string } } }).update.content.text));
            message = await stream.next();
          }
          assert.deepEqual(message, { jsonrpc: "2.0", id: 10 + turn, result: { stopReason: "end_turn" } });
          assert.deepEqual(seen, words);
        }
      } finally {
        stream.close();
      }
    } finally {
      main.close();
    }
  });
});

test("an idle stream gets keep-alive comments", async () => {
  await serving(echoServer(LIMITS), async (url) => {
    const main = await openStream(url, { "acp-connection-id": await initialize(url) });
    try {
      assert.equal(await main.chunk(), ": keepalive\n\n");
    } finally {
      main.close();
    }
  });
});

test("bad input is answered on the connection stream and the connection goes on", async () => {
  await serving(echoServer(LIMITS), async (url) => {
    const id = await initialize(url);
    const main = await openStream(url, { "acp-connection-id": id });
    try {
      assert.equal(await post(url, id, '{"jsonrpc":"2.0","id":'), 202);
      const parseError = await main.next();
      assert.equal(parseError["id"], null);
      assert.equal((parseError["error"] as { code: number }).code, ErrorCode.PARSE_ERROR);
      assert.equal(await post(url, id, '{"jsonrpc":"2.0","id":5,"method":"session/new","params":{}}'), 202);
      const invalid = await main.next();
      assert.equal(invalid["id"], 5);
      assert.equal((invalid["error"] as { code: number }).code, ErrorCode.INVALID_PARAMS);
      // A pretty-printed message is one message.
      assert.equal(await post(url, id, JSON.stringify(JSON.parse(NEW_SESSION), null, 2)), 202);
      assert.ok(((await main.next())["result"] as { sessionId: string }).sessionId);
    } finally {
      main.close();
    }
  });
});

test("unknown, forged and foreign ids are refused", async () => {
  await serving(echoServer(LIMITS), async (url) => {
    const first = await initialize(url);
    const second = await initialize(url);
    const main = await openStream(url, { "acp-connection-id": first });
    try {
      const session = await newSession(url, first, main);
      const sse = { accept: "text/event-stream" };
      // No connection id on anything but initialize: 400.
      assert.equal((await exchange(url, "POST", JSON_TYPE, NEW_SESSION)).status, 400);
      assert.equal((await exchange(url, "GET", sse)).status, 400);
      assert.equal((await exchange(url, "DELETE", {})).status, 400);
      // A connection id this server never issued: 404 everywhere.
      const forged = "00000000-0000-4000-8000-000000000000";
      assert.equal(await post(url, forged, NEW_SESSION), 404);
      assert.equal((await exchange(url, "GET", { ...sse, "acp-connection-id": forged })).status, 404);
      assert.equal((await exchange(url, "DELETE", { "acp-connection-id": forged })).status, 404);
      // The first connection's session, named on the second connection: 404.
      assert.equal(await post(url, second, prompt(3, session, "hi"), session), 404);
      assert.equal((await exchange(url, "GET", { ...sse, "acp-connection-id": second, "acp-session-id": session })).status, 404);
      // A second reader of an open stream: 409.
      assert.equal((await exchange(url, "GET", { ...sse, "acp-connection-id": first })).status, 409);
      // DELETE ends the connection; its id is unknown afterwards.
      assert.equal((await exchange(url, "DELETE", { "acp-connection-id": first })).status, 202);
      assert.equal(await post(url, first, NEW_SESSION), 404);
    } finally {
      main.close();
    }
  });
});

test("batches, wrong media types, other methods and oversize bodies are refused", async () => {
  await serving(echoServer(LIMITS), async (url) => {
    const id = await initialize(url);
    assert.equal(await post(url, id, `[${NEW_SESSION}]`), 501);
    assert.equal(await post(url, id, " \n[]"), 501);
    assert.equal((await exchange(url, "POST", { "content-type": "text/plain" }, INITIALIZE)).status, 415);
    assert.equal((await exchange(url, "GET", { accept: "application/json", "acp-connection-id": id })).status, 406);
    assert.equal((await exchange(url, "PUT", JSON_TYPE, INITIALIZE)).status, 405);
    assert.equal((await exchange(url.replace("/acp", "/other"), "POST", JSON_TYPE, INITIALIZE)).status, 404);
    assert.equal(await post(url, id, `{"x":"${"a".repeat(70_000)}"}`), 413);
    const { port } = new URL(url);
    // Refused by its Content-Length alone, before any of the body is sent.
    const declared = await rawRequest(Number(port), `POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${10 ** 9}\r\n\r\n`);
    assert.match(declared, /^HTTP\/1\.1 413 /);
    // A chunked body is cut off as soon as it passes the limit.
    const chunk = `${(8192).toString(16)}\r\n${"a".repeat(8192)}\r\n`;
    const chunked = await rawRequest(
      Number(port),
      `POST /acp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.repeat(20)}`,
    );
    assert.match(chunked, /^HTTP\/1\.1 413 /);
  });
});

/** Writes `request` on a fresh socket; the response's first bytes. */
function rawRequest(port: number, request: string): Promise<string> {
  const socket = net.connect(port, "127.0.0.1");
  socket.on("error", () => {});
  const answered = new Promise<string>((resolve) => socket.once("data", (data: Buffer) => resolve(data.toString("latin1"))));
  socket.write(request);
  return within(answered, "the raw response").finally(() => socket.destroy());
}

test("a client that sends its headers too slowly is cut off", async () => {
  await serving(echoServer({ headersTimeout: 300 }), async (url) => {
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
    socket.on("error", () => {});
    try {
      let answer = "";
      socket.on("data", (data: Buffer) => (answer += data.toString("latin1")));
      const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
      socket.write("POST /acp HTTP/1.1\r\nHost: x\r\n"); // and never the rest
      await within(closed, "the server to end a slow request");
      assert.ok(answer === "" || answer.startsWith("HTTP/1.1 408"), answer);
    } finally {
      socket.destroy();
    }
  });
});

test("connections beyond the limit are refused: 503 for initialize and for an upgrade", async () => {
  await serving(echoServer({ maxConnections: 2 }), async (url) => {
    await initialize(url);
    await initialize(url);
    const third = await exchange(url, "POST", JSON_TYPE, INITIALIZE);
    assert.equal(third.status, 503);
    await assert.rejects(rawSocket(url), (err: { status?: number }) => err.status === 503);
  });
});

test("over WebSocket: text frames, binary ignored, bad input answered, a batch refused", async () => {
  await serving(echoServer(LIMITS), async (url) => {
    const { socket, response } = await rawSocket(url);
    try {
      assert.equal(response.statusCode, 101);
      assert.ok(response.headers["acp-connection-id"]);
      socket.sendBinary(Buffer.from(INITIALIZE)); // ignored
      socket.sendText(Buffer.from("{not json"));
      const parseError = await nextMessage(socket);
      assert.equal(parseError?.["id"], null);
      assert.equal((parseError?.["error"] as { code: number }).code, ErrorCode.PARSE_ERROR);
      socket.sendText(Buffer.from(INITIALIZE));
      const answer = await nextMessage(socket);
      assert.equal(answer?.["id"], 0);
      assert.equal((answer?.["result"] as { protocolVersion: number }).protocolVersion, 1);
      socket.sendText(Buffer.from(`[${NEW_SESSION}]`));
      const batch = await nextMessage(socket);
      assert.equal(batch?.["id"], null);
      assert.equal((batch?.["error"] as { code: number }).code, ErrorCode.INVALID_REQUEST);
      // A message in three fragments, with a ping between them: one message, and a pong.
      const text = Buffer.from(NEW_SESSION);
      const [a, b, c] = [text.subarray(0, 10), text.subarray(10, 20), text.subarray(20)];
      writeFrame(socket.socket, 0x1, a, false);
      writeFrame(socket.socket, 0x9, Buffer.from("hi"), true);
      writeFrame(socket.socket, 0x0, b, false);
      writeFrame(socket.socket, 0x0, c, true);
      const created = await nextMessage(socket);
      assert.equal(created?.["id"], 1);
      assert.ok((created?.["result"] as { sessionId: string }).sessionId);
    } finally {
      socket.close();
    }
  });
});

/** A masked client frame with its FIN bit as given (`encodeFrame` always sets it). */
function writeFrame(socket: NodeJS.WritableStream, opcode: number, payload: Buffer, fin: boolean): void {
  const [head, body] = encodeFrame(opcode, payload, true);
  if (!fin) head[0] = (head[0] as number) & 0x7f;
  socket.write(Buffer.concat([head, body]));
}

test("a WebSocket message over the limit closes the socket with 1009", async () => {
  await serving(echoServer(LIMITS), async (url) => {
    const { socket } = await rawSocket(url);
    try {
      socket.sendText(Buffer.from(`{"x":"${"a".repeat(100_000)}"}`));
      assert.equal(await nextMessage(socket), null);
      assert.equal(socket.closeCode, CloseCode.tooBig);
    } finally {
      socket.destroy();
    }
  });
});

test("a WebSocket peer that never reads is ended after the stall timeout", async () => {
  const server = echoServer({ stallTimeout: 500, maxQueuedBytes: 64 * 1024 });
  await serving(server, async (url) => {
    const { socket } = await rawSocket(url);
    try {
      socket.sendText(Buffer.from(INITIALIZE));
      socket.sendText(Buffer.from(NEW_SESSION));
      assert.equal((await nextMessage(socket))?.["id"], 0);
      const session = ((await nextMessage(socket))?.["result"] as { sessionId: string }).sessionId;
      const [served] = server.connections.values();
      assert.ok(served !== undefined);
      // A turn of 20,000 updates of 200 bytes, and this side reads none of them.
      socket.socket.pause();
      socket.sendText(Buffer.from(prompt(2, session, Array.from({ length: 20_000 }, () => "word".repeat(50)).join(" "))));
      await within(served.done, "the stall to end the connection"); // nothing else ends it
      assert.equal(server.connections.size, 0);
    } finally {
      socket.destroy();
    }
  });
});
