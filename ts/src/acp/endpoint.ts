/**
 * The protocol state of one ACP connection, shared by both roles: the `initialize`
 * phase, both sides' `initialize` messages (the capability gates' paths start there),
 * the known sessions with their prompt turns and what their opening answers announced
 * (the session gates' members, e.g. `modes`), and the typed call and notification every
 * generated method goes through. The TypeScript twin of the Rust SDK's
 * `endpoint.rs` and the Python SDK's `endpoint.py`:
 *
 * **Pipelined messages.** A peer may write a request before the answer to an earlier
 * one, and request handlers run concurrently, so the agent orders by what was *read*:
 * `initialize` and the requests that create, open or remove a session are recorded as
 * unsettled as they are read (`noteRead`) and settle when their handler has finished.
 * A message read after an unsettled `initialize` waits for it, then is served if an
 * `initialize` read before it succeeded (else refused -32600, or dropped); one read
 * before any `initialize` is refused at once. A request naming a session waits for the
 * unsettled requests read before it that could change whether that session exists.
 * On the client side, a typed call made while this side's `initialize` call is in
 * flight waits for its answer instead of failing `NotInitialized`.
 *
 * **Read-time effects.** What the answer to one of this side's calls changes (the
 * client becoming initialized, a session created or closed) is applied by a result hook
 * on the reader as the answer is read.
 */

import { DecodeError, type Decoded, type DecodeWarning } from "../codec/errors.js";
import { JNumber, JObject, parse, type JNode } from "../codec/reader.js";
import { jsKind, rustDebugStr } from "../codec/runtime.js";
import { encodeString, RawJson, ReceivedJson } from "../codec/values.js";
import { ChildController, onAbort } from "../jsonrpc/cancellation.js";
import { ErrorCode, type ErrorObject } from "../jsonrpc/error.js";
import type { RequestContext } from "../jsonrpc/handler.js";
import type { RequestId } from "../jsonrpc/id.js";
import { CallAborted, CallError, RequestError, RpcError } from "../jsonrpc/local-error.js";
import type { Notification, Request } from "../jsonrpc/message.js";
import type { Peer } from "../jsonrpc/peer.js";
import { Context } from "./context.js";
import {
  Cancelled,
  ConnectionFailed,
  InvalidHandlerResult,
  InvalidParams,
  InvalidResult,
  NotInitialized,
  PeerError,
  UnsupportedVersion,
} from "./errors.js";
import { refusalError, refusalFailure, type MethodChecks } from "./refusal.js";
import { resolveOnError, type AcpEvent, type AcpOptions, type HandlerFailure } from "./options.js";
import { invalidParams, type ExtMessage } from "./receive.js";
import { checkExtName, checkExtParams, encodeChecked, outgoingProblem, rawProblem } from "./outgoing.js";
import { readsAsEmpty, type MethodInfo, type SurfaceRules } from "./rules.js";
import type { SurfaceView } from "./surface.js";

/** What the role runtime needs of a surface: its codecs and method table, and its
 * rules as generated code (`CHECKS` of the surface's roles module), by wire name. */
export interface RoleSurface {
  readonly surface: SurfaceView & { readonly rules: SurfaceRules; readonly protocolVersion: number };
  readonly checks: ReadonlyMap<string, MethodChecks>;
}

export type Role = "agent" | "client";

/** What `initialize` settled: the version and both sides' `initialize` messages as typed
 * values of the surface (the generated rule code reads them as its `Handshake`). */
export interface Negotiated {
  readonly version: number;
  /** The client's `initialize` params: decoded when received, as given when sent. */
  readonly client: unknown;
  /** The agent's `initialize` result: decoded when received, as returned when sent. */
  readonly agent: unknown;
}

/** An incoming request decoded once (on the reader, for the read-order bookkeeping, or
 * when its task starts): its typed params and row, or the error it is answered with. */
