/** The remote transports' byte-level pieces without sockets: masking, frames written in
 * batches and read back whatever the chunking, the protocol failures found on a frame's
 * header, the feed's and the sink's batches, SSE events in batches, and the routing scan
 * over escaped strings. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { LineSink, MessageFeed } from "../../src/acp/remote/framing.js";
import { scan } from "../../src/acp/remote/routing.js";
import { encodeEvents, SseParser } from "../../src/acp/remote/sse.js";
import { CloseCode, encodeFrame, encodeFrames, FrameParser, maskInto, type ParseStop } from "../../src/acp/remote/websocket.js";

const TEXT = 0x1;
const BINARY = 0x2;
const CONTINUATION = 0x0;
const PING = 0x9;

function naiveMask(source: Uint8Array, mask: Uint8Array): Buffer {
  const out = Buffer.alloc(source.length);
  for (let i = 0; i < source.length; i++) out[i] = (source[i] as number) ^ (mask[i % 4] as number);
  return out;
}

function pattern(length: number, seed = 7): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

test("masking: every length and alignment, into another buffer and in place, round trip", () => {
  const mask = Uint8Array.from([0x12, 0xab, 0x7f, 0xc3]);
  for (let length = 0; length <= 80; length++) {
    const source = pattern(length);
    const expected = naiveMask(source, mask);
    for (let offset = 0; offset < 8; offset++) {
      // A target whose start sits at every alignment, and a payload at `offset` in it.
      const backing = new Uint8Array(new ArrayBuffer(length + 16), offset);
      maskInto(backing, 3, source, mask);
      assert.deepEqual(Buffer.from(backing.subarray(3, 3 + length)), expected, `length ${length}, offset ${offset}`);
      const inPlace = new Uint8Array(new ArrayBuffer(length + 8), offset, length);
      inPlace.set(source);
      maskInto(inPlace, 0, inPlace, mask);
      assert.deepEqual(Buffer.from(inPlace), expected, `in place: length ${length}, offset ${offset}`);
      maskInto(inPlace, 0, inPlace, mask);
      assert.deepEqual(Buffer.from(inPlace), source, `round trip: length ${length}, offset ${offset}`);
    }
  }
  const big = pattern(100_003);
  assert.deepEqual(Buffer.from(naiveMask(big, mask)), (() => {
    const out = Buffer.allocUnsafe(big.length);
    maskInto(out, 0, big, mask);
    return out;
  })());
});

/** Feeds `bytes` to a parser in chunks of `step` bytes; every text message and every stop but "more". */
function parseAll(role: "client" | "server", bytes: Uint8Array, step: number, maxMessage = 1 << 24): { messages: string[]; stops: ParseStop[] } {
  const parser = new FrameParser(role, maxMessage);
  const messages: string[] = [];
  const stops: ParseStop[] = [];
  for (let at = 0; at < bytes.length; at += step) {
    parser.push(Buffer.from(bytes.subarray(at, Math.min(bytes.length, at + step))));
    for (;;) {
      const found: Buffer[] = [];
      const stop = parser.next(found);
      messages.push(...found.map((m) => m.toString("utf8")));
      if (stop.kind === "more") break;
      stops.push(stop);
      if (stop.kind === "fail") return { messages, stops };
    }
  }
  return { messages, stops };
}

