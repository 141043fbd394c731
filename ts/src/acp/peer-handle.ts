/** What the two roles' handles to their peer share: extension calls, the negotiated
 * version, the peer's advertised capabilities, flushing and the closed state. */

import type { RawJson } from "../codec/values.js";
import type { Endpoint } from "./endpoint.js";

export abstract class PeerHandle {
  constructor(
    /** The connection's protocol state (the runtime's; not for applications). */
    readonly endpoint: Endpoint,
  ) {}

  /** The signal that cancels this handle's extension calls, if any. */
  protected extCancel(): AbortSignal | undefined {
    return undefined;
  }

  protected notifyTyped(method: string, params: unknown): Promise<void> {
    return this.endpoint.notify(method, params);
  }

  /** Sends an extension request (its name starts with `_`) and resolves with the raw result. */
  extMethod(method: string, params: RawJson | string | null = null): Promise<RawJson> {
    return this.endpoint.extRequest(method, params, this.extCancel());
  }

  /** Sends an extension notification (its name starts with `_`). */
  extNotification(method: string, params: RawJson | string | null = null): Promise<void> {
    return this.endpoint.extNotify(method, params);
  }

  /** The version `initialize` negotiated, once it has completed. */
  get protocolVersion(): number | null {
    return this.endpoint.negotiated?.version ?? null;
  }

  /** The peer's `initialize` member `member`, decoded (`undefined` before `initialize`). */
  protected peerCapabilities(member: string): unknown {
    const negotiated = this.endpoint.negotiated;
    const peer = (this.endpoint.role === "agent" ? negotiated?.client : negotiated?.agent) as Record<string, unknown> | undefined;
    return peer?.[member];
  }

  /** Whether `sessionId` is a session of this connection: opened by an answer
   * (`session/new`, `session/load`, ...) and not closed since. */
  knowsSession(sessionId: string): boolean {
    return this.endpoint.sessions.has(sessionId);
  }

  /** Resolves once everything sent so far has been written out. */
  flush(): Promise<void> {
    return this.endpoint.peer.flush();
  }

  get isClosed(): boolean {
    return this.endpoint.peer.isClosed;
  }
}
