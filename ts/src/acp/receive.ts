/**
 * Classifying one incoming line: the receive path every ACP endpoint shares.
 *
 * `classify` takes the bytes of one framed line, the receiving side (`Receiver`) and that
 * side's view of its own pending requests, and says what must happen: dispatch a request
 * or a notification, resolve a pending call, answer with an error, or ignore the line
 * with a `Finding`. It does no I/O, so a connection, a tool and the conformance vectors
 * all run exactly this code (the twin of `crates/acp/src/receive.rs` and of the Python
 * SDK's `agentproto.acp.receive`).
 */

import { DecodeError, type DecodeWarning } from "../codec/errors.js";
import { rustDebugStr } from "../codec/runtime.js";
import { RawJson } from "../codec/values.js";
import { ErrorCode, invalidParamsDecoded, type ErrorObject } from "../jsonrpc/error.js";
import { idJson, type RequestId } from "../jsonrpc/id.js";
import { decodeMessage, EnvelopeError, type Response } from "../jsonrpc/message.js";
import type { SurfaceView } from "./surface.js";
import { readsAsEmpty } from "./rules.js";

/** An extension message (a method starting with `_`), passed through raw. */
export interface ExtMessage {
  readonly kind: "ext";
  /** The full wire name, leading underscore included. */
  readonly method: string;
  /** The params or result as received; `null` when the message had none. */
  readonly payload: RawJson | null;
}

/** Options of a `Receiver`. */
export interface ReceiverOptions {
  /** Whether a request may carry `"id": null` (ACP v1 allows it; the default). */
  readonly allowNullId?: boolean;
}

/** The receiving side of a connection: which payloads it decodes, and how. */
export class Receiver {
  readonly allowNullId: boolean;

  constructor(
    readonly surface: SurfaceView,
    /** `agent` or `client`: the side that receives. */
    readonly side: "agent" | "client",
    options: ReceiverOptions = {},
  ) {
    this.allowNullId = options.allowNullId ?? true;
  }

  /** The side that sends what this side receives. */
  get sender(): "agent" | "client" {
    return this.side === "agent" ? "client" : "agent";
  }
}

/** Why a line was not dispatched. `code` is stable and shared with the vectors:
 * `bad-envelope`, `method-not-found`, `invalid-params`, `invalid-notification`,
 * `unknown-notification`, `unmatched-response`, `invalid-response`. */
export interface Finding {
  readonly code: string;
  readonly message: string;
  readonly path: string;
  readonly error: DecodeError | null;
}

/** Dispatch to the request handler, then answer `id`. */
export interface IncomingRequest {
  readonly kind: "request";
  readonly id: RequestId;
  readonly method: string;
  /** The decoded params (a value of the generated type `typeName`), or an `ExtMessage`. */
  readonly params: unknown;
  readonly typeName: string | null;
  readonly warnings: readonly DecodeWarning[];
}

/** Dispatch to the notification handler. */
export interface IncomingNotification {
  readonly kind: "notification";
  readonly method: string;
  readonly params: unknown;
  readonly typeName: string | null;
  readonly warnings: readonly DecodeWarning[];
}

/** Resolve the pending call `id` (a request of `method`) with its decoded result. */
export interface IncomingResponse {
  readonly kind: "response";
  readonly id: RequestId;
  readonly method: string;
  readonly result: unknown;
  readonly typeName: string | null;
  readonly warnings: readonly DecodeWarning[];
}

/** Resolve the pending call `id` with the peer's error object. */
export interface IncomingError {
  readonly kind: "error";
  readonly id: RequestId;
  readonly method: string;
  readonly error: ErrorObject;
}

/** Send this error response; nothing is dispatched. */
export interface Reply {
  readonly kind: "reply";
  readonly reply: Response;
  readonly finding: Finding;
}

/** The pending call `id` fails locally: its response was unusable. Nothing is sent. */
export interface CallFailed {
  readonly kind: "call-failed";
  readonly id: RequestId;
  readonly method: string;
  readonly path: string;
  readonly message: string;
  readonly error: DecodeError | null;
}

/** Nothing is dispatched and nothing is sent. */
export interface Ignored {
  readonly kind: "ignored";
  readonly finding: Finding;
}

export type Incoming =
  | IncomingRequest
  | IncomingNotification
  | IncomingResponse
  | IncomingError
  | Reply
  | CallFailed
  | Ignored;

/** The requests this side sent and awaits: the method of a pending id, or `undefined`. */
export type Pending = (id: RequestId) => string | undefined;

const EMPTY_RESULT = new RawJson("{}");

function finding(code: string, message: string, path = "", error: DecodeError | null = null): Finding {
  return { code, message, path, error };
}

