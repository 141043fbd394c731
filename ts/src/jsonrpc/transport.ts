/**
 * What a connection reads from and writes to, and adapters for Node streams
 * (`Readable`, `Writable`) and Web streams (`ReadableStream`, `WritableStream`).
 *
 * Backpressure is carried through: the connection pulls the next chunk only when it
 * has room for what it holds, and each write resolves once the sink accepts more.
 */

import type { Readable, Writable } from "node:stream";

/** A byte stream to read. */
export interface ByteSource {
  /** The next chunk as soon as there is one; `null` at the end of the stream. Rejects when reading fails. */
  read(): Promise<Uint8Array | null>;
  /** Stops reading (the connection ended for another reason). */
  cancel?(): void;
}

/** A byte stream to write, with flow control. */
export interface ByteSink {
  /** Writes `data`; resolves when the sink can take more. Rejects when the stream broke
   * (with `SinkClosed` when it is closed already). */
  write(data: Uint8Array): Promise<void>;
  /** Ends the stream (the reader on the other end sees its end). */
  close(): Promise<void>;
}

/** A write to a sink whose stream (or whose reader) is closed already: after the input
 * ended, the connection expects it when flushing its last answers (told by this class,
 * never by the message's text). */
export class SinkClosed extends Error {
  override readonly name: string = "SinkClosed";
}

/** Anything `fromNodeReadable`, `fromWebReadable` or a `ByteSource` itself. */
export type Input = ByteSource | Readable | ReadableStream<Uint8Array>;
/** Anything `toNodeWritable`, `toWebWritable` or a `ByteSink` itself. */
export type Output = ByteSink | Writable | WritableStream<Uint8Array>;

/** A Node `Readable` (a child's stdout, `process.stdin`, a socket) as a `ByteSource`. */
export function fromNodeReadable(stream: Readable): ByteSource {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Uint8Array | string>;
  return {
    async read() {
      const next = await chunks.next();
      if (next.done === true) return null;
      const value = next.value;
      return typeof value === "string" ? Buffer.from(value, "utf8") : value;
    },
    cancel() {
      void chunks.return?.();
    },
  };
}

/** A Web `ReadableStream` of bytes as a `ByteSource`. */
export function fromWebReadable(stream: ReadableStream<Uint8Array>): ByteSource {
  const reader = stream.getReader();
  return {
    async read() {
      const next = await reader.read();
      return next.done ? null : next.value;
    },
    cancel() {
      reader.cancel().catch(() => {});
    },
  };
}

/** A Node `Writable` (a child's stdin, `process.stdout`, a socket) as a `ByteSink`. */
export function toNodeWritable(stream: Writable): ByteSink {
  let failure: Error | null = null;
  const wakers = new Set<() => void>();
  const wakeAll = (): void => {
    for (const wake of wakers) wake();
    wakers.clear();
  };
  stream.on("error", (err: Error) => {
    failure ??= err;
    wakeAll();
  });
  stream.on("close", wakeAll);
  stream.on("drain", wakeAll);
  return {
    async write(data) {
      if (failure !== null) throw failure;
      if (stream.destroyed || stream.writableEnded) throw new SinkClosed("the stream is closed");
      if (stream.write(data)) return;
      await new Promise<void>((resolve) => {
        if (!stream.writableNeedDrain || stream.destroyed) resolve();
        else wakers.add(resolve);
      });
      if (failure !== null) throw failure;
    },
    async close() {
      if (stream.destroyed || stream.writableEnded) return;
      await new Promise<void>((resolve) => {
        stream.end(() => resolve());
        stream.once("error", () => resolve());
        stream.once("close", () => resolve());
      });
    },
  };
}

/** A Web `WritableStream` of bytes as a `ByteSink`. */
export function toWebWritable(stream: WritableStream<Uint8Array>): ByteSink {
  const writer = stream.getWriter();
  let closed = false;
  writer.closed.then(
    () => (closed = true),
    () => {},
  );
  return {
    async write(data) {
      if (closed) throw new SinkClosed("the stream is closed");
      await writer.ready;
      await writer.write(data);
    },
    async close() {
      await writer.close().catch(() => {});
    },
  };
}

function isWebReadable(x: unknown): x is ReadableStream<Uint8Array> {
  return typeof ReadableStream !== "undefined" && x instanceof ReadableStream;
}

function isWebWritable(x: unknown): x is WritableStream<Uint8Array> {
  return typeof WritableStream !== "undefined" && x instanceof WritableStream;
}

/** Any supported input as a `ByteSource`. */
export function toSource(input: Input): ByteSource {
  if (isWebReadable(input)) return fromWebReadable(input);
  if (typeof (input as ByteSource).read === "function" && !("pipe" in input)) return input as ByteSource;
  return fromNodeReadable(input as Readable);
}

/** Any supported output as a `ByteSink`. */
export function toSink(output: Output): ByteSink {
  if (isWebWritable(output)) return toWebWritable(output);
  if (typeof (output as Writable).on === "function" && typeof (output as Writable).end === "function") {
    return toNodeWritable(output as Writable);
  }
  return output as ByteSink;
}
