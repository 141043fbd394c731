/**
 * RFC 6455 on a Node socket, both ends, with what ACP needs and nothing more: text
 * messages both ways, binary messages skipped, pings answered, fragments joined,
 * control frames between fragments, the close handshake, and a size bound checked on
 * each frame's header before its payload is buffered (1009). A client masks what it
 * sends; a server refuses unmasked frames (1002). A text message that is not UTF-8
 * fails the socket (1007). No extensions and no subprotocols are negotiated.
 *
 * The reading side pulls from the socket only when its consumer asked for the next
 * message, so a consumer that waits (a full connection feed) stops the socket, and TCP
 * flow control tells the peer. The writing side reports the socket's own backpressure
 * (`sendText` returns `false`: wait for `drained()`).
 */

import { createHash, randomBytes } from "node:crypto";
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

/** One frame's bytes: the header (and mask), then the payload. */
export function encodeFrame(opcode: number, payload: Uint8Array, masked: boolean): [Buffer, Uint8Array] {
  const length = payload.length;
  const extra = length < 126 ? 0 : length < 0x10000 ? 2 : 8;
  const head = Buffer.allocUnsafe(2 + extra + (masked ? 4 : 0));
  head[0] = 0x80 | opcode;
  head[1] = (masked ? 0x80 : 0) | (extra === 0 ? length : extra === 2 ? 126 : 127);
  if (extra === 2) head.writeUInt16BE(length, 2);
  else if (extra === 8) head.writeBigUInt64BE(BigInt(length), 2);
  if (!masked) return [head, payload];
  const mask = randomBytes(4);
  mask.copy(head, 2 + extra);
  const body = Buffer.from(payload);
  applyMask(body, mask, 0);
  return [head, body];
}

function applyMask(data: Buffer, mask: Uint8Array, offset: number): void {
  for (let i = 0; i < data.length; i++) data[i] = (data[i] as number) ^ (mask[(i + offset) & 3] as number);
}

/** Why a socket ended: the close code received or sent, and whether it was this side's choice. */
export interface Closed {
  readonly code: number;
}

/** An open WebSocket on `socket`, after the opening handshake. */
export class WebSocketEnd {
  private buffered: Buffer[] = [];
  private bufferedSize = 0;
  private closeSent = false;
  private ended = false;
  private endedWith: number = CloseCode.goingAway;
  private readonly chunks: AsyncIterator<Buffer>;
  private drainWaiters: (() => void)[] = [];

  constructor(
    readonly socket: Duplex,
    private readonly role: "client" | "server",
    /** The largest message (and frame) accepted, in bytes. */
    private readonly maxMessage: number,
    head?: Uint8Array,
  ) {
    if (head !== undefined && head.length > 0) this.keep(Buffer.from(head));
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
    return this.send(TEXT, payload);
  }

  /** Queues one binary message (tests: a peer must ignore it). */
  sendBinary(payload: Uint8Array): boolean {
    return this.send(BINARY, payload);
  }

  private send(opcode: number, payload: Uint8Array): boolean {
    if (this.closed || this.socket.destroyed) return true;
    const [head, body] = encodeFrame(opcode, payload, this.role === "client");
    if (body.length < 1024) return this.socket.write(Buffer.concat([head, body]));
    this.socket.write(head);
    return this.socket.write(body);
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
    const parts: Buffer[] = [];
    let size = 0;
    let kind: number | null = null;
    for (;;) {
      const frame = await this.frame();
      if (frame === null) return null;
      const { fin, opcode, payload } = frame;
      if (opcode === CLOSE) {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : CloseCode.normal;
        this.endedWith = code;
        this.close(code === 1005 || code === 1006 || code === 1015 ? CloseCode.normal : code);
        return null;
      }
      if (opcode === PING) {
        if (!this.closed) this.socket.write(Buffer.concat(encodeFrame(PONG, payload, this.role === "client")));
        continue;
      }
      if (opcode === PONG) continue;
      if (opcode === CONTINUATION ? kind === null : kind !== null || (opcode !== TEXT && opcode !== BINARY)) {
        this.fail(CloseCode.protocolError);
        return null;
      }
      if (opcode !== CONTINUATION) kind = opcode;
      size += payload.length;
      if (size > this.maxMessage) {
        this.fail(CloseCode.tooBig);
        return null;
      }
      if (kind === TEXT) parts.push(payload);
      if (!fin) continue;
      if (kind === TEXT) {
        const message = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size);
        if (!isUtf8(message)) {
          this.fail(CloseCode.invalidData);
          return null;
        }
        return message;
      }
      // A binary message: ignored.
      kind = null;
      parts.length = 0;
      size = 0;
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

  // -- frames ---------------------------------------------------------------------------

  private keep(chunk: Buffer): void {
    this.buffered.push(chunk);
    this.bufferedSize += chunk.length;
  }

  /** Reads until `n` bytes are buffered; `false` at the end of the socket. */
  private async fill(n: number): Promise<boolean> {
    while (this.bufferedSize < n) {
      let next: IteratorResult<Buffer>;
      try {
        next = await this.chunks.next();
      } catch {
        return false;
      }
      if (next.done === true) return false;
      this.keep(next.value);
    }
    return true;
  }

  private take(n: number): Buffer {
    const all = this.buffered.length === 1 ? (this.buffered[0] as Buffer) : Buffer.concat(this.buffered, this.bufferedSize);
    const taken = all.subarray(0, n);
    const rest = all.subarray(n);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.bufferedSize = rest.length;
    return taken;
  }

  private async frame(): Promise<{ fin: boolean; opcode: number; payload: Buffer } | null> {
    if (!(await this.fill(2))) return this.gone();
    const head = this.take(2);
    const first = head[0] as number;
    const second = head[1] as number;
    if ((first & 0x70) !== 0) return this.refuse(CloseCode.protocolError); // no extension negotiated
    const masked = (second & 0x80) !== 0;
    if (masked !== (this.role === "server")) return this.refuse(CloseCode.protocolError);
    let length = second & 0x7f;
    if (length === 126) {
      if (!(await this.fill(2))) return this.gone();
      length = this.take(2).readUInt16BE(0);
    } else if (length === 127) {
      if (!(await this.fill(8))) return this.gone();
      const big = this.take(8).readBigUInt64BE(0);
      length = big > BigInt(this.maxMessage) ? Number.MAX_SAFE_INTEGER : Number(big);
    }
    const opcode = first & 0x0f;
    const control = (opcode & 0x8) !== 0;
    if (control && (length > 125 || (first & 0x80) === 0)) return this.refuse(CloseCode.protocolError);
    if (length > this.maxMessage) return this.refuse(CloseCode.tooBig); // refused before it is buffered
    const mask = masked ? ((await this.fill(4)) ? Buffer.from(this.take(4)) : null) : null;
    if (masked && mask === null) return this.gone();
    if (!(await this.fill(length))) return this.gone();
    const payload = Buffer.from(this.take(length)); // a copy: never pin the read buffer
    if (mask !== null) applyMask(payload, mask, 0);
    return { fin: (first & 0x80) !== 0, opcode, payload };
  }

  private gone(): null {
    this.ended = true;
    if (this.endedWith === CloseCode.goingAway) this.endedWith = 1006;
    return null;
  }

  private refuse(code: number): null {
    this.fail(code);
    return null;
  }
}
