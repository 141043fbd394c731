/**
 * Server-sent events for the streaming operations of both bindings: one frame per
 * event, keep-alive comments while idle, writes that wait for `drain` when the socket's
 * buffer is full (backpressure), and the first event awaited before the headers, so a
 * failure that happens at once is an ordinary HTTP error, not a stream. Every frame is
 * charged to the server's stream budget until node's write buffer has let it out; a
 * stream whose next frame does not fit is cut off (`event: lagged` when it holds nothing,
 * its connection closed when the client has left a frame unread).
 *
 * The small frames ready in one turn of the event loop are joined and written as one
 * chunk (with the head, for the first); a large one is written as its pieces, so that an
 * event's shared encoding stays one copy however many streams send it.
 */

import type { ServerResponse } from "node:http";

import type { BudgetHolder, StreamBudget } from "./budget.js";
import { poll, type StopSignal, type StreamOut } from "./stream.js";

/** An SSE frame as written: one text, or pieces (a large encoding among them). */
export type Frame = string | readonly (string | Buffer)[];

/** One SSE event: optional `id:` and `event:` lines, one `data:` line, a blank line. */
export function frame(seq: number | null, event: string | null, data: string): string {
  return `${seq === null ? "" : `id: ${seq}\n`}${event === null ? "" : `event: ${event}\n`}data: ${data}\n\n`;
}

/** An event's frame around its encoding `body` (shared, see `sharedEncoding`): the
 * `data:` line is `before`, `body`, `after`. */
export function eventFrame(seq: number | null, before: string, body: string | Buffer, after: string): Frame {
  const head = seq === null ? `data: ${before}` : `id: ${seq}\ndata: ${before}`;
  return typeof body === "string" ? `${head}${body}${after}\n\n` : [head, body, `${after}\n\n`];
}

/** Past this size a frame is written as its pieces (and an encoding shared as bytes), not
 * joined with others into one chunk. */
const COPY_LIMIT = 64 * 1024;

/** Encodings of the events being sent now, by event and `form` (one after the other in
 * each entry), so that the streams woken by one commit send one copy of the bytes, not one
 * each. Emptied once the event loop's current turn is over (the streams still writing
 * keep their bytes). */
const encodings = new Map<object, Array<string | Buffer>>();
let clearing = false;

function clearEncodings(): void {
  encodings.clear();
  clearing = false;
}

/** `encode(event)`, shared with every stream that asks for the same event and `form` (what
 * `encode` does: the operation's encoding) in this turn of the event loop: its text, or
 * its bytes when it is large. */
export function sharedEncoding(event: object, form: string, encode: () => string): string | Buffer {
  let forms = encodings.get(event);
  if (forms !== undefined) {
    for (let i = 0; i < forms.length; i += 2) if (forms[i] === form) return forms[i + 1] as string | Buffer;
  }
  const text = encode();
  const out = text.length > COPY_LIMIT ? Buffer.from(text) : text;
  if (forms === undefined) {
    encodings.set(event, (forms = []));
    if (!clearing) {
      clearing = true;
      setImmediate(clearEncodings);
    }
  }
  forms.push(form, out);
  return out;
}

/** What a stream cut off by the budget while holding nothing gets before its end: the
 * client resumes from the log. */
const LAGGED = frame(null, "lagged", "{}");

const SSE_HEAD: string[] = ["content-type", "text/event-stream", "cache-control", "no-cache", "x-accel-buffering", "no"];

/** What a stream's reader going away aborts: a `StopSignal` without an `AbortController`
 * (which costs microseconds to make and to abort). */
class StreamStop implements StopSignal {
  aborted = false;
  private listeners: Array<() => void> | null = null;

  addEventListener(type: "abort", listener: () => void): void {
    if (type !== "abort" || this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(type: "abort", listener: () => void): void {
    const listeners = this.listeners;
    if (type !== "abort" || listeners === null) return;
    const at = listeners.indexOf(listener);
    if (at >= 0) listeners.splice(at, 1);
  }

  /** Aborts (once): each listener is called once. */
  readonly abort = (): void => {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners !== null) for (const listener of listeners) listener();
  };
}

/** Resolves when `res` may be written again, or has closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** One SSE answer being written: its share of the budget and the frames not written yet. */
class SseWriter implements BudgetHolder {
  /** The bytes it has charged and not given back: at most what node's write buffer and
   * `pending` hold, given back as they empty (`settle`). */
  held = 0;
  /** No event since the last keep-alive tick. */
  idle = false;
  /** The small frames of this turn of the event loop, joined, and their size in bytes. */
  private pending = "";
  private pendingBytes = 0;

  constructor(
    readonly res: ServerResponse,
    private readonly budget: StreamBudget | null,
  ) {}

  /** Cut off by another stream's charge: it holds a frame the client has not read, and
   * closing the connection is the only way to free it. */
  cut(): void {
    this.budget?.release(this.held);
    this.held = 0;
    this.budget?.leave(this);
    this.res.destroy();
  }

  /** Gives back what node has let out. */
  settle(): void {
    const res = this.res;
    const keep = res.destroyed ? 0 : Math.min(this.held, res.writableLength + this.pendingBytes);
    this.budget?.release(this.held - keep);
    this.held = keep;
  }

