// The official A2A JavaScript SDK's server (@a2a-js/sdk 1.3.0, bench/ts/package-lock.json)
// for the A2A benchmark (bench/a2a/), on its documented Express setup: `jsonRpcHandler`
// at `/` over a `DefaultRequestHandler` with the SDK's `InMemoryTaskStore`, Express 5.
//
// One change to that setup: the JSON body limit. The handler parses with express.json()'s
// default limit (100 kB), which refuses the benchmark's maximum-size message (4 MiB less
// 4 KiB of text) with 413; the body is parsed first here with a 5 MiB limit (the handler's
// parser then finds it parsed and leaves it). Every other row accepts that message.
//
// The executors are the seed's, as in interop/official/a2a-js/server.mjs's set-up (the SDK
// wants the task published first, as SUBMITTED):
// - a message whose id starts with `noop`: Working -> Completed;
// - any other: Working -> artifact "echo" with the text "Echo: benchmark" -> Completed.
//
// Prints `LISTENING <port>` once it accepts connections on 127.0.0.1.

import express from "express";
import { Role, TaskState } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";

const args = process.argv.slice(2);
const at = args.indexOf("--port");
const port = at >= 0 ? Number(args[at + 1]) : 0;

const status = (taskId, contextId, state) => ({ taskId, contextId, status: { state, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined });

const executor = {
  async execute(cx, bus) {
    const { taskId, contextId } = cx;
    const message = cx.userMessage;
    if (cx.task === undefined) {
      bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined }, artifacts: [], history: [message], metadata: undefined }));
    }
    bus.publish(AgentEvent.statusUpdate(status(taskId, contextId, TaskState.TASK_STATE_WORKING)));
    if (!message.messageId.startsWith("noop")) {
      const artifact = { artifactId: "echo", name: "", description: "", parts: [{ content: { $case: "text", value: "Echo: benchmark" }, metadata: undefined, filename: "", mediaType: "" }], metadata: undefined, extensions: [] };
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }));
    }
    bus.publish(AgentEvent.statusUpdate(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED)));
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish(AgentEvent.statusUpdate(status(taskId, "", TaskState.TASK_STATE_CANCELED)));
    bus.finished();
  },
};

const app = express();
const server = app.listen(port, "127.0.0.1", () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const card = {
    name: "Bench Agent",
    description: "Benchmark agent",
    supportedInterfaces: [{ url: `${base}/`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes input", tags: ["echo", "benchmark"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(express.json({ limit: "5mb" }));
  app.use("/", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
