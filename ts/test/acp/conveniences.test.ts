/** The v1 conveniences: builders, `cx.peer.update`, `connectPair`, and the client's `Sessions`. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { CapabilityNotAdvertised } from "../../src/acp/errors.js";
import * as v1 from "../../src/acp/v1.js";
import { within } from "../jsonrpc/harness.js";

const INIT: v1.InitializeRequest = { protocolVersion: 1 };

test("the builders make values the v1 codec accepts, with the tags filled in", () => {
  const cases: [string, unknown, string][] = [
    ["ContentBlock", v1.text("hi"), '{"type":"text","text":"hi"}'],
    ["ContentBlock", v1.resourceLink("file:///a/b.txt"), '{"type":"resource_link","name":"b.txt","uri":"file:///a/b.txt"}'],
    ["SessionUpdate", v1.agentMessageChunk("hi"), '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}'],
    ["SessionUpdate", v1.userMessageChunk(v1.text("q")), '{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"q"}}'],
    ["SessionUpdate", v1.agentThoughtChunk("hmm"), '{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}'],
    [
      "SessionUpdate",
      v1.toolCall("t1", "Read a file", { kind: "read", status: "pending", rawInput: { path: "/a" } }),
      '{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read a file","kind":"read","status":"pending","rawInput":{"path":"/a"}}',
    ],
    [
      "SessionUpdate",
      v1.toolCallUpdate("t1", { status: "completed", content: [v1.toolContent("done")] }),
      '{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"done"}}]}',
    ],
    [
      "SessionUpdate",
      v1.plan(["look", { content: "fix", priority: "high", status: "in_progress" }]),
      '{"sessionUpdate":"plan","entries":[{"content":"look","priority":"medium","status":"pending"},{"content":"fix","priority":"high","status":"in_progress"}]}',
    ],
  ];
  for (const [type, value, json] of cases) {
    const text = v1.SURFACE.encodeNamed(type, value);
    assert.equal(text, json);
    assert.deepEqual(v1.SURFACE.decodeNamed(type, new v1.RawJson(text), "$").warnings, []);
  }
  assert.deepEqual(v1.promptBlocks("x"), [v1.text("x")]);
  assert.deepEqual(v1.promptBlocks([v1.text("a"), v1.text("b")]), [v1.text("a"), v1.text("b")]);
});

/** Streams its reply word by word with `cx.peer.update`, after a thought and a tool call; asks for permission on "ask". */
class Streamer implements v1.Agent {
  initialize(): v1.InitializeResponse {
    return { protocolVersion: 1 };
  }
  async newSession(cx: v1.AgentContext): Promise<v1.NewSessionResponse> {
    // Sent before the answer: the client's `Sessions` must still give it to the session.
    await cx.peer.update("s1", v1.agentThoughtChunk("ready"));
    return { sessionId: "s1" };
  }
  async prompt(cx: v1.AgentContext, params: v1.PromptRequest): Promise<v1.PromptResponse> {
    const first = params.prompt[0];
    const words = first !== undefined && first.type === "text" ? first.text : "";
    if (words === "ask") {
      const answer = await cx.peer.requestPermission({
        sessionId: params.sessionId,
        toolCall: { toolCallId: "t" },
        options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }],
      });
      const chosen = answer.outcome.outcome === "selected" ? answer.outcome.optionId : "none";
      await cx.peer.update(params.sessionId, v1.agentMessageChunk(`chosen ${chosen}`));
      return { stopReason: "end_turn" };
    }
    await cx.peer.update(params.sessionId, v1.toolCall("t1", "think"));
    for (const word of words.split(" ")) await cx.peer.update(params.sessionId, v1.agentMessageChunk(word + "."));
    return { stopReason: "end_turn" };
  }
}

function permissions(): v1.SessionHandlers & { asked: number } {
  return {
    asked: 0,
    requestPermission(_cx, params) {
      this.asked++;
      const option = params.options[0];
      return { outcome: option === undefined ? { outcome: "cancelled" } : { outcome: "selected", optionId: option.optionId } };
    },
  };
}

test("a session's prompt, its updates in order, readText, and permission requests answered by the handlers", async () => {
  const handlers = permissions();
  const sessions = new v1.Sessions(handlers);
  const pair = v1.connectPair(new Streamer(), sessions.client);
  await within(pair.agent.initialize(INIT), "initialize");
  const session = await within(sessions.open(pair.agent, { cwd: "/" }), "open");
  assert.equal(session.sessionId, "s1");
  assert.equal(sessions.get("s1"), session);

  const reply = session.prompt("a b");
  const seen: string[] = [];
  for await (const update of session.updates()) seen.push("sessionUpdate" in update ? (update.sessionUpdate ?? "?") : "?");
  assert.deepEqual(seen, ["agent_thought_chunk", "tool_call", "agent_message_chunk", "agent_message_chunk"]);
  assert.equal((await reply).stopReason, "end_turn");

  const [text, answer] = await within(Promise.all([session.readText(), session.prompt("x y z")]), "second turn");
  assert.equal(text, "x.y.z.");
  assert.equal(answer.stopReason, "end_turn");

  const [chosen] = await within(Promise.all([session.readText(), session.prompt("ask")]), "permission turn");
  assert.equal(chosen, "chosen yes");
  assert.equal(handlers.asked, 1);

  session.close();
  assert.equal(sessions.get("s1"), undefined);
  const ended: unknown[] = [];
  for await (const update of session.updates()) ended.push(update);
  assert.deepEqual(ended, []);
  await within(pair.close(), "close");
});

test("a failed turn still ends the turn's updates; close() ends both connections", async () => {
  const sessions = new v1.Sessions(permissions());
  const pair = v1.connectPair(new Streamer(), sessions.client);
  await within(pair.agent.initialize(INIT), "initialize");
  const session = await sessions.open(pair.agent, { cwd: "/" });
  const failing = session.prompt([{ type: "image", data: "aGk=", mimeType: "image/png" }]);
  await assert.rejects(failing, CapabilityNotAdvertised);
  assert.equal(await within(session.readText(), "readText after a failed turn"), "");
  await within(pair.close(), "close");
  await within(pair.done, "done");
  assert.equal(pair.agent.isClosed, true);
});
