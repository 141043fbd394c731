/** The two small deterministic applications the flow vectors run against
 * (`vectors/README.md`, "The test applications"), as the Rust and Python runners have them. */

import { AcpError, Cancelled, PeerError } from "../src/acp/errors.js";
import type { ExtMessage } from "../src/acp/receive.js";
import * as v1 from "../src/acp/v1.js";
import { RawJson } from "../src/codec/values.js";
import { RequestError } from "../src/jsonrpc/local-error.js";

/** How long any single wait of a flow may take (ms). */
export const STEP_TIMEOUT = 5000;

/** The method of the barrier behind `expect_silence` (a notification and a request). */
export const BARRIER = "_flow/barrier";

const DELIBERATE = "deliberate failure of the test application";

const rawJson = (value: unknown): RawJson => RawJson.from(value);

/** Lets the `_flow/barrier` request wait until the notification with the same `n` was handled. */
class Barrier {
  private seen = 0;
  private waiters: (() => void)[] = [];

  static number(payload: RawJson | null): number {
    try {
      const value = payload === null ? null : (payload.parse() as { n?: unknown } | null);
      return typeof value?.n === "number" ? value.n : 0;
    } catch {
      return 0;
    }
  }

  mark(payload: RawJson | null): void {
    this.seen = Math.max(this.seen, Barrier.number(payload));
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  async wait(payload: RawJson | null): Promise<RawJson> {
    const n = Barrier.number(payload);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STEP_TIMEOUT)));
    try {
      while (this.seen < n) {
        const changed = new Promise<boolean>((resolve) => this.waiters.push(() => resolve(false)));
        if (await Promise.race([changed, expired])) throw RequestError.internal(`barrier notification ${n} was not handled`);
      }
    } finally {
      clearTimeout(timer);
    }
    return rawJson({ n });
  }
}

async function extRequest(barrier: Barrier, request: ExtMessage): Promise<RawJson> {
  if (request.method === BARRIER) return barrier.wait(request.payload);
  if (request.method === "_test/echo") {
    return rawJson({ method: request.method, params: request.payload === null ? null : request.payload.parse() });
  }
  throw RequestError.methodNotFound(request.method);
}

/** A promise that never settles (a handler that hangs until it is dropped). */
const forever = (): Promise<never> => new Promise<never>(() => {});

/** Waits until `signal` aborts. */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));

/** The agent application of the flows. */
export class FlowAgent implements v1.Agent {
  private readonly capabilities: v1.AgentCapabilities;
  /** `setup.modes`: the `modes` the answer of each opening request carries. */
  private readonly modes = new Map<string, v1.SessionModeState>();
  private sessions = 0;
  private readonly barrier = new Barrier();

  constructor(setup: Record<string, unknown>) {
    const caps = JSON.stringify(setup["agentCapabilities"] ?? {});
    this.capabilities = v1.SURFACE.decode("AgentCapabilities", new RawJson(caps), "$").value;
    for (const [method, state] of Object.entries((setup["modes"] ?? {}) as Record<string, unknown>)) {
      this.modes.set(method, v1.SURFACE.decode("SessionModeState", new RawJson(JSON.stringify(state)), "$").value);
    }
  }

  /** The answer of `method` with `setup.modes[method]` as its `modes`, when the setup has one. */
  private withModes<T extends object>(method: string, answer: T): T {
    const modes = this.modes.get(method);
    return modes === undefined ? answer : { ...answer, modes };
  }

  initialize(_cx: v1.AgentContext, params: v1.InitializeRequest): v1.InitializeResponse {
    const name = params.clientInfo?.name ?? "";
    if (name === "panic") throw new Error(DELIBERATE);
    if (name === "fail") throw new RequestError(4242, "initialize fails on request");
    // Echoes the requested version on purpose: the role must answer its own.
    return { protocolVersion: params.protocolVersion, agentCapabilities: this.capabilities };
  }

  newSession(): v1.NewSessionResponse {
    return this.withModes("session/new", { sessionId: `sess-${++this.sessions}` });
  }

  loadSession(): v1.LoadSessionResponse {
    return this.withModes("session/load", {});
  }

  resumeSession(): v1.ResumeSessionResponse {
    return this.withModes("session/resume", {});
  }

  closeSession(): v1.CloseSessionResponse {
    return {};
  }

  deleteSession(): v1.DeleteSessionResponse {
    return {};
  }

  listSessions(): v1.ListSessionsResponse {
    return { sessions: [] };
  }

  logout(): v1.LogoutResponse {
    return {};
  }

  setSessionMode(): v1.SetSessionModeResponse {
    return {};
  }

