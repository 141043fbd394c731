// The client side: a server child process and the requests sent to it, all
// synchronous (blocking reads and writes on the pipes' file descriptors).

import { type ChildProcess, spawn } from "node:child_process";

import {
  CallbackError,
  ChannelClosedError,
  ChannelIoError,
  ChildExitedError,
  type ExitStatus,
  JsonParamsError,
  JsonResultError,
  ProtocolError,
  ServerError,
  SpawnError,
  SyncChannelError,
  thrownText,
} from "./errors.js";
import {
  DEFAULT_LIMITS,
  errorCode,
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
import { awaitDeath, Killer, signalGroup } from "./process.js";

/**
 * A callback the server may call mid-request: it gets the call's payload (a
 * view valid until it returns) and returns its answer (bytes, a string sent
 * as UTF-8, or nothing for an empty answer). Throwing `CallbackError` answers
 * with a `CallError` of that text; any other exception with
 * ``callback `NAME` panicked: MESSAGE``.
 */
export type Callback = (payload: Uint8Array) => Uint8Array | string | undefined | void;

/** How a `SyncClient` starts its server. */
export interface ClientOptions {
  /** The server's working directory (default: this process's). */
  readonly cwd?: string;
  /** The server's environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** The largest name and payload accepted from the server. */
  readonly limits?: Limits;
}

/** The stream handle fields this module relies on (Node's `pipe_wrap`, not a public API). */
interface PipeHandle {
  readonly fd: number;
  reading?: boolean;
  readStop?: () => number;
  setBlocking?: (blocking: boolean) => number;
}

/** The file descriptor behind a piped stdio stream of `child`, set blocking, with Node's own reading stopped. */
function takeDescriptor(stream: unknown, reading: boolean): number {
  const handle = (stream as { _handle?: PipeHandle } | null)?._handle;
  const fd = handle?.fd;
  if (handle === undefined || typeof fd !== "number" || fd < 0 || typeof handle.setBlocking !== "function") {
    throw new SpawnError("could not obtain the pipes' file descriptors from Node's child process handles");
  }
  if (reading) {
    // Node starts reading a child's stdout into the stream as soon as the
    // loop runs; stop that, so that every byte (and the end of stream, which
    // would make Node close the descriptor) is left for the blocking reads.
    handle.readStop?.();
    handle.reading = false;
  }
  // Node opens its end of the pipes non-blocking; a blocking read waits in
  // the kernel instead of failing with EAGAIN.
  handle.setBlocking(true);
  return fd;
}

const clientsAlive = new Set<SyncClient>();
let exitHookInstalled = false;

/** Ends every live server when this process exits (normally or by `process.exit`). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const client of clientsAlive) client.killer().kill();
    clientsAlive.clear();
  });
}

const lossyText = new TextDecoder("utf-8");
const strictText = new TextDecoder("utf-8", { fatal: true });
const utf8 = new TextEncoder();
const EMPTY = new Uint8Array(0);

function sameBytes(left: Uint8Array, right: Uint8Array): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false;
  return true;
}

/**
 * A server child process and the synchronous channel to it.
 *
 * The child runs in a process group (and session) of its own with piped stdin
 * and stdout and this process's stderr. `close()`, this process's exit, and
 * any failure that leaves the channel unusable (the child gone, a protocol
 * error, an I/O error) end the whole group with SIGKILL. Every call blocks the
 * calling thread; a client belongs to one thread.
 *
 * Node reaps a child from its event loop only: after the child has been ended
 * it stays a zombie until the loop next runs, and `exited` resolves then.
 * `ChildExitedError.status` and `close()` report the status synchronously
 * where `/proc` shows it (Linux).
 */
export class SyncClient {
  private readonly reader: FrameReader;
  private readonly writer: FrameWriter;
  private readonly names = new Map<string, Uint8Array>();
  private readonly callbacks = new Map<string, Callback>();
  private readonly kill: Killer;
  private state: "open" | "exited" | "closed" = "open";
  private status: ExitStatus | undefined;
  private busy = false;
  private readonly exit: Promise<ExitStatus>;

  private constructor(
    private readonly child: ChildProcess,
    readonly pid: number,
    writeFd: number,
    readFd: number,
    limits: Limits,
  ) {
    this.reader = new FrameReader(new FdSource(readFd), limits);
    this.writer = new FrameWriter(new FdSink(writeFd));
    this.kill = Killer.create(pid);
    this.exit = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
    });
  }

  /** Starts `command` with `args` as the server: stdin and stdout piped, stderr inherited, its own process group. */
  static spawn(command: string, args: readonly string[] = [], options: ClientOptions = {}): SyncClient {
    const child = spawn(command, args, {
      stdio: ["pipe", "pipe", "inherit"],
      detached: true,
      cwd: options.cwd,
      env: options.env,
    });
    // Node reports a failed start on the next tick as an `error` event; the
    // failure is thrown here instead, and the event must not go unhandled.
    child.on("error", () => {});
    const pid = child.pid;
    if (pid === undefined) {
      throw new SpawnError(`could not start the server process \`${command}\` (missing, or not executable)`);
    }
    let readFd: number;
    let writeFd: number;
    try {
      readFd = takeDescriptor(child.stdout, true);
      writeFd = takeDescriptor(child.stdin, false);
    } catch (error) {
      signalGroup(pid, "SIGKILL");
      child.stdout?.destroy();
      child.stdin?.destroy();
      throw error;
    }
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    const client = new SyncClient(child, pid, writeFd, readFd, options.limits ?? DEFAULT_LIMITS);
    installExitHook();
    clientsAlive.add(client);
    return client;
  }

  /**
   * How the child ended, once Node's event loop has reaped it. Asking for it
   * makes the child hold the event loop open until then (a client otherwise
   * never keeps this process alive).
   */
  get exited(): Promise<ExitStatus> {
    this.child.ref();
    return this.exit;
  }

  /** A handle that can end the server from another thread (see `Killer.share`). */
  killer(): Killer {
    return this.kill;
  }

  /** Whether requests can still be sent. */
  get isOpen(): boolean {
    return this.state === "open";
  }

  /** How the child ended, once the channel has ended it (undefined while open, or where it could not be seen). */
  get exitStatus(): ExitStatus | undefined {
    return this.status;
  }

  /**
   * Registers the callback `name` (replacing one of the same name). The
   * client answers each call and keeps reading until the server answers the
   * request in flight; a call to a name not registered is answered with a
   * `CallError` (``unknown callback `NAME` ``).
   */
  registerCallback(name: string, callback: Callback): void {
    this.callbacks.set(name, callback);
  }

  /**
   * Sends the request `method` with `payload` and waits for its answer,
   * answering the server's callbacks meanwhile. The result is a view of the
   * client's reused buffer, **valid until the next request**: copy it
   * (`slice()`) to keep it. An empty result is the server's "no value".
   */
  request(method: string, payload: Uint8Array | string = EMPTY): Uint8Array {
    if (this.state !== "open") throw this.closedError();
    if (this.busy) throw new SyncChannelError(`request \`${method}\` sent while another request is in flight`);
    this.busy = true;
    try {
      return this.exchange(method, payload);
    } finally {
      this.busy = false;
    }
  }

  /** `request` with the result decoded as UTF-8 (invalid sequences replaced). */
  requestText(method: string, payload: Uint8Array | string = EMPTY): string {
    return lossyText.decode(this.request(method, payload));
  }

  /** Sends `params` as JSON and decodes the JSON result; `undefined` when the result is empty. */
  requestJson<Result = unknown>(method: string, params: unknown): Result | undefined {
    let encoded: string | undefined;
    try {
      encoded = JSON.stringify(params);
    } catch (error) {
      throw new JsonParamsError(method, error);
    }
    if (encoded === undefined) throw new JsonParamsError(method, new TypeError(`${typeof params} has no JSON form`));
    const result = this.request(method, encoded);
    if (result.length === 0) return undefined;
    try {
      return JSON.parse(strictText.decode(result)) as Result;
    } catch (error) {
      throw new JsonResultError(method, error);
    }
  }

  /**
   * Closes the server's stdin, ends its process group and waits for it to be
   * dead. Returns how it ended (a server that had exited by itself reports
   * its own status, otherwise SIGKILL), when that can be seen (see the class
   * comment). Later calls return the same.
   */
  close(): ExitStatus | undefined {
    if (this.state === "open") this.shutDown();
    this.state = "closed";
    return this.status;
  }

  private nameBytes(method: string): Uint8Array {
    let bytes = this.names.get(method);
    if (bytes === undefined) {
      bytes = utf8.encode(method);
      if (this.names.size < 1024) this.names.set(method, bytes);
    }
    return bytes;
  }

  private exchange(method: string, payload: Uint8Array | string): Uint8Array {
    const name = this.nameBytes(method);
    this.send(MessageType.Request, name, payload);
    for (;;) {
      const frame = this.receive();
      switch (frame.kind) {
        case MessageType.Response:
        case MessageType.Error:
          if (!sameBytes(frame.name, name)) {
            const found = lossyText.decode(frame.name);
            throw this.failProtocol(new ProtocolError({ reason: "name-mismatch", kind: frame.kind, expected: method, found }));
          }
          if (frame.kind === MessageType.Response) return frame.payload;
          throw new ServerError(lossyText.decode(frame.payload));
        case MessageType.Call:
          this.answerCall(frame);
          break;
        default:
          throw this.failProtocol(
            new ProtocolError({ reason: "unexpected-type", kind: frame.kind, name: lossyText.decode(frame.name) }),
          );
      }
    }
  }

  private answerCall(frame: Frame): void {
    const name = lossyText.decode(frame.name);
    const callback = this.callbacks.get(name);
    let answer: Uint8Array | string | undefined | void;
    let failure: string | undefined;
    if (callback === undefined) {
      failure = `unknown callback \`${name}\``;
    } else {
      try {
        answer = callback(frame.payload);
        if (!isPayload(answer)) failure = `callback \`${name}\` panicked: it returned ${typeof answer}, not bytes or a string`;
      } catch (error) {
        failure = error instanceof CallbackError ? error.message : `callback \`${name}\` panicked: ${thrownText(error)}`;
      }
    }
    if (failure === undefined) {
      try {
        this.send(MessageType.CallResponse, frame.name, (answer as Uint8Array | string | undefined) ?? EMPTY);
        return;
      } catch (error) {
        // Too long for a bin32: refused before anything was written, so the
        // server still waits for an answer.
        if (!(error instanceof RangeError)) throw error;
        failure = `callback \`${name}\` panicked: ${error.message}`;
      }
    }
    this.send(MessageType.CallError, frame.name, failure);
  }

  private send(kind: MessageType, name: Uint8Array, payload: Uint8Array | string): void {
    try {
      this.writer.write(kind, name, payload);
    } catch (error) {
      // A payload too long for a bin32 is refused before anything is written.
      if (error instanceof RangeError) throw error;
      throw this.failIo(error);
    }
  }

  private receive(): Frame {
    let frame: Frame | null;
    try {
      frame = this.reader.read();
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      const detail = error.detail;
      if (detail.reason === "io") throw this.failIo(detail.cause);
      // The child went away in the middle of a tuple (killed while answering).
      if (detail.reason === "unexpected-eof") throw this.childGone();
      throw this.failProtocol(new ProtocolError({ reason: "frame", error }));
    }
    if (frame === null) throw this.childGone();
    return frame;
  }

  private closedError(): SyncChannelError {
    return this.state === "exited" ? new ChildExitedError(this.status) : new ChannelClosedError();
  }

  /** The server closed its end: end the group, wait for it, report how it ended. */
  private childGone(): ChildExitedError {
    this.shutDown();
    this.state = "exited";
    return new ChildExitedError(this.status);
  }

  private failIo(error: unknown): SyncChannelError {
    const code = errorCode(error);
    if (code === "EPIPE" || code === "ECONNRESET") return this.childGone();
    this.shutDown();
    this.state = "exited";
    return new ChannelIoError(error);
  }

  private failProtocol(error: ProtocolError): ProtocolError {
    // Past a tuple that does not fit, the stream cannot be resynchronised.
    this.shutDown();
    this.state = "exited";
    return error;
  }

  /** Closes stdin, ends the group, waits for the child to be dead (once). */
  private shutDown(): void {
    if (this.state !== "open") return;
    this.state = "closed";
    clientsAlive.delete(this);
    this.child.stdin?.destroy();
    this.kill.kill();
    this.status = awaitDeath(this.child, this.pid);
    this.kill.markReaped();
    this.child.stdout?.destroy();
  }
}
