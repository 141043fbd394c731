// End-to-end benchmark client on agentproto's TypeScript SDK (the built ts/dist,
// `agentproto/acp/v1`): `spawnAgent` starts the agent command in a process group of its
// own, then the client initializes, opens a session and times one prompt turn in which
// the agent streams --count updates of --tokens tokens. Every update is read, validated
// and decoded by the SDK's receive path and handed to `sessionUpdate`. The clock stops
// when the prompt's answer has arrived and every update has been handled (the SDK
// resolves a call only after the notifications read before its answer were handled; the
// count is checked all the same). The agent's group is ended on every way out.
//
//   node e2e-agentproto-client.mjs --count N --tokens T -- <agent command...>
import * as v1 from "../../ts/dist/src/acp/v1.js";
import { e2eLine, e2ePrompt, now, outgoingChecked, parseE2eArgs, withOutgoing } from "./harness.mjs";

let args;
try {
  args = parseE2eArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`usage error: ${error.message}\n`);
  process.exit(2);
}

class Counter {
  received = 0;
  #length = 5 * args.tokens;
  #done = () => {};
  handled = new Promise((resolve) => {
    this.#done = resolve;
  });

  sessionUpdate(_cx, params) {
    const update = params.update;
    if (
      !(update instanceof v1.UnknownVariant) &&
      update.sessionUpdate === "agent_message_chunk" &&
      update.content.type === "text" &&
      update.content.text.length === this.#length
    ) {
      this.received += 1;
      if (this.received >= args.count) this.#done();
    }
  }

  requestPermission() {
    return { outcome: { outcome: "cancelled" } };
  }
}

// Every wait is bounded: a stuck agent fails the run instead of hanging it.
function within(ms, promise, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const app = new Counter();
const checked = outgoingChecked();
const { agent, process: child } = await v1.spawnAgent(args.agent, app, { strict: checked });
let line;
try {
  await within(60_000, agent.initialize({ protocolVersion: v1.PROTOCOL_VERSION }), "initialize");
  const session = await within(60_000, agent.newSession({ cwd: "/tmp", mcpServers: [] }), "session/new");
  const prompt = { sessionId: session.sessionId, prompt: [{ type: "text", text: e2ePrompt(args) }] };
  const start = now();
  const answer = await within(300_000, agent.prompt(prompt), "session/prompt");
  if (app.received < args.count) await within(30_000, app.handled, "the updates").catch(() => {});
  const ns = now() - start;
  if (answer.stopReason !== "end_turn") throw new Error(`stop reason ${answer.stopReason}`);
  line = withOutgoing(e2eLine(args, app.received, ns), checked);
} finally {
  await child.close();
}
process.stdout.write(line + "\n");
process.exitCode = app.received === args.count ? 0 : 1;
