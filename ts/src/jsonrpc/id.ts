/** JSON-RPC request ids. */

import type { Int64 } from "../codec/values.js";

/** A request id: an integer (i64; a `bigint` beyond 2^53), a string, or `null` where the
 * protocol allows it (ACP v1 requests; responses that answer an unreadable request). */
export type RequestId = Int64 | string | null;

/** A key that tells ids apart as JSON does: `1` and `"1"` differ, `1` and `1n` do not. */
export function idKey(id: RequestId): string {
  if (id === null) return "null";
  if (typeof id === "string") return `s${id}`;
  return `n${id}`;
}

/** An id as JSON text. */
export function idJson(id: RequestId): string {
  if (id === null) return "null";
  return typeof id === "string" ? JSON.stringify(id) : String(id);
}
