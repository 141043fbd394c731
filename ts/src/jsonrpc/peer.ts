/**
 * `Peer`: the handle that sends calls and notifications, and the state it shares with
 * the connection's tasks: the pending calls, the bounded outgoing queue, and the count
 * of notifications the worker has handled (the ordering barrier).
 *
 * **Ordering.** The reader stamps each response with the number of notifications read
 * before it; `call` resolves only once the worker has handled that many, so the updates
 * an agent streams before answering `session/prompt` are all handled when the prompt
 * call returns. A call made from inside a notification handler (its async context)
 * skips that wait: the worker is serial, so waiting for later notifications would wait
 * for itself.
 */

import { AsyncLocalStorage } from "node:async_hooks";

import { encodeString, RawJson } from "../codec/values.js";
import { deferred, onAbort, type Deferred } from "./cancellation.js";
import { idJson, idKey, type RequestId } from "./id.js";
import { CallAborted, CallError, CallTimeout, ConnectionClosed } from "./local-error.js";
import { encodeNotification, encodeRequest } from "./message.js";
import type { ConnectionEvent, ResolvedOptions } from "./options.js";

/** Runs on the reader the moment a successful answer is read, before the next line. */
export type ResultHook = (result: RawJson) => void;

/** What the reader hands a waiting caller: the raw result, or why there is none. */
export type Answer = RawJson | CallError;

/** Options of one `Peer.call`. */
export interface CallOptions {
  /** When it aborts, the call is abandoned at once (`CallAborted`) and the cancel notification sent. */
  signal?: AbortSignal;
  /** When it aborts, the cancel notification is sent and the call keeps waiting for the answer. */
  cancel?: AbortSignal;
  /** Runs on the reader as a successful answer is read, before any later message is read. */
  onResult?: ResultHook;
  /** Milliseconds; default the connection's `callTimeout`. On timeout the call is abandoned (`CallTimeout`). */
  timeout?: number | null;
}

/** What `resolve` found. */
export const RESOLVED = 0;
export const LATE = 1;
export const UNKNOWN = 2;

const REMEMBERED = 1024;
/** What a send that queued at once returns (nothing to wait for). */
const SENT: Promise<void> = Promise.resolve();
const ALL_DONE = Number.MAX_SAFE_INTEGER;

/** The async context of the notification worker's handlers. */
export const inWorker = new AsyncLocalStorage<boolean>();

interface Waiter {
  readonly id: RequestId;
  readonly answer: Deferred<[Answer, number]>;
  readonly onResult: ResultHook | undefined;
}

/** A flush marker in the outgoing queue. */
export class Flushed {
  readonly done: Deferred<boolean> = deferred<boolean>();
}

export type Outgoing = string | Flushed;

function params(p: RawJson | string | null | undefined): RawJson | null {
  if (p === null || p === undefined) return null;
  return typeof p === "string" ? new RawJson(p) : p;
}

/** A handle to send calls and notifications to the other side. It stays usable after
 * the connection ended: calls then fail with `ConnectionClosed` at once. */
export class Peer {
  private readonly pending = new Map<string, Waiter>();
  private readonly abandoned: string[] = [];
  private readonly abandonedSet = new Set<string>();
  private closedFlag = false;
  private nextId = 0;
  /** Outgoing lines and flush markers, for the writer. */
  readonly out: Outgoing[] = [];
  /** Cancel notifications queued while `out` was full. */
  readonly overflow: string[] = [];
  private readonly roomWaiters: (() => void)[] = [];
  writerWake: (() => void) | null = null;
  /** The writer writes what is queued, then ends. */
  stopping = false;
  /** The writer ended: nothing can be sent any more. */
  outputClosed = false;
  /** How many notifications the worker has handled. */
  done = 0;
  private doneWaiters: { count: number; wake: () => void }[] = [];
  /** Set by the reader: a call was registered (a blocked reader may use its backlog). */
  onCallRegistered: () => void = () => {};

  constructor(private readonly options: ResolvedOptions) {}

