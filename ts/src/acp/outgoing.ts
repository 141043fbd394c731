/** The checks of what one side sends: a value the generated encoder refuses, explained
 * with its JSON path; outgoing text decoded again as the receiver would (`AcpOptions.strict`);
 * the raw JSON of extension messages. Used by `endpoint.ts`. */

import { DecodeError, type Decoded } from "../codec/errors.js";
import { JArray, JObject, JsonSyntaxError, MAX_NESTING_DEPTH, NestingError, parse, type JNode } from "../codec/reader.js";
import { EncodeError, jsKind, kindOf, notJson, rustDebugStr, tooDeep } from "../codec/runtime.js";
import { RawJson, UnknownVariant } from "../codec/values.js";
import { InvalidParams } from "./errors.js";
import type { SurfaceView } from "./surface.js";

/** `value` encoded as `typeName`; when the encoder refuses it (a member missing, a value
 * of the wrong JavaScript type), `fail` gets where and what: the value is written
 * leniently (as `JSON.stringify` would) and decoded, which names the JSON path and the
 * kind of failure; else the encoder's own parts (kind `not-encodable`). */
export function encodeChecked(surface: SurfaceView, typeName: string, value: unknown, root: string, fail: (problem: DecodeError) => Error): string {
  try {
    return surface.encodeNamed(typeName, value);
  } catch (err) {
    throw fail(diagnose(surface, typeName, value, root, err));
  }
}

function diagnose(surface: SurfaceView, typeName: string, value: unknown, root: string, err: unknown): DecodeError {
  let lenient: string | undefined;
  try {
    lenient = JSON.stringify(value, lenientJson);
  } catch {
    lenient = undefined;
  }
  if (lenient !== undefined) {
    const found = outgoingProblem(surface, typeName, lenient, root);
    if (found !== null) return found;
  }
  // Nothing JSON could hold (`undefined`, a function, a cycle), or a value the receiver
  // would read but the encoder refuses: the encoder's own parts when it gave them.
  if (err instanceof EncodeError) return new DecodeError(root, "not-encodable", err.expected, err.found);
  return new DecodeError(root, "not-encodable", expectedOf(surface, typeName), jsKind(value));
}

/** What the decoder of `typeName` wants, as its own refusal of a value of no type it reads
 * says it (`an object (NewSessionResponse)`, `one of A, B`). */
function expectedOf(surface: SurfaceView, typeName: string): string {
  try {
    surface.decodeNamed(typeName, new RawJson("0"), "$");
  } catch (err) {
    if (err instanceof DecodeError) return err.expected;
    throw err;
  }
  return "a value JSON can hold";
}

/** What is wrong with outgoing text for `typeName`: the receiver's decode error, or the
 * first value it would have to salvage; `null` when it reads cleanly. */
export function outgoingProblem(surface: SurfaceView, typeName: string, text: string, root: string): DecodeError | null {
  let decoded: Decoded<unknown>;
  try {
    decoded = surface.decodeNamed(typeName, new RawJson(text), root);
  } catch (err) {
    if (err instanceof DecodeError) return err;
    throw err;
  }
  // The failure the receiver would have salvaged (or, for a variant it does not list, an
  // `unknown-variant` failure naming the tag).
  const w = decoded.warnings[0];
  return w === undefined ? null : w.error;
}

/** `JSON.stringify`'s view of the SDK's own value types, for the diagnosis of a value an encoder refused. */
function lenientJson(_key: string, value: unknown): unknown {
  if (value instanceof RawJson) {
    try {
      return JSON.parse(value.text) as unknown;
    } catch {
      return value.text;
    }
  }
  if (value instanceof UnknownVariant) return lenientJson("", value.raw);
  return typeof value === "bigint" ? Number(value) : value;
}

/** What is wrong with raw JSON an extension message carries: not JSON, or (for params) neither an object nor an array. */
export function rawProblem(text: string, path: string, structured: boolean): DecodeError | null {
  let node: JNode;
  try {
    node = parse(text, MAX_NESTING_DEPTH);
  } catch (err) {
    if (err instanceof JsonSyntaxError) return notJson(path, text, err.position);
    if (err instanceof NestingError) return tooDeep(path);
    throw err;
  }
  if (structured && !(node instanceof JObject) && !(node instanceof JArray)) {
    return new DecodeError(path, "not-encodable", "an object or an array", kindOf(node));
  }
  return null;
}

/** Extension params are sent as given: checked to be an object or an array first. */
export function checkExtParams(method: string, params: RawJson | string | null): void {
  if (params === null) return;
  const problem = rawProblem(typeof params === "string" ? params : params.text, "$.params", true);
  if (problem !== null) throw new InvalidParams(method, problem);
}

export function checkExtName(method: string): void {
  if (!method.startsWith("_")) {
    const shown = rustDebugStr(method);
    throw new InvalidParams(method, new DecodeError("$.method", "not-encodable", "a method name starting with `_`", shown));
  }
}
