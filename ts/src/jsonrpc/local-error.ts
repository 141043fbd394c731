/**
 * Local failures of a connection: a call that got no usable answer, a transport that
 * failed, and `RequestError`, which a handler throws to answer with an error object.
 */

import { encodeString, RawJson } from "../codec/values.js";
import { ErrorCode, type ErrorObject } from "./error.js";
import type { EnvelopeError } from "./message.js";

/** A call to the peer ended without a result. */
export class CallError extends Error {
  override name = "CallError";
}

/** The peer answered with an error object. */
export class RpcError extends CallError {
  override name = "RpcError";
  constructor(readonly error: ErrorObject) {
    super(`${error.message} (${error.code})`);
  }
}

/** The connection is closed, or closed while the call was pending. */
export class ConnectionClosed extends CallError {
  override name = "ConnectionClosed";
  constructor() {
    super("the connection is closed");
  }
}

/** No answer came within the timeout; the cancel notification was sent. */
export class CallTimeout extends CallError {
  override name = "CallTimeout";
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/** The call's abort signal fired: the call was abandoned and the cancel notification sent. */
export class CallAborted extends CallError {
  override name = "CallAborted";
  constructor() {
    super("the call was abandoned");
  }
}

/** The answer was not a valid response object. */
export class InvalidResponse extends CallError {
  override name = "InvalidResponse";
  constructor(readonly envelope: EnvelopeError) {
    super(`${envelope.detail} at \`${envelope.path}\``); // the envelope error's text, from its parts
  }
}

/** The answer was longer than the connection's maximum message size. */
export class ResponseTooLarge extends CallError {
  override name = "ResponseTooLarge";
  constructor(readonly length: number) {
    super(`the response of ${length} bytes exceeds the maximum message size`);
  }
}

/** Reading or writing the byte streams failed; the connection is over. */
export class TransportError extends Error {
  override name = "TransportError";
}

/** Thrown by a request handler to answer with this error object. */
export class RequestError extends Error {
  override name = "RequestError";
  readonly error: ErrorObject;

  constructor(code: number, message: string, data?: RawJson) {
    super(message);
    this.error = data === undefined ? { code, message } : { code, message, data };
  }

  static from(error: ErrorObject): RequestError {
    return new RequestError(error.code, error.message, error.data);
  }

  /** -32601 for `method`. */
  static methodNotFound(method: string): RequestError {
    return new RequestError(ErrorCode.METHOD_NOT_FOUND, `method not found: \`${method}\``, new RawJson(`{"method":${encodeString(method)}}`));
  }

  /** -32603 with `message`. */
  static internal(message: string): RequestError {
    return new RequestError(ErrorCode.INTERNAL_ERROR, message);
  }
}

/** -32800, the answer to a request the peer cancelled. */
export function requestCancelled(): ErrorObject {
  return { code: ErrorCode.REQUEST_CANCELLED, message: "request cancelled" };
}
