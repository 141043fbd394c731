import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";

import { CallAborted, CallTimeout, Connection, ConnectionClosed, pipe, RequestError, RpcError, SinkClosed, TransportError, type ConnectionEvent } from "../../src/jsonrpc/index.js";
import { LineSplitter, Oversize } from "../../src/jsonrpc/frame.js";
import { gate, handler, LIMIT, setup, turns, within } from "./harness.js";

const echo = handler(async (r) => (r.params === null ? "null" : r.params.text));

test("framing limit: an oversize request is answered -32600 without being kept whole, and the connection goes on", async () => {
  const events: ConnectionEvent[] = [];
  const { remote, running } = setup(echo, { maxMessageSize: 1024, observer: (e) => events.push(e) }, 4096);
  const big = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "m", params: { pad: "x".repeat(1 << 20) } });
  // The pipe holds 4 KiB: the write completes only if the reader consumes the line as it streams by.
  await within(remote.sendRaw(big), "the oversize line is consumed");
  const answer = await remote.next();
  assert.equal(answer.id, 7);
  assert.equal(answer.error.code, -32600);
  assert.match(answer.error.message, /exceeds the maximum of 1024 bytes/);
  await remote.send({ jsonrpc: "2.0", id: 8, method: "m", params: [1] });
  assert.deepEqual((await remote.next()).result, [1]);
  assert.ok(events.some((e) => e.kind === "oversize-message"));
  await remote.close();
  await within(running, "run ends");
});

test("framing limit: the reader's splitter holds at most the limit of an oversize line, whatever its length", () => {
  const splitter = new LineSplitter(1024);
  const chunk = Buffer.alloc(64 * 1024, 0x78);
  let held = 0;
  for (let i = 0; i < 160; i++) {
    assert.deepEqual(splitter.feed(chunk), []); // 10 MiB without a newline
    const state = splitter as unknown as { buffered: number; prefix: Uint8Array };
    held = Math.max(held, state.buffered + state.prefix.length);
  }
  const [frame] = splitter.feed(Buffer.from("\n"));
  assert.ok(frame instanceof Oversize);
  assert.equal(frame.length, 160 * 64 * 1024);
  assert.ok(held <= 64 * 1024 + 4096, `the splitter held ${held} bytes`);
});

test("bad lines are answered (-32700, -32600) and the connection is kept", async () => {
  const { remote, running } = setup(echo);
  await remote.sendRaw("{not json");
  const parse = await remote.next();
  assert.equal(parse.error.code, -32700);
  assert.equal(parse.id, null);
  await remote.sendRaw('{"jsonrpc":"1.0","id":3,"method":"m"}');
  const invalid = await remote.next();
  assert.equal(invalid.error.code, -32600);
  assert.equal(invalid.id, 3);
  await remote.send({ jsonrpc: "2.0", id: 4, method: "m", params: { ok: true } });
  assert.deepEqual(await remote.next(), { jsonrpc: "2.0", id: 4, result: { ok: true } });
  await remote.close();
  await within(running, "run ends");
});

test("request handlers run concurrently: the first waits for the second", async () => {
  const second = gate();
  const { remote, running } = setup(
    handler(async (r) => {
      if (r.method === "first") await second.promise;
      else second.open();
      return `"${r.method}"`;
    }),
  );
  await remote.send({ jsonrpc: "2.0", id: 1, method: "first" });
  await remote.send({ jsonrpc: "2.0", id: 2, method: "second" });
  const answers = [await remote.next(), await remote.next()];
  assert.deepEqual(answers.map((a) => a.id), [2, 1]);
  await remote.close();
  await within(running, "run ends");
});

test("a call resolves only after the notifications read before its response were handled", async () => {
  const seen: number[] = [];
  const slow = gate();
  const { connection, remote, running } = setup(
    handler(
      async () => "null",
      async (n) => {
        const k = (n.params?.parse() as { k: number }).k;
        if (k === 2) await slow.promise;
        seen.push(k);
      },
    ),
  );
  let resolved = false;
  const call = connection.peer.call("ask", "{}").then((r) => {
    resolved = true;
    return r;
  });
  const request = await remote.next();
  for (const k of [1, 2, 3]) await remote.send({ jsonrpc: "2.0", method: "update", params: { k } });
  await remote.send({ jsonrpc: "2.0", id: request.id, result: "done" });
  await turns();
  assert.equal(resolved, false, "the response must wait for the notifications before it");
  slow.open();
  assert.equal((await within(call, "the call")).text, '"done"');
  assert.deepEqual(seen, [1, 2, 3]);
  await remote.close();
  await within(running, "run ends");
});

