/**
 * The scenario client of `interop/SCENARIO.md`, on agentproto's TypeScript SDK (`ts/`),
 * through the package's public entry points only.
 *
 *     node client.js -- <agent command> [args…]        (compiled: see `interop/README.md`)
 *
 * Spawns the agent (its stderr goes to this program's stderr), runs the steps in order
 * over one connection and one session, and prints one JSON line per step on stdout.
 * Exits 0 once every step is printed, 2 when the command line is wrong or the agent
 * cannot be started.
 */

import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";

import { FsRoots, PeerError, type AcpEvent, type AgentProcess } from "agentproto/acp";
import * as v1 from "agentproto/acp/v1";
import { ErrorCode, type ConnectionEvent } from "agentproto/jsonrpc";

const NAME = "agentproto-ts-scenario-client";
const STEP_MS = 10_000;
const STEPS = [
  "initialize",
  "session_new",
  "prompt_echo",
  "permission",
  "fs",
  "cancel",
  "cancel_permission",
  "cancel_request",
  "error",
  "unknown_update",
] as const;

/** A step's outcome is a failure; the message is its detail. */
class StepFailed extends Error {}

/** Something the application was handed, in arrival order. */
interface Seen {
  kind: "chunk" | "tool_call" | "tool_call_status" | "unknown" | "permission_asked" | "permission_released";
  value: string;
}

const shown = (seen: readonly Seen[]): string => `[${seen.map((s) => (s.value === "" ? s.kind : `${s.kind}(${s.value})`)).join(", ")}]`;
const chunks = (seen: readonly Seen[]): string[] => seen.filter((s) => s.kind === "chunk").map((s) => s.value);
/** Where `kind(value)` first is in `seen`; -1 when it is not. */
const position = (seen: readonly Seen[], kind: Seen["kind"], value = ""): number => seen.findIndex((s) => s.kind === kind && s.value === value);

/** What the application saw, with a way to wait for one thing to arrive. */
class Journal {
  readonly seen: Seen[] = [];
  private waiters: (() => void)[] = [];

  add(kind: Seen["kind"], value = ""): void {
    this.seen.push({ kind, value });
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  since(start: number): Seen[] {
    return this.seen.slice(start);
  }

  /** Resolves once something at or after `start` that `want` accepts has been seen
   * (unbounded here: the step's time limit bounds it). */
  async waitFor(start: number, want: (s: Seen) => boolean): Promise<void> {
    while (!this.seen.slice(start).some(want)) await new Promise<void>((wake) => this.waiters.push(wake));
  }
}

class ScenarioClient implements v1.Client {
  /** The option permission requests are answered with; `null` leaves them pending. */
  answer: string | null = "allow";

  constructor(
    readonly journal: Journal,
    private readonly files: FsRoots,
  ) {}

  async requestPermission(cx: v1.ClientContext): Promise<v1.RequestPermissionResponse> {
    this.journal.add("permission_asked");
    if (this.answer !== null) return { outcome: { outcome: "selected", optionId: this.answer } };
    // Left pending: sending `session/cancel` makes the connection answer it `cancelled`
    // for this handler, and abort the handler's signal.
    await aborted(cx.signal);
    this.journal.add("permission_released");
    // Not sent: the connection has answered already.
    return { outcome: { outcome: "cancelled" } };
  }

  sessionUpdate(_cx: v1.ClientContext, params: v1.SessionNotification): void {
    const update = params.update;
    if (update instanceof v1.UnknownVariant) {
      this.journal.add("unknown", update.raw.text);
    } else if (update.sessionUpdate === "agent_message_chunk") {
      const content = update.content;
      this.journal.add("chunk", content.type === "text" ? content.text : inspect(content));
    } else if (update.sessionUpdate === "tool_call") {
      this.journal.add("tool_call", update.toolCallId);
    } else if (update.sessionUpdate === "tool_call_update") {
      if (typeof update.status === "string") this.journal.add("tool_call_status", update.status);
    }
  }

  readTextFile(_cx: v1.ClientContext, params: v1.ReadTextFileRequest): Promise<v1.ReadTextFileResponse> {
    return this.files.readTextFile(params);
  }

  writeTextFile(_cx: v1.ClientContext, params: v1.WriteTextFileRequest): Promise<v1.WriteTextFileResponse> {
    return this.files.writeTextFile(params);
  }
}

/** Resolves when `signal` aborts (at once if it has). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** The steps after `initialize` and `session/new`, over one session. Each step's calls
 * go through a handle bound to the step's signal: when the step ends (a timeout
 * included) whatever it left pending is cancelled with `$/cancel_request`. */
class Run {
  readonly journal: Journal;

  constructor(
    private readonly agent: v1.AgentConnection,
    private readonly app: ScenarioClient,
    private readonly sessionId: string,
    private readonly directory: string,
    private readonly step: AbortSignal,
  ) {
    this.journal = app.journal;
  }

