/**
 * The scenario agent of `interop/SCENARIO.md`, on agentproto's TypeScript SDK (`ts/`),
 * through the package's public entry points only.
 *
 *     node agent.js        (compiled: see `interop/README.md`)
 *
 * Speaks ACP v1 on stdin/stdout until stdin closes; what the connection reports (events
 * it did not pass to a handler) goes to stderr.
 */

import { inspect } from "node:util";

import { Cancelled, type AcpEvent, type ExtMessage } from "agentproto/acp";
import * as v1 from "agentproto/acp/v1";
import { RequestError, requestCancelled, type ConnectionEvent } from "agentproto/jsonrpc";

const NAME = "agentproto-ts-scenario-agent";

/** The `unknown-update` step's update: a variant no schema lists, kept as raw JSON. */
const FUTURE_UPDATE = new v1.UnknownVariant(
  "agentproto_future_update",
  new v1.RawJson('{"sessionUpdate":"agentproto_future_update","detail":{"n":1}}'),
);

/** The text of the prompt's first block, or "" when it is not a text block. */
function textOf(prompt: readonly v1.ContentBlock[]): string {
  const first = prompt[0];
  return first !== undefined && first.type === "text" ? first.text : "";
}

/** Resolves when `signal` aborts (at once if it has). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

class ScenarioAgent implements v1.Agent {
  private sessions = 0;

  initialize(): v1.InitializeResponse {
    return {
      protocolVersion: v1.PROTOCOL_VERSION,
      agentCapabilities: {},
      authMethods: [],
      agentInfo: { name: NAME, version: "0.0.0" },
    };
  }

  newSession(): v1.NewSessionResponse {
    return { sessionId: `sess-${++this.sessions}` };
  }

  async prompt(cx: v1.AgentContext, params: v1.PromptRequest): Promise<v1.PromptResponse> {
    // This agent reports what happened after a cancel, so it finishes its turns itself
    // (the connection still forces the stop reason of a cancelled turn to `cancelled`).
    cx.handleCancellation();
    const sessionId = params.sessionId;
    const text = textOf(params.prompt);
    const space = text.indexOf(" ");
    const command = space < 0 ? text : text.slice(0, space);
    const argument = space < 0 ? "" : text.slice(space + 1);
    const update = (update: v1.SessionUpdate): Promise<void> => cx.peer.sessionUpdate({ sessionId, update });
    const say = (text: string): Promise<void> => update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

    switch (command) {
      case "echo":
        for (const word of argument.split(/\s+/).filter((w) => w !== "")) await say(word);
        return { stopReason: "end_turn" };
      case "permission": {
        await update({ sessionUpdate: "tool_call", toolCallId: "call-1", title: "Pretend edit", kind: "edit", status: "pending" });
        const outcome = await askPermission(cx, sessionId);
        await say(`permission:${outcome}`);
        await update({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: outcome === "allow" ? "completed" : "failed" });
        return { stopReason: outcome === "cancelled" ? "cancelled" : "end_turn" };
      }
      case "fs": {
        const { content } = await cx.peer.readTextFile({ sessionId, path: argument });
        await cx.peer.writeTextFile({ sessionId, path: `${argument}.out`, content: content.toUpperCase() });
        // A JavaScript string's length counts UTF-16 code units.
        await say(`read:${content.length}`);
        return { stopReason: "end_turn" };
      }
      case "wait":
        await say("waiting");
        await aborted(cx.signal); // the turn's signal: `session/cancel` aborts it
        return { stopReason: "cancelled" };
      case "unknown-update":
        await update(FUTURE_UPDATE);
        await say("after-unknown");
        return { stopReason: "end_turn" };
      case "error":
        throw new RequestError(4242, "deliberate failure", new v1.RawJson('{"reason":"scenario"}'));
      default:
        return { stopReason: "end_turn" };
    }
  }

  async extMethod(cx: v1.AgentContext, request: ExtMessage): Promise<v1.RawJson> {
    if (request.method !== "_agentproto/slow") throw RequestError.methodNotFound(request.method);
    // Never answers on its own. `$/cancel_request` aborts the signal; the answer is then
    // -32800 (the connection would send that for a dropped handler too).
    await aborted(cx.signal);
    throw RequestError.from(requestCancelled());
  }
}

/** The chosen option id, or "cancelled" (answered so, or the turn was cancelled while
 * the request was pending: the call then ends with `Cancelled`). */
async function askPermission(cx: v1.AgentContext, sessionId: string): Promise<string> {
  try {
    const answer = await cx.peer.requestPermission({
      sessionId,
      toolCall: { toolCallId: "call-1" },
      options: [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ],
    });
    return answer.outcome.outcome === "selected" ? answer.outcome.optionId : "cancelled";
  } catch (err) {
    if (err instanceof Cancelled) return "cancelled";
    throw err;
  }
}

function log(event: ConnectionEvent | AcpEvent): void {
  process.stderr.write(`[${NAME}] ${inspect(event, { depth: 4, breakLength: Infinity })}\n`);
}

// Outgoing validation is switched off (it is on by default): the `unknown-update` step
// sends a variant no schema knows, on purpose.
try {
  await v1.serveAgentStdio(new ScenarioAgent(), { observer: log, strict: false });
} catch (err) {
  process.stderr.write(`[${NAME}] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
