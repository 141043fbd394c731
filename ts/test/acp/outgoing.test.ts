/** Nothing invalid goes out: outgoing params and handler results are checked by default,
 * the encoders refuse what they cannot write, and handler failures are reported. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { InvalidHandlerResult, InvalidParams, PeerError } from "../../src/acp/errors.js";
import type { HandlerFailure } from "../../src/acp/options.js";
import type { ExtMessage } from "../../src/acp/receive.js";
import type { DecodeError } from "../../src/codec/errors.js";
import * as v1 from "../../src/acp/v1.js";
import { within } from "../jsonrpc/harness.js";

const INIT: v1.InitializeRequest = { protocolVersion: 1 };
const NEW: v1.NewSessionRequest = { cwd: "/", mcpServers: [] };

/** An agent whose handlers return what the test put in `answers` (cast past the types, as plain JavaScript would). */
class Loose implements v1.Agent {
  newSessionAnswer: unknown = { sessionId: "s1" };
  promptAnswer: unknown = { stopReason: "end_turn" };
  update: unknown = null;
  sent: unknown = null;

  initialize(): v1.InitializeResponse {
    return { protocolVersion: 1 };
  }
  newSession(_cx?: v1.AgentContext): v1.NewSessionResponse | Promise<v1.NewSessionResponse> {
    return this.newSessionAnswer as v1.NewSessionResponse;
  }
  async prompt(cx: v1.AgentContext, params: v1.PromptRequest): Promise<v1.PromptResponse> {
    if (this.update !== null) {
      try {
        await cx.peer.sessionUpdate({ sessionId: params.sessionId, update: this.update as v1.SessionUpdate });
        this.sent = "sent";
      } catch (err) {
        this.sent = err;
      }
    }
    return this.promptAnswer as v1.PromptResponse;
  }
}

class Recorder implements v1.Client {
  readonly updates: v1.SessionNotification[] = [];
  requestPermission(): v1.RequestPermissionResponse {
    return { outcome: { outcome: "cancelled" } };
  }
  sessionUpdate(_cx: v1.ClientContext, params: v1.SessionNotification): void {
    this.updates.push(params);
  }
}

async function ready(agent: Loose, options: v1.PairOptions = {}) {
  const client = new Recorder();
  const pair = v1.connectPair(agent, client, options);
  await within(pair.agent.initialize(INIT), "initialize");
  return { pair, client };
}

function failures(): { list: HandlerFailure[]; onError: (f: HandlerFailure) => void } {
  const list: HandlerFailure[] = [];
  return { list, onError: (f) => list.push(f) };
}

