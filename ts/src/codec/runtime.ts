/**
 * Helpers called by the generated validators and encoders (`src/generated/acp/*.codec.ts`);
 * not meant for hand-written code.
 *
 * Validators take `(value, path, cx)`: a node of `reader.parse`'s tree, the JSON path of
 * that value from the message root, and the decode's context (the source text, for raw
 * slices, and the warnings so far). Failures are `DecodeError`s built where they happen
 * from their kind and parts, worded as every SDK words them (vectors/README.md, "Error texts"); the order of checks
 * is the generated code's.
 */

import { DecodeError, type DecodeWarning, type WarningKind } from "./errors.js";
import type { DecodeErrorKind } from "./kind.js";
import { JArray, JMember, JNumber, JObject, MAX_NESTING_DEPTH, type JNode, parse } from "./reader.js";
import { firstInvalid, positionAt } from "./syntax.js";
import { encodeDouble, encodeInteger, encodeString, RawJson, UnknownVariant, type Int64 } from "./values.js";

/** One decode: the source text the spans point into, and the warnings so far. */
export class Ctx {
  readonly warnings: DecodeWarning[] = [];
  constructor(readonly text: string) {}
}

/** A member that was not in the input (before defaults are applied). */
export const MISSING: unique symbol = Symbol("missing");
export type Missing = typeof MISSING;

/** A generated validator. */
export type Decoder<T> = (value: JNode, path: string, cx: Ctx) => T;

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `path` + `.key`, or `["odd key"]` for keys that are not identifiers. */
export function keyPath(path: string, key: string): string {
  return PLAIN_KEY.test(key) ? `${path}.${key}` : `${path}[${encodeString(key)}]`;
}

