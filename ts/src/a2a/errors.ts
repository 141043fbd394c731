/**
 * A2A errors: the error a server answers with (`A2aError`, a kind of the generated table
 * with a message and `ErrorInfo` metadata) and its wire form on each binding; the error a
 * peer answered with (`PeerError`, a wire error); and a local failure to read an answer
 * (`AnswerFailure`). The codes, statuses and reasons come from the generated table
 * (`src/generated/a2a/errors.ts`, from `rules/a2a.toml [errors]`); messages are rendered
 * from an error's parts by `render`, never parsed back.
 */

import type { DecodeError } from "../codec/errors.js";
import { ERROR_ROWS, kindFromCode, kindFromHttpStatus, kindFromReason, type ErrorKind, type ErrorRow } from "../generated/a2a/errors.js";

export { ERROR_KINDS, ERROR_ROWS, kindFromCode, kindFromHttpStatus, kindFromReason, type ErrorKind, type ErrorRow } from "../generated/a2a/errors.js";

/** The `ErrorInfo` domain A2A defines. */
export const DOMAIN = "a2a-protocol.org";

/** The `@type` of a `google.rpc.ErrorInfo` detail. */
export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";

/** Which A2A revision's HTTP statuses errors use: 1.0.1 (the default) or 1.0.0 (TaskNotCancelable
 * 409, ContentTypeNotSupported 415, InvalidAgentResponse 502). */
export type ErrorTable = "1.0.1" | "1.0.0";

/** A `google.rpc.ErrorInfo` detail as it travels (ProtoJSON `Any` form). */
export interface ErrorInfo {
  readonly "@type": string;
  readonly reason: string;
  readonly domain: string;
  readonly metadata?: { readonly [key: string]: string };
}

/** The `error` member of a JSON-RPC error response. */
export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data: readonly ErrorInfo[];
}

/** The AIP-193 body of an HTTP+JSON error. */
export interface RestErrorBody {
  readonly error: {
    readonly code: number;
    readonly status: string;
    readonly message: string;
    readonly details: readonly ErrorInfo[];
  };
}

/** An error a server answers with: what went wrong (its kind decides the code and status on
 * every binding), a message, and string pairs for `ErrorInfo.metadata` (`taskId`, `path`, …). */
export class A2aError extends Error {
  readonly metadata: ReadonlyArray<readonly [string, string]>;

  constructor(
    readonly kind: ErrorKind,
    message: string = ERROR_ROWS[kind].message,
    metadata: ReadonlyArray<readonly [string, string]> = [],
  ) {
    super(message);
    this.name = "A2aError";
    this.metadata = metadata;
  }

  /** This error with one more metadata entry. */
  with(key: string, value: string): A2aError {
    return new A2aError(this.kind, this.message, [...this.metadata, [key, value]]);
  }

  /** The kind's row of the table. */
  get row(): ErrorRow {
    return ERROR_ROWS[this.kind];
  }

  /** The JSON-RPC error code. */
  get code(): number {
    return this.row.code;
  }

  /** The `ErrorInfo.reason`. */
  get reason(): string {
    return this.row.reason;
  }

  /** The HTTP status on the HTTP+JSON binding under `table`. */
  httpStatus(table: ErrorTable = "1.0.1"): number {
    return this.row.http[table === "1.0.1" ? 0 : 1];
  }

  /** The HTTP status a JSON-RPC error response travels with: 200, except where the HTTP
   * meaning matters to proxies and clients (authentication, size, time, rate). */
  get jsonRpcHttpStatus(): number {
    switch (this.kind) {
      case "Unauthenticated":
      case "PermissionDenied":
      case "PayloadTooLarge":
      case "RequestTimeout":
      case "MalformedBody":
      case "RateLimited":
        return this.httpStatus();
      default:
        return 200;
    }
  }

  /** The `ErrorInfo` detail. */
  errorInfo(): ErrorInfo {
    if (this.metadata.length === 0) return { "@type": ERROR_INFO_TYPE, reason: this.reason, domain: DOMAIN };
    const metadata: Record<string, string> = {};
    for (const [k, v] of this.metadata) metadata[k] = v;
    return { "@type": ERROR_INFO_TYPE, reason: this.reason, domain: DOMAIN, metadata };
  }

