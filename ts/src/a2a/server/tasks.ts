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
import type { Artifact, Message, RawJson, StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent } from "../../generated/a2a/v1.js";
import { MemoryStore } from "./memory-store.js";
import { endsTurn, isTerminal, keyText, StoreError, type Committed, type EventRecord, type LeaseChange, type PushConfigRecord, type TaskKey, type TaskRecord, type TaskStore } from "./store.js";

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
      const status: TaskStatus = change.status.timestamp === undefined ? stamped(change.status) : change.status;
      const history = status.message === undefined ? task.history : [...(task.history ?? []), status.message];
      const update: TaskStatusUpdateEvent = { taskId: task.id, contextId, status };
      if (change.metadata !== undefined) update.metadata = change.metadata;
      return [copyTask(task, status, task.artifacts, history), { statusUpdate: update }];
    }
    case "artifact": {
      const artifacts = task.artifacts === undefined ? [] : task.artifacts.slice();
      const id = change.artifact.artifactId;
      let at = -1;
      for (let i = 0; i < artifacts.length; i++) {
        if ((artifacts[i] as Artifact).artifactId === id) {
          at = i;
          break;
        }
      }
      if (at < 0) artifacts.push(change.artifact);
      else if (change.append) artifacts[at] = { ...(artifacts[at] as Artifact), parts: [...(artifacts[at] as Artifact).parts, ...change.artifact.parts] };
      else artifacts[at] = change.artifact;
      const event = { taskId: task.id, contextId, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk };
      return [copyTask(task, task.status, artifacts, task.history), { artifactUpdate: event }];
    }
    case "history":
      return [copyTask(task, task.status, task.artifacts, [...(task.history ?? []), change.message]), null];
  }
}

/** A task like `task` with these members, in the message's field order (members that are
 * `undefined` left out). Built member by member rather than spread: a spread of tasks of
 * changing shapes falls to V8's slow path, and this is on every commit. */
function copyTask(task: Task, status: TaskStatus, artifacts: Artifact[] | undefined, history: Message[] | undefined): Task {
  const { id, contextId } = task;
  // The server's own tasks: one literal each, every member in the object itself.
  if (contextId !== undefined && task.metadata === undefined) {
    if (artifacts !== undefined) return history !== undefined ? { id, contextId, status, artifacts, history } : { id, contextId, status, artifacts };
    return history !== undefined ? { id, contextId, status, history } : { id, contextId, status };
  }
  const out = { id } as Task;
  if (task.contextId !== undefined) out.contextId = task.contextId;
  out.status = status;
  if (artifacts !== undefined) out.artifacts = artifacts;
  if (history !== undefined) out.history = history;
  if (task.metadata !== undefined) out.metadata = task.metadata;
  return out;
}

/** `status` with the current time. Not `{ ...status, timestamp }`: V8 gives every object a
 * spread of a small one makes a hidden class of its own, kept as long as the object is. */