  async prompt(cx: v1.AgentContext, params: v1.PromptRequest): Promise<v1.PromptResponse> {
    const first = params.prompt[0];
    const text = first !== undefined && first.type === "text" ? first.text : "";
    const space = text.indexOf(" ");
    const command = space < 0 ? text : text.slice(0, space);
    const argument = space < 0 ? "" : text.slice(space + 1);
    const session = params.sessionId;
    const say = (words: string): Promise<void> =>
      cx.peer.sessionUpdate({ sessionId: session, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: words } } });
    switch (command) {
      case "echo":
        for (const word of argument.split(/\s+/).filter((w) => w !== "")) await say(word);
        break;
      case "permission": {
        cx.handleCancellation();
        const ask: v1.RequestPermissionRequest = {
          sessionId: session,
          toolCall: { toolCallId: "call-1" },
          options: [
            { optionId: "allow", name: "Allow", kind: "allow_once" },
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        };
        let outcome: string;
        try {
          const answer = await cx.peer.requestPermission(ask);
          outcome = answer.outcome.outcome === "selected" ? answer.outcome.optionId : "cancelled";
        } catch (err) {
          if (err instanceof Cancelled) outcome = "cancelled";
          else if (err instanceof AcpError) outcome = `error:${err.variant}`;
          else throw err;
        }
        await say(`permission:${outcome}`);
        return { stopReason: outcome === "cancelled" ? "cancelled" : "end_turn" };
      }
      case "wait":
        await say("waiting");
        await forever();
        break;
      case "hang":
        await forever();
        break;
      case "linger":
        cx.handleCancellation();
        await say("waiting");
        await aborted(cx.signal);
        if (argument === "fail") throw new RequestError(4242, "failed after the cancel");
        break;
      case "read": {
        let report: string;
        try {
          const read = await cx.peer.readTextFile({ sessionId: session, path: argument });
          report = `read:${read.content}`;
        } catch (err) {
          if (err instanceof PeerError) report = `read:error:${err.error.code}`;
          else if (err instanceof AcpError) report = `read:local:${err.variant}`;
          else throw err;
        }
        await say(report);
        break;
      }
      case "panic":
        throw new Error(DELIBERATE);
      case "error":
        throw new RequestError(4242, "test failure", new RawJson('{"reason":"test"}'));
    }
    return { stopReason: "end_turn" };
  }

  extMethod(_cx: v1.AgentContext, request: ExtMessage): Promise<RawJson> {
    return extRequest(this.barrier, request);
  }

  extNotification(_cx: v1.AgentContext, notification: ExtMessage): void {
    if (notification.method === BARRIER) this.barrier.mark(notification.payload);
  }
}

/** Tells the flow what the client application saw, as a `_test/seen` notification. */
function reportSeen(cx: v1.ClientContext, seen: unknown): Promise<void> {
  return cx.peer.extNotification("_test/seen", rawJson(seen));
}

/** The client application of the flows. */
export class FlowClient implements v1.Client {
  private readonly permission: string | null;
  private readonly barrier = new Barrier();

  constructor(setup: Record<string, unknown>) {
    const permission = setup["permission"] ?? null;
    if (permission !== null && typeof permission !== "string") throw new TypeError(`setup.permission must be a string or null`);
    this.permission = permission;
  }

  async requestPermission(cx: v1.ClientContext, params: v1.RequestPermissionRequest): Promise<v1.RequestPermissionResponse> {
    await reportSeen(cx, { method: "session/request_permission", sessionId: params.sessionId });
    // Left pending: the role answers `cancelled` when this side cancels the session.
    if (this.permission === null) await forever();
    return { outcome: { outcome: "selected", optionId: String(this.permission) } };
  }

  async sessionUpdate(cx: v1.ClientContext, params: v1.SessionNotification): Promise<void> {
    const update = JSON.parse(v1.SURFACE.encode("SessionUpdate", params.update)) as { sessionUpdate?: unknown };
    await reportSeen(cx, { method: "session/update", sessionId: params.sessionId, update: update.sessionUpdate ?? null });
  }

  readTextFile(_cx: v1.ClientContext, params: v1.ReadTextFileRequest): v1.ReadTextFileResponse {
    return { content: `text of ${params.path}` };
  }

  writeTextFile(): v1.WriteTextFileResponse {
    return {};
  }

  createElicitation(): v1.CreateElicitationResponse {
    return v1.SURFACE.decode("CreateElicitationResponse", new RawJson('{"action":"decline"}'), "$").value;
  }

  extMethod(_cx: v1.ClientContext, request: ExtMessage): Promise<RawJson> {
    return extRequest(this.barrier, request);
  }

  extNotification(_cx: v1.ClientContext, notification: ExtMessage): void {
    if (notification.method === BARRIER) this.barrier.mark(notification.payload);
  }
}
