/**
 * NDJSON framing: one message per line, by the Rust SDK's `FrameReader` rules.
 *
 * - a line ends with LF; one trailing CR is stripped (CRLF is accepted);
 * - blank and whitespace-only lines are skipped;
 * - end of input ends the last line even without a newline (`LineSplitter.finish`);
 * - a line longer than `maxMessageSize` (without its LF) is dropped as it streams by,
 *   never kept whole, and reported as an `Oversize`; reading goes on. Its first
 *   `OVERSIZE_PREFIX` bytes are kept and scanned for the top-level `id` and for whether
 *   it looks like a call or a response, so that a connection can still answer it (an
 *   oversize request gets -32600) or fail the call it answers.
 *
 * Lines are split on the raw bytes, before any UTF-8 decoding, so a multi-byte
 * character cut across two chunks is never broken.
 */

import { isUtf8 } from "node:buffer";

import { JNumber, parse } from "../codec/reader.js";
import type { RequestId } from "./id.js";

/** The default maximum message size: 64 MiB. */
export const DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024;

/** How many bytes of an oversize line are kept (to recover its id, as the Rust SDK does). */
export const OVERSIZE_PREFIX = 4096;

/** What the first bytes of an oversize line look like: a `method` key and no
 * `result`/`error` key (`call`), the reverse (`response`), or neither or both. */
export type Shape = "call" | "response" | "unknown";

/** A line over the maximum size, discarded; `length` counts its bytes without the LF. */
export class Oversize {
  /** The top-level id, when it was found in the line's first bytes. */
  readonly id: RequestId | undefined;
  readonly shape: Shape;

  constructor(
    readonly length: number,
    /** The line's first bytes (at most `OVERSIZE_PREFIX`). */
    readonly prefix: Uint8Array,
  ) {
    const scanned = scanPrefix(prefix);
    this.id = scanned.id;
    this.shape = scanned.shape;
  }
}

export type Frame = Uint8Array | Oversize;

function isBlank(line: Uint8Array): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/** Splits a byte stream into lines and `Oversize` events. */
export class LineSplitter {
  private buffer: Uint8Array[] = [];
  private buffered = 0;
  private discarding: number | null = null; // bytes of an oversize line seen so far
  private prefix: Uint8Array = new Uint8Array(0);

  constructor(readonly maxMessageSize: number = DEFAULT_MAX_MESSAGE_SIZE) {}

  /** The frames completed by `chunk`. */
  feed(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline < 0) {
        this.keep(chunk.subarray(start));
        return frames;
      }
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.discarding !== null) {
        const length = this.discarding + piece.length;
        this.discarding = null;
        frames.push(new Oversize(length, this.prefix));
        continue;
      }
      let line = piece;
      if (this.buffered > 0) {
        this.buffer.push(piece);
        line = concat(this.buffer, this.buffered + piece.length);
        this.buffer = [];
        this.buffered = 0;
      }
      const frame = this.frame(line);
      if (frame !== null) frames.push(frame);
    }
  }

  /** The last line, at end of input (it needs no newline). */
  finish(): Frame[] {
    if (this.discarding !== null) {
      const length = this.discarding;
      this.discarding = null;
      return [new Oversize(length, this.prefix)];
    }
    const line = concat(this.buffer, this.buffered);
    this.buffer = [];
    this.buffered = 0;
    const frame = this.frame(line);
    return frame === null ? [] : [frame];
  }

  private keep(rest: Uint8Array): void {
    if (this.discarding !== null) {
      this.discarding += rest.length;
      return;
    }
    if (rest.length === 0) return;
    this.buffer.push(rest.slice());
    this.buffered += rest.length;
    // A CR may still turn out to be the terminator's, so allow one byte more.
    if (this.buffered > this.maxMessageSize + 1) {
      const all = concat(this.buffer, this.buffered);
      this.discarding = all.length;
      this.prefix = all.slice(0, OVERSIZE_PREFIX);
      this.buffer = [];
      this.buffered = 0;
    }
  }

  private frame(line: Uint8Array): Frame | null {
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    if (line.length > this.maxMessageSize) return new Oversize(line.length, line.slice(0, OVERSIZE_PREFIX));
    if (isBlank(line)) return null;
    return line;
  }
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Every frame of a complete input. */
export function splitLines(data: Uint8Array, maxMessageSize: number = DEFAULT_MAX_MESSAGE_SIZE): Frame[] {
  const splitter = new LineSplitter(maxMessageSize);
  return [...splitter.feed(data), ...splitter.finish()];
}

