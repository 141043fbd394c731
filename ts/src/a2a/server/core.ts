/**
 * The binding-neutral server: one decoded request and its call context in, one answer
 * (a value, or a stream of events) out. The HTTP bindings (`http.ts`) only translate to
 * and from it. The sends are in `send.ts`.
 */

import { A2aError } from "../errors.js";
import type { A2aRequest, AgentCard, ListTasksRequest, OperationName, Operations, TaskPushNotificationConfig } from "../../generated/a2a/v1.js";
import type { AgentExecutor, Principal, TaskUpdater } from "./executor.js";
import { MemoryStore } from "./memory-store.js";
import { GuardRefusal } from "./push-guard.js";
import { PushWorker, type PushOptions } from "./push.js";
import { Recovery, type RecoveryOptions } from "./recovery.js";
import { isTerminal, type TaskKey, type TaskStore } from "./store.js";
import { follow, prefixed, type StopSignal, type StreamOut } from "./stream.js";
import { storeFailure, Tasks, taskNotFound, view } from "./tasks.js";
import { send } from "./send.js";

/** Who is calling and on whose behalf, as the binding and the auth hook found it. */
export interface CallContext {
  /** The tenant every task key of the call is scoped to (`""`: the default one). */
  readonly tenant: string;
  readonly principal: Principal | null;
  /** `Last-Event-ID` of a subscription: the sequence number of the last event seen. */
  readonly lastEventId: number | null;
}

/** An operation's answer: its response message, or the events of a streaming one. */
export type Answer =
  | { readonly kind: "value"; readonly value: Operations[OperationName]["result"] }
  /** `open` starts reading the events; `signal` (an `AbortSignal`, or any `StopSignal`)
   * aborts when the reader goes away. */
  | { readonly kind: "stream"; readonly open: (signal: StopSignal) => AsyncGenerator<StreamOut> };

/** A check run on every call once its operation and caller are known; it refuses the
 * call by throwing an `A2aError`. (The vector runner records requests with one.) */
export type Interceptor = (cx: CallContext, request: A2aRequest) => void;

/** Options of the core. */
export interface CoreOptions {
  /** The public agent card. */
  readonly card: AgentCard;
  /** The card `GetExtendedAgentCard` answers authenticated callers with. */
  readonly extendedCard?: AgentCard;
  /** Where tasks live (default: a bounded `MemoryStore`). */
  readonly store?: TaskStore;
  readonly interceptors?: readonly Interceptor[];
  /** Answer every SendMessage as if `returnImmediately` were set (A2A 0.3's default). */
  readonly returnImmediatelyByDefault?: boolean;
  /** How push notifications are delivered, the SSRF guard's allow list included (when the
   * card declares `capabilities.pushNotifications`). */
  readonly push?: PushOptions;
  /** Turn leases and the sweep that ends turns a stopped server left running. */
  readonly recovery?: RecoveryOptions;
}

/** A turn running on this server. */
export interface Running {
  /** Aborts the turn's `context.signal` (CancelTask, shutdown). */
  readonly abort: { abort(): void };
  readonly updater: TaskUpdater;
  readonly context: import("./executor.js").RequestContext;
}

/** The invalid-params error of a value the validator let through but the server refuses. */
export function invalid(path: string, expected: string): A2aError {
  return new A2aError("InvalidParams", `Invalid parameters at ${path}: expected ${expected}`).with("path", path).with("expected", expected);
}

/** The binding-neutral A2A server. */
export class A2aCore {
  readonly tasks: Tasks;
  /** The newest turn running on each task here (by `keyOf`), while any of its turns runs. */
  readonly running = new Map<string, Running>();
  /** How many turns run on each task here: a follow-up may start one beside another. */
  readonly turns = new Map<string, number>();
  /** Aborts every running turn at shutdown. */
  readonly shutdown = new AbortController();
  /** This server's id as the owner of turn leases. */
  readonly replica = crypto.randomUUID();
  /** The push worker, when the card declares push notifications. */
  readonly push: PushWorker | null;
  /** Lease renewal and the orphan sweep (started with the core). */
  readonly recovery: Recovery;

  constructor(
    readonly executor: AgentExecutor,
    readonly options: CoreOptions,
  ) {
    this.tasks = new Tasks(options.store ?? new MemoryStore());
    if (options.card.capabilities.pushNotifications === true) {
      const worker = new PushWorker(this.tasks.store, options.push);
      this.push = worker;
      this.tasks.push = true;
      this.tasks.afterCommit = () => worker.wake();
      worker.start();
    } else {
      this.push = null;
    }
    this.recovery = new Recovery(this, options.recovery);
    this.recovery.start();
  }

  get card(): AgentCard {
    return this.options.card;
  }

