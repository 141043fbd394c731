/**
 * What ProtoJSON reads and writes beyond plain JSON, for the generated A2A validators and
 * encoders (`src/generated/a2a/v1.codec.ts`; vectors/README.md, "The decoding model
 * (ProtoJSON, A2A 1.0.1)"):
 *
 * - an `int32` from a number or a string holding one, in any notation, when the value is
 *   integral and in range;
 * - an enum by its value name or its proto number, written by name;
 * - `bytes` from standard or URL-safe base64, padded or not, written as padded standard
 *   base64 (no `Buffer`: the package runs in browsers too);
 * - a timestamp from any RFC 3339 date-time, written in UTC with milliseconds;
 * - the failures of a oneof (none of its members, or two).
 *
 * Failures are `DecodeError`s with the same kind, `expected` and `found` as every SDK.
 */

import { DecodeError } from "../codec/errors.js";
import { JNumber, type JNode } from "../codec/reader.js";
import { describe, EncodeError, invalidType, jsKind, quote, type Ctx } from "../codec/runtime.js";
import { encodeString } from "../codec/values.js";

// ---------------------------------------------------------------------------
// int32

/** What an `int32` reads (the `expected` of its failures). */
const INT32 = "an integer from -2147483648 to 2147483647, or a string holding one";
const I32_MIN = -2147483648;
const I32_MAX = 2147483647;

/** A proto `int32`: a JSON number or a string holding one (`5`, `"5"`, `5.0`, `1e1`), integral
 * and within -2^31..2^31-1; anything else of those types is `out-of-range`. */
export function d_int32(value: JNode, path: string, _cx: Ctx): number {
  if (value instanceof JNumber) {
    const x = value.value;
    if (Number.isInteger(x) && x >= I32_MIN && x <= I32_MAX) return x === 0 ? 0 : x;
    throw new DecodeError(path, "out-of-range", INT32, describe(value));
  }
  if (typeof value === "string") {
    const n = integerOf(value);
    if (n !== null && n >= BigInt(I32_MIN) && n <= BigInt(I32_MAX)) return Number(n);
    throw new DecodeError(path, "out-of-range", INT32, describe(value));
  }
  throw invalidType(path, value, INT32);
}

const NUMBER_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** The integer a JSON number's text denotes (`-12`, `1.0`, `2.5e1`), exactly; `null` when
 * the text is no number, not integral, or absurdly large. */
export function integerOf(text: string): bigint | null {
  const m = NUMBER_TEXT.exec(text);
  if (m === null) return null;
  const [, sign, whole = "", fraction = "", exponentText = "0"] = m;
  const exponent = Number(exponentText);
  const digits = (whole + fraction).replace(/^0+/, "");
  if (digits === "") return 0n;
  const shift = exponent - fraction.length;
  let magnitude: bigint;
  if (shift >= 0) {
    if (shift > 19) return null;
    magnitude = BigInt(digits + "0".repeat(shift));
  } else {
    const cut = -shift;
    if (cut >= digits.length) return null; // a non-zero value below 1
    if (!/^0*$/.test(digits.slice(digits.length - cut))) return null;
    magnitude = BigInt(digits.slice(0, digits.length - cut));
  }
  return sign === "-" ? -magnitude : magnitude;
}

// ---------------------------------------------------------------------------
// Enums

/** A proto enum value: its name, or its proto number (`numbers[i]` is `names[i]`'s); the
 * zero `*_UNSPECIFIED`, an unknown name and an unknown number are `not-listed`. */
export function d_enum<T extends string>(value: JNode, path: string, names: readonly T[], numbers: readonly number[]): T {
  if (typeof value === "string") {
    if ((names as readonly string[]).includes(value)) return value as T;
    const listed = names.map(quote).join(", ");
    throw new DecodeError(path, "not-listed", names.length === 1 ? listed : `one of ${listed}`, describe(value));
  }
  if (value instanceof JNumber) {
    const x = value.value;
    if (Number.isInteger(x) && Math.abs(x) <= 1e9) {
      const at = numbers.indexOf(x);
      if (at >= 0) return names[at] as T;
      const listed = names.map((n, i) => `${numbers[i]} (${n})`).join(", ");
      throw new DecodeError(path, "not-listed", `one of ${listed}`, `the integer ${x}`);
    }
  }
  throw invalidType(path, value, "an enum value name or number");
}

/** An enum value, by name. */
export function e_enum<T extends string>(value: T, names: readonly T[]): string {
  if (typeof value !== "string" || !names.includes(value)) throw new EncodeError(`one of ${names.join(", ")}`, jsKind(value));
  return encodeString(value);
}

// ---------------------------------------------------------------------------
// bytes

const STANDARD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

function sextets(alphabet: string): Int8Array {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  return table;
}

const STANDARD_SEXTETS = sextets(STANDARD);
const URL_SAFE_SEXTETS = sextets(URL_SAFE);

/** The bytes of base64 text, standard or URL-safe (the alphabet is the one whose characters
 * the text uses), padded to a multiple of four or not padded at all, with no bits left over
 * in the last character; `null` when the text is not that. */
