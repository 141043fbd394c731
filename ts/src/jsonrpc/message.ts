/**
 * The JSON-RPC 2.0 envelope: decode one line into a message, encode messages compactly.
 *
 * `params` and `result` stay raw (`RawJson`, the received text, with the parse of the
 * line attached so the protocol layer validates them without a second parse). Every
 * malformed line is classified as the Rust SDK does (`crates/jsonrpc/src/decode.rs`,
 * and the Python SDK's exact path): a code, the id when it can be recovered, a message
 * and a path. The reader sees what `JSON.parse` hides: repeated keys (-32600 in the
 * envelope), integers beyond 2^53 (kept exact), nesting deeper than 128 and invalid
 * UTF-8 (-32700).
 */

import { isUtf8 } from "node:buffer";

import {
  JArray,
  type JMember,
  JNumber,
  JObject,
  JsonSyntaxError,
  MAX_NESTING_DEPTH,
  NestingError,
  nestingExceeds,
  parse,
  type JNode,
} from "../codec/reader.js";
import { encodeString, ReceivedJson, RawJson } from "../codec/values.js";
import { firstInvalid, firstInvalidUtf8, positionAt } from "../codec/syntax.js";
import { encodeErrorObject, ErrorCode, errorWithPath, errorWithPosition, type ErrorObject } from "./error.js";
import { idJson, type RequestId } from "./id.js";

/** A call that expects a response. */
export interface Request {
  readonly kind: "request";
  readonly id: RequestId;
  readonly method: string;
  /** The params as received; `null` when absent or `null`. */
  readonly params: RawJson | null;
}

/** A one-way message. */
export interface Notification {
  readonly kind: "notification";
  readonly method: string;
  readonly params: RawJson | null;
}

/** The answer to a request: a raw `result` or an `error` object. */
export interface Response {
  readonly kind: "response";
  readonly id: RequestId;
  readonly result: RawJson | null;
  readonly error: ErrorObject | null;
}

export type Message = Request | Notification | Response;

/** How a line failed to be a message, and how it must be treated:
 * - `parse`: not JSON (invalid UTF-8, a syntax error, trailing data, too deep); answered -32700;
 * - `invalid-request`: JSON that is not a valid request (a batch, a scalar, a bad `jsonrpc` or `id`, ...); answered -32600;
 * - `invalid-params`: a request whose `params` is neither an object, an array nor `null`; answered -32602;
 * - `invalid-notification`: the same in a notification; never answered;
 * - `invalid-response`: a malformed response; never answered, the matching pending call fails. */
export type EnvelopeErrorKind = "parse" | "invalid-request" | "invalid-params" | "invalid-notification" | "invalid-response";

const CODES: Record<EnvelopeErrorKind, number> = {
  parse: ErrorCode.PARSE_ERROR,
  "invalid-request": ErrorCode.INVALID_REQUEST,
  "invalid-response": ErrorCode.INVALID_REQUEST,
  "invalid-params": ErrorCode.INVALID_PARAMS,
  "invalid-notification": ErrorCode.INVALID_PARAMS,
};

/** A line that is not a valid message: what to answer, to which id, and why. */
export class EnvelopeError extends Error {
  constructor(
    readonly kind: EnvelopeErrorKind,
    /** The id recovered from the line; `undefined` when none could be. */
    readonly id: RequestId | undefined,
    readonly detail: string,
    readonly path: string,
    /** For a parse error, the line and column (from 1, the column in characters) of the
     * first character that cannot continue a JSON text, or of the end of the input
     * (`codec/syntax.ts`). */
    readonly position: { readonly line: number; readonly column: number } | null = null,
  ) {
    super(`${detail} at \`${path}\``);
    this.name = "EnvelopeError";
  }

  /** The JSON-RPC code that describes the failure. */
  get code(): number {
    return CODES[this.kind];
  }

  get isAnswered(): boolean {
    return this.kind === "parse" || this.kind === "invalid-request" || this.kind === "invalid-params";
  }

  /** Code, message, and `{"path"}` as data, with `"line"` and `"column"` for a parse error. */
  toErrorObject(): ErrorObject {
    if (this.position === null) return errorWithPath(this.code, this.detail, this.path);
    return errorWithPosition(this.code, this.detail, this.path, this.position.line, this.position.column);
  }

  /** The error response to send, or `null` when the failure is not answered. */
  reply(): Response | null {
    if (!this.isAnswered) return null;
    return { kind: "response", id: this.id === undefined ? null : this.id, result: null, error: this.toErrorObject() };
  }
}

