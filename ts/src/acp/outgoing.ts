/** The checks of what one side sends: a value the generated encoder refuses, explained
 * with its JSON path; outgoing text decoded again as the receiver would (`AcpOptions.strict`);
 * the raw JSON of extension messages. Used by `endpoint.ts`. */

import { DecodeError, type Decoded } from "../codec/errors.js";
import { JArray, JObject, JsonSyntaxError, parse, type JNode } from "../codec/reader.js";
import { EncodeError, jsKind, kindOf, rustDebugStr } from "../codec/runtime.js";
import { RawJson, UnknownVariant } from "../codec/values.js";
import { InvalidParams } from "./errors.js";
import type { SurfaceView } from "./surface.js";

/** `value` encoded as `typeName`; when the encoder refuses it (a member missing, a value
 * of the wrong JavaScript type), `fail` gets where and what: the value is written
 * leniently (as `JSON.stringify` would) and decoded, which names the JSON path. */
export function encodeChecked(surface: SurfaceView, typeName: string, value: unknown, root: string, fail: (problem: DecodeError) => Error): string {
  try {
    return surface.encodeNamed(typeName, value);
  } catch (err) {
    throw fail(diagnose(surface, typeName, value, root, err));
  }
}

function diagnose(surface: SurfaceView, typeName: string, value: unknown, root: string, err: unknown): DecodeError {
  const reason = err instanceof Error ? err.message : String(err);
  let lenient: string | undefined;
  try {
    lenient = JSON.stringify(value, lenientJson);
  } catch {
    lenient = undefined;
  }
  if (lenient === undefined) {
    // `undefined` or a function: nothing JSON could hold.
    const shown = jsKind(value);
    return new DecodeError(root, typeName, shown, `expected ${typeName}, found ${shown}`);
  }
  const found = outgoingProblem(surface, typeName, lenient, root);
  if (found !== null) return found;
  const expected = err instanceof EncodeError ? err.expected : "";
  const shown = err instanceof EncodeError ? err.found : "";
  return new DecodeError(root, expected, shown, reason);
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
  const w = decoded.warnings[0];
  return w === undefined ? null : new DecodeError(w.path, "", "", w.message);
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
    node = parse(text);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    return new DecodeError(path, "JSON text", "text that is not JSON", `expected JSON text, found text that is not JSON (${err.message})`);
  }
  if (structured && !(node instanceof JObject) && !(node instanceof JArray)) {
    return new DecodeError(path, "an object or an array", kindOf(node), `expected an object or an array, found ${kindOf(node)}`);
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
    throw new InvalidParams(method, new DecodeError("$.method", "a method name starting with `_`", shown, `extension methods start with \`_\`, found ${shown}`));
  }
}
