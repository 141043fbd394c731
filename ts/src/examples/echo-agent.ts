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
 * fast as the client reads). The agent exits when its stdin closes. With
 * `--listen HOST:PORT` it serves itself over the network instead, at
 * `http://HOST:PORT/acp` (Streamable HTTP and WebSocket, one agent per connection),
 * until it is stopped by a signal; the line `echo-agent: listening on URL` on stderr
 * says the socket is bound (port 0: any free port).
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
    if (text.includes("tool")) {
      await cx.peer.update(sessionId, v1.toolCall("echo-tool", "Pretend to edit a file"));
      const answer = await cx.peer.requestPermission({
        sessionId,
        toolCall: { toolCallId: "echo-tool" },
        options: [
          { optionId: "yes", name: "Allow", kind: "allow_once" },
          { optionId: "no", name: "Reject", kind: "reject_once" },
        ],
      });
      const allowed = answer.outcome.outcome === "selected" && answer.outcome.optionId === "yes";
      await cx.peer.update(sessionId, v1.toolCallUpdate("echo-tool", { status: allowed ? "completed" : "failed" }));
    }
    // Words with the spaces after them, so the chunks join back into the prompt.
    for (const word of text.split(/(?<= )/).filter((w) => w !== "")) {
      // A cancelled turn is answered `cancelled` by the connection; stop sending.
      if (cx.signal.aborted) break;
      await cx.peer.update(sessionId, v1.agentMessageChunk(word));
      if (this.delayMs > 0) await pause(this.delayMs, cx.signal);
    }
    return { stopReason: "end_turn" };
  }
}

const USAGE = `usage: echo-agent [--delay SECONDS] [--listen HOST:PORT]

An ACP agent on stdin/stdout that echoes each prompt back word by word, asks
permission for a pretend tool call when the prompt mentions "tool", and ends a
cancelled turn with \`cancelled\`. It exits when its stdin closes.

  --delay SECONDS     the pause between two words (default 0.05; 0: as fast as read)
  --listen HOST:PORT  serve at http://HOST:PORT/acp (HTTP and WebSocket) instead
  -h, --help          this text
`;

/** The command line read: the pace between two words in ms and where to listen (`null`:
 * stdin/stdout), `"help"`, or what is wrong. */
export function parseArgs(args: readonly string[]): { delay: number; listen: { host: string; port: number } | null } | "help" | { error: string } {
  let seconds = 0.05;
  let listen: { host: string; port: number } | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--help" || arg === "-h") return "help";
    if (arg === "--listen" || arg.startsWith("--listen=")) {
      const where = arg === "--listen" ? args[++i] : arg.slice("--listen=".length);
      const colon = where === undefined ? -1 : where.lastIndexOf(":");
      const port = where === undefined ? "" : where.slice(colon + 1);
      if (where === undefined || colon < 0 || !/^\d{1,5}$/.test(port) || Number(port) > 65535) return { error: `--listen wants HOST:PORT, found ${where ?? "nothing"}` };
      listen = { host: where.slice(0, colon).replace(/^\[|\]$/g, "") || "127.0.0.1", port: Number(port) };
      continue;
    }
    let value: string | undefined;
    if (arg === "--delay") {
      value = args[++i];
      if (value === undefined) return { error: "--delay needs a number of seconds" };
    } else if (arg.startsWith("--delay=")) value = arg.slice("--delay=".length);
    else return { error: `unknown argument ${arg}` };
    seconds = Number(value);
    if (value.trim() === "" || !Number.isFinite(seconds)) return { error: `--delay needs a number of seconds, found ${value}` };
  }
  return { delay: Math.max(0, seconds) * 1000, listen };
}

/** Serves the agent over the network until SIGINT or SIGTERM. */
async function serveNetwork(host: string, port: number, delay: number): Promise<void> {
  const remote = await import("../acp/remote/index.js");
  const listening = await remote.listen(remote.agentServer(() => new EchoAgent(delay)), host, port);
  process.stderr.write(`echo-agent: listening on ${listening.url}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await listening.close();
}

/** The command line: serves the agent on stdin/stdout until stdin closes; the exit
 * status (2 for a bad command line, after the usage on stderr). */
export async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if ("error" in args) {
    process.stderr.write(`echo-agent: ${args.error}\n${USAGE}`);
    return 2;
  }
  try {
    if (args.listen !== null) await serveNetwork(args.listen.host, args.listen.port, args.delay);
    else await v1.serveAgentStdio(new EchoAgent(args.delay));
    return 0;
  } catch (err) {
    process.stderr.write(`echo-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
