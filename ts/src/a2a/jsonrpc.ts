/**
 * The JSON-RPC binding's request side, for the server: a POSTed body and the request's
 * headers and query string in, the operation and its typed request out, or the error to
 * answer with the id to answer it to. Pure: no I/O, nothing runs.
 *
 * The order of the checks is the Rust server's: the request's nesting depth, the envelope
 * (UTF-8, JSON, one object, each member once, `jsonrpc`, `id`, `method`), the `Content-Type`, the
 * `A2A-Version`, the method, then the params through the generated validator. An id is
 * written back exactly as it came (any JSON-RPC id: a string, any number, `null`).
 */

import { JArray, JObject, JNumber, JsonSyntaxError, NestingError, parse, type JMember, type JNode } from "../codec/reader.js";
import { DecodeError } from "../codec/errors.js";
import { encodeString } from "../codec/values.js";
import type { A2aRequest } from "../generated/a2a/v1.js";
import { A2aError } from "./errors.js";
import { v03Method, type Method } from "./compat/v03.js";
import { bodyText, checkDepth, checkVersion, contentTypeOk, contentTypeRefused, isV03, MAX_REQUEST_DEPTH, tooDeep, type Headers, type VersionOptions } from "./http.js";
import { decodeRequest, isOperation } from "./operations.js";

/** A request the server would run. */
export interface JsonRpcCall {
  readonly outcome: "dispatched";
  /** The id as JSON text, to write back as it came; `null` for a notification (answered
   * with HTTP 204 and no body, whatever its outcome). */
  readonly id: string | null;
  readonly request: A2aRequest;
}

/** An A2A 0.3 request (by its version) of a 0.3 method: the server converts its params. */
export interface JsonRpcV03Call {
  readonly outcome: "v03";
  readonly id: string | null;
  readonly method: Method;
  /** The params as they came (JSON text; `null` when absent). */
  readonly params: string;
}

/** A request refused before it ran: the error and the id (JSON text) to answer it to. */
export interface JsonRpcRefusal {
  readonly outcome: "refused";
  /** The id as JSON text; `"null"` when none could be read. */
  readonly id: string;
  /** Whether the request was a notification (never answered: HTTP 204). */
  readonly notification: boolean;
  readonly error: A2aError;
}

/** What the server reads from one JSON-RPC POST. */
export interface JsonRpcHttpRequest {
  readonly headers: Headers;
  /** The query string of the JSON-RPC URL, without `?` (it may carry `A2A-Version`). */
  readonly query: string;
  readonly body: Uint8Array | string;
}

const ENVELOPE_KEYS = new Set(["jsonrpc", "id", "method", "params", "result", "error"]);

function refused(id: string, error: A2aError, notification = false): JsonRpcRefusal {
  return { outcome: "refused", id, notification, error };
}

/** The id's JSON text (`undefined` when it is no JSON-RPC id). */
function idText(value: JNode): string | undefined {
  if (typeof value === "string") return encodeString(value);
  if (value instanceof JNumber) return value.text;
  if (value === null) return "null";
  return undefined;
}

