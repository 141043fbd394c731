/**
 * The application's `Handler`, the contexts it receives, and the code that runs it: one
 * async task per request, one serial worker for every notification.
 *
 * Requests run concurrently. Each starts once the notifications read before it have
 * been handled (a permission request never overtakes the tool call announced before
 * it), and is answered with what its handler returns, -32800 when the peer cancels it
 * (unless the handler took over with `handleCancellation()`), the error of a
 * `RequestError` it throws, and -32603 for anything else it throws (reported).
 * Notifications are handled one at a time in arrival order; a failure is reported and
 * the worker goes on.
 */

import { RawJson } from "../codec/values.js";
import { onAbort } from "./cancellation.js";
import { ErrorCode } from "./error.js";
import type { RequestId } from "./id.js";
import { ConnectionClosed, RequestError, requestCancelled } from "./local-error.js";
import { encodeResponse, type Notification, type Request } from "./message.js";
import type { Peer } from "./peer.js";

/** What a request handler gets besides the request. */
export class RequestContext {
  private handles = false;

  constructor(
    /** The handle to call the peer (a permission round trip, say). */
    readonly peer: Peer,
    /** The id of the request being handled. */
    readonly id: RequestId,
    private readonly controller: AbortController,
    /** How many notifications were read before this request. */
    readonly notificationsBefore: number,
    /** The request's number in read order, from 1. */
    readonly index: number,
  ) {}

  /** Aborts when the peer cancels the request or the connection shuts down. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Keeps the handler running when `signal` aborts: its own return value (a partial
   * result) is sent instead of -32800. Call it before the handler's first `await`. */
  handleCancellation(): void {
    this.handles = true;
  }

  get handlesCancellation(): boolean {
    return this.handles;
  }

  /** Fires the request's signal (the connection's side). */
  cancel(): void {
    this.controller.abort();
  }
}

/** What a notification handler gets besides the notification. */
export interface NotificationContext {
  /** The handle to call or notify the peer; a call made from the handler returns without
   * waiting for later notifications. */
  readonly peer: Peer;
  /** The notification's number in read order, from 1 (cancel notifications not counted). */
  readonly index: number;
  /** Runs `work` apart from the notification worker, for what the handler must not wait
   * for inline (notifications are handled one at a time, so waiting holds up the ones read
   * after). Unlike a floating promise, the connection keeps track of it: `run()` settles
   * only once it has, within `shutdownGrace` after end of input; then `stop` aborts and
   * the work is abandoned like an unfinished request handler. A rejection is reported as
   * `notification-handler-failed`. */
  spawn(work: (stop: AbortSignal) => Promise<unknown>): void;
}

/** What the application does with incoming requests and notifications. */
export interface Handler {
  /** Handles one request; returns the encoded result, or throws `RequestError`. */
  request(request: Request, cx: RequestContext): Promise<RawJson | string>;
  /** Handles one notification (one at a time, in arrival order). A handler that
   * finishes at once may return nothing: the worker then goes on without a promise. */
  notification(notification: Notification, cx: NotificationContext): Promise<unknown> | void;
  /** Sees each request on the reader as it is read, in read order, before its task
   * starts. Must be quick; a throw is reported and the request is still handled. */
  requestRead?(request: Request, cx: RequestContext): void;
}

/** The bounded queue between the reader and the notification worker (`null` ends it). */
export class NotificationQueue {
  readonly items: ([number, Notification] | null)[] = [];
  private getter: (() => void) | null = null;

  constructor(readonly capacity: number) {}

  get full(): boolean {
    return this.items.length >= this.capacity;
  }

  /** Appends (the reader checks `full` first; the end marker ignores the bound). */
  put(item: [number, Notification] | null): void {
    this.items.push(item);
    const wake = this.getter;
    this.getter = null;
    wake?.();
  }

  async get(): Promise<[number, Notification] | null> {
    while (this.items.length === 0) await new Promise<void>((resolve) => (this.getter = resolve));
    return this.items.shift() as [number, Notification] | null;
  }
}

