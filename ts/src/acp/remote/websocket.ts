/**
 * RFC 6455 on a Node socket, both ends, with what ACP needs and nothing more: text
 * messages both ways, binary messages skipped, pings answered, fragments joined,
 * control frames between fragments, the close handshake, and a size bound checked on
 * each frame's header before its payload is buffered (1009). A client masks what it
 * sends; a server refuses unmasked frames (1002). A text message that is not UTF-8
 * fails the socket (1007). No extensions and no subprotocols are negotiated.
 *
 * The reading side pulls from the socket only when its consumer asked for the next
 * messages and none is complete, so a consumer that waits (a full connection feed) stops
 * the socket, and TCP flow control tells the peer. It parses every frame a chunk holds
 * at once (`FrameParser`, synchronous) and hands the messages over together
 * (`receiveMany`). The writing side writes the frames of many messages in one system
 * call (`sendTexts`) and reports the socket's own backpressure (`false`: wait for
 * `drained()`).
 */

import { createHash, randomBytes, randomFillSync } from "node:crypto";
import { isUtf8 } from "node:buffer";
import type { Duplex } from "node:stream";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const CONTINUATION = 0x0;
const TEXT = 0x1;
const BINARY = 0x2;
const CLOSE = 0x8;
const PING = 0x9;
const PONG = 0xa;

/** Close codes this module uses. */
export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  invalidData: 1007,
  tooBig: 1009,
  tryAgainLater: 1013,
} as const;

/** The `Sec-WebSocket-Accept` value that answers `key`. */
export function acceptKey(key: string): string {
  return createHash("sha1").update(key + GUID).digest("base64");
}

/** A fresh `Sec-WebSocket-Key`. */
export function newKey(): string {
  return randomBytes(16).toString("base64");
}

/** Payloads up to this size are copied into the buffer of the frames around them;
 * larger unmasked ones are written as they are, after their header. */
const COPY_LIMIT = 16 * 1024;
/** The size one buffer of small frames grows to before the next one starts. */
const BATCH_BYTES = 64 * 1024;

/** The bytes of a frame's header for a payload of `length` bytes. */
function headerLength(length: number, masked: boolean): number {
  return 2 + (length < 126 ? 0 : length < 0x10000 ? 2 : 8) + (masked ? 4 : 0);
}

/** Writes a frame's header (FIN set) at `at` and, when `mask` is given, the mask; returns where the payload goes. */
function writeHeader(out: Buffer, at: number, opcode: number, length: number, mask: Uint8Array | null): number {
  out[at] = 0x80 | opcode;
  const bit = mask !== null ? 0x80 : 0;
  if (length < 126) {
    out[at + 1] = bit | length;
    at += 2;
  } else if (length < 0x10000) {
    out[at + 1] = bit | 126;
    out.writeUInt16BE(length, at + 2);
    at += 4;
  } else {
    out[at + 1] = bit | 127;
    out.writeUInt32BE(Math.floor(length / 0x100000000), at + 2);
    out.writeUInt32BE(length >>> 0, at + 6);
    at += 10;
  }
  if (mask !== null) {
    out.set(mask, at);
    at += 4;
  }
  return at;
}

/** Masking keys, drawn from the CSPRNG a pool at a time (RFC 6455 §5.3: unpredictable per frame). */
const maskPool = Buffer.allocUnsafeSlow(4096);
let maskAt = maskPool.length;

function nextMask(): Uint8Array {
  if (maskAt + 4 > maskPool.length) {
    randomFillSync(maskPool);
    maskAt = 0;
  }
  const mask = maskPool.subarray(maskAt, maskAt + 4);
  maskAt += 4;
  return mask;
}

const word8 = new Uint8Array(4);
const word32 = new Uint32Array(word8.buffer);

/**
 * Copies `source` into `target` at `at`, each byte XOR-ed with the mask byte of its
 * position (`mask[i % 4]` for the `i`-th byte of `source`): masking and unmasking alike.
 * Whole 32-bit words where `target` is aligned, bytes around them. `target` may be
 * `source` itself (at the same place), to mask in place.
 */