export type DecodedRequest = { readonly params: unknown; readonly info: MethodInfo | null; readonly warnings: readonly DecodeWarning[] } | { readonly error: RequestError };

/** An answer to one of this side's calls decoded once: for `initialize`, the version it
 * names (another version's answer is not decoded); the typed result or why it is invalid. */
interface ReadResult {
  readonly answered: number | null;
  readonly decoded: Decoded<unknown> | DecodeError | null;
}

/** What this side knows about one session. */
class SessionState {
  /** Agent side: the number and controller of the prompt turn in flight. */
  turn: { number: number; controller: ChildController } | null = null;
  /** Agent side: the read index of the session's last `session/cancel`. */
  cancelledAt = 0;
  /** Client side: aborts when this side cancels the session; replaced after each cancel. */
  cancel = new AbortController();
  /** What the latest answer that created or opened the session announced (the members
   * the session gates read, e.g. `modes`); `null` while this side has seen no such answer. */
  announced: Set<string> | null = null;
}

/** Where a message was read: its number among requests or notifications. */
export interface Later {
  readonly kind: "request" | "notification";
  readonly index: number;
}

/** Where a request was read: its number among requests, and how many notifications were read before it. */
export class ReadPoint {
  constructor(
    readonly request: number,
    readonly notifications: number,
  ) {}

  static of(rpc: RequestContext): ReadPoint {
    return new ReadPoint(rpc.index, rpc.notificationsBefore);
  }

  before(later: Later): boolean {
    return later.kind === "request" ? this.request < later.index : this.notifications < later.index;
  }
}

interface Unsettled {
  readonly at: ReadPoint;
  readonly initialize: boolean;
  /** A session request: the session it names (`null`: any, created). */
  readonly session: string | null;
  /** A prompt turn on `session`. */
  readonly prompt?: boolean;
}

/** -32600 for a request before `initialize` has completed. */
export function beforeReady(method: string): ErrorObject {
  return { code: ErrorCode.INVALID_REQUEST, message: `invalid request: \`${method}\` before \`initialize\` has completed` };
}

/** -32002 with `data.sessionId`. */
export function unknownSession(session: string): ErrorObject {
  return {
    code: ErrorCode.RESOURCE_NOT_FOUND,
    message: `resource not found: unknown session \`${session}\``,
    data: new RawJson(`{"sessionId":${encodeString(session)}}`),
  };
}

const EMPTY = new RawJson("{}");
/** What a notification queued at once returns (nothing to wait for). */
const SENT: Promise<void> = Promise.resolve();

/** Everything the handlers and connection handles of one side share. */
export class Endpoint {
  readonly surface: RoleSurface["surface"];
  readonly rules: SurfaceRules;
  readonly strict: boolean;
  /** Where a handler's failure is reported (`AcpOptions.onError`; `null`: nowhere). */
  readonly onError: ((failure: HandlerFailure) => void) | null;
  phase: "uninitialized" | "initializing" | "ready" = "uninitialized";
  negotiated: Negotiated | null = null;
  readonly sessions = new Map<string, SessionState>();
  private readonly incoming: ReadonlyMap<string, MethodInfo>;
  private readonly incomingNotes: ReadonlyMap<string, MethodInfo>;
  private readonly outgoing: ReadonlyMap<string, MethodInfo>;
  private readonly outgoingNotes: ReadonlyMap<string, MethodInfo>;
  private readonly checks: ReadonlyMap<string, MethodChecks>;
  private turns = 0;
  private unsettled: Unsettled[] = [];
  private readySince: ReadPoint | null = null;
  private initializeCalls = 0;
  private changes: (() => void)[] = [];

  constructor(
    private readonly roles: RoleSurface,
    readonly role: Role,
    readonly peer: Peer,
    readonly options: AcpOptions,
  ) {
    this.surface = roles.surface;
    this.rules = roles.surface.rules;
    this.strict = options.strict ?? true;
    this.onError = resolveOnError(options);
    const other = role === "agent" ? "client" : "agent";
    this.incoming = this.surface.requests(role);
    this.incomingNotes = this.surface.notifications(role);
    this.outgoing = this.surface.requests(other);
    this.outgoingNotes = this.surface.notifications(other);
    this.checks = roles.checks;
  }