/** A request read and not finished: what its task needs. */
export interface RequestJob {
  readonly request: Request;
  readonly cx: RequestContext;
  readonly generation: number;
}

const FAILED = { code: ErrorCode.INTERNAL_ERROR, message: "internal error: request handler failed" };

type Outcome = { kind: "value"; value: RawJson | string } | { kind: "error"; error: unknown } | { kind: "cancelled" } | { kind: "stopped" };

/** Runs one request handler to its answer and sends the answer. `hardStop` aborts
 * when the connection stops hard (then the request ends unanswered). */
export async function runRequest(handler: Handler, peer: Peer, job: RequestJob, hardStop: AbortSignal): Promise<void> {
  const { cx, request } = job;
  if (cx.notificationsBefore > peer.done) await peer.waitHandled(cx.notificationsBefore, cx.signal);
  if (hardStop.aborted) return;
  let running: Promise<RawJson | string>;
  try {
    running = handler.request(request, cx);
  } catch (error) {
    running = Promise.reject(error);
  }
  const outcome = await new Promise<Outcome>((resolve) => {
    const removers: (() => void)[] = [];
    const done = (o: Outcome): void => {
      for (const remove of removers) remove();
      resolve(o);
    };
    running.then(
      (value) => done({ kind: "value", value }),
      (error: unknown) => done({ kind: "error", error }),
    );
    // A handler that did not take cancellation over is dropped when the signal fires
    // (its promise keeps running; what it returns is discarded).
    removers.push(
      onAbort(cx.signal, () => {
        if (!cx.handlesCancellation) done({ kind: "cancelled" });
      }),
    );
    removers.push(onAbort(hardStop, () => done({ kind: "stopped" })));
  });
  if (outcome.kind === "stopped") return;
  let line: string;
  if (outcome.kind === "value") {
    const value = outcome.value;
    line = encodeResponse(cx.id, typeof value === "string" ? new RawJson(value) : value);
  } else if (outcome.kind === "cancelled") {
    line = encodeResponse(cx.id, null, requestCancelled());
  } else if (outcome.error instanceof RequestError) {
    line = encodeResponse(cx.id, null, outcome.error.error);
  } else {
    peer.handlerFailed({ kind: "request-handler-failed", id: cx.id, method: request.method, error: outcome.error });
    line = encodeResponse(cx.id, null, FAILED);
  }
  try {
    await peer.sendLine(line);
  } catch (error) {
    if (!(error instanceof ConnectionClosed)) throw error;
  }
}

/** Work notification handlers handed off (`NotificationContext.spawn`), until it settles. */
export class Background {
  readonly tasks = new Set<Promise<void>>();

  constructor(private readonly hardStop: AbortSignal) {}

  spawn(peer: Peer, method: string, work: (stop: AbortSignal) => Promise<unknown>): void {
    const task: Promise<void> = Promise.resolve()
      .then(() => work(this.hardStop))
      .then(
        () => {},
        (error: unknown) => peer.handlerFailed({ kind: "notification-handler-failed", method, error }),
      )
      .finally(() => this.tasks.delete(task));
    this.tasks.add(task);
  }
}

/** Handles queued notifications one at a time, publishing how many are done.
 * `room()` tells the reader a place in the queue freed up; `stopped()` ends the loop early. */
export async function notificationWorker(
  handler: Handler,
  peer: Peer,
  queue: NotificationQueue,
  room: () => void,
  stopped: () => boolean,
  background: Background,
): Promise<void> {
  try {
    for (;;) {
      const item = queue.items.length > 0 ? (queue.items.shift() as [number, Notification] | null) : await queue.get();
      if (item === null || stopped()) break;
      room();
      const [index, notification] = item;
      try {
        const method = notification.method;
        const spawn = (work: (stop: AbortSignal) => Promise<unknown>): void => background.spawn(peer, method, work);
        const pending = handler.notification(notification, { peer, index, spawn });
        if (pending !== undefined) await pending;
      } catch (error) {
        peer.handlerFailed({ kind: "notification-handler-failed", method: notification.method, error });
      }
      peer.setHandled(index);
    }
  } finally {
    peer.workerGone();
  }
}