test("a notification handler's own call does not deadlock on the notifications after it", async () => {
  const { remote, running } = setup(
    handler(
      async () => "null",
      async (n, cx) => {
        if (n.method === "ask") {
          const answer = await cx.peer.call("question", null);
          await cx.peer.notify("answered", answer);
        }
      },
    ),
  );
  await remote.send({ jsonrpc: "2.0", method: "ask" });
  const question = await remote.next();
  assert.equal(question.method, "question");
  await remote.send({ jsonrpc: "2.0", method: "later" }); // read before the response
  await remote.send({ jsonrpc: "2.0", id: question.id, result: 42 });
  assert.deepEqual(await remote.next(), { jsonrpc: "2.0", method: "answered", params: 42 });
  await remote.close();
  await within(running, "run ends");
});

test("bounded queues: a blocked worker stops the reader, the peer's writes wait, nothing is dropped", async () => {
  const blocked = gate();
  const seen: number[] = [];
  const { remote, running } = setup(
    handler(
      async () => "null",
      async (n) => {
        await blocked.promise;
        seen.push((n.params?.parse() as { k: number }).k);
      },
    ),
    { notificationQueue: 2, backlog: 0 },
    256,
  );
  let written = false;
  const writes = (async () => {
    for (let k = 0; k < 200; k++) await remote.send({ jsonrpc: "2.0", method: "n", params: { k } });
    written = true;
  })();
  await turns(50);
  assert.equal(written, false, "the writer must be blocked while the worker is");
  assert.deepEqual(seen, []);
  blocked.open();
  await within(writes, "the writes complete once the worker runs");
  await remote.close();
  await within(running, "run ends");
  assert.deepEqual(seen, Array.from({ length: 200 }, (_, k) => k));
});

test("the backlog: answers to pending calls are still read while the worker's queue is full", async () => {
  const { remote, running } = setup(
    handler(
      async () => "null",
      async (n, cx) => {
        // The first notification's handler waits for a call whose answer comes after
        // more notifications than the queue holds.
        if (n.method === "first") await cx.peer.call("question", null);
      },
    ),
    { notificationQueue: 1, backlog: 16 },
  );
  await remote.send({ jsonrpc: "2.0", method: "first" });
  const question = await remote.next();
  for (let k = 0; k < 5; k++) await remote.send({ jsonrpc: "2.0", method: "later", params: { k } });
  await remote.send({ jsonrpc: "2.0", id: question.id, result: true });
  await remote.send({ jsonrpc: "2.0", id: "probe", method: "m", params: [] });
  assert.deepEqual(await remote.next("the probe's answer once everything was handled"), { jsonrpc: "2.0", id: "probe", result: null });
  await remote.close();
  await within(running, "run ends");
});

test("the outgoing queue is bounded: senders wait while the peer does not read", async () => {
  const { connection, remote, running } = setup(echo, { outgoingQueue: 2 }, 64);
  let sent = 0;
  const sending = (async () => {
    for (let k = 0; k < 50; k++) {
      await connection.peer.notify("n", `{"k":${k},"pad":"${"x".repeat(64)}"}`);
      sent++;
    }
  })();
  await turns(50);
  assert.ok(sent < 50, "a sender must wait for room while nothing is read");
  for (let k = 0; k < 50; k++) assert.equal((await remote.next()).params.k, k);
  await within(sending, "every send completes once the peer reads");
  await remote.close();
  await within(running, "run ends");
});

