// Tuples on the wire: reading and writing `[type, name, payload]`.
//
// Every message of the sync pipe channel is a MessagePack array of three
// elements, always in one shape (facts of the TypeScript 7 API server's sync
// channel, see `notes/sync.md`):
//
//   0x93                                   fixarray of 3
//   0x01-0x06, or 0xcc + one byte          the message type (positive fixint; a reader also takes uint8)
//   0xc4 len8 / 0xc5 len16 BE / 0xc6 len32 BE, then the bytes   the name
//   the same bin forms                     the payload
//
// The reader is strict: any other byte where one of these is expected is a
// `FrameError` naming what was expected and what was found, and a length over
// the configured `Limits` is refused before anything is allocated. The writer
// always uses the shortest bin form and a positive fixint type.

import { readSync, writeSync } from "node:fs";

/** The first byte of every tuple: a MessagePack fixarray of three elements. */
export const ARRAY_HEADER = 0x93;
/** MessagePack `uint8`: a type byte follows (accepted on read, never written). */
export const UINT8_MARKER = 0xcc;
/** MessagePack `bin 8`: a one-byte length follows. */
export const BIN8 = 0xc4;
/** MessagePack `bin 16`: a big-endian two-byte length follows. */
export const BIN16 = 0xc5;
/** MessagePack `bin 32`: a big-endian four-byte length follows. */
export const BIN32 = 0xc6;

/** What a tuple is. Types 1–3 go from the client to the server, 4–6 back. */
export const MessageType = {
  /** Client → server: call the method `name` with `payload`. */
  Request: 1,
  /** Client → server: the answer to a `Call`. */
  CallResponse: 2,
  /** Client → server: a `Call` failed; the payload is UTF-8 text. */
  CallError: 3,
  /** Server → client: the result of the request in flight. */
  Response: 4,
  /** Server → client: the request in flight failed; the payload is UTF-8 text. */
  Error: 5,
  /** Server → client: call back the client's callback `name` mid-request. */
  Call: 6,
} as const;

/** One of the six wire values. */
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

const TYPE_NAMES = ["", "Request", "CallResponse", "CallError", "Response", "Error", "Call"] as const;

/** The name of a message type (`Request`, `Call`, …). */
export function messageTypeName(kind: MessageType): string {
  return TYPE_NAMES[kind] ?? `type ${String(kind)}`;
}

/** The type with this wire value, or `undefined` outside 1–6. */
export function messageTypeFromByte(value: number): MessageType | undefined {
  return Number.isInteger(value) && value >= 1 && value <= 6 ? (value as MessageType) : undefined;
}

/** Which bin field of a tuple an error is about. */
export type Field = "name" | "payload";

/** The largest name and payload a reader accepts. */
export interface Limits {
  /** Longest accepted name, in bytes (default 64 KiB). */
  readonly maxName: number;
  /** Longest accepted payload, in bytes (default 1 GiB; the wire allows up to 4 GiB − 1). */
  readonly maxPayload: number;
}

/** 64 KiB names, 1 GiB payloads. */
export const DEFAULT_LIMITS: Limits = Object.freeze({ maxName: 64 * 1024, maxPayload: 1 << 30 });

/** What went wrong reading a tuple (mirrors the Rust `FrameError` variants). */
export type FrameErrorDetail =
  | { readonly reason: "array-header"; readonly found: number }
  | { readonly reason: "type-marker"; readonly found: number }
  | { readonly reason: "unknown-type"; readonly value: number }
  | { readonly reason: "bin-marker"; readonly field: Field; readonly found: number }
  | { readonly reason: "too-long"; readonly field: Field; readonly length: number; readonly limit: number }
  | { readonly reason: "unexpected-eof"; readonly stage: string }
  | { readonly reason: "io"; readonly cause: unknown };

const hex = (byte: number): string => `0x${byte.toString(16).padStart(2, "0")}`;

