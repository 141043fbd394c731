import assert from "node:assert/strict";
import { test } from "node:test";

import { classify, type Incoming } from "../../src/acp/receive.js";
import * as v1 from "../../src/acp/v1.js";
import * as v2 from "../../src/acp/v2.js";
import { RawJson, UnknownVariant } from "../../src/codec/values.js";

const none = (): undefined => undefined;

function request(incoming: Incoming): { params: unknown; typeName: string | null } {
  assert.equal(incoming.kind, "request", JSON.stringify(incoming, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)));
  return incoming as { params: unknown; typeName: string | null };
}

test("a request decodes into the params type its method names", () => {
  const line = '{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}';
  const { params, typeName } = request(classify(line, v1.AGENT, none));
  assert.equal(typeName, "PromptRequest");
  const prompt = params as v1.PromptRequest;
  const first = prompt.prompt[0];
  assert.ok(first !== undefined && !(first instanceof UnknownVariant) && first.type === "text");
  assert.equal(first.text, "hi");
});

test("invalid params are answered -32602 with {path, kind, expected, found}, in that order", () => {
  const line = '{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":5}]}}';
  const incoming = classify(line, v1.AGENT, none);
  assert.equal(incoming.kind, "reply");
  const error = incoming.kind === "reply" ? incoming.reply.error : null;
  assert.equal(error?.code, -32602);
  assert.deepEqual(error?.data?.parse(), { path: "$.params.prompt[0].text", kind: "wrong-type", expected: "a string", found: "the integer 5" });
  assert.equal(error?.data?.text, '{"path":"$.params.prompt[0].text","kind":"wrong-type","expected":"a string","found":"the integer 5"}');
  assert.equal(error?.message, "invalid params: expected a string, found the integer 5 at $.params.prompt[0].text");
});

test("an unknown variant of a closed union is kept with a warning and re-encodes as received", () => {
  const line = '{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"video","url":"u"}]}}';
  const incoming = classify(line, v1.AGENT, none);
  assert.ok(incoming.kind === "request");
  assert.deepEqual(incoming.warnings.map((w) => [w.path, w.kind]), [["$.params.prompt[0]", "unknown-variant"]]);
  const warning = incoming.warnings[0];
  assert.equal(warning?.message, 'unknown ContentBlock variant "video" kept as raw JSON');
  const { path, kind, expected, found } = warning?.error ?? {};
  assert.deepEqual({ path, kind, expected, found }, { path: "$.params.prompt[0]", kind: "unknown-variant", expected: "a known variant of ContentBlock", found: 'the string "video"' });
  const block = (incoming.params as v1.PromptRequest).prompt[0];
  assert.ok(block instanceof UnknownVariant);
  assert.equal(v1.SURFACE.encode("PromptRequest", incoming.params as v1.PromptRequest), '{"sessionId":"s","prompt":[{"type":"video","url":"u"}]}');
});

test("a value built by hand encodes canonically: schema order, defaults, no tag on the default variant", () => {
  assert.equal(
    v1.SURFACE.encode("InitializeRequest", { protocolVersion: 1 }),
    '{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}}',
  );
  const server: v1.McpServer = { name: "n", command: "c", args: [], env: [], _meta: new RawJson('{"k": 1}') };
  assert.equal(v1.SURFACE.encode("McpServer", server), '{"name":"n","command":"c","args":[],"env":[],"_meta":{"k": 1}}');
});

test("the v2 surface refuses a null request id, v1 accepts it", () => {
  const line = '{"jsonrpc":"2.0","id":null,"method":"session/cancel_all"}';
  const v2Answer = classify(line, v2.AGENT, none);
  assert.equal(v2Answer.kind, "reply");
  assert.equal(v2Answer.kind === "reply" ? v2Answer.reply.error?.code : 0, -32600);
  const v1Answer = classify(line, v1.AGENT, none);
  assert.equal(v1Answer.kind, "reply");
  assert.equal(v1Answer.kind === "reply" ? v1Answer.reply.error?.code : 0, -32601);
  assert.equal(v2.PROTOCOL_VERSION, 2);
  assert.equal(v2.RULES.nullRequestId, false);
});

test("a response resolves the pending call with its decoded result", () => {
  const line = '{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s-1"}}';
  const incoming = classify(line, v1.CLIENT, (id) => (id === 4 ? "session/new" : undefined));
  assert.ok(incoming.kind === "response");
  assert.equal(incoming.typeName, "NewSessionResponse");
  assert.equal((incoming.result as v1.NewSessionResponse).sessionId, "s-1");
  assert.equal(classify(line, v1.CLIENT, none).kind, "ignored");
});

test("the method table carries each method's rules", () => {
  const load = v1.METHODS.find((m) => m.name === "session/load");
  assert.ok(load !== undefined);
  assert.deepEqual(load.gate?.path, ["agentCapabilities", "loadSession"]);
  assert.equal(load.session?.effect, "opened");
  assert.equal(load.handler, "loadSession");
});
