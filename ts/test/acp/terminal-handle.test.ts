/** `TerminalHandle`, the agent side, against `Terminals` on the client over a real connection. */

import assert from "node:assert/strict";
import { after, test } from "node:test";

import { CapabilityNotAdvertised } from "../../src/acp/errors.js";
import { TerminalHandle } from "../../src/acp/terminal-handle.js";
import { Terminals } from "../../src/acp/terminals.js";
import * as v1 from "../../src/acp/v1.js";
import { RequestError } from "../../src/jsonrpc/local-error.js";
import { duplex } from "../../src/jsonrpc/memory.js";
import { gate, within } from "../jsonrpc/harness.js";

const terminals = new Terminals();
after(() => terminals.close());

type Turn = (cx: v1.AgentContext, sessionId: string) => Promise<v1.PromptResponse>;

/** An agent whose prompt turn runs `turn`, connected in memory to a client that serves
 * `terminals` (advertising `terminal` when `terminal` is true). */
async function connect(turn: Turn, terminal = true): Promise<{ agent: v1.AgentConnection; sessionId: string; close: () => Promise<void> }> {
  const client: v1.Client = {
    ...terminals.handlers(),
    requestPermission: () => ({ outcome: { outcome: "cancelled" } }),
    sessionUpdate: () => {},
  };
  const agentApp: v1.Agent = {
    initialize: () => ({ protocolVersion: 1 }),
    newSession: () => ({ sessionId: "s1" }),
    prompt: (cx, params) => turn(cx, params.sessionId),
    authenticate: () => ({}),
    cancel: () => {},
  };
  const [a, c] = duplex();
  const served = v1.connectAgent(agentApp, a.input, a.output);
  const connected = v1.connectClient(client, c.input, c.output);
  const runs = [served.connection.run(), connected.connection.run()];
  await within(connected.agent.initialize({ protocolVersion: 1, clientCapabilities: { terminal } }), "initialize");
  const { sessionId } = await connected.agent.newSession({ cwd: "/", mcpServers: [] });
  return {
    agent: connected.agent,
    sessionId,
    close: async () => {
      await c.output.close();
      await within(Promise.all(runs), "both connections end");
    },
  };
}

const prompt = (sessionId: string): v1.PromptRequest => ({ sessionId, prompt: [{ type: "text", text: "go" }] });

test("an agent runs a command through its handle: output, exit, tool-call content, one release", async () => {
  const seen: unknown[] = [];
  let id = "";
  const { agent, sessionId, close } = await connect(async (cx, session) => {
    const handle = await TerminalHandle.create(cx, { sessionId: session, command: "sh", args: ["-c", "echo hi; exit 4"] });
    id = handle.id;
    seen.push(handle.toolCallContent());
    seen.push(await handle.waitForExit());
    seen.push(await handle.output());
    await handle.release();
    await handle.release(); // sends nothing
    seen.push(handle.released);
    return { stopReason: "end_turn" };
  });
  assert.equal((await within(agent.prompt(prompt(sessionId)), "the turn")).stopReason, "end_turn");
  assert.deepEqual(seen, [
    { type: "terminal", terminalId: id },
    { exitCode: 4, signal: null },
    { output: "hi\n", truncated: false, exitStatus: { exitCode: 4, signal: null } },
    true,
  ]);
  await assert.rejects(terminals.output({ sessionId, terminalId: id }), (e: unknown) => e instanceof RequestError && e.error.code === -32002);
  await close();
});

test("kill stops the command and the handle still reads its output", async () => {
  const seen: unknown[] = [];
  const { agent, sessionId, close } = await connect(async (cx, session) => {
    await using handle = await TerminalHandle.create(cx.peer, { sessionId: session, command: "sleep", args: ["30"] });
    await handle.kill();
    seen.push((await handle.output()).exitStatus);
    return { stopReason: "end_turn" };
  });
  await within(agent.prompt(prompt(sessionId)), "the turn");
  assert.deepEqual(seen, [{ exitCode: null, signal: "SIGKILL" }]);
  await close();
});

test("release is still sent after the turn was cancelled", async () => {
  const created = gate();
  const outcome: { id?: string; output?: unknown; released?: boolean } = {};
  const { agent, sessionId, close } = await connect(async (cx, session) => {
    cx.handleCancellation();
    const handle = await TerminalHandle.create(cx, { sessionId: session, command: "sleep", args: ["30"] });
    outcome.id = handle.id;
    created.open();
    await new Promise<void>((resolve) => cx.signal.addEventListener("abort", () => resolve(), { once: true }));
    outcome.output = await handle.output().then(
      () => "answered",
      (e: unknown) => (e as Error).name,
    );
    await handle.release();
    outcome.released = true;
    return { stopReason: "cancelled" };
  });
  const turn = agent.prompt(prompt(sessionId));
  await within(created.promise, "the terminal");
  await agent.cancel({ sessionId });
  assert.equal((await within(turn, "the turn")).stopReason, "cancelled");
  assert.deepEqual(outcome, { id: outcome.id, output: "Cancelled", released: true });
  await assert.rejects(terminals.output({ sessionId, terminalId: outcome.id as string }), (e: unknown) => e instanceof RequestError && e.error.code === -32002);
  await close();
});

test("create fails locally when the client did not advertise terminals", async () => {
  let failure: unknown = null;
  const { agent, sessionId, close } = await connect(async (cx, session) => {
    failure = await TerminalHandle.create(cx, { sessionId: session, command: "true" }).then(
      () => null,
      (e: unknown) => e,
    );
    return { stopReason: "end_turn" };
  }, false);
  await within(agent.prompt(prompt(sessionId)), "the turn");
  assert.ok(failure instanceof CapabilityNotAdvertised, String(failure));
  await close();
});