/** A frame failure's text, rendered from its detail (what `FrameError`'s message says). */
export function describeFrame(detail: FrameErrorDetail): string {
  switch (detail.reason) {
    case "array-header":
      return `expected a fixarray of 3 (0x93), found ${hex(detail.found)}`;
    case "type-marker":
      return `expected the message type as a positive fixint or uint8 (0xcc), found ${hex(detail.found)}`;
    case "unknown-type":
      return `unknown message type ${detail.value} (expected 1 to 6)`;
    case "bin-marker":
      return `expected bin8, bin16 or bin32 (0xc4-0xc6) for the ${detail.field}, found ${hex(detail.found)}`;
    case "too-long":
      return `${detail.field} of ${detail.length} bytes is over the limit of ${detail.limit} bytes`;
    case "unexpected-eof":
      return `end of stream in the middle of a tuple, while reading the ${detail.stage}`;
    case "io":
      return "could not read a tuple";
  }
}

/** A tuple that could not be read. */
export class FrameError extends Error {
  override readonly name = "FrameError";
  constructor(readonly detail: FrameErrorDetail) {
    super(describeFrame(detail), detail.reason === "io" ? { cause: detail.cause } : undefined);
  }
}

/** A blocking source of bytes: `read` fills at most `length` bytes at `offset` and returns how many (0: end of stream). */
export interface ByteSource {
  read(into: Uint8Array, offset: number, length: number): number;
}

/** A blocking sink of bytes: `write` writes at most `length` bytes from `offset` and returns how many. */
export interface ByteSink {
  write(from: Uint8Array, offset: number, length: number): number;
}

/** Node's error code of a failed system call, if it has one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

// A descriptor opened non-blocking by someone else answers EAGAIN instead of
// blocking. Pure JS has no poll(2): such a descriptor is waited on in short
// bounded naps, which a blocking descriptor (what the client and our servers
// use) never needs.
const nap = new Int32Array(new SharedArrayBuffer(4));
function waitForDescriptor(): void {
  Atomics.wait(nap, 0, 0, 1);
}

/** A file descriptor read with blocking `read(2)` calls (`fs.readSync`). */
export class FdSource implements ByteSource {
  constructor(readonly fd: number) {}
  read(into: Uint8Array, offset: number, length: number): number {
    for (;;) {
      try {
        return readSync(this.fd, into, offset, length, null);
      } catch (error) {
        const code = errorCode(error);
        if (code === "EAGAIN" || code === "EWOULDBLOCK") {
          waitForDescriptor();
          continue;
        }
        if (code === "EOF") return 0; // Windows pipes; harmless elsewhere.
        throw error;
      }
    }
  }
}

/** A file descriptor written with blocking `write(2)` calls (`fs.writeSync`). */
export class FdSink implements ByteSink {
  constructor(readonly fd: number) {}
  write(from: Uint8Array, offset: number, length: number): number {
    for (;;) {
      try {
        return writeSync(this.fd, from, offset, length);
      } catch (error) {
        const code = errorCode(error);
        if (code === "EAGAIN" || code === "EWOULDBLOCK") {
          waitForDescriptor();
          continue;
        }
        throw error;
      }
    }
  }
}

/** One tuple read. `name` and `payload` are views of the reader's buffers, valid until its next read. */
export interface Frame {
  readonly kind: MessageType;
  readonly name: Uint8Array;
  readonly payload: Uint8Array;
}

const READ_AHEAD = 64 * 1024;
const EMPTY = new Uint8Array(0);

/** A buffer of at least `length` bytes: `current` when it is large enough, else a larger one. */
function ensureCapacity(current: Uint8Array, length: number): Uint8Array {
  if (current.length >= length) return current;
  // Grow geometrically so that a run of growing payloads reallocates rarely.
  return new Uint8Array(Math.max(length, Math.min(current.length * 2, 0xffff_ffff)));
}

/** Reads tuples from a byte source into buffers reused from one tuple to the next. */
export class FrameReader {
  private readonly ahead = new Uint8Array(READ_AHEAD);
  private aheadStart = 0;
  private aheadEnd = 0;
  private nameBuffer: Uint8Array = new Uint8Array(64);
  private nameLength = 0;
  private payloadBuffer: Uint8Array = new Uint8Array(READ_AHEAD) as Uint8Array;
  private payloadLength = 0;

  constructor(
    private readonly source: ByteSource,
    readonly limits: Limits = DEFAULT_LIMITS,
  ) {}

