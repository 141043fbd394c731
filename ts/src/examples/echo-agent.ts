/**
 * An ACP agent that echoes the prompt back, word by word.
 *
 * It streams each word (with the spaces after it) as an `agent_message_chunk`, asks
 * permission for a pretend tool call when the prompt mentions "tool", and stops with
 * `cancelled` when the client sends `session/cancel`. Run it under any ACP client:
 *
 *     node ts/dist/examples/run-prompt.js --allow -- node ts/dist/examples/echo-agent.js
 *
 * `--delay SECONDS` paces the stream like a model would (default 0.05; 0 streams as
 * fast as the client reads). The agent exits when its stdin closes.
 */

import * as v1 from "../acp/v1.js";
import { VERSION } from "../version.js";

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

export class EchoAgent implements v1.Agent {
  private sessions = 0;

  constructor(private readonly delayMs: number) {}

  initialize(): v1.InitializeResponse {
    return { protocolVersion: v1.PROTOCOL_VERSION, agentInfo: { name: "echo-agent", version: VERSION } };
  }

  newSession(): v1.NewSessionResponse {
    // Every session gets its own id.
    return { sessionId: `echo-${++this.sessions}` };
  }

  async prompt(cx: v1.AgentContext, params: v1.PromptRequest): Promise<v1.PromptResponse> {
    const sessionId = params.sessionId;
    const text = params.prompt.map((block) => (block.type === "text" ? block.text : "")).join("");
    const send = (update: v1.SessionUpdate): Promise<void> => cx.peer.sessionUpdate({ sessionId, update });
    if (text.includes("tool")) {
      await send({ sessionUpdate: "tool_call", toolCallId: "echo-tool", title: "Pretend to edit a file" });
      const answer = await cx.peer.requestPermission({
        sessionId,
        toolCall: { toolCallId: "echo-tool" },
        options: [
          { optionId: "yes", name: "Allow", kind: "allow_once" },
          { optionId: "no", name: "Reject", kind: "reject_once" },
        ],
      });
      const allowed = answer.outcome.outcome === "selected" && answer.outcome.optionId === "yes";
      await send({ sessionUpdate: "tool_call_update", toolCallId: "echo-tool", status: allowed ? "completed" : "failed" });
    }
    // Words with the spaces after them, so the chunks join back into the prompt.
    for (const word of text.split(/(?<= )/).filter((w) => w !== "")) {
      // A cancelled turn is answered `cancelled` by the connection; stop sending.
      if (cx.signal.aborted) break;
      await send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: word } });
      if (this.delayMs > 0) await pause(this.delayMs, cx.signal);
    }
    return { stopReason: "end_turn" };
  }
}

/** The pace between two words in ms, from `--delay SECONDS`. */
export function parseDelay(args: readonly string[]): number {
  let seconds = 0.05;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const value = arg === "--delay" ? args[++i] : arg.startsWith("--delay=") ? arg.slice("--delay=".length) : undefined;
    if (value === undefined) {
      if (arg === "--help" || arg === "-h") {
        process.stderr.write("usage: echo-agent [--delay SECONDS]\n");
        process.exit(0);
      }
      throw new Error(`unknown argument ${arg}`);
    }
    seconds = Number(value);
    if (!Number.isFinite(seconds)) throw new Error(`--delay needs a number of seconds, found ${value}`);
  }
  return Math.max(0, seconds) * 1000;
}

/** The command line: serves the agent on stdin/stdout until stdin closes; the exit status. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    await v1.serveAgentStdio(new EchoAgent(parseDelay(argv)));
    return 0;
  } catch (err) {
    process.stderr.write(`echo-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