export function base64Decode(text: string): Uint8Array | null {
  const table = /[-_]/.test(text) ? URL_SAFE_SEXTETS : STANDARD_SEXTETS;
  let body = text;
  if (text.endsWith("=")) {
    if (text.length % 4 !== 0) return null;
    body = text.endsWith("==") ? text.slice(0, -2) : text.slice(0, -1);
  }
  if (body.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((body.length * 3) / 4));
  let bits = 0;
  let held = 0;
  let at = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    const v = c < 128 ? (table[c] as number) : -1;
    if (v < 0) return null;
    bits = (bits << 6) | v;
    held += 6;
    if (held >= 8) {
      held -= 8;
      out[at++] = (bits >> held) & 0xff;
    }
  }
  if ((bits & ((1 << held) - 1)) !== 0) return null;
  return out;
}

/** Bytes as padded standard base64. */
export function base64Encode(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const left = bytes.length - i;
    const n = ((bytes[i] as number) << 16) | ((left > 1 ? (bytes[i + 1] as number) : 0) << 8) | (left > 2 ? (bytes[i + 2] as number) : 0);
    out += STANDARD.charAt(n >> 18) + STANDARD.charAt((n >> 12) & 63);
    out += left > 1 ? STANDARD.charAt((n >> 6) & 63) : "=";
    out += left > 2 ? STANDARD.charAt(n & 63) : "=";
  }
  return out;
}

/** A proto `bytes` value (`wrong-format` when the string is no base64). */
export function d_bytes(value: JNode, path: string, _cx: Ctx): Uint8Array {
  if (typeof value !== "string") throw invalidType(path, value, "a string");
  const bytes = base64Decode(value);
  if (bytes === null) throw new DecodeError(path, "wrong-format", "base64 text", describe(value));
  return bytes;
}

export function e_bytes(value: Uint8Array): string {
  if (!(value instanceof Uint8Array)) throw new EncodeError("bytes (a Uint8Array)", jsKind(value));
  return `"${base64Encode(value)}"`;
}

// ---------------------------------------------------------------------------
// Timestamps

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Seconds of `0001-01-01T00:00:00Z` and `9999-12-31T23:59:59Z`, the range ProtoJSON allows. */
const MIN_SECONDS = -62135596800;
const MAX_SECONDS = 253402300799;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Year, month and day of a count of days since 1970-01-01. */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** An RFC 3339 date-time in UTC with milliseconds (`2026-01-02T03:04:05.000Z`), or `null`
 * when `text` is no RFC 3339 date-time (a day the month lacks, no zone, more than nine
 * fractional digits, outside years 1..9999). */
export function timestampText(text: string): string | null {
  // One value remembered: a task's timestamp is read and written several times in a row
  // (its status, the status event, the answer), and the result depends on the text only.
  if (text === lastIn) return lastOut;
  const out = canonicalTimestamp(text);
  lastIn = text;
  lastOut = out;
  return out;
}

let lastIn: string | null = null;
let lastOut: string | null = null;

function canonicalTimestamp(text: string): string | null {
  const m = RFC3339.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return null;
  let offset = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offset = (m[9] === "+" ? 1 : -1) * (oh * 3600 + om * 60);
  }
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) return null;
  const millis = (m[7] ?? "").padEnd(3, "0").slice(0, 3);
  const days = Math.floor(seconds / 86400);
  const rest = seconds - days * 86400;
  const [y, mo, d] = civilFromDays(days);
  const time = `${pad(Math.floor(rest / 3600), 2)}:${pad(Math.floor((rest % 3600) / 60), 2)}:${pad(rest % 60, 2)}`;
  return `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${time}.${millis}Z`;
}

/** A `google.protobuf.Timestamp`, normalised (`wrong-format` when it is no RFC 3339 date-time). */
export function d_timestamp(value: JNode, path: string, _cx: Ctx): string {
  if (typeof value !== "string") throw invalidType(path, value, "a string");
  const text = timestampText(value);
  if (text === null) throw new DecodeError(path, "wrong-format", "an RFC 3339 date-time", describe(value));
  return text;
}

/** A timestamp written in its canonical form (any RFC 3339 date-time is accepted). */
export function e_timestamp(value: string): string {
  const text = typeof value === "string" ? timestampText(value) : null;
  if (text === null) throw new EncodeError("an RFC 3339 date-time", jsKind(value));
  return `"${text}"`;
}

/** The current time as a timestamp. */
export function now(): string {
  return new Date().toISOString();
}

// ---------------------------------------------------------------------------
// Oneofs and objects

/** A second member of a oneof (the path is the second's). */
export function oneOfTwice(path: string, first: string, second: string): DecodeError {
  return new DecodeError(path, "one-of-twice", `at most one of the fields ${quote(first)} and ${quote(second)}`, "both");
}

/** None of a required oneof's members. */
export function missingOneOf(path: string, members: readonly string[]): DecodeError {
  return new DecodeError(path, "missing-one-of", `one of the fields ${members.map(quote).join(", ")}`, "an object without any of them");
}

/** Refuses to encode what is not an object (an encoder's argument the static types let through). */
export function expectValue(value: unknown, expected: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new EncodeError(expected, jsKind(value));
}

/** Whether a map holds no entry. */
export function isEmptyMap(value: object): boolean {
  for (const key in value) if (Object.prototype.hasOwnProperty.call(value, key)) return false;
  return true;
}