  /** Reads the next tuple; `null` is a clean end of stream (nothing of a new tuple had been read). */
  read(): Frame | null {
    if (this.aheadStart === this.aheadEnd && !this.fill()) return null;
    const first = this.ahead[this.aheadStart++] as number;
    if (first !== ARRAY_HEADER) throw new FrameError({ reason: "array-header", found: first });
    const kind = this.readType();
    this.nameLength = this.readBinLength("name");
    this.nameBuffer = ensureCapacity(this.nameBuffer, this.nameLength);
    this.readExact(this.nameBuffer, this.nameLength, "name");
    this.payloadLength = this.readBinLength("payload");
    this.payloadBuffer = ensureCapacity(this.payloadBuffer, this.payloadLength);
    this.readExact(this.payloadBuffer, this.payloadLength, "payload");
    return { kind, name: this.name, payload: this.payload };
  }

  /** The last name read (empty before the first read). */
  get name(): Uint8Array {
    return this.nameLength === 0 ? EMPTY : this.nameBuffer.subarray(0, this.nameLength);
  }

  /** The last payload read (empty before the first read). */
  get payload(): Uint8Array {
    return this.payloadLength === 0 ? EMPTY : this.payloadBuffer.subarray(0, this.payloadLength);
  }

  /**
   * Gives the reader `spare` to read the next payloads into and returns its
   * previous payload buffer whole (the last payload is its first
   * `payload.length` bytes): a caller that must keep a payload across the next
   * read takes it out this way without a copy, and hands the buffer back later.
   */
  swapPayload(spare: Uint8Array): Uint8Array {
    const previous = this.payloadBuffer;
    this.payloadBuffer = spare;
    this.payloadLength = 0;
    return previous;
  }

  /** Refills the read-ahead buffer; false at end of stream. */
  private fill(): boolean {
    let count: number;
    try {
      count = this.source.read(this.ahead, 0, this.ahead.length);
    } catch (error) {
      throw new FrameError({ reason: "io", cause: error });
    }
    this.aheadStart = 0;
    this.aheadEnd = count;
    return count > 0;
  }

  private readByte(stage: string): number {
    if (this.aheadStart === this.aheadEnd && !this.fill()) {
      throw new FrameError({ reason: "unexpected-eof", stage });
    }
    return this.ahead[this.aheadStart++] as number;
  }

  private readType(): MessageType {
    const marker = this.readByte("message type");
    let value: number;
    if (marker <= 0x7f) value = marker;
    else if (marker === UINT8_MARKER) value = this.readByte("message type");
    else throw new FrameError({ reason: "type-marker", found: marker });
    const kind = messageTypeFromByte(value);
    if (kind === undefined) throw new FrameError({ reason: "unknown-type", value });
    return kind;
  }

  private readBinLength(field: Field): number {
    const stage = `${field} length`;
    const marker = this.readByte(stage);
    let length: number;
    switch (marker) {
      case BIN8:
        length = this.readByte(stage);
        break;
      case BIN16:
        length = (this.readByte(stage) << 8) | this.readByte(stage);
        break;
      case BIN32:
        length =
          this.readByte(stage) * 0x100_0000 +
          ((this.readByte(stage) << 16) | (this.readByte(stage) << 8) | this.readByte(stage));
        break;
      default:
        throw new FrameError({ reason: "bin-marker", field, found: marker });
    }
    const limit = field === "name" ? this.limits.maxName : this.limits.maxPayload;
    if (length > limit) throw new FrameError({ reason: "too-long", field, length, limit });
    return length;
  }

  /** Fills `into[0..length]`: first from the read-ahead, then straight from the source for large remainders. */
  private readExact(into: Uint8Array, length: number, stage: string): void {
    let filled = Math.min(length, this.aheadEnd - this.aheadStart);
    into.set(this.ahead.subarray(this.aheadStart, this.aheadStart + filled), 0);
    this.aheadStart += filled;
    while (filled < length) {
      const missing = length - filled;
      if (missing >= this.ahead.length) {
        let count: number;
        try {
          count = this.source.read(into, filled, missing);
        } catch (error) {
          throw new FrameError({ reason: "io", cause: error });
        }
        if (count === 0) throw new FrameError({ reason: "unexpected-eof", stage });
        filled += count;
      } else {
        if (!this.fill()) throw new FrameError({ reason: "unexpected-eof", stage });
        const take = Math.min(missing, this.aheadEnd);
        into.set(this.ahead.subarray(0, take), filled);
        this.aheadStart = take;
        filled += take;
      }
    }
  }
}