/** The -32602 error object for a decode failure; `data` is `{path, kind, expected,
 * found}`, the message rendered from the same parts. */
export function invalidParams(e: DecodeError): ErrorObject {
  return invalidParamsDecoded(e);
}

function errorResponse(id: RequestId, error: ErrorObject): Response {
  return { kind: "response", id, result: null, error };
}

/**
 * Classifies one line (without its terminator).
 *
 * @param line the bytes of one framed line.
 * @param receiver the receiving side.
 * @param pending the method of each request this side sent and awaits.
 */
export function classify(line: Uint8Array | string, receiver: Receiver, pending: Pending): Incoming {
  let message;
  try {
    message = decodeMessage(line, { allowNullId: receiver.allowNullId });
  } catch (err) {
    if (!(err instanceof EnvelopeError)) throw err;
    return envelopeFailure(err, pending);
  }
  const surface = receiver.surface;
  if (message.kind === "notification") {
    const note = surface.notifications(receiver.side).get(message.method);
    if (note === undefined) {
      if (message.method.startsWith("_")) {
        const ext: ExtMessage = { kind: "ext", method: message.method, payload: message.params };
        return { kind: "notification", method: message.method, params: ext, typeName: null, warnings: [] };
      }
      return { kind: "ignored", finding: finding("unknown-notification", message.method) };
    }
    try {
      const decoded = surface.decodeNamed(note.params, message.params, "$.params");
      return { kind: "notification", method: message.method, params: decoded.value, typeName: note.params, warnings: decoded.warnings };
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
      return { kind: "ignored", finding: finding("invalid-notification", err.detail, err.path, err) };
    }
  }
  if (message.kind === "request") {
    const info = surface.requests(receiver.side).get(message.method);
    if (info === undefined) {
      if (message.method.startsWith("_")) {
        const ext: ExtMessage = { kind: "ext", method: message.method, payload: message.params };
        return { kind: "request", id: message.id, method: message.method, params: ext, typeName: null, warnings: [] };
      }
      const notFound = { code: ErrorCode.METHOD_NOT_FOUND, message: `method not found: ${rustDebugStr(message.method)}` };
      return { kind: "reply", reply: errorResponse(message.id, notFound), finding: finding("method-not-found", message.method) };
    }
    try {
      const decoded = surface.decodeNamed(info.params, message.params, "$.params");
      return {
        kind: "request",
        id: message.id,
        method: message.method,
        params: decoded.value,
        typeName: info.params,
        warnings: decoded.warnings,
      };
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
      return {
        kind: "reply",
        reply: errorResponse(message.id, invalidParams(err)),
        finding: finding("invalid-params", err.detail, err.path, err),
      };
    }
  }
  const method = pending(message.id);
  if (method === undefined) return { kind: "ignored", finding: finding("unmatched-response", idJson(message.id)) };
  if (message.error !== null) return { kind: "error", id: message.id, method, error: message.error };
  const call = surface.requests(receiver.sender).get(method);
  if (call === undefined || call.result === null) {
    if (call === undefined && method.startsWith("_")) {
      const ext: ExtMessage = { kind: "ext", method, payload: message.result };
      return { kind: "response", id: message.id, method, result: ext, typeName: null, warnings: [] };
    }
    const text = `no result type for method ${rustDebugStr(method)}`;
    return { kind: "call-failed", id: message.id, method, path: "$", message: text, error: null };
  }
  try {
    // A `null` result is the empty object for a method whose result may be empty (rule 10).
    const result = readsAsEmpty(call, message.result?.text ?? null) ? EMPTY_RESULT : message.result;
    const decoded = surface.decodeNamed(call.result, result, "$.result");
    return { kind: "response", id: message.id, method, result: decoded.value, typeName: call.result, warnings: decoded.warnings };
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    return { kind: "call-failed", id: message.id, method, path: err.path, message: err.detail, error: err };
  }
}

function envelopeFailure(e: EnvelopeError, pending: Pending): Incoming {
  if (e.kind === "invalid-response") {
    if (e.id !== undefined) {
      const method = pending(e.id);
      if (method !== undefined) {
        return { kind: "call-failed", id: e.id, method, path: e.path || "$", message: e.detail, error: null };
      }
    }
    return { kind: "ignored", finding: finding("invalid-response", e.detail, e.path) };
  }
  if (e.kind === "invalid-notification") return { kind: "ignored", finding: finding("invalid-notification", e.detail, e.path) };
  const reply = e.reply();
  if (reply === null) return { kind: "ignored", finding: finding("invalid-response", e.detail, e.path) };
  return { kind: "reply", reply, finding: finding("bad-envelope", e.detail, e.path) };
}
