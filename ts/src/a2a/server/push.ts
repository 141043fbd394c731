/**
 * Push delivery: the worker that drains the store's outbox. A commit of a task with push
 * configs queues one delivery per (event, config) in the same atomic step as the events
 * (`Commit.push`); the worker claims due deliveries under a lease, POSTs each event to its
 * config's URL, and records the outcome: done, retried later, or a dead letter.
 *
 * - At least once: a delivery leaves the outbox only on a 2xx answer or as a dead letter;
 *   one claimed by a worker that stopped is claimed again when its lease ends. Receivers
 *   see duplicates and should deduplicate (the `(task, event)` pair is stable).
 * - One at a time per (task, config), in sequence order; a retry can arrive after the
 *   events that followed it (no head-of-line blocking).
 * - 2xx: done. 408, 429, 5xx, a timeout or a connection failure: retried after an
 *   exponential backoff (or the `Retry-After` seconds of a 429/503, capped), until
 *   `maxAttempts`. Any other answer (3xx: redirects are not followed; other 4xx), a
 *   deleted config, or a target the SSRF guard refuses: a dead letter at once.
 *
 * The request: `POST url`, `Content-Type: application/a2a+json`, `A2A-Version: 1.0`, the
 * event's ProtoJSON as stored, the config's token in `X-A2A-Notification-Token` and
 * `A2A-Notification-Token`, and `Authorization: scheme credentials` when it has them.
 */

import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";

import { GuardRefusal, SsrfGuard, type GuardOptions } from "./push-guard.js";
import type { Delivery, TaskStore } from "./store.js";

/** How the worker delivers. */
export interface PushOptions extends GuardOptions {
  /** Attempts per delivery, the first included (default 8). */
  readonly maxAttempts?: number;
  /** The wait after the first failed attempt, doubled after each (default 1 s). */
  readonly initialBackoffMs?: number;
  /** The longest wait between two attempts (default 5 min). */
  readonly maxBackoffMs?: number;
  /** One attempt, connection included, must finish within this (default 10 s). */
  readonly requestTimeoutMs?: number;
  /** How long a claimed delivery stays hidden from other claimers (default 60 s). */
  readonly leaseMs?: number;
  /** The most deliveries claimed at once (default 64). */
  readonly batch?: number;
  /** The longest the worker sleeps without looking at the store (default 5 s). */
  readonly pollIntervalMs?: number;
  /** Told every recorded outcome (logging, metrics, tests): `error` is what the attempt
   * found when it was not delivered. */
  readonly onRecord?: (delivery: Delivery, outcome: "done" | "retry" | "dead", error: string | null) => void;
}

/** What one attempt found. */
type Outcome = { readonly kind: "done" } | { readonly kind: "retry"; readonly error: string; readonly afterMs: number | null } | { readonly kind: "dead"; readonly error: string };

/** The push worker of one server. */
export class PushWorker {
  readonly guard: SsrfGuard;
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private running: Promise<void> | null = null;
  private readonly inFlight = new Set<AbortController>();

  constructor(
    private readonly store: TaskStore,
    private readonly options: PushOptions = {},
  ) {
    this.guard = new SsrfGuard(options);
  }

  /** Starts the delivery loop (once). */
  start(): void {
    this.running ??= this.loop();
  }

  /** Looks at the outbox now (after a commit that may have queued deliveries). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops the loop; attempts in flight are aborted (their deliveries stay queued). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const a of this.inFlight) a.abort();
    this.wakeUp?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    const batch = this.options.batch ?? 64;
    const leaseMs = this.options.leaseMs ?? 60_000;
    const poll = this.options.pollIntervalMs ?? 5_000;
    while (!this.stopped) {
      this.woken = false;
      let claimed: Delivery[] = [];
      let next: number | null = null;
      try {
        const now = Date.now();
        claimed = await this.store.claimDeliveries(now, now + leaseMs, batch);
        await this.deliverAll(claimed);
        if (claimed.length < batch) next = await this.store.nextDeliveryDue();
      } catch {
        // The store failed (closing, or a database error): try again after the poll interval.
      }
      if (this.stopped) return;
      if (claimed.length === batch || this.woken) continue;
      const waitMs = Math.max(0, Math.min(poll, next === null ? poll : next - Date.now()));
      if (waitMs > 0) await this.sleep(waitMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      const wake = (): void => done();
      this.wakeUp = wake;
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    }).finally(() => {
      this.wakeUp = null;
    });
  }

  /** Deliveries of one (task, config) one after the other; the groups concurrently. */
  private async deliverAll(claimed: readonly Delivery[]): Promise<void> {
    const groups = new Map<string, Delivery[]>();
    for (const d of claimed) {
      const g = `${d.task.tenant.length}:${d.task.tenant}/${d.task.id.length}:${d.task.id}/${d.configId}`;
      const list = groups.get(g);
      if (list === undefined) groups.set(g, [d]);
      else list.push(d);
    }
    await Promise.all(
      [...groups.values()].map(async (list) => {
        for (const d of list) {
          if (this.stopped) return;
          await this.record(d, await this.attempt(d));
        }
      }),
    );
  }

