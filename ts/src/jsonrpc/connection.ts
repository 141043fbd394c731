/**
 * `Connection`: JSON-RPC 2.0 over a byte stream pair.
 *
 * `run()` drives one connection: a reader frames and decodes the input and routes each
 * message (`reader.ts`), a worker handles notifications one at a time, each request
 * runs as its own task (`handler.ts`), and a writer drains the bounded outgoing queue
 * (`writer.ts`). The application supplies a `Handler` and sends through
 * `Connection.peer`. The guarantees are the Rust SDK's: ordering (a response reaches
 * its caller after the notifications read before it were handled), backpressure
 * (bounded queues, nothing dropped), cancellation both ways (`$/cancel_request` and
 * `AbortSignal`), failures that stay local (a bad line is answered or reported, a
 * handler's throw becomes -32603), and the shutdown below.
 *
 * **Shutdown.** At the end of the input, pending calls fail at once with
 * `ConnectionClosed`, and so does every later call; the signals of requests still
 * running abort (they are answered -32800 unless they handle cancellation);
 * notifications already queued are still handled; handlers get `shutdownGrace`
 * milliseconds, then are abandoned unanswered; the writer then gets as long to flush,
 * closes the output, and `run()` resolves. A read or write failure ends the connection
 * the same way and `run()` rejects with a `TransportError`.
 */

import { waitAtMost } from "./cancellation.js";
import { TransportError } from "./local-error.js";
import { resolveOptions, type ConnectionOptions, type ResolvedOptions } from "./options.js";
import { Peer } from "./peer.js";
import { Reader } from "./reader.js";
import type { Handler } from "./handler.js";
import { SinkClosed, toSink, toSource, type ByteSink, type Input, type Output } from "./transport.js";
import { writeLoop } from "./writer.js";

/** One JSON-RPC connection: reads `input`, dispatches to `handler`, writes `output`.
 * Nothing happens until `run()` is called. */
export class Connection {
  readonly options: ResolvedOptions;
  /** The handle to call and notify the other side. */
  readonly peer: Peer;
  private readonly output: ByteSink;
  private readonly reader: Reader;
  private running: Promise<void> | null = null;

  constructor(input: Input, output: Output, handler: Handler, options: ConnectionOptions = {}) {
    this.options = resolveOptions(options);
    this.peer = new Peer(this.options);
    this.output = toSink(output);
    this.reader = new Reader(toSource(input), handler, this.peer, this.options);
  }

  /** Runs until the input ends (resolves) or the transport fails (rejects with
   * `TransportError`). Calling it again returns the same promise. */
  run(): Promise<void> {
    this.running ??= this.drive();
    return this.running;
  }

  private async drive(): Promise<void> {
    const { peer, reader } = this;
    const grace = this.options.shutdownGrace;
    let writerFailure: unknown = null;
    let writerDone = false;
    const writer = writeLoop(peer, this.output).then(
      () => {
        writerDone = true;
      },
      (err: unknown) => {
        writerDone = true;
        writerFailure = err;
      },
    );
    const worker = reader.startWorker();
    let readFailure: unknown = null;
    const reading = reader.read().catch((err: unknown) => {
      readFailure = err;
    });
    await Promise.race([reading, writer]);
    let failure: unknown = readFailure;
    if (writerDone) {
      reader.stop();
      failure = writerFailure ?? new TransportError("the writer ended");
    } else if (failure === null) {
      peer.report({ kind: "input-closed" });
    }
    // No answer can arrive any more.
    peer.close();
    reader.shutdown.abort();
    const deadline = Date.now() + grace;
    await waitAtMost(grace, reader.dispatchDeferred());
    reader.queue.put(null); // the worker ends after what is queued
    await waitAtMost(deadline - Date.now(), Promise.all([worker, ...reader.tasks]));
    // Work the notification handlers handed off, the last of it started by the last
    // notification handled.
    while (reader.background.tasks.size > 0 && Date.now() < deadline) {
      await waitAtMost(deadline - Date.now(), Promise.all(reader.background.tasks));
    }
    // Hard stop: what is still running is abandoned, unanswered.
    reader.hardStop.abort();
    reader.stop();
    peer.stopping = true;
    peer.wakeWriter();
    await waitAtMost(grace, writer);
    if (!writerDone) {
      peer.writerEnded();
      await this.output.close().catch(() => {});
    } else if (failure === null && writerFailure !== null && !isGone(writerFailure)) {
      failure = writerFailure;
    }
    if (failure !== null) {
      if (failure instanceof TransportError) throw failure;
      throw new TransportError(`the connection's transport failed: ${String(failure)}`, { cause: failure });
    }
  }
}

/** After the input ended the peer may be gone already: failing to flush the last answers is expected. */
function isGone(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "EPIPE" || code === "ECONNRESET" || code === "ERR_STREAM_DESTROYED" || err instanceof SinkClosed;
}
