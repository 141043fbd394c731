/**
 * In-memory pipes with a bounded buffer, for tests and for connecting two endpoints in
 * one process: `pipe()` is one direction, `duplex()` two connected ends.
 *
 * A write resolves once the buffer is back under its capacity, so a reader that stops
 * reading blocks its writer, as an OS pipe does.
 */

import { SinkClosed, type ByteSink, type ByteSource } from "./transport.js";

/** The default capacity of a pipe: 64 KiB, like a Linux pipe. */
export const DEFAULT_PIPE_CAPACITY = 64 * 1024;

class Shared {
  chunks: Uint8Array[] = [];
  size = 0;
  writerClosed = false;
  readerClosed = false;
  readable: (() => void) | null = null;
  writable: (() => void)[] = [];

  constructor(readonly capacity: number) {}

  wakeReader(): void {
    const wake = this.readable;
    this.readable = null;
    wake?.();
  }

  wakeWriters(): void {
    const waiting = this.writable;
    this.writable = [];
    for (const wake of waiting) wake();
  }
}

/** The reading end of a pipe. */
export class PipeReader implements ByteSource {
  constructor(private readonly shared: Shared) {}

  async read(): Promise<Uint8Array | null> {
    const s = this.shared;
    while (s.chunks.length === 0) {
      if (s.writerClosed || s.readerClosed) return null;
      await new Promise<void>((resolve) => {
        s.readable = resolve;
      });
    }
    const chunk = s.chunks.shift() as Uint8Array;
    s.size -= chunk.length;
    if (s.size <= s.capacity) s.wakeWriters();
    return chunk;
  }

  /** Stops reading: buffered bytes are dropped, later writes fail. */
  cancel(): void {
    const s = this.shared;
    s.readerClosed = true;
    s.chunks = [];
    s.size = 0;
    s.wakeWriters();
    s.wakeReader();
  }
}

/** The writing end of a pipe. */
export class PipeWriter implements ByteSink {
  constructor(private readonly shared: Shared) {}

  async write(data: Uint8Array): Promise<void> {
    const s = this.shared;
    if (s.readerClosed) throw new SinkClosed("the reading end of the pipe is closed");
    if (s.writerClosed) throw new SinkClosed("the pipe is closed");
    if (data.length > 0) {
      s.chunks.push(data.slice());
      s.size += data.length;
      s.wakeReader();
    }
    while (s.size > s.capacity && !s.readerClosed) {
      await new Promise<void>((resolve) => s.writable.push(resolve));
    }
    if (s.readerClosed) throw new SinkClosed("the reading end of the pipe is closed");
  }

  async close(): Promise<void> {
    this.shared.writerClosed = true;
    this.shared.wakeReader();
  }

  /** Whether `close` was called. */
  get closed(): boolean {
    return this.shared.writerClosed;
  }
}

/** One direction: bytes written to `writer` are read from `reader`. */
export function pipe(capacity: number = DEFAULT_PIPE_CAPACITY): { reader: PipeReader; writer: PipeWriter } {
  const shared = new Shared(Math.max(1, capacity));
  return { reader: new PipeReader(shared), writer: new PipeWriter(shared) };
}

/** One end of a `duplex`: what it reads and what it writes. */
export interface End {
  readonly input: PipeReader;
  readonly output: PipeWriter;
}

/** Two connected ends: what one writes the other reads. */
export function duplex(capacity: number = DEFAULT_PIPE_CAPACITY): [End, End] {
  const ab = pipe(capacity);
  const ba = pipe(capacity);
  return [
    { input: ba.reader, output: ab.writer },
    { input: ab.reader, output: ba.writer },
  ];
}