function stamped(status: TaskStatus): TaskStatus {
  return status.message === undefined ? { state: status.state, timestamp: now() } : { state: status.state, message: status.message, timestamp: now() };
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
  const history = task.history ?? [];
  const cut = historyLength !== undefined && history.length > historyLength;
  const drop = !artifacts && task.artifacts !== undefined;
  if (!cut && !drop) return task;
  return copyTask(task, task.status, drop ? [] : task.artifacts, cut ? (historyLength === 0 ? [] : history.slice(history.length - historyLength)) : task.history);
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

/** What the hub wakes: a stream waiting for a task's next commit. */
export interface HubWaiter {
  wake(): void;
}

/**
 * Wakes the streams following task logs: a commit calls `notify`, a stream waits with
 * `changed` (registered before it reads, so a commit between its read and its wait is
 * not missed), or stays registered with `watch` while it follows a log.
 */
export class EventHub {
  /** By task key text: its one waiter, or a set of them. */
  private readonly waiting = new Map<string, HubWaiter | Set<HubWaiter>>();

  /** Resolves at the next commit to `key`, when `signal` aborts, or when `wake` is called
   * (a reader that watches its own signal once for many waits passes none). */
  changed(key: TaskKey, signal?: AbortSignal): { readonly promise: Promise<void>; wake(): void; cancel(): void } {
    const k = keyText(key);
    let wake!: () => void;
    const promise = new Promise<void>((resolve) => (wake = resolve));
    const waiter = {
      wake: (): void => {
        cancel();
        wake();
      },
    };
    const cancel = (): void => {
      this.unwatch(k, waiter);
      signal?.removeEventListener("abort", waiter.wake);
    };
    this.watch(k, waiter);
    signal?.addEventListener("abort", waiter.wake, { once: true });
    return { promise, wake: waiter.wake, cancel };
  }

  /** Wakes `waiter` at every commit to the task of `keyText` `k` until `unwatch`. */
  watch(k: string, waiter: HubWaiter): void {
    const held = this.waiting.get(k);
    if (held === undefined) this.waiting.set(k, waiter);
    else if (held instanceof Set) held.add(waiter);
    else if (held !== waiter) this.waiting.set(k, new Set([held, waiter]));
  }

  unwatch(k: string, waiter: HubWaiter): void {
    const held = this.waiting.get(k);
    if (held === waiter) this.waiting.delete(k);
    else if (held instanceof Set) {
      held.delete(waiter);
      if (held.size === 0) this.waiting.delete(k);
    }
  }

  notify(key: TaskKey): void {
    if (this.waiting.size === 0) return;
    const held = this.waiting.get(keyText(key));
    if (held === undefined) return;
    if (held instanceof Set) for (const w of [...held]) w.wake();
    else held.wake();
  }
}

/** The task half of a server: the store and the hub. */
export class Tasks {
  /** Whether commits queue push deliveries (the agent declares push notifications). */
  push = false;
  /** Called after every commit (wakes the push worker). */
  afterCommit: (() => void) | null = null;
  /** The store when it is the memory store (its `commit` and `getTask` its own): its work
   * is done at once, and `createNow`, `applyNow` and `readNow` skip the promises. */
  readonly immediate: MemoryStore | null;

  constructor(
    readonly store: TaskStore,
    readonly hub: EventHub = new EventHub(),
  ) {
    this.immediate = store instanceof MemoryStore && store.commit === MemoryStore.prototype.commit && store.getTask === MemoryStore.prototype.getTask ? store : null;
  }

  /** Stores a new task: its first event is the task itself, then the events of `changes`. */
  async create(key: TaskKey, task: Task, changes: readonly Change[], lease: LeaseChange, configs: readonly PushConfigRecord[] = []): Promise<[Known, readonly EventRecord[]]> {
    if (this.immediate !== null) return this.createNow(key, task, changes, lease, configs);
    const events: Array<{ event: StreamResponse; last: boolean }> = [{ event: { task }, last: false }];
    const current = this.applyAll(task, changes, events);
    try {
      const committed = await this.store.commit({ key, task: current, expectedVersion: null, events, lease: this.leaseAfter(current, lease), push: this.push, configs });
      return this.committed(key, current, committed);
    } catch (e) {
      throw storeFailure(e);
    }
  }

  /** `create` on the memory store (`immediate`), done at once. @throws A2aError */
  createNow(key: TaskKey, task: Task, changes: readonly Change[], lease: LeaseChange, configs: readonly PushConfigRecord[] = []): [Known, readonly EventRecord[]] {
    const events: Array<{ event: StreamResponse; last: boolean }> = [{ event: { task }, last: false }];
    const current = this.applyAll(task, changes, events);
    try {
      const committed = (this.immediate as MemoryStore).commitNow({ key, task: current, expectedVersion: null, events, lease: this.leaseAfter(current, lease), push: this.push, configs });
      return this.committed(key, current, committed);
    } catch (e) {
      throw storeFailure(e);
    }
  }

  /** Applies `changes` in one commit, to `known` when given, else to the stored task; a
   * stale `known` loses to a conflict and the changes are applied to the stored task. */
  async apply(key: TaskKey, changes: readonly Change[], known: Known | null, lease: LeaseChange = "keep"): Promise<[Known, readonly EventRecord[]]> {
    if (this.immediate !== null) return this.applyNow(key, changes, known, lease);
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
        return this.committed(key, next, committed);
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

  /** `apply` on the memory store (`immediate`), done at once. @throws A2aError */
  applyNow(key: TaskKey, changes: readonly Change[], known: Known | null, lease: LeaseChange = "keep"): [Known, readonly EventRecord[]] {
    const store = this.immediate as MemoryStore;
    let base = known;
    for (let attempt = 0; attempt < MAX_RETRIES; attempt++) {
      if (base === null) {
        const rec = this.readNow(key);
        base = { task: rec.task, version: rec.version };
      }
      const events: Array<{ event: StreamResponse; last: boolean }> = [];
      const next = this.applyAll(base.task, changes, events);
      try {
        const committed = store.commitNow({ key, task: next, expectedVersion: base.version, events, lease: this.leaseAfter(next, lease), push: this.push });
        return this.committed(key, next, committed);
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

  /** After a commit: the streams and the push worker woken; what the writer knows now. */
  private committed(key: TaskKey, task: Task, committed: Committed): [Known, readonly EventRecord[]] {
    this.hub.notify(key);
    this.afterCommit?.();
    return [{ task, version: committed.version }, committed.events];
  }

  /** The stored task. @throws A2aError TaskNotFound */
  async read(key: TaskKey): Promise<TaskRecord> {
    if (this.immediate !== null) return this.readNow(key);
    let rec: TaskRecord | null;
    try {
      rec = await this.store.getTask(key);
    } catch (e) {
      throw storeFailure(e);
    }
    if (rec === null) throw taskNotFound(key.id);
    return rec;
  }

  /** `read` on the memory store (`immediate`), done at once. @throws A2aError TaskNotFound */
  readNow(key: TaskKey): TaskRecord {
    let rec: TaskRecord | null;
    try {
      rec = (this.immediate as MemoryStore).getTaskNow(key);
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
