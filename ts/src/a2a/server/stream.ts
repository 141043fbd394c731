/**
 * Following a task's event log: the events after a sequence number, read from the store
 * and then as commits wake the hub, until the log's last event, a stop condition, or the
 * reader going away (its `AbortSignal`).
 */

import type { A2aError } from "../errors.js";
import type { StreamResponse } from "../../generated/a2a/v1.js";
import type { TaskKey } from "./store.js";
import { storeFailure, type Tasks } from "./tasks.js";

/** One item of a streamed answer. */
export type StreamOut =
  /** An event; `seq` is its place in the log (the SSE `id:`), `null` when it has none. */
  | { readonly kind: "event"; readonly seq: number | null; readonly event: StreamResponse }
  /** Events after `after` up to `resumedAt` are no longer held. */
  | { readonly kind: "gap"; readonly after: number; readonly resumedAt: number }
  /** An error after the stream started. */
  | { readonly kind: "error"; readonly error: A2aError };

/** How many events one store read takes. */
const PAGE = 256;

/** The events of `key`'s log after `after`; ends after the log's last event, or after
 * the first event `stop` says ends the stream, or when `signal` aborts. */
export async function* follow(tasks: Tasks, key: TaskKey, after: number, signal: AbortSignal, stop?: (event: StreamResponse) => boolean): AsyncGenerator<StreamOut> {
  let cursor = after;
  // The signal is watched once for the whole stream (from its first wait), not by each
  // wait: an abort listener added and removed per wait costs more than the rest of it.
  let waiting: (() => void) | null = null;
  let watching = false;
  const onAbort = (): void => waiting?.();
  try {
    while (!signal.aborted) {
      // Registered before the read: a commit between the read and the wait still wakes it.
      const wait = tasks.hub.changed(key);
      try {
        let page;
        try {
          page = await tasks.store.readEvents(key, cursor, PAGE);
        } catch (e) {
          yield { kind: "error", error: storeFailure(e) };
          return;
        }
        if (page.firstHeld > cursor + 1 && page.lastWritten > cursor) {
          yield { kind: "gap", after: cursor, resumedAt: page.firstHeld };
          cursor = page.firstHeld - 1;
        }
        if (page.events.length > 0) {
          for (const ev of page.events) {
            yield { kind: "event", seq: ev.seq, event: ev.event };
            cursor = ev.seq;
            if (ev.last || (stop !== undefined && stop(ev.event))) return;
          }
          continue;
        }
        if (!watching) {
          watching = true;
          signal.addEventListener("abort", onAbort, { once: true });
        }
        // An abort during the read found no wait to wake.
        if (signal.aborted) return;
        waiting = wait.wake;
        await wait.promise;
        waiting = null;
      } finally {
        wait.cancel();
      }
    }
  } finally {
    if (watching) signal.removeEventListener("abort", onAbort);
  }
}
