// Network end-to-end adapter on agentproto's TypeScript SDK (the built ts/dist,
// `agentproto/acp/remote`): the stdio end-to-end agent (e2e-agentproto-agent.mjs's
// streamer) served at /acp (`agentServer` + `listen`, node:http), and the stdio
// end-to-end client's application connected with `connect` over Streamable HTTP or,
// with --ws, WebSocket (the SDK's own RFC 6455 code). Command line: net-harness.mjs.
import { agentServer, connect, listen } from "../../ts/dist/src/acp/remote/index.js";
import * as v1 from "../../ts/dist/src/acp/v1.js";
import { invalidParamsError, RequestError } from "../../ts/dist/src/jsonrpc/index.js";
import { e2eLine, e2ePrompt, now, outgoingChecked, parseE2ePrompt, withOutgoing } from "./harness.mjs";
import { announce, closeOnSignal, parseNetArgs, within } from "./net-harness.mjs";

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

class Counter {
  received = 0;
  #count;
  #length;
  #done = () => {};
  handled = new Promise((resolve) => {
    this.#done = resolve;
  });

  constructor(count, tokens) {
    this.#count = count;
    this.#length = 5 * tokens;
  }

  sessionUpdate(_cx, params) {
    const update = params.update;
    if (
      !(update instanceof v1.UnknownVariant) &&
      update.sessionUpdate === "agent_message_chunk" &&
      update.content.type === "text" &&
      update.content.text.length === this.#length
    ) {
      this.received += 1;
      if (this.received >= this.#count) this.#done();
    }
  }

  requestPermission() {
    return { outcome: { outcome: "cancelled" } };
  }
}

async function agent(args) {
  const server = agentServer(() => new Streamer(), { acp: { strict: outgoingChecked() } });
  const listening = await listen(server, args.host, args.port);
  closeOnSignal(() => listening.close());
  announce(listening.url);
}

async function client(args) {
  const app = new Counter(args.count, args.tokens);
  const checked = outgoingChecked();
  const remote = await within(60_000, connect(args.url, app, { websocket: args.websocket, acp: { strict: checked } }), "connect");
  let line;
  try {
    const peer = remote.agent;
    await within(60_000, peer.initialize({ protocolVersion: v1.PROTOCOL_VERSION }), "initialize");
    const session = await within(60_000, peer.newSession({ cwd: "/tmp", mcpServers: [] }), "session/new");
    const prompt = { sessionId: session.sessionId, prompt: [{ type: "text", text: e2ePrompt(args) }] };
    const start = now();
    const answer = await within(300_000, peer.prompt(prompt), "session/prompt");
    if (app.received < args.count) await within(30_000, app.handled, "the updates").catch(() => {});
    const ns = now() - start;
    if (answer.stopReason !== "end_turn") throw new Error(`stop reason ${answer.stopReason}`);
    line = withOutgoing(e2eLine(args, app.received, ns), checked);
  } finally {
    await remote.close();
  }
  process.stdout.write(line + "\n");
  process.exitCode = app.received === args.count ? 0 : 1;
}

let args;
try {
  args = parseNetArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`usage error: ${error.message}\n`);
  process.exit(2);
}
await (args.role === "agent" ? agent(args) : client(args));
