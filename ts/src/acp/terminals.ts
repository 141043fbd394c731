/**
 * `Terminals`: a ready-made client implementation of the five `terminal/*` requests
 * (ACP v1), running each command as a real child process. The twin of the Rust SDK's
 * `terminal/terminals.rs` and the Python SDK's `terminal/terminals.py`: the same
 * requests get the same answers.
 *
 * Each command runs with no shell and no pseudo terminal: `args` are passed as they are,
 * the `env` entries are added to this process's environment, stdin is the null device,
 * and stdout and stderr are read into one output buffer in the order they arrive. Each
 * command runs in a process group of its own, which ends with it: what the command
 * leaves running in the background is killed when it exits, and `terminal/kill`,
 * `terminal/release`, `close()` and this process's exit kill the whole group, so
 * nothing a command starts outlives it.
 *
 * Output is kept up to the request's `outputByteLimit` (default 1 MiB, never more than
 * `maxOutputLimit`, default 16 MiB). Past the limit the oldest bytes are dropped, the
 * cut moved forward to the next character boundary, and `truncated` reported. Output is
 * decoded as UTF-8 when it is read (`terminal-output.ts`). The exit status is the exit
 * code, or the signal's name (`"SIGKILL"`, `"SIGTERM"`, ...; an uncommon signal as its
 * number) with `exitCode: null`.
 *
 * A terminal belongs to the session that created it. Each method throws `RequestError`
 * with the wire error, so a client handler forwards in one line
 * (`createTerminal(_cx, params) { return terminals.create(params); }`, or spread
 * `terminals.handlers()` into the client):
 *
 * - -32002 with `{"terminalId": …}`: an unknown or released terminal id, or another
 *   session's terminal;
 * - -32602 with `{"path", "expected", "found"}`: an empty command, a NUL byte in
 *   `command`, `args` or `env`, a bad variable name;
 * - -32602 at `$.params.cwd`: a `cwd` that is not absolute, lies outside the roots, does
 *   not exist or is not a directory (with roots);
 * - -32603 naming the command: the command cannot be started, or the terminals are closed.
 *
 * With `roots` the working directory is confined to them; that is no sandbox: the command
 * itself can reach whatever this process can.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { stat } from "node:fs/promises";
import { constants as osConstants } from "node:os";

import { encodeString, RawJson } from "../codec/values.js";
import { ErrorCode, invalidParamsError, type ErrorObject } from "../jsonrpc/error.js";
import { RequestError } from "../jsonrpc/local-error.js";
import type {
  CreateTerminalRequest,
  CreateTerminalResponse,
  KillTerminalRequest,
  KillTerminalResponse,
  ReleaseTerminalRequest,
  ReleaseTerminalResponse,
  TerminalExitStatus,
  TerminalOutputRequest,
  TerminalOutputResponse,
  WaitForTerminalExitRequest,
  WaitForTerminalExitResponse,
} from "../generated/acp/v1.js";
import { FsError, type FsRoots } from "./fs.js";
import { OutputBuffer } from "./terminal-output.js";

/** How much output a terminal keeps when the request sets no `outputByteLimit`: 1 MiB. */
export const DEFAULT_OUTPUT_LIMIT = 1024 * 1024;
/** The largest `outputByteLimit` honoured unless configured otherwise: 16 MiB. A larger request is lowered to it. */
export const DEFAULT_MAX_OUTPUT_LIMIT = 16 * 1024 * 1024;
/** After the command exits, how many milliseconds its output pipes may stay open (held
 * by something it started) before reading stops and the exit is recorded. */
export const DRAIN_GRACE = 1000;
/** The JSON path of `cwd` in `terminal/create`, used in -32602 answers. */
export const CWD_PATH = "$.params.cwd";

// Signals whose numbers are the same on Linux, macOS and the BSDs are reported by name,
// as the Rust and Python SDKs do; any other by its decimal number.
const SIGNAL_NAMES = new Set(["SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGFPE", "SIGKILL", "SIGSEGV", "SIGPIPE", "SIGALRM", "SIGTERM"]);

function signalName(signal: NodeJS.Signals): string {
  if (SIGNAL_NAMES.has(signal)) return signal;
  const number = (osConstants.signals as Record<string, number | undefined>)[signal];
  return number === undefined ? signal : String(number);
}

