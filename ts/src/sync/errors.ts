// The errors of the sync channel, one class per case of the Rust crate's
// `ClientError`, `ProtocolError` and `ServerError` (crates/sync).

import { describeFrame, type FrameError, type MessageType, messageTypeName } from "./frame.js";

/** How a child process ended: its exit code, or the signal that killed it. */
export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** `exit status 3`, `signal SIGKILL`, or `unknown status`. */
export function describeStatus(status: ExitStatus | undefined): string {
  if (status?.signal) return `signal ${status.signal}`;
  if (status?.code !== null && status?.code !== undefined) return `exit status ${status.code}`;
  return "unknown status";
}

/** Every error this module throws on purpose. */
export class SyncChannelError extends Error {
  override readonly name: string = "SyncChannelError";
}

/** What is wrong with a well-formed tuple, or that the tuple was malformed. */
export type ProtocolErrorDetail =
  | { readonly reason: "frame"; readonly error: FrameError }
  | { readonly reason: "name-mismatch"; readonly kind: MessageType; readonly expected: string; readonly found: string }
  | { readonly reason: "unexpected-type"; readonly kind: MessageType; readonly name: string };

function describeProtocol(detail: ProtocolErrorDetail): string {
  switch (detail.reason) {
    case "frame":
      return `malformed tuple: ${describeFrame(detail.error.detail)}`;
    case "name-mismatch":
      return `${messageTypeName(detail.kind)} names \`${detail.found}\` while the answer for \`${detail.expected}\` was expected`;
    case "unexpected-type":
      return `unexpected ${messageTypeName(detail.kind)} tuple \`${detail.name}\``;
  }
}

/**
 * The peer sent something the protocol does not allow here: a malformed
 * tuple, an answer naming another method or callback, or a tuple of a type
 * this side never receives at this point. On a client, the child has been
 * ended: the stream cannot be resynchronised.
 */
export class ProtocolError extends SyncChannelError {
  override readonly name = "ProtocolError";
  constructor(readonly detail: ProtocolErrorDetail) {
    super(`protocol error: ${describeProtocol(detail)}`, detail.reason === "frame" ? { cause: detail.error } : undefined);
  }
}

/** The server answered the request with an `Error` tuple; `text` is its payload. */
export class ServerError extends SyncChannelError {
  override readonly name = "ServerError";
  constructor(readonly text: string) {
    super(`server error: ${text}`);
  }
}

/** The server process could not be started. */
export class SpawnError extends SyncChannelError {
  override readonly name = "SpawnError";
}

/**
 * The server closed its end of the pipes (it exited, crashed or was killed).
 * The child has been ended; `status` is how it ended, when the platform lets a
 * synchronous caller see it (Linux), else `undefined` (see `SyncClient.exited`).
 */
export class ChildExitedError extends SyncChannelError {
  override readonly name = "ChildExitedError";
  constructor(readonly status: ExitStatus | undefined) {
    super(`server process exited (${describeStatus(status)})`);
  }
}

/** The channel was closed (`close()`) before this request. */
export class ChannelClosedError extends SyncChannelError {
  override readonly name = "ChannelClosedError";
  constructor() {
    super("channel is closed");
  }
}

/** Reading or writing the pipes failed for another reason than the peer going away; the channel is closed. */
export class ChannelIoError extends SyncChannelError {
  override readonly name = "ChannelIoError";
  constructor(cause: unknown) {
    super(`i/o error on the channel: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The params of a JSON request could not be encoded (`JSON.stringify` failed or gave nothing). */
export class JsonParamsError extends SyncChannelError {
  override readonly name = "JsonParamsError";
  constructor(
    readonly method: string,
    cause: unknown,
  ) {
    super(`could not encode the params of \`${method}\` as JSON`, { cause });
  }
}

/** The result of a JSON request is not JSON (or not UTF-8). */
export class JsonResultError extends SyncChannelError {
  override readonly name = "JsonResultError";
  constructor(
    readonly method: string,
    cause: unknown,
  ) {
    super(`could not decode the result of \`${method}\``, { cause });
  }
}

/**
 * Thrown by a client callback to answer the server with a `CallError` whose
 * text is `message` exactly. Any other exception is answered with
 * ``callback `NAME` panicked: MESSAGE`` (the Rust client's words for a panic).
 */
export class CallbackError extends SyncChannelError {
  override readonly name = "CallbackError";
}

/**
 * Thrown by a server handler to answer the request with an `Error` tuple whose
 * text is `message` exactly. Any other exception is answered with
 * ``handler `NAME` panicked: MESSAGE`` (the Rust server's words for a panic).
 */
export class HandlerError extends SyncChannelError {
  override readonly name = "HandlerError";
}

/**
 * A server's callback into the client was answered with a `CallError`; `text`
 * is the client's payload. A handler that lets it escape answers its request
 * with an `Error` whose text is this message (`client error: TEXT`).
 */
export class CallError extends SyncChannelError {
  override readonly name = "CallError";
  constructor(readonly text: string) {
    super(`client error: ${text}`);
  }
}

/**
 * The channel broke during a callback (end of input, a malformed or
 * unexpected tuple, an I/O error). `Server.serve` throws the cause once the
 * handler returns; nothing more is written.
 */
export class ChannelBrokenError extends SyncChannelError {
  override readonly name = "ChannelBrokenError";
  constructor() {
    super("the channel to the client broke during the call");
  }
}

/** The client's input ended while the server waited for the answer to callback `callback`. */
export class EndedDuringCallError extends SyncChannelError {
  override readonly name = "EndedDuringCallError";
  constructor(readonly callback: string) {
    super(`input ended while waiting for the answer to callback \`${callback}\``);
  }
}

/** The text of a thrown value, for error tuples. */
export function thrownText(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
