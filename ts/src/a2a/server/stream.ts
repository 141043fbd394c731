/**
 * Following a task's event log: the events after a sequence number, read from the store
 * and then as commits wake the hub, until the log's last event, a stop condition, or the
 * reader going away (its stop signal).
 *
 * The sources are plain async iterators, not async generators: a stream's events are
 * mostly all in the log when it is read, and an async generator (twice, with `yield*`)
 * costs several promise turns per event where these cost one.
 */

import type { A2aError } from "../errors.js";
import type { StreamResponse } from "../../generated/a2a/v1.js";
import { keyText, type EventRecord, type TaskKey } from "./store.js";
import { storeFailure, type HubWaiter, type Tasks } from "./tasks.js";

/** One item of a streamed answer. */
export type StreamOut =
  /** An event; `seq` is its place in the log (the SSE `id:`), `null` when it has none. */
  | { readonly kind: "event"; readonly seq: number | null; readonly event: StreamResponse }
  /** Events after `after` up to `resumedAt` are no longer held. */
  | { readonly kind: "gap"; readonly after: number; readonly resumedAt: number }
  /** An error after the stream started. */
  | { readonly kind: "error"; readonly error: A2aError };

/** What stops a stream when its reader goes away: an `AbortSignal`, or anything with its
 * `aborted` and its `abort` listeners (the HTTP layer passes a lighter one). */
export interface StopSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** How many events one store read takes. */
const PAGE = 256;

const DONE: IteratorReturnResult<void> = Object.freeze({ done: true, value: undefined });
const NO_EVENTS: readonly EventRecord[] = [];

/** A source that can hand out what it has at hand without a promise (`poll`). */
export interface Pollable {
  /** The next result when it is at hand (an event already read, or the end); `null` when
   * only `next` can tell. */
  poll(): IteratorResult<StreamOut, void> | null;
}

/** `source.poll()` when the source is one of these (a generator from elsewhere is not). */
export function poll(source: AsyncGenerator<StreamOut, void, undefined>): IteratorResult<StreamOut, void> | null {
  return source instanceof Source ? source.poll() : null;
}

/** An async iterator of stream items, usable where an `AsyncGenerator` is. */
abstract class Source implements AsyncGenerator<StreamOut, void, undefined>, Pollable {
  abstract next(): Promise<IteratorResult<StreamOut, void>>;

  abstract poll(): IteratorResult<StreamOut, void> | null;

  /** Ends the source: what it holds is let go. */
  protected abstract close(): void;

  return(): Promise<IteratorResult<StreamOut, void>> {
    this.close();
    return Promise.resolve(DONE);
  }

