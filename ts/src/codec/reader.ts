/**
 * A strict JSON reader that keeps what `JSON.parse` hides.
 *
 * `JSON.parse` forgets repeated keys, where each value was in the text and the exact
 * spelling of numbers; the validators need all three (a repeated known key is an
 * error, free-form values and unknown union variants are re-emitted from their
 * received text, an integer beyond 2^53 must keep its digits). This reader accepts
 * exactly RFC 8259 JSON and returns a tree of:
 *
 * - `JObject`: its members in received order, repeated keys included, each with the
 *   span of its value;
 * - `JArray`: its items, each with its span;
 * - `JNumber`: the number's text (the value is computed on demand);
 * - `string`, `boolean` and `null` as themselves.
 *
 * It follows the Python SDK's reader (`agentproto.codec.reader`) failure for failure,
 * so that both classify a broken line the same way.
 */

/** The text is not JSON; `eof` tells whether the input ended too early. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
    readonly eof: boolean,
  ) {
    super(`${message} at offset ${position}`);
    this.name = "JsonSyntaxError";
  }
}

/** Arrays and objects nest deeper than the limit given to `parse`. */
export class NestingError extends Error {
  constructor(readonly position: number) {
    super(`nesting too deep at offset ${position}`);
    this.name = "NestingError";
  }
}

/** One member of an object: its key, its value and the span of the value's text. */
export class JMember {
  constructor(
    readonly key: string,
    readonly value: JNode,
    readonly start: number,
    readonly end: number,
  ) {}
}

/** A JSON object: its members in received order. */
export class JObject {
  constructor(
    readonly members: readonly JMember[],
    readonly start: number,
    readonly end: number,
  ) {}
}

/** A JSON array: its items, with the span of each item's text. */
export class JArray {
  constructor(
    readonly items: readonly JNode[],
    readonly starts: readonly number[],
    readonly ends: readonly number[],
    readonly start: number,
    readonly end: number,
  ) {}
}

/** A JSON number, kept as its text. */
export class JNumber {
  constructor(readonly text: string) {}

  /** Whether the number is an integer to the decoding model: no fraction, no exponent,
   * and not `-0` (which reads as the double -0.0, as in the Rust SDK). */
  get integer(): boolean {
    const text = this.text;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x2e || c === 0x65 || c === 0x45) return false; // . e E
    }
    return !(text === "-0");
  }

  /** The number as a double (`Infinity` beyond the double range). */
  get value(): number {
    return Number(this.text);
  }
}

/** A node of the tree `parse` returns. */
export type JNode = JObject | JArray | JNumber | string | boolean | null;

/** The deepest nesting of arrays and objects a message may have (the message object included). */
export const MAX_NESTING_DEPTH = 128;

/**
 * Parses one JSON value, optionally surrounded by whitespace.
 *
 * @param maxDepth the deepest nesting of arrays and objects allowed.
 * @throws JsonSyntaxError when the text is not exactly one JSON value.
 * @throws NestingError when the value nests deeper than `maxDepth` (found while reading,
 *   so a syntax error earlier in the text wins).
 */
export function parse(text: string, maxDepth: number = Infinity): JNode {
  const reader = new Reader(text, maxDepth);
  const start = reader.skip(0);
  const value = reader.value(start);
  const end = reader.skip(reader.at);
  if (end !== text.length) throw new JsonSyntaxError("trailing characters", end, false);
  return value;
}

/** Whether arrays and objects nest deeper than `limit` anywhere in the text (brackets
 * inside strings do not count; the text need not be valid JSON). */
export function nestingExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > limit) return true;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth -= 1;
  }
  return false;
}