  /** Runs one request. @throws A2aError the refusal to answer */
  async handle(cx: CallContext, request: A2aRequest): Promise<Answer> {
    const interceptors = this.options.interceptors;
    if (interceptors !== undefined) for (const interceptor of interceptors) interceptor(cx, request);
    switch (request.operation) {
      case "SendMessage":
        return send(this, cx, request.params, false);
      case "SendStreamingMessage":
        this.requireStreaming();
        return send(this, cx, request.params, true);
      case "GetTask": {
        const r = request.params;
        if (r.historyLength !== undefined && r.historyLength < 0) throw invalid("$.params.historyLength", "a non-negative integer");
        const rec = await this.tasks.read(this.key(cx, r.id));
        return value(view(rec.task, r.historyLength));
      }
      case "ListTasks":
        return this.listTasks(cx, request.params);
      case "CancelTask":
        return value(await this.cancel(cx, request.params.id));
      case "SubscribeToTask":
        this.requireStreaming();
        return this.subscribe(cx, request.params.id);
      case "CreateTaskPushNotificationConfig":
        return value(await this.createPush(cx, request.params));
      case "GetTaskPushNotificationConfig": {
        this.requirePush();
        const r = request.params;
        const key = await this.existing(cx, r.taskId);
        const rec = await this.tasks.store.getPushConfig(key, r.id).catch((e: unknown) => Promise.reject(storeFailure(e)));
        if (rec === null) {
          throw new A2aError("TaskNotFound", `push notification config ${r.id} not found for task ${r.taskId}`).with("taskId", r.taskId).with("configId", r.id);
        }
        return value(rec.config);
      }
      case "ListTaskPushNotificationConfigs": {
        this.requirePush();
        const r = request.params;
        const key = await this.existing(cx, r.taskId);
        const size = r.pageSize ?? 0;
        if (size < 0 || size > 100) throw invalid("$.params.pageSize", "an integer from 0 to 100 (0: the default)");
        const limit = size === 0 ? 100 : size;
        const recs = await this.tasks.store.listPushConfigs(key, r.pageToken ? r.pageToken : null, limit + 1);
        const configs = recs.slice(0, limit).map((c) => c.config);
        const more = recs.length > limit;
        return value({ configs, nextPageToken: more ? (configs[configs.length - 1]?.id ?? "") : "" });
      }
      case "DeleteTaskPushNotificationConfig": {
        this.requirePush();
        const key = await this.existing(cx, request.params.taskId);
        await this.tasks.store.deletePushConfig(key, request.params.id);
        return value({});
      }
      case "GetExtendedAgentCard": {
        if (this.card.capabilities.extendedAgentCard !== true) throw new A2aError("UnsupportedOperation", "this agent declares no extended agent card");
        if (cx.principal === null) throw new A2aError("Unauthenticated", "the extended agent card requires authentication");
        if (this.options.extendedCard === undefined) throw new A2aError("ExtendedAgentCardNotConfigured");
        return value(this.options.extendedCard);
      }
    }
  }

  /** The key of task `id` for this call. */
  key(cx: CallContext, id: string): TaskKey {
    return { tenant: cx.tenant, id };
  }

  requireStreaming(): void {
    if (this.card.capabilities.streaming !== true) throw new A2aError("UnsupportedOperation", "this agent does not stream (capabilities.streaming is not true)");
  }

  requirePush(): void {
    if (this.card.capabilities.pushNotifications !== true) throw new A2aError("PushNotificationNotSupported");
  }

  /** Aborts every running turn and stops the push worker (queued deliveries stay queued). */
  close(): Promise<void> {
    this.shutdown.abort();
    for (const running of this.running.values()) running.abort.abort();
    this.recovery.stop();
    return this.push?.stop() ?? Promise.resolve();
  }

  private async listTasks(cx: CallContext, r: ListTasksRequest): Promise<Answer> {
    const pageSize = r.pageSize ?? 50;
    if (pageSize < 1 || pageSize > 100) throw invalid("$.params.pageSize", "an integer from 1 to 100");
    if (r.historyLength !== undefined && r.historyLength < 0) throw invalid("$.params.historyLength", "a non-negative integer");
    let after: [number, string] | undefined;
    if (r.pageToken) {
      const parsed = parsePageToken(r.pageToken);
      if (parsed === null) throw invalid("$.params.pageToken", "a token from a previous ListTasks answer");
      after = parsed;
    }
    const page = await this.tasks.store
      .listTasks(cx.tenant, {
        ...(r.contextId ? { contextId: r.contextId } : {}),
        ...(r.status !== undefined ? { state: r.status } : {}),
        ...(r.statusTimestampAfter !== undefined ? { statusAfterMs: Date.parse(r.statusTimestampAfter) } : {}),
        pageSize,
        ...(after !== undefined ? { after } : {}),
      })
      .catch((e: unknown) => Promise.reject(storeFailure(e)));
    const tasks = page.tasks.map((rec) => view(rec.task, r.historyLength, r.includeArtifacts ?? false));
    const next = page.next === null ? "" : pageToken(page.next[0], page.next[1]);
    return value({ tasks, nextPageToken: next, pageSize, totalSize: Math.min(page.totalSize, 2 ** 31 - 1) });
  }