  /** Whether the connection ended (calls fail at once). */
  get isClosed(): boolean {
    return this.closedFlag;
  }

  get hasPendingCalls(): boolean {
    return this.pending.size > 0;
  }

  /**
   * Sends a request and resolves with its raw result.
   *
   * @param params the params, already encoded (`null`: no params member).
   * @throws RpcError the peer answered with an error object; `ConnectionClosed`,
   *   `CallTimeout`, `CallAborted`, `InvalidResponse`, `ResponseTooLarge`: no usable answer.
   */
  async call(method: string, params_: RawJson | string | null = null, options: CallOptions = {}): Promise<RawJson> {
    if (this.closedFlag) throw new ConnectionClosed();
    if (options.signal?.aborted === true) throw new CallAborted();
    const limit = options.timeout === undefined ? this.options.callTimeout : options.timeout;
    const id = this.nextId++;
    const key = idKey(id);
    const answer = deferred<[Answer, number]>();
    this.pending.set(key, { id, answer, onResult: options.onResult });
    this.onCallRegistered();
    const cleanups: (() => void)[] = [];
    let sent = false;
    let failure: CallError | null = null;
    const abandon = (error: CallError): void => {
      if (answer.settled) return;
      failure = error;
      answer.resolve([error, 0]);
      if (this.forget(key) && sent) this.sendCancel(id);
    };
    try {
      if (options.signal !== undefined) cleanups.push(onAbort(options.signal, () => abandon(new CallAborted())));
      if (limit !== null) {
        const timer = setTimeout(() => abandon(new CallTimeout(limit)), limit);
        cleanups.push(() => clearTimeout(timer));
      }
      try {
        await this.send(encodeRequest(id, method, params(params_)));
      } catch (err) {
        this.forget(key);
        throw err;
      }
      sent = true;
      if (failure !== null) {
        this.sendCancel(id); // abandoned while waiting for room: the request went out anyway
        throw failure;
      }
      if (options.cancel !== undefined) {
        cleanups.push(
          onAbort(options.cancel, () => {
            if (this.pending.has(key)) this.sendCancel(id);
          }),
        );
      }
      const [result, barrier] = await answer.promise;
      if (barrier > this.done && inWorker.getStore() !== true) await this.waitHandled(barrier);
      if (result instanceof CallError) throw result;
      return result;
    } finally {
      for (const cleanup of cleanups) cleanup();
    }
  }

  /** Sends a notification once there is room in the outgoing queue. */
  notify(method: string, params_: RawJson | string | null = null): Promise<void> {
    const line = encodeNotification(method, params(params_));
    return this.tryQueue(line) ? SENT : this.send(line);
  }

  /** Queues a notification if there is room now; whether it was queued. The sender of a
   * stream of notifications calls this first and awaits nothing while it succeeds. */
  tryNotify(method: string, params_: RawJson | string | null): boolean {
    return this.tryQueue(encodeNotification(method, params(params_)));
  }

  /** Sends one already-encoded message (without its newline). */
  async sendLine(line: string): Promise<void> {
    await this.send(line);
  }

  /** Resolves once everything queued before this call has been written out. */
  async flush(): Promise<void> {
    if (this.outputClosed) throw new ConnectionClosed();
    const marker = new Flushed();
    await this.send(marker);
    if (!(await marker.done.promise)) throw new ConnectionClosed();
  }

  /** Resolves once the worker has handled `count` notifications (or `signal` aborts). */
  async waitHandled(count: number, signal?: AbortSignal): Promise<void> {
    if (count <= this.done) return;
    const wake = deferred();
    this.doneWaiters.push({ count, wake: () => wake.resolve() });
    const remove = signal === undefined ? () => {} : onAbort(signal, () => wake.resolve());
    try {
      await wake.promise;
    } finally {
      remove();
    }
  }

  // -- the connection's side ----------------------------------------------------------

  report(event: ConnectionEvent): void {
    this.options.observer?.(event);
  }

