/**
 * The value types generated code uses besides plain objects, and the canonical
 * spelling of scalars (vectors/README.md, "Canonical encoding").
 *
 * - `RawJson`: free-form JSON (`_meta`, `rawInput`, extension payloads) kept as the
 *   text received, so that it re-encodes byte for byte.
 * - `UnknownVariant`: a tagged-union variant this schema does not list, kept as its
 *   JSON (rule 9).
 * - `Int64`: a 64-bit integer (`int64`/`uint64` formats): a `number` while it is a
 *   safe integer, a `bigint` beyond 2^53, so no digit is ever lost.
 */

/** Free-form JSON, kept as the text received (or as written by `RawJson.from`). */
export class RawJson {
  constructor(readonly text: string) {}

  /** The value as `JSON.parse` reads it (numbers beyond 2^53 lose precision there). */
  parse(): unknown {
    return JSON.parse(this.text);
  }

  /** Free-form JSON holding `value`, as `JSON.stringify` writes it. */
  static from(value: unknown): RawJson {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError("the value has no JSON form");
    return new RawJson(text);
  }

  toJSON(): unknown {
    return this.parse();
  }
}

/** A variant of a tagged union that this schema does not list (an extension, a newer
 * version, or a value a closed union does not allow), kept as its JSON. It has none
 * of the union's tag member, so `switch (value.type)` never mistakes it for a known
 * variant; test `value instanceof UnknownVariant`. */
export class UnknownVariant {
  constructor(
    /** The tag value, or `null` for an object without the tag member. */
    readonly variantTag: string | null,
    /** The object re-emitted by rule 9: members in received order, values as received. */
    readonly raw: RawJson,
  ) {}
}

/** An unknown variant in a union whose tag member is `K`: it has no `K` member. */
export type Unknown<K extends string> = UnknownVariant & { readonly [P in K]?: undefined };

/** A 64-bit integer: a `number` when it is a safe integer, else a `bigint`. */
export type Int64 = number | bigint;

/** A string as canonical JSON (rule 6: only `"`, `\`, and control characters escaped). */
export function encodeString(s: string): string {
  return JSON.stringify(s);
}

/** An integer as canonical JSON (rule 7: plain decimal). */
export function encodeInteger(x: number | bigint): string {
  if (typeof x === "number" && !Number.isSafeInteger(x)) {
    if (!Number.isInteger(x)) throw new TypeError(`not an integer: ${x}`);
    return BigInt(x).toString();
  }
  return String(x);
}

/** The shortest decimal digits of a finite, non-zero double and its decimal exponent
 * (10^exponent <= |x| < 10^(exponent+1)). */
export function shortestDigits(x: number): { digits: string; exponent: number; negative: boolean } {
  const text = x.toExponential(); // as many digits as needed to read back the same double
  const e = text.indexOf("e");
  const mantissa = text.slice(0, e);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  return { digits, exponent: Number(text.slice(e + 1)), negative };
}

/** A double as canonical JSON (rule 7): plain notation for exponents -5..15 (`1.0`,
 * `0.00001`), else `d.ddde+N` with the exponent's sign always written; `null` when not finite. */
export function encodeDouble(x: number): string {
  if (!Number.isFinite(x)) return "null";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const { digits, exponent: n, negative } = shortestDigits(x);
  const sign = negative ? "-" : "";
  if (n < -5 || n > 15) {
    const tail = digits.length > 1 ? `.${digits.slice(1)}` : "";
    return `${sign}${digits[0]}${tail}e${n < 0 ? "-" : "+"}${Math.abs(n)}`;
  }
  if (n < 0) return `${sign}0.${"0".repeat(-n - 1)}${digits}`;
  if (digits.length <= n + 1) return `${sign}${digits}${"0".repeat(n + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, n + 1)}.${digits.slice(n + 1)}`;
}

/** A payload kept by the envelope decoder: its text, and the parse of the line it came
 * from, so the payload's validator reads it without parsing it a second time. */
export class ReceivedJson extends RawJson {
  constructor(
    /** The whole line the value was read from (the spans of `node` point into it). */
    readonly source: string,
    /** The value, as parsed with the line. */
    readonly node: import("./reader.js").JNode,
    start: number,
    end: number,
  ) {
    super(source.slice(start, end));
  }
}