test("a handler result missing a required member is refused: reported with its path, -32603 without details", async () => {
  const agent = new Loose();
  agent.newSessionAnswer = { id: "x" };
  const seen = failures();
  const { pair } = await ready(agent, { agent: { onError: seen.onError } });
  const err = await pair.agent.newSession(NEW).then(
    () => assert.fail("the call succeeded"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof PeerError);
  assert.equal(err.error.code, -32603);
  assert.equal(err.error.message, "internal error: request handler failed");
  assert.equal(err.error.data, undefined);
  assert.equal(seen.list.length, 1);
  const failure = seen.list[0] as HandlerFailure;
  assert.equal(failure.method, "session/new");
  assert.equal(failure.id, 1);
  assert.ok(failure.error instanceof InvalidHandlerResult);
  assert.equal(failure.error.error.path, "$.result");
  assert.match(failure.error.message, /sessionId/);
  await pair.close();
});

test("an unknown enum value in a result is refused (`stopReason: \"finished\"`)", async () => {
  const agent = new Loose();
  agent.promptAnswer = { stopReason: "finished" };
  const seen = failures();
  const { pair } = await ready(agent, { agent: { onError: seen.onError } });
  const { sessionId } = await pair.agent.newSession(NEW);
  await assert.rejects(pair.agent.prompt({ sessionId, prompt: [v1.text("hi")] }), (e: unknown) => e instanceof PeerError && e.error.code === -32603);
  const failure = seen.list[0] as HandlerFailure;
  assert.ok(failure.error instanceof InvalidHandlerResult);
  assert.equal(failure.error.error.path, "$.result.stopReason");
  await pair.close();
});

for (const [what, content, path] of [
  ["without `text`", { type: "text" }, "$.params.update.content"],
  ["with `text: 42`", { type: "text", text: 42 }, "$.params.update.content.text"],
] as const) {
  test(`an update whose chunk is ${what} fails locally with its path; nothing is sent`, async () => {
    const agent = new Loose();
    agent.update = { sessionUpdate: "agent_message_chunk", content };
    const { pair, client } = await ready(agent);
    const { sessionId } = await pair.agent.newSession(NEW);
    const answer = await within(pair.agent.prompt({ sessionId, prompt: [v1.text("hi")] }), "the turn");
    assert.equal(answer.stopReason, "end_turn");
    assert.ok(agent.sent instanceof InvalidParams, String(agent.sent));
    assert.equal(agent.sent.error.path, path);
    assert.deepEqual(client.updates, []);
    await pair.close();
  });
}

test("an outgoing request with invalid params fails with InvalidParams and sends nothing", async () => {
  const agent = new Loose();
  const seen: string[] = [];
  const { pair } = await ready(agent, { agent: { observer: (e) => seen.push(e.kind) } });
  const bad = { sessionId: 7, prompt: [] } as unknown as v1.PromptRequest;
  await assert.rejects(pair.agent.prompt(bad), (e: unknown) => e instanceof InvalidParams && e.error.path === "$.params.sessionId");
  await pair.close();
  assert.deepEqual(seen.filter((k) => k !== "input-closed"), []);
});

test("strict: false skips the second decode, but the encoders still refuse undefined and wrong types", async () => {
  const agent = new Loose();
  agent.update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: 42 } };
  agent.promptAnswer = { stopReason: "finished" };
  const seen = failures();
  const { pair } = await ready(agent, { agent: { strict: false, onError: seen.onError }, client: { strict: false } });
  const { sessionId } = await pair.agent.newSession(NEW);
  // An unknown enum value goes out unchecked; the client's validation of the answer refuses it.
  await assert.rejects(pair.agent.prompt({ sessionId, prompt: [v1.text("hi")] }), (e: unknown) => e instanceof Error && /stopReason/.test(e.message));
  assert.ok(agent.sent instanceof InvalidParams);
  assert.equal(agent.sent.error.path, "$.params.update.content.text");
  assert.deepEqual(seen.list, []);
  await pair.close();
});

test("a handler's exception goes to console.error by default, naming the method and the request id", async () => {
  const agent = new Loose();
  agent.newSessionAnswer = undefined;
  const original = console.error;
  const lines: unknown[][] = [];
  console.error = (...args: unknown[]) => lines.push(args);
  try {
    const { pair } = await ready(agent);
    await assert.rejects(pair.agent.newSession(NEW), PeerError);
    await pair.close();
  } finally {
    console.error = original;
  }
  assert.equal(lines.length, 1);
  const [first, error] = lines[0] as [string, unknown];
  assert.match(first, /`session\/new`/);
  assert.match(first, /id 1/);
  assert.ok(error instanceof InvalidHandlerResult);
  assert.equal(error.message, "the `session/new` handler returned an invalid result: expected an object (NewSessionResponse), found undefined at $.result");
  assert.equal(error.error.path, "$.result");
  assert.equal(error.error.kind, "not-encodable");
});

test("a thrown error reaches a custom onError; `onError: null` silences it", async () => {
  class Thrower extends Loose {
    override newSession(): v1.NewSessionResponse {
      throw new Error("boom");
    }
  }
  const seen = failures();
  const { pair } = await ready(new Thrower(), { agent: { onError: seen.onError } });
  await assert.rejects(pair.agent.newSession(NEW), (e: unknown) => e instanceof PeerError && e.error.message === "internal error: request handler failed");
  assert.equal(seen.list.length, 1);
  assert.equal((seen.list[0]?.error as Error).message, "boom");
  await pair.close();

  const original = console.error;
  let calls = 0;
  console.error = () => calls++;
  try {
    const quiet = await ready(new Thrower(), { agent: { onError: null } });
    await assert.rejects(quiet.pair.agent.newSession(NEW), PeerError);
    await quiet.pair.close();
  } finally {
    console.error = original;
  }
  assert.equal(calls, 0);
});

