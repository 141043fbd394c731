/**
 * The reader: frames, decodes and routes every incoming line, with bounded queues and a
 * bounded backlog.
 *
 * **Backpressure.** The notification queue and the request slots are bounded; when one
 * is full the reader stops pulling from its input, so the peer's writes block and memory
 * stays bounded. Nothing is dropped. One exception keeps answers flowing: while calls of
 * this side are pending, the reader may set up to `backlog` notifications and requests
 * aside and keep reading, because the answer those handlers wait for may be behind them.
 */

import { parse, JObject, JNumber } from "../codec/reader.js";
import { RawJson } from "../codec/values.js";
import { ChildController } from "./cancellation.js";
import { ErrorCode } from "./error.js";
import { LineSplitter, Oversize } from "./frame.js";
import { idKey, type RequestId } from "./id.js";
import { InvalidResponse, ResponseTooLarge, RpcError } from "./local-error.js";
import { decodeMessage, encodeMessage, encodeResponse, EnvelopeError, type Notification, type Request, type Response } from "./message.js";
import { Background, notificationWorker, NotificationQueue, RequestContext, runRequest, type Handler, type RequestJob } from "./handler.js";
import type { CancelNotification, ResolvedOptions } from "./options.js";
import { inWorker, type Peer } from "./peer.js";
import type { ByteSource } from "./transport.js";

/** The controllers of incoming requests not answered yet, for the cancel notification. */
class InFlight {
  private readonly controllers = new Map<string, [number, RequestContext]>();
  private generation = 0;

  register(id: RequestId, cx: RequestContext): number {
    this.generation++;
    this.controllers.set(idKey(id), [this.generation, cx]);
    return this.generation;
  }

  cancel(id: RequestId): void {
    this.controllers.get(idKey(id))?.[1].cancel(); // unknown or finished: ignored
  }

  finish(id: RequestId, generation: number): void {
    const key = idKey(id);
    if (this.controllers.get(key)?.[0] === generation) this.controllers.delete(key);
  }
}

/** Reads one connection's input and dispatches it; owns the request tasks and the worker's queue. */
export class Reader {
  readonly queue: NotificationQueue;
  readonly tasks = new Set<Promise<void>>();
  /** Aborts at shutdown: the parent of every request's signal. */
  readonly shutdown = new AbortController();
  /** Aborts at the hard stop: running requests end unanswered, the worker stops. */
  readonly hardStop = new AbortController();
  /** Work the notification handlers handed off. */
  readonly background = new Background(this.hardStop.signal);
  private freeSlots: number;
  private readonly inFlight = new InFlight();
  private deferredNotes: [number, Notification][] = [];
  private deferredJobs: RequestJob[] = [];
  private notificationsRead = 0;
  private requestsRead = 0;
  private roomWaiter: (() => void) | null = null;
  private stoppedReading = false;

  constructor(
    private readonly input: ByteSource,
    private readonly handler: Handler,
    private readonly peer: Peer,
    private readonly options: ResolvedOptions,
  ) {
    this.queue = new NotificationQueue(options.notificationQueue);
    this.freeSlots = options.maxConcurrentRequests;
    peer.onCallRegistered = () => this.room();
  }

  startWorker(): Promise<void> {
    // The whole worker runs in the notification handlers' async context (entered once,
    // not per notification): a call made from a handler skips the ordering wait.
    return inWorker.run(true, () => notificationWorker(this.handler, this.peer, this.queue, () => this.room(), () => this.hardStop.signal.aborted, this.background));
  }

  /** Something the blocked reader may wait for happened (room, a call registered). */
  room(): void {
    const wake = this.roomWaiter;
    this.roomWaiter = null;
    wake?.();
  }

  private waitRoom(): Promise<void> {
    return new Promise<void>((resolve) => (this.roomWaiter = resolve));
  }

  private spawn(job: RequestJob): void {
    this.freeSlots--;
    const task: Promise<void> = runRequest(this.handler, this.peer, job, this.hardStop.signal)
      .catch(() => {}) // a send that failed: the connection is over and reports it
      .finally(() => {
        this.tasks.delete(task);
        this.freeSlots++;
        this.inFlight.finish(job.request.id, job.generation);
        this.room();
      });
    this.tasks.add(task);
  }

  /** Stops reading (the connection ends for another reason). */
  stop(): void {
    this.stoppedReading = true;
    this.input.cancel?.();
    this.room();
  }

  // -- reading ------------------------------------------------------------------------

  /** Reads until the end of the input (resolves) or a read error (rejects). */
  async read(): Promise<void> {
    const splitter = new LineSplitter(this.options.maxMessageSize);
    for (;;) {
      if (this.hasDeferred()) await this.unblock();
      if (this.stoppedReading) return;
      const chunk = await this.input.read();
      if (this.stoppedReading) return;
      const frames = chunk !== null ? splitter.feed(chunk) : splitter.finish();
      for (const frame of frames) {
        if (this.hasDeferred()) await this.unblock();
        const reply = frame instanceof Oversize ? this.onOversize(frame) : this.onLine(frame);
        if (reply !== null) await this.peer.sendLine(reply);
      }
      if (chunk === null) return;
    }
  }

  private hasDeferred(): boolean {
    return this.deferredNotes.length > 0 || this.deferredJobs.length > 0;
  }