export function maskInto(target: Uint8Array, at: number, source: Uint8Array, mask: Uint8Array): void {
  const n = source.length;
  let i = 0;
  const lead = Math.min(n, (4 - ((target.byteOffset + at) & 3)) & 3);
  for (; i < lead; i++) target[at + i] = (source[i] as number) ^ (mask[i & 3] as number);
  // From here on the key bytes come in this order (payload positions i, i + 1, …).
  const k0 = mask[i & 3] as number;
  const k1 = mask[(i + 1) & 3] as number;
  const k2 = mask[(i + 2) & 3] as number;
  const k3 = mask[(i + 3) & 3] as number;
  const words = (n - i) >>> 2;
  if (words >= 8) {
    if (target !== source) target.set(source.subarray(i, i + 4 * words), at + i);
    // The key as the host reads four bytes at an aligned position.
    word8[0] = k0;
    word8[1] = k1;
    word8[2] = k2;
    word8[3] = k3;
    const key = word32[0] as number;
    const view = new Uint32Array(target.buffer, target.byteOffset + at + i, words);
    for (let w = 0; w < words; w++) view[w] = (view[w] as number) ^ key;
    i += 4 * words;
  } else {
    // Few bytes: no view worth making.
    for (const end = i + 4 * words; i < end; i += 4) {
      target[at + i] = (source[i] as number) ^ k0;
      target[at + i + 1] = (source[i + 1] as number) ^ k1;
      target[at + i + 2] = (source[i + 2] as number) ^ k2;
      target[at + i + 3] = (source[i + 3] as number) ^ k3;
    }
  }
  for (; i < n; i++) target[at + i] = (source[i] as number) ^ (mask[i & 3] as number);
}

/** One frame's bytes: the header (and mask), then the payload (masked: a copy). */
export function encodeFrame(opcode: number, payload: Uint8Array, masked: boolean): [Buffer, Uint8Array] {
  const mask = masked ? nextMask() : null;
  const head = Buffer.allocUnsafe(headerLength(payload.length, masked));
  writeHeader(head, 0, opcode, payload.length, mask);
  if (mask === null) return [head, payload];
  const body = Buffer.allocUnsafe(payload.length);
  maskInto(body, 0, payload, mask);
  return [head, body];
}

/** The bytes of one frame per payload (FIN set, `opcode` each), as few buffers as is
 * cheap: runs of small frames share one buffer (up to `BATCH_BYTES`), a large unmasked
 * payload is not copied (its header comes before it), a large masked one gets a buffer
 * of its own. Written in order (corked), they are the frames in order. */
export function encodeFrames(opcode: number, payloads: readonly Uint8Array[], masked: boolean): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  const count = payloads.length;
  let i = 0;
  while (i < count) {
    const first = payloads[i] as Uint8Array;
    if (first.length > COPY_LIMIT) {
      const length = first.length;
      const mask = masked ? nextMask() : null;
      const headSize = headerLength(length, masked);
      if (mask === null) {
        const head = Buffer.allocUnsafe(headSize);
        writeHeader(head, 0, opcode, length, null);
        pieces.push(head, first);
      } else {
        const frame = Buffer.allocUnsafe(headSize + length);
        maskInto(frame, writeHeader(frame, 0, opcode, length, mask), first, mask);
        pieces.push(frame);
      }
      i++;
      continue;
    }
    let size = 0;
    let end = i;
    while (end < count) {
      const length = (payloads[end] as Uint8Array).length;
      if (length > COPY_LIMIT) break;
      const frameSize = headerLength(length, masked) + length;
      if (end > i && size + frameSize > BATCH_BYTES) break;
      size += frameSize;
      end++;
    }
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (; i < end; i++) {
      const payload = payloads[i] as Uint8Array;
      const mask = masked ? nextMask() : null;
      at = writeHeader(out, at, opcode, payload.length, mask);
      if (mask === null) out.set(payload, at);
      else maskInto(out, at, payload, mask);
      at += payload.length;
    }
    pieces.push(out);
  }
  return pieces;
}

/** What stopped `FrameParser.next`. */
export type ParseStop =
  /** More bytes are needed. */
  | { readonly kind: "more" }
  /** A control frame (its payload unmasked). */
  | { readonly kind: "ping" | "pong" | "close"; readonly payload: Buffer }
  /** A protocol failure: the socket must be failed with `code`. */
  | { readonly kind: "fail"; readonly code: number };

