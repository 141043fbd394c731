/**
 * Recovery: what ends a turn whose server died, as the Rust SDK's `recovery` module does.
 *
 * While a turn runs, its task carries a lease: this server's id (`A2aCore.replica`) and a
 * deadline. The turn's commits set it, the server renews the leases of its running turns
 * every third of the lease, a commit that leaves the task anything but SUBMITTED or
 * WORKING clears it, and so does the end of the turn. A server that dies renews nothing.
 *
 * The orphan rule: a task that is SUBMITTED or WORKING and whose lease has run out lost
 * its turn. The server sweeps for such tasks when it starts and then every half lease,
 * and marks each FAILED, with an agent message saying the turn was interrupted and
 * metadata `{"agentproto":{"interrupted":{"replica","leaseUntilMs"}}}` on the status
 * event, through the ordinary commit (the task's last event: streams following it end;
 * push deliveries are queued). The commit happens only while the lease is still expired
 * (`clearExpired`), so a renewal that lands first keeps the turn. Turns are not run again.
 * A lease left on a task that is no longer active is cleared without an event.
 */

import { RawJson } from "../../codec/values.js";
import type { Message } from "../../generated/a2a/v1.js";
import { StoreError, type TaskKey } from "./store.js";
import { applyChange, type Tasks } from "./tasks.js";

/** The lease and sweep timing. */
export interface RecoveryOptions {
  /** How long a turn's lease lasts after its last renewal (default 60 s). */
  readonly leaseMs?: number;
  /** How often the sweep runs after the one at start (default half the lease; 0: only at start). */
  readonly sweepIntervalMs?: number;
}

/** What recovery needs of the server: its tasks, its running turns and its id. */
export interface RecoveryHost {
  readonly tasks: Tasks;
  readonly running: ReadonlyMap<string, { readonly updater: { readonly key: TaskKey } }>;
  readonly replica: string;
}

/** How many orphans one sweep looks at, at most. */
const SWEEP_BATCH = 256;

const INTERRUPTED_TEXT =
  "The turn working on this task was interrupted: the server running it stopped (a restart, or a lost replica) before it finished. Turns are not run again; send the request again to start a new task.";

/** The lease renewal and the orphan sweep of one server. */
export class Recovery {
  readonly leaseMs: number;
  private readonly timers: Array<ReturnType<typeof setInterval>> = [];

  constructor(
    private readonly host: RecoveryHost,
    private readonly options: RecoveryOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 60_000;
  }

  /** Sweeps now, then renews and sweeps periodically (timers that keep no process alive). */
  start(): void {
    void this.sweep().catch(() => undefined);
    const renew = setInterval(() => void this.renew().catch(() => undefined), Math.max(1, Math.floor(this.leaseMs / 3)));
    renew.unref();
    this.timers.push(renew);
    const every = this.options.sweepIntervalMs ?? Math.floor(this.leaseMs / 2);
    if (every > 0) {
      const sweep = setInterval(() => void this.sweep().catch(() => undefined), every);
      sweep.unref();
      this.timers.push(sweep);
    }
  }

  stop(): void {
    for (const t of this.timers.splice(0)) clearInterval(t);
  }

  /** Extends the leases of this server's running turns. */
  async renew(): Promise<number> {
    const keys = [...this.host.running.values()].map((r) => r.updater.key);
    if (keys.length === 0) return 0;
    return this.host.tasks.store.renewLeases(this.host.replica, keys, Date.now() + this.leaseMs);
  }

  /** Ends the orphaned turns (those whose lease ran out before `nowMs`); returns how many
   * tasks it marked FAILED. */
  async sweep(nowMs = Date.now()): Promise<number> {
    const own = new Set([...this.host.running.values()].map((r) => `${r.updater.key.tenant.length}:${r.updater.key.tenant}/${r.updater.key.id}`));
    let failed = 0;
    for (const key of await this.host.tasks.store.expiredLeases(nowMs, SWEEP_BATCH)) {
      if (own.has(`${key.tenant.length}:${key.tenant}/${key.id}`)) continue;
      if (await this.sweepOne(key, nowMs)) failed++;
    }
    return failed;
  }

  /** Ends one orphan; whether it marked the task FAILED. */
  private async sweepOne(key: TaskKey, nowMs: number): Promise<boolean> {
    const { tasks } = this.host;
    for (let attempt = 0; attempt < 16; attempt++) {
      const rec = await tasks.store.getTask(key);
      if (rec === null || rec.lease === null || rec.lease.untilMs >= nowMs) return false;
      const lease = { clearExpired: nowMs };
      const active = rec.state === "TASK_STATE_SUBMITTED" || rec.state === "TASK_STATE_WORKING";
      try {
        if (!active) {
          await tasks.store.commit({ key, task: rec.task, expectedVersion: rec.version, events: [], lease });
          return false;
        }
        const message: Message = { messageId: crypto.randomUUID(), role: "ROLE_AGENT", parts: [{ text: INTERRUPTED_TEXT }], taskId: rec.task.id, ...(rec.task.contextId ? { contextId: rec.task.contextId } : {}) };
        const metadata = new RawJson(JSON.stringify({ agentproto: { interrupted: { replica: rec.lease.owner, leaseUntilMs: rec.lease.untilMs } } }));
        const [task, event] = applyChange(rec.task, { kind: "status", status: { state: "TASK_STATE_FAILED", message }, metadata });
        await tasks.store.commit({ key, task, expectedVersion: rec.version, events: event === null ? [] : [{ event, last: true }], lease, push: tasks.push });
        tasks.hub.notify(key);
        tasks.afterCommit?.();
        return true;
      } catch (e) {
        if (e instanceof StoreError && e.code === "conflict") continue;
        if (e instanceof StoreError && e.code === "lease_live") return false;
        throw e;
      }
    }
    return false;
  }
}
