/**
 * The agent role: serve an `Agent` implementation to a client, and the base of the
 * handle (`ClientConnection`, generated per surface) its handlers call the client with.
 *
 * The runtime enforces the protocol around the application's handlers: `initialize`
 * first and once (anything else before it is answered -32600), the negotiated protocol
 * version (the answer always names the version this surface speaks), the agent's own
 * capability gates and value gates, known session ids (-32002 with `data.sessionId`),
 * the session gates (`session/set_mode` for a session answered without `modes`: -32602
 * at `$.params.sessionId`), one prompt turn per session, and `session/cancel`, which ends the turn with
 * `stopReason: "cancelled"`, never an error. Requests written before the answer to an
 * earlier one are checked in read order (`endpoint.ts`, "Pipelined messages").
 */

import { encodeString, RawJson } from "../codec/values.js";
import { settledBefore } from "../jsonrpc/cancellation.js";
import { ErrorCode } from "../jsonrpc/error.js";
import type { Handler, NotificationContext, RequestContext } from "../jsonrpc/handler.js";
import { RequestError, requestCancelled } from "../jsonrpc/local-error.js";
import type { Notification, Request } from "../jsonrpc/message.js";
import type { Context } from "./context.js";
import { beforeReady, ReadPoint, type DecodedRequest, type Endpoint, type Later } from "./endpoint.js";
import { AcpError, Cancelled } from "./errors.js";
import { PeerHandle } from "./peer-handle.js";
import type { MethodInfo } from "./rules.js";

/** The result of a v1 prompt turn that `session/cancel` ended. */
const CANCELLED_PROMPT = '{"stopReason":"cancelled"}';

/** The agent's handle to its client; the typed calls are generated on `ClientConnection`.
 * Every call checks the state first and sends nothing when that fails (`NotInitialized`,
 * `CapabilityNotAdvertised`). Inside a prompt turn, calls end with `Cancelled` when the
 * turn is cancelled. */
export class ClientConnectionBase extends PeerHandle {
  constructor(
    endpoint: Endpoint,
    /** The prompt turn this handle's calls belong to. */
    readonly turn?: AbortSignal,
    /** Aborts when the runtime drops the turn's handler (cancelled, and not handling
     * cancellation itself): from then on this handle sends nothing. */
    readonly dropped?: AbortSignal,
  ) {
    super(endpoint);
  }

  /** This handle bound to a prompt turn. */
  withTurn(turn: AbortSignal, dropped?: AbortSignal): this {
    const Self = this.constructor as new (endpoint: Endpoint, turn?: AbortSignal, dropped?: AbortSignal) => this;
    return new Self(this.endpoint, turn, dropped);
  }

  private checkDropped(method: string): void {
    // A dropped handler's promise cannot be stopped; what it still tries to send is refused.
    if (this.dropped?.aborted === true) throw new Cancelled(method);
  }