test("an outgoing failure a handler lets through is reported too, and the client's failing update handler", async () => {
  class LetThrough extends Loose {
    override async prompt(cx: v1.AgentContext, params: v1.PromptRequest): Promise<v1.PromptResponse> {
      await cx.peer.update(params.sessionId, { sessionUpdate: "agent_message_chunk" } as unknown as v1.SessionUpdate);
      return { stopReason: "end_turn" };
    }
    override async newSession(cx: v1.AgentContext): Promise<v1.NewSessionResponse> {
      await cx.peer.update("s1", v1.agentMessageChunk("hello"));
      return { sessionId: "s1" };
    }
  }
  class Failing extends Recorder {
    override sessionUpdate(): void {
      throw new Error("the client's update handler failed");
    }
  }
  const agentSide = failures();
  const clientSide = failures();
  const pair = v1.connectPair(new LetThrough(), new Failing(), { agent: { onError: agentSide.onError }, client: { onError: clientSide.onError } });
  await within(pair.agent.initialize(INIT), "initialize");
  const { sessionId } = await within(pair.agent.newSession(NEW), "new session");
  const err = await pair.agent.prompt({ sessionId, prompt: [v1.text("hi")] }).then(
    () => assert.fail("the prompt succeeded"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof PeerError && err.error.code === -32603);
  assert.deepEqual(
    agentSide.list.map((f) => [f.method, f.id, f.error instanceof InvalidParams]),
    [["session/prompt", 2, true]],
  );
  assert.deepEqual(
    clientSide.list.map((f) => [f.method, f.id, (f.error as Error).message]),
    [["session/update", null, "the client's update handler failed"]],
  );
  await pair.close();
});

test("extension messages carry JSON: text that is not JSON, or params that are not structured, never go out", async () => {
  class Ext extends Loose {
    extMethod(_cx: v1.AgentContext, request: ExtMessage): string {
      return request.method === "_broken" ? "hello" : '{"ok":true}';
    }
  }
  const seen = failures();
  const { pair } = await ready(new Ext(), { agent: { onError: seen.onError } });
  assert.equal((await pair.agent.extMethod("_fine", "{}")).text, '{"ok":true}');
  await assert.rejects(pair.agent.extMethod("_broken", "{}"), (e: unknown) => e instanceof PeerError && e.error.code === -32603);
  assert.ok(seen.list[0]?.error instanceof InvalidHandlerResult);
  assert.equal(seen.list[0].error.error.path, "$.result");
  assert.equal(seen.list[0].error.error.kind, "not-json");
  const parts = (e: DecodeError): string[] => [e.path, e.kind, e.expected, e.found];
  await assert.rejects(pair.agent.extMethod("_fine", "{not json"), (e: unknown) => {
    assert.ok(e instanceof InvalidParams);
    assert.deepEqual(parts(e.error), ["$.params", "not-json", "JSON text", "text that is not JSON (line 1, column 2)"]);
    return true;
  });
  await assert.rejects(pair.agent.extMethod("_fine", new v1.RawJson("42")), (e: unknown) => {
    assert.ok(e instanceof InvalidParams);
    assert.deepEqual(parts(e.error), ["$.params", "not-encodable", "an object or an array", "a number"]);
    return true;
  });
  await assert.rejects(pair.agent.extNotification("_note", "[1,"), (e: unknown) => {
    assert.ok(e instanceof InvalidParams);
    assert.deepEqual(parts(e.error), ["$.params", "not-json", "JSON text", "text that is not JSON (line 1, column 4)"]);
    return true;
  });
  await assert.rejects(pair.agent.extMethod("nounderscore", "{}"), (e: unknown) => {
    assert.ok(e instanceof InvalidParams);
    assert.deepEqual(parts(e.error), ["$.method", "not-encodable", "a method name starting with `_`", '"nounderscore"']);
    assert.equal(e.error.message, 'expected a method name starting with `_`, found "nounderscore" at $.method');
    return true;
  });
  await pair.close();
});