  private async cancel(cx: CallContext, id: string) {
    const key = this.key(cx, id);
    const rec = await this.tasks.read(key);
    const notCancelable = (why: string): A2aError => new A2aError("TaskNotCancelable", why).with("taskId", id);
    if (isTerminal(rec.state)) throw notCancelable(`task ${id} is already ${rec.state}`);
    const running = this.running.get(keyOf(key));
    try {
      if (running !== undefined) {
        running.abort.abort();
        const executor = this.executor;
        if (executor.cancel !== undefined) await executor.cancel(running.context, running.updater);
        else await running.updater.cancel();
      } else {
        await this.tasks.apply(key, [{ kind: "status", status: { state: "TASK_STATE_CANCELED" } }], null, "clear");
      }
    } catch (e) {
      if (e instanceof A2aError && e.kind === "UnsupportedOperation") throw notCancelable(`task ${id} finished before it could be canceled`);
      throw e;
    }
    return (await this.tasks.read(key)).task;
  }

  private async subscribe(cx: CallContext, id: string): Promise<Answer> {
    const key = this.key(cx, id);
    if (cx.lastEventId !== null) {
      // A resume continues after the last event the client saw, even on an ended task.
      // It starts with the task, without an id: it is no place in the log.
      const rec = await this.tasks.read(key);
      const after = cx.lastEventId;
      return { kind: "stream", open: prefixed({ kind: "event", seq: null, event: { task: rec.task } }, (signal) => follow(this.tasks, key, after, signal)) };
    }
    // The last sequence number first, then the task: the snapshot is at least that recent.
    const last = await this.tasks.store.readEvents(key, Number.MAX_SAFE_INTEGER, 0).catch((e: unknown) => Promise.reject(storeFailure(e)));
    const rec = await this.tasks.read(key);
    if (isTerminal(rec.state)) {
      throw new A2aError("UnsupportedOperation", `task ${id} is in a terminal state (${rec.state}); there is nothing to subscribe to`).with("taskId", id);
    }
    const first: StreamOut = { kind: "event", seq: last.lastWritten, event: { task: rec.task } };
    return { kind: "stream", open: prefixed(first, (signal) => follow(this.tasks, key, last.lastWritten, signal)) };
  }

  private async existing(cx: CallContext, taskId: string): Promise<TaskKey> {
    const key = this.key(cx, taskId);
    await this.tasks.read(key);
    return key;
  }

  /** A push config checked (its URL by the SSRF guard) and completed (id, tenant). */
  async pushConfig(cx: CallContext, config: TaskPushNotificationConfig, urlPath: string): Promise<TaskPushNotificationConfig> {
    if (this.push === null) {
      if (!/^https?:\/\//.test(config.url)) throw invalid(urlPath, "an absolute http or https URL");
    } else {
      try {
        this.push.guard.checkUrl(config.url);
      } catch (e) {
        if (!(e instanceof GuardRefusal)) throw e;
        throw new A2aError("InvalidParams", `Invalid parameters at ${urlPath}: ${e.message}`).with("path", urlPath).with("expected", "a public http or https URL");
      }
    }
    return { ...config, id: config.id ? config.id : crypto.randomUUID(), ...(cx.tenant ? { tenant: cx.tenant } : {}) };
  }

  private async createPush(cx: CallContext, r: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    this.requirePush();
    if (!r.taskId) throw invalid("$.params.taskId", "a task id");
    const key = await this.existing(cx, r.taskId);
    const config = await this.pushConfig(cx, r, "$.params.url");
    await this.tasks.store.putPushConfig({ task: key, id: config.id as string, config }).catch((e: unknown) => Promise.reject(storeFailure(e)));
    return config;
  }
}

function value(v: unknown): Answer {
  return { kind: "value", value: v as Operations[OperationName]["result"] };
}

/** The map key of a running turn. */
export function keyOf(key: TaskKey): string {
  return `${key.tenant.length}:${key.tenant}/${key.id}`;
}

/** A `ListTasks` page token: the `(status timestamp, id)` cursor, base64url so it is opaque. */
function pageToken(ts: number, id: string): string {
  return Buffer.from(`${ts}:${id}`, "utf8").toString("base64url");
}

function parsePageToken(token: string): [number, string] | null {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return null;
  const text = Buffer.from(token, "base64url").toString("utf8");
  const colon = text.indexOf(":");
  if (colon < 0 || !/^-?\d+$/.test(text.slice(0, colon))) return null;
  return [Number(text.slice(0, colon)), text.slice(colon + 1)];
}