  throw(e: unknown): Promise<IteratorResult<StreamOut, void>> {
    this.close();
    return Promise.reject(e);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** The events of `key`'s log after `after`; ends after the log's last event, or after
 * the first event `stop` says ends the stream, or when `signal` aborts. One reader: each
 * `next` is awaited before the next one. */
export function follow(tasks: Tasks, key: TaskKey, after: number, signal: StopSignal, stop?: (event: StreamResponse) => boolean): AsyncGenerator<StreamOut, void, undefined> {
  return new Follow(tasks, key, after, signal, stop);
}

class Follow extends Source implements HubWaiter {
  private cursor: number;
  private page: readonly EventRecord[] = NO_EVENTS;
  private at = 0;
  private ended = false;
  /** The hub's key text of the task (made once). */
  private readonly hubKey: string;
  /** Registered with the hub (before each read: a commit between the read and the wait
   * still wakes it). */
  private watching = false;
  /** A commit (or the abort) came since the registration. */
  private woken = false;
  /** Resumes the `next` waiting for a commit. */
  private resume: (() => void) | null = null;
  /** The abort listener (added once, at the first wait: most streams never wait). */
  private onAbort: (() => void) | null = null;

  constructor(
    private readonly tasks: Tasks,
    private readonly key: TaskKey,
    after: number,
    private readonly signal: StopSignal,
    private readonly stop: ((event: StreamResponse) => boolean) | undefined,
  ) {
    super();
    this.cursor = after;
    this.hubKey = keyText(key);
  }

  /** Called by the hub at a commit to the task. */
  wake(): void {
    this.woken = true;
    const resume = this.resume;
    if (resume !== null) {
      this.resume = null;
      resume();
    }
  }

  next(): Promise<IteratorResult<StreamOut, void>> {
    // An event of the page read last: no async function's frame for it.
    if (!this.ended && this.at < this.page.length) return Promise.resolve(this.take());
    return this.read();
  }

  poll(): IteratorResult<StreamOut, void> | null {
    if (this.ended) return DONE;
    return this.at < this.page.length ? this.take() : null;
  }

  /** The next event of the page. */
  private take(): IteratorResult<StreamOut, void> {
    const ev = this.page[this.at++] as EventRecord;
    this.cursor = ev.seq;
    if (ev.last || (this.stop !== undefined && this.stop(ev.event))) this.close();
    return { done: false, value: { kind: "event", seq: ev.seq, event: ev.event } };
  }

  /** Reads the log (and waits for a commit when it has nothing new). */
  private async read(): Promise<IteratorResult<StreamOut, void>> {
    for (;;) {
      if (this.ended) return DONE;
      if (this.at < this.page.length) return this.take();
      if (this.signal.aborted) {
        this.close();
        return DONE;
      }
      this.page = NO_EVENTS;
      this.at = 0;
      this.woken = false;
      if (!this.watching) {
        this.watching = true;
        this.tasks.hub.watch(this.hubKey, this);
      }
      let page;
      try {
        page = await this.tasks.store.readEvents(this.key, this.cursor, PAGE);
      } catch (e) {
        this.close();
        return { done: false, value: { kind: "error", error: storeFailure(e) } };
      }
      if (this.ended) return DONE;
      const gap = page.firstHeld > this.cursor + 1 && page.lastWritten > this.cursor;
      if (page.events.length > 0) {
        this.page = page.events;
        if (!gap) continue;
      }
      if (gap) {
        const item: StreamOut = { kind: "gap", after: this.cursor, resumedAt: page.firstHeld };
        this.cursor = page.firstHeld - 1;
        return { done: false, value: item };
      }
      // Nothing new: wait for a commit (unless one came during the read) or the abort.
      if (this.onAbort === null) {
        const onAbort = (): void => this.wake();
        this.onAbort = onAbort;
        this.signal.addEventListener("abort", onAbort, { once: true });
      }
      if (this.signal.aborted) {
        this.close();
        return DONE;
      }
      if (!this.woken) await new Promise<void>((resolve) => (this.resume = resolve));
    }
  }

  protected close(): void {
    this.ended = true;
    this.page = NO_EVENTS;
    if (this.watching) {
      this.watching = false;
      this.tasks.hub.unwatch(this.hubKey, this);
    }
    if (this.onAbort !== null) {
      this.signal.removeEventListener("abort", this.onAbort);
      this.onAbort = null;
    }
    this.wake();
  }
}

/** A stream of `first`, then the items of `rest` (opened after `first` was read). */
export function prefixed(first: StreamOut | null, rest: (signal: StopSignal) => AsyncGenerator<StreamOut, void, undefined>): (signal: StopSignal) => AsyncGenerator<StreamOut, void, undefined> {
  return (signal) => (first === null ? rest(signal) : new Prefixed(first, rest, signal));
}

/** A stream of one item (a direct message on a streaming call). */
export function single(item: StreamOut): (signal: StopSignal) => AsyncGenerator<StreamOut, void, undefined> {
  return prefixed(item, () => new Prefixed(null, null, null));
}

class Prefixed extends Source {
  private inner: AsyncGenerator<StreamOut, void, undefined> | null = null;
  private ended = false;

  constructor(
    private first: StreamOut | null,
    private rest: ((signal: StopSignal) => AsyncGenerator<StreamOut, void, undefined>) | null,
    private readonly signal: StopSignal | null,
  ) {
    super();
  }

  next(): Promise<IteratorResult<StreamOut, void>> {
    const at = this.poll();
    return at !== null ? Promise.resolve(at) : (this.inner as AsyncGenerator<StreamOut, void, undefined>).next();
  }

  poll(): IteratorResult<StreamOut, void> | null {
    if (this.ended) return DONE;
    const first = this.first;
    if (first !== null) {
      this.first = null;
      return { done: false, value: first };
    }
    if (this.inner === null) {
      const rest = this.rest;
      if (rest === null) {
        this.ended = true;
        return DONE;
      }
      this.rest = null;
      this.inner = rest(this.signal as StopSignal);
    }
    return poll(this.inner);
  }

  protected close(): void {
    this.ended = true;
    this.first = null;
    this.rest = null;
    const inner = this.inner;
    this.inner = null;
    if (inner !== null) void inner.return(undefined);
  }
}
