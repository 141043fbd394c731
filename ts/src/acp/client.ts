/**
 * The client role: connect a `Client` implementation to an agent, and the base of the
 * handle (`AgentConnection`, generated per surface) that calls the agent.
 *
 * The runtime enforces on the client side: calls before `initialize` has completed and
 * calls the agent did not advertise fail locally and send nothing; the agent's answered
 * protocol version must be the one this side speaks; requests from the agent must be
 * for capabilities this side advertised and for known sessions (updates for unknown
 * sessions are still delivered: agents send them before the `session/new` answer); and
 * sending `session/cancel` answers every pending permission request of that session
 * with the `cancelled` outcome.
 */

import { settledBefore } from "../jsonrpc/cancellation.js";
import type { Handler, NotificationContext, RequestContext } from "../jsonrpc/handler.js";
import { RequestError, requestCancelled } from "../jsonrpc/local-error.js";
import type { Notification, Request } from "../jsonrpc/message.js";
import { callHandler, callNotificationHandler } from "./agent.js";
import type { Context } from "./context.js";
import { beforeReady, type Endpoint } from "./endpoint.js";
import { PeerHandle } from "./peer-handle.js";
import type { MethodInfo } from "./rules.js";

// The request whose pending instances `session/cancel` answers, and that answer. The
// rules table has no row for this (it is the client's duty, not a message's property).
const PERMISSION = "session/request_permission";
const CANCELLED_OUTCOME = '{"outcome":{"outcome":"cancelled"}}';

/** The client's handle to its agent; the typed calls are generated on `AgentConnection`.
 * Calls check the state first and send nothing when that fails (`NotInitialized`,
 * `CapabilityNotAdvertised`, `NotAnnounced` for a session whose opening answer lacked
 * what the call needs; a call made while `initialize` is in flight waits for its
 * answer). `withCancellation(signal)` gives calls that send `$/cancel_request` when the
 * signal aborts and still wait for the answer. */
export class AgentConnectionBase extends PeerHandle {
  constructor(
    endpoint: Endpoint,
    /** When it aborts, this handle's pending calls are cancelled with `$/cancel_request`. */
    readonly cancelSignal?: AbortSignal,
  ) {
    super(endpoint);
  }

  /** A handle whose calls send `$/cancel_request` when `signal` aborts, then still wait
   * for the agent's answer (a partial result, or -32800 as a `PeerError`). */
  withCancellation(signal: AbortSignal): this {
    const Self = this.constructor as new (endpoint: Endpoint, cancel?: AbortSignal) => this;
    return new Self(this.endpoint, signal);
  }

  protected requestTyped(method: string, params: unknown): Promise<unknown> {
    return this.endpoint.request(method, params, undefined, this.cancelSignal);
  }

  protected override extCancel(): AbortSignal | undefined {
    return this.cancelSignal;
  }

  /** The agent's capabilities as it advertised them (decoded; `undefined` before
   * `initialize`). Each surface's `AgentConnection` gives it its type. */
  get agentCapabilities(): unknown {
    return this.peerCapabilities(this.endpoint.rules.agentCapabilities);
  }
}

/** The JSON-RPC handler of the client side. */
export class ClientRuntime implements Handler {
  private plain!: AgentConnectionBase;
  private noteContext!: Context<AgentConnectionBase>;
  endpoint!: Endpoint;

  constructor(
    private readonly client: object,
    private readonly connectionType: new (endpoint: Endpoint) => AgentConnectionBase,
  ) {}

  bind(endpoint: Endpoint): void {
    this.endpoint = endpoint;
    this.plain = new this.connectionType(endpoint);
    this.noteContext = endpoint.context(this.plain, null, new AbortController().signal);
  }

  async request(request: Request, rpc: RequestContext): Promise<string> {
    const ep = this.endpoint;
    const method = request.method;
    if (!ep.isReady) throw RequestError.from(beforeReady(method));
    const { params, info } = ep.accept(method, ep.decodeRequest(request));
    const session = ep.sessionOf(info, params);
    ep.checkIncoming(method, info, params, session);
    if (method === PERMISSION && session !== null && info !== null) return await this.permission(rpc, info, params, session);
    const value = await callHandler(this.client, info, method, ep.context(this.plain, rpc, rpc.signal), params);
    const text = ep.encodeResult(method, info, value);
    if (info !== null) ep.applySessionEffect(info, params, value);
    return text;
  }

  /** A permission request: answered `cancelled` for the application when this side
   * cancels the session, -32800 when the agent cancels the request. */
  private async permission(rpc: RequestContext, info: MethodInfo, params: unknown, session: string): Promise<string> {
    const ep = this.endpoint;
    const cancel = ep.sessionCancelSignal(session);
    const own = new AbortController();
    const handler = callHandler(this.client, info, info.name, ep.context(this.plain, rpc, own.signal), params);
    handler.catch(() => {}); // observed below, or dropped
    if (!(await settledBefore(handler, cancel, rpc.signal))) {
      own.abort();
      if (rpc.signal.aborted && !cancel.aborted) throw RequestError.from(requestCancelled());
      return CANCELLED_OUTCOME;
    }
    return ep.encodeResult(info.name, info, await handler);
  }

  notification(notification: Notification, _cx: NotificationContext): Promise<unknown> | undefined {
    const ep = this.endpoint;
    const decoded = ep.decodeNotification(notification, ep.isReady);
    if (decoded === null) return undefined;
    const { params, info } = decoded;
    if (info !== null) {
      const session = ep.sessionOf(info, params);
      // Still delivered: agents send updates before the `session/new` answer.
      if (session !== null && !ep.sessions.has(session)) ep.report({ kind: "unknown-session", method: notification.method, sessionId: session });
    }
    return callNotificationHandler(this.client, info, notification.method, this.noteContext, params);
  }
}
