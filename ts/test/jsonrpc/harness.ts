/** A connection under test over an in-memory pipe, and the raw other side that writes
 * and reads NDJSON lines. Every wait is bounded by `LIMIT`. */

import { Connection, type ConnectionOptions, type Handler, type NotificationContext, type RequestContext } from "../../src/jsonrpc/index.js";
import { LineSplitter } from "../../src/jsonrpc/frame.js";
import { duplex, type End } from "../../src/jsonrpc/memory.js";
import type { Notification, Request } from "../../src/jsonrpc/message.js";
import type { RawJson } from "../../src/codec/values.js";

export const LIMIT = 5000;

/** Rejects after `ms` (the bound of every wait in these tests). */
export async function within<T>(promise: Promise<T>, what: string, ms = LIMIT): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Lets the event loop turn `n` times (macrotasks, not a delay). */
export async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The other side of the pipe: raw lines. */
export class Remote {
  private readonly splitter = new LineSplitter();
  private readonly lines: string[] = [];

  constructor(readonly end: End) {}

  send(message: unknown): Promise<void> {
    return this.sendRaw(typeof message === "string" ? message : JSON.stringify(message));
  }

  sendRaw(line: string): Promise<void> {
    return this.end.output.write(Buffer.from(line + "\n", "utf8"));
  }

  async next(what = "a line"): Promise<any> {
    return JSON.parse(await within(this.nextRaw(), what));
  }

  private async nextRaw(): Promise<string> {
    while (this.lines.length === 0) {
      const chunk = await this.end.input.read();
      const frames = chunk === null ? this.splitter.finish() : this.splitter.feed(chunk);
      for (const f of frames) if (f instanceof Uint8Array) this.lines.push(Buffer.from(f).toString("utf8"));
      if (chunk === null && this.lines.length === 0) throw new Error("the connection closed its output");
    }
    return this.lines.shift() as string;
  }

  /** Whether the connection closed its output (after reading what is left). */
  async ended(): Promise<boolean> {
    return within(
      (async () => {
        for (;;) {
          const chunk = await this.end.input.read();
          if (chunk === null) return true;
        }
      })(),
      "the end of the output",
    );
  }

  close(): Promise<void> {
    return this.end.output.close();
  }
}

/** A handler from two functions. */
export function handler(
  request: (r: Request, cx: RequestContext) => Promise<RawJson | string>,
  notification: (n: Notification, cx: NotificationContext) => Promise<void> = async () => {},
): Handler {
  return { request, notification };
}

export function setup(h: Handler, options: ConnectionOptions = {}, capacity?: number): { connection: Connection; remote: Remote; running: Promise<void> } {
  const [ours, theirs] = duplex(capacity);
  const connection = new Connection(ours.input, ours.output, h, { shutdownGrace: 1000, ...options });
  const running = connection.run();
  return { connection, remote: new Remote(theirs), running };
}

/** A promise with its resolve outside. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
