/**
 * The agent's side: an `AgentExecutor` turns one incoming message into task updates
 * through a `TaskUpdater`.
 *
 * The first thing the executor does decides the answer: `reply(message)` answers with a
 * direct message and no task is stored; any other update creates the task (SUBMITTED,
 * the caller's message in its history) and then applies itself, in the same commit.
 * Every update is committed before its promise resolves, in the order the updates were
 * made (one updater's commits never overlap). A cancel aborts `context.signal`; the
 * server then moves the task to CANCELED unless the executor's `cancel` does otherwise.
 */

import { A2aError } from "../errors.js";
import type { Artifact, Message, Part, RawJson, Task, TaskState } from "../../generated/a2a/v1.js";
import { newUuid } from "./ids.js";
import { endsTurn, type EventRecord, type PushConfigRecord, type TaskKey } from "./store.js";
import { type Change, type Known, type Tasks } from "./tasks.js";

/** What the executor is asked to do. */
export interface RequestContext {
  /** The caller's message (with its task and context ids filled in). */
  readonly message: Message;
  /** The task the message continues, as it was before the message; `undefined` for a new one. */
  readonly task: Task | undefined;
  readonly taskId: string;
  readonly contextId: string;
  /** The tenant of the call (`""`: the default one). */
  readonly tenant: string;
  /** The authenticated caller, if any. */
  readonly principal: Principal | null;
  /** `SendMessageRequest.metadata`. */
  readonly metadata: RawJson | undefined;
  /** Aborts when the task is canceled or the server shuts down. */
  readonly signal: AbortSignal;
  /** The text parts of the message, joined. */
  text(): string;
}

/** An authenticated caller, as the server's auth hook found it. */
export interface Principal {
  /** Who the caller is. */
  readonly subject: string;
  /** The tenant the caller is bound to, if its credential maps to one. */
  readonly tenant?: string;
}

/** Agent logic: `execute` runs once per incoming message. A rejected promise fails the
 * task (or answers the error when nothing was sent yet); a resolved one with the task
 * still active leaves it for later messages. */
export interface AgentExecutor {
  execute(context: RequestContext, updater: TaskUpdater): Promise<void>;
  /** Called by CancelTask after `context.signal` aborted; the default moves the task to
   * CANCELED (`updater.cancel()`). */
  cancel?(context: RequestContext, updater: TaskUpdater): Promise<void>;
}

/** What the first update of a turn was, for the request waiting on it. */
export type First =
  | { readonly kind: "message"; readonly message: Message }
  | { readonly kind: "task"; readonly seq: number }
  | { readonly kind: "failed"; readonly error: A2aError };

function ignore(): void {}

/** The promise of a commit done at once. */
const COMMITTED: Promise<void> = Promise.resolve();

/** A promise with its resolver; the first `resolve` counts. */
export class Deferred<T> {
  readonly promise: Promise<T>;
  settled = false;
  private fulfil!: (value: T) => void;
  constructor() {
    this.promise = new Promise<T>((resolve) => {
      this.fulfil = resolve;
    });
  }

  resolve(value: T): void {
    if (this.settled) return;
    this.settled = true;
    this.fulfil(value);
  }
}

/** Which piece of an artifact an update carries. */
export interface ArtifactPiece {
  /** Adds the parts to those of the artifact with the same id (default false). */
  readonly append?: boolean;
  /** This piece is the artifact's last (default true). */
  readonly lastChunk?: boolean;
}

/** Updates one task. All updates of one turn are committed in order. */
export class TaskUpdater {
  /** Told what the first update was. */
  readonly first = new Deferred<First>();
  /** Given the task when an update ends the turn (a terminal or interrupted state), or
   * `null` when the executor's run is over without such an update. */
  readonly turnEnd = new Deferred<Task | null>();
  private create: Task | null;
  /** Push configs stored with the task's creation. */
  private readonly configs: readonly PushConfigRecord[];
  private known: Known | null;
  /** Changes queued and not yet settled. */
  private pending = 0;
  /** The last change queued: the next one starts when it has settled. */
  private last: Promise<void> | null = null;

  constructor(
    private readonly tasks: Tasks,
    readonly key: TaskKey,
    readonly contextId: string,
    start: { readonly create: Task | null; readonly known: Known | null; readonly configs?: readonly PushConfigRecord[] },
    private readonly owner: string,
    private readonly leaseMs = 60_000,
  ) {
    this.create = start.create;
    this.known = start.known;
    this.configs = start.configs ?? [];
  }

  get taskId(): string {
    return this.key.id;
  }

  /** Whether the first update happened (the task exists or a reply was sent). */
  get started(): boolean {
    return this.first.settled;
  }

  /** A message from the agent in this task's context. */
  agentMessage(parts: Part[]): Message {
    return { messageId: newUuid(), contextId: this.contextId, taskId: this.key.id, role: "ROLE_AGENT", parts };
  }