  /** A handler failed: reported to the observer as `event` and to `onError`. */
  handlerFailed(event: ConnectionEvent & { readonly kind: "request-handler-failed" | "notification-handler-failed" }): void {
    this.report(event);
    try {
      this.options.onError?.({ method: event.method, id: event.kind === "request-handler-failed" ? event.id : null, error: event.error });
    } catch {
      // a failing reporter changes nothing on the connection
    }
  }

  /** Marks the connection closed and fails every pending call with `ConnectionClosed`. */
  close(): void {
    this.closedFlag = true;
    const waiters = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiters) w.answer.resolve([new ConnectionClosed(), 0]);
  }

  /** Hands an answer to the call `id`: `RESOLVED`, `LATE` (abandoned) or `UNKNOWN`. */
  resolve(id: RequestId, answer: Answer, barrier: number): number {
    const key = idKey(id);
    const waiter = this.pending.get(key);
    if (waiter === undefined) return this.abandonedSet.has(key) ? LATE : UNKNOWN;
    this.pending.delete(key);
    if (waiter.onResult !== undefined && !(answer instanceof CallError)) {
      try {
        waiter.onResult(answer);
      } catch (error) {
        this.report({ kind: "result-hook-failed", id, error });
      }
    }
    waiter.answer.resolve([answer, barrier]);
    return RESOLVED;
  }

  reportUnresolved(id: RequestId, outcome: number): void {
    if (outcome === LATE) this.report({ kind: "late-response", id });
    else if (outcome === UNKNOWN) this.report({ kind: "unmatched-response", id });
  }

  /** The worker has handled `count` notifications. */
  setHandled(count: number): void {
    this.done = count;
    if (this.doneWaiters.length === 0) return;
    const still: { count: number; wake: () => void }[] = [];
    for (const w of this.doneWaiters) {
      if (w.count <= count) w.wake();
      else still.push(w);
    }
    this.doneWaiters = still;
  }

  workerGone(): void {
    this.setHandled(ALL_DONE);
  }

  /** Forgets a pending call; whether it was still pending. */
  private forget(key: string): boolean {
    if (!this.pending.delete(key)) return false;
    this.abandoned.push(key);
    this.abandonedSet.add(key);
    if (this.abandoned.length > REMEMBERED) this.abandonedSet.delete(this.abandoned.shift() as string);
    return true;
  }

  /** Queues the cancel notification for `id` without waiting for room. */
  private sendCancel(id: RequestId): void {
    const cancel = this.options.cancelNotification;
    if (cancel === null || this.outputClosed) return;
    const line = encodeNotification(cancel.method, new RawJson(`{${encodeString(cancel.idKey)}:${idJson(id)}}`));
    if (this.out.length < this.options.outgoingQueue) this.out.push(line);
    else this.overflow.push(line);
    this.wakeWriter();
  }

  private tryQueue(item: Outgoing): boolean {
    if (this.outputClosed || this.out.length >= this.options.outgoingQueue) return false;
    this.out.push(item);
    this.wakeWriter();
    return true;
  }

  private async send(item: Outgoing): Promise<void> {
    if (this.outputClosed) throw new ConnectionClosed();
    while (this.out.length >= this.options.outgoingQueue) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      if (this.outputClosed) throw new ConnectionClosed();
    }
    this.out.push(item);
    this.wakeWriter();
  }

  wakeWriter(): void {
    const wake = this.writerWake;
    this.writerWake = null;
    wake?.();
  }

  /** Wakes up to `count` senders waiting for room. */
  wakeRoom(count: number): void {
    while (count-- > 0 && this.roomWaiters.length > 0) (this.roomWaiters.shift() as () => void)();
  }

  /** The writer is gone: senders and flushes fail from now on. */
  writerEnded(): void {
    this.outputClosed = true;
    this.wakeRoom(this.roomWaiters.length);
    for (const item of this.out) if (item instanceof Flushed) item.done.resolve(false);
    this.out.length = 0;
    this.overflow.length = 0;
  }
}
