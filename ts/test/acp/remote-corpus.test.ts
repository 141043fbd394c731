/** The stdio corpus of bad lines (`vectors/jsonrpc`: every case the receiver answers
 * with an error) replayed over the network against the served echo agent, each case as
 * one POST body and as one WebSocket text frame, after `initialize`. The answers are the
 * stdio ones (same error code, same id) and the connection goes on. The one difference
 * by design: a batch POSTed is refused with 501 (the RFD), not answered with -32600.
 * Cases given as base64 (invalid UTF-8) are left out: a text frame cannot carry them, and
 * as a body they are the framing case stdio covers. The same files the Rust and Python
 * tests read. */

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { test } from "node:test";

import { VECTORS } from "../vector-files.js";
import { echoServer, exchange, initialize, INITIALIZE, JSON_TYPE, nextMessage, openStream, rawSocket, serving } from "./remote-peers.js";

const ALIVE = '{"jsonrpc":"2.0","id":"alive","method":"session/new","params":{"cwd":"/","mcpServers":[]}}';

interface Case {
  readonly id: string;
  readonly message: string;
  readonly code: number;
  readonly replyId: unknown;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".json") ? [join(dir, e.name)] : [],
  );
}

/** Every `reply_error` case of `vectors/jsonrpc` that is text, sorted by path. */
function corpus(): Case[] {
  const cases: Case[] = [];
  for (const path of walk(join(VECTORS, "jsonrpc")).sort()) {
    const raw = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    const expect = raw["expect"] as { outcome: string; error?: { code: number }; id?: unknown };
    if (expect.outcome !== "reply_error" || expect.error === undefined) continue;
    let message: string;
    if (typeof raw["input_text"] === "string") message = raw["input_text"].replace(/\n$/, "");
    else if ("input" in raw) message = JSON.stringify(raw["input"]);
    else continue; // base64: see the module documentation
    cases.push({ id: raw["id"] as string, message, code: expect.error.code, replyId: expect.id });
  }
  assert.ok(cases.length > 40, `the corpus was not found: ${cases.length}`);
  return cases;
}

/** Why `answer` is not the error the case expects; null when it is. */
function mismatch(c: Case, answer: Record<string, unknown> | null): string | null {
  if (answer === null) return `${c.id}: no answer`;
  const code = (answer["error"] as { code?: unknown } | undefined)?.code;
  if (code !== c.code || !("id" in answer) || !isDeepStrictEqual(answer["id"], c.replyId)) {
    return `${c.id}: expected ${c.code} with id ${JSON.stringify(c.replyId)}, got ${JSON.stringify(answer)}`;
  }
  return null;
}

test("the bad-line corpus over HTTP POSTs gets the stdio answers", async () => {
  await serving(echoServer(), async (url) => {
    const connection = await initialize(url);
    const headers = { ...JSON_TYPE, "acp-connection-id": connection };
    const stream = await openStream(url, { "acp-connection-id": connection });
    const failures: string[] = [];
    try {
      for (const c of corpus()) {
        const sent = await exchange(url, "POST", headers, c.message);
        if (c.message.trimStart().startsWith("[")) {
          if (sent.status !== 501) failures.push(`${c.id}: a batch POSTed got ${sent.status}, not 501`);
          continue;
        }
        assert.equal(sent.status, 202, c.id);
        const failure = mismatch(c, await stream.next());
        if (failure !== null) failures.push(failure);
      }
      // The connection is still there.
      assert.equal((await exchange(url, "POST", headers, ALIVE)).status, 202);
      assert.ok((await stream.next())["result"] !== undefined);
    } finally {
      stream.close();
    }
    assert.deepEqual(failures, []);
  });
});

test("the bad-line corpus over WebSocket frames gets the stdio answers", async () => {
  await serving(echoServer(), async (url) => {
    const { socket } = await rawSocket(url);
    const failures: string[] = [];
    try {
      socket.sendText(Buffer.from(INITIALIZE));
      assert.equal((await nextMessage(socket))?.["id"], 0);
      for (const c of corpus()) {
        socket.sendText(Buffer.from(c.message));
        const failure = mismatch(c, await nextMessage(socket));
        if (failure !== null) failures.push(failure);
      }
      socket.sendText(Buffer.from(ALIVE));
      const alive = await nextMessage(socket);
      assert.equal(alive?.["id"], "alive");
      assert.ok(alive["result"] !== undefined);
    } finally {
      socket.close();
    }
    assert.deepEqual(failures, []);
  });
});
