/** The two roles over an in-memory pipe: what the flow vectors do not show on their own. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { CapabilityNotAdvertised, InvalidParams, NotAnnounced, NotInitialized, PeerError } from "../../src/acp/errors.js";
import type { AcpEvent } from "../../src/acp/options.js";
import type { ExtMessage } from "../../src/acp/receive.js";
import * as v1 from "../../src/acp/v1.js";
import { RawJson } from "../../src/codec/values.js";
import { duplex } from "../../src/jsonrpc/memory.js";
import { RequestError } from "../../src/jsonrpc/local-error.js";
import type { ConnectionEvent } from "../../src/jsonrpc/options.js";
import { gate, Remote, within } from "../jsonrpc/harness.js";

const INIT: v1.InitializeRequest = { protocolVersion: 1 };
const NEW: v1.NewSessionRequest = { cwd: "/", mcpServers: [] };
const MODES: v1.SessionModeState = { currentModeId: "m", availableModes: [{ id: "m", name: "M" }] };
const text = (sessionId: string, words: string): v1.PromptRequest => ({ sessionId, prompt: [{ type: "text", text: words }] });

class Agent implements v1.Agent {
  private sessions = 0;
  readonly waiting = gate();
  cancelledSeen = false;

  /** `modes`: what `session/new` announces (nothing when absent). */
  constructor(private readonly modes?: v1.SessionModeState) {}

  initialize(): v1.InitializeResponse {
    return { protocolVersion: 1 };
  }
  async newSession(_cx?: v1.AgentContext): Promise<v1.NewSessionResponse> {
    const sessionId = `s${++this.sessions}`;
    return this.modes === undefined ? { sessionId } : { sessionId, modes: this.modes };
  }
  async prompt(cx: v1.AgentContext, params: v1.PromptRequest): Promise<v1.PromptResponse> {
    const first = params.prompt[0];
    const [command, argument = ""] = (first?.type === "text" ? first.text : "").split(" ");
    const sessionId = params.sessionId;
    if (command === "stream") {
      for (let i = 0; i < Number(argument); i++) {
        await cx.peer.sessionUpdate({ sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: String(i) } } });
      }
    } else if (command === "read") {
      await cx.peer.readTextFile({ sessionId, path: argument }); // its failure is let through
    } else if (command === "ask") {
      const answer = await cx.peer.requestPermission({
        sessionId,
        toolCall: { toolCallId: "t" },
        options: [{ optionId: "ok", name: "OK", kind: "allow_once" }],
      });
      return { stopReason: answer.outcome.outcome === "cancelled" ? "cancelled" : "end_turn" };
    } else if (command === "wait") {
      cx.signal.addEventListener("abort", () => (this.cancelledSeen = true));
      this.waiting.open();
      await new Promise<never>(() => {});
    }
    return { stopReason: "end_turn" };
  }
  extMethod(_cx: v1.AgentContext, request: ExtMessage): RawJson {
    return new RawJson(`{"echo":${request.payload?.text ?? "null"}}`);
  }
}

class Client implements v1.Client {
  readonly updates: string[] = [];
  readonly asked = gate();

