/** `Context`: what a role's handler receives besides its params. */

import type { RequestId } from "../jsonrpc/id.js";
import type { RequestContext } from "../jsonrpc/handler.js";

/** The connection to the other side (`peer`) and the cancellation of the message being handled. */
export class Context<P> {
  private handles = false;

  constructor(
    /** The connection to the other side. Inside a prompt turn (agent side) its calls end
     * with `Cancelled` when the turn is cancelled, and the pending request is cancelled
     * with `$/cancel_request`. */
    readonly peer: P,
    private readonly rpc: RequestContext | null,
    /** Aborts when the request is cancelled: by `$/cancel_request`, by `session/cancel`
     * for a prompt turn (agent side) or a permission request (client side), or because
     * the connection is shutting down. */
    readonly signal: AbortSignal,
    /** Whether outgoing messages are validated (`AcpOptions.strict`). */
    readonly strict: boolean,
    /** Reports a handler failure the answer hides (`AcpOptions.onError`); the runtime's. */
    readonly reportFailure: (method: string, error: unknown) => void = () => {},
  ) {}

  /** The id of the request being handled (`null` in a notification handler). */
  get requestId(): RequestId | null {
    return this.rpc === null ? null : this.rpc.id;
  }

  get isCancelled(): boolean {
    return this.signal.aborted;
  }

  /** By default a cancelled request's handler is dropped and the connection answers for
   * it (-32800; `stopReason: "cancelled"` for a prompt; the `cancelled` outcome for a
   * permission request). After this call the handler's own return value is sent instead
   * (a prompt's stop reason is still forced to `cancelled`). Call it before the first `await`. */
  handleCancellation(): void {
    this.handles = true;
    this.rpc?.handleCancellation();
  }

  get handlesCancellation(): boolean {
    return this.handles;
  }
}
