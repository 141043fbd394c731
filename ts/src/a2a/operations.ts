/**
 * The operation table read by name: each operation's request and answer decoded from the
 * strict reader's tree and written canonically, through the generated validators and
 * encoders (`src/generated/a2a/v1.codec.ts`).
 */

import type { JNode } from "../codec/reader.js";
import { Ctx } from "../codec/runtime.js";
import { DECODERS, ENCODERS } from "../generated/a2a/v1.codec.js";
import { OPERATIONS, type A2aRequest, type OperationName, type Operations } from "../generated/a2a/v1.js";

/** Whether `name` is an operation of the table (a JSON-RPC method is case-sensitive). */
export function isOperation(name: string): name is OperationName {
  return Object.prototype.hasOwnProperty.call(OPERATIONS, name);
}

/** An operation's request message decoded from `node` (parsed from `text`), with JSON paths
 * from `path` (`$.params` on JSON-RPC, `$` on HTTP+JSON). @throws DecodeError */
export function decodeRequest<K extends OperationName>(operation: K, node: JNode, path: string, text: string): A2aRequest {
  const decode = DECODERS[OPERATIONS[operation].params] as (v: JNode, p: string, cx: Ctx) => Operations[K]["params"];
  return { operation, params: decode(node, path, new Ctx(text)) } as A2aRequest;
}

/** A request message written canonically. */
export function encodeRequest(request: A2aRequest): string {
  const encode = ENCODERS[OPERATIONS[request.operation].params] as (v: unknown) => string;
  return encode(request.params);
}

/** An operation's answer (one item of a streaming one) decoded from `node`. @throws DecodeError */
export function decodeResult<K extends OperationName>(operation: K, node: JNode, path: string, text: string): Operations[K]["result"] {
  const decode = DECODERS[OPERATIONS[operation].result] as (v: JNode, p: string, cx: Ctx) => Operations[K]["result"];
  return decode(node, path, new Ctx(text));
}

/** An operation's answer (one item of a streaming one) written canonically. */
export function encodeResult<K extends OperationName>(operation: K, result: Operations[K]["result"]): string {
  const encode = ENCODERS[OPERATIONS[operation].result] as (v: unknown) => string;
  return encode(result);
}
