/**
 * The answer side, for the client: a JSON-RPC response (a whole body, or the data of one
 * SSE event), an HTTP+JSON answer (status and body) or one HTTP+JSON SSE event in, the
 * operation's typed result out, or the peer's error (a wire error), or a local failure to
 * read the answer. Pure: no I/O.
 */

import { DecodeError } from "../codec/errors.js";
import { JArray, JNumber, JObject, JsonSyntaxError, MAX_NESTING_DEPTH, NestingError, parse, type JMember, type JNode } from "../codec/reader.js";
import { describe } from "../codec/runtime.js";
import { OPERATIONS, type OperationName, type Operations } from "../generated/a2a/v1.js";
import { AnswerFailure, ERROR_INFO_TYPE, peerKind, type PeerError } from "./errors.js";
import { bodyText } from "./http.js";
import { decodeResult } from "./operations.js";

/** What a call came back with. */
export type Answer<T> =
  | { readonly outcome: "decoded"; readonly value: T }
  | { readonly outcome: "error_reply"; readonly error: PeerError }
  | { readonly outcome: "call_failed"; readonly error: AnswerFailure };

/** The id the client sent its request with. */
export type CallId = number | string;

function failed(detail: string, decode: DecodeError | null = null): { outcome: "call_failed"; error: AnswerFailure } {
  return { outcome: "call_failed", error: new AnswerFailure(detail, decode) };
}

/** The body parsed, or why it is not one JSON value. */
function parseBody(body: Uint8Array | string): { text: string; node: JNode } | string {
  const text = bodyText(body);
  if (text === null) return "the answer is not UTF-8";
  try {
    return { text, node: parse(text, MAX_NESTING_DEPTH) };
  } catch (err) {
    if (err instanceof JsonSyntaxError || err instanceof NestingError) return `the answer is not JSON (${err.message})`;
    throw err;
  }
}

/** The result decoded as the operation's answer; a `null` result reads as `Empty`. */
function decoded<K extends OperationName>(operation: K, node: JNode, path: string, text: string): Answer<Operations[K]["result"]> {
  const readAs = node === null && OPERATIONS[operation].result === "Empty" ? new JObject([], 0, 0) : node;
  try {
    return { outcome: "decoded", value: decodeResult(operation, readAs, path, text) };
  } catch (err) {
    if (err instanceof DecodeError) return failed(`the answer to ${operation} does not decode`, err);
    throw err;
  }
}

function last(object: JObject, key: string): JMember | undefined {
  let found: JMember | undefined;
  for (const m of object.members) if (m.key === key) found = m;
  return found;
}

/** The first `google.rpc.ErrorInfo` of a list of details (JSON-RPC `data`, AIP-193 `details`). */
function errorInfo(details: JNode | undefined): { reason: string | undefined; metadata: Record<string, string> } {
  const metadata: Record<string, string> = {};
  if (!(details instanceof JArray)) return { reason: undefined, metadata };
  for (const item of details.items) {
    if (!(item instanceof JObject) || last(item, "@type")?.value !== ERROR_INFO_TYPE) continue;
    const reason = last(item, "reason")?.value;
    const meta = last(item, "metadata")?.value;
    if (meta instanceof JObject) for (const m of meta.members) if (typeof m.value === "string") metadata[m.key] = m.value;
    return { reason: typeof reason === "string" ? reason : undefined, metadata };
  }
  return { reason: undefined, metadata };
}

/** Whether a response's id is the request's (`7` is not `"7"`). */
function sameId(node: JNode, id: CallId): boolean {
  if (typeof id === "string") return node === id;
  return node instanceof JNumber && node.integer && BigInt(node.text) === BigInt(id);
}

/**
 * Reads a JSON-RPC response to `operation` (a whole body, or the data of one SSE event of
 * a streaming call): it must be one object with `"jsonrpc": "2.0"`, the request's `id`, and
 * either a `result` (decoded at `$.result`) or an `error` (code and message).
 */
