// Scenario agent (interop/SCENARIO.md) on the official TypeScript SDK,
// @agentclientprotocol/sdk 2.4.0. Speaks ACP v1 on stdin/stdout; diagnostics
// go to stderr only.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const { methods } = acp;

let sessionCount = 0;
// sessionId -> AbortController of the turn in progress; session/cancel aborts it.
const turns = new Map();

function log(...args) {
  console.error("[ts-scenario-agent]", ...args);
}

function chunk(client, sessionId, text) {
  return client.notify(methods.client.session.update, {
    sessionId,
    update: {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text },
    },
  });
}

function update(client, sessionId, body) {
  return client.notify(methods.client.session.update, { sessionId, update: body });
}

// Resolves once `signal` is aborted (never rejects).
function aborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

async function runPermission(client, sessionId) {
  await update(client, sessionId, {
    sessionUpdate: "tool_call",
    toolCallId: "call-1",
    title: "Pretend edit",
    kind: "edit",
    status: "pending",
  });
  const answer = await client.request(methods.client.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId: "call-1" },
    options: [
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ],
  });
  const outcome = answer.outcome;
  const picked = outcome.outcome === "selected" ? outcome.optionId : "cancelled";
  await chunk(client, sessionId, `permission:${picked}`);
  await update(client, sessionId, {
    sessionUpdate: "tool_call_update",
    toolCallId: "call-1",
    status: picked === "allow" ? "completed" : "failed",
  });
  return picked === "cancelled" ? "cancelled" : "end_turn";
}

async function runFs(client, sessionId, path) {
  const { content } = await client.request(methods.client.fs.readTextFile, { sessionId, path });
  await client.request(methods.client.fs.writeTextFile, {
    sessionId,
    path: `${path}.out`,
    content: content.toUpperCase(),
  });
  // A JS string's length is its number of UTF-16 code units.
  await chunk(client, sessionId, `read:${content.length}`);
  return "end_turn";
}

async function prompt({ params, client }) {
  const { sessionId } = params;
  const first = params.prompt[0];
  const text = first && first.type === "text" ? first.text : "";
  const [command, ...rest] = text.split(" ");
  const turn = new AbortController();
  turns.set(sessionId, turn);
  try {
    switch (command) {
      case "echo":
        for (const word of rest) await chunk(client, sessionId, word);
        return { stopReason: "end_turn" };
      case "permission":
        return { stopReason: await runPermission(client, sessionId) };
      case "fs":
        return { stopReason: await runFs(client, sessionId, rest.join(" ")) };
      case "wait":
        await chunk(client, sessionId, "waiting");
        await aborted(turn.signal);
        return { stopReason: "cancelled" };
      case "unknown-update":
        // The SDK does not validate what it sends, so the unknown variant goes
        // out through the ordinary notify call.
        await update(client, sessionId, {
          sessionUpdate: "agentproto_future_update",
          detail: { n: 1 },
        });
        await chunk(client, sessionId, "after-unknown");
        return { stopReason: "end_turn" };
      case "error":
        throw new acp.RequestError(4242, "deliberate failure", { reason: "scenario" });
      default:
        throw acp.RequestError.invalidParams({ prompt: text }, "unknown scenario prompt");
    }
  } finally {
    if (turns.get(sessionId) === turn) turns.delete(sessionId);
  }
}

const app = acp
  .agent({ name: "ts-scenario-agent" })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: 1,
    agentCapabilities: {
      loadSession: false,
      promptCapabilities: { image: false, audio: false, embeddedContext: false },
      mcpCapabilities: { http: false, sse: false },
    },
    authMethods: [],
    agentInfo: { name: "ts-scenario-agent", version: "0.0.0" },
  }))
  .onRequest(methods.agent.session.new, () => {
    sessionCount += 1;
    return { sessionId: `sess-${sessionCount}` };
  })
  .onRequest(methods.agent.session.prompt, prompt)
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    turns.get(params.sessionId)?.abort();
  })
  // Extension request that only ends when the client cancels it: the SDK aborts
  // `signal` on `$/cancel_request`, and rejecting with the signal's reason (a
  // -32800 RequestError) makes the SDK answer -32800.
  .onRequest(
    "_agentproto/slow",
    (params) => params,
    async ({ signal }) => {
      await aborted(signal);
      throw signal.reason;
    },
  );

const connection = app.connect(
  acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
await connection.closed;
log("connection closed");
