// End-to-end benchmark agent on the official TypeScript SDK (2.4.0), on stdio. A
// prompt whose text is "<count> <tokens>" is answered by `count`
// agent_message_chunk updates of "word " x tokens, then end_turn.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { parseE2ePrompt } from "./harness.mjs";

const { methods } = acp;

const app = acp
  .agent({ name: "bench-ts-e2e-agent" })
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

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