  async requestPermission(): Promise<v1.RequestPermissionResponse> {
    this.asked.open();
    return new Promise<never>(() => {}); // left pending: cancelling the session answers it
  }
  sessionUpdate(_cx: v1.ClientContext, params: v1.SessionNotification): void {
    const update = params.update;
    if ("sessionUpdate" in update && update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") this.updates.push(update.content.text);
  }
  readTextFile(): v1.ReadTextFileResponse {
    throw new RequestError(-32002, "no such file");
  }
}

/** An agent and a client connected in memory; `close()` ends both connections. */
function pair(agentApp: v1.Agent, clientApp: v1.Client): { agent: v1.AgentConnection; close: () => Promise<void> } {
  const [a, c] = duplex();
  // The "read" turn lets a failed call through on purpose: no console report for it.
  const served = v1.connectAgent(agentApp, a.input, a.output, { strict: true, onError: null });
  const connected = v1.connectClient(clientApp, c.input, c.output, { strict: true });
  const runs = [served.connection.run(), connected.connection.run()];
  return {
    agent: connected.agent,
    close: async () => {
      await c.output.close();
      await within(Promise.all(runs), "both connections end");
    },
  };
}

test("the updates streamed during a turn are all handled when the prompt call returns", async () => {
  const client = new Client();
  const { agent, close } = pair(new Agent(), client);
  const answer = await within(agent.initialize(INIT), "initialize");
  assert.deepEqual([answer.protocolVersion, agent.protocolVersion], [1, 1]);
  const { sessionId } = await agent.newSession(NEW);
  const result = await within(agent.prompt(text(sessionId, "stream 3000")), "the turn");
  assert.equal(result.stopReason, "end_turn");
  assert.deepEqual(client.updates, Array.from({ length: 3000 }, (_, i) => String(i)));
  await close();
});

test("calls before initialize fail locally; gates and value gates are checked before sending", async () => {
  const { agent, close } = pair(new Agent(), new Client());
  await assert.rejects(agent.newSession(NEW), NotInitialized);
  await within(agent.initialize(INIT), "initialize");
  assert.equal((agent.agentCapabilities as { loadSession: boolean }).loadSession, false);
  await assert.rejects(agent.loadSession({ sessionId: "old", cwd: "/", mcpServers: [] }), (e: unknown) => e instanceof CapabilityNotAdvertised && e.capability === "agentCapabilities.loadSession");
  const image: v1.ContentBlock = { type: "image", data: "aGk=", mimeType: "image/png" };
  await assert.rejects(agent.prompt({ sessionId: "s1", prompt: [image] }), (e: unknown) => e instanceof CapabilityNotAdvertised && e.capability === "agentCapabilities.promptCapabilities.image");
  await close();
});

test("an unknown session is -32002; a known one reaches the -32601 of a missing handler", async () => {
  // The session announces modes, so `session/set_mode` passes its session gate.
  const { agent, close } = pair(new Agent(MODES), new Client());
  await within(agent.initialize(INIT), "initialize");
  await assert.rejects(within(agent.setSessionMode({ sessionId: "s", modeId: "m" }), "set_mode"), (e: unknown) => e instanceof PeerError && e.error.code === -32002);
  const { sessionId } = await agent.newSession(NEW);
  await assert.rejects(within(agent.setSessionMode({ sessionId, modeId: "m" }), "set_mode"), (e: unknown) => e instanceof PeerError && e.error.code === -32601);
  await close();
});

test("session/set_mode needs modes in the answer that opened the session, on both sides", async () => {
  const { agent, close } = pair(new Agent(), new Client());
  await within(agent.initialize(INIT), "initialize");
  const { sessionId } = await agent.newSession(NEW);
  await assert.rejects(agent.setSessionMode({ sessionId, modeId: "m" }), (e: unknown) => e instanceof NotAnnounced && e.session === sessionId && e.member === "modes");
  await close();
  // Sent anyway, it is refused -32602 naming the session.
  const [ours, theirs] = duplex();
  const { connection } = v1.connectAgent(new Agent(), ours.input, ours.output, {});
  const running = connection.run();
  const remote = new Remote(theirs);
  await remote.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } });
  await remote.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: NEW });
  await remote.send({ jsonrpc: "2.0", id: 2, method: "session/set_mode", params: { sessionId: "s1", modeId: "m" } });
  const answers = new Map<number, any>();
  while (answers.size < 3) {
    const message = await remote.next();
    answers.set(message.id, message);
  }
  assert.deepEqual(answers.get(1).result, { sessionId: "s1" });
  assert.equal(answers.get(2).error.code, -32602);
  assert.equal(answers.get(2).error.data.path, "$.params.sessionId");
  assert.equal(answers.get(2).error.data.found, "s1");
  await remote.close();
  await within(running, "run ends");
});

test("a failed call let through by a handler is -32603 naming the call and its cause", async () => {
  const { agent, close } = pair(new Agent(), new Client());
  await within(agent.initialize({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } }), "initialize");
  const { sessionId } = await agent.newSession(NEW);
  await assert.rejects(within(agent.prompt(text(sessionId, "read /x")), "the turn"), (e: unknown) => {
    assert.ok(e instanceof PeerError);
    assert.equal(e.error.code, -32603);
    assert.deepEqual(e.error.data?.parse(), { method: "fs/read_text_file", cause: { code: -32002, message: "no such file" } });
    return true;
  });
  await close();
});

test("strict mode refuses invalid params and sends nothing", async () => {
  const { agent, close } = pair(new Agent(), new Client());
  await within(agent.initialize(INIT), "initialize");
  const broken = { cwd: 42 as unknown as string, mcpServers: [] };
  await assert.rejects(agent.newSession(broken), (e: unknown) => e instanceof InvalidParams && e.error.path === "$.params.cwd");
  await close();
});

