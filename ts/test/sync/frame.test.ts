import assert from "node:assert/strict";
import { test } from "node:test";

import {
  type ByteSource,
  binHeaderSize,
  DEFAULT_LIMITS,
  encode,
  FrameError,
  type FrameErrorDetail,
  FrameReader,
  FrameWriter,
  type Limits,
  MessageType,
  messageTypeFromByte,
  writeBinHeader,
} from "../../src/sync/frame.js";
import { bytes, MemorySink, MemorySource, text } from "./memory.js";

function readOne(wire: Uint8Array, limits: Limits = DEFAULT_LIMITS, chunk?: number): [MessageType, string, Uint8Array] | null {
  const frame = new FrameReader(new MemorySource(wire, chunk), limits).read();
  return frame === null ? null : [frame.kind, text(frame.name), frame.payload.slice()];
}

function frameError(wire: Uint8Array | number[], limits: Limits = DEFAULT_LIMITS): FrameErrorDetail {
  try {
    readOne(Uint8Array.from(wire), limits);
  } catch (error) {
    assert.ok(error instanceof FrameError, `not a FrameError: ${String(error)}`);
    return error.detail;
  }
  assert.fail("the tuple was accepted");
}

const encoded = (kind: MessageType, name: string, payload: Uint8Array | string): Uint8Array =>
  encode(kind, bytes(name), typeof payload === "string" ? bytes(payload) : payload);

const pattern = (length: number, modulo: number): Uint8Array => Uint8Array.from({ length }, (_, index) => index % modulo);

test("a request is written as the exact wire bytes", () => {
  assert.deepEqual([...encoded(MessageType.Request, "echo", "hi")], [0x93, 0x01, 0xc4, 4, ...bytes("echo"), 0xc4, 2, ...bytes("hi")]);
});

test("an empty name and payload use bin8 of zero", () => {
  assert.deepEqual([...encoded(MessageType.Response, "", "")], [0x93, 0x04, 0xc4, 0, 0xc4, 0]);
});

test("the bin header takes the shortest form at each boundary", () => {
  const cases: [number, number[]][] = [
    [0, [0xc4, 0]],
    [255, [0xc4, 0xff]],
    [256, [0xc5, 0x01, 0x00]],
    [65535, [0xc5, 0xff, 0xff]],
    [65536, [0xc6, 0x00, 0x01, 0x00, 0x00]],
    [0xffff_ffff, [0xc6, 0xff, 0xff, 0xff, 0xff]],
  ];
  for (const [length, expected] of cases) {
    const out = new Uint8Array(8);
    const end = writeBinHeader(out, 0, length);
    assert.deepEqual([...out.subarray(0, end)], expected, `length ${length}`);
    assert.equal(binHeaderSize(length), expected.length);
  }
});

test("boundary lengths round-trip through the writer and the reader, in one read or in small pieces", () => {
  for (const length of [0, 1, 255, 256, 65535, 65536, 65537, 200_000]) {
    const payload = pattern(length, 251);
    const sink = new MemorySink();
    new FrameWriter(sink).write(MessageType.Call, bytes("readFile"), payload);
    const wire = sink.bytes();
    const headerAt = 2 + 2 + "readFile".length;
    const expectedHeader = new Uint8Array(5);
    const headerEnd = writeBinHeader(expectedHeader, 0, length);
    assert.deepEqual(wire.subarray(headerAt, headerAt + headerEnd), expectedHeader.subarray(0, headerEnd));
    for (const chunk of [undefined, 7]) {
      const [kind, name, read] = readOne(wire, DEFAULT_LIMITS, chunk) ?? assert.fail("no tuple");
      assert.equal(kind, MessageType.Call);
      assert.equal(name, "readFile");
      assert.deepEqual(read, payload, `length ${length}, chunk ${chunk}`);
    }
  }
});

test("a string payload is written as UTF-8, small or large", () => {
  for (const payload of ['{"é":"😀"}', "ü".repeat(40_000)]) {
    const sink = new MemorySink();
    new FrameWriter(sink).write(MessageType.Request, bytes("m"), payload);
    const [, , read] = readOne(sink.bytes()) ?? assert.fail("no tuple");
    assert.equal(text(read), payload);
  }
});

test("the reader accepts a uint8 type and longer-than-needed bin forms", () => {
  const wire = Uint8Array.from([0x93, 0xcc, 0x05, 0xc5, 0x00, 0x01, 0x78, 0xc6, 0, 0, 0, 2, 0x6e, 0x6f]);
  const [kind, name, payload] = readOne(wire) ?? assert.fail("no tuple");
  assert.deepEqual([kind, name, text(payload)], [MessageType.Error, "x", "no"]);
});

test("every type byte maps both ways", () => {
  for (let value = 1; value <= 6; value++) assert.equal(messageTypeFromByte(value), value);
  for (const value of [0, 7, 0xcc]) assert.equal(messageTypeFromByte(value), undefined);
});

test("a clean end of stream reads as null", () => {
  assert.equal(readOne(new Uint8Array(0)), null);
});

