// `Server` over in-memory streams: what it answers, and how a client that
// breaks the protocol ends the serving loop.

import assert from "node:assert/strict";
import { test } from "node:test";

import { CallError, ChannelBrokenError, EndedDuringCallError, HandlerError, ProtocolError } from "../../src/sync/errors.js";
import { DEFAULT_LIMITS, encode, FrameReader, type Limits, MessageType } from "../../src/sync/frame.js";
import { Server } from "../../src/sync/server.js";
import { bytes, MemorySink, MemorySource, text } from "./memory.js";

type Tuple = [MessageType, string, string];

function tuples(parts: Tuple[]): Uint8Array {
  return Buffer.concat(parts.map(([kind, name, payload]) => encode(kind, bytes(name), bytes(payload))));
}

function written(sink: MemorySink): Tuple[] {
  const reader = new FrameReader(new MemorySource(sink.bytes()));
  const out: Tuple[] = [];
  for (let frame = reader.read(); frame !== null; frame = reader.read()) {
    out.push([frame.kind, text(frame.name), text(frame.payload)]);
  }
  return out;
}

/** A server whose `ask` calls the client's `question` with its payload and answers `answer: …`. */
function askingServer(limits: Limits = DEFAULT_LIMITS): Server {
  return new Server(limits).handle("ask", (payload, peer) => {
    const answer = text(peer.call("question", payload));
    return `answer: ${answer}`;
  });
}

function serve(server: Server, input: Uint8Array): { error: unknown; frames: Tuple[] } {
  const sink = new MemorySink();
  let error: unknown;
  try {
    server.serve(new MemorySource(input), sink);
  } catch (thrown) {
    error = thrown;
  }
  return { error, frames: written(sink) };
}

test("requests and callback answers are served until the end of input", () => {
  const input = tuples([
    [MessageType.Request, "ask", "why"],
    [MessageType.CallResponse, "question", "because"],
    [MessageType.Request, "ask", "who"],
    [MessageType.CallError, "question", "cannot say"],
  ]);
  const { error, frames } = serve(askingServer(), input);
  assert.equal(error, undefined);
  assert.deepEqual(frames, [
    [MessageType.Call, "question", "why"],
    [MessageType.Response, "ask", "answer: because"],
    [MessageType.Call, "question", "who"],
    [MessageType.Error, "ask", "client error: cannot say"],
  ]);
});

test("the request payload survives the callbacks made while handling it", () => {
  const server = new Server().handle("twice", (payload, peer) => {
    const first = text(peer.call("a", "x".repeat(100)));
    const second = text(peer.call("b", "y".repeat(70_000)));
    return `${text(payload)}|${first}|${second.length}`;
  });
  const input = tuples([
    [MessageType.Request, "twice", "the request"],
    [MessageType.CallResponse, "a", "z".repeat(200)],
    [MessageType.CallResponse, "b", "w".repeat(70_000)],
  ]);
  const { error, frames } = serve(server, input);
  assert.equal(error, undefined);
  assert.deepEqual(frames.at(-1), [MessageType.Response, "twice", `the request|${"z".repeat(200)}|70000`]);
});

test("handler errors, other exceptions and unknown methods become Error tuples and serving goes on", () => {
  const server = new Server()
    .handle("fail", (payload) => {
      throw new HandlerError(text(payload));
    })
    .handle("throw", () => {
      throw new TypeError("a bug");
    })
    .handle("string", () => {
      throw "not an Error";
    })
    .handle("empty", () => undefined)
    .handle("number", () => 42 as unknown as string);
  const input = tuples([
    [MessageType.Request, "fail", "no such file"],
    [MessageType.Request, "throw", ""],
    [MessageType.Request, "string", ""],
    [MessageType.Request, "nope", ""],
    [MessageType.Request, "empty", "x"],
    [MessageType.Request, "number", ""],
  ]);
  const { error, frames } = serve(server, input);
  assert.equal(error, undefined);
  assert.deepEqual(frames, [
    [MessageType.Error, "fail", "no such file"],
    [MessageType.Error, "throw", "handler `throw` panicked: a bug"],
    [MessageType.Error, "string", "handler `string` panicked: not an Error"],
    [MessageType.Error, "nope", "unknown method `nope`"],
    [MessageType.Response, "empty", ""],
    [MessageType.Error, "number", "handler `number` panicked: it returned number, not bytes or a string"],
  ]);
});

test("a tuple other than a request between requests ends serving", () => {
  const { error, frames } = serve(askingServer(), tuples([[MessageType.CallResponse, "question", "early"]]));
  assert.ok(error instanceof ProtocolError);
  assert.deepEqual(error.detail, { reason: "unexpected-type", kind: MessageType.CallResponse, name: "question" });
  assert.deepEqual(frames, []);
});

test("a callback answer with another name ends serving without an answer", () => {
  const input = tuples([
    [MessageType.Request, "ask", "x"],
    [MessageType.CallResponse, "other", "y"],
  ]);
  const { error, frames } = serve(askingServer(), input);
  assert.ok(error instanceof ProtocolError);
  assert.deepEqual(error.detail, { reason: "name-mismatch", kind: MessageType.CallResponse, expected: "question", found: "other" });
  assert.equal(frames.length, 1, "only the call was written");
});

test("a handler that swallows the broken channel still ends serving with the cause", () => {
  let seen: unknown;
  const server = new Server().handle("ask", (_, peer) => {
    try {
      peer.call("question");
    } catch (error) {
      seen = error;
    }
    return "carried on";
  });
  const { error, frames } = serve(server, tuples([[MessageType.Request, "ask", ""]]));
  assert.ok(seen instanceof ChannelBrokenError);
  assert.ok(error instanceof EndedDuringCallError);
  assert.equal(error.callback, "question");
  assert.deepEqual(frames, [[MessageType.Call, "question", ""]], "nothing written after the break");
});

test("a new request during a callback ends serving", () => {
  const input = tuples([
    [MessageType.Request, "ask", "x"],
    [MessageType.Request, "ask", "y"],
  ]);
  const { error } = serve(askingServer(), input);
  assert.ok(error instanceof ProtocolError);
  assert.deepEqual(error.detail, { reason: "unexpected-type", kind: MessageType.Request, name: "ask" });
});

test("the end of input during a callback is reported", () => {
  const { error } = serve(askingServer(), tuples([[MessageType.Request, "ask", "x"]]));
  assert.ok(error instanceof EndedDuringCallError);
  assert.equal(error.message, "input ended while waiting for the answer to callback `question`");
});

test("a malformed tuple ends serving with a frame error", () => {
  const { error } = serve(askingServer(), Uint8Array.from([0x93, 0x01, 0xa3, 0x61, 0x73, 0x6b]));
  assert.ok(error instanceof ProtocolError);
  assert.equal(error.detail.reason, "frame");
});

test("requests over the limit are refused", () => {
  const { error } = serve(askingServer({ maxName: 64, maxPayload: 4 }), tuples([[MessageType.Request, "ask", "12345"]]));
  assert.ok(error instanceof ProtocolError && error.detail.reason === "frame");
  assert.match(error.message, /payload of 5 bytes is over the limit of 4 bytes/);
});

test("a CallError escaping a handler is answered with its own text", () => {
  const server = new Server().handle("relay", () => {
    throw new CallError("refused");
  });
  const { frames } = serve(server, tuples([[MessageType.Request, "relay", ""]]));
  assert.deepEqual(frames, [[MessageType.Error, "relay", "client error: refused"]]);
});