test("a call times out with CallTimeout and sends $/cancel_request", async () => {
  const { connection, remote, running } = setup(echo, { callTimeout: 20 });
  // The rejection is awaited from the start: on a slow machine the 20 ms may pass before the
  // request is read below, and a rejection nobody awaits yet would fail the run.
  const timedOut = assert.rejects(within(connection.peer.call("slow", null), "the timeout"), CallTimeout);
  const request = await remote.next();
  await timedOut;
  assert.deepEqual(await remote.next(), { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: request.id } });
  await remote.close();
  await within(running, "run ends");
});

test("$/cancel_request from the peer aborts the handler's signal and is answered -32800", async () => {
  const started = gate();
  const { remote, running } = setup(
    handler(async (_r, cx) => {
      started.open();
      await new Promise<void>((resolve) => cx.signal.addEventListener("abort", () => resolve()));
      return "1";
    }),
  );
  await remote.send({ jsonrpc: "2.0", id: "a", method: "slow" });
  await within(started.promise, "the handler starts");
  await remote.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "a" } });
  const answer = await remote.next();
  assert.deepEqual(answer, { jsonrpc: "2.0", id: "a", error: { code: -32800, message: "request cancelled" } });
  await remote.close();
  await within(running, "run ends");
});

test("a handler that handles cancellation answers with its own partial result", async () => {
  const { remote, running } = setup(
    handler(async (_r, cx) => {
      cx.handleCancellation();
      await new Promise<void>((resolve) => cx.signal.addEventListener("abort", () => resolve()));
      return '"partial"';
    }),
  );
  await remote.send({ jsonrpc: "2.0", id: 1, method: "slow" });
  await remote.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 1 } });
  assert.deepEqual(await remote.next(), { jsonrpc: "2.0", id: 1, result: "partial" });
  await remote.close();
  await within(running, "run ends");
});

test("our calls: a cancel signal sends $/cancel_request and waits; an abort signal abandons at once", async () => {
  const { connection, remote, running } = setup(echo);
  const cancel = new AbortController();
  const waiting = connection.peer.call("long", null, { cancel: cancel.signal });
  const first = await remote.next();
  cancel.abort();
  assert.deepEqual(await remote.next(), { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: first.id } });
  await remote.send({ jsonrpc: "2.0", id: first.id, error: { code: -32800, message: "request cancelled" } });
  await assert.rejects(within(waiting, "the cancelled call"), (e: unknown) => e instanceof RpcError && e.error.code === -32800);

  const abort = new AbortController();
  const abandoned = connection.peer.call("long", null, { signal: abort.signal });
  const second = await remote.next();
  abort.abort();
  await assert.rejects(within(abandoned, "the aborted call"), CallAborted);
  assert.deepEqual(await remote.next(), { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: second.id } });
  await remote.close();
  await within(running, "run ends");
});

test("a handler's throw is answered -32603 and reported; a RequestError keeps its code", async () => {
  const events: ConnectionEvent[] = [];
  const { remote, running } = setup(
    handler(async (r) => {
      if (r.method === "mine") throw new RequestError(4242, "mine");
      throw new Error("boom");
    }),
    { observer: (e) => events.push(e), onError: null },
  );
  await remote.send({ jsonrpc: "2.0", id: 1, method: "boom" });
  assert.deepEqual((await remote.next()).error, { code: -32603, message: "internal error: request handler failed" });
  await remote.send({ jsonrpc: "2.0", id: 2, method: "mine" });
  assert.deepEqual((await remote.next()).error, { code: 4242, message: "mine" });
  assert.ok(events.some((e) => e.kind === "request-handler-failed" && e.method === "boom"));
  await remote.close();
  await within(running, "run ends");
});

test("the end of the input fails pending calls, later calls fail at once, the output is closed", async () => {
  const { connection, remote, running } = setup(echo);
  const failed = assert.rejects(within(connection.peer.call("never", null), "the pending call"), ConnectionClosed);
  await remote.next();
  await remote.close();
  await failed;
  await within(running, "run ends");
  await assert.rejects(connection.peer.call("later", null), ConnectionClosed);
  assert.equal(await remote.ended(), true);
});