const MORE: ParseStop = { kind: "more" };
const EMPTY = Buffer.alloc(0);

/**
 * The reading half of RFC 6455 on bytes, without the socket: fed the chunks read
 * (`push`), it yields whole text messages, control frames and failures (`next`). Each
 * frame's header is checked before its payload is waited for (a frame or a message
 * over `maxMessage` fails with 1009 at once); a frame split across chunks is joined once
 * it is complete. A text message in one unmasked frame is handed out as a view of the
 * bytes read (a masked one is unmasked into a buffer of its own), so a consumer that
 * keeps it copies it; fragments are copied as they arrive (they never pin the chunks
 * they came in). Binary messages are skipped, masked ones without being unmasked.
 */
export class FrameParser {
  /** The chunk being parsed, from `at`. */
  private chunk: Buffer = EMPTY;
  private at = 0;
  /** The chunks after it. */
  private queue: Buffer[] = [];
  private queued = 0;
  /** The message being assembled from fragments. */
  private parts: Buffer[] = [];
  private partsSize = 0;
  private kind: number | null = null;
  private failed = false;

  constructor(
    private readonly role: "client" | "server",
    /** The largest message (and frame) accepted, in bytes. */
    private readonly maxMessage: number,
  ) {}

  /** The bytes received and not parsed yet. */
  get buffered(): number {
    return this.chunk.length - this.at + this.queued;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.at >= this.chunk.length && this.queue.length === 0) {
      this.chunk = chunk;
      this.at = 0;
    } else {
      this.queue.push(chunk);
      this.queued += chunk.length;
    }
  }

  /** Makes the next `n` bytes contiguous in `chunk` from `at`; `false` while fewer are buffered. */
  private gather(n: number): boolean {
    let have = this.chunk.length - this.at;
    if (have >= n) return true;
    if (have === 0 && this.queue.length > 0) {
      this.chunk = this.queue.shift() as Buffer;
      this.at = 0;
      this.queued -= this.chunk.length;
      have = this.chunk.length;
      if (have >= n) return true;
    }
    if (have + this.queued < n) return false;
    // The bytes straddle chunks: exactly those `n` are copied together.
    const joined = Buffer.allocUnsafe(n);
    this.chunk.copy(joined, 0, this.at);
    let filled = have;
    while (filled < n) {
      const next = this.queue[0] as Buffer;
      const take = Math.min(next.length, n - filled);
      next.copy(joined, filled, 0, take);
      filled += take;
      this.queued -= take;
      if (take === next.length) this.queue.shift();
      else this.queue[0] = next.subarray(take);
    }
    this.chunk = joined;
    this.at = 0;
    return true;
  }

  /** Parses what is buffered: appends every complete text message to `messages`, and
   * stops at a control frame, a failure (after which it parses nothing more), or when
   * more bytes are needed. */
  next(messages: Buffer[]): ParseStop {
    if (this.failed) return MORE;
    for (;;) {
      if (!this.gather(2)) return MORE;
      let chunk = this.chunk;
      let at = this.at;
      const first = chunk[at] as number;
      const second = chunk[at + 1] as number;
      if ((first & 0x70) !== 0) return this.fail(CloseCode.protocolError); // no extension negotiated
      const masked = (second & 0x80) !== 0;
      if (masked !== (this.role === "server")) return this.fail(CloseCode.protocolError);
      const opcode = first & 0x0f;
      const fin = (first & 0x80) !== 0;
      const control = (opcode & 0x8) !== 0;
      let length = second & 0x7f;
      if (control && (length > 125 || !fin)) return this.fail(CloseCode.protocolError);
      const lengthEnd = 2 + (length === 126 ? 2 : length === 127 ? 8 : 0);
      if (!this.gather(lengthEnd)) return MORE;
      chunk = this.chunk;
      at = this.at;
      if (length === 126) length = chunk.readUInt16BE(at + 2);
      else if (length === 127) length = chunk.readUInt32BE(at + 2) * 0x100000000 + chunk.readUInt32BE(at + 6);
      // Checked on the length, before the mask and the payload are waited for.
      if (length > this.maxMessage) return this.fail(CloseCode.tooBig);
      const head = lengthEnd + (masked ? 4 : 0);
      if (!control) {
        if (opcode === CONTINUATION ? this.kind === null : this.kind !== null || (opcode !== TEXT && opcode !== BINARY)) {
          return this.fail(CloseCode.protocolError);
        }
        if (this.partsSize + length > this.maxMessage) return this.fail(CloseCode.tooBig);
      }
      if (!this.gather(head + length)) return MORE;
      chunk = this.chunk;
      at = this.at;
      const start = at + head;
      this.at = start + length;
      let payload: Buffer;
      if (masked) {
        const mask = chunk.subarray(start - 4, start);
        // Binary payloads are skipped unread.
        if (!control && (opcode === BINARY || (opcode === CONTINUATION && this.kind === BINARY))) payload = EMPTY;
        else {
          payload = Buffer.allocUnsafe(length);
          maskInto(payload, 0, chunk.subarray(start, start + length), mask);
        }
      } else payload = chunk.subarray(start, start + length);
      if (control) {
        if (opcode === CLOSE) return { kind: "close", payload };
        if (opcode === PING) return { kind: "ping", payload: masked ? payload : Buffer.from(payload) };
        if (opcode === PONG) return { kind: "pong", payload };
        return this.fail(CloseCode.protocolError);
      }
      if (opcode !== CONTINUATION) this.kind = opcode;
      if (this.kind === BINARY) {
        this.partsSize = fin ? 0 : this.partsSize + length;
        if (fin) this.kind = null;
        continue;
      }
      if (fin && this.parts.length === 0) {
        // The common case: a text message in one frame.
        this.kind = null;
        if (!isUtf8(payload)) return this.fail(CloseCode.invalidData);
        messages.push(payload);
        continue;
      }
      this.parts.push(masked ? payload : Buffer.from(payload));
      this.partsSize += length;
      if (!fin) continue;
      const message = Buffer.concat(this.parts, this.partsSize);
      this.parts = [];
      this.partsSize = 0;
      this.kind = null;
      if (!isUtf8(message)) return this.fail(CloseCode.invalidData);
      messages.push(message);
    }
  }

  private fail(code: number): ParseStop {
    this.failed = true;
    this.parts = [];
    this.queue = [];
    this.queued = 0;
    this.chunk = EMPTY;
    this.at = 0;
    return { kind: "fail", code };
  }
}

