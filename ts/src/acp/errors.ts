/**
 * `AcpError`: how a typed call or notification failed. The peer's own error answer is
 * `PeerError`; every other subclass happened on this side. Each class's `variant` is
 * the name of the Rust SDK's `AcpError` variant (the flow vectors name outcomes by it).
 * A handler that lets one escape answers -32603 naming the call (`data.method`, and
 * `data.cause` for a peer error), or -32800 for `Cancelled`: the peer's code is never
 * passed on as the handler's own.
 */

import type { DecodeError } from "../codec/errors.js";
import { encodeString, RawJson } from "../codec/values.js";
import { ErrorCode, type ErrorObject } from "../jsonrpc/error.js";
import type { CallError } from "../jsonrpc/local-error.js";

export abstract class AcpError extends Error {
  /** The Rust SDK's name for this kind of failure. */
  abstract readonly variant: string;

  constructor(
    /** The method called (`null` where no single method is to blame). */
    readonly method: string | null,
    message: string,
  ) {
    super(message);
  }

  /** The answer of a handler that failed with this error. */
  toErrorObject(): ErrorObject {
    const code = this instanceof Cancelled ? ErrorCode.REQUEST_CANCELLED : ErrorCode.INTERNAL_ERROR;
    let data = `{"method":${this.method === null ? "null" : encodeString(this.method)}`;
    if (this instanceof PeerError) data += `,"cause":{"code":${this.error.code},"message":${encodeString(this.error.message)}}`;
    return { code, message: this.message, data: new RawJson(data + "}") };
  }
}

/** The peer answered with an error object. */
export class PeerError extends AcpError {
  readonly variant = "Rpc";
  override name = "PeerError";
  constructor(method: string, readonly error: ErrorObject) {
    super(method, `\`${method}\` failed: ${error.message} (${error.code})`);
  }
}

/** The connection is closed or failed, the call timed out, or its answer was unusable. */
export class ConnectionFailed extends AcpError {
  readonly variant = "Connection";
  override name = "ConnectionFailed";
  constructor(method: string, override readonly cause: CallError) {
    super(method, `\`${method}\`: ${cause.message}`);
  }
}

/** The peer's result does not match the method's result type. */
export class InvalidResult extends AcpError {
  readonly variant = "InvalidResult";
  override name = "InvalidResult";
  constructor(method: string, readonly error: DecodeError) {
    super(method, `\`${method}\`: invalid result: ${error.message}`);
  }
}

/** Strict mode: the params this side was about to send are invalid; nothing was sent. */
export class InvalidParams extends AcpError {
  readonly variant = "InvalidParams";
  override name = "InvalidParams";
  constructor(method: string, readonly error: DecodeError) {
    super(method, `\`${method}\`: refusing to send invalid params: ${error.message}`);
  }
}

/** `initialize` has not completed; nothing was sent. */
export class NotInitialized extends AcpError {
  readonly variant = "NotInitialized";
  override name = "NotInitialized";
  constructor(method: string) {
    super(method, `\`${method}\` cannot be sent before \`initialize\` has completed`);
  }
}

/** The peer did not advertise the capability this method (or this content) needs; nothing was sent. */
export class CapabilityNotAdvertised extends AcpError {
  readonly variant = "CapabilityNotAdvertised";
  override name = "CapabilityNotAdvertised";
  constructor(method: string, readonly capability: string) {
    super(method, `\`${method}\` needs the peer capability \`${capability}\`, which it did not advertise`);
  }
}

/** The answer that opened the session did not announce what this method needs
 * (`session/set_mode` for a session whose opening answer had no `modes`); nothing was sent. */
export class NotAnnounced extends AcpError {
  readonly variant = "NotAnnounced";
  override name = "NotAnnounced";
  constructor(
    method: string,
    /** The session the call names. */
    readonly session: string,
    /** The member of the opening answer it needs, e.g. `modes`. */
    readonly member: string,
  ) {
    super(method, `\`${method}\` needs \`${member}\`, which the answer that opened session \`${session}\` did not announce`);
  }
}

/** The agent answered `initialize` with a protocol version this side does not speak. */
export class UnsupportedVersion extends AcpError {
  readonly variant = "UnsupportedVersion";
  override name = "UnsupportedVersion";
  constructor(readonly answered: number, readonly supported: number) {
    super(null, `the agent answered protocol version ${answered}; this connection speaks ${supported}`);
  }
}

/** The session's prompt turn was cancelled while this call was pending; `$/cancel_request` was sent. */
export class Cancelled extends AcpError {
  readonly variant = "Cancelled";
  override name = "Cancelled";
  constructor(method: string) {
    super(method, `\`${method}\` was abandoned: the session's prompt turn was cancelled`);
  }
}

/** A handler returned a value its method's result type does not allow (a member
 * missing, a value of the wrong type, an unknown enum value). Not an `AcpError`: it is
 * a local bug, reported to the developer (`AcpOptions.onError`), while the peer gets
 * a plain -32603 without these details. */
export class InvalidHandlerResult extends Error {
  constructor(
    readonly method: string,
    /** Where in the result (`$.result...`) and what. */
    readonly error: DecodeError,
  ) {
    super(`the \`${method}\` handler returned an invalid result: ${error.message}`);
    this.name = "InvalidHandlerResult";
  }
}