/** Options of `decodeMessage`. */
export interface DecodeOptions {
  /** Whether a request may carry `"id": null` (ACP v1 allows it). */
  readonly allowNullId?: boolean;
}


/**
 * Decodes one line (without its terminator).
 *
 * @throws EnvelopeError when the line is not a valid message; its `kind`, `code`, `id`
 *   and `reply()` say how to answer.
 */
export function decodeMessage(line: Uint8Array | string, options: DecodeOptions = {}): Message {
  let text: string;
  if (typeof line === "string") text = line;
  else {
    if (!isUtf8(line)) throw utf8Error(line);
    // A byte-order mark stays a character (and is not JSON), as a strict decoder keeps it.
    text = Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString("utf8");
  }
  return decodeText(text, options.allowNullId ?? false);
}

function parseError(message: string): EnvelopeError {
  return new EnvelopeError("parse", undefined, message, "$");
}

/** The parse error for a line that is not UTF-8: the position is that of the first byte that
 * does not begin a valid UTF-8 sequence, counted in the characters before it. */
function utf8Error(line: Uint8Array): EnvelopeError {
  const valid = line.subarray(0, firstInvalidUtf8(line));
  const at = positionAt(Buffer.from(valid.buffer, valid.byteOffset, valid.byteLength).toString("utf8"));
  const message = `parse error: invalid utf-8 at line ${at.line}, column ${at.column}`;
  return new EnvelopeError("parse", undefined, message, "$", { line: at.line, column: at.column });
}

/** The parse error for a line the reader refused, with the position every SDK reports; a
 * line that is JSON by the grammar but refused all the same has none. */
function syntaxError(text: string, eof: boolean): EnvelopeError {
  const at = firstInvalid(text);
  if (at === null) return parseError(eof ? "parse error: unexpected end of input" : "parse error: invalid JSON");
  const what = at.eof ? "unexpected end of input" : "invalid JSON";
  const message = `parse error: ${what} at line ${at.line}, column ${at.column}`;
  return new EnvelopeError("parse", undefined, message, "$", { line: at.line, column: at.column });
}

/** The envelope members of a message object (the first of each; later ones are repeats). */
interface Fields {
  jsonrpc?: JMember;
  id?: JMember;
  method?: JMember;
  params?: JMember;
  result?: JMember;
  error?: JMember;
}

type Field = JMember;

function countBrackets(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) n++;
  }
  return n;
}