  report(event: AcpEvent): void {
    this.options.observer?.(event);
  }

  /** Reports a handler's failure to the developer (`onError`); a throwing reporter is ignored. */
  handlerFailed(method: string, id: RequestId | null, error: unknown): void {
    try {
      this.onError?.({ method, id, error });
    } catch {
      // the reporter's own failure must not change the answer
    }
  }

  reportWarnings(method: string, warnings: readonly DecodeWarning[]): void {
    if (warnings.length > 0) this.report({ kind: "salvaged", method, warnings });
  }

  // -- waiting for what was read before -------------------------------------------------

  /** Something a waiting message may wait for is done: every waiter re-checks. */
  changed(): void {
    const changes = this.changes;
    this.changes = [];
    for (const wake of changes) wake();
  }

  private async waitWhile(blocked: () => boolean): Promise<void> {
    while (blocked()) await new Promise<void>((resolve) => this.changes.push(resolve));
  }

  get isReady(): boolean {
    return this.phase === "ready";
  }

  /** Agent side: marks `initialize` as started; `false` if it already ran or runs. */
  beginInitialize(): boolean {
    if (this.phase !== "uninitialized") return false;
    this.phase = "initializing";
    return true;
  }

  /** Ends the `initialize` phase: ready with `negotiated`, or back to uninitialized. */
  finishInitialize(negotiated: Negotiated | null, since: ReadPoint | null): void {
    if (negotiated === null) {
      this.phase = "uninitialized";
      return;
    }
    this.phase = "ready";
    this.negotiated = negotiated;
    this.readySince = since;
  }

  /** Agent side, on the reader as a request is read: records it as unsettled when later
   * messages are checked against its outcome. `decoded`: the request decoded once, here. */
  noteRead(request: Request, at: ReadPoint, decoded: DecodedRequest): void {
    if (request.method === this.rules.initialize) {
      this.unsettled.push({ at, initialize: true, session: null });
      return;
    }
    const session = "error" in decoded ? null : this.sessionOf(decoded.info, decoded.params);
    if (request.method === this.rules.promptTurn) {
      if (session !== null) this.unsettled.push({ at, initialize: false, session, prompt: true });
      return;
    }
    const effect = this.incoming.get(request.method)?.session?.effect ?? null;
    if (effect === null) return;
    this.unsettled.push({ at, initialize: false, session: effect === "created" ? null : session });
  }

  /** Agent side: the handler of request number `index` has finished, its effect applied. */
  settle(index: number): void {
    const before = this.unsettled.length;
    if (before === 0) return;
    this.unsettled = this.unsettled.filter((u) => u.at.request !== index);
    if (this.unsettled.length !== before) this.changed();
  }

  /** Agent side: waits until every `initialize` read before `later` has finished. */
  async settleInitialize(later: Later): Promise<void> {
    if (this.unsettled.length === 0) return;
    await this.waitWhile(() => this.unsettled.some((u) => u.initialize && u.at.before(later)));
  }

  /** Agent side: waits until no request read before `later` (a request or a
   * notification) that could make `session` exist or stop existing is still running. */
  async settleSession(later: Later, session: string): Promise<void> {
    if (this.unsettled.length === 0) return;
    await this.waitWhile(() => this.sessionUnsettled(later, session));
  }

  /** Agent side: whether a request read before `later` that could make `session` exist
   * or stop existing is still running. */
  sessionUnsettled(later: Later, session: string): boolean {
    return this.unsettled.some(
      (u) =>
        u.at.before(later) && !u.initialize && u.prompt !== true && ((u.session === null && !this.sessions.has(session)) || u.session === session),
    );
  }

