// The server side: requests read from a byte source (stdin), handlers by
// method name, callbacks into the client mid-request. All synchronous.

import {
  CallError,
  ChannelBrokenError,
  ChannelIoError,
  EndedDuringCallError,
  HandlerError,
  ProtocolError,
  thrownText,
} from "./errors.js";
import {
  type ByteSink,
  type ByteSource,
  DEFAULT_LIMITS,
  FdSink,
  FdSource,
  type Frame,
  FrameError,
  FrameReader,
  FrameWriter,
  isPayload,
  type Limits,
  MessageType,
} from "./frame.js";

/**
 * A handler: gets the request's payload (a view valid until the handler
 * returns; callbacks do not disturb it) and the `Peer` to call the client
 * back, and returns its result (bytes, a string sent as UTF-8, or nothing
 * for an empty result). Throwing `HandlerError` (or letting a `CallError`
 * escape) answers with an `Error` of that text; any other exception with
 * ``handler `NAME` panicked: MESSAGE``.
 */
export type Handler = (payload: Uint8Array, peer: Peer) => Uint8Array | string | undefined | void;

const lossyText = new TextDecoder("utf-8");
const utf8 = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** Why serving stopped early, kept until the handler returns. */
type Broken = ProtocolError | EndedDuringCallError | ChannelIoError;

/** What a handler uses to call back into the client during its request. */
export class Peer {
  /** @internal */
  broken: Broken | undefined;

  /** @internal */
  constructor(
    private readonly reader: FrameReader,
    private readonly writer: FrameWriter,
  ) {}

  /**
   * Calls the client's callback `name` with `payload` and waits for its
   * answer, a view valid until the next call. Throws `CallError` when the
   * client answers with a `CallError`, and `ChannelBrokenError` when the
   * channel broke (the serving loop then ends with the cause).
   */
  call(name: string, payload: Uint8Array | string = EMPTY): Uint8Array {
    if (this.broken !== undefined) throw new ChannelBrokenError();
    const nameBytes = utf8.encode(name);
    try {
      this.writer.write(MessageType.Call, nameBytes, payload);
    } catch (error) {
      if (error instanceof RangeError) throw error;
      throw this.breakWith(new ChannelIoError(error));
    }
    let frame: Frame | null;
    try {
      frame = this.reader.read();
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      const detail = error.detail;
      if (detail.reason === "unexpected-eof") throw this.breakWith(new EndedDuringCallError(name));
      if (detail.reason === "io") throw this.breakWith(new ChannelIoError(detail.cause));
      throw this.breakWith(new ProtocolError({ reason: "frame", error }));
    }
    if (frame === null) throw this.breakWith(new EndedDuringCallError(name));
    switch (frame.kind) {
      case MessageType.CallResponse:
      case MessageType.CallError: {
        if (lossyText.decode(frame.name) !== name) {
          const found = lossyText.decode(frame.name);
          throw this.breakWith(new ProtocolError({ reason: "name-mismatch", kind: frame.kind, expected: name, found }));
        }
        if (frame.kind === MessageType.CallResponse) return frame.payload;
        throw new CallError(lossyText.decode(frame.payload));
      }
      default:
        throw this.breakWith(
          new ProtocolError({ reason: "unexpected-type", kind: frame.kind, name: lossyText.decode(frame.name) }),
        );
    }
  }

  private breakWith(cause: Broken): ChannelBrokenError {
    this.broken = cause;
    return new ChannelBrokenError();
  }
}

/**
 * Handlers by method name, served over a byte source and sink.
 *
 * Each request runs its handler to completion before the next is read (the
 * protocol has one request in flight). An unknown method and a handler's
 * exception are each answered with an `Error` tuple and serving goes on; only
 * the channel itself failing ends it.
 */
export class Server {
  private readonly handlers = new Map<string, Handler>();

  constructor(private readonly limits: Limits = DEFAULT_LIMITS) {}

  /** Registers the handler of `method` (replacing one of the same name). */
  handle(method: string, handler: Handler): this {
    this.handlers.set(method, handler);
    return this;
  }

  /**
   * Serves requests read from `input`, answering on `output`, until `input`
   * ends between two tuples (returns) or the channel fails (throws
   * `ProtocolError`, `EndedDuringCallError` or `ChannelIoError`).
   */
  serve(input: ByteSource, output: ByteSink): void {
    const reader = new FrameReader(input, this.limits);
    const writer = new FrameWriter(output);
    const peer = new Peer(reader, writer);
    let spare: Uint8Array = new Uint8Array(64 * 1024);
    for (;;) {
      let frame: Frame | null;
      try {
        frame = reader.read();
      } catch (error) {
        if (error instanceof FrameError && error.detail.reason === "io") throw new ChannelIoError(error.detail.cause);
        if (error instanceof FrameError) throw new ProtocolError({ reason: "frame", error });
        throw error;
      }
      if (frame === null) return;
      if (frame.kind !== MessageType.Request) {
        throw new ProtocolError({ reason: "unexpected-type", kind: frame.kind, name: lossyText.decode(frame.name) });
      }
      const method = lossyText.decode(frame.name);
      const methodBytes = frame.name.slice();
      // The handler may read more tuples (callback answers) while it still
      // needs its request's payload: take the payload buffer out of the reader.
      const length = frame.payload.length;
      const taken = reader.swapPayload(spare);
      const outcome = this.run(method, taken.subarray(0, length), peer);
      spare = taken;
      if (peer.broken !== undefined) throw peer.broken;
      try {
        if (outcome.ok) writer.write(MessageType.Response, methodBytes, outcome.result ?? EMPTY);
        else writer.write(MessageType.Error, methodBytes, outcome.text);
      } catch (error) {
        // A result too long for a bin32 is refused before anything is written.
        if (!(error instanceof RangeError)) throw new ChannelIoError(error);
        try {
          writer.write(MessageType.Error, methodBytes, `handler \`${method}\` failed: ${error.message}`);
        } catch (failure) {
          throw new ChannelIoError(failure);
        }
      }
    }
  }

  /** `serve` on this process's stdin and stdout (file descriptors 0 and 1); nothing else may use them meanwhile. */
  serveStdio(): void {
    this.serve(new FdSource(0), new FdSink(1));
  }

  private run(
    method: string,
    payload: Uint8Array,
    peer: Peer,
  ): { ok: true; result: Uint8Array | string | undefined | void } | { ok: false; text: string } {
    const handler = this.handlers.get(method);
    if (handler === undefined) return { ok: false, text: `unknown method \`${method}\`` };
    try {
      const result = handler(payload, peer);
      if (!isPayload(result)) return { ok: false, text: `handler \`${method}\` panicked: it returned ${typeof result}, not bytes or a string` };
      return { ok: true, result };
    } catch (error) {
      if (error instanceof HandlerError || error instanceof CallError) return { ok: false, text: error.message };
      return { ok: false, text: `handler \`${method}\` panicked: ${thrownText(error)}` };
    }
  }
}