function decodeText(text: string, allowNullId: boolean): Message {
  let top: JNode;
  try {
    top = parse(text, MAX_NESTING_DEPTH);
  } catch (err) {
    // Too deep anywhere in the line wins over a syntax error (the other SDKs check the
    // nesting first); the reader only sees the nesting up to where it stopped.
    if (err instanceof NestingError) throw parseError("parse error: nesting too deep");
    if (!(err instanceof JsonSyntaxError)) throw err;
    if (countBrackets(text) > MAX_NESTING_DEPTH && nestingExceeds(text, MAX_NESTING_DEPTH)) {
      throw parseError("parse error: nesting too deep");
    }
    throw syntaxError(text, err.eof);
  }
  if (top instanceof JArray) {
    throw new EnvelopeError("invalid-request", undefined, "invalid request: batches are not supported", "$");
  }
  if (!(top instanceof JObject)) {
    const kind = probe(top);
    const found = kind === "null" ? "null" : kind === "boolean" ? "a boolean" : kind === "string" ? "a string" : "a number";
    throw new EnvelopeError("invalid-request", undefined, `invalid request: expected an object, found ${found}`, "$");
  }
  const fields: Fields = {};
  let duplicate: string | null = null;
  for (const m of top.members) {
    const key = m.key;
    if (key !== "jsonrpc" && key !== "id" && key !== "method" && key !== "params" && key !== "result" && key !== "error") continue;
    if (fields[key] !== undefined) {
      if (duplicate === null) duplicate = key;
      continue;
    }
    fields[key] = m;
  }
  return classify(text, fields, duplicate, allowNullId);
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const U64_MAX = 2n ** 64n - 1n;

type ProbeKind =
  | "null"
  | "boolean"
  | "integer"
  | "integer out of range"
  | "fractional number"
  | "string"
  | "array"
  | "object";

/** A value's kind the way the Rust envelope's probe classifies it. */
function probe(value: JNode): ProbeKind {
  if (value === null) return "null";
  if (value === true || value === false) return "boolean";
  if (typeof value === "string") return "string";
  if (value instanceof JArray) return "array";
  if (value instanceof JObject) return "object";
  if (!value.integer) return "fractional number";
  if (value.text.length <= 15) return "integer"; // at most 15 digits: well inside i64
  const big = BigInt(value.text);
  if (big >= I64_MIN && big <= I64_MAX) return "integer";
  if (big >= 0n && big <= U64_MAX) return "integer out of range";
  return "fractional number";
}

/** An integer id as a `number` when it is safe, else a `bigint`. */
function integerId(value: JNumber): RequestId {
  if (value.text.length <= 15) return Number(value.text); // exact as a double
  const big = BigInt(value.text);
  return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
}

type IdState =
  | { readonly state: "missing" }
  | { readonly state: "valid"; readonly id: RequestId }
  | { readonly state: "null" }
  | { readonly state: "invalid"; readonly kind: ProbeKind };

function idState(fields: Fields): IdState {
  const field = fields.id;
  if (field === undefined) return { state: "missing" };
  const kind = probe(field.value);
  if (kind === "integer") return { state: "valid", id: integerId(field.value as JNumber) };
  if (kind === "string") return { state: "valid", id: field.value as string };
  if (kind === "null") return { state: "null" };
  return { state: "invalid", kind };
}

function jsonrpcProblem(fields: Fields): [string, string] | null {
  const field = fields.jsonrpc;
  if (field === undefined) return ["missing `jsonrpc`", "$"];
  const value = field.value;
  if (typeof value === "string") {
    if (value === "2.0") return null;
    return [`\`jsonrpc\` must be "2.0", found ${encodeString(value)}`, "$.jsonrpc"];
  }
  return [`\`jsonrpc\` must be "2.0", found ${probe(value)}`, "$.jsonrpc"];
}

function duplicateError(kind: EnvelopeErrorKind, id: RequestId | undefined, key: string): EnvelopeError {
  // A repeated `id` leaves the id ambiguous: answer with `null`.
  const echo = key === "id" ? undefined : id;
  const prefix = kind === "invalid-response" ? "invalid response" : "invalid request";
  return new EnvelopeError(kind, echo, `${prefix}: duplicate key \`${key}\``, `$.${key}`);
}

function raw(text: string, field: Field): ReceivedJson {
  return new ReceivedJson(text, field.value, field.start, field.end);
}

function classify(text: string, fields: Fields, duplicate: string | null, allowNullId: boolean): Message {
  const id = idState(fields);
  if (fields.method !== undefined) return classifyCall(text, fields, id, duplicate, allowNullId);
  if (fields.result !== undefined || fields.error !== undefined) return classifyResponse(text, fields, id, duplicate);
  const echo = id.state === "valid" ? id.id : undefined;
  if (duplicate !== null) throw duplicateError("invalid-request", echo, duplicate);
  throw new EnvelopeError("invalid-request", echo, "invalid request: missing `method`", "$");
}

function classifyCall(text: string, fields: Fields, id: IdState, duplicate: string | null, allowNullId: boolean): Message {
  const invalid = (echo: RequestId | undefined, message: string, path: string): EnvelopeError =>
    new EnvelopeError("invalid-request", echo, message, path);
  let echo: RequestId | undefined;
  if (id.state === "valid") echo = id.id;
  else if (id.state === "null" && allowNullId) echo = null;
  if (duplicate !== null) throw duplicateError("invalid-request", echo, duplicate);
  const problem = jsonrpcProblem(fields);
  if (problem !== null) throw invalid(echo, `invalid request: ${problem[0]}`, problem[1]);
  if (id.state === "invalid") {
    throw invalid(undefined, `invalid request: expected an integer or a string id, found ${id.kind}`, "$.id");
  }
  if (id.state === "null" && !allowNullId) throw invalid(undefined, "invalid request: `id` must not be null", "$.id");
  const method = (fields.method as Field).value;
  if (typeof method !== "string") {
    throw invalid(echo, `invalid request: expected a string method, found ${probe(method)}`, "$.method");
  }
  if (fields.result !== undefined || fields.error !== undefined) {
    const path = fields.result !== undefined ? "$.result" : "$.error";
    throw invalid(echo, "invalid request: a request cannot carry `result` or `error`", path);
  }
  let params: RawJson | null = null;
  const field = fields.params;
  if (field !== undefined) {
    const value = field.value;
    if (value instanceof JObject || value instanceof JArray) params = raw(text, field);
    else if (value !== null) {
      const found = typeof value === "string" ? "string" : value === true || value === false ? "boolean" : "number";
      const [kind, prefix]: [EnvelopeErrorKind, string] =
        echo === undefined ? ["invalid-notification", "invalid notification params"] : ["invalid-params", "invalid params"];
      throw new EnvelopeError(kind, echo, `${prefix}: expected an object or an array, found ${found}`, "$.params");
    }
  }
  if (echo === undefined) return { kind: "notification", method, params };
  return { kind: "request", id: echo, method, params };
}

function classifyResponse(text: string, fields: Fields, id: IdState, duplicate: string | null): Message {
  let recovered: RequestId | undefined;
  if (id.state === "valid") recovered = id.id;
  else if (id.state === "null") recovered = null;
  const invalid = (echo: RequestId | undefined, message: string, path: string): EnvelopeError =>
    new EnvelopeError("invalid-response", echo, `invalid response: ${message}`, path);
  if (duplicate !== null) throw duplicateError("invalid-response", recovered, duplicate);
  const problem = jsonrpcProblem(fields);
  if (problem !== null) throw invalid(recovered, problem[0], problem[1]);
  if (id.state === "missing") throw invalid(undefined, "missing `id`", "$");
  if (id.state === "invalid") throw invalid(undefined, `expected an integer, a string or null id, found ${id.kind}`, "$.id");
  const rid: RequestId = recovered === undefined ? null : recovered;
  const result = fields.result;
  const errorField = fields.error;
  if (result !== undefined && errorField !== undefined) throw invalid(rid, "both `result` and `error`", "$");
  if (result !== undefined) return { kind: "response", id: rid, result: raw(text, result), error: null };
  const value = (errorField as Field).value;
  if (!(value instanceof JObject)) {
    const kind = probe(value);
    const found = kind === "integer" || kind === "integer out of range" || kind === "fractional number" ? "number" : kind;
    throw invalid(rid, `expected an error object, found ${found}`, "$.error");
  }
  const members = new Map<string, Field>();
  let dupPath: string | null = null;
  for (const m of value.members) {
    if (m.key !== "code" && m.key !== "message" && m.key !== "data") continue;
    if (members.has(m.key)) {
      dupPath ??= `$.error.${m.key}`;
      continue;
    }
    members.set(m.key, m);
  }
  if (dupPath !== null) throw invalid(rid, "duplicate key in the error object", dupPath);
  const codeField = members.get("code");
  if (codeField === undefined) throw invalid(rid, "missing error code", "$.error");
  const codeKind = probe(codeField.value);
  if (codeKind !== "integer") throw invalid(rid, `expected an integer error code, found ${codeKind}`, "$.error.code");
  const code = BigInt((codeField.value as JNumber).text);
  if (code < -(2n ** 31n) || code > 2n ** 31n - 1n) throw invalid(rid, "error code out of the i32 range", "$.error.code");
  const messageField = members.get("message");
  if (messageField === undefined) throw invalid(rid, "missing error message", "$.error");
  const message = messageField.value;
  if (typeof message !== "string") {
    throw invalid(rid, `expected a string error message, found ${probe(message)}`, "$.error.message");
  }
  const dataField = members.get("data");
  const error: ErrorObject = { code: Number(code), message };
  if (dataField !== undefined) error.data = new RawJson(text.slice(dataField.start, dataField.end));
  return { kind: "response", id: rid, result: null, error };
}

// ---------------------------------------------------------------------------
// Encoding

/** A framed message must not hold a line break; in valid JSON one can only be whitespace. */
function payloadText(payload: RawJson): string {
  const text = payload.text;
  return text.includes("\n") || text.includes("\r") ? text.replace(/[\r\n]/g, "") : text;
}

/** A request as compact JSON (no newline), around already-encoded params. */
export function encodeRequest(id: RequestId, method: string, params: RawJson | null): string {
  const tail = params === null ? "" : `,"params":${payloadText(params)}`;
  return `{"jsonrpc":"2.0","id":${idJson(id)},"method":${encodeString(method)}${tail}}`;
}

/** A notification as compact JSON (no newline), around already-encoded params. */
export function encodeNotification(method: string, params: RawJson | null): string {
  const tail = params === null ? "" : `,"params":${payloadText(params)}`;
  return `{"jsonrpc":"2.0","method":${encodeString(method)}${tail}}`;
}

/** A response as compact JSON (no newline): the raw result, or the error object. */
export function encodeResponse(id: RequestId, result: RawJson | null, error: ErrorObject | null = null): string {
  const body = error !== null ? `"error":${encodeErrorObject(error)}` : `"result":${result === null ? "null" : payloadText(result)}`;
  return `{"jsonrpc":"2.0","id":${idJson(id)},${body}}`;
}

/** Any message as compact JSON, without a newline. */
export function encodeMessage(message: Message): string {
  switch (message.kind) {
    case "request":
      return encodeRequest(message.id, message.method, message.params);
    case "notification":
      return encodeNotification(message.method, message.params);
    case "response":
      return encodeResponse(message.id, message.result, message.error);
  }
}