  /** The JSON-RPC error object (`data` lists the `ErrorInfo`). */
  jsonRpcError(): JsonRpcErrorObject {
    return { code: this.code, message: this.message, data: [this.errorInfo()] };
  }

  /** The AIP-193 body of the HTTP+JSON binding. */
  restBody(table: ErrorTable = "1.0.1"): RestErrorBody {
    return { error: { code: this.httpStatus(table), status: this.row.status, message: this.message, details: [this.errorInfo()] } };
  }

  /** Invalid params from a decode failure: the message is rendered from its parts, which the
   * metadata carries as `path`, `kind`, `expected` and `found`. */
  static invalidParams(e: DecodeError): A2aError {
    return new A2aError("InvalidParams", `Invalid parameters at ${e.path}: ${e.detail}`, [
      ["path", e.path],
      ["kind", e.kind],
      ["expected", e.expected],
      ["found", e.found],
    ]);
  }

  /** A body that is not JSON (`PARSE_ERROR`), with the failure rendered. */
  static parse(detail: string): A2aError {
    return new A2aError("Parse", `Invalid JSON payload: ${detail}`);
  }
}

/** The error a peer answered a call with (a wire error): the JSON-RPC code, or the HTTP
 * status and AIP-193 `status` of an HTTP+JSON error, with the `ErrorInfo` when it sent one. */
export interface PeerError {
  /** The JSON-RPC code (JSON-RPC), or the body's `error.code` (HTTP+JSON), when given. */
  readonly code: number | undefined;
  readonly message: string;
  /** The HTTP status (HTTP+JSON; `undefined` on JSON-RPC). */
  readonly httpStatus: number | undefined;
  /** The AIP-193 `status` name (HTTP+JSON). */
  readonly status: string | undefined;
  /** The first `ErrorInfo`'s reason, if the error carried one. */
  readonly reason: string | undefined;
  /** The first `ErrorInfo`'s metadata (empty without one). */
  readonly metadata: { readonly [key: string]: string };
  /** The kind the table finds for the reason, else the code, else (HTTP+JSON) the status. */
  readonly kind: ErrorKind | undefined;
}

/** The kind of a peer's error: by `reason`, else by JSON-RPC code, else by HTTP status. */
export function peerKind(reason: string | undefined, code: number | undefined, httpStatus: number | undefined): ErrorKind | undefined {
  const byReason = reason === undefined ? undefined : kindFromReason(reason);
  if (byReason !== undefined) return byReason;
  if (httpStatus === undefined) return code === undefined ? undefined : kindFromCode(code);
  return kindFromHttpStatus(httpStatus);
}

/** An answer that could not be read (a local error): not JSON, not a valid JSON-RPC
 * response, or a result that does not decode as the operation's answer (`decode` says where
 * and why). */
export class AnswerFailure extends Error {
  constructor(
    /** What was wrong, as a phrase (`the answer is not JSON`, …). */
    readonly detail: string,
    /** The decode failure, when the value did not decode. */
    readonly decode: DecodeError | null = null,
  ) {
    super(decode === null ? detail : `${detail}: ${render(decode)}`);
    this.name = "AnswerFailure";
  }
}

/** One line of text for any error value of this module or a decode failure: the one place
 * where error values become text. */
export function render(e: A2aError | PeerError | AnswerFailure | DecodeError): string {
  if (e instanceof A2aError) return `${e.reason} (${e.code}): ${e.message}`;
  if (e instanceof AnswerFailure) return e.message;
  if (e instanceof Error) return `expected ${e.expected}, found ${e.found} at ${e.path}`;
  const where = e.httpStatus === undefined ? `code ${e.code}` : `HTTP ${e.httpStatus}${e.status === undefined ? "" : ` ${e.status}`}`;
  return `${e.reason ?? "error"} (${where}): ${e.message}`;
}