  private async record(d: Delivery, outcome: Outcome): Promise<void> {
    if (this.stopped && outcome.kind === "retry") return; // stays leased; claimed again later
    const maxAttempts = this.options.maxAttempts ?? 8;
    const told = (kind: "done" | "retry" | "dead", error: string | null): void => this.options.onRecord?.(d, kind, error);
    if (outcome.kind === "done") {
      await this.store.deliveryDone(d.id);
      return told("done", null);
    }
    const error = outcome.kind === "dead" || d.attempts + 1 < maxAttempts ? outcome.error : `gave up after ${d.attempts + 1} attempts: ${outcome.error}`;
    if (outcome.kind === "dead" || d.attempts + 1 >= maxAttempts) {
      await this.store.deliveryDead(d.id, Date.now(), error);
      return told("dead", error);
    }
    const initial = this.options.initialBackoffMs ?? 1_000;
    const max = this.options.maxBackoffMs ?? 300_000;
    const backoff = Math.min(max, outcome.afterMs ?? initial * 2 ** d.attempts);
    await this.store.deliveryRetry(d.id, Date.now() + backoff, error);
    told("retry", error);
  }

  /** One POST of one delivery. */
  private async attempt(d: Delivery): Promise<Outcome> {
    if (d.config === null) return { kind: "dead", error: `the push config ${JSON.stringify(d.configId)} was deleted` };
    if (d.event === null) return { kind: "dead", error: `event ${d.seq} is no longer in the task's log` };
    let url: URL;
    try {
      url = this.guard.checkUrl(d.config.url);
    } catch (e) {
      return { kind: "dead", error: (e as Error).message };
    }
    const headers: Record<string, string> = { "content-type": "application/a2a+json", "a2a-version": "1.0", "content-length": String(Buffer.byteLength(d.event)) };
    if (d.config.token) {
      headers["x-a2a-notification-token"] = d.config.token;
      headers["a2a-notification-token"] = d.config.token;
    }
    const auth = d.config.authentication;
    if (auth !== undefined && auth.scheme) headers["authorization"] = auth.credentials ? `${auth.scheme} ${auth.credentials}` : auth.scheme;
    const abort = new AbortController();
    this.inFlight.add(abort);
    try {
      return await this.post(url, headers, d.event, abort.signal);
    } finally {
      this.inFlight.delete(abort);
    }
  }

  private post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<Outcome> {
    const timeoutMs = this.options.requestTimeoutMs ?? 10_000;
    return new Promise<Outcome>((resolve) => {
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      const req = send(url, { method: "POST", headers, lookup: this.guard.guardedLookup as never, signal, timeout: timeoutMs, agent: false }, (res) => resolve(answered(res)));
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on("close", () => clearTimeout(timer));
      req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (e instanceof GuardRefusal || e.code === "ESSRF") resolve({ kind: "dead", error: e.message });
        else resolve({ kind: "retry", error: `request failed: ${e.message}`, afterMs: null });
      });
      req.end(body);
    });
  }
}

/** The outcome of an answer (its body is read, a short excerpt kept for the error). */
function answered(res: IncomingMessage): Promise<Outcome> {
  return new Promise((resolve) => {
    let excerpt = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      if (excerpt.length < 200) excerpt += chunk.slice(0, 200 - excerpt.length);
    });
    const finish = (): void => {
      const status = res.statusCode ?? 0;
      const error = `HTTP ${status}${excerpt ? `: ${excerpt}` : ""}`;
      if (status >= 200 && status < 300) return resolve({ kind: "done" });
      if (status === 408 || status === 429 || status >= 500) {
        const after = Number(res.headers["retry-after"]);
        resolve({ kind: "retry", error, afterMs: (status === 429 || status === 503) && Number.isFinite(after) && after >= 0 ? after * 1000 : null });
        return;
      }
      resolve({ kind: "dead", error });
    };
    res.on("end", finish);
    res.on("error", () => resolve({ kind: "retry", error: "the answer broke off", afterMs: null }));
  });
}
