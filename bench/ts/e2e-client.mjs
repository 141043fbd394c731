// End-to-end benchmark client on the official TypeScript SDK (2.4.0): spawns the
// agent command, initializes, opens a session and times one prompt turn in which the
// agent streams --count updates of --tokens tokens. Every update is validated by the
// SDK (zod) and handed to the notification handler. The clock stops when the
// prompt's answer has arrived and every update has been handled.
//
//   node e2e-client.mjs --count N --tokens T -- <agent command...>
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { e2eLine, e2ePrompt, now, parseE2eArgs } from "./harness.mjs";

const { methods } = acp;
let args;
try {
  args = parseE2eArgs(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`usage error: ${error.message}\n`);
  process.exit(2);
}

let received = 0;
const textLength = 5 * args.tokens;
let allHandled = () => {};
const app = acp.client({ name: "bench-ts-e2e-client" }).onNotification(methods.client.session.update, ({ params }) => {
  const { update } = params;
  if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" &&
    update.content.text.length === textLength) {
    received += 1;
    if (received === args.count) allHandled();
  }
});

const child = spawn(args.agent[0], args.agent.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.once("exit", resolve));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

let line;
await app.connectWith(stream, async (agent) => {
  await agent.request(methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION });
  const session = await agent.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
  const handled = new Promise((resolve) => {
    allHandled = resolve;
    if (received >= args.count) resolve();
  });
  const start = now();
  const answer = await agent.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: e2ePrompt(args) }],
  });
  await Promise.race([handled, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
  const ns = now() - start;
  if (answer.stopReason !== "end_turn") throw new Error(`stop reason ${answer.stopReason}`);
  line = e2eLine(args, received, ns);
});
process.stdout.write(line + "\n");
child.stdin.end();
const timer = setTimeout(() => child.kill(), 5_000);
await exited;
clearTimeout(timer);