/** Whether a callback's or handler's return value can be sent: bytes, a string, or nothing. */
export function isPayload(value: unknown): value is Uint8Array | string | undefined {
  return value === undefined || typeof value === "string" || value instanceof Uint8Array;
}

/** The largest length a bin32 can state. */
export const MAX_BIN_LENGTH = 0xffff_ffff;

/** Writes the shortest bin header for `length` at `at`; returns the offset after it. */
export function writeBinHeader(out: Uint8Array, at: number, length: number): number {
  if (length <= 0xff) {
    out[at] = BIN8;
    out[at + 1] = length;
    return at + 2;
  }
  if (length <= 0xffff) {
    out[at] = BIN16;
    out[at + 1] = length >>> 8;
    out[at + 2] = length & 0xff;
    return at + 3;
  }
  out[at] = BIN32;
  out[at + 1] = length >>> 24;
  out[at + 2] = (length >>> 16) & 0xff;
  out[at + 3] = (length >>> 8) & 0xff;
  out[at + 4] = length & 0xff;
  return at + 5;
}

/** The size of the shortest bin header for `length`. */
export function binHeaderSize(length: number): number {
  return length <= 0xff ? 2 : length <= 0xffff ? 3 : 5;
}

function checkLength(field: Field, length: number): void {
  if (length > MAX_BIN_LENGTH) {
    throw new RangeError(`${field} of ${length} bytes does not fit a bin32`);
  }
}

/** One whole tuple as a new byte array (for tests and one-off messages; `FrameWriter` reuses its buffer). */
export function encode(kind: MessageType, name: Uint8Array, payload: Uint8Array): Uint8Array {
  checkLength("name", name.length);
  checkLength("payload", payload.length);
  const out = new Uint8Array(2 + binHeaderSize(name.length) + name.length + binHeaderSize(payload.length) + payload.length);
  out.set(payload, writeHeader(out, kind, name, payload.length));
  return out;
}

/** Writes the array marker, type, name and payload length at 0; returns where the payload goes. */
function writeHeader(out: Uint8Array, kind: MessageType, name: Uint8Array, payloadLength: number): number {
  out[0] = ARRAY_HEADER;
  out[1] = kind;
  let at = writeBinHeader(out, 2, name.length);
  out.set(name, at);
  at += name.length;
  return writeBinHeader(out, at, payloadLength);
}

/** Payloads up to this size are copied next to their header and written with one `write`. */
const COALESCE_LIMIT = 64 * 1024;
const utf8 = new TextEncoder();

/** Writes tuples to a byte sink, assembling each in a reused buffer. */
export class FrameWriter {
  private buffer = new Uint8Array(COALESCE_LIMIT + 64);

  constructor(private readonly sink: ByteSink) {}

  /** Writes one tuple; a string payload is written as UTF-8 (encoded straight into the buffer when it fits). */
  write(kind: MessageType, name: Uint8Array, payload: Uint8Array | string): void {
    checkLength("name", name.length);
    const text = typeof payload === "string" ? payload : undefined;
    const length = text === undefined ? (payload as Uint8Array).length : Buffer.byteLength(text, "utf8");
    checkLength("payload", length);
    const headerLength = 2 + binHeaderSize(name.length) + name.length + binHeaderSize(length);
    if (headerLength + Math.min(length, COALESCE_LIMIT) > this.buffer.length) {
      this.buffer = new Uint8Array(headerLength + COALESCE_LIMIT);
    }
    const at = writeHeader(this.buffer, kind, name, length);
    if (length <= COALESCE_LIMIT) {
      if (text === undefined) this.buffer.set(payload as Uint8Array, at);
      else utf8.encodeInto(text, this.buffer.subarray(at, at + length));
      this.writeAll(this.buffer, at + length);
    } else {
      this.writeAll(this.buffer, at);
      const bytes = text === undefined ? (payload as Uint8Array) : utf8.encode(text);
      this.writeAll(bytes, bytes.length);
    }
  }

  private writeAll(bytes: Uint8Array, length: number): void {
    let written = 0;
    while (written < length) written += this.sink.write(bytes, written, length - written);
  }
}