test("cancelling a session answers its pending permission request `cancelled` and ends the turn", async () => {
  const client = new Client();
  const { agent, close } = pair(new Agent(), client);
  await within(agent.initialize(INIT), "initialize");
  const { sessionId } = await agent.newSession(NEW);
  const turn = agent.prompt(text(sessionId, "ask"));
  await within(client.asked.promise, "the permission request");
  await agent.cancel({ sessionId });
  assert.equal((await within(turn, "the turn")).stopReason, "cancelled");
  await close();
});

test("session/cancel ends a turn whose handler does not handle it; its signal aborts", async () => {
  const app = new Agent();
  const { agent, close } = pair(app, new Client());
  await within(agent.initialize(INIT), "initialize");
  const { sessionId } = await agent.newSession(NEW);
  const turn = agent.prompt(text(sessionId, "wait"));
  await within(app.waiting.promise, "the handler waits");
  await agent.cancel({ sessionId });
  assert.equal((await within(turn, "the turn")).stopReason, "cancelled");
  assert.equal(app.cancelledSeen, true);
  await close();
});

test("a call with a cancel signal sends $/cancel_request and gets -32800; the session goes on", async () => {
  const app = new Agent();
  const { agent, close } = pair(app, new Client());
  await within(agent.initialize(INIT), "initialize");
  const { sessionId } = await agent.newSession(NEW);
  const controller = new AbortController();
  const turn = agent.withCancellation(controller.signal).prompt(text(sessionId, "wait"));
  await within(app.waiting.promise, "the handler waits");
  controller.abort();
  await assert.rejects(within(turn, "the cancelled turn"), (e: unknown) => e instanceof PeerError && e.error.code === -32800);
  assert.equal((await within(agent.prompt(text(sessionId, "stream 1")), "the next turn")).stopReason, "end_turn");
  await close();
});

test("extension methods pass through raw; a name without `_` is refused locally", async () => {
  const { agent, close } = pair(new Agent(), new Client());
  await within(agent.initialize(INIT), "initialize");
  assert.equal((await within(agent.extMethod("_x/echo", '{"a":[1]}'), "_x/echo")).text, '{"echo":{"a":[1]}}');
  await assert.rejects(agent.extMethod("x/echo"), InvalidParams);
  await close();
});

test("notifications before initialize are dropped and reported", async () => {
  const events: (ConnectionEvent | AcpEvent)[] = [];
  const [ours, theirs] = duplex();
  const { connection } = v1.connectAgent(new Agent(), ours.input, ours.output, { observer: (e) => events.push(e) });
  const running = connection.run();
  const remote = new Remote(theirs);
  await remote.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
  await remote.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
  assert.equal((await remote.next()).result.protocolVersion, 1);
  assert.ok(events.some((e) => e.kind === "notification-before-initialize" && e.method === "session/cancel"));
  await remote.close();
  await within(running, "run ends");
});

test("pipelined requests are answered by read order, every time", async () => {
  for (let round = 0; round < 100; round++) {
    const [ours, theirs] = duplex();
    const { connection } = v1.connectAgent(new Agent(), ours.input, ours.output, { strict: true });
    const running = connection.run();
    const remote = new Remote(theirs);
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } },
      { jsonrpc: "2.0", id: 2, method: "session/new", params: NEW },
      { jsonrpc: "2.0", id: 3, method: "session/prompt", params: text("s1", "stream 1") },
      { jsonrpc: "2.0", id: 4, method: "session/set_mode", params: { sessionId: "s1", modeId: "m" } },
    ];
    await remote.sendRaw(lines.map((l) => JSON.stringify(l)).join("\n"));
    const answers = new Map<number, any>();
    while (answers.size < 4) {
      const message = await remote.next();
      if (message.id !== undefined) answers.set(message.id, message);
    }
    assert.equal(answers.get(1).result.protocolVersion, 1);
    assert.equal(answers.get(2).result.sessionId, "s1");
    assert.equal(answers.get(3).result.stopReason, "end_turn");
    // The session `session/new` created (read before it) announced no modes.
    assert.equal(answers.get(4).error.code, -32602);
    await remote.close();
    await within(running, "run ends");
  }
});