/** A failure from its kind and parts; the message is rendered from them. */
export function error(path: string, kind: DecodeErrorKind, expected: string, found: string): DecodeError {
  return new DecodeError(path, kind, expected, found);
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const U64_MAX = 2n ** 64n - 1n;

/** The exact value of an integer number. */
function bigOf(n: JNumber): bigint {
  return BigInt(n.text);
}

/** Whether an integer's text is short enough to be exact as a double. */
function small(n: JNumber): boolean {
  return n.text.length <= 15;
}

/** A JSON value as a decode error's `found` names it: "null", "the boolean true",
 * "the integer 5", "the number 1.5", `the string "x"`, "an array", "an object". */
export function describe(value: JNode): string {
  if (value === null) return "null";
  if (value === true) return "the boolean true";
  if (value === false) return "the boolean false";
  if (typeof value === "string") return `the string ${quote(value)}`;
  if (value instanceof JArray) return "an array";
  if (value instanceof JObject) return "an object";
  if (value.integer) {
    if (small(value)) return `the integer ${value.text}`;
    const big = bigOf(value);
    if (big >= I64_MIN && big <= U64_MAX) return `the integer ${big}`;
  }
  return `the number ${rustFloat(value.value)}`;
}

/** A name or a value written as a JSON string (as in every SDK's error texts). */
export function quote(s: string): string {
  return JSON.stringify(s);
}

/** The `expected` phrase of a closed set of strings: `one of "a", "b"`, or the one value. */
export function oneOf(values: readonly string[]): string {
  const listed = values.map(quote).join(", ");
  return values.length === 1 ? listed : `one of ${listed}`;
}

/** A number too large for a double (read as an infinity). */
function numberOutOfRange(path: string): DecodeError {
  return error(path, "number-too-large", "a number within the range of a double", "a number beyond it");
}

/** The failure of a text handed to a decoder that is not one JSON value (kind
 * `not-json`), with the line and column where it stops being JSON: the grammar's
 * position (vectors/README.md, "Error texts"), else `stopped`, the offset where the
 * reader stopped (never the reader's message). */
export function notJson(path: string, text: string, stopped: number): DecodeError {
  const at = firstInvalid(text) ?? positionAt(text.slice(0, stopped));
  return error(path, "not-json", "JSON text", `text that is not JSON (line ${at.line}, column ${at.column})`);
}

/** The failure of a text that nests arrays and objects deeper than the limit (kind `not-json`). */
export function tooDeep(path: string): DecodeError {
  return error(path, "not-json", `JSON text nested at most ${MAX_NESTING_DEPTH} deep`, "text nested deeper");
}

/** A JSON value's type as the Rust SDK's raw-value checks name it. */
export function kindOf(value: JNode): string {
  if (value instanceof JObject) return "an object";
  if (value instanceof JArray) return "an array";
  if (typeof value === "string") return "a string";
  if (value === true || value === false) return "a boolean";
  if (value === null) return "null";
  return "a number";
}

/** How Rust's `{}` writes an f64 (every digit, no exponent), plus serde's `.0` when there is no point. */
export function rustFloat(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const text = x.toExponential();
  const e = text.indexOf("e");
  const negative = text.startsWith("-");
  const digits = text.slice(negative ? 1 : 0, e).replace(".", "");
  const n = Number(text.slice(e + 1));
  let plain: string;
  if (n < 0) plain = `0.${"0".repeat(-n - 1)}${digits}`;
  else if (digits.length <= n + 1) plain = `${digits}${"0".repeat(n + 1 - digits.length)}.0`;
  else plain = `${digits.slice(0, n + 1)}.${digits.slice(n + 1)}`;
  return (negative ? "-" : "") + plain;
}

// Characters Python's `str.isprintable` refuses (besides the space): Rust's `{:?}` escapes them.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** A string as Rust's `{:?}` writes it (quoted, escaped). */
export function rustDebugStr(s: string): string {
  let out = '"';
  for (const c of s) {
    if (c === '"') out += '\\"';
    else if (c === "\\") out += "\\\\";
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else if (c === "\0") out += "\\0";
    else if (c !== " " && UNPRINTABLE.test(c)) out += `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`;
    else out += c;
  }
  return out + '"';
}

/** A value of the wrong JSON type (kind `wrong-type`). */
export function invalidType(path: string, value: JNode, expected: string): DecodeError {
  return error(path, "wrong-type", expected, describe(value));
}

/** A required member is absent (reported at the object that lacks it). */
export function missing(path: string, key: string): DecodeError {
  return error(path, "missing-field", `the field ${quote(key)}`, "an object without it");
}

/** A known member appears twice (reported at the key). */
export function duplicate(path: string, key: string): DecodeError {
  return error(keyPath(path, key), "repeated-key", "each key once", `the key ${quote(key)} twice`);
}

export function expectObject(value: JNode, path: string, name: string): JObject {
  if (!(value instanceof JObject)) throw invalidType(path, value, `an object (${name})`);
  return value;
}

// ---------------------------------------------------------------------------
// Scalars

/** Whether a string holds a surrogate without its pair (an escape such as `"\ud800"`);
 * the engine's own check, which costs next to nothing on the usual text. */
export function hasLoneSurrogate(s: string): boolean {
  return !s.isWellFormed();
}

export function d_str(value: JNode, path: string, _cx: Ctx): string {
  if (typeof value !== "string") throw invalidType(path, value, "a string");
  if (hasLoneSurrogate(value)) throw error(path, "invalid-unicode", "a string of valid Unicode", "an invalid escape");
  return value;
}

export function d_bool(value: JNode, path: string, _cx: Ctx): boolean {
  if (value === true || value === false) return value;
  throw invalidType(path, value, "a boolean");
}

/** An integer of the format whose range is `low`..`high` (uint16, int64, …); out of
 * range or not an integer, the error names the range, as every SDK words it: a number
 * outside it (or not an integer) is `out-of-range`, anything else `wrong-type`. */
function integer(value: JNode, path: string, low: bigint, high: bigint): Int64 {
  const expected = `an integer from ${low} to ${high}`;
  if (value instanceof JNumber) {
    if (value.integer) {
      const big = bigOf(value);
      if (big >= low && big <= high) {
        return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
      }
    } else if (!Number.isFinite(value.value)) {
      throw numberOutOfRange(path);
    }
    throw error(path, "out-of-range", expected, describe(value));
  }
  throw invalidType(path, value, expected);
}

function smallInt(value: JNode, path: string, low: number, high: number): number {
  if (value instanceof JNumber && value.integer && small(value)) {
    const n = Number(value.text);
    if (n >= low && n <= high) return n;
  }
  return Number(integer(value, path, BigInt(low), BigInt(high)));
}

export function d_i16(value: JNode, path: string, _cx: Ctx): number {
  return smallInt(value, path, -32768, 32767);
}

export function d_i32(value: JNode, path: string, _cx: Ctx): number {
  return smallInt(value, path, -2147483648, 2147483647);
}

export function d_u16(value: JNode, path: string, _cx: Ctx): number {
  return smallInt(value, path, 0, 65535);
}

export function d_u32(value: JNode, path: string, _cx: Ctx): number {
  return smallInt(value, path, 0, 4294967295);
}

export function d_i64(value: JNode, path: string, _cx: Ctx): Int64 {
  if (value instanceof JNumber && value.integer && small(value)) return Number(value.text);
  return integer(value, path, I64_MIN, I64_MAX);
}

export function d_u64(value: JNode, path: string, _cx: Ctx): Int64 {
  if (value instanceof JNumber && value.integer && small(value) && value.text.charCodeAt(0) !== 0x2d) {
    return Number(value.text);
  }
  return integer(value, path, 0n, U64_MAX);
}

export function d_f64(value: JNode, path: string, _cx: Ctx): number {
  if (value instanceof JNumber) {
    const x = value.value;
    if (!Number.isFinite(x) && !value.integer) throw numberOutOfRange(path);
    return value.text === "-0" ? -0 : x;
  }
  throw invalidType(path, value, "a number");
}

/** A JSON-RPC request id inside a payload: an integer (i64), a string or null. */
export function d_request_id(value: JNode, path: string, _cx: Ctx): Int64 | string | null {
  if (value === null || typeof value === "string") return value;
  if (value instanceof JNumber && value.integer) {
    const big = bigOf(value);
    if (big >= I64_MIN && big <= I64_MAX) {
      return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
    }
  }
  throw invalidType(path, value, "an integer, a string or null");
}

/** A value of a closed string enum. */
export function d_enum<T extends string>(value: JNode, path: string, values: readonly T[]): T {
  if (typeof value !== "string") throw invalidType(path, value, "a string");
  if (!(values as readonly string[]).includes(value)) {
    throw error(path, "not-listed", oneOf(values), describe(value));
  }
  return value as T;
}

// ---------------------------------------------------------------------------
// Free-form JSON

/** A free-form value: its text as received. */
export function d_raw(cx: Ctx, start: number, end: number): RawJson {
  return new RawJson(cx.text.slice(start, end));
}

/** An object-only free-form value (`_meta`). */
export function d_raw_object(value: JNode, path: string, cx: Ctx, start: number, end: number): RawJson {
  if (!(value instanceof JObject)) throw invalidType(path, value, "an object");
  return new RawJson(cx.text.slice(start, end));
}

/** Any value as free-form JSON (an untagged union's catch-all variant): containers and
 * numbers as received, strings re-spelled canonically. */
export function d_raw_node(value: JNode, _path: string, cx: Ctx): RawJson {
  if (value instanceof JObject || value instanceof JArray) return new RawJson(cx.text.slice(value.start, value.end));
  if (value instanceof JNumber) return new RawJson(value.text);
  if (typeof value === "string") return new RawJson(encodeString(value));
  return new RawJson(String(value));
}

// ---------------------------------------------------------------------------
// Containers

export function d_list<T>(value: JNode, path: string, cx: Ctx, item: Decoder<T>): T[] {
  if (!(value instanceof JArray)) throw invalidType(path, value, "an array");
  const items = value.items;
  const out: T[] = new Array<T>(items.length);
  for (let i = 0; i < items.length; i++) out[i] = item(items[i] as JNode, `${path}[${i}]`, cx);
  return out;
}

export function d_list_raw(value: JNode, path: string, cx: Ctx): RawJson[] {
  if (!(value instanceof JArray)) throw invalidType(path, value, "an array");
  const out: RawJson[] = [];
  for (let i = 0; i < value.items.length; i++) out.push(d_raw(cx, value.starts[i] ?? 0, value.ends[i] ?? 0));
  return out;
}

/** A map from string keys (an object without a prototype, so any key is a plain entry). */
export function d_map<T>(value: JNode, path: string, cx: Ctx, item: Decoder<T>): Record<string, T> {
  if (!(value instanceof JObject)) throw invalidType(path, value, "an object");
  const out = Object.create(null) as Record<string, T>;
  for (const m of value.members) {
    if (Object.prototype.hasOwnProperty.call(out, m.key)) throw duplicate(path, m.key);
    out[m.key] = item(m.value, keyPath(path, m.key), cx);
  }
  return out;
}

export function d_map_raw(value: JNode, path: string, cx: Ctx): Record<string, RawJson> {
  if (!(value instanceof JObject)) throw invalidType(path, value, "an object");
  const out = Object.create(null) as Record<string, RawJson>;
  for (const m of value.members) {
    if (Object.prototype.hasOwnProperty.call(out, m.key)) throw duplicate(path, m.key);
    out[m.key] = d_raw(cx, m.start, m.end);
  }
  return out;
}

/** An empty map (a field's default). */
export function emptyMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

// ---------------------------------------------------------------------------
// Lenient decoding

/** Records a warning; `message` is written from `error`'s parts (or the tag's). */
export function warn(cx: Ctx, path: string, message: string, error: DecodeError, kind: WarningKind = "salvaged"): void {
  cx.warnings.push({ path, message, kind, error });
}

/** Records that the value at `path` was dropped because of `err` (the message is
 * rendered from `err`'s parts, not read from its text). */
export function salvaged(cx: Ctx, path: string, err: DecodeError): void {
  warn(cx, path, `dropped invalid value: ${err.detail} at ${err.path}`, err);
}

/** A lenient member's value failed: roll its warnings back, warn, give `MISSING`. */
export function dropped(cx: Ctx, mark: number, path: string, err: unknown): Missing {
  if (!(err instanceof DecodeError)) throw err;
  cx.warnings.length = mark;
  salvaged(cx, path, err);
  return MISSING;
}

/** `item(value)`, or `MISSING` and a warning when it fails (`x-deserialize-default-on-error`). */
export function lenient<T>(cx: Ctx, value: JNode, path: string, item: Decoder<T>): T | Missing {
  const mark = cx.warnings.length;
  try {
    return item(value, path, cx);
  } catch (err) {
    return dropped(cx, mark, path, err);
  }
}

/** A lenient object-only free-form member (every `_meta`): `null` when `nullable` and
 * the member is `null`, else the object as received, or `MISSING` and a warning when it
 * is no object (what `lenient` over `d_raw_object` does, without a closure). */
export function lenientRawObject(m: JMember, path: string, cx: Ctx, nullable: boolean): RawJson | null | Missing {
  if (nullable && m.value === null) return null;
  const mark = cx.warnings.length;
  try {
    return d_raw_object(m.value, path, cx, m.start, m.end);
  } catch (err) {
    return dropped(cx, mark, path, err);
  }
}

/** An array whose invalid items are dropped with a warning each
 * (`x-deserialize-skip-invalid-items`): `MISSING` when dropped as a whole (only when
 * `lenientWhole`), `null` for `null` (only when `nullable`), else the kept items. */
export function items<T>(
  cx: Ctx,
  value: JNode,
  path: string,
  item: Decoder<T>,
  nullable: boolean,
  lenientWhole: boolean,
): T[] | null | Missing {
  if (value === null && nullable) return null;
  if (!(value instanceof JArray)) {
    if (lenientWhole) {
      salvaged(cx, path, invalidType(path, value, "an array"));
      return MISSING;
    }
    throw invalidType(path, value, "an array");
  }
  const out: T[] = [];
  for (let i = 0; i < value.items.length; i++) {
    const kept = lenient(cx, value.items[i] as JNode, `${path}[${i}]`, item);
    if (kept !== MISSING) out.push(kept);
  }
  return out;
}

/** `x-deserialize-default-on-null`: `null` gives `MISSING` and a warning. */
export function defaultOnNull<T>(cx: Ctx, value: JNode, path: string, item: Decoder<T>): T | Missing {
  if (value === null) {
    warn(cx, path, "null read as the default value", refusalOfNull(cx, path, item));
    return MISSING;
  }
  return item(value, path, cx);
}

/** What `item` says of `null` (the failure a `null` read as the default stands for):
 * asked of the validator itself, so that `expected` names what it reads. */
function refusalOfNull<T>(cx: Ctx, path: string, item: Decoder<T>): DecodeError {
  const mark = cx.warnings.length;
  try {
    item(null, path, cx);
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    return err;
  } finally {
    cx.warnings.length = mark;
  }
  return invalidType(path, null, "a value other than null"); // such members are not nullable
}

function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

export function minLength(path: string, value: string, minimum: number): void {
  const n = codePoints(value);
  if (n < minimum) throw error(path, "too-short", `a string of at least ${minimum} characters`, `a string of ${n} characters`);
}

export function minItems(path: string, value: readonly unknown[], minimum: number): void {
  if (value.length < minimum) {
    throw error(path, "too-short", `an array of at least ${minimum} items`, `an array of ${value.length} items`);
  }
}

// ---------------------------------------------------------------------------
// Tagged and untagged unions

/** The tag (the first member named `tagField`, which must be a string) and the other
 * members in received order; `[null, members]` when there is no tag. */
export function splitTag(value: JObject, tagField: string, path: string): [string | null, readonly JMember[]] {
  const members = value.members;
  for (let i = 0; i < members.length; i++) {
    const m = members[i] as JMember;
    if (m.key === tagField) {
      if (typeof m.value !== "string") throw invalidType(keyPath(path, tagField), m.value, "a string");
      return [m.value, i === 0 ? members.slice(1) : [...members.slice(0, i), ...members.slice(i + 1)]];
    }
  }
  return [null, members];
}

/** An object made of some members of another (a variant's members without the tag). */
export function sub(value: JObject, members: readonly JMember[]): JObject {
  return new JObject(members, value.start, value.end);
}

/** An unknown variant re-emitted member by member (canonical rule 9): received order,
 * values as received, keys and the tag value re-spelled. */
export function unknown(cx: Ctx, value: JObject, tagField: string, tag: string | null): UnknownVariant {
  let out = "";
  let tagSeen = false;
  for (const m of value.members) {
    out += out === "" ? "{" : ",";
    out += encodeString(m.key) + ":";
    if (m.key === tagField && !tagSeen && typeof m.value === "string") {
      tagSeen = true;
      out += encodeString(m.value);
    } else {
      out += cx.text.slice(m.start, m.end);
    }
  }
  return new UnknownVariant(tag, new RawJson(out === "" ? "{}" : out + "}"));
}

/** Records that a variant `union` does not list was kept raw; its `error` (kind
 * `unknown-variant`) is what refusing it would say (outgoing checks do). */
export function warnUnknown(cx: Ctx, path: string, union: string, tag: string): void {
  const refusal = error(path, "unknown-variant", `a known variant of ${union}`, `the string ${quote(tag)}`);
  warn(cx, path, `unknown ${union} variant ${quote(tag)} kept as raw JSON`, refusal, "unknown-variant");
}

/** `item(value)`, or `MISSING` leaving no trace (untagged unions try their variants). */
export function attempt<T>(cx: Ctx, value: JNode, path: string, item: Decoder<T>): T | Missing {
  const mark = cx.warnings.length;
  try {
    return item(value, path, cx);
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    cx.warnings.length = mark;
    return MISSING;
  }
}

/** None of an untagged union's variants accepts the value (kind `no-variant`). */
export function noVariant(path: string, value: JNode, expected: string): DecodeError {
  return error(path, "no-variant", expected, describe(value));
}

// ---------------------------------------------------------------------------
// Encoding (canonical): every function returns JSON text.

// Each helper checks the JavaScript type it is given (one `typeof`), so that a value
// the static types did not hold back (`undefined` from a missing member, `42` where
// text belongs, `NaN`) fails here instead of being written as `undefined` or `null`.

/** A value an encoder cannot write: the JavaScript value is not of the schema's type. */
export class EncodeError extends TypeError {
  constructor(
    /** What the schema wants there, e.g. "a string". */
    readonly expected: string,
    /** What was given, e.g. "undefined" or "the number 42". */
    readonly found: string,
  ) {
    super(`cannot encode ${found}: expected ${expected}`);
    this.name = "EncodeError";
  }
}

/** A JavaScript value as an encoder error names it. */
export function jsKind(x: unknown): string {
  if (x === undefined) return "undefined";
  if (x === null) return "null";
  if (typeof x === "string") return `the string ${encodeString(x.length > 40 ? x.slice(0, 40) + "…" : x)}`;
  if (typeof x === "number" || typeof x === "bigint" || typeof x === "boolean") return `the ${typeof x} ${String(x)}`;
  if (Array.isArray(x)) return "an array";
  return `a value of type ${typeof x}`;
}

export function str(x: string): string {
  if (typeof x !== "string") throw new EncodeError("a string", jsKind(x));
  return encodeString(x);
}

export function int(x: number | bigint): string {
  if (typeof x === "bigint" || (typeof x === "number" && Number.isInteger(x))) return encodeInteger(x);
  throw new EncodeError("an integer", jsKind(x));
}

export function f64(x: number): string {
  if (typeof x === "number" && Number.isFinite(x)) return encodeDouble(x);
  throw new EncodeError("a finite number", jsKind(x));
}

export function bool(x: boolean): string {
  if (x === true) return "true";
  if (x === false) return "false";
  throw new EncodeError("a boolean", jsKind(x));
}

export function raw(x: RawJson): string {
  if (typeof x !== "object" || x === null || typeof (x as { text?: unknown }).text !== "string") {
    throw new EncodeError("JSON (a RawJson)", jsKind(x));
  }
  return x.text;
}

export function list<T>(values: readonly T[], item: (value: T) => string): string {
  if (!Array.isArray(values)) throw new EncodeError("an array", jsKind(values));
  let out = "[";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ",";
    out += item(values[i] as T);
  }
  return out + "]";
}

