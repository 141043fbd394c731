/**
 * Tasks: the lifecycle rules and every change to a task as one store commit, and the
 * hub that wakes the streams following a task's log.
 *
 * Nothing leaves a terminal state: a change to a terminal task is refused, whoever makes
 * it. Writers never lock: a change reads the task, applies itself and commits against
 * the version it read; on a conflict it reads again and re-applies, so an executor and a
 * cancel serialise through the store.
 */

import { A2aError } from "../errors.js";
import type { Artifact, Message, RawJson, StreamResponse, Task, TaskStatus } from "../../generated/a2a/v1.js";
import { endsTurn, isTerminal, keyText, StoreError, type EventRecord, type LeaseChange, type PushConfigRecord, type TaskKey, type TaskRecord, type TaskStore } from "./store.js";

/** A change to a task. */
export type Change =
  /** A new status; its message joins the history; `metadata` goes on its event. */
  | { readonly kind: "status"; readonly status: TaskStatus; readonly metadata?: RawJson }
  /** An artifact, or a piece appended to the artifact with the same id. */
  | { readonly kind: "artifact"; readonly artifact: Artifact; readonly append: boolean; readonly lastChunk: boolean }
  /** A message joins the history, no event (a client's follow-up). */
  | { readonly kind: "history"; readonly message: Message };

/** The current time as a canonical timestamp (the text made once per millisecond). */
export function now(): string {
  const ms = Date.now();
  if (ms !== nowMs) {
    nowMs = ms;
    nowText = new Date(ms).toISOString();
  }
  return nowText;
}

let nowMs = Number.NaN;
let nowText = "";

/** `change` applied to `task` (a new task value; `task` is not touched) and its event. */
export function applyChange(task: Task, change: Change): [Task, StreamResponse | null] {
  const contextId = task.contextId ?? "";
  switch (change.kind) {
    case "status": {
      const status: TaskStatus = change.status.timestamp === undefined ? { ...change.status, timestamp: now() } : change.status;
      const history = status.message === undefined ? task.history : [...(task.history ?? []), status.message];
      const next: Task = { ...task, status, history };
      return [next, { statusUpdate: { taskId: task.id, contextId, status, ...(change.metadata === undefined ? {} : { metadata: change.metadata }) } }];
    }
    case "artifact": {
      const artifacts = [...(task.artifacts ?? [])];
      const at = artifacts.findIndex((a) => a.artifactId === change.artifact.artifactId);
      if (at < 0) artifacts.push(change.artifact);
      else if (change.append) artifacts[at] = { ...(artifacts[at] as Artifact), parts: [...(artifacts[at] as Artifact).parts, ...change.artifact.parts] };
      else artifacts[at] = change.artifact;
      const event = { taskId: task.id, contextId, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk };
      return [{ ...task, artifacts }, { artifactUpdate: event }];
    }
    case "history":
      return [{ ...task, history: [...(task.history ?? []), change.message] }, null];
  }
}

/** Whether an event ends a turn (a terminal or interrupted status, a task in one, a message). */
export function eventEndsTurn(event: StreamResponse): boolean {
  if (event.statusUpdate !== undefined) return endsTurn(event.statusUpdate.status.state);
  if (event.task !== undefined) return endsTurn(event.task.status.state);
  return event.message !== undefined;
}

/** The task as a caller asked to see it: at most `historyLength` recent messages (none
 * for 0, all when unset) and, unless `artifacts`, no artifacts. */
export function view(task: Task, historyLength: number | undefined, artifacts = true): Task {
  let out = task;
  const history = task.history ?? [];
  if (historyLength !== undefined && history.length > historyLength) out = { ...out, history: historyLength === 0 ? [] : history.slice(history.length - historyLength) };
  if (!artifacts && task.artifacts !== undefined) out = { ...out, artifacts: [] };
  return out;
}

/** The refusal of a change to a terminal task. */
export function terminalError(id: string): A2aError {
  return new A2aError("UnsupportedOperation", `task ${id} is in a terminal state`).with("taskId", id);
}

/** How a store failure is answered: a missing task is TaskNotFound, anything else internal. */
export function storeFailure(e: unknown): A2aError {
  if (e instanceof A2aError) return e;
  if (e instanceof StoreError && e.code === "not_found" && e.key !== null) return taskNotFound(e.key.id);
  const detail = e instanceof Error ? e.message : String(e);
  return new A2aError("Internal", `store: ${detail}`);
}

/** TaskNotFound for `id`. */
export function taskNotFound(id: string): A2aError {
  return new A2aError("TaskNotFound", `task ${id} not found`).with("taskId", id);
}

/** A task as a writer last committed it, and the version the commit gave it. */
export interface Known {
  readonly task: Task;
  readonly version: number;
}

