// The official TypeScript SDK, @agentclientprotocol/sdk 2.4.0, in the seed-000
// loops, doing what its receive path does with one line: `JSON.parse` (as its
// ndJsonStream does), the object check and request/notification split of its
// connection, then the params validated by method with the SDK's own zod schema
// (`parse`, as its request and notification specs do). Requests are looked up among
// the agent-side methods, session/update among the client-side ones. Answers are
// built as its responder builds them, `{jsonrpc, id, result}`, and `JSON.stringify`d
// as its stream writes them. Not included: the stream and connection machinery
// (promises, handler chain).
//
// The zod schemas are the SDK's generated `dist/v1/schema/zod.gen.js`, the module its
// stable v1 binding validates with; the package does not export it, so it is
// imported by path. The public entry point is loaded too, as an application would.
import * as acp from "@agentclientprotocol/sdk";
import * as validate from "./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";
import { main } from "./harness.mjs";

const { AGENT_METHODS, CLIENT_METHODS } = acp;
// Who receives which message: the agent handles requests, the client session/update.
const agentSide = new Map([
  [AGENT_METHODS.initialize, validate.zInitializeRequest],
  [AGENT_METHODS.session_new, validate.zNewSessionRequest],
  [AGENT_METHODS.session_prompt, validate.zPromptRequest],
]);
const clientSide = new Map([[CLIENT_METHODS.session_update, validate.zSessionNotification]]);

function decode(kind, line) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return false;
  }
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  if (typeof message.method !== "string" || message.method !== kind) return false;
  const notification = !("id" in message);
  const schema = (notification ? clientSide : agentSide).get(message.method);
  if (schema === undefined) return false;
  try {
    schema.parse(message.params);
    return true;
  } catch {
    return false;
  }
}

const respond = (id, result) => JSON.stringify({ jsonrpc: "2.0", id, ...{ result } });

main({
  decode,
  encodeSessionResult: (id, sessionId) => respond(id, { sessionId }),
  encodeInitializeResult: (id) => respond(id, { protocolVersion: acp.PROTOCOL_VERSION }),
});