export function map<T>(values: Readonly<Record<string, T>>, item: (value: T) => string): string {
  if (typeof values !== "object" || values === null || Array.isArray(values)) throw new EncodeError("an object", jsKind(values));
  let out = "";
  for (const key in values) {
    if (!Object.prototype.hasOwnProperty.call(values, key)) continue;
    out += (out === "" ? "{" : ",") + encodeString(key) + ":" + item(values[key] as T);
  }
  return out === "" ? "{}" : out + "}";
}

/** An object from its members, each written with a leading comma (`,"a":1,"b":2`). */
export function object(members: string): string {
  return members === "" ? "{}" : "{" + members.slice(1) + "}";
}

/** The members an unknown variant adds to the object it is flattened into, as
 * `,"k":v` pairs, without the keys that object writes itself (rule 9). */
export function unknownMembers(value: UnknownVariant, skip: readonly string[]): string {
  const text = value.raw.text;
  const node = parse(text);
  if (!(node instanceof JObject)) throw new TypeError("an unknown variant must be an object");
  let out = "";
  for (const m of node.members) {
    if (skip.includes(m.key)) continue;
    out += "," + encodeString(m.key) + ":" + text.slice(m.start, m.end);
  }
  return out;
}

/** A JSON-RPC error object inside a payload (`code`, `message`, optional `data`). */
export interface PayloadError {
  code: number;
  message: string;
  data?: RawJson;
}

