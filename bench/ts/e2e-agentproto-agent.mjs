// End-to-end benchmark agent on agentproto's TypeScript SDK (the built ts/dist,
// `agentproto/acp/v1`), on stdio (`serveAgentStdio`). A prompt whose text is
// "<count> <tokens>" is answered by `count` agent_message_chunk updates of
// "word " x tokens, each sent with the typed `sessionUpdate` call of the connection
// (awaited, as an agent streaming its output does), then end_turn.
import * as v1 from "../../ts/dist/src/acp/v1.js";
import { invalidParamsError, RequestError } from "../../ts/dist/src/jsonrpc/index.js";
import { outgoingChecked, parseE2ePrompt } from "./harness.mjs";

class Streamer {
  initialize() {
    return { protocolVersion: v1.PROTOCOL_VERSION };
  }

  newSession() {
    return { sessionId: "sess-001" };
  }

  async prompt(cx, params) {
    const first = params.prompt[0];
    const asked = parseE2ePrompt(first !== undefined && first.type === "text" ? first.text : "");
    if (asked === null) throw RequestError.from(invalidParamsError("$.prompt[0].text", '"<count> <tokens>"', "other text"));
    const text = "word ".repeat(asked.tokens);
    for (let i = 0; i < asked.count; i++) {
      await cx.peer.sessionUpdate({
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
      });
    }
    return { stopReason: "end_turn" };
  }
}

await v1.serveAgentStdio(new Streamer(), { strict: outgoingChecked() });
