/** Helpers for tests that run real processes: a client that collects what it sees, and
 * a bounded wait. Every spawned agent is closed (its group killed) by the caller. */

import type * as v1 from "../src/acp/v1.js";

export const LIMIT = 10_000;

export async function within<T>(promise: Promise<T>, what: string, ms = LIMIT): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A client that keeps the text chunks and tool-call updates it is sent, and answers permissions from `allow`. */
export class Collect implements v1.Client {
  readonly chunks: string[] = [];
  private waiters: (() => void)[] = [];

  constructor(private readonly allow = true) {}

  requestPermission(_cx: v1.ClientContext, params: v1.RequestPermissionRequest): v1.RequestPermissionResponse {
    const kind = this.allow ? "allow_once" : "reject_once";
    const option = params.options.find((o) => o.kind === kind);
    return option === undefined ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId: option.optionId } };
  }

  sessionUpdate(_cx: v1.ClientContext, params: v1.SessionNotification): void {
    const update = params.update;
    if ("sessionUpdate" in update && update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      this.chunks.push(update.content.text);
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves once `n` chunks arrived. */
  async chunksArrived(n: number): Promise<void> {
    while (this.chunks.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}
