// Network end-to-end adapter on the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0, its experimental remote transports, with `ws` 8.23.0 for WebSocket in Node as
// interop/official/acp-ts does): the stdio end-to-end agent (e2e-agent.mjs's handlers)
// made per connection by an `AcpServer` on node:http (`createNodeHttpHandler`,
// `createNodeWebSocketUpgradeHandler`), and the stdio end-to-end client's handler on the
// SDK's Streamable HTTP client (`createHttpStream`) or, with --ws, its WebSocket client
// (`createWebSocketStream`). Command line: net-harness.mjs.
import http from "node:http";
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket, WebSocketServer } from "ws";
import { e2eLine, e2ePrompt, now, parseE2ePrompt } from "./harness.mjs";
import { announce, closeOnSignal, parseNetArgs, within } from "./net-harness.mjs";

const { methods } = acp;

function streamer() {
  return acp
    .agent({ name: "bench-ts-net-agent" })
    .onRequest(methods.agent.initialize, () => ({ protocolVersion: acp.PROTOCOL_VERSION }))
    .onRequest(methods.agent.session.new, () => ({ sessionId: "sess-001" }))
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const first = params.prompt[0];
      const asked = parseE2ePrompt(first && first.type === "text" ? first.text : "");
      if (asked === null) throw acp.RequestError.invalidParams({}, 'expected "<count> <tokens>"');
      const text = "word ".repeat(asked.tokens);
      for (let i = 0; i < asked.count; i++) {
        await client.notify(methods.client.session.update, {
          sessionId: params.sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
        });
      }
      return { stopReason: "end_turn" };
    });
}

async function agent(args) {
  const server = new AcpServer({ createAgent: streamer });
  const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const httpServer = http.createServer(createNodeHttpHandler(server));
  httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
  await new Promise((resolve) => httpServer.listen(args.port, args.host, resolve));
  closeOnSignal(async () => {
    httpServer.close();
    await server.close();
    for (const socket of sockets.clients) socket.terminate();
    httpServer.closeAllConnections();
  });
  announce(`http://${args.host}:${httpServer.address().port}/acp`);
}

async function client(args) {
  let received = 0;
  const textLength = 5 * args.tokens;
  let allHandled = () => {};
  const app = acp.client({ name: "bench-ts-net-client" }).onNotification(methods.client.session.update, ({ params }) => {
    const { update } = params;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" &&
      update.content.text.length === textLength) {
      received += 1;
      if (received === args.count) allHandled();
    }
  });
  const stream = args.websocket
    ? createWebSocketStream(args.url.replace(/^http/, "ws"), { WebSocket })
    : createHttpStream(args.url);
  let line;
  await within(400_000, app.connectWith(stream, async (peer) => {
    await within(60_000, peer.request(methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION }), "initialize");
    const session = await within(60_000, peer.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] }), "session/new");
    const handled = new Promise((resolve) => {
      allHandled = resolve;
      if (received >= args.count) resolve();
    });
    const start = now();
    const answer = await within(300_000, peer.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: e2ePrompt(args) }],
    }), "session/prompt");
    await within(30_000, handled, "the updates").catch(() => {});
    const ns = now() - start;
    if (answer.stopReason !== "end_turn") throw new Error(`stop reason ${answer.stopReason}`);
    line = e2eLine(args, received, ns);
  }), "the connection");
  process.stdout.write(line + "\n");
  process.exit(received === args.count ? 0 : 1);
}

let args;
try {
  args = parseNetArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`usage error: ${error.message}\n`);
  process.exit(2);
}
await (args.role === "agent" ? agent(args) : client(args));