/** Decodes one JSON-RPC request of the A2A 1.0 binding. */
export function decodeJsonRpcRequest(request: JsonRpcHttpRequest, options: VersionOptions = {}): JsonRpcCall | JsonRpcV03Call | JsonRpcRefusal {
  const text = bodyText(request.body);
  if (text === null) return refused("null", A2aError.parse("the body is not UTF-8"));
  let node: JNode;
  try {
    // The params within MAX_REQUEST_DEPTH levels, the envelope one level above them.
    node = parse(text, MAX_REQUEST_DEPTH + 1);
  } catch (err) {
    if (err instanceof NestingError) return refused("null", tooDeep());
    if (err instanceof JsonSyntaxError) return refused("null", checkDepth(text, 1) ?? A2aError.parse(err.message));
    throw err;
  }
  if (!(node instanceof JObject)) {
    const what = node instanceof JArray ? "a batch (an array)" : "not an object";
    return refused("null", new A2aError("InvalidRequest", `a JSON-RPC request object is expected, found ${what}`));
  }
  const fields = new Map<string, JMember>();
  let repeated: string | null = null;
  for (const m of node.members) {
    if (!ENVELOPE_KEYS.has(m.key)) continue;
    if (fields.has(m.key)) repeated ??= m.key;
    else fields.set(m.key, m);
  }
  const idMember = fields.get("id");
  const id = idMember === undefined ? undefined : idText(idMember.value);
  const echo = id ?? "null";
  const invalid = (message: string): JsonRpcRefusal => refused(repeated === "id" ? "null" : echo, new A2aError("InvalidRequest", message));
  if (repeated !== null) return invalid(`the member ${JSON.stringify(repeated)} appears twice`);
  if (idMember !== undefined && id === undefined) return refused("null", new A2aError("InvalidRequest", "the id must be a string, a number or null"));
  if (fields.get("jsonrpc")?.value !== "2.0") return invalid('the member "jsonrpc" must be "2.0"');
  if (fields.has("result") || fields.has("error")) return invalid("a JSON-RPC request is expected, not a response");
  const method = fields.get("method")?.value;
  if (typeof method !== "string") return invalid('the member "method" must be a string');
  const notification = idMember === undefined;
  if (!contentTypeOk(request.headers)) return refused(echo, contentTypeRefused(), notification);
  if (options.v03 !== false && isV03(request.headers, request.query, options)) {
    const v03 = v03Method(method);
    if (v03 === undefined) return refused(echo, v03Refused(method), notification);
    const params = fields.get("params");
    return { outcome: "v03", id: notification ? null : echo, method: v03, params: params === undefined ? "null" : text.slice(params.start, params.end) };
  }
  const versionError = checkVersion(request.headers, request.query, options);
  if (versionError !== null) return refused(echo, versionError, notification);
  if (!isOperation(method)) {
    return refused(echo, new A2aError("MethodNotFound", `method ${JSON.stringify(method)} does not exist`).with("method", method), notification);
  }
  const params = fields.get("params")?.value ?? null;
  try {
    const decoded = decodeRequest(method, params === null ? new JObject([], 0, 0) : params, "$.params", text);
    return { outcome: "dispatched", id: notification ? null : echo, request: decoded };
  } catch (err) {
    if (err instanceof DecodeError) return refused(echo, A2aError.invalidParams(err), notification);
    throw err;
  }
}

/** A JSON-RPC error response's text (`id` is the id's JSON text). */
export function jsonRpcErrorBody(id: string, error: A2aError): string {
  return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(error.jsonRpcError())}}`;
}

/** The refusal of a 0.3 request whose method is not a 0.3 method. */
function v03Refused(method: string): A2aError {
  return new A2aError(
    "VersionNotSupported",
    `a request without an A2A-Version header is A2A 0.3, and ${JSON.stringify(method)} is not a 0.3 method; this interface serves 0.3 under its own method names (message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/*, agent/getAuthenticatedExtendedCard) and 1.0 with A2A-Version: 1.0`,
  )
    .with("version", "0.3")
    .with("supportedVersions", "1.0, 0.3");
}

/** A JSON-RPC error response of A2A 0.3: the 0.3 code, and `data` a plain object of the
 * error's metadata (left out when it has none). */
export function jsonRpcV03ErrorBody(id: string, error: A2aError): string {
  const body: { code: number; message: string; data?: Record<string, string> } = { code: error.row.codeV03, message: error.message };
  if (error.metadata.length > 0) body.data = Object.fromEntries(error.metadata);
  return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(body)}}`;
}

/** A JSON-RPC result response's text around an already encoded result. */
export function jsonRpcResultBody(id: string, result: string): string {
  const [before, after] = jsonRpcResultAround(id);
  return `${before}${result}${after}`;
}

/** The text of a JSON-RPC result response before and after its result. */
export function jsonRpcResultAround(id: string): readonly [string, string] {
  return [`{"jsonrpc":"2.0","id":${id},"result":`, "}"];
}
