// An A2A 1.0 echo agent on the official JavaScript SDK (@a2a-js/sdk 1.3.0) with its
// documented Express setup: JSON-RPC at `/`, HTTP+JSON at `/a2a/rest`, the card at
// `/.well-known/agent-card.json`, in-memory task store. The peer of our TypeScript
// client in ts/test/a2a/interop.test.ts.
//
// Usage: node server.mjs [--port N]   (default 0: a free port)
// Prints `listening on http://127.0.0.1:PORT` once it serves; stops on SIGTERM/SIGINT.
//
// Behaviour (the subset of the a2a-tck messageId-prefix contract the tests use): a
// message id starting with `tck-input-required` moves the task to INPUT_REQUIRED; any
// other message is echoed: SUBMITTED, WORKING, one text artifact, COMPLETED. A cancel
// publishes CANCELED.

import express from "express";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { Role, TaskState } from "@a2a-js/sdk";

const args = process.argv.slice(2);
const portAt = args.indexOf("--port");
const port = portAt >= 0 ? Number(args[portAt + 1]) : 0;

function textPart(text) {
  return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" };
}

function agentMessage(text, taskId, contextId) {
  return { messageId: crypto.randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function status(taskId, contextId, state, message) {
  return { taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined };
}

class EchoExecutor {
  async execute(cx, bus) {
    const message = cx.userMessage;
    const { taskId, contextId } = cx;
    if (cx.task === undefined) {
      bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [message], metadata: undefined }));
    }
    if (message.messageId.startsWith("tck-input-required")) {
      bus.publish(AgentEvent.statusUpdate(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage("Please provide more input", taskId, contextId))));
      bus.finished();
      return;
    }
    const said = message.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
    bus.publish(AgentEvent.statusUpdate(status(taskId, contextId, TaskState.TASK_STATE_WORKING, undefined)));
    const artifact = { artifactId: crypto.randomUUID(), name: "", description: "", parts: [textPart(said)], metadata: undefined, extensions: [] };
    bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }));
    bus.publish(AgentEvent.statusUpdate(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, agentMessage(`echo: ${said}`, taskId, contextId))));
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    bus.publish(AgentEvent.statusUpdate(status(taskId, "", TaskState.TASK_STATE_CANCELED, undefined)));
    bus.finished();
  }
}

const app = express();
const server = app.listen(port, "127.0.0.1", () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const card = {
    name: "official a2a-js echo agent",
    description: "The interop peer: an echo agent on @a2a-js/sdk",
    supportedInterfaces: [
      { url: `${base}/`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url: `${base}/a2a/rest`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
    ],
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes text back", tags: ["echo"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
  app.use("/a2a/rest", restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.use("/", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  process.stdout.write(`listening on ${base}\n`);
});

function stop() {
  server.close();
  server.closeAllConnections();
}
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