  /** A text message from the agent. */
  textMessage(text: string): Message {
    return this.agentMessage([{ text }]);
  }

  /** Answers with a direct message and no task. Only valid as the first update. */
  async reply(message: Message): Promise<void> {
    if (this.create === null || this.first.settled) throw new A2aError("InvalidAgentResponse", "a direct reply must be the first thing an executor sends");
    this.create = null;
    const { taskId: _dropped, ...rest } = message;
    this.first.resolve({ kind: "message", message: { ...rest, contextId: message.contextId ?? this.contextId } });
  }

  /** Moves the task to `state`, with an optional status message. */
  status(state: TaskState, message?: Message): Promise<void> {
    return this.change({ kind: "status", status: message === undefined ? { state } : { state, message } });
  }

  working(message?: Message): Promise<void> {
    return this.status("TASK_STATE_WORKING", message);
  }
  /** COMPLETED (terminal), usually with the answer as `message`. */
  complete(message?: Message): Promise<void> {
    return this.status("TASK_STATE_COMPLETED", message);
  }
  /** FAILED (terminal). */
  fail(message?: Message): Promise<void> {
    return this.status("TASK_STATE_FAILED", message);
  }
  /** REJECTED (terminal): the agent will not do it. */
  reject(message?: Message): Promise<void> {
    return this.status("TASK_STATE_REJECTED", message);
  }
  /** INPUT_REQUIRED: the turn ends; the next message on the task starts another. */
  requireInput(message?: Message): Promise<void> {
    return this.status("TASK_STATE_INPUT_REQUIRED", message);
  }
  /** AUTH_REQUIRED: the turn ends until the caller has authenticated. */
  requireAuth(message?: Message): Promise<void> {
    return this.status("TASK_STATE_AUTH_REQUIRED", message);
  }
  /** CANCELED (terminal). */
  cancel(): Promise<void> {
    return this.status("TASK_STATE_CANCELED");
  }

  /** Adds an artifact (one with the same id is replaced), or a piece of one. */
  addArtifact(artifact: Artifact, piece: ArtifactPiece = {}): Promise<void> {
    return this.change({ kind: "artifact", artifact, append: piece.append ?? false, lastChunk: piece.lastChunk ?? true });
  }

  /** Queues `change` behind this updater's earlier ones and commits it (at once when none
   * is pending: most executors await each update before the next). */
  private change(change: Change): Promise<void> {
    const idle = this.pending === 0;
    this.pending++;
    let run: Promise<void>;
    if (idle) run = this.commit(change);
    else {
      const next = (): Promise<void> => this.commit(change);
      run = (this.last as Promise<void>).then(next, next);
    }
    this.last = run;
    return run;
  }

  private commit(change: Change): Promise<void> {
    if (this.tasks.immediate === null) return this.commitLater(change);
    // The memory store: the commit is done now, and its promise is an already settled one.
    try {
      this.commitNow(change);
      return COMMITTED;
    } catch (e) {
      return Promise.reject(e);
    } finally {
      this.pending--;
    }
  }

  private commitNow(change: Change): void {
    const lease = { set: { owner: this.owner, untilMs: Date.now() + this.leaseMs } };
    try {
      let result;
      const task = this.create;
      if (task !== null) {
        this.create = null;
        result = this.tasks.createNow(this.key, task, [change], lease, this.configs);
      } else {
        result = this.tasks.applyNow(this.key, [change], this.known, lease);
      }
      this.committed(result);
    } catch (e) {
      throw this.failed(e);
    }
  }

  private async commitLater(change: Change): Promise<void> {
    const lease = { set: { owner: this.owner, untilMs: Date.now() + this.leaseMs } };
    try {
      let result;
      const task = this.create;
      if (task !== null) {
        this.create = null;
        result = await this.tasks.create(this.key, task, [change], lease, this.configs);
      } else {
        result = await this.tasks.apply(this.key, [change], this.known, lease);
      }
      this.committed(result);
    } catch (e) {
      throw this.failed(e);
    } finally {
      this.pending--;
    }
  }

  /** What a commit tells: the first update's sequence number, the task as it is now, the
   * turn's end. */
  private committed(result: readonly [Known, readonly EventRecord[]]): void {
    if (!this.first.settled) this.first.resolve({ kind: "task", seq: result[1][0]?.seq ?? 1 });
    this.known = result[0];
    if (endsTurn(result[0].task.status.state)) this.turnEnd.resolve(result[0].task);
  }

  /** A failed commit: the first update's failure when it was the first; the error to throw. */
  private failed(e: unknown): A2aError {
    const error = e instanceof A2aError ? e : new A2aError("Internal", String(e));
    this.first.resolve({ kind: "failed", error });
    return error;
  }

  /** Waits until every update made so far is committed. */
  flush(): Promise<void> {
    return this.pending === 0 || this.last === null ? Promise.resolve() : this.last.then(ignore, ignore);
  }
}
