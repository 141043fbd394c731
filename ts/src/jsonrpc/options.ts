/** `ConnectionOptions`, and the `ConnectionEvent`s a connection reports to its observer.
 * The defaults are the Rust SDK's. */

import type { RawJson } from "../codec/values.js";
import type { ErrorObject } from "./error.js";
import { DEFAULT_MAX_MESSAGE_SIZE, type Oversize } from "./frame.js";
import type { RequestId } from "./id.js";
import type { EnvelopeError } from "./message.js";

/** Something noteworthy that happened on a connection. */
export type ConnectionEvent =
  /** A line that is not JSON was skipped without a reply (`skipNonJsonLines`). */
  | { readonly kind: "non-json-line-skipped"; readonly length: number }
  /** A line was not a valid message; answered when `error.isAnswered`. `failedCall`: a pending call failed with it. */
  | { readonly kind: "invalid-message"; readonly error: EnvelopeError; readonly failedCall: boolean }
  /** A line over `maxMessageSize` was discarded (a call with a recovered id answered -32600). */
  | { readonly kind: "oversize-message"; readonly line: Oversize }
  /** A response for an id that is not pending. */
  | { readonly kind: "unmatched-response"; readonly id: RequestId }
  /** A response for a call that was abandoned (cancelled, timed out); discarded. */
  | { readonly kind: "late-response"; readonly id: RequestId }
  /** An error response with `"id": null` (the peer could not read something we sent). */
  | { readonly kind: "error-without-id"; readonly error: ErrorObject }
  /** A request handler threw; the request was answered -32603. */
  | { readonly kind: "request-handler-failed"; readonly id: RequestId; readonly method: string; readonly error: unknown }
  /** A notification handler threw; the worker went on. */
  | { readonly kind: "notification-handler-failed"; readonly method: string; readonly error: unknown }
  /** A call's result hook threw; the call still got its answer. */
  | { readonly kind: "result-hook-failed"; readonly id: RequestId; readonly error: unknown }
  /** A cancel notification whose params name no request id. */
  | { readonly kind: "invalid-cancel" }
  /** The input reached its end; the connection is shutting down. */
  | { readonly kind: "input-closed" };

/** Receives every `ConnectionEvent`, inline on the connection's tasks (keep it short). */
export type Observer = (event: ConnectionEvent) => void;

/** A handler threw (or returned something the runtime cannot send): the method, the
 * request id (`null` for a notification) and what was thrown. */
export interface HandlerFailure {
  readonly method: string;
  readonly id: RequestId | null;
  readonly error: unknown;
}

/** Told about every handler failure, besides the -32603 answer the peer gets. */
export type OnError = (failure: HandlerFailure) => void;

/** The default `onError`: one `console.error` line naming the method and the request
 * id, followed by the error (its stack, for an `Error`). */
export function logHandlerFailure(failure: HandlerFailure): void {
  const what = failure.id === null ? `notification \`${failure.method}\`` : `request \`${failure.method}\` (id ${JSON.stringify(failure.id)})`;
  console.error(`agentproto: the handler of ${what} failed:`, failure.error);
}

/** The method and params key of the cancel notification (`{"requestId": <id>}`). */
export interface CancelNotification {
  readonly method: string;
  readonly idKey: string;
  /** How incoming params are read: the id to cancel, or `undefined` when they name none.
   * Absent: the `idKey` member, when it is an integer, a string or `null`. A protocol
   * layer passes the decoder of its params type, so that the connection acts on exactly
   * the cancel notifications its validation accepts. */
  readonly readId?: (params: RawJson | null) => RequestId | undefined;
}

export const DEFAULT_CANCEL: CancelNotification = { method: "$/cancel_request", idKey: "requestId" };

/** The limits and conventions of a connection. Every member is optional. */
export interface ConnectionOptions {
  /** The longest incoming line without its LF; longer ones are dropped as they stream by. Default 64 MiB. */
  maxMessageSize?: number;
  /** Whether incoming requests may carry `"id": null` (ACP v1 allows it). Default `false`. */
  allowNullId?: boolean;
  /** Report lines that are not JSON instead of answering -32700. Default `false`. */
  skipNonJsonLines?: boolean;
  /** Capacity of the queue between the reader and the notification worker. Default 64. */
  notificationQueue?: number;
  /** The most request handlers running at once. Default 64. */
  maxConcurrentRequests?: number;
  /** How many notifications or requests the reader may set aside while its queues are
   * full, to keep reading answers to pending calls. Default 1024. */
  backlog?: number;
  /** Capacity of the outgoing queue (messages); senders wait for room. Default 64. */
  outgoingQueue?: number;
  /** Milliseconds after which every call fails with `CallTimeout`; `null`: none (default). */
  callTimeout?: number | null;
  /** Milliseconds handlers may run after the input ended, and the writer may take to flush. Default 5000. */
  shutdownGrace?: number;
  /** The cancel notification; `null` disables it both ways. */
  cancelNotification?: CancelNotification | null;
  /** Receives every `ConnectionEvent`. */
  observer?: Observer | null;
  /** Told when a request or notification handler throws (the peer still gets -32603 for
   * a request, without the error's details). Default `logHandlerFailure`
   * (`console.error`); `null` reports nowhere but the observer. */
  onError?: OnError | null;
}

/** The options with every default filled in. */
export interface ResolvedOptions {
  readonly maxMessageSize: number;
  readonly allowNullId: boolean;
  readonly skipNonJsonLines: boolean;
  readonly notificationQueue: number;
  readonly maxConcurrentRequests: number;
  readonly backlog: number;
  readonly outgoingQueue: number;
  readonly callTimeout: number | null;
  readonly shutdownGrace: number;
  readonly cancelNotification: CancelNotification | null;
  readonly observer: Observer | null;
  readonly onError: OnError | null;
}

export function resolveOptions(o: ConnectionOptions = {}): ResolvedOptions {
  return {
    maxMessageSize: o.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE,
    allowNullId: o.allowNullId ?? false,
    skipNonJsonLines: o.skipNonJsonLines ?? false,
    notificationQueue: Math.max(1, o.notificationQueue ?? 64),
    maxConcurrentRequests: Math.max(1, o.maxConcurrentRequests ?? 64),
    backlog: Math.max(0, o.backlog ?? 1024),
    outgoingQueue: Math.max(1, o.outgoingQueue ?? 64),
    callTimeout: o.callTimeout ?? null,
    shutdownGrace: Math.max(0, o.shutdownGrace ?? 5000),
    cancelNotification: o.cancelNotification === undefined ? DEFAULT_CANCEL : o.cancelNotification,
    observer: o.observer ?? null,
    onError: o.onError === undefined ? logHandlerFailure : o.onError,
  };
}