export function d_error_object(value: JNode, path: string, cx: Ctx): PayloadError {
  const obj = expectObject(value, path, "ErrorObject");
  let code: number | Missing = MISSING;
  let message: string | Missing = MISSING;
  let data: RawJson | Missing = MISSING;
  for (const m of obj.members) {
    if (m.key === "code") {
      if (code !== MISSING) throw duplicate(path, m.key);
      code = d_i32(m.value, keyPath(path, m.key), cx);
    } else if (m.key === "message") {
      if (message !== MISSING) throw duplicate(path, m.key);
      message = d_str(m.value, keyPath(path, m.key), cx);
    } else if (m.key === "data") {
      if (data !== MISSING) throw duplicate(path, m.key);
      data = d_raw(cx, m.start, m.end);
    }
  }
  if (code === MISSING) throw missing(path, "code");
  if (message === MISSING) throw missing(path, "message");
  return data === MISSING ? { code, message } : { code, message, data };
}

export function e_error_object(value: PayloadError): string {
  let out = `{"code":${value.code},"message":${encodeString(value.message)}`;
  if (value.data !== undefined) out += `,"data":${value.data.text}`;
  return out + "}";
}

export function e_request_id(value: Int64 | string | null): string {
  if (value === null) return "null";
  return typeof value === "string" ? encodeString(value) : encodeInteger(value);
}

/** An integer of an untagged union that also has a double variant: always a `bigint`,
 * so that the encoder tells `1` (integer) from `1.0` (double). */
export function d_i64_big(value: JNode, path: string, cx: Ctx): bigint {
  return BigInt(d_i64(value, path, cx));
}

export function d_u64_big(value: JNode, path: string, cx: Ctx): bigint {
  return BigInt(d_u64(value, path, cx));
}

/** Members (`,"k":v` pairs) without those whose key is in `skip` (the variant part of
 * an object with a flattened union leaves out the object's own keys). */
export function skipMembers(members: string, skip: readonly string[]): string {
  if (members === "" || skip.length === 0) return members;
  const text = "{" + members.slice(1) + "}";
  const node = parse(text);
  if (!(node instanceof JObject)) throw new TypeError("members must form an object");
  let out = "";
  for (const m of node.members) {
    if (skip.includes(m.key)) continue;
    out += "," + encodeString(m.key) + ":" + text.slice(m.start, m.end);
  }
  return out;
}