  protected requestTyped(method: string, params: unknown): Promise<unknown> {
    try {
      this.checkDropped(method);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.endpoint.request(method, params, this.turn);
  }

  protected override notifyTyped(method: string, params: unknown): Promise<void> {
    try {
      this.checkDropped(method);
    } catch (err) {
      return Promise.reject(err);
    }
    return super.notifyTyped(method, params);
  }

  override extMethod(method: string, params: RawJson | string | null = null): Promise<RawJson> {
    try {
      this.checkDropped(method);
    } catch (err) {
      return Promise.reject(err);
    }
    return super.extMethod(method, params);
  }

  override extNotification(method: string, params: RawJson | string | null = null): Promise<void> {
    try {
      this.checkDropped(method);
    } catch (err) {
      return Promise.reject(err);
    }
    return super.extNotification(method, params);
  }

  /** The client's capabilities as it advertised them (decoded; `undefined` before
   * `initialize`). Each surface's `ClientConnection` gives it its type. */
  get clientCapabilities(): unknown {
    return this.peerCapabilities(this.endpoint.rules.clientCapabilities);
  }
}

type AnyHandler = (cx: Context<unknown>, params: unknown) => unknown;

/** Calls the application's handler for a row (or its extension handler), turning an
 * escaped `AcpError` into the answer Rust gives it. */
export async function callHandler(app: object, info: MethodInfo | null, method: string, cx: Context<unknown>, params: unknown, notification = false): Promise<unknown> {
  const name = info === null ? (notification ? "extNotification" : "extMethod") : info.handler;
  const fn = (app as Record<string, unknown>)[name];
  if (typeof fn !== "function") {
    if (notification) return undefined;
    throw RequestError.methodNotFound(method);
  }
  try {
    return await (fn as AnyHandler).call(app, cx, params);
  } catch (err) {
    // Anything but an `AcpError` reaches the JSON-RPC layer, which reports it; an
    // escaped `AcpError` becomes an answer of its own, so it is reported here.
    if (!notification && err instanceof AcpError && !(err instanceof Cancelled)) cx.reportFailure(method, err);
    throw acpToRequest(err);
  }
}

/** `callHandler` for a notification: the handler's own return value, so that one that
 * finishes at once costs no promise (a returned promise is awaited by the worker). */
export function callNotificationHandler(app: object, info: MethodInfo | null, method: string, cx: Context<unknown>, params: unknown): Promise<unknown> | undefined {
  const fn = (app as Record<string, unknown>)[info === null ? "extNotification" : info.handler];
  if (typeof fn !== "function") return undefined;
  let out: unknown;
  try {
    out = (fn as AnyHandler).call(app, cx, params);
  } catch (err) {
    throw acpToRequest(err);
  }
  if (out === null || (typeof out !== "object" && typeof out !== "function") || typeof (out as PromiseLike<unknown>).then !== "function") return undefined;
  return Promise.resolve(out as PromiseLike<unknown>).catch((err: unknown) => {
    throw acpToRequest(err);
  });
}

function acpToRequest(err: unknown): unknown {
  return err instanceof AcpError ? RequestError.from(err.toErrorObject()) : err;
}

/** The JSON-RPC handler of the agent side. */
export class AgentRuntime implements Handler {
  /** Each request decoded on the reader as it is read, until its task takes it. */
  private readonly decoded = new WeakMap<Request, DecodedRequest>();
  private plain!: ClientConnectionBase;
  private noteContext!: Context<ClientConnectionBase>;
  endpoint!: Endpoint;

  constructor(
    private readonly agent: object,
    private readonly connectionType: new (endpoint: Endpoint) => ClientConnectionBase,
  ) {}

  bind(endpoint: Endpoint): void {
    this.endpoint = endpoint;
    this.plain = new this.connectionType(endpoint);
    this.noteContext = endpoint.context(this.plain, null, new AbortController().signal);
  }

  requestRead(request: Request, rpc: RequestContext): void {
    // Decoded here, once: the read-order bookkeeping needs the session it names.
    const decoded = this.endpoint.decodeRequest(request);
    this.decoded.set(request, decoded);
    this.endpoint.noteRead(request, ReadPoint.of(rpc), decoded);
  }

  async request(request: Request, rpc: RequestContext): Promise<string> {
    const ep = this.endpoint;
    const index = rpc.index;
    const later: Later = { kind: "request", index };
    try {
      // Read after an `initialize` that is still running: its outcome decides.
      await ep.settleInitialize(later);
      const method = request.method;
      const initialize = method === ep.rules.initialize;
      if (!initialize && !ep.readyFor(later)) throw RequestError.from(beforeReady(method));
      const decoded = this.decoded.get(request) ?? ep.decodeRequest(request);
      this.decoded.delete(request);
      const { params, info } = ep.accept(method, decoded);
      if (initialize && info !== null) return await this.initialize(rpc, info, params);
      const session = ep.sessionOf(info, params);
      if (session !== null) await ep.settleSession({ kind: "request", index }, session);
      ep.checkIncoming(method, info, params, session);
      if (session !== null && info !== null && method === ep.rules.promptTurn) return await this.prompt(rpc, info, params, session);
      const value = await callHandler(this.agent, info, method, ep.context(this.plain, rpc, rpc.signal), params);
      const text = ep.encodeResult(method, info, value);
      if (info !== null) ep.applySessionEffect(info, params, value);
      return text;
    } finally {
      // However the handler ended, messages waiting for this one re-check.
      ep.settle(index);
    }
  }