/** How many times a change is re-applied after losing a race. */
const MAX_RETRIES = 16;

/**
 * Wakes the streams following task logs: a commit calls `notify`, a stream waits with
 * `changed` (registered before it reads, so a commit between its read and its wait is
 * not missed).
 */
export class EventHub {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves at the next commit to `key`, when `signal` aborts, or when `wake` is called
   * (a reader that watches its own signal once for many waits passes none). */
  changed(key: TaskKey, signal?: AbortSignal): { readonly promise: Promise<void>; wake(): void; cancel(): void } {
    const k = keyText(key);
    let wake!: () => void;
    const promise = new Promise<void>((resolve) => (wake = resolve));
    let set = this.waiting.get(k);
    if (set === undefined) this.waiting.set(k, (set = new Set()));
    const waiter = (): void => {
      cancel();
      wake();
    };
    const cancel = (): void => {
      const s = this.waiting.get(k);
      s?.delete(waiter);
      if (s?.size === 0) this.waiting.delete(k);
      signal?.removeEventListener("abort", waiter);
    };
    set.add(waiter);
    signal?.addEventListener("abort", waiter, { once: true });
    return { promise, wake: waiter, cancel };
  }

  notify(key: TaskKey): void {
    const set = this.waiting.get(keyText(key));
    if (set === undefined) return;
    for (const w of [...set]) w();
  }
}

/** The task half of a server: the store and the hub. */
export class Tasks {
  /** Whether commits queue push deliveries (the agent declares push notifications). */
  push = false;
  /** Called after every commit (wakes the push worker). */
  afterCommit: (() => void) | null = null;

  constructor(
    readonly store: TaskStore,
    readonly hub: EventHub = new EventHub(),
  ) {}

  /** Stores a new task: its first event is the task itself, then the events of `changes`. */
  async create(key: TaskKey, task: Task, changes: readonly Change[], lease: LeaseChange, configs: readonly PushConfigRecord[] = []): Promise<[Known, EventRecord[]]> {
    let current = task;
    const events: Array<{ event: StreamResponse; last: boolean }> = [{ event: { task }, last: false }];
    current = this.applyAll(current, changes, events);
    try {
      const committed = await this.store.commit({ key, task: current, expectedVersion: null, events, lease: this.leaseAfter(current, lease), push: this.push, configs });
      this.hub.notify(key);
      this.afterCommit?.();
      return [{ task: current, version: committed.version }, [...committed.events]];
    } catch (e) {
      throw storeFailure(e);
    }
  }

  /** Applies `changes` in one commit, to `known` when given, else to the stored task; a
   * stale `known` loses to a conflict and the changes are applied to the stored task. */
  async apply(key: TaskKey, changes: readonly Change[], known: Known | null, lease: LeaseChange = "keep"): Promise<[Known, EventRecord[]]> {
    let base = known;
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      if (base === null) {
        const rec = await this.read(key);
        base = { task: rec.task, version: rec.version };
      }
      const events: Array<{ event: StreamResponse; last: boolean }> = [];
      const next = this.applyAll(base.task, changes, events);
      try {
        const committed = await this.store.commit({ key, task: next, expectedVersion: base.version, events, lease: this.leaseAfter(next, lease), push: this.push });
        this.hub.notify(key);
        this.afterCommit?.();
        return [{ task: next, version: committed.version }, [...committed.events]];
      } catch (e) {
        if (e instanceof StoreError && e.code === "conflict") {
          base = null;
          continue;
        }
        throw storeFailure(e);
      }
    }
    throw new A2aError("Internal", `task ${key.id} kept changing concurrently; the change was given up`);
  }

  /** The stored task. @throws A2aError TaskNotFound */
  async read(key: TaskKey): Promise<TaskRecord> {
    let rec: TaskRecord | null;
    try {
      rec = await this.store.getTask(key);
    } catch (e) {
      throw storeFailure(e);
    }
    if (rec === null) throw taskNotFound(key.id);
    return rec;
  }

  private applyAll(task: Task, changes: readonly Change[], events: Array<{ event: StreamResponse; last: boolean }>): Task {
    let current = task;
    for (const change of changes) {
      if (isTerminal(current.status.state)) throw terminalError(current.id);
      const [next, event] = applyChange(current, change);
      current = next;
      if (event !== null) events.push({ event, last: event.statusUpdate !== undefined && isTerminal(event.statusUpdate.status.state) });
    }
    return current;
  }

  /** A lease set by a running turn stays while the task is active; any other state clears it. */
  private leaseAfter(task: Task, lease: LeaseChange): LeaseChange {
    const s = task.status.state;
    return s === "TASK_STATE_SUBMITTED" || s === "TASK_STATE_WORKING" ? lease : "clear";
  }
}