/** Why a socket ended: the close code received or sent, and whether it was this side's choice. */
export interface Closed {
  readonly code: number;
}

/** An open WebSocket on `socket`, after the opening handshake. */
export class WebSocketEnd {
  private readonly parser: FrameParser;
  /** Messages parsed and not handed out yet (by `receive`, one at a time). */
  private backlog: Buffer[] = [];
  private closeSent = false;
  private ended = false;
  /** A close frame was received or the socket failed: nothing more is read. */
  private finished = false;
  private endedWith: number = CloseCode.goingAway;
  private readonly chunks: AsyncIterator<Buffer>;
  private drainWaiters: (() => void)[] = [];

  constructor(
    readonly socket: Duplex,
    private readonly role: "client" | "server",
    /** The largest message (and frame) accepted, in bytes. */
    maxMessage: number,
    head?: Uint8Array,
  ) {
    this.parser = new FrameParser(role, maxMessage);
    if (head !== undefined && head.length > 0) this.parser.push(Buffer.from(head));
    socket.on("drain", () => this.wakeDrain());
    socket.on("close", () => {
      this.ended = true;
      this.wakeDrain();
    });
    socket.on("error", () => {}); // a reset peer ends the socket; reads and writes see it
    this.chunks = socket[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  /** Whether the socket is gone or closing. */
  get closed(): boolean {
    return this.ended || this.closeSent;
  }

  /** The close code the socket ended with (once `receive` returned `null`). */
  get closeCode(): number {
    return this.endedWith;
  }

  /** Queues one text message (`payload` must be UTF-8). `false`: the socket's buffer is
   * full, wait for `drained()` before sending more. */
  sendText(payload: Uint8Array): boolean {
    return this.send(TEXT, [payload]);
  }

  /** Queues text messages, one frame each, in one write (`false` as `sendText`). */
  sendTexts(payloads: readonly Uint8Array[]): boolean {
    return this.send(TEXT, payloads);
  }

  /** Queues one binary message (tests: a peer must ignore it). */
  sendBinary(payload: Uint8Array): boolean {
    return this.send(BINARY, [payload]);
  }

  private send(opcode: number, payloads: readonly Uint8Array[]): boolean {
    if (this.closed || this.socket.destroyed) return true;
    if (payloads.length === 0) return !this.socket.writableNeedDrain;
    const pieces = encodeFrames(opcode, payloads, this.role === "client");
    if (pieces.length === 1) return this.socket.write(pieces[0] as Uint8Array);
    // One system call for all of them.
    this.socket.cork();
    let room = true;
    for (const piece of pieces) room = this.socket.write(piece);
    this.socket.uncork();
    return room;
  }

  /** Resolves when the socket can take more, or is gone. */
  drained(): Promise<void> {
    if (!this.socket.writableNeedDrain || this.socket.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  private wakeDrain(): void {
    const waiting = this.drainWaiters;
    this.drainWaiters = [];
    for (const wake of waiting) wake();
  }

  /** The next text message; `null` once the socket is closed (`closeCode` says why). */
  async receive(): Promise<Buffer | null> {
    if (this.backlog.length === 0) {
      const messages = await this.receiveMany();
      if (messages === null) return null;
      this.backlog = messages;
    }
    return Buffer.from(this.backlog.shift() as Buffer); // a copy: never pin the read buffer
  }

  /**
   * The text messages received and not handed out yet, at least one, in order; `null`
   * once the socket is closed (`closeCode` says why). Every complete message already
   * read is returned at once; the socket is read only when there is none. A message may
   * be a view of a buffer read from the socket (never changed afterwards): a consumer
   * that keeps it copies it. Pings are answered as they are read.
   */
  async receiveMany(): Promise<Buffer[] | null> {
    if (this.backlog.length > 0) {
      const kept = this.backlog;
      this.backlog = [];
      return kept;
    }
    const messages: Buffer[] = [];
    while (!this.finished) {
      const stop = this.parser.next(messages);
      if (stop.kind === "more") {
        if (messages.length > 0) return messages;
        const chunk = await this.pull();
        if (chunk === null) {
          this.finished = true;
          this.gone();
          break;
        }
        this.parser.push(chunk);
      } else if (stop.kind === "ping") {
        if (!this.closed) this.socket.write(Buffer.concat(encodeFrame(PONG, stop.payload, this.role === "client")));
      } else if (stop.kind === "close") {
        const payload = stop.payload;
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : CloseCode.normal;
        this.endedWith = code;
        this.finished = true;
        this.close(code === 1005 || code === 1006 || code === 1015 ? CloseCode.normal : code);
      } else if (stop.kind === "fail") {
        this.finished = true;
        this.fail(stop.code);
      }
    }
    return messages.length > 0 ? messages : null;
  }

  /** The next chunk read from the socket; `null` at its end. */
  private async pull(): Promise<Buffer | null> {
    try {
      const next = await this.chunks.next();
      return next.done === true ? null : next.value;
    } catch {
      return null;
    }
  }

  /** Sends a close frame (once) and ends the socket; a peer that does not close its side
   * within `linger` ms is cut off. */
  close(code: number = CloseCode.normal, linger = 2000): void {
    if (!this.closeSent && !this.ended && !this.socket.destroyed) {
      this.closeSent = true;
      const payload = Buffer.alloc(2);
      payload.writeUInt16BE(code, 0);
      this.socket.write(Buffer.concat(encodeFrame(CLOSE, payload, this.role === "client")));
      this.socket.end();
      setTimeout(() => this.socket.destroy(), linger).unref();
    } else if (!this.socket.destroyed && !this.closeSent) {
      this.socket.destroy();
    }
    this.closeSent = true;
  }

  private fail(code: number): void {
    this.endedWith = code;
    this.close(code, 500);
  }

  /** Ends the socket at once, without the close handshake. */
  destroy(): void {
    this.closeSent = true;
    this.socket.destroy();
  }

  private gone(): void {
    this.ended = true;
    if (this.endedWith === CloseCode.goingAway) this.endedWith = 1006;
  }
}