const PLAIN = /[^"\\\x00-\x1f]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERALS = ["true", "false", "null"];

class Reader {
  /** Where the last value read ended. */
  at = 0;
  private depth = 0;

  constructor(
    readonly text: string,
    readonly maxDepth: number,
  ) {}

  private enter(i: number): void {
    this.depth += 1;
    if (this.depth > this.maxDepth) throw new NestingError(i);
  }

  skip(i: number): number {
    const text = this.text;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      i++;
    }
    return i;
  }

  fail(message: string, i: number): JsonSyntaxError {
    return new JsonSyntaxError(message, i, i >= this.text.length);
  }

  value(i: number): JNode {
    const text = this.text;
    if (i >= text.length) throw this.fail("unexpected end of input", i);
    const c = text.charCodeAt(i);
    if (c === 0x22) return this.string(i);
    if (c === 0x7b) return this.object(i);
    if (c === 0x5b) return this.array(i);
    if (c === 0x74 && text.startsWith("true", i)) {
      this.at = i + 4;
      return true;
    }
    if (c === 0x66 && text.startsWith("false", i)) {
      this.at = i + 5;
      return false;
    }
    if (c === 0x6e && text.startsWith("null", i)) {
      this.at = i + 4;
      return null;
    }
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (match !== null) {
      this.at = i + match[0].length;
      return new JNumber(match[0]);
    }
    // A prefix of a literal or a number cut off by the end of the input.
    const rest = text.slice(i);
    if (rest === "-" || LITERALS.some((word) => word.startsWith(rest))) {
      throw new JsonSyntaxError("unexpected end of input", text.length, true);
    }
    throw this.fail("expected a value", i);
  }

  string(start: number): string {
    const text = this.text;
    let i = start + 1;
    let out = "";
    let run = i;
    for (;;) {
      // Skip a run of plain characters at once.
      PLAIN.lastIndex = i;
      PLAIN.test(text);
      i = PLAIN.lastIndex;
      if (i >= text.length) throw new JsonSyntaxError("unterminated string", text.length, true);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(run, i);
        this.at = i + 1;
        return out;
      }
      if (c < 0x20) throw this.fail("invalid string", start);
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += text.slice(run, i);
      if (i + 1 >= text.length) throw new JsonSyntaxError("unterminated string", text.length, true);
      const e = text.charCodeAt(i + 1);
      switch (e) {
        case 0x22:
          out += '"';
          break;
        case 0x5c:
          out += "\\";
          break;
        case 0x2f:
          out += "/";
          break;
        case 0x62:
          out += "\b";
          break;
        case 0x66:
          out += "\f";
          break;
        case 0x6e:
          out += "\n";
          break;
        case 0x72:
          out += "\r";
          break;
        case 0x74:
          out += "\t";
          break;
        case 0x75: {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            // An escape cut off by the end of the input is an end-of-input failure.
            if (i + 6 > text.length) {
              throw new JsonSyntaxError("unterminated string", text.length, true);
            }
            throw this.fail("invalid string", start);
          }
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
          run = i;
          continue;
        }
        default:
          throw this.fail("invalid string", start);
      }
      i += 2;
      run = i;
    }
  }

  object(start: number): JObject {
    const text = this.text;
    const members: JMember[] = [];
    this.enter(start);
    let i = this.skip(start + 1);
    if (i < text.length && text.charCodeAt(i) === 0x7d) {
      this.at = i + 1;
      this.depth -= 1;
      return new JObject(members, start, i + 1);
    }
    for (;;) {
      if (i >= text.length) throw this.fail("unexpected end of input", i);
      if (text.charCodeAt(i) !== 0x22) throw this.fail("expected a key", i);
      const key = this.string(i);
      i = this.skip(this.at);
      if (i >= text.length) throw this.fail("unexpected end of input", i);
      if (text.charCodeAt(i) !== 0x3a) throw this.fail("expected ':'", i);
      const vstart = this.skip(i + 1);
      const value = this.value(vstart);
      const vend = this.at;
      members.push(new JMember(key, value, vstart, vend));
      i = this.skip(vend);
      if (i >= text.length) throw this.fail("unexpected end of input", i);
      const c = text.charCodeAt(i);
      if (c === 0x2c) {
        i = this.skip(i + 1);
        continue;
      }
      if (c === 0x7d) {
        this.at = i + 1;
        this.depth -= 1;
        return new JObject(members, start, i + 1);
      }
      throw this.fail("expected ',' or '}'", i);
    }
  }

  array(start: number): JArray {
    const text = this.text;
    const items: JNode[] = [];
    const starts: number[] = [];
    const ends: number[] = [];
    this.enter(start);
    let i = this.skip(start + 1);
    if (i < text.length && text.charCodeAt(i) === 0x5d) {
      this.at = i + 1;
      this.depth -= 1;
      return new JArray(items, starts, ends, start, i + 1);
    }
    for (;;) {
      const value = this.value(i);
      items.push(value);
      starts.push(i);
      ends.push(this.at);
      i = this.skip(this.at);
      if (i >= text.length) throw this.fail("unexpected end of input", i);
      const c = text.charCodeAt(i);
      if (c === 0x2c) {
        i = this.skip(i + 1);
        continue;
      }
      if (c === 0x5d) {
        this.at = i + 1;
        this.depth -= 1;
        return new JArray(items, starts, ends, start, i + 1);
      }
      throw this.fail("expected ',' or ']'", i);
    }
  }
}