  /** Agent side: waits until no prompt on `session` read before `later` is still running,
   * so that prompts pipelined on one session run one after the other, in read order. */
  async settlePrompts(later: Later, session: string): Promise<void> {
    if (this.unsettled.length === 0) return;
    await this.waitWhile(() => this.unsettled.some((u) => u.prompt === true && u.session === session && u.at.before(later)));
  }

  /** Agent side: whether an `initialize` read before `later` made the connection ready. */
  readyFor(later: Later): boolean {
    return this.phase === "ready" && this.readySince !== null && this.readySince.before(later);
  }

  /** Client side: while this side's `initialize` call is unanswered, waits until that
   * changes; ends early (`Cancelled`) when a signal aborts. */
  private async awaitInitializeAnswer(method: string, ...signals: (AbortSignal | undefined)[]): Promise<void> {
    if (this.role !== "client") return;
    const given = signals.filter((s): s is AbortSignal => s !== undefined);
    while (this.initializeCalls > 0 && this.phase !== "ready") {
      if (given.some((s) => s.aborted)) throw new Cancelled(method);
      const removers: (() => void)[] = [];
      await new Promise<void>((resolve) => {
        this.changes.push(resolve);
        for (const s of given) removers.push(onAbort(s, resolve));
      });
      for (const remove of removers) remove();
    }
  }

  // -- sessions -----------------------------------------------------------------------

  /** A session created or opened by an answer that announced `announced`; a session
   * opened again takes what the new answer announced. */
  openSession(session: string, announced: Set<string>): void {
    this.state(session).announced = announced;
  }

  removeSession(session: string): void {
    const state = this.sessions.get(session);
    if (state === undefined) return;
    this.sessions.delete(session);
    state.turn?.controller.abort();
    state.cancel.abort();
  }

  private state(session: string): SessionState {
    let state = this.sessions.get(session);
    if (state === undefined) {
      state = new SessionState();
      this.sessions.set(session, state);
    }
    return state;
  }

  /** Agent side: starts a prompt turn following `parent`; `null` when one is already in
   * flight. `readAfter`: the notifications read before the prompt (a `session/cancel`
   * read after it but handled before the turn started has already cancelled the turn). */
  beginTurn(session: string, parent: AbortSignal, readAfter: number): { number: number; controller: ChildController } | null {
    const number = ++this.turns;
    const state = this.state(session);
    if (state.turn !== null) return null;
    const controller = new ChildController(parent);
    if (state.cancelledAt > readAfter) controller.abort();
    state.turn = { number, controller };
    return state.turn;
  }

  endTurn(session: string, number: number): void {
    const state = this.sessions.get(session);
    if (state?.turn?.number === number) {
      state.turn.controller.detach();
      state.turn = null;
    }
  }

  /** Agent side: `session/cancel` number `index` (read order) arrived; `false` if the session is unknown. */
  cancelTurn(session: string, index: number): boolean {
    const state = this.sessions.get(session);
    if (state === undefined) return false;
    state.cancelledAt = Math.max(state.cancelledAt, index);
    state.turn?.controller.abort();
    return true;
  }

  /** Client side: the signal that aborts when this side cancels `session`. */
  sessionCancelSignal(session: string): AbortSignal {
    return this.state(session).cancel.signal;
  }

  /** Client side: aborts and replaces the session's cancel controller. */
  fireSessionCancel(session: string): void {
    const state = this.sessions.get(session);
    if (state === undefined) return;
    const old = state.cancel;
    state.cancel = new AbortController();
    old.abort();
  }

  /** Applies the session effect of a successful request (either side's): `params` and
   * `result` are its typed params and answer (decoded, or as this side wrote them). */
  applySessionEffect(info: MethodInfo, params: unknown, result: unknown): void {
    const effect = info.session?.effect ?? null;
    const checks = this.checks.get(info.name);
    if (effect === null || checks === undefined || result === null || typeof result !== "object") return;
    const session: unknown = effect === "created" ? checks.created?.(result) : checks.session?.(params);
    if (typeof session !== "string") return;
    if (effect === "removed") {
      this.removeSession(session);
      return;
    }
    this.openSession(session, new Set(checks.announced?.(result) ?? []));
  }