  /** Resolves once the reader may go on: nothing set aside, or room to set more aside. */
  private async unblock(): Promise<void> {
    for (;;) {
      this.dispatchDeferredNow();
      const count = this.deferredNotes.length + this.deferredJobs.length;
      if (count === 0 || (count < this.options.backlog && this.peer.hasPendingCalls) || this.stoppedReading) return;
      await this.waitRoom();
    }
  }

  private dispatchDeferredNow(): void {
    while (this.deferredNotes.length > 0 && !this.queue.full) this.queue.put(this.deferredNotes.shift() as [number, Notification]);
    while (this.deferredJobs.length > 0 && this.freeSlots > 0) this.spawn(this.deferredJobs.shift() as RequestJob);
  }

  /** At shutdown: dispatches everything set aside (notifications room or not, requests as slots free up). */
  async dispatchDeferred(): Promise<void> {
    while (this.deferredNotes.length > 0) this.queue.put(this.deferredNotes.shift() as [number, Notification]);
    while (this.deferredJobs.length > 0) {
      if (this.freeSlots > 0) this.spawn(this.deferredJobs.shift() as RequestJob);
      else await this.waitRoom();
    }
  }

  // -- routing ------------------------------------------------------------------------

  private onLine(line: Uint8Array): string | null {
    let message;
    try {
      message = decodeMessage(line, { allowNullId: this.options.allowNullId });
    } catch (err) {
      if (!(err instanceof EnvelopeError)) throw err;
      return this.onInvalid(err, line.length);
    }
    if (message.kind === "notification") this.onNotification(message);
    else if (message.kind === "request") this.onRequest(message);
    else this.onResponse(message);
    return null;
  }

  private onNotification(notification: Notification): void {
    const cancel = this.options.cancelNotification;
    if (cancel !== null && notification.method === cancel.method) {
      this.onCancel(notification, cancel);
      return;
    }
    const item: [number, Notification] = [++this.notificationsRead, notification];
    if (this.deferredNotes.length === 0 && !this.queue.full) this.queue.put(item);
    else this.deferredNotes.push(item);
  }

  private onRequest(request: Request): void {
    this.requestsRead++;
    const controller = new ChildController(this.shutdown.signal);
    const cx = new RequestContext(this.peer, request.id, controller, this.notificationsRead, this.requestsRead);
    const generation = this.inFlight.register(request.id, cx);
    try {
      this.handler.requestRead?.(request, cx);
    } catch (error) {
      this.peer.report({ kind: "request-handler-failed", id: request.id, method: request.method, error });
    }
    const job: RequestJob = { request, cx, generation };
    if (this.deferredJobs.length === 0 && this.freeSlots > 0) this.spawn(job);
    else this.deferredJobs.push(job);
  }

  private onResponse(response: Response): void {
    const peer = this.peer;
    if (response.id === null) {
      if (response.error !== null) peer.report({ kind: "error-without-id", error: response.error });
      else peer.report({ kind: "unmatched-response", id: null });
      return;
    }
    const answer = response.error !== null ? new RpcError(response.error) : (response.result ?? new RawJson("null"));
    const outcome = peer.resolve(response.id, answer, this.notificationsRead);
    if (outcome !== 0) peer.reportUnresolved(response.id, outcome);
  }

  private onCancel(notification: Notification, cancel: CancelNotification): void {
    const id = cancel.readId !== undefined ? cancel.readId(notification.params) : memberId(notification, cancel.idKey);
    if (id === undefined) this.peer.report({ kind: "invalid-cancel" });
    else this.inFlight.cancel(id);
  }

  private onInvalid(error: EnvelopeError, length: number): string | null {
    const peer = this.peer;
    if (error.kind === "parse" && this.options.skipNonJsonLines) {
      peer.report({ kind: "non-json-line-skipped", length });
      return null;
    }
    if (error.kind === "invalid-response") {
      let failed = false;
      if (error.id !== undefined && error.id !== null) {
        failed = peer.resolve(error.id, new InvalidResponse(error), this.notificationsRead) === 0;
      }
      peer.report({ kind: "invalid-message", error, failedCall: failed });
      return null;
    }
    const reply = error.reply();
    peer.report({ kind: "invalid-message", error, failedCall: false });
    return reply === null ? null : encodeMessage(reply);
  }

  private onOversize(line: Oversize): string | null {
    this.peer.report({ kind: "oversize-message", line });
    if (line.id === undefined) return null;
    if (line.shape === "call") {
      const max = this.options.maxMessageSize;
      const message = `invalid request: message of ${line.length} bytes exceeds the maximum of ${max} bytes`;
      return encodeResponse(line.id, null, { code: ErrorCode.INVALID_REQUEST, message });
    }
    if (line.shape === "response" && line.id !== null) {
      this.peer.resolve(line.id, new ResponseTooLarge(line.length), this.notificationsRead);
    }
    return null;
  }
}

/** The id under `key` in a cancel notification's params, when it is an integer, a
 * string or `null`; `undefined` when they name none. */
function memberId(notification: Notification, key: string): RequestId | undefined {
  try {
    const params = notification.params === null ? null : parse(notification.params.text);
    if (!(params instanceof JObject)) return undefined;
    const value = params.members.find((m) => m.key === key)?.value;
    if (value === null || typeof value === "string") return value;
    if (value instanceof JNumber && value.integer) {
      const big = BigInt(value.text);
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    }
    return undefined;
  } catch {
    return undefined;
  }
}
