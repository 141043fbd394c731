/**
 * Server-sent events for the streaming operations of both bindings: one frame per
 * event, keep-alive comments while idle, writes that wait for `drain` when the socket's
 * buffer is full (backpressure), and the first event awaited before the headers, so a
 * failure that happens at once is an ordinary HTTP error, not a stream.
 */

import type { ServerResponse } from "node:http";

import type { StreamOut } from "./stream.js";

/** One SSE event: optional `id:` and `event:` lines, one `data:` line, a blank line. */
export function frame(seq: number | null, event: string | null, data: string): string {
  return `${seq === null ? "" : `id: ${seq}\n`}${event === null ? "" : `event: ${event}\n`}data: ${data}\n\n`;
}

/** The reason a stream's signal aborts with: a constant, as `abort()` with no reason
 * builds a `DOMException` (and its stack) for every stream. */
const ENDED = Object.freeze({ name: "StreamEnded", message: "the SSE stream ended" });

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
  render: (item: StreamOut) => string | null,
  plain: (item: Extract<StreamOut, { kind: "error" }>) => void,
  keepAliveMs: number,
): Promise<void> {
  const abort = new AbortController();
  const onClose = (): void => abort.abort(ENDED);
  res.on("close", onClose);
  const events = open(abort.signal);
  let timer: ReturnType<typeof setInterval> | undefined;
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
    };
    let idle = true;
    timer = setInterval(() => {
      if (idle && !res.destroyed && res.writableLength === 0) res.write(": keep-alive\n\n");
      idle = true;
    }, keepAliveMs);
    timer.unref();
    let item = first;
    while (!item.done && !res.destroyed) {
      const text = render(item.value);
      idle = false;
      if (text !== null) {
        if (!corked) {
          corked = true;
          res.cork();
          process.nextTick(uncork);
        }
        if (!res.write(text)) await drained(res);
      }
      item = await events.next();
    }
    res.end();
  } finally {
    if (timer !== undefined) clearInterval(timer);
    res.off("close", onClose);
    abort.abort(ENDED);
    await events.return(undefined);
  }
}