/** The process groups of every command not known to have ended, in every `Terminals`:
 * killed when this process exits. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pgid of liveGroups) killGroup(pgid);
  });
}

/** How a command ended: an exit code, or the name of the signal that ended it. */
interface Exit {
  readonly exitCode: number | null;
  readonly signal: string | null;
}

/** One running command: copies both pipes into the output buffer as they are read, and
 * records the exit once the process has exited and its pipes are closed (or
 * `DRAIN_GRACE` after the exit, if something else still holds them). */
class Command {
  /** Set once, when the command has finished; `null` while it runs (or when it was lost). */
  exit: Exit | null = null;
  /** Resolves once the command has finished (or was abandoned by `close()`). */
  readonly finished: Promise<void>;
  private markFinished!: () => void;
  private done = false;
  private exited: Exit | null = null;
  private groupEnded = false;
  private grace: NodeJS.Timeout | null = null;

  constructor(
    private readonly child: ChildProcess,
    readonly output: OutputBuffer,
  ) {
    this.finished = new Promise<void>((resolve) => (this.markFinished = resolve));
    liveGroups.add(this.pid);
    child.stdout?.on("data", (chunk: Buffer) => output.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk));
    child.once("exit", (code, signal) => this.onExit(code, signal));
    child.once("close", () => this.finish());
  }

  get pid(): number {
    return this.child.pid as number;
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exited = signal === null ? { exitCode: code, signal: null } : { exitCode: null, signal: signalName(signal) };
    // What the command left running goes with it, and at once: right after the leader
    // was reaped its id cannot have been given to another group yet.
    this.killGroup();
    this.groupEnded = true;
    liveGroups.delete(this.pid);
    if (!this.done) {
      this.grace = setTimeout(() => this.finish(), DRAIN_GRACE);
    }
  }

  /** SIGKILLs the command's whole process group; nothing once the command has exited
   * (the group was ended then, and its id may since belong to another). */
  killGroup(): void {
    if (!this.groupEnded) killGroup(this.pid);
  }

  /** Records the exit (the process has exited) and stops reading. */
  private finish(): void {
    if (this.done || this.exited === null) return;
    this.exit = this.exited;
    this.stop();
  }

  /** Stops watching: an exited process gets its exit recorded now, whatever still holds
   * its pipes; one that did not exit when killed has its pipes closed and its waiters
   * released without an exit status. Nothing once finished. */
  abandon(): void {
    if (this.exited !== null) this.finish();
    else this.stop();
  }

  private stop(): void {
    if (this.done) return;
    this.done = true;
    if (this.grace !== null) clearTimeout(this.grace);
    this.grace = null;
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    this.markFinished();
  }
}

/** Options of `Terminals`. */
export interface TerminalsOptions {
  /** When given, `cwd` must resolve (symbolic links followed) to a directory inside
   * them, checked as file reads are (`FsRoots`), and a request without `cwd` runs in the
   * first root. Without roots any absolute `cwd` is accepted, and a request without one
   * runs in this process's working directory. */
  roots?: FsRoots;
  /** The bytes of output kept when a request sets no `outputByteLimit`. Default 1 MiB. */
  defaultOutputLimit?: number;
  /** The most bytes any terminal keeps, whatever its request asks for. Default 16 MiB. */
  maxOutputLimit?: number;
}

/** The five `terminal/*` handlers of a `Client`, forwarding to a `Terminals`. */
export interface TerminalHandlers {
  createTerminal(cx: unknown, params: CreateTerminalRequest): Promise<CreateTerminalResponse>;
  terminalOutput(cx: unknown, params: TerminalOutputRequest): Promise<TerminalOutputResponse>;
  waitForTerminalExit(cx: unknown, params: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse>;
  killTerminal(cx: unknown, params: KillTerminalRequest): Promise<KillTerminalResponse>;
  releaseTerminal(cx: unknown, params: ReleaseTerminalRequest): Promise<ReleaseTerminalResponse>;
}

/**
 * The client's terminals: answers `terminal/create`, `terminal/output`,
 * `terminal/wait_for_exit`, `terminal/kill` and `terminal/release` by running real
 * processes (module docs: behaviour and errors). Memory is bounded per terminal by its
 * output limit, and a buffer is freed when its terminal is released. `close()` (or
 * `await using`) kills every command still running, each with its whole process group.
 */
export class Terminals {
  private readonly roots: FsRoots | null;
  private readonly defaultLimit: number;
  private readonly maxLimit: number;
  private nextId = 0;
  private closed = false;
  private readonly live = new Map<string, { readonly sessionId: string; readonly command: Command }>();
  /** Not finished yet, released or not. */
  private readonly running = new Set<Command>();