test("consecutive tuples are read in order into reused buffers", () => {
  const wire = Buffer.concat([encoded(MessageType.Call, "fileExists", '"/a"'), encoded(MessageType.Response, "getSourceFile", new Uint8Array(300).fill(7))]);
  const reader = new FrameReader(new MemorySource(wire));
  const first = reader.read() ?? assert.fail("first");
  assert.deepEqual([first.kind, text(first.name)], [MessageType.Call, "fileExists"]);
  const second = reader.read() ?? assert.fail("second");
  assert.deepEqual([second.kind, text(second.name), second.payload.length], [MessageType.Response, "getSourceFile", 300]);
  assert.equal(first.payload.buffer, second.payload.buffer, "the payload buffer is reused");
  assert.equal(reader.read(), null);
});

test("a wrong array header is refused", () => {
  assert.deepEqual(frameError([0x92, 0x01]), { reason: "array-header", found: 0x92 });
  assert.throws(() => readOne(Uint8Array.from([0x92])), { name: "FrameError", message: "expected a fixarray of 3 (0x93), found 0x92" });
});

test("a type marker that is not an unsigned integer is refused", () => {
  for (const marker of [0xa1, 0xcd, 0xd0, 0xff]) {
    assert.deepEqual(frameError([0x93, marker, 0xc4, 0, 0xc4, 0]), { reason: "type-marker", found: marker });
  }
});

test("a type outside 1 to 6 is refused", () => {
  assert.deepEqual(frameError([0x93, 0x00]), { reason: "unknown-type", value: 0 });
  assert.deepEqual(frameError([0x93, 0x07]), { reason: "unknown-type", value: 7 });
  assert.deepEqual(frameError([0x93, 0xcc, 0xff]), { reason: "unknown-type", value: 255 });
});

test("a name or payload that is not bin is refused", () => {
  // A str8 name (0xd9) and a fixstr payload (0xa2) are MessagePack, but not bin.
  assert.deepEqual(frameError([0x93, 0x01, 0xd9, 1, 0x78, 0xc4, 0]), { reason: "bin-marker", field: "name", found: 0xd9 });
  assert.deepEqual(frameError([0x93, 0x01, 0xc4, 1, 0x78, 0xa2, 0x68, 0x69]), { reason: "bin-marker", field: "payload", found: 0xa2 });
});

test("lengths over the limits are refused before the bytes are read", () => {
  const limits = { maxName: 3, maxPayload: 256 };
  assert.deepEqual(frameError(encoded(MessageType.Request, "echo", ""), limits), { reason: "too-long", field: "name", length: 4, limit: 3 });
  // The payload header says 257 bytes; none follow, and none are needed to refuse it.
  assert.deepEqual(frameError([0x93, 0x04, 0xc4, 1, 0x78, 0xc5, 0x01, 0x01], limits), {
    reason: "too-long",
    field: "payload",
    length: 257,
    limit: 256,
  });
  // A bin32 length over 2^31 is read unsigned.
  assert.deepEqual(frameError([0x93, 0x04, 0xc4, 1, 0x78, 0xc6, 0xff, 0xff, 0xff, 0xff], limits), {
    reason: "too-long",
    field: "payload",
    length: 0xffff_ffff,
    limit: 256,
  });
  // Exactly at the limit is fine.
  assert.notEqual(readOne(encoded(MessageType.Response, "x", new Uint8Array(256)), limits), null);
});

test("an end of stream inside a tuple names the stage", () => {
  const whole = encoded(MessageType.Response, "name", new Uint8Array(300).fill(1));
  const expected: [number, string][] = [
    [1, "message type"],
    [2, "name length"],
    [3, "name length"],
    [5, "name"],
    [8, "payload length"],
    [10, "payload length"],
    [11, "payload"],
    [whole.length - 1, "payload"],
  ];
  for (const [cut, stage] of expected) {
    assert.deepEqual(frameError(whole.subarray(0, cut)), { reason: "unexpected-eof", stage }, `cut at ${cut}`);
  }
});

test("a failing source is an io error carrying the cause", () => {
  const failure = Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
  const source: ByteSource = {
    read: () => {
      throw failure;
    },
  };
  try {
    new FrameReader(source).read();
    assert.fail("read succeeded");
  } catch (error) {
    assert.ok(error instanceof FrameError);
    assert.deepEqual(error.detail, { reason: "io", cause: failure });
  }
});

test("a swapped-out payload survives the next read", () => {
  const wire = Buffer.concat([encoded(MessageType.Request, "a", "first"), encoded(MessageType.Request, "b", "second")]);
  const reader = new FrameReader(new MemorySource(wire));
  const first = reader.read() ?? assert.fail("first");
  const length = first.payload.length;
  const kept = reader.swapPayload(new Uint8Array(16));
  const second = reader.read() ?? assert.fail("second");
  assert.deepEqual([text(kept.subarray(0, length)), text(second.payload)], ["first", "second"]);
  assert.notEqual(kept.buffer, second.payload.buffer);
});

test("a payload too long for a bin32 is refused before anything is written", () => {
  const sink = new MemorySink();
  const huge = { length: 0x1_0000_0000 } as unknown as Uint8Array;
  assert.throws(() => new FrameWriter(sink).write(MessageType.Response, bytes("x"), huge), RangeError);
  assert.equal(sink.bytes().length, 0);
});
