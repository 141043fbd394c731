// agentproto's TypeScript SDK (npm `agentproto`, this repository's ts/) in the seed-000
// loops. It imports the BUILT SDK from ts/dist (`make ts-build`, or the `ts-agentproto`
// build of bench/adapters.json), through the module behind the package's entry point
// `agentproto/acp/v1/codec` (ACP v1's messages without a connection: what a tool that
// reads and writes lines loads), as an application loads it (the package is not
// installed under bench/ts, so by path).
//
// With one line it does what the SDK's connections do with a line they read: `classify`
// (the envelope read once by the SDK's strict JSON reader with the params kept raw, then
// the params validated and decoded by method by the generated decoder). Requests are
// classified by the agent's receiving side (`AGENT`), session/update by the client's
// (`CLIENT`), with no pending calls; a line counts as decoded when it comes out as the
// expected request or notification with params of the method's type. The line is
// handed over as the harness's string, which `classify` takes as it is (the connection
// reads bytes and checks UTF-8 first; that step is left out here, as the bytes-to-text
// step is on every JavaScript side: bench/README.md).
//
// Answers are built as the agent role sends a handler's result: the value encoded by the
// canonical encoder of the method's result type (`SURFACE.encodeNamed`, the type named
// by the method table, as the role's `encodeResult` does without strict mode), then
// wrapped in the response envelope (`encodeResponse` around the raw result). Not
// included: the connection machinery (queues, promises, handler tasks); the end-to-end
// run covers it.
import * as v1 from "../../ts/dist/src/acp/v1-codec.js";
import { main } from "./harness.mjs";

const { classify, encodeResponse } = v1;
const noPending = () => undefined;
// What each method's params decode to, from the SDK's method table.
const agentRequests = v1.SURFACE.requests("agent");
const clientNotifications = v1.SURFACE.notifications("client");
const expected = new Map([
  ["initialize", agentRequests.get("initialize").params],
  ["session/new", agentRequests.get("session/new").params],
  ["session/prompt", agentRequests.get("session/prompt").params],
  ["session/update", clientNotifications.get("session/update").params],
]);

function decode(kind, line) {
  const update = kind === "session/update";
  const incoming = classify(line, update ? v1.CLIENT : v1.AGENT, noPending);
  return (
    incoming.kind === (update ? "notification" : "request") &&
    incoming.method === kind &&
    incoming.typeName === expected.get(kind)
  );
}

// The result type the agent role encodes a handler's answer with, by method.
const newSessionResult = agentRequests.get("session/new").result;
const initializeResult = agentRequests.get("initialize").result;
const respond = (id, type, value) => encodeResponse(id, new v1.RawJson(v1.SURFACE.encodeNamed(type, value)));

main({
  decode,
  encodeSessionResult: (id, sessionId) => respond(id, newSessionResult, { sessionId }),
  encodeInitializeResult: (id) => respond(id, initializeResult, { protocolVersion: v1.PROTOCOL_VERSION }),
});