  constructor(options: TerminalsOptions = {}) {
    this.roots = options.roots ?? null;
    this.defaultLimit = options.defaultOutputLimit ?? DEFAULT_OUTPUT_LIMIT;
    this.maxLimit = options.maxOutputLimit ?? DEFAULT_MAX_OUTPUT_LIMIT;
  }

  /** The five handlers for a `v1.Client`: `{ ...terminals.handlers(), sessionUpdate() {…} }`. */
  handlers(): TerminalHandlers {
    return {
      createTerminal: (_cx, params) => this.create(params),
      terminalOutput: (_cx, params) => this.output(params),
      waitForTerminalExit: (_cx, params) => this.waitForExit(params),
      killTerminal: (_cx, params) => this.kill(params),
      releaseTerminal: (_cx, params) => this.release(params),
    };
  }

  /** Answers `terminal/create`: starts the command and answers with its terminal id at
   * once (it does not wait for the command to finish). */
  async create(request: CreateTerminalRequest): Promise<CreateTerminalResponse> {
    if (this.closed) throw RequestError.internal("the terminals are closed");
    checkCommand(request);
    const cwd = await this.resolveCwd(request.cwd ?? null);
    const requested = request.outputByteLimit;
    const limit = Math.min(requested === undefined || requested === null ? this.defaultLimit : Number(requested), this.maxLimit);
    let env: NodeJS.ProcessEnv | undefined;
    if (request.env !== undefined && request.env.length > 0) {
      env = { ...process.env };
      for (const variable of request.env) env[variable.name] = variable.value;
    }
    installExitHook();
    const child = spawn(request.command, request.args ?? [], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      });
    } catch (err) {
      const reason = (err as { code?: string } | null)?.code ?? String(err);
      throw RequestError.internal(`cannot start \`${request.command}\`: ${reason}`);
    }
    const command = new Command(child, new OutputBuffer(limit));
    this.running.add(command);
    void command.finished.then(() => this.running.delete(command));
    if (this.closed) {
      // closed while the process was starting
      command.killGroup();
      throw RequestError.internal("the terminals are closed");
    }
    const terminalId = `term-${++this.nextId}`;
    this.live.set(terminalId, { sessionId: request.sessionId, command });
    return { terminalId };
  }

  /** Answers `terminal/output`: the output kept so far, whether some was dropped, and
   * the exit status once the command has finished (the output is then complete). */
  async output(request: TerminalOutputRequest): Promise<TerminalOutputResponse> {
    const command = this.find(request.sessionId, request.terminalId);
    // The exit is read first: once it is set, the output is final.
    const exit = command.exit;
    const { text, truncated } = command.output.snapshot(exit !== null);
    if (exit === null) return { output: text, truncated };
    const exitStatus: TerminalExitStatus = { exitCode: exit.exitCode, signal: exit.signal };
    return { output: text, truncated, exitStatus };
  }

  /** Answers `terminal/wait_for_exit` once the command has finished: its exit code, or
   * the signal that ended it. A terminal released meanwhile is answered with the kill's status. */
  async waitForExit(request: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse> {
    const command = this.find(request.sessionId, request.terminalId);
    const exit = await finished(command, request.terminalId);
    return { exitCode: exit.exitCode, signal: exit.signal };
  }

  /** Answers `terminal/kill`: kills the command's process group and answers once the
   * exit has been recorded. The terminal stays valid (its output can be read; it must
   * still be released). */
  async kill(request: KillTerminalRequest): Promise<KillTerminalResponse> {
    const command = this.find(request.sessionId, request.terminalId);
    command.killGroup();
    await finished(command, request.terminalId);
    return {};
  }

  /** Answers `terminal/release`: kills the command's process group (if anything in it
   * still runs) and forgets the terminal; later requests for its id are answered -32002. */
  async release(request: ReleaseTerminalRequest): Promise<ReleaseTerminalResponse> {
    const command = this.find(request.sessionId, request.terminalId);
    this.live.delete(request.terminalId);
    command.killGroup();
    return {};
  }

  /** Kills every command still running, each with its whole process group, and waits
   * (at most twice `DRAIN_GRACE`) until their exits are recorded. Every terminal is
   * forgotten; later `terminal/create` requests are refused (-32603). Closing twice is harmless. */
  async close(): Promise<void> {
    this.closed = true;
    this.live.clear();
    const running = [...this.running];
    for (const command of running) command.killGroup(); // released ones too, still on their way out
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(running.map((c) => c.finished)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, 2 * DRAIN_GRACE))),
      ]);
      clearTimeout(timer);
      for (const command of running) command.abandon(); // nothing for those that finished
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The command of terminal `terminalId` of `sessionId`, or the -32002 answer. */
  private find(sessionId: string, terminalId: string): Command {
    const live = this.live.get(terminalId);
    if (live === undefined || live.sessionId !== sessionId) throw RequestError.from(unknownTerminal(terminalId));
    return live.command;
  }

  /** The directory to run in, checked against the roots when there are any. */
  private async resolveCwd(cwd: string | null): Promise<string | undefined> {
    const roots = this.roots;
    if (roots === null) {
      if (cwd === null) return undefined;
      if (cwd.includes("\0")) throw RequestError.from(invalidParamsError(CWD_PATH, "a path without NUL bytes", cwd));
      if (!cwd.startsWith("/")) throw RequestError.from(invalidParamsError(CWD_PATH, "an absolute path", cwd));
      return cwd;
    }
    if (cwd === null) return roots.roots[0];
    let resolved: string;
    try {
      resolved = await roots.resolveRead(cwd);
    } catch (err) {
      if (err instanceof FsError) throw RequestError.from(cwdError(err, cwd, roots));
      throw err;
    }
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(resolved)).isDirectory();
    } catch (err) {
      const reason = (err as { code?: string } | null)?.code ?? String(err);
      throw RequestError.internal(`cannot use \`${cwd}\` as the working directory: ${reason}`);
    }
    if (!isDirectory) throw RequestError.from(invalidParamsError(CWD_PATH, "a directory", cwd));
    return resolved;
  }
}

