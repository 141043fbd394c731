/** `AcpOptions`, and the `AcpEvent`s an ACP connection reports besides the JSON-RPC ones. */

import { DecodeError, type DecodeWarning } from "../codec/errors.js";
import type { RawJson } from "../codec/values.js";
import type { RequestId } from "../jsonrpc/id.js";
import { DEFAULT_CANCEL, logHandlerFailure, type ConnectionEvent, type ConnectionOptions, type OnError } from "../jsonrpc/options.js";

export type { HandlerFailure, OnError } from "../jsonrpc/options.js";
import type { SurfaceView } from "./surface.js";

/** Something an ACP connection noticed and did not pass to a handler, or passed on after salvaging it. */
export type AcpEvent =
  /** A message was accepted after dropping malformed optional values. */
  | { readonly kind: "salvaged"; readonly method: string; readonly warnings: readonly DecodeWarning[] }
  /** A notification whose params are invalid was dropped. */
  | { readonly kind: "invalid-notification"; readonly method: string; readonly error: DecodeError }
  /** A notification of a method this side does not handle was ignored. */
  | { readonly kind: "unknown-notification"; readonly method: string }
  /** A notification arrived before `initialize` completed and was dropped. */
  | { readonly kind: "notification-before-initialize"; readonly method: string }
  /** A notification named a session this side does not know (`session/update` is still
   * delivered; `session/cancel` is ignored). */
  | { readonly kind: "unknown-session"; readonly method: string; readonly sessionId: string };

/** Receives every JSON-RPC and ACP event, inline on the connection's tasks. */
export type AcpObserver = (event: ConnectionEvent | AcpEvent) => void;

/** How an ACP connection behaves: the JSON-RPC limits plus the ACP-level checks. */
export interface AcpOptions {
  /** The JSON-RPC options. ACP v1 allows `"id": null`, so `allowNullId` is always on. */
  connection?: ConnectionOptions;
  /** Validate everything this side sends (request and notification params, handler
   * results) by decoding it again as the receiver would. Default on: invalid params fail
   * the call locally (`InvalidParams`, nothing is sent); an invalid handler result is
   * reported (`onError`) and answered -32603. `false` is the hot-path opt-out: it skips
   * the second decode, and only the encoders' own type checks remain (a missing member
   * or a value of the wrong JavaScript type still fails; an unknown enum value or a
   * broken length rule goes out). */
  strict?: boolean;
  /** Told when a handler throws or returns an invalid result, with the method, the
   * request id (`null` for a notification) and the error; the peer gets -32603 either
   * way. Default `console.error` (`logHandlerFailure`); `null` reports to no one.
   * `connection.onError`, when given, wins. */
  onError?: OnError | null;
  /** Milliseconds a spawned agent may take to exit after its stdin is closed before its group is killed. Default 2000. */
  exitGrace?: number;
  /** Receives every `AcpEvent` and `ConnectionEvent`. */
  observer?: AcpObserver;
}

/** The JSON-RPC options an ACP connection runs with. */
export function connectionOptions(options: AcpOptions, surface: SurfaceView): ConnectionOptions {
  const base = options.connection ?? {};
  const observer = base.observer ?? options.observer ?? null;
  const cancel = base.cancelNotification === undefined ? DEFAULT_CANCEL : base.cancelNotification;
  // The cancel notification is read by the generated decoder of its params, as `classify`
  // reads it: the connection cancels exactly on what validation accepts.
  const note = cancel === null ? undefined : surface.notifications("agent").get(cancel.method);
  const cancelNotification =
    cancel === null || note === undefined || cancel.readId !== undefined ? cancel : { ...cancel, readId: cancelIdReader(surface, note.params, cancel.idKey) };
  const onError = resolveOnError(options);
  return { ...base, allowNullId: true, observer, cancelNotification, onError };
}

/** The handler-failure reporter of `options`: `connection.onError`, else `onError`, else `console.error`. */
export function resolveOnError(options: AcpOptions): OnError | null {
  const chosen = options.connection?.onError !== undefined ? options.connection.onError : options.onError;
  return chosen === undefined ? logHandlerFailure : chosen;
}

function cancelIdReader(surface: SurfaceView, typeName: string, key: string): (params: RawJson | null) => RequestId | undefined {
  return (params) => {
    try {
      const value = surface.decodeNamed(typeName, params, "$.params").value as Record<string, unknown>;
      return value[key] as RequestId | undefined;
    } catch (err) {
      if (err instanceof DecodeError) return undefined;
      throw err;
    }
  };
}
