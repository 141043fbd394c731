/**
 * The A2A 0.3 JSON-RPC binding's conversions on the server side: a 0.3 call's params to
 * the 1.0 request the core runs (converted, then decoded by the generated validators as
 * any 1.0 request), and the core's 1.0 answer (or one stream event) back to the 0.3
 * result. Pure: no `node:` module.
 */

import { DecodeError } from "../../codec/errors.js";
import { JsonSyntaxError, MAX_NESTING_DEPTH, parse } from "../../codec/reader.js";
import type { A2aRequest, OperationName, Operations } from "../../generated/a2a/v1.js";
import { A2aError } from "../errors.js";
import { decodeRequest, encodeResult } from "../operations.js";
import { paramsToV1, resultToV03, type Json, type Method } from "./v03.js";

/** The 1.0 request of a 0.3 call. @throws A2aError (Parse, InvalidParams) */
export function v03Request(method: Method, params: string): A2aRequest {
  let value: Json;
  try {
    value = JSON.parse(params) as Json;
  } catch (e) {
    throw A2aError.parse(`the params are not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const text = JSON.stringify(paramsToV1(method, value));
  try {
    return decodeRequest(method.operation, parse(text, MAX_NESTING_DEPTH), "$.params", text);
  } catch (e) {
    if (e instanceof DecodeError) throw A2aError.invalidParams(e);
    if (e instanceof JsonSyntaxError) throw A2aError.parse(e.message);
    throw e;
  }
}

/** The 0.3 result (JSON text) of the core's answer to a 0.3 call, or of one stream event.
 * A failure here is the server's: Internal. */
export function v03Result<K extends OperationName>(method: Method, operation: K, value: Operations[K]["result"] | Operations["SendStreamingMessage"]["result"]): string {
  try {
    const v1 = JSON.parse(encodeResult(operation, value as never)) as Json;
    return JSON.stringify(resultToV03(method, v1));
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new A2aError("Internal", `could not express the answer in A2A 0.3: ${why}`);
  }
}