  private get calls(): v1.AgentConnection {
    return this.agent.withCancellation(this.step);
  }

  /** Runs a prompt turn to its end; its stop reason. */
  private async prompt(text: string): Promise<string> {
    const response = await this.calls.prompt({ sessionId: this.sessionId, prompt: [{ type: "text", text }] });
    return String(response.stopReason);
  }

  async promptEcho(): Promise<string> {
    const start = this.journal.seen.length;
    const stop = await this.prompt("echo hello brave world");
    const words = chunks(this.journal.since(start));
    const detail = `chunks ${JSON.stringify(words)}, ${stop}`;
    if (JSON.stringify(words) !== '["hello","brave","world"]' || stop !== "end_turn") throw new StepFailed(detail);
    return detail;
  }

  async permission(): Promise<string> {
    this.app.answer = "allow";
    const start = this.journal.seen.length;
    const stop = await this.prompt("permission");
    const seen = this.journal.since(start);
    const call = position(seen, "tool_call", "call-1");
    const said = position(seen, "chunk", "permission:allow");
    const done = position(seen, "tool_call_status", "completed");
    const detail = `${shown(seen)}, ${stop}`;
    if (!(call >= 0 && call < said && said < done && stop === "end_turn")) throw new StepFailed(detail);
    return detail;
  }

  async fs(): Promise<string> {
    const source = join(this.directory, "in.txt");
    writeFileSync(source, "abc\n", "utf8");
    const start = this.journal.seen.length;
    const stop = await this.prompt(`fs ${source}`);
    const target = `${source}.out`;
    const out = existsSync(target) ? readFileSync(target, "utf8") : null;
    const read = position(this.journal.since(start), "chunk", "read:4") >= 0;
    const detail = `in.txt.out = ${JSON.stringify(out)}, chunk read:4 seen: ${read}, ${stop}`;
    if (out !== "ABC\n" || !read || stop !== "end_turn") throw new StepFailed(detail);
    return detail;
  }

  async cancel(): Promise<string> {
    const start = this.journal.seen.length;
    const turn = this.prompt("wait");
    turn.catch(() => {}); // awaited below, or abandoned with the step
    await this.journal.waitFor(start, (s) => s.kind === "chunk" && s.value === "waiting");
    await this.agent.cancel({ sessionId: this.sessionId });
    const stop = await turn;
    if (stop !== "cancelled") throw new StepFailed(`stopReason ${stop}`);
    return "stopReason cancelled";
  }

  async cancelPermission(): Promise<string> {
    this.app.answer = null;
    const start = this.journal.seen.length;
    const turn = this.prompt("permission");
    turn.catch(() => {}); // awaited below, or abandoned with the step
    await this.journal.waitFor(start, (s) => s.kind === "permission_asked");
    await this.agent.cancel({ sessionId: this.sessionId });
    const stop = await turn;
    const seen = this.journal.since(start);
    const released = position(seen, "permission_released") >= 0;
    const said = position(seen, "chunk", "permission:cancelled") >= 0;
    const by = released ? "by the SDK (it answered and released the held handler)" : "not by the SDK (the handler was not released)";
    const detail = `permission answered cancelled ${by}; chunk permission:cancelled seen: ${said}; stopReason ${stop}`;
    if (!(released && said && stop === "cancelled")) throw new StepFailed(detail);
    return detail;
  }

  async cancelRequest(): Promise<string> {
    const how = "$/cancel_request sent by the SDK (withCancellation)";
    const cancel = new AbortController();
    const slow = this.agent.withCancellation(cancel.signal).extMethod("_agentproto/slow", "{}");
    slow.catch(() => {}); // awaited below
    // One turn of the event loop lets the call queue its request; the flush puts it on the
    // wire. (The SDK would send the cancel after the request anyway.)
    await new Promise<void>((resolve) => setImmediate(resolve));
    await this.agent.flush();
    cancel.abort(); // the SDK sends `$/cancel_request` and keeps waiting for the answer
    let result: v1.RawJson;
    try {
      result = await slow;
    } catch (err) {
      if (!(err instanceof PeerError)) throw err;
      const detail = `${how}; answered ${err.error.code} ${JSON.stringify(err.error.message)}`;
      if (err.error.code !== ErrorCode.REQUEST_CANCELLED) throw new StepFailed(detail);
      return detail;
    }
    throw new StepFailed(`${how}; answered ${result.text}`);
  }

  async error(): Promise<string> {
    let stop: string;
    try {
      stop = await this.prompt("error");
    } catch (err) {
      if (!(err instanceof PeerError)) throw err;
      const data = err.error.data;
      let reason: unknown = undefined;
      if (data !== undefined) {
        const members = data.parse();
        if (typeof members === "object" && members !== null) reason = (members as Record<string, unknown>)["reason"];
      }
      const detail = `error ${err.error.code} ${JSON.stringify(err.error.message)}, data.reason ${JSON.stringify(reason)}`;
      if (err.error.code !== 4242 || reason !== "scenario") throw new StepFailed(detail);
      return detail;
    }
    throw new StepFailed(`answered ${stop}`);
  }

