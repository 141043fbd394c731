// ACP over the network on the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0,
// its experimental remote transports, with `ws` 8 for WebSocket in Node): the peers
// the TypeScript SDK's remote interop tests (ts/test/acp/remote-interop.test.ts) run
// against ours.
//
//   officialTurns(url, { websocket, prompts })  the official client: initialize,
//       session/new, one prompt per text; per prompt its stop reason and the message
//       chunks the application had received when the answer came back.
//   serveOfficial()  an official AcpServer on 127.0.0.1 (Streamable HTTP and
//       WebSocket) whose echo agent streams each word of a prompt as a chunk and asks
//       permission first when the prompt mentions "tool"; { url, close() }.
import http from "node:http";
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket, WebSocketServer } from "ws";

const { methods } = acp;

export async function officialTurns(url, { websocket = false, prompts }) {
  const chunks = [];
  let permissions = 0;
  const app = acp
    .client({ name: "official-remote-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") chunks.push(update.content.text);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      permissions += 1;
      const allow = params.options.find((option) => option.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    });
  const stream = websocket
    ? createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket })
    : createHttpStream(url);
  const turns = [];
  await app.connectWith(stream, async (agent) => {
    await agent.request(methods.agent.initialize, { protocolVersion: 1 });
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
    for (const text of prompts) {
      chunks.length = 0;
      const answer = await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      turns.push([answer.stopReason, [...chunks]]);
    }
  });
  return { turns, permissions };
}

function echoAgent() {
  let sessions = 0;
  return acp
    .agent({ name: "official-remote-echo" })
    .onRequest(methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] }))
    .onRequest(methods.agent.session.new, () => ({ sessionId: `official-${++sessions}` }))
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const { sessionId } = params;
      const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join("");
      if (text.includes("tool")) {
        await client.request(methods.client.session.requestPermission, {
          sessionId,
          toolCall: { toolCallId: "official-tool" },
          options: [
            { optionId: "yes", name: "Allow", kind: "allow_once" },
            { optionId: "no", name: "Reject", kind: "reject_once" },
          ],
        });
      }
      for (const word of text.split(" ")) {
        await client.notify(methods.client.session.update, {
          sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${word} ` } },
        });
      }
      return { stopReason: "end_turn" };
    });
}

export async function serveOfficial() {
  const server = new AcpServer({ createAgent: echoAgent });
  const sockets = new WebSocketServer({ noServer: true });
  const httpServer = http.createServer(createNodeHttpHandler(server));
  httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, sockets));
  await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const { port } = httpServer.address();
  return {
    url: `http://127.0.0.1:${port}/acp`,
    async close() {
      httpServer.close();
      await server.close();
      for (const socket of sockets.clients) socket.terminate();
      httpServer.closeAllConnections();
    },
  };
}