  async notification(notification: Notification, cx: NotificationContext): Promise<void> {
    const ep = this.endpoint;
    const later: Later = { kind: "notification", index: cx.index };
    await ep.settleInitialize(later);
    const decoded = ep.decodeNotification(notification, ep.readyFor(later));
    if (decoded === null) return;
    const { params, info } = decoded;
    const method = notification.method;
    if (method === ep.rules.sessionCancel) {
      const session = ep.sessionOf(info, params);
      if (session !== null && ep.sessionUnsettled(later, session)) {
        // A `session/new`, load or resume read before it is still opening the session,
        // and its outcome decides. The wait runs apart from the notification worker,
        // which is serial: the opening handler may be waiting for an answer that waits
        // for the worker. The connection waits for that work at shutdown.
        const index = cx.index;
        cx.spawn(async () => {
          await ep.settleSession(later, session);
          await this.cancel(session, index, info, method, params);
        });
        return;
      }
      if (session !== null) return this.cancel(session, cx.index, info, method, params);
    }
    await callHandler(this.agent, info, method, this.noteContext, params, true);
  }

  /** `session/cancel` number `index` (in read order): ends the session's turn and hands
   * the notification to the agent, or reports an unknown session. */
  private async cancel(session: string, index: number, info: MethodInfo | null, method: string, params: unknown): Promise<void> {
    const ep = this.endpoint;
    if (!ep.cancelTurn(session, index)) {
      ep.report({ kind: "unknown-session", method, sessionId: session });
      return;
    }
    await callHandler(this.agent, info, method, this.noteContext, params, true);
  }

  private async initialize(rpc: RequestContext, info: MethodInfo, params: unknown): Promise<string> {
    const ep = this.endpoint;
    const since = ReadPoint.of(rpc);
    if (!ep.beginInitialize()) throw new RequestError(ErrorCode.INVALID_REQUEST, "invalid request: `initialize` was already received on this connection");
    const version = ep.surface.protocolVersion;
    let result: string;
    let named: unknown;
    try {
      const value = await callHandler(this.agent, info, info.name, ep.context(this.plain, rpc, rpc.signal), params);
      // The answer always names the version this connection speaks (exactly one).
      named = typeof value === "object" && value !== null ? { ...value, protocolVersion: version } : value;
      result = ep.encodeResult(info.name, info, named);
    } catch (err) {
      // Failed or threw: it does not count, `initialize` may come again.
      ep.finishInitialize(null, null);
      throw err;
    }
    // Both whole messages are kept, typed: the generated checks read the capabilities there.
    ep.finishInitialize({ version, client: params, agent: named }, since);
    return result;
  }

  /** A v1 prompt turn: one per session; `session/cancel` ends it with `stopReason: "cancelled"`, never an error. */
  private async prompt(rpc: RequestContext, info: MethodInfo, params: unknown, session: string): Promise<string> {
    const ep = this.endpoint;
    // Prompts pipelined on one session take turns in read order (same bytes, same answers).
    await ep.settlePrompts({ kind: "request", index: rpc.index }, session);
    const begun = ep.beginTurn(session, rpc.signal, rpc.notificationsBefore);
    if (begun === null) {
      const message = `invalid request: a prompt turn is already running in session \`${session}\``;
      throw new RequestError(ErrorCode.INVALID_REQUEST, message, new RawJson(`{"sessionId":${encodeString(session)}}`));
    }
    const turn = begun.controller.signal;
    try {
      // Cancelled by a `session/cancel` read right after the prompt, before the turn started: the handler is not run.
      if (turn.aborted && !rpc.signal.aborted) return CANCELLED_PROMPT;
      const drop = new AbortController();
      const context = ep.context(this.plain.withTurn(turn, drop.signal), rpc, turn);
      const handler = callHandler(this.agent, info, info.name, context, params);
      handler.catch(() => {}); // observed below, or dropped with the turn
      let dropped = false;
      if (!(await settledBefore(handler, turn))) {
        if (context.handlesCancellation) await handler.then(() => {}, () => {});
        else {
          dropped = true; // the handler is dropped; the turn is answered for it
          drop.abort();
        }
      }
      if (!turn.aborted || rpc.signal.aborted) {
        // Not cancelled by `session/cancel`: `$/cancel_request` and shutdown are the JSON-RPC layer's.
        if (dropped) throw RequestError.from(requestCancelled());
        return ep.encodeResult(info.name, info, await handler);
      }
      if (!dropped) {
        try {
          const value = await handler;
          if ((value as { stopReason?: unknown } | null)?.stopReason === "cancelled") return ep.encodeResult(info.name, info, value);
        } catch {
          // a failure after the cancel still ends the turn `cancelled`
        }
      }
      return CANCELLED_PROMPT;
    } finally {
      ep.endTurn(session, begun.number);
    }
  }
}