/** Waits (without polling) until the command's exit is recorded. */
async function finished(command: Command, terminalId: string): Promise<Exit> {
  await command.finished;
  if (command.exit === null) throw RequestError.internal(`the process of terminal \`${terminalId}\` was lost before it exited`);
  return command.exit;
}

/** Refuses what no process can be started with: an empty command, NUL bytes, bad
 * environment variable names. */
function checkCommand(request: CreateTerminalRequest): void {
  const refuse = (path: string, expected: string, found: string): never => {
    throw RequestError.from(invalidParamsError(path, expected, found));
  };
  if (request.command === "") refuse("$.params.command", "a non-empty command", "");
  if (request.command.includes("\0")) refuse("$.params.command", "a command without NUL bytes", request.command);
  (request.args ?? []).forEach((arg, i) => {
    if (arg.includes("\0")) refuse(`$.params.args[${i}]`, "an argument without NUL bytes", arg);
  });
  (request.env ?? []).forEach((variable, i) => {
    const name = variable.name;
    if (name === "" || name.includes("=") || name.includes("\0")) {
      refuse(`$.params.env[${i}].name`, "a non-empty variable name without `=` or NUL bytes", name);
    }
    if (variable.value.includes("\0")) refuse(`$.params.env[${i}].value`, "a value without NUL bytes", variable.value);
  });
}

/** The answer for a `cwd` the roots refuse (-32602 at `$.params.cwd`), or -32603. */
function cwdError(error: FsError, cwd: string, roots: FsRoots): ErrorObject {
  let expected: string;
  switch (error.kind) {
    case "not-absolute":
      expected = "an absolute path";
      break;
    case "parent-component":
      expected = "a path without .. components";
      break;
    case "nul-byte":
      expected = "a path without NUL bytes";
      break;
    case "outside-roots":
      expected = `a directory inside the allowed roots (${roots.roots.join(", ")})`;
      break;
    case "not-found":
      expected = "an existing directory";
      break;
    default:
      return { code: ErrorCode.INTERNAL_ERROR, message: `cannot use \`${cwd}\` as the working directory: ${error.message}` };
  }
  return invalidParamsError(CWD_PATH, expected, cwd);
}

/** -32002 with `data: {"terminalId": …}`. */
function unknownTerminal(terminalId: string): ErrorObject {
  return {
    code: ErrorCode.RESOURCE_NOT_FOUND,
    message: `terminal not found: \`${terminalId}\``,
    data: new RawJson(`{"terminalId":${encodeString(terminalId)}}`),
  };
}