function join(pieces: readonly Uint8Array[]): Buffer {
  return Buffer.concat(pieces.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

test("frames written in batches read back the same, however the bytes are chunked", () => {
  const texts = ["", "a", "x".repeat(125), "y".repeat(126), "é".repeat(40), "z".repeat(65_535), "w".repeat(65_536), "v".repeat(20_000), "{}"];
  for (const masked of [false, true]) {
    const pieces = encodeFrames(TEXT, texts.map((t) => Buffer.from(t)), masked);
    const bytes = join(pieces);
    const role = masked ? "server" : "client";
    // Every split point of the small frames (headers of 2, 4 and 8 bytes included)…
    const small = join(encodeFrames(TEXT, texts.slice(0, 5).map((t) => Buffer.from(t)), masked));
    for (const step of [1, 2, 3, 7]) {
      assert.deepEqual(parseAll(role, small, step).messages, texts.slice(0, 5), `masked ${masked}, step ${step}`);
    }
    // …and all of them in chunks of many sizes.
    for (const step of [125, 4096, 65_537, bytes.length]) {
      const { messages, stops } = parseAll(role, bytes, step);
      assert.deepEqual(stops, [], `masked ${masked}, step ${step}`);
      assert.deepEqual(messages, texts, `masked ${masked}, step ${step}`);
    }
  }
});

test("a batch of small frames shares buffers of at most 64 KiB; a large unmasked payload is not copied", () => {
  const payloads = Array.from({ length: 200 }, (_, i) => Buffer.from(`{"n":${i},"pad":"${"p".repeat(990)}"}`));
  const pieces = encodeFrames(TEXT, payloads, false);
  assert.ok(pieces.length > 1 && pieces.length < 10, `${pieces.length} pieces`);
  for (const piece of pieces) assert.ok(piece.length <= 64 * 1024);
  assert.deepEqual(parseAll("client", join(pieces), 1000).messages, payloads.map((p) => p.toString()));
  const large = Buffer.from("L".repeat(100_000));
  const mixed = encodeFrames(TEXT, [Buffer.from("a"), large, Buffer.from("b")], false);
  assert.equal(mixed.length, 4); // the frame of "a", the head of L, L itself, the frame of "b"
  assert.ok(mixed.includes(large));
  assert.deepEqual(parseAll("client", join(mixed), 8192).messages, ["a", large.toString(), "b"]);
  // Masked, a large payload is masked into a buffer of its own (never in place).
  const copy = Buffer.from(large);
  const masked = encodeFrames(TEXT, [large], true);
  assert.equal(masked.length, 1);
  assert.deepEqual(large, copy);
  assert.deepEqual(parseAll("server", join(masked), 10_000).messages, [large.toString()]);
});

function frame(opcode: number, payload: Uint8Array, options: { masked: boolean; fin?: boolean }): Buffer {
  const [head, body] = encodeFrame(opcode, payload, options.masked);
  if (options.fin === false) head[0] = (head[0] as number) & 0x7f;
  return Buffer.concat([head, body]);
}

test("fragments are joined around control frames, binary messages skipped, pings reported", () => {
  const bytes = Buffer.concat([
    frame(BINARY, Buffer.from("ignored"), { masked: true }),
    frame(TEXT, Buffer.from("hel"), { masked: true, fin: false }),
    frame(PING, Buffer.from("hi"), { masked: true }),
    frame(CONTINUATION, Buffer.from("lo "), { masked: true, fin: false }),
    frame(CONTINUATION, Buffer.from("wörld"), { masked: true }),
    frame(BINARY, Buffer.from("a"), { masked: true, fin: false }),
    frame(CONTINUATION, Buffer.from("b"), { masked: true }),
    frame(TEXT, Buffer.from("next"), { masked: true }),
  ]);
  for (const step of [1, 5, bytes.length]) {
    const { messages, stops } = parseAll("server", bytes, step);
    assert.deepEqual(messages, ["hello wörld", "next"]);
    assert.deepEqual(
      stops.map((s) => [s.kind, "payload" in s ? s.payload.toString() : ""]),
      [["ping", "hi"]],
    );
  }
});

test("protocol failures: each decided on the bytes that show it", () => {
  const fails = (role: "client" | "server", bytes: Uint8Array, maxMessage = 1 << 20): number | null => {
    const stop = parseAll(role, bytes, bytes.length, maxMessage).stops.at(-1);
    return stop?.kind === "fail" ? stop.code : null;
  };
  const hello = Buffer.from("hello");
  assert.equal(fails("server", frame(TEXT, hello, { masked: false })), CloseCode.protocolError); // unmasked to a server
  assert.equal(fails("client", frame(TEXT, hello, { masked: true })), CloseCode.protocolError); // masked to a client
  const rsv = frame(TEXT, hello, { masked: true });
  rsv[0] = (rsv[0] as number) | 0x40;
  assert.equal(fails("server", rsv), CloseCode.protocolError);
  assert.equal(fails("server", frame(PING, Buffer.alloc(126), { masked: true })), CloseCode.protocolError); // control over 125
  assert.equal(fails("server", frame(PING, hello, { masked: true, fin: false })), CloseCode.protocolError); // fragmented control
  assert.equal(fails("server", frame(CONTINUATION, hello, { masked: true })), CloseCode.protocolError); // nothing to continue
  const twoStarts = Buffer.concat([frame(TEXT, hello, { masked: true, fin: false }), frame(TEXT, hello, { masked: true })]);
  assert.equal(fails("server", twoStarts), CloseCode.protocolError);
  assert.equal(fails("server", frame(0x3, hello, { masked: true })), CloseCode.protocolError); // reserved opcode
  assert.equal(fails("server", frame(TEXT, Buffer.from([0xc3, 0x28]), { masked: true })), CloseCode.invalidData);
  // Over the limit: refused on the header alone, before any of the payload arrived.
  const big = frame(TEXT, Buffer.alloc(70_000, 0x61), { masked: true });
  assert.equal(fails("server", big.subarray(0, 10), 65_536), CloseCode.tooBig); // no mask, no payload yet
  const huge = Buffer.from([0x81, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0]); // a 64-bit length with its top bit set
  assert.equal(fails("server", huge), CloseCode.tooBig);
  // Fragments adding up past the limit: refused on the header of the one that crosses it.
  const parts = Buffer.concat([
    frame(TEXT, Buffer.alloc(40_000, 0x61), { masked: true, fin: false }),
    frame(CONTINUATION, Buffer.alloc(40_000, 0x61), { masked: true }).subarray(0, 4),
  ]);
  assert.equal(fails("server", parts, 65_536), CloseCode.tooBig);
  // After a failure nothing more is parsed.
  const parser = new FrameParser("server", 1 << 20);
  parser.push(frame(TEXT, hello, { masked: false }));
  assert.equal(parser.next([]).kind, "fail");
  parser.push(frame(TEXT, hello, { masked: true }));
  const found: Buffer[] = [];
  assert.equal(parser.next(found).kind, "more");
  assert.deepEqual(found, []);
});

test("the feed takes a batch as lines in one chunk and waits for room beyond its capacity", async () => {
  const feed = new MessageFeed(10);
  assert.equal(await feed.putMany([Buffer.from('{"a":1}'), Buffer.from('{"b":\n2}'), Buffer.from("{x\n")]), true);
  const first = await feed.read();
  // A pretty-printed message becomes one line; one that is not JSON keeps failing to parse.
  assert.equal(Buffer.from(first as Uint8Array).toString(), '{"a":1}\n{"b": 2}\n{x\u0000\n');
  assert.equal(await feed.putMany([Buffer.from("0123456789abc")]), true); // over capacity: still taken whole
  let second = false;
  const waiting = feed.putMany([Buffer.from("later")]).then((ok) => (second = ok));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(second, false);
  assert.equal(Buffer.from((await feed.read()) as Uint8Array).toString(), "0123456789abc\n");
  await waiting;
  assert.equal(second, true);
  assert.equal(Buffer.from((await feed.read()) as Uint8Array).toString(), "later\n");
  assert.equal(await feed.putMany([]), true);
  feed.close();
  assert.equal(await feed.putMany([Buffer.from("x")]), false);
  assert.equal(await feed.read(), null);
});

test("the sink hands each write's complete lines over at once, keeping a partial line", async () => {
  const batches: string[][] = [];
  const sink = new LineSink({ deliver: () => assert.fail("deliverAll is used"), deliverAll: (lines) => batches.push(lines.map((l) => Buffer.from(l).toString())), pending: () => 0 }, 1024, null);
  await sink.write(Buffer.from("one\ntwo\nthr"));
  await sink.write(Buffer.from("ee\n\nfour"));
  await sink.write(Buffer.from("\n"));
  assert.deepEqual(batches, [["one", "two"], ["three"], ["four"]]);
  const single: string[] = [];
  const plain = new LineSink({ deliver: (line) => single.push(Buffer.from(line).toString()), pending: () => 0 }, 1024, null);
  await plain.write(Buffer.from("a\nb\n"));
  assert.deepEqual(single, ["a", "b"]);
});

test("SSE events written in batches parse back the same; a large message is not copied", () => {
  const messages = [...Array.from({ length: 150 }, (_, i) => Buffer.from(`{"n":${i},"pad":"${"q".repeat(700)}"}`)), Buffer.from("B".repeat(20_000)), Buffer.from("{}")];
  const pieces = encodeEvents(messages);
  assert.ok(pieces.includes(messages[150] as Buffer));
  assert.deepEqual(join(pieces), Buffer.concat(messages.flatMap((m) => [Buffer.from("data: "), m, Buffer.from("\n\n")])));
  const parser = new SseParser(1 << 20);
  const bytes = join(pieces);
  const events: string[] = [];
  for (let at = 0; at < bytes.length; at += 5000) events.push(...parser.feed(bytes.subarray(at, at + 5000)).map((e) => e.toString()));
  assert.deepEqual(events, messages.map((m) => m.toString()));
});

test("the routing scan skips strings with escaped quotes and runs of backslashes", () => {
  const line = (s: string): Uint8Array => Buffer.from(s);
  const a = scan(line('{"params":{"t":"a\\"b\\\\","sessionId":"s\\\\"},"method":"session/update","x":"\\\\\\"}"}'));
  assert.equal(a?.method, "session/update");
  assert.equal(a?.paramsSession, "s\\");
  assert.equal(a?.isRequest, false);
  const b = scan(line('{"jsonrpc":"2.0","result":{"sessionId":"\\u00e9t\\u00e9"},"id":"k\\"1"}'));
  assert.equal(b?.isResponse, true);
  assert.equal(b?.id, 'k"1');
  assert.equal(b?.resultSession, "été");
  const c = scan(line('{"method":"m","params":{"t":"unterminated\\"}'));
  assert.equal(c?.method, "m");
  assert.equal(c?.params, null);
  assert.equal(c?.paramsSession, undefined);
});
