#!/usr/bin/env node
// A test peer: agentproto's TypeScript sync-channel server on stdin/stdout
// with the methods of the Rust fixture (`crates/sync/src/bin/
// agentproto-sync-fixture.rs`), so that every language's client can run the
// same cases against it. Not a product entry point.
//
// - `echo`: answers its payload.
// - `callback`: the payload is `name NUL arg [NUL name NUL arg …]`; calls the
//   client's callback `name` with `arg` for each pair in turn and answers the
//   answers joined with NUL. A `CallError` from the client fails the request
//   with `client error: TEXT`.
// - `fail`: fails with its payload as the error text.
// - `panic`: throws an unexpected exception (answered as
//   ``handler `panic` panicked: the fixture was asked to panic``; serving goes on).
// - `repeat`: the payload is COUNT in decimal; answers COUNT bytes 0..=250 repeating.
// - `exit`: exits the process with status 3 without answering.

import { HandlerError } from "./errors.js";
import { Server } from "./server.js";

const strictText = new TextDecoder("utf-8", { fatal: true });
const lossyText = new TextDecoder("utf-8");

/** Splits `bytes` at every NUL. */
function splitAtNul(bytes: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let index = 0; index <= bytes.length; index++) {
    if (index === bytes.length || bytes[index] === 0) {
      parts.push(bytes.subarray(start, index));
      start = index + 1;
    }
  }
  return parts;
}

function callback(payload: Uint8Array, call: (name: string, argument: Uint8Array) => Uint8Array): Uint8Array {
  const parts = splitAtNul(payload);
  if (parts.length % 2 !== 0) throw new HandlerError("expected name/argument pairs separated by NUL");
  const answers: Uint8Array[] = [];
  for (let index = 0; index < parts.length; index += 2) {
    let name: string;
    try {
      name = strictText.decode(parts[index]);
    } catch {
      throw new HandlerError("callback name is not UTF-8");
    }
    // The answer is a view valid until the next call: keep a copy.
    answers.push(call(name, parts[index + 1] as Uint8Array).slice());
  }
  const out = new Uint8Array(answers.reduce((total, answer) => total + answer.length, Math.max(answers.length - 1, 0)));
  let at = 0;
  answers.forEach((answer, index) => {
    if (index > 0) out[at++] = 0;
    out.set(answer, at);
    at += answer.length;
  });
  return out;
}

let repeated = new Uint8Array(0);

function repeat(payload: Uint8Array): Uint8Array {
  const text = lossyText.decode(payload);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new HandlerError("expected a decimal count");
  const count = Number(text);
  if (repeated.length < count) {
    repeated = new Uint8Array(count);
    for (let index = 0; index < count; index++) repeated[index] = index % 251;
  }
  return repeated.subarray(0, count);
}

const server = new Server()
  .handle("echo", (payload) => payload)
  .handle("callback", (payload, peer) => callback(payload, (name, argument) => peer.call(name, argument)))
  .handle("fail", (payload) => {
    throw new HandlerError(lossyText.decode(payload));
  })
  .handle("panic", () => {
    throw new Error("the fixture was asked to panic");
  })
  .handle("repeat", repeat)
  .handle("exit", () => process.exit(3));

try {
  server.serveStdio();
} catch (error) {
  process.stderr.write(`agentproto-sync-fixture (ts): ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