// ---------------------------------------------------------------------------
// The head of an oversize line

/** Best-effort scan of the top-level keys of a truncated JSON object: the `id` value and
 * whether `method` or `result`/`error` keys appear (the Rust SDK's `scan_prefix`). */
export function scanPrefix(prefix: Uint8Array): { id: RequestId | undefined; shape: Shape } {
  const scanner = new Scanner(prefix);
  let id: RequestId | undefined;
  let method = false;
  let response = false;
  if (scanner.punct() === 0x7b) {
    for (;;) {
      const key = scanner.string();
      if (key === null || scanner.punct() !== 0x3a) break;
      if (key === "method") method = true;
      else if (key === "result" || key === "error") response = true;
      scanner.skipWhitespace();
      const start = scanner.at;
      if (!scanner.skipValue()) break;
      if (key === "id") id = idOf(prefix.subarray(start, scanner.at));
      if (scanner.punct() !== 0x2c) break;
    }
  }
  const shape: Shape = method && !response ? "call" : response && !method ? "response" : "unknown";
  return { id, shape };
}

/** An id's text as an integer (within the 64-bit ranges), a string or null; else `undefined`. */
export function idOf(bytes: Uint8Array): RequestId | undefined {
  if (!isUtf8(bytes)) return undefined;
  try {
    const node = parse(Buffer.from(bytes).toString("utf8"));
    if (node === null || typeof node === "string") return node;
    if (!(node instanceof JNumber) || !node.integer) return undefined;
    const big = BigInt(node.text);
    if (big < -(2n ** 63n) || big >= 2n ** 64n) return undefined;
    return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
  } catch {
    return undefined;
  }
}

/** Walks JSON text byte by byte without building values: keys, punctuation, whole values
 * skipped (a truncated value reports `false`). The remote transport's routing scans use it too. */
export class Scanner {
  at = 0;

  constructor(readonly data: Uint8Array) {}

  skipWhitespace(): void {
    const data = this.data;
    while (this.at < data.length) {
      const c = data[this.at];
      if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) break;
      this.at++;
    }
  }

  punct(): number | null {
    this.skipWhitespace();
    if (this.at >= this.data.length) return null;
    return this.data[this.at++] as number;
  }

  /** A string's raw contents (escapes left as they are, bytes as Latin-1), or `null`. */
  string(): string | null {
    if (this.punct() !== 0x22) return null;
    const start = this.at;
    if (!this.skipStringRest()) return null;
    const data = this.data;
    const end = this.at - 1;
    if (end - start > 32) return Buffer.from(data.buffer, data.byteOffset + start, end - start).toString("latin1");
    let out = "";
    for (let i = start; i < end; i++) out += String.fromCharCode(data[i] as number);
    return out;
  }

  /** Skips to just after the closing quote of the string whose opening quote was just
   * read: each quote found is the closing one unless an odd run of backslashes escapes it. */
  private skipStringRest(): boolean {
    const data = this.data;
    let from = this.at;
    for (;;) {
      const quote = data.indexOf(0x22, from);
      if (quote < 0) {
        this.at = data.length;
        return false;
      }
      let slashes = 0;
      while (quote - slashes - 1 >= this.at && data[quote - slashes - 1] === 0x5c) slashes++;
      if ((slashes & 1) === 0) {
        this.at = quote + 1;
        return true;
      }
      from = quote + 1;
    }
  }

  /** Skips one complete value; `false` when the prefix ends inside it. */
  skipValue(): boolean {
    const data = this.data;
    let depth = 0;
    while (this.at < data.length) {
      const c = data[this.at++] as number;
      if (c === 0x22 && !this.skipStringRest()) return false;
      if (c === 0x5b || c === 0x7b) depth++;
      else if (c === 0x5d || c === 0x7d) {
        if (depth === 0) {
          this.at--; // the end of the enclosing object
          return true;
        }
        depth--;
      } else if (c === 0x2c && depth === 0) {
        this.at--;
        return true;
      }
      if (depth === 0 && (c === 0x22 || c === 0x5d || c === 0x7d)) return true;
    }
    return false;
  }
}
