// In-memory byte sources and sinks for the frame and server tests.

import { type ByteSink, type ByteSource } from "../../src/sync/frame.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export const bytes = (value: string): Uint8Array => encoder.encode(value);
export const text = (value: Uint8Array): string => decoder.decode(value);

/** Serves `data`, at most `chunk` bytes per read (all that is asked by default). */
export class MemorySource implements ByteSource {
  private at = 0;
  constructor(
    private readonly data: Uint8Array,
    private readonly chunk = Number.MAX_SAFE_INTEGER,
  ) {}
  read(into: Uint8Array, offset: number, length: number): number {
    const count = Math.min(length, this.chunk, this.data.length - this.at);
    into.set(this.data.subarray(this.at, this.at + count), offset);
    this.at += count;
    return count;
  }
}

/** Keeps everything written. */
export class MemorySink implements ByteSink {
  private readonly parts: Uint8Array[] = [];
  write(from: Uint8Array, offset: number, length: number): number {
    this.parts.push(from.slice(offset, offset + length));
    return length;
  }
  bytes(): Uint8Array {
    return Uint8Array.from(Buffer.concat(this.parts));
  }
}