  /** Whether the answer that opened `session` announced `member`; `null` when no such
   * answer was seen (an unknown session, which other checks judge). */
  private announces(session: string, member: string): boolean | null {
    const announced = this.sessions.get(session)?.announced ?? null;
    return announced === null ? null : announced.has(member);
  }

  // -- incoming -----------------------------------------------------------------------

  context<P>(peer: P, rpc: RequestContext | null, signal: AbortSignal): Context<P> {
    return new Context(peer, rpc, signal, this.strict, (method, error) => this.handlerFailed(method, rpc === null ? null : rpc.id, error));
  }

  private decode(name: string, payload: RawJson | null, root: string): Decoded<unknown> {
    return this.surface.decodeNamed(name, payload, root);
  }

  /** An incoming request decoded (once): its typed params and row (`null` for an
   * extension request, whose params are an `ExtMessage`), or its -32601 / -32602. */
  decodeRequest(request: Request): DecodedRequest {
    const method = request.method;
    const info = this.incoming.get(method);
    if (info === undefined) {
      if (method.startsWith("_")) return { params: { kind: "ext", method, payload: request.params } satisfies ExtMessage, info: null, warnings: [] };
      return { error: new RequestError(ErrorCode.METHOD_NOT_FOUND, `method not found: ${rustDebugStr(method)}`) };
    }
    try {
      const decoded = this.decode(info.params, request.params, "$.params");
      return { params: decoded.value, info, warnings: decoded.warnings };
    } catch (err) {
      if (err instanceof DecodeError) return { error: RequestError.from(invalidParams(err)) };
      throw err;
    }
  }

  /** The typed params and row of a decoded request, its warnings reported; throws its error. */
  accept(method: string, decoded: DecodedRequest): { params: unknown; info: MethodInfo | null } {
    if ("error" in decoded) throw decoded.error;
    this.reportWarnings(method, decoded.warnings);
    return decoded;
  }

  /** The typed params of an incoming notification and its row, or `null` when it is
   * dropped (unknown, invalid, or read before a successful `initialize`). */
  decodeNotification(notification: Notification, ready: boolean): { params: unknown; info: MethodInfo | null } | null {
    const method = notification.method;
    const info = this.incomingNotes.get(method);
    let value: unknown;
    if (info === undefined) {
      if (!method.startsWith("_")) {
        this.report({ kind: "unknown-notification", method });
        return null;
      }
      value = { kind: "ext", method, payload: notification.params } satisfies ExtMessage;
    } else {
      let decoded: Decoded<unknown>;
      try {
        decoded = this.decode(info.params, notification.params, "$.params");
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
        this.report({ kind: "invalid-notification", method, error: err });
        return null;
      }
      value = decoded.value;
      if (ready) this.reportWarnings(method, decoded.warnings);
    }
    if (!ready) {
      this.report({ kind: "notification-before-initialize", method });
      return null;
    }
    return { params: value, info: info ?? null };
  }

  /** The session a message names (its typed params' `sessionId`), for the methods the
   * session rules apply to. */
  sessionOf(info: MethodInfo | null, params: unknown): string | null {
    const session = info === null ? undefined : this.checks.get(info.name)?.session?.(params);
    return typeof session === "string" ? session : null;
  }