test("Node streams: a connection over Readable/Writable", async () => {
  const toUs = new PassThrough();
  const fromUs = new PassThrough();
  const connection = new Connection(toUs, fromUs, echo, { shutdownGrace: LIMIT });
  const running = connection.run();
  toUs.write('{"jsonrpc":"2.0","id":1,"method":"m","params":[true]}\n');
  const line = await within(
    new Promise<string>((resolve) => fromUs.once("data", (d: Buffer) => resolve(d.toString("utf8")))),
    "the answer",
  );
  assert.equal(line, '{"jsonrpc":"2.0","id":1,"result":[true]}\n');
  toUs.end();
  await within(running, "run ends");
  assert.equal(fromUs.writableEnded, true);
});

test("Web streams: a connection over ReadableStream/WritableStream", async () => {
  const input = new TransformStream<Uint8Array, Uint8Array>();
  const output = new TransformStream<Uint8Array, Uint8Array>();
  const connection = new Connection(input.readable, output.writable, echo, { shutdownGrace: LIMIT });
  const running = connection.run();
  const writer = input.writable.getWriter();
  await writer.write(Buffer.from('{"jsonrpc":"2.0","id":"w","method":"m","params":{"a":1}}\n'));
  const reader = output.readable.getReader();
  const first = await within(reader.read(), "the answer");
  assert.equal(Buffer.from(first.value as Uint8Array).toString("utf8"), '{"jsonrpc":"2.0","id":"w","result":{"a":1}}\n');
  await writer.close();
  await within(running, "run ends");
  assert.equal((await within(reader.read(), "the end")).done, true);
});

test("work a notification handler spawns settles before run() does", async () => {
  const opened = gate();
  let done = false;
  const { remote, running } = setup(
    handler(echo.request, async (_n, cx) => {
      cx.spawn(async () => {
        await opened.promise;
        await turns(50);
        done = true;
      });
    }),
  );
  await remote.send({ jsonrpc: "2.0", method: "later" });
  await remote.close();
  opened.open(); // the work can only finish after this, and run() only after the work
  await within(running, "run ends");
  assert.equal(done, true);
});

test("work a notification handler spawns is stopped and abandoned when the grace runs out", async () => {
  let stopped = false;
  const { remote, running } = setup(
    handler(echo.request, async (_n, cx) => {
      cx.spawn(
        (stop) =>
          new Promise<void>(() => {
            stop.addEventListener("abort", () => (stopped = true));
          }),
      );
    }),
    { shutdownGrace: 100 },
  );
  await remote.send({ jsonrpc: "2.0", method: "forever" });
  await remote.close();
  await within(running, "run ends");
  assert.equal(stopped, true);
});

test("work a notification handler spawns that rejects is reported", async () => {
  const events: ConnectionEvent[] = [];
  const { remote, running } = setup(
    handler(echo.request, async (_n, cx) => {
      cx.spawn(async () => {
        throw new Error("no");
      });
    }),
    { observer: (e) => events.push(e), onError: null },
  );
  await remote.send({ jsonrpc: "2.0", method: "fails" });
  await remote.close();
  await within(running, "run ends");
  assert.ok(events.some((e) => e.kind === "notification-handler-failed" && e.method === "fails"), JSON.stringify(events));
});

test("after the input ended, a sink closed already (SinkClosed) is expected, and anything else fails the run, whatever its text", async () => {
  const answerLate = (release: Promise<void>): ReturnType<typeof handler> =>
    handler(async () => {
      await release;
      return "late";
    });
  // A request whose answer is written only after the peer hung up (input ended, its reading end closed).
  const runWith = async (sinkError: () => Error): Promise<unknown> => {
    const input = pipe();
    const release = gate();
    const sink = {
      async write(): Promise<void> {
        throw sinkError();
      },
      async close(): Promise<void> {},
    };
    const connection = new Connection(input.reader, sink, answerLate(release.promise), { shutdownGrace: 1000 });
    const running = connection.run();
    await input.writer.write(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"m"}\n'));
    await input.writer.close();
    release.open();
    return within(running.then(() => null, (err: unknown) => err), "run ends");
  };
  assert.equal(await runWith(() => new SinkClosed("the pipe is closed")), null);
  // The same words on another error are no sign of a closed sink: the text is not read.
  const failed = await runWith(() => new Error("the pipe is closed"));
  assert.ok(failed instanceof TransportError, String(failed));
});