  /** Charges and queues one frame; `false` when the stream was cut off (it is ended). */
  send(out: Frame): boolean {
    let size: number;
    let large: Buffer[] | null = null;
    if (typeof out === "string") {
      size = out.length > COPY_LIMIT ? (large = [Buffer.from(out)])[0]!.length : Buffer.byteLength(out);
    } else {
      size = 0;
      for (const p of out) size += typeof p === "string" ? Buffer.byteLength(p) : p.length;
      if (size > COPY_LIMIT) large = out.map((p) => (typeof p === "string" ? Buffer.from(p) : p));
    }
    this.settle();
    const res = this.res;
    if (this.budget !== null && !this.budget.charge(this, size)) {
      // It holds the most (or the frame is larger than the whole budget).
      if (this.held > 0 || res.writableLength > 0 || this.pendingBytes > 0) res.destroy();
      else res.end(LAGGED);
      return false;
    }
    this.held += size;
    if (large === null) {
      if (this.pendingBytes === 0) process.nextTick(flushLater, this);
      this.pending += typeof out === "string" ? out : out.join("");
      this.pendingBytes += size;
      return true;
    }
    // A large frame: what is pending first, then its pieces (node writes them in one go).
    // Nothing is settled before its pieces are in node's buffer: what it charged would be
    // given back at once.
    this.write();
    for (const p of large) res.write(p);
    return true;
  }

  /** Writes the pending frames as one chunk, and gives back what node has let out. */
  flush(): void {
    if (this.pendingBytes === 0) return;
    this.write();
    this.settle();
  }

  /** Writes the pending frames as one chunk (their charge now counted by node's buffer). */
  private write(): void {
    if (this.pendingBytes === 0) return;
    const text = this.pending;
    this.pending = "";
    this.pendingBytes = 0;
    const res = this.res;
    if (res.destroyed || res.writableEnded) return;
    // Bytes, not text: node's write buffer counts them as the budget does.
    res.write(Buffer.from(text));
  }
}

function flushLater(writer: SseWriter): void {
  writer.flush();
}

/** The keep-alive comments of the streams with one interval: one timer for all of them
 * (it stops at a tick that finds no stream). An idle stream gets one after one to two
 * intervals without an event. */
class KeepAlive {
  private readonly streams = new Set<SseWriter>();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly ms: number) {}

  add(writer: SseWriter): void {
    this.streams.add(writer);
    if (this.timer === null) {
      this.timer = setInterval(this.tick, this.ms);
      this.timer.unref();
    }
  }

  delete(writer: SseWriter): void {
    this.streams.delete(writer);
  }

  private readonly tick = (): void => {
    if (this.streams.size === 0) {
      clearInterval(this.timer as ReturnType<typeof setInterval>);
      this.timer = null;
      return;
    }
    for (const writer of this.streams) {
      const res = writer.res;
      if (writer.idle && !res.destroyed && res.writableLength === 0) res.write(": keep-alive\n\n");
      writer.idle = true;
    }
  };
}

const keepAlives = new Map<number, KeepAlive>();

function keepAliveEvery(ms: number): KeepAlive {
  let k = keepAlives.get(ms);
  if (k === undefined) keepAlives.set(ms, (k = new KeepAlive(ms)));
  return k;
}

/**
 * Answers with the events of `open` as an SSE stream, each rendered by `render` (`null`:
 * skipped). `plain` answers a first item that is an error as an ordinary response. The
 * stream's signal aborts when the client goes away.
 */
export async function writeSse(
  res: ServerResponse,
  open: (signal: StopSignal) => AsyncGenerator<StreamOut>,
  render: (item: StreamOut) => Frame | null,
  plain: (item: Extract<StreamOut, { kind: "error" }>) => void,
  keepAliveMs: number,
  budget: StreamBudget | null = null,
): Promise<void> {
  const stop = new StreamStop();
  res.on("close", stop.abort);
  const events = open(stop);
  const writer = new SseWriter(res, budget);
  budget?.join(writer);
  let keepAlive: KeepAlive | null = null;
  try {
    const first = poll(events) ?? (await events.next());
    if (!first.done && first.value.kind === "error") return plain(first.value);
    if (res.destroyed) return;
    // The head goes out with the first frames.
    res.writeHead(200, SSE_HEAD);
    keepAlive = keepAliveEvery(keepAliveMs);
    keepAlive.add(writer);
    let item = first;
    while (!item.done && !res.destroyed) {
      // Backpressure: node's buffer was full at the last write, and has not drained since.
      if (res.writableNeedDrain) {
        await drained(res);
        writer.settle();
        if (res.destroyed) break; // cut off, or the client went: no next event
      }
      const out = render(item.value);
      writer.idle = false;
      if (out !== null && !writer.send(out)) return;
      // What the source has at hand is taken without a promise turn.
      item = poll(events) ?? (await events.next());
    }
    writer.flush();
    res.end();
  } finally {
    keepAlive?.delete(writer);
    writer.flush();
    budget?.release(writer.held);
    writer.held = 0;
    budget?.leave(writer);
    res.off("close", stop.abort);
    stop.abort();
    await events.return(undefined);
  }
}
