/**
 * Messages in, lines out: how a message transport (an HTTP body, an SSE event, a
 * WebSocket text frame) feeds the one JSON-RPC connection runtime.
 *
 * A `Connection` reads NDJSON from a `ByteSource` and writes NDJSON to a `ByteSink`.
 * A remote transport is a framing of that same stream: each message received becomes
 * one line of a `MessageFeed`, and each line the connection writes becomes one message
 * sent (`LineSink`). Validation, ordering, backpressure and `$/cancel_request` therefore
 * behave exactly as on stdio.
 *
 * Both ends are bounded in bytes: `MessageFeed.put` waits while the feed holds more than
 * its capacity (the transport stops reading its socket), and `LineSink.write` waits while
 * the destination holds more than its own capacity (the connection's writer stops, its
 * outgoing queue fills, senders wait), for at most the stall timeout.
 *
 * Both work in batches: the messages a transport read together are queued together
 * (`putMany`, one buffer, read as one chunk), and the lines of one write of the
 * connection's writer are handed over together (`LineDestination.deliverAll`), so a
 * stream of small messages costs one promise and one socket write per batch, not per
 * message.
 */

import { SinkClosed, type ByteSink, type ByteSource } from "../../jsonrpc/transport.js";

const LF = 0x0a;

/** `message` as one NDJSON line (without its LF).
 *
 * JSON allows raw line breaks only as whitespace between tokens, so a pretty-printed
 * message becomes one line by turning them into spaces. A message that is not valid
 * JSON must stay invalid: there its line breaks become NUL bytes, which no JSON text
 * accepts, so the connection still answers -32700. */
export function oneLine(message: Uint8Array): Uint8Array {
  if (message.indexOf(LF) < 0) return message;
  const text = Buffer.from(message.buffer, message.byteOffset, message.byteLength).toString("utf8");
  let valid = true;
  try {
    JSON.parse(text);
  } catch {
    valid = false;
  }
  const out = Buffer.from(message);
  const replacement = valid ? 0x20 : 0x00;
  for (let at = out.indexOf(LF); at >= 0; at = out.indexOf(LF, at + 1)) out[at] = replacement;
  return out;
}

/** A `ByteSource` fed with whole messages, each read as one line.
 *
 * `put` waits while more than `capacity` bytes are unread (one message is always
 * accepted into an empty feed, whatever its size); `close` ends the stream once what was
 * put is read. */
export class MessageFeed implements ByteSource {
  private readonly capacity: number;
  private chunks: Uint8Array[] = [];
  private size = 0;
  private isClosed = false;
  private readable: (() => void) | null = null;
  private writable: (() => void)[] = [];

  constructor(capacity: number) {
    this.capacity = Math.max(1, capacity);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Queues `message` as a line; `false` when the feed was closed (it is dropped). */
  put(message: Uint8Array): Promise<boolean> {
    return this.putMany([message]);
  }

  /** Queues `messages` as lines, in order, all at once once there is room (a batch is
   * always accepted into a feed at or under its capacity, as one message is); `false`
   * when the feed was closed (they are dropped). They are copied as they are queued: the
   * caller may hand views of a buffer it keeps reading into. */
  async putMany(messages: readonly Uint8Array[]): Promise<boolean> {
    while (this.size > this.capacity && !this.isClosed) {
      await new Promise<void>((resolve) => this.writable.push(resolve));
    }
    if (this.isClosed) return false;
    if (messages.length === 0) return true;
    this.append(messages);
    this.wakeReader();
    return true;
  }

  /** The lines of `messages` (each with its LF) in one buffer. */
  private append(messages: readonly Uint8Array[]): void {
    let total = 0;
    const lines: Uint8Array[] = [];
    for (const message of messages) {
      const line = oneLine(message);
      lines.push(line);
      total += line.length + 1;
    }
    const out = Buffer.allocUnsafe(total);
    let at = 0;
    for (const line of lines) {
      out.set(line, at);
      at += line.length;
      out[at++] = LF;
    }
    this.chunks.push(out);
    this.size += total;
  }

  async read(): Promise<Uint8Array | null> {
    while (this.chunks.length === 0) {
      if (this.isClosed) return null;
      await new Promise<void>((resolve) => (this.readable = resolve));
    }
    const data = this.chunks.length === 1 ? (this.chunks[0] as Uint8Array) : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    this.wakeWriters();
    return data;
  }

  /** Ends the stream: what is queued is still read, later puts are dropped. */
  close(): void {
    this.isClosed = true;
    this.wakeReader();
    this.wakeWriters();
  }

  cancel(): void {
    this.close();
  }

  private wakeReader(): void {
    const wake = this.readable;
    this.readable = null;
    wake?.();
  }

  private wakeWriters(): void {
    const waiting = this.writable;
    this.writable = [];
    for (const wake of waiting) wake();
  }
}

/** What a `LineSink` hands its lines to. */
export interface LineDestination {
  /** Takes one line (without its LF), synchronously; it queues it wherever it goes. */
  deliver(line: Uint8Array): void;
  /** Takes the lines of one write at once, in order (else `deliver` gets each). */
  deliverAll?(lines: readonly Uint8Array[]): void;
  /** The bytes queued there and not sent yet. */
  pending(): number;
  /** Told once, when the connection closes its output or the owner closes the sink. */
  closed?(): void;
}

/** A `ByteSink` that hands every complete line to its destination.
 *
 * A write resolves once the destination holds at most `capacity` bytes (woken by
 * `room()`); after `stallTimeout` ms of waiting the sink closes itself and the write
 * rejects with `SinkClosed` (the connection then ends): a peer that never reads cannot
 * hold a connection's memory forever. */
export class LineSink implements ByteSink {
  private readonly capacity: number;
  private partial: Uint8Array | null = null;
  private isClosed = false;
  private waiting: (() => void) | null = null;

  constructor(
    private readonly destination: LineDestination,
    capacity: number,
    private readonly stallTimeout: number | null,
  ) {
    this.capacity = Math.max(1, capacity);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  async write(data: Uint8Array): Promise<void> {
    if (this.isClosed) throw new SinkClosed("the remote transport is closed");
    if (this.partial !== null) {
      data = Buffer.concat([this.partial, data]);
      this.partial = null;
    }
    let start = 0;
    const lines: Uint8Array[] = [];
    for (;;) {
      const end = data.indexOf(LF, start);
      if (end < 0) break;
      if (end > start) lines.push(data.subarray(start, end));
      start = end + 1;
    }
    if (start < data.length) this.partial = data.slice(start);
    const destination = this.destination;
    if (destination.deliverAll !== undefined) {
      if (lines.length > 0) destination.deliverAll(lines);
    } else for (const line of lines) destination.deliver(line);
    if (this.destination.pending() > this.capacity) await this.waitForRoom();
    if (this.isClosed) throw new SinkClosed("the remote transport is closed");
  }

  private async waitForRoom(): Promise<void> {
    let timer: NodeJS.Timeout | null = null;
    let stalled = false;
    if (this.stallTimeout !== null) {
      timer = setTimeout(() => {
        stalled = true;
        this.close();
      }, this.stallTimeout);
    }
    try {
      while (!this.isClosed && this.destination.pending() > this.capacity) {
        await new Promise<void>((resolve) => (this.waiting = resolve));
      }
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
    if (stalled) throw new SinkClosed(`nothing was sent for ${this.stallTimeout} ms`);
  }

  /** The destination sent some of what was queued: a waiting write re-checks. */
  room(): void {
    const wake = this.waiting;
    this.waiting = null;
    wake?.();
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.room();
    this.destination.closed?.();
  }
}
