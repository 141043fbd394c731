/**
 * What both HTTP bindings read from a request besides its body: headers, the query string,
 * percent-decoding, the `Content-Type` rule and the `A2A-Version` service parameter.
 * Pure functions; the server hands them what `node:http` parsed.
 */

import { MAX_NESTING_DEPTH, nestingExceeds } from "../codec/reader.js";
import { A2aError } from "./errors.js";

/** Request headers by lower-case name, as `node:http` gives them (`IncomingHttpHeaders`). */
export type Headers = { readonly [lowerCaseName: string]: string | readonly string[] | undefined };

/** A header's value (the first, if it was sent more than once); `name` is lower case. */
export function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return typeof v === "string" ? v : v?.[0];
}

/** `%XX` escapes decoded as UTF-8; text that does not decode is kept as it is. */
export function percentDecode(text: string): string {
  if (!text.includes("%")) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The query string's pairs in order, keys and values percent-decoded. */
export function queryPairs(query: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const pair of query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const key = eq < 0 ? pair : pair.slice(0, eq);
    const value = eq < 0 ? "" : pair.slice(eq + 1);
    out.push([percentDecode(key), percentDecode(value)]);
  }
  return out;
}

/** A request target split at `?` (the query without it; `""` when there is none). */
export function splitTarget(target: string): [path: string, query: string] {
  const q = target.indexOf("?");
  return q < 0 ? [target, ""] : [target.slice(0, q), target.slice(q + 1)];
}

/** The media type of A2A 1.0.1 bodies; `application/json` is accepted as well. */
export const A2A_JSON = "application/a2a+json";

/** Whether a request body's `Content-Type` is one A2A reads (or absent). */
export function contentTypeOk(headers: Headers): boolean {
  const ct = header(headers, "content-type");
  if (ct === undefined || ct === "application/json" || ct === A2A_JSON) return true;
  const semicolon = ct.indexOf(";");
  const base = (semicolon < 0 ? ct : ct.slice(0, semicolon)).trim().toLowerCase();
  return base === "application/json" || base === A2A_JSON;
}

/** The refusal of a body with another `Content-Type`. */
export function contentTypeRefused(): A2aError {
  return new A2aError("InvalidRequest", "Content-Type must be application/a2a+json or application/json");
}

/** The bindings a version check is made for (they name what they serve differently). */
export type Binding = "jsonrpc" | "rest";

/** How the version check reads a request without `A2A-Version` (header or query parameter):
 * as A2A 0.3 (the default), or as 1.0; and whether 0.3 is served (JSON-RPC only). */
export interface VersionOptions {
  readonly missingVersion?: "0.3" | "1.0";
  /** Serve A2A 0.3 JSON-RPC requests (`A2A-Version` 0.3, or none) under the 0.3 method
   * names, through the 0.3 conversions (default: true on JSON-RPC). Otherwise they are
   * refused `VersionNotSupported`. */
  readonly v03?: boolean;
}

/** The version a request names (`A2A-Version` header, any case, else the query parameter
 * of that name), trimmed; `undefined` when it names none. */
export function requestedVersion(headers: Headers, query: string): string | undefined {
  const h = header(headers, "a2a-version");
  if (h !== undefined) return h === "1.0" ? h : h.trim();
  for (const [k, value] of queryPairs(query)) if (k.toLowerCase() === "a2a-version") return value;
  return undefined;
}

/** Whether a request is A2A 0.3: it says 0.3, or says nothing and `missingVersion` is not 1.0. */
export function isV03(headers: Headers, query: string, options: VersionOptions = {}): boolean {
  const v = requestedVersion(headers, query);
  if (v === "1.0") return false;
  if (v === undefined) return options.missingVersion !== "1.0";
  const parts = v.split(".");
  return parts[0] === "0" && parts[1] === "3";
}

/**
 * The `A2A-Version` check: the header (any case), else the query parameter of that name;
 * `1.0` with any patch (`1.0.1`) is served. Anything else, an empty value, 0.3 and (unless
 * `missingVersion` is `"1.0"`) no version at all is refused `VersionNotSupported`.
 *
 * @returns `null` when the request is served, else the error to answer.
 */
export function checkVersion(headers: Headers, query: string, options: VersionOptions = {}): A2aError | null {
  const v = requestedVersion(headers, query);
  if (v === "1.0") return null;
  const given = v ?? "";
  const parts = given.split(".");
  if (parts[0] === "1" && parts[1] === "0") return null;
  if (given === "" && v === undefined && options.missingVersion === "1.0") return null;
  const missing = given === "" && v === undefined;
  const message = missing
    ? "a request without A2A-Version is A2A 0.3, which this interface does not serve; send A2A-Version: 1.0"
    : `A2A version ${JSON.stringify(given)} is not supported; this interface serves 1.0`;
  return new A2aError("VersionNotSupported", message).with("version", missing ? "0.3" : given).with("supportedVersions", "1.0");
}

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A body's text, or `null` when its bytes are not UTF-8 (a byte-order mark stays a
 * character, which no JSON text begins with). */
export function bodyText(body: Uint8Array | string): string | null {
  if (typeof body === "string") return body;
  try {
    return UTF8.decode(body);
  } catch {
    return null;
  }
}

/** How many levels the deepest answer puts above a value a client sent, beyond those above it
 * in the request: JSON-RPC `ListTasks` answers a message at `$.result.tasks[i].history[j]`
 * (level 6) that came at `$.params.message` (level 3). */
export const ANSWER_WRAPPING = 3;

/** How deep a request object may nest (itself at level 1), on both bindings: so deep that
 * every answer carrying what it sent back stays within `MAX_NESTING_DEPTH` levels, one for
 * the JSON-RPC envelope and `ANSWER_WRAPPING` for the deepest answer (the Rust server's
 * bound). Refusing such a request, rather than an answer too deep to read, means nothing
 * the server accepted becomes unreadable later. */
export const MAX_REQUEST_DEPTH = MAX_NESTING_DEPTH - 1 - ANSWER_WRAPPING;

/** The parse error of a body whose request object nests deeper than `MAX_REQUEST_DEPTH`
 * below `wrapping` levels of envelope (1 on JSON-RPC, 0 on HTTP+JSON); `null` when it does
 * not. Brackets inside strings do not count; the text need not be JSON. */
export function checkDepth(text: string, wrapping: number): A2aError | null {
  return nestingExceeds(text, MAX_REQUEST_DEPTH + wrapping) ? tooDeep() : null;
}

/** The parse error of a request nested deeper than `MAX_REQUEST_DEPTH`. (A parse with that
 * limit finds it in the same pass; `checkDepth` is for text that is not parsed, or not JSON.) */
export function tooDeep(): A2aError {
  return A2aError.parse(`the request nests arrays and objects deeper than ${MAX_REQUEST_DEPTH} levels`);
}