  async unknownUpdate(): Promise<string> {
    const start = this.journal.seen.length;
    const stop = await this.prompt("unknown-update");
    const seen = this.journal.since(start);
    const unknown = seen.findIndex((s) => s.kind === "unknown" && s.value.includes('"agentproto_future_update"'));
    const after = position(seen, "chunk", "after-unknown");
    const detail = `${shown(seen)}, ${stop}`;
    if (!(unknown >= 0 && unknown < after && stop === "end_turn")) throw new StepFailed(detail);
    return detail;
  }
}

function report(step: string, ok: boolean, detail: string): void {
  process.stdout.write(`${JSON.stringify({ step, ok, detail })}\n`);
}

/** Runs one step within its time limit and prints its line; whether it passed. The step
 * gets a signal that aborts when the step ends, however it ends. */
async function boundedStep(step: string, body: (signal: AbortSignal) => Promise<string>): Promise<boolean> {
  const ending = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StepFailed(`timed out after ${STEP_MS / 1000} s`)), STEP_MS);
  });
  try {
    const detail = await Promise.race([body(ending.signal), timeout]);
    report(step, true, detail);
    return true;
  } catch (err) {
    // A failed step never stops the run.
    const detail = err instanceof StepFailed ? err.message : err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    report(step, false, detail);
    return false;
  } finally {
    clearTimeout(timer);
    ending.abort();
  }
}

async function scenario(agent: v1.AgentConnection, app: ScenarioClient, directory: string): Promise<void> {
  const initialized = await boundedStep("initialize", async (signal) => {
    const response = await agent.withCancellation(signal).initialize({
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      clientInfo: { name: NAME, version: "0.0.0" },
    });
    const detail = `protocolVersion ${response.protocolVersion}, agent ${response.agentInfo?.name ?? null}`;
    if (response.protocolVersion !== 1) throw new StepFailed(detail);
    return detail;
  });
  if (!initialized) {
    for (const step of STEPS.slice(1)) report(step, false, "skipped");
    return;
  }
  let sessionId = "";
  const opened = await boundedStep("session_new", async (signal) => {
    const response = await agent.withCancellation(signal).newSession({ cwd: directory, mcpServers: [] });
    sessionId = response.sessionId;
    if (sessionId === "") throw new StepFailed("empty sessionId");
    return `sessionId ${sessionId}`;
  });
  if (!opened) {
    for (const step of STEPS.slice(2)) report(step, false, "skipped");
    return;
  }
  const steps: [string, (run: Run) => Promise<string>][] = [
    ["prompt_echo", (run) => run.promptEcho()],
    ["permission", (run) => run.permission()],
    ["fs", (run) => run.fs()],
    ["cancel", (run) => run.cancel()],
    ["cancel_permission", (run) => run.cancelPermission()],
    ["cancel_request", (run) => run.cancelRequest()],
    ["error", (run) => run.error()],
    ["unknown_update", (run) => run.unknownUpdate()],
  ];
  for (const [step, body] of steps) {
    await boundedStep(step, (signal) => body(new Run(agent, app, sessionId, directory, signal)));
  }
}

function log(event: ConnectionEvent | AcpEvent): void {
  process.stderr.write(`[${NAME}] ${inspect(event, { depth: 4, breakLength: Infinity })}\n`);
}

async function main(command: string[]): Promise<number> {
  const directory = realpathSync(mkdtempSync(join(tmpdir(), "agentproto-ts-scenario-")));
  try {
    const app = new ScenarioClient(new Journal(), await FsRoots.of([directory]));
    let agent: v1.AgentConnection;
    let child: AgentProcess;
    try {
      ({ agent, process: child } = await v1.spawnAgent(command, app, { observer: log }));
    } catch (err) {
      process.stderr.write(`[${NAME}] cannot start ${command[0]}: ${err instanceof Error ? err.message : String(err)}\n`);
      return 2;
    }
    try {
      await scenario(agent, app, directory);
    } finally {
      // Closes the agent's stdin, waits (bounded: `exitGrace`, 2 s) for it to exit, then
      // ends whatever is left of its process group.
      const code = await child.close();
      process.stderr.write(`[${NAME}] agent exited with ${code}\n`);
    }
    return 0;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const dash = args.indexOf("--");
if (dash < 0 || dash === args.length - 1) {
  process.stderr.write("usage: client.js -- <agent command> [args…]\n");
  process.exitCode = 2;
} else {
  process.exitCode = await main(args.slice(dash + 1));
}
