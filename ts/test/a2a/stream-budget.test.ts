/**
 * The stream budget: its accounting (charge, give back, cut the stream holding the most)
 * and `writeSse` under it on real sockets — a reader that reads is never cut however many
 * frames pass, a client that stops reading is cut when another stream needs the room
 * (its connection closed), and a frame larger than the whole budget gets `event: lagged`.
 */

import assert from "node:assert/strict";
import { createServer, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { test } from "node:test";

import { StreamBudget, type BudgetHolder } from "../../src/a2a/server/budget.js";
import { eventFrame, frame, sharedEncoding, writeSse, type Frame } from "../../src/a2a/server/sse.js";
import type { StopSignal, StreamOut } from "../../src/a2a/server/stream.js";

const MIB = 1 << 20;
/** Every wait in these tests is bounded by this. */
const WAIT_MS = 20_000;

/** A holder as `writeSse` keeps one: `held` grows by what it charged, `cut` gives it back. */
function holder(budget: StreamBudget): BudgetHolder & { held: number; cuts: number; take(n: number): boolean } {
  const h = {
    held: 0,
    cuts: 0,
    cut(): void {
      h.cuts++;
      budget.release(h.held);
      h.held = 0;
      budget.leave(h);
    },
    take(n: number): boolean {
      if (!budget.charge(h, n)) return false;
      h.held += n;
      return true;
    },
  };
  budget.join(h);
  return h;
}

test("the budget counts what is charged and given back, and refuses past its limit", () => {
  const budget = new StreamBudget(10);
  const a = holder(budget);
  assert.ok(a.take(6));
  assert.ok(a.take(4));
  assert.equal(budget.used, 10);
  // `a` holds the most: nothing is cut for its own frame.
  assert.equal(a.take(1), false);
  assert.equal(a.cuts, 0);
  budget.release(10);
  a.held = 0;
  assert.equal(budget.used, 0);
  assert.equal(a.take(11), false, "a frame larger than the whole budget never fits");
  assert.throws(() => new StreamBudget(0), RangeError);
});

test("past the limit the stream holding the most is cut, not the one asking", () => {
  const budget = new StreamBudget(10);
  const small = holder(budget);
  const large = holder(budget);
  const asking = holder(budget);
  assert.ok(small.take(3));
  assert.ok(large.take(6));
  assert.ok(asking.take(5));
  assert.deepEqual([small.cuts, large.cuts, asking.cuts], [0, 1, 0]);
  assert.equal(budget.used, 8);
  // Next: `asking` (5) holds more than `small` (3): it gets nothing, and `small` stays.
  assert.equal(asking.take(5), false);
  assert.equal(small.cuts, 0);
  budget.leave(small);
  budget.leave(asking);
});

/** An HTTP server whose every request is answered by `writeSse` with the frames `events`
 * gives it (one per item; the stream then stays open until the client goes). */
async function sseServer(budget: StreamBudget, events: (path: string) => Frame[]): Promise<{ server: Server; port: number; done: Promise<void>[] }> {
  const done: Promise<void>[] = [];
  const server = createServer((req, res: ServerResponse) => {
    const frames = events(req.url ?? "/");
    async function* open(signal: StopSignal): AsyncGenerator<StreamOut> {
      for (let i = 0; i < frames.length; i++) yield { kind: "gap", after: i, resumedAt: i };
      // Stays open (no more events) until the client goes away.
      if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    }
    const render = (item: StreamOut): Frame | null => (item.kind === "gap" ? (frames[item.after] as Frame) : null);
    done.push(writeSse(res, open, render, () => res.end(), 60_000, budget));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, done };
}

/** A raw connection that sends `GET path`. */
function request(port: number, path: string): Socket {
  const socket = connect(port, "127.0.0.1");
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return socket;
}

/** Reads `socket` until its text contains `until` (or it closes); bounded. */
function readUntil(socket: Socket, until: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let tail = "";
    const timer = setTimeout(() => reject(new Error(`no ${JSON.stringify(until)} within ${WAIT_MS} ms`)), WAIT_MS);
    const finish = (closed: boolean): void => {
      clearTimeout(timer);
      socket.off("data", onData);
      resolve({ text: Buffer.concat(chunks).toString("latin1"), closed });
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      // Searched: the chunk, and across its start (what came before was searched already).
      const edge = tail + chunk.toString("latin1", 0, Math.min(chunk.length, until.length));
      if (chunk.includes(until) || edge.includes(until)) return finish(false);
      tail = (tail + chunk.toString("latin1", Math.max(0, chunk.length - until.length))).slice(-until.length);
    };
    socket.on("data", onData);
    socket.once("close", () => finish(true));
  });
}