  /** Checks an incoming request (its typed params) against the state; throws
   * `RequestError` -32600 before `initialize`, then the generated checks' refusal
   * (capability gate, value gates), -32002 for an unknown session, -32602 at the
   * session of a request its opening answer did not announce. */
  checkIncoming(method: string, info: MethodInfo | null, params: unknown, session: string | null): void {
    const negotiated = this.negotiated;
    if (this.phase !== "ready" || negotiated === null) throw RequestError.from(beforeReady(method));
    const checks = info === null ? undefined : this.checks.get(method);
    const refusal = checks?.refusal?.(params, negotiated) ?? null;
    if (refusal !== null) throw RequestError.from(refusalError(method, refusal));
    const unseenOk = info?.session?.unseenOk ?? false;
    if (session !== null && !this.sessions.has(session) && !unseenOk) throw RequestError.from(unknownSession(session));
    // `session/set_mode` for a session whose opening answer had no `modes`.
    const needs = checks?.needs;
    if (needs !== undefined && session !== null && this.announces(session, needs) === false) {
      throw RequestError.from(refusalError(method, { kind: "NotAnnounced", member: needs, session }));
    }
  }

  /** A handler's result as JSON text, checked against the result type unless `strict`
   * is off. A result that cannot be encoded or is invalid throws `InvalidHandlerResult`,
   * a local error: the JSON-RPC layer reports it (`onError`) and answers -32603 without
   * its details. */
  encodeResult(method: string, info: MethodInfo | null, value: unknown): string {
    if (info === null) {
      // An extension handler returns raw JSON.
      if (value === null || value === undefined) return "null";
      const text = typeof value === "string" ? value : value instanceof RawJson ? value.text : null;
      if (text === null) throw new InvalidHandlerResult(method, new DecodeError("$.result", "not-encodable", "JSON text or a RawJson", jsKind(value)));
      const problem = rawProblem(text, "$.result", false);
      if (problem !== null) throw new InvalidHandlerResult(method, problem);
      return text;
    }
    if (info.result === null) throw new InvalidHandlerResult(method, new DecodeError("$.result", "not-encodable", "no result (the method has no result type)", jsKind(value)));
    const text = this.encodeChecked(info.result, value, "$.result", (problem) => new InvalidHandlerResult(method, problem));
    if (this.strict) {
      const problem = this.problem(info.result, readsAsEmpty(info, text) ? "{}" : text, "$.result");
      if (problem !== null) throw new InvalidHandlerResult(method, problem);
    }
    return text;
  }


  /** `value` encoded as `typeName`; `fail` gets where and what when the encoder refuses it. */
  private encodeChecked(typeName: string, value: unknown, root: string, fail: (problem: DecodeError) => Error): string {
    return encodeChecked(this.surface, typeName, value, root, fail);
  }

  /** What is wrong with outgoing text for `typeName`, if anything. */
  private problem(typeName: string, text: string, root: string): DecodeError | null {
    return outgoingProblem(this.surface, typeName, text, root);
  }

  // -- outgoing -----------------------------------------------------------------------

