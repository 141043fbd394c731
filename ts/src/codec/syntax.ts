/**
 * Where a line stops being JSON, for the position a parse error (-32700) reports.
 *
 * The position is defined without reference to any parser, so that every SDK reports
 * the same one (vectors/README.md, "Error texts"): it is the first character at which
 * the text stops being the beginning of some JSON text (RFC 8259, whitespace allowed
 * around the value), or the end of the input when all of it is such a beginning. Lines
 * and columns count from 1; a column counts characters (code points, not UTF-16 units)
 * from the start of its line. The scan runs only after the parser has refused a line.
 */

/** Where a line stopped being JSON. */
export interface Position {
  /** Line number, from 1 (lines end at LF). */
  readonly line: number;
  /** Column, from 1, in characters from the start of the line. */
  readonly column: number;
  /** Whether the input ended before the JSON text was complete. */
  readonly eof: boolean;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly eof: boolean,
  ) {}
}

/** The position of the first character of `text` that cannot continue a JSON text, or
 * `null` when `text` is one whole JSON text. */
export function firstInvalid(text: string): Position | null {
  try {
    scan(text);
    return null;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return { ...positionAt(text.slice(0, err.offset)), eof: err.eof };
  }
}

/** The position just after `before` (the text of a line up to some point). */
export function positionAt(before: string): Position {
  const lineStart = before.lastIndexOf("\n") + 1;
  let line = 1;
  for (let i = 0; i < lineStart; i++) if (before.charCodeAt(i) === 0x0a) line++;
  let column = 1;
  for (const _ of before.slice(lineStart)) column++;
  return { line, column, eof: false };
}

/** The offset of the first byte that does not begin a valid UTF-8 sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or the length when all are valid. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const c = bytes[i] as number;
    if (c < 0x80) {
      i++;
      continue;
    }
    let more: number;
    if (c >= 0xc2 && c <= 0xdf) more = 1;
    else if (c >= 0xe0 && c <= 0xef) more = 2;
    else if (c >= 0xf0 && c <= 0xf4) more = 3;
    else return i;
    // The second byte's range excludes overlong forms, surrogates and code points past U+10FFFF.
    const low = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const high = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= more; k++) {
      const d = bytes[i + k];
      if (d === undefined || d < (k === 1 ? low : 0x80) || d > (k === 1 ? high : 0xbf)) return i;
    }
    i += more + 1;
  }
  return bytes.length;
}

const isWs = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\n" || c === "\r";
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const LITERALS: Record<string, string> = { t: "true", f: "false", n: "null" };

function ws(s: string, i: number): number {
  while (i < s.length && isWs(s[i])) i++;
  return i;
}

function scan(s: string): void {
  const n = s.length;
  const stack: string[] = [];
  let want: "value" | "key" | "after" = "value";
  let i = ws(s, 0);
  for (;;) {
    if (want === "value") {
      i = ws(s, i);
      if (i === n) throw new Stop(n, true);
      const c = s[i] as string;
      if (c === "{" || c === "[") {
        const close = c === "{" ? "}" : "]";
        i = ws(s, i + 1);
        if (i < n && s[i] === close) {
          i++;
          want = "after";
        } else {
          stack.push(c);
          want = c === "{" ? "key" : "value";
        }
        continue;
      }
      if (c === '"') i = string(s, i);
      else if (c in LITERALS) i = literal(s, i, LITERALS[c] as string);
      else if (c === "-" || isDigit(c)) i = number(s, i);
      else throw new Stop(i, false);
      want = "after";
    } else if (want === "key") {
      i = ws(s, i);
      if (i === n) throw new Stop(n, true);
      if (s[i] !== '"') throw new Stop(i, false);
      i = ws(s, string(s, i));
      if (i === n) throw new Stop(n, true);
      if (s[i] !== ":") throw new Stop(i, false);
      i++;
      want = "value";
    } else {
      i = ws(s, i);
      const top = stack[stack.length - 1];
      if (top === undefined) {
        if (i < n) throw new Stop(i, false);
        return;
      }
      if (i === n) throw new Stop(n, true);
      const c = s[i];
      if (c === ",") want = top === "{" ? "key" : "value";
      else if ((c === "}" && top === "{") || (c === "]" && top === "[")) stack.pop();
      else throw new Stop(i, false);
      i++;
    }
  }
}

function string(s: string, i: number): number {
  const n = s.length;
  let j = i + 1;
  for (;;) {
    if (j === n) throw new Stop(n, true);
    const c = s.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c < 0x20) throw new Stop(j, false);
    if (c !== 0x5c) {
      j++;
      continue;
    }
    if (j + 1 === n) throw new Stop(n, true);
    const e = s[j + 1] as string;
    if ('"\\/bfnrt'.includes(e)) j += 2;
    else if (e === "u") {
      for (let k = j + 2; k < j + 6; k++) {
        if (k === n) throw new Stop(n, true);
        if (!isHex(s[k])) throw new Stop(k, false);
      }
      j += 6;
    } else throw new Stop(j + 1, false);
  }
}

function literal(s: string, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) {
    if (i + k === s.length) throw new Stop(s.length, true);
    if (s[i + k] !== word[k]) throw new Stop(i + k, false);
  }
  return i + word.length;
}

function digits(s: string, j: number): number {
  while (isDigit(s[j])) j++;
  return j;
}

/** One required digit at `j`, then any more. */
function firstDigit(s: string, j: number): number {
  if (j === s.length) throw new Stop(j, true);
  if (!isDigit(s[j])) throw new Stop(j, false);
  return digits(s, j + 1);
}

function number(s: string, i: number): number {
  const n = s.length;
  let j = s[i] === "-" ? i + 1 : i;
  if (j === n) throw new Stop(n, true);
  if (s[j] === "0") j++;
  else if (isDigit(s[j])) j = digits(s, j + 1);
  else throw new Stop(j, false);
  if (s[j] === ".") j = firstDigit(s, j + 1);
  if (s[j] === "e" || s[j] === "E") {
    j++;
    if (s[j] === "+" || s[j] === "-") j++;
    j = firstDigit(s, j);
  }
  return j;
}
