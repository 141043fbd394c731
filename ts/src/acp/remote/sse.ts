/**
 * Server-Sent Events, as this transport uses them: one JSON-RPC message per event, in
 * a `data:` line, and comment lines that keep an idle stream open. Event ids and
 * `retry` are not used (the RFD defers resumption to v2).
 */

/** A comment: ignored by readers, it keeps proxies from closing an idle stream. */
export const KEEPALIVE = Buffer.from(": keepalive\n\n");

const DATA_PREFIX = Buffer.from("data: ");
const EVENT_END = Buffer.from("\n\n");

/** Messages up to this size are copied into the buffer of the events around them;
 * a larger one is written as it is, between its event's prefix and end. */
const COPY_LIMIT = 16 * 1024;
/** The size one buffer of small events grows to before the next one starts. */
const BATCH_BYTES = 64 * 1024;

/** The events carrying `messages` (lines without line breaks), in order, as few buffers
 * as is cheap: runs of small events share one buffer, a large message is not copied. */
export function encodeEvents(messages: readonly Uint8Array[]): Uint8Array[] {
  const extra = DATA_PREFIX.length + EVENT_END.length;
  const pieces: Uint8Array[] = [];
  const count = messages.length;
  let i = 0;
  while (i < count) {
    const first = messages[i] as Uint8Array;
    if (first.length > COPY_LIMIT) {
      pieces.push(DATA_PREFIX, first, EVENT_END);
      i++;
      continue;
    }
    let size = 0;
    let end = i;
    while (end < count) {
      const length = (messages[end] as Uint8Array).length;
      if (length > COPY_LIMIT || (end > i && size + length + extra > BATCH_BYTES)) break;
      size += length + extra;
      end++;
    }
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    for (; i < end; i++) {
      const message = messages[i] as Uint8Array;
      at += DATA_PREFIX.copy(out, at);
      out.set(message, at);
      at += message.length;
      at += EVENT_END.copy(out, at);
    }
    pieces.push(out);
  }
  return pieces;
}

/** Splits an event stream, fed in chunks, into the `data` of its events (the lines of
 * one event joined with LF, as the SSE rules say); other fields and comments are
 * skipped. Lines end with LF, CRLF or CR. `maxEventSize` bounds what one event may
 * buffer: a longer one is dropped as it streams by, and counted in `oversize`. */
export class SseParser {
  private buffer: Buffer = Buffer.alloc(0);
  private data: Buffer[] = [];
  private size = 0;
  private skipping = false;
  private afterCr = false;
  /** How many events were dropped for their size. */
  oversize = 0;

  constructor(private readonly maxEventSize: number) {}

  /** The events `chunk` completes. */
  feed(chunk: Uint8Array): Buffer[] {
    const events: Buffer[] = [];
    let input = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.afterCr && input[0] === 0x0a) input = input.subarray(1); // the LF of a CRLF split between chunks
    this.afterCr = input.length > 0 && input[input.length - 1] === 0x0d;
    let buffer = this.buffer.length > 0 ? Buffer.concat([this.buffer, input]) : input;
    let start = 0;
    let cr = buffer.indexOf(0x0d);
    for (;;) {
      // The line ends at its LF or CR, whichever comes first (each searched once per pass).
      if (cr >= 0 && cr < start) cr = buffer.indexOf(0x0d, start);
      const lf = buffer.indexOf(0x0a, start);
      const end = cr >= 0 && (lf < 0 || cr < lf) ? cr : lf;
      if (end < 0) break;
      this.line(buffer.subarray(start, end), events);
      start = end + 1;
      if (buffer[end] === 0x0d && buffer[start] === 0x0a) start++;
    }
    buffer = buffer.subarray(start);
    if (buffer.length > this.maxEventSize + 16) {
      // A line longer than any event may be: drop it as it streams by.
      if (!this.skipping) this.oversize++;
      this.skipping = true;
      this.data = [];
      buffer = Buffer.alloc(0);
    }
    this.buffer = Buffer.from(buffer); // a copy: never hold the caller's chunk
    return events;
  }

  private line(line: Buffer, events: Buffer[]): void {
    if (line.length === 0) {
      if (this.data.length > 0 && !this.skipping) events.push(this.data.length === 1 ? Buffer.from(this.data[0] as Buffer) : joinLines(this.data));
      this.data = [];
      this.size = 0;
      this.skipping = false;
      return;
    }
    if (this.skipping || line[0] === 0x3a) return; // ':' starts a comment
    const colon = line.indexOf(0x3a);
    const name = colon < 0 ? line : line.subarray(0, colon);
    if (name.length !== 4 || name.toString("latin1") !== "data") return;
    let value = colon < 0 ? Buffer.alloc(0) : line.subarray(colon + 1);
    if (value[0] === 0x20) value = value.subarray(1);
    this.size += value.length + 1;
    if (this.size > this.maxEventSize) {
      this.skipping = true;
      this.oversize++;
      this.data = [];
      return;
    }
    this.data.push(value);
  }
}

function joinLines(lines: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [];
  lines.forEach((line, i) => {
    if (i > 0) parts.push(Buffer.from([0x0a]));
    parts.push(line);
  });
  return Buffer.concat(parts);
}
