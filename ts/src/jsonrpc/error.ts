/** JSON-RPC error codes and the wire error object (kept apart from local errors). */

import type { DecodeError } from "../codec/errors.js";
import { encodeString, RawJson } from "../codec/values.js";

import { ErrorCode } from "./codes.js";

export { ErrorCode, errorCodeName } from "./codes.js";

/** The `error` member of a JSON-RPC response. */
export interface ErrorObject {
  /** The error code (see `ErrorCode`). */
  code: number;
  /** A short, lowercase description. */
  message: string;
  /** Structured detail, kept as raw JSON. */
  data?: RawJson;
}

/** A validation error with any code and message prefix: `<prefix>: expected X, found Y at $.p`
 * with `{"path", "expected", "found"}` as data. */
export function validationError(code: number, prefix: string, path: string, expected: string, found: string): ErrorObject {
  const data = `{"path":${encodeString(path)},"expected":${encodeString(expected)},"found":${encodeString(found)}}`;
  return { code, message: `${prefix}: expected ${expected}, found ${found} at ${path}`, data: new RawJson(data) };
}

/** A -32602 error for a value that failed validation. */
export function invalidParamsError(path: string, expected: string, found: string): ErrorObject {
  return validationError(ErrorCode.INVALID_PARAMS, "invalid params", path, expected, found);
}

/** The -32602 error of a decode failure: `invalid params: expected X, found Y at $.params.z`
 * with `{"path", "kind", "expected", "found"}` as data, in that order (`kind` is the
 * failure's `DecodeErrorKind`), all rendered from the failure's parts (as Rust's and
 * Python's `invalid_params_decoded`). Other -32602 replies (a rule's refusal, an fs or
 * terminal check) use `invalidParamsError`, without a kind. */
export function invalidParamsDecoded(e: DecodeError): ErrorObject {
  const data =
    `{"path":${encodeString(e.path)},"kind":${encodeString(e.kind)},` +
    `"expected":${encodeString(e.expected)},"found":${encodeString(e.found)}}`;
  return { code: ErrorCode.INVALID_PARAMS, message: `invalid params: expected ${e.expected}, found ${e.found} at ${e.path}`, data: new RawJson(data) };
}

/** An error whose data is `{"path", "line", "column"}` (parse errors). */
export function errorWithPosition(code: number, message: string, path: string, line: number, column: number): ErrorObject {
  return { code, message, data: new RawJson(`{"path":${encodeString(path)},"line":${line},"column":${column}}`) };
}

/** An error whose data is `{"path": path}` (envelope errors). */
export function errorWithPath(code: number, message: string, path: string): ErrorObject {
  return { code, message, data: new RawJson(`{"path":${encodeString(path)}}`) };
}

/** An error object as JSON text. */
export function encodeErrorObject(error: ErrorObject): string {
  let out = `{"code":${error.code},"message":${encodeString(error.message)}`;
  if (error.data !== undefined) out += `,"data":${error.data.text}`;
  return out + "}";
}