  /** The typed call behind every generated request method: state and gate checks before
   * anything is sent, strict re-decode of the params, the result decoded against the
   * method's result type, session bookkeeping at read time. `turn` abandons the call
   * (`Cancelled`); `cancel` sends `$/cancel_request` and keeps waiting. */
  async request(method: string, params: unknown, turn?: AbortSignal, cancel?: AbortSignal): Promise<unknown> {
    const info = this.outgoing.get(method);
    if (info === undefined || info.result === null) throw new TypeError(`${method} is not a request the peer handles`);
    const raw = this.encodeParams(method, info.params, params);
    const initializing = this.role === "client" && method === this.rules.initialize;
    if (initializing) this.initializeCalls++;
    // An answer that changes the state is decoded on the reader, once; the caller gets that value.
    const hooked: { read: ReadResult | null } = { read: null };
    let result: RawJson;
    try {
      if (!initializing) {
        await this.awaitInitializeAnswer(method, turn, cancel);
        this.checkOutgoingState(method, params);
      }
      if (this.strict) {
        const problem = this.problem(info.params, raw, "$.params");
        if (problem !== null) throw new InvalidParams(method, problem);
      }
      let onResult: ((r: RawJson) => void) | undefined;
      if (initializing) {
        onResult = (r) => this.applyInitialized(params, (hooked.read = this.readResult(info, r, true)));
      } else if (info.session?.effect != null) {
        onResult = (r) => {
          const read = (hooked.read = this.readResult(info, r, false));
          // An invalid answer changes nothing (the caller gets the error).
          if (read.decoded !== null && !(read.decoded instanceof DecodeError)) this.applySessionEffect(info, params, read.decoded.value);
        };
      }
      try {
        const options: { signal?: AbortSignal; cancel?: AbortSignal; onResult?: (r: RawJson) => void } = {};
        if (turn !== undefined) options.signal = turn;
        if (cancel !== undefined) options.cancel = cancel;
        if (onResult !== undefined) options.onResult = onResult;
        result = await this.peer.call(method, raw, options);
      } catch (err) {
        if (err instanceof RpcError) throw new PeerError(method, err.error);
        if (err instanceof CallAborted) throw new Cancelled(method);
        if (err instanceof CallError) throw new ConnectionFailed(method, err);
        throw err;
      }
    } finally {
      if (initializing) {
        this.initializeCalls--;
        this.changed();
      }
    }
    const read = hooked.read ?? this.readResult(info, result, initializing);
    // Another version's answer need not match this version's result type: the version is checked first.
    if (read.answered !== null && read.answered !== this.surface.protocolVersion) throw new UnsupportedVersion(read.answered, this.surface.protocolVersion);
    const decoded = read.decoded;
    if (decoded instanceof DecodeError) throw new InvalidResult(method, decoded);
    if (decoded === null) throw new TypeError(`${method}: the answer was not decoded`);
    this.reportWarnings(method, decoded.warnings);
    return decoded.value;
  }

  /** An answer to a call of `info`, decoded once; `initialize`: its version first. */
  private readResult(info: MethodInfo, result: RawJson, initializing: boolean): ReadResult {
    const text = readsAsEmpty(info, result.text) ? EMPTY : result;
    const answered = initializing ? answeredVersion(text) : null;
    if (answered !== null && answered !== this.surface.protocolVersion) return { answered, decoded: null };
    try {
      return { answered, decoded: this.decode(info.result ?? "", text, "$.result") };
    } catch (err) {
      if (err instanceof DecodeError) return { answered, decoded: err };
      throw err;
    }
  }

  /** Client side, on the reader: the agent's `initialize` answer was read (and decoded). */
  private applyInitialized(params: unknown, read: ReadResult): void {
    const version = this.surface.protocolVersion;
    if (read.answered !== null && read.answered !== version) this.finishInitialize(null, null);
    else if (read.decoded !== null && !(read.decoded instanceof DecodeError)) this.finishInitialize({ version, client: params, agent: read.decoded.value }, null);
    this.changed();
  }

  /** The notification behind every generated notification method. */
  notify(method: string, params: unknown): Promise<void> {
    const info = this.outgoingNotes.get(method);
    if (info === undefined) return Promise.reject(new TypeError(`${method} is not a notification the peer handles`));
    let raw: string;
    try {
      raw = this.encodeParams(method, info.params, params);
    } catch (err) {
      return Promise.reject(err);
    }
    // The common case, a stream of updates on a ready connection with room in the
    // outgoing queue, is queued at once without a promise per message.
    const plain = this.initializeCalls === 0 && this.phase === "ready";
    if (plain && !(this.role === "client" && method === this.rules.sessionCancel)) {
      if (this.strict) {
        const problem = this.problem(info.params, raw, "$.params");
        if (problem !== null) return Promise.reject(new InvalidParams(method, problem));
      }
      if (this.peer.tryNotify(method, raw)) return SENT;
      // Queue full: the slow path waits for room (and has checked nothing twice).
      return this.notifyEncoded(method, info.params, params, raw, true);
    }
    return this.notifyEncoded(method, info.params, params, raw);
  }