/** Resolves once `check()` holds, checking on each timer tick; bounded. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test("a reader that reads is never cut, however much passes through a small budget", async () => {
  const budget = new StreamBudget(1 * MIB);
  const body = Buffer.alloc(256 * 1024, 0x61);
  const frames: Frame[] = [];
  for (let i = 0; i < 40; i++) frames.push(i % 2 === 0 ? eventFrame(i, "<", body, ">") : frame(i, null, "x".repeat(200 * 1024)));
  frames.push(frame(null, "end", "{}"));
  const { server, port, done } = await sseServer(budget, () => frames);
  try {
    const readers = [request(port, "/a"), request(port, "/b")];
    const got = await Promise.all(readers.map((socket) => readUntil(socket, "event: end\n")));
    for (const { text, closed } of got) {
      assert.equal(closed, false);
      assert.ok(!text.includes("event: lagged"), "a reader was cut");
      assert.equal(text.match(/^id: /gm)?.length, 40);
    }
    for (const socket of readers) socket.destroy();
    await Promise.all(done);
    assert.equal(budget.used, 0, "every byte given back once the streams ended");
  } finally {
    server.close();
  }
});

test("a client that stops reading is cut off for a stream that needs the room, and a frame past the budget gets lagged", async () => {
  const budget = new StreamBudget(32 * MIB);
  const large = Buffer.alloc(24 * MIB, 0x62);
  const { server, port, done } = await sseServer(budget, (path) =>
    path === "/stuck" ? [eventFrame(1, "", large, "")] : path === "/huge" ? [frame(1, null, "y".repeat(33 * MIB))] : [eventFrame(1, "", large, ""), frame(null, "end", "{}")],
  );
  const sockets: Socket[] = [];
  try {
    // Reads the head and then nothing: most of its frame stays in node's write buffer.
    const stuck = request(port, "/stuck");
    sockets.push(stuck);
    await readUntil(stuck, "\r\n\r\n");
    stuck.pause();
    await until(() => budget.used > 8 * MIB, "the unread frame charged");
    const stuckClosed = new Promise<void>((resolve) => stuck.once("close", () => resolve()));
    const reader = request(port, "/reader");
    sockets.push(reader);
    const read = await readUntil(reader, "event: end\n");
    assert.equal(read.closed, false);
    assert.ok(read.text.includes("id: 1\n"));
    // Reads again: it gets what the kernel held of the frame, then the close.
    stuck.resume();
    await stuckClosed;
    const huge = request(port, "/huge");
    sockets.push(huge);
    const cut = await readUntil(huge, "event: lagged\n");
    assert.equal(cut.closed, false);
    assert.ok(!cut.text.includes("id: 1\n"));
  } finally {
    for (const socket of sockets) socket.destroy();
    await Promise.all(done);
    server.close();
  }
  assert.equal(budget.used, 0);
});

test("a large frame after a small one in the same turn is charged until node has let it out", async () => {
  const budget = new StreamBudget(32 * MIB);
  const large = Buffer.alloc(24 * MIB, 0x63);
  // The small frame is still pending (joined with others of the turn) when the large one comes.
  const { server, port, done } = await sseServer(budget, () => [frame(0, null, "{}"), eventFrame(1, "", large, "")]);
  const sockets: Socket[] = [];
  try {
    const stuck = request(port, "/stuck");
    sockets.push(stuck);
    await readUntil(stuck, "\r\n\r\n");
    stuck.pause();
    await until(() => budget.used > 8 * MIB, "the unread large frame charged");
    // Still charged a while later: nothing gave it back while node holds it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(budget.used > 8 * MIB, `only ${budget.used} bytes charged`);
  } finally {
    for (const socket of sockets) socket.destroy();
    await Promise.all(done);
    server.close();
  }
  assert.equal(budget.used, 0);
});

test("the streams woken for one event share its encoding", () => {
  const event = {};
  let encoded = 0;
  const encode = (): string => {
    encoded++;
    return `{"n":${encoded}}`;
  };
  const first = sharedEncoding(event, "SubscribeToTask", encode);
  assert.equal(sharedEncoding(event, "SubscribeToTask", encode), first);
  assert.notEqual(sharedEncoding(event, "v0.3 tasks/resubscribe", encode), first);
  assert.equal(encoded, 2);
});
