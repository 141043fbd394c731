/**
 * Server-sent events for the streaming operations of both bindings: one frame per
 * event, keep-alive comments while idle, writes that wait for `drain` when the socket's
 * buffer is full (backpressure), and the first event awaited before the headers, so a
 * failure that happens at once is an ordinary HTTP error, not a stream. Every frame is
 * charged to the server's stream budget until node's write buffer has let it out; a
 * stream whose next frame does not fit is cut off (`event: lagged` when it holds nothing,
 * its connection closed when the client has left a frame unread).
 */

import type { ServerResponse } from "node:http";

import type { BudgetHolder, StreamBudget } from "./budget.js";
import type { StreamOut } from "./stream.js";

/** An SSE frame as written: one text, or pieces joined into one write. */
export type Frame = string | readonly (string | Buffer)[];

/** One SSE event: optional `id:` and `event:` lines, one `data:` line, a blank line. */
export function frame(seq: number | null, event: string | null, data: string): string {
  return `${seq === null ? "" : `id: ${seq}\n`}${event === null ? "" : `event: ${event}\n`}data: ${data}\n\n`;
}

/** An event's frame around its encoding `body` (shared, see `sharedEncoding`): the
 * `data:` line is `before`, `body`, `after`. */
export function eventFrame(seq: number | null, before: string, body: Buffer, after: string): Frame {
  return [`${seq === null ? "" : `id: ${seq}\n`}data: ${before}`, body, `${after}\n\n`];
}

/** Encodings of the events being sent now, by event and by `form`, so that the streams
 * woken by one commit send one copy of the bytes, not one each. An entry is dropped once
 * the event loop's current turn is over (the streams still writing keep their bytes). */
const encodings = new WeakMap<object, Map<string, Buffer>>();

/** `encode(event)`'s bytes, shared with every stream that asks for the same event and
 * `form` (what `encode` does: the operation's encoding) in this turn of the event loop. */
export function sharedEncoding(event: object, form: string, encode: () => string): Buffer {
  let forms = encodings.get(event);
  const found = forms?.get(form);
  if (found !== undefined) return found;
  const bytes = Buffer.from(encode());
  if (forms === undefined) {
    const created = new Map<string, Buffer>();
    forms = created;
    encodings.set(event, created);
    setImmediate(() => encodings.delete(event));
  }
  forms.set(form, bytes);
  return bytes;
}

/** The reason a stream's signal aborts with: a constant, as `abort()` with no reason
 * builds a `DOMException` (and its stack) for every stream. */
const ENDED = Object.freeze({ name: "StreamEnded", message: "the SSE stream ended" });

/** What a stream cut off by the budget while holding nothing gets before its end: the
 * client resumes from the log. */
const LAGGED = frame(null, "lagged", "{}");

/** Past this size a frame is written as its pieces, not copied into one buffer. */
const COPY_LIMIT = 64 * 1024;

/** A frame's bytes: one buffer when it is small (each write of a chunked answer costs
 * node a chunk of its own), its pieces when it is large, so that an event's shared
 * encoding stays one copy however many streams send it. */
function frameBytes(out: Frame): Buffer[] {
  if (typeof out === "string") return [Buffer.from(out)];
  let size = 0;
  for (const p of out) size += typeof p === "string" ? Buffer.byteLength(p) : p.length;
  if (size > COPY_LIMIT) return out.map((p) => (typeof p === "string" ? Buffer.from(p) : p));
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const p of out) at += typeof p === "string" ? bytes.write(p, at) : p.copy(bytes, at);
  return [bytes];
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

/**
 * Answers with the events of `open` as an SSE stream, each rendered by `render` (`null`:
 * skipped). `plain` answers a first item that is an error as an ordinary response. The
 * stream's signal aborts when the client goes away.
 */
export async function writeSse(
  res: ServerResponse,
  open: (signal: AbortSignal) => AsyncGenerator<StreamOut>,
  render: (item: StreamOut) => Frame | null,
  plain: (item: Extract<StreamOut, { kind: "error" }>) => void,
  keepAliveMs: number,
  budget: StreamBudget | null = null,
): Promise<void> {
  const abort = new AbortController();
  const onClose = (): void => abort.abort(ENDED);
  res.on("close", onClose);
  const events = open(abort.signal);
  let timer: ReturnType<typeof setInterval> | undefined;
  // The bytes this stream has charged to the budget and node may still hold: at most
  // what its write buffer holds, given back as the buffer empties (`settle`).
  const share = { held: 0, cut: (): void => {} };
  const settle = (): void => {
    const keep = res.destroyed ? 0 : Math.min(share.held, res.writableLength);
    budget?.release(share.held - keep);
    share.held = keep;
  };
  // Cut off by another stream's charge: it holds a frame the client has not read, and
  // closing the connection is the only way to free it.
  share.cut = (): void => {
    budget?.release(share.held);
    share.held = 0;
    budget?.leave(share);
    res.destroy();
  };
  const holder: BudgetHolder = share;
  budget?.join(holder);
  try {
    const first = await events.next();
    if (!first.done && first.value.kind === "error") return plain(first.value);
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" });
    // The head goes out with the first event; the events ready in one turn of the event
    // loop go out in one write (corked until the turn's microtasks are done).
    let corked = false;
    const uncork = (): void => {
      corked = false;
      res.uncork();
      settle();
    };
    let idle = true;
    timer = setInterval(() => {
      if (idle && !res.destroyed && res.writableLength === 0) res.write(": keep-alive\n\n");
      idle = true;
    }, keepAliveMs);
    timer.unref();
    let item = first;
    while (!item.done && !res.destroyed) {
      const out = render(item.value);
      idle = false;
      if (out !== null) {
        // Bytes, not strings: what is charged is what node keeps (a string would be
        // copied again by the socket when it cannot write it at once); a small frame in one
        // buffer, a large one as its pieces (see `frameBytes`).
        const pieces = frameBytes(out);
        let size = 0;
        for (const p of pieces) size += p.length;
        settle();
        if (budget !== null && !budget.charge(holder, size)) {
          // It holds the most (or the frame is larger than the whole budget).
          if (share.held > 0 || res.writableLength > 0) res.destroy();
          else res.end(LAGGED);
          return;
        }
        share.held += size;
        if (!corked) {
          corked = true;
          res.cork();
          process.nextTick(uncork);
        }
        let room = true;
        for (const p of pieces) room = res.write(p) && room;
        if (!room) await drained(res);
        settle();
        if (res.destroyed) break; // cut off, or the client went: no next event
      }
      item = await events.next();
    }
    res.end();
  } finally {
    if (timer !== undefined) clearInterval(timer);
    budget?.release(share.held);
    share.held = 0;
    budget?.leave(holder);
    res.off("close", onClose);
    abort.abort(ENDED);
    await events.return(undefined);
  }
}