/** Yields to the event loop a few times before creating its session; notes cancels. */
class SlowToOpen extends Agent {
  readonly cancels: string[] = [];
  override async newSession(): Promise<v1.NewSessionResponse> {
    for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    return super.newSession();
  }
  cancel(_cx: v1.AgentContext, params: v1.CancelNotification): void {
    this.cancels.push(params.sessionId);
  }
}

test("a session/cancel pipelined while its session opens waits for it, every time", async () => {
  for (let round = 0; round < 200; round++) {
    const events: (ConnectionEvent | AcpEvent)[] = [];
    const [ours, theirs] = duplex();
    const agent = new SlowToOpen();
    const { connection } = v1.connectAgent(agent, ours.input, ours.output, { observer: (e) => events.push(e) });
    const running = connection.run();
    const remote = new Remote(theirs);
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } },
      { jsonrpc: "2.0", id: 2, method: "session/new", params: NEW },
      { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s1" } },
    ];
    await remote.sendRaw(lines.map((l) => JSON.stringify(l)).join("\n"));
    const answers = new Map<number, any>();
    while (answers.size < 2) {
      const message = await remote.next();
      if (message.id !== undefined) answers.set(message.id, message);
    }
    assert.equal(answers.get(2).result.sessionId, "s1");
    await remote.close();
    await within(running, "run ends");
    // Never dropped as a cancel for a session that does not exist; it reaches the agent
    // from work the connection waits for, so it has by the time run() settled.
    assert.deepEqual(events.filter((e) => e.kind === "unknown-session"), []);
    assert.deepEqual(agent.cancels, ["s1"]);
  }
});

/** Asks the client something from `session/new` and waits for the answer. */
class AsksWhileOpening extends Agent {
  override async newSession(cx: v1.AgentContext): Promise<v1.NewSessionResponse> {
    await cx.peer.extMethod("_ask");
    return super.newSession();
  }
}

test("a cancel waiting for its session does not hold up the answers the opener waits for", async () => {
  // `session/new` waits for the client's answer to `_ask`, read after a pipelined
  // `session/cancel`; answers are delivered after the notifications read before them,
  // so a cancel blocking the serial notification worker would stall the connection.
  const events: (ConnectionEvent | AcpEvent)[] = [];
  const [ours, theirs] = duplex();
  const { connection } = v1.connectAgent(new AsksWhileOpening(), ours.input, ours.output, { observer: (e) => events.push(e) });
  const running = connection.run();
  const remote = new Remote(theirs);
  const lines = [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } },
    { jsonrpc: "2.0", id: 2, method: "session/new", params: NEW },
    { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s1" } },
  ];
  await remote.sendRaw(lines.map((l) => JSON.stringify(l)).join("\n"));
  let opened: any = null;
  while (opened === null) {
    const message = await within(remote.next(), "the next message");
    if (message.method === "_ask") await remote.send({ jsonrpc: "2.0", id: message.id, result: {} });
    else if (message.id === 2) opened = message;
  }
  assert.equal(opened.result.sessionId, "s1");
  await remote.close();
  await within(running, "run ends");
  assert.deepEqual(events.filter((e) => e.kind === "unknown-session"), []);
});

test("prompts pipelined on one session take turns in read order, every time", async () => {
  // A client should wait for a turn to end before the next prompt; one that does not still
  // gets the same answers every time: the second prompt waits for the first.
  for (let round = 0; round < 200; round++) {
    const [ours, theirs] = duplex();
    const { connection } = v1.connectAgent(new SlowToOpen(), ours.input, ours.output, {});
    const running = connection.run();
    const remote = new Remote(theirs);
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } },
      { jsonrpc: "2.0", id: 2, method: "session/new", params: NEW },
      { jsonrpc: "2.0", id: 3, method: "session/prompt", params: text("s1", "stream 1") },
      { jsonrpc: "2.0", id: 4, method: "session/prompt", params: text("s1", "stream 1") },
    ];
    await remote.sendRaw(lines.map((l) => JSON.stringify(l)).join("\n"));
    const answers = new Map<number, any>();
    while (answers.size < 4) {
      const message = await within(remote.next(), "the next message");
      if (message.id !== undefined) answers.set(message.id, message);
    }
    assert.equal(answers.get(3).result?.stopReason, "end_turn", JSON.stringify(answers.get(3)));
    assert.equal(answers.get(4).result?.stopReason, "end_turn", JSON.stringify(answers.get(4)));
    await remote.close();
    await within(running, "run ends");
  }
});