  private async notifyEncoded(method: string, typeName: string, params: unknown, raw: string, checked = false): Promise<void> {
    if (this.initializeCalls > 0) await this.awaitInitializeAnswer(method);
    if (this.phase !== "ready") throw new NotInitialized(method);
    if (this.strict && !checked) {
      const problem = this.problem(typeName, raw, "$.params");
      if (problem !== null) throw new InvalidParams(method, problem);
    }
    try {
      await this.peer.notify(method, raw);
    } catch (err) {
      if (err instanceof CallError) throw new ConnectionFailed(method, err);
      throw err;
    }
    if (this.role === "client" && method === this.rules.sessionCancel) {
      // The client answers its pending permission requests of the session with
      // `cancelled`; the connection does it for the application.
      const session: unknown = this.checks.get(method)?.session?.(params);
      if (typeof session === "string") this.fireSessionCancel(session);
    }
  }

  /** Sends an extension request (a `_`-prefixed name) with raw params. */
  async extRequest(method: string, params: RawJson | string | null, cancel?: AbortSignal): Promise<RawJson> {
    checkExtName(method);
    checkExtParams(method, params);
    await this.awaitInitializeAnswer(method, cancel);
    if (this.phase !== "ready") throw new NotInitialized(method);
    try {
      return await this.peer.call(method, params, cancel === undefined ? {} : { cancel });
    } catch (err) {
      if (err instanceof RpcError) throw new PeerError(method, err.error);
      if (err instanceof CallError) throw new ConnectionFailed(method, err);
      throw err;
    }
  }

  /** Sends an extension notification with raw params. */
  async extNotify(method: string, params: RawJson | string | null): Promise<void> {
    checkExtName(method);
    checkExtParams(method, params);
    await this.awaitInitializeAnswer(method);
    if (this.phase !== "ready") throw new NotInitialized(method);
    try {
      await this.peer.notify(method, params);
    } catch (err) {
      if (err instanceof CallError) throw new ConnectionFailed(method, err);
      throw err;
    }
  }

  private encodeParams(method: string, typeName: string, params: unknown): string {
    return this.encodeChecked(typeName, params, "$.params", (problem) => new InvalidParams(method, problem));
  }

  /** The state and the generated checks for a call about to be sent, on its typed
   * params against the peer's `initialize` message. */
  private checkOutgoingState(method: string, params: unknown): void {
    const negotiated = this.negotiated;
    if (this.phase !== "ready" || negotiated === null) throw new NotInitialized(method);
    const checks = this.checks.get(method);
    if (checks === undefined) return;
    // Content of a kind the schema does not list is left to validation (no failure).
    const refusal = checks.refusal?.(params, negotiated) ?? null;
    const failure = refusal === null ? null : refusalFailure(method, refusal);
    if (failure !== null) throw failure;
    // A session whose opening answer did not announce what the method needs
    // (`session/set_mode` without `modes`); a session this side saw no answer for is
    // left to the peer, which knows its sessions.
    const needs = checks.needs;
    const session: unknown = needs === undefined ? undefined : checks.session?.(params);
    if (needs !== undefined && typeof session === "string" && this.announces(session, needs) === false) {
      throw refusalFailure(method, { kind: "NotAnnounced", member: needs, session });
    }
  }
}

/** The `protocolVersion` of an `initialize` answer when it is a protocol version (a
 * `uint16`), read from the tree the line was parsed into. Any other value is no version
 * at all: the answer is then judged by the result type like any other, so the call fails
 * with the invalid result `classify` reports for the same line. */
function answeredVersion(text: RawJson): number | null {
  let node: JNode;
  try {
    // A received answer carries its tree; only one built in this process is parsed.
    node = text instanceof ReceivedJson ? text.node : parse(text.text);
  } catch {
    return null;
  }
  if (!(node instanceof JObject)) return null;
  let found: JNode | undefined;
  for (const m of node.members) if (m.key === "protocolVersion") found = m.value; // the last one, as `JSON.parse` reads it
  if (!(found instanceof JNumber)) return null;
  const version = found.value;
  return Number.isInteger(version) && version >= 0 && version <= 0xffff ? version : null;
}