export function readJsonRpcAnswer<K extends OperationName>(operation: K, body: Uint8Array | string, id: CallId): Answer<Operations[K]["result"]> {
  const parsed = parseBody(body);
  if (typeof parsed === "string") return failed(parsed);
  const { text, node } = parsed;
  if (!(node instanceof JObject)) return failed(`a JSON-RPC response is an object, found ${describe(node)}`);
  const seen = new Set<string>();
  for (const m of node.members) {
    if (seen.has(m.key) && ["jsonrpc", "id", "result", "error"].includes(m.key)) return failed(`the member ${JSON.stringify(m.key)} appears twice`);
    seen.add(m.key);
  }
  if (last(node, "jsonrpc")?.value !== "2.0") return failed('the member "jsonrpc" must be "2.0"');
  const idMember = last(node, "id");
  if (idMember === undefined || !sameId(idMember.value, id)) return failed("the response answers another request id");
  const result = last(node, "result");
  const error = last(node, "error");
  if ((result === undefined) === (error === undefined)) return failed('a response holds exactly one of "result" and "error"');
  if (result !== undefined) return decoded(operation, result.value, "$.result", text);
  const e = (error as JMember).value;
  if (!(e instanceof JObject)) return failed('the member "error" must be an object');
  const code = last(e, "code")?.value;
  const message = last(e, "message")?.value;
  if (!(code instanceof JNumber) || !code.integer || typeof message !== "string") return failed("the error needs an integer code and a message");
  const info = errorInfo(last(e, "data")?.value);
  const codeNumber = Number(code.text);
  return {
    outcome: "error_reply",
    error: {
      code: codeNumber,
      message,
      httpStatus: undefined,
      status: undefined,
      reason: info.reason,
      metadata: info.metadata,
      kind: peerKind(info.reason, codeNumber, undefined),
    },
  };
}

/** The peer's error from an AIP-193 body (`{"error": {code, status, message, details}}`);
 * a body that is not one keeps only the HTTP status (and its text as the message). */
function restError(status: number, body: Uint8Array | string | null): PeerError {
  const parsed = body === null ? "no body" : parseBody(body);
  const error = typeof parsed === "string" || !(parsed.node instanceof JObject) ? undefined : last(parsed.node, "error")?.value;
  if (!(error instanceof JObject)) {
    const text = body === null ? "" : (bodyText(body) ?? "");
    return { code: undefined, message: text, httpStatus: status, status: undefined, reason: undefined, metadata: {}, kind: peerKind(undefined, undefined, status) };
  }
  const code = last(error, "code")?.value;
  const statusName = last(error, "status")?.value;
  const message = last(error, "message")?.value;
  const info = errorInfo(last(error, "details")?.value);
  return {
    code: code instanceof JNumber && code.integer ? Number(code.text) : undefined,
    message: typeof message === "string" ? message : "",
    httpStatus: status,
    status: typeof statusName === "string" ? statusName : undefined,
    reason: info.reason,
    metadata: info.metadata,
    kind: peerKind(info.reason, undefined, status),
  };
}

/**
 * Reads an HTTP+JSON answer to `operation`: a 2xx body is the answer message (decoded at
 * `$`; an empty body reads as `Empty` where that is the answer), any other status an error.
 */
export function readRestAnswer<K extends OperationName>(operation: K, status: number, body: Uint8Array | string | null): Answer<Operations[K]["result"]> {
  if (status < 200 || status > 299) return { outcome: "error_reply", error: restError(status, body) };
  const empty = body === null || body.length === 0;
  if (empty && OPERATIONS[operation].result === "Empty") return decoded(operation, new JObject([], 0, 0), "$", "");
  const parsed = parseBody(body ?? "");
  if (typeof parsed === "string") return failed(parsed);
  return decoded(operation, parsed.node, "$", parsed.text);
}

/**
 * Reads one SSE event of an HTTP+JSON stream: its data is a `StreamResponse`, or, for an
 * event named `error`, an AIP-193 error body (`status` is the stream's HTTP status).
 */
export function readRestStreamEvent<K extends OperationName>(operation: K, event: string | undefined, data: string, status = 200): Answer<Operations[K]["result"]> {
  if (event === "error") return { outcome: "error_reply", error: restError(status, data) };
  return readRestAnswer(operation, 200, data);
}
