/**
 * What the Streamable HTTP profile needs to know about a message to route it.
 *
 * The connection runtime never looks at method names; this transport has to, a little:
 * the RFD routes by connection and by session. Each scan walks the top-level members
 * of a message without building it, and reads only the few small values it needs (the
 * id, the method, a `sessionId`). It is never the message's decode: the connection
 * decodes and validates every message as on stdio. A message the scan cannot read is
 * routed as connection-level, and the connection answers it as it would on stdio.
 */

import { idOf, Scanner } from "../../jsonrpc/frame.js";
import type { RequestId } from "../../jsonrpc/id.js";
import type { SurfaceView } from "../surface.js";

export const CONNECTION_ID_HEADER = "acp-connection-id";
export const SESSION_ID_HEADER = "acp-session-id";

type Span = readonly [number, number];

/** The members of a JSON-RPC message that routing reads, as spans of its text. */
export class Scanned {
  /** The id (`undefined`: absent or unreadable). */
  id: RequestId | undefined = undefined;
  hasId = false;
  method: string | undefined = undefined;
  params: Span | null = null;
  result: Span | null = null;
  hasError = false;

  constructor(readonly text: Uint8Array) {}

  /** A request: it has an id and a method. */
  get isRequest(): boolean {
    return this.hasId && this.method !== undefined;
  }

  /** A response: a result or an error, and no method. */
  get isResponse(): boolean {
    return this.method === undefined && (this.result !== null || this.hasError);
  }

  /** `params.sessionId`, when it is a string. */
  get paramsSession(): string | undefined {
    return this.params === null ? undefined : sessionIn(this.text, this.params);
  }

  /** `result.sessionId`, when it is a string (a session was created or opened). */
  get resultSession(): string | undefined {
    return this.result === null ? undefined : sessionIn(this.text, this.result);
  }
}

/** The routing members of `message`; `null` when it is not a JSON object. */
export function scan(message: Uint8Array): Scanned | null {
  const scanner = new Scanner(message);
  if (scanner.punct() !== 0x7b) return null;
  const found = new Scanned(message);
  for (;;) {
    const key = scanner.string();
    if (key === null || scanner.punct() !== 0x3a) break;
    scanner.skipWhitespace();
    const start = scanner.at;
    if (!scanner.skipValue()) break;
    const span: Span = [start, scanner.at];
    if (key === "id") {
      found.hasId = true;
      found.id = idOf(message.subarray(start, scanner.at));
    } else if (key === "method") found.method = stringAt(message, span);
    else if (key === "params") found.params = span;
    else if (key === "result") found.result = span;
    else if (key === "error") found.hasError = true;
    if (scanner.punct() !== 0x2c) break;
  }
  return found;
}

/** Whether a body is a JSON array (a batch, which this transport refuses). */
export function isBatch(body: Uint8Array): boolean {
  for (const c of body) {
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) continue;
    return c === 0x5b;
  }
  return false;
}

/** The session a client→agent message is scoped to: its `params.sessionId` when its
 * method works on a session this connection already has (not one that creates, loads
 * or resumes a session, whose answers come on the connection-scoped stream). */
export function sessionHeader(surface: SurfaceView, message: Scanned): string | undefined {
  const method = message.method;
  if (method === undefined) return undefined;
  const info = surface.requests("agent").get(method) ?? surface.notifications("agent").get(method);
  if (info === undefined || (info.session !== null && (info.session.unseenOk || info.session.effect === "created"))) return undefined;
  return message.paramsSession;
}

function sessionIn(text: Uint8Array, [start, end]: Span): string | undefined {
  const inner = text.subarray(start, end);
  const scanner = new Scanner(inner);
  if (scanner.punct() !== 0x7b) return undefined;
  for (;;) {
    const key = scanner.string();
    if (key === null || scanner.punct() !== 0x3a) return undefined;
    scanner.skipWhitespace();
    const at = scanner.at;
    if (!scanner.skipValue()) return undefined;
    if (key === "sessionId") return stringAt(inner, [at, scanner.at]);
    if (scanner.punct() !== 0x2c) return undefined;
  }
}

function stringAt(text: Uint8Array, [start, end]: Span): string | undefined {
  if (text[start] !== 0x22) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text.buffer, text.byteOffset + start, end - start).toString("utf8"));
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
