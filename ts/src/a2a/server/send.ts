/**
 * SendMessage and SendStreamingMessage, in named steps: the task the message goes to
 * (`target`), the turn's start (`openTurn`, `startTurn`), and the answer: a direct
 * message, the task when the turn ends (blocking) or at once (`returnImmediately`), or
 * the stream of the turn's events until the one that ends it.
 */

import { A2aError } from "../errors.js";
import type { Message, SendMessageRequest, Task } from "../../generated/a2a/v1.js";
import { keyOf, type A2aCore, type Answer, type CallContext, type Running } from "./core.js";
import { TaskUpdater, type RequestContext } from "./executor.js";
import { newUuid } from "./ids.js";
import { isTerminal, type PushConfigRecord, type TaskKey } from "./store.js";
import { follow, prefixed, single } from "./stream.js";
import { eventEndsTurn, now, storeFailure, terminalError, taskNotFound, view, type Known } from "./tasks.js";

interface Target {
  readonly key: TaskKey;
  readonly contextId: string;
  /** The task before this message, when the message continues one. */
  readonly existing: Known | null;
}

const NO_CONFIGURATION: NonNullable<SendMessageRequest["configuration"]> = {};
const NO_PUSH: readonly PushConfigRecord[] = [];

/** One send, the steps in order. */
export async function send(core: A2aCore, cx: CallContext, req: SendMessageRequest, streaming: boolean): Promise<Answer> {
  const config = req.configuration ?? NO_CONFIGURATION;
  const target = req.message.taskId ? await findTarget(core, cx, req.message) : newTarget(core, cx, req.message);
  const message = withIds(req.message, target.key.id, target.contextId);
  const push = config.taskPushNotificationConfig === undefined ? null : await inlinePush(core, cx, config.taskPushNotificationConfig, target.key.id);
  const pushRecord = push === null ? NO_PUSH : [{ task: target.key, id: push.id as string, config: push }];
  // An existing task gets the config now; a new one with its creation (so that its first
  // events are pushed too).
  if (target.existing !== null && push !== null) await core.tasks.store.putPushConfig(pushRecord[0] as PushConfigRecord).catch((e: unknown) => Promise.reject(storeFailure(e)));
  const [updater, before] = target.existing === null ? openNew(core, target, message, pushRecord) : await openExisting(core, target, message);
  startTurn(core, cx, target, message, req, updater);
  const first = await updater.first.promise;
  if (first.kind === "failed") throw first.error;
  const history = config.historyLength;
  if (streaming) {
    if (first.kind === "message") return { kind: "stream", open: single({ kind: "event", seq: null, event: { message: first.message } }) };
    const start = before === null ? null : ({ kind: "event", seq: null, event: { task: view(before, history) } } as const);
    return { kind: "stream", open: prefixed(start, (signal) => follow(core.tasks, target.key, first.seq - 1, signal, eventEndsTurn)) };
  }
  if (first.kind === "message") return { kind: "value", value: { message: first.message } };
  const blocking = !(config.returnImmediately === true || core.options.returnImmediatelyByDefault === true);
  if (blocking) {
    // The executor says when the turn ends, with the task as it left it; the executor's
    // return counts too (then `null`, and the task is read back).
    const ended = await updater.turnEnd.promise;
    if (ended !== null) return { kind: "value", value: { task: view(ended, history) } };
  }
  const rec = await core.tasks.read(target.key);
  return { kind: "value", value: { task: view(rec.task, history) } };
}

/** The message as the task keeps it: the caller's, with the task's and context's ids.
 * Built member by member in the order `{ ...message, taskId, contextId }` gives: V8 gives
 * each object spread from a small one a hidden class of its own, kept as long as the task. */
function withIds(m: Message, taskId: string, contextId: string): Message {
  // Most messages name neither (nor anything else): one literal, its members in the object.
  let plain = true;
  for (const k in m) {
    if (k !== "messageId" && k !== "role" && k !== "parts") {
      plain = false;
      break;
    }
  }
  if (plain) return { messageId: m.messageId, role: m.role, parts: m.parts, taskId, contextId };
  const out = { messageId: m.messageId } as Message;
  if ("contextId" in m) out.contextId = contextId;
  if ("taskId" in m) out.taskId = taskId;
  out.role = m.role;
  out.parts = m.parts;
  if ("metadata" in m) out.metadata = m.metadata;
  if ("extensions" in m) out.extensions = m.extensions;
  if ("referenceTaskIds" in m) out.referenceTaskIds = m.referenceTaskIds;
  for (const k in m) if (!KNOWN_MESSAGE_MEMBERS.has(k)) (out as unknown as Record<string, unknown>)[k] = (m as unknown as Record<string, unknown>)[k];
  if (!("taskId" in m)) out.taskId = taskId;
  if (!("contextId" in m)) out.contextId = contextId;
  return out;
}

const KNOWN_MESSAGE_MEMBERS = new Set(["messageId", "contextId", "taskId", "role", "parts", "metadata", "extensions", "referenceTaskIds"]);

/** New task and context ids for a message that names no task. */
function newTarget(core: A2aCore, cx: CallContext, message: Message): Target {
  return { key: core.key(cx, newUuid()), contextId: message.contextId ? message.contextId : newUuid(), existing: null };
}

/** The existing task a message names (live, in the message's context). A task whose turn
 * is still running takes the message too, as the Rust server does: it is recorded in the
 * history and starts a turn of its own beside the running one (their commits are ordered
 * by the task's version). */
async function findTarget(core: A2aCore, cx: CallContext, message: Message): Promise<Target> {
  const taskId = message.taskId as string;
  const key = core.key(cx, taskId);
  const rec = await core.tasks.store.getTask(key).catch((e: unknown) => Promise.reject(storeFailure(e)));
  if (rec === null) throw taskNotFound(taskId);
  if (isTerminal(rec.state)) throw new A2aError("UnsupportedOperation", `task ${rec.key.id} is in a terminal state (${rec.state})`).with("taskId", rec.key.id);
  const contextId = rec.task.contextId ?? "";
  if (message.contextId && message.contextId !== contextId) {
    throw new A2aError("InvalidParams", `contextId ${JSON.stringify(message.contextId)} does not match task ${rec.key.id}'s context ${JSON.stringify(contextId)}`).with("path", "$.params.message.contextId");
  }
  return { key, contextId, existing: { task: rec.task, version: rec.version } };
}

/** The push config a send carries, checked, for this task. */
async function inlinePush(core: A2aCore, cx: CallContext, config: NonNullable<NonNullable<SendMessageRequest["configuration"]>["taskPushNotificationConfig"]>, taskId: string) {
  core.requirePush();
  return core.pushConfig(cx, { ...config, taskId }, "$.params.configuration.taskPushNotificationConfig.url");
}

/** A new task's turn: the task is created by the executor's first update. */
function openNew(core: A2aCore, target: Target, message: Message, configs: readonly PushConfigRecord[]): [TaskUpdater, null] {
  const task: Task = { id: target.key.id, contextId: target.contextId, status: { state: "TASK_STATE_SUBMITTED", timestamp: now() }, history: [message] };
  return [new TaskUpdater(core.tasks, target.key, target.contextId, { create: task, known: null, configs }, core.replica, core.recovery.leaseMs), null];
}

/** A follow-up's turn: the message recorded on the existing task, and the task as that left it. */
async function openExisting(core: A2aCore, target: Target, message: Message): Promise<[TaskUpdater, Task]> {
  const existing = target.existing as Known;
  if (isTerminal(existing.task.status.state)) throw terminalError(target.key.id);
  const [known] = await core.tasks.apply(target.key, [{ kind: "history", message }], existing);
  return [new TaskUpdater(core.tasks, target.key, target.contextId, { create: null, known }, core.replica, core.recovery.leaseMs), known.task];
}

/** The executor's run, registered as the task's running turn; when it is over (the task's
 * lease released), `updater.turnEnd` is resolved (with `null` if nothing ended the turn). */
function startTurn(core: A2aCore, cx: CallContext, target: Target, message: Message, req: SendMessageRequest, updater: TaskUpdater): void {
  const abort = new LazyAbort();
  if (core.shutdown.signal.aborted) abort.abort();
  const context = {
    message,
    task: target.existing?.task,
    taskId: target.key.id,
    contextId: target.contextId,
    tenant: cx.tenant,
    principal: cx.principal,
    metadata: req.metadata,
    text: () => textOf(message),
    [ABORT]: abort,
  } as unknown as RequestContext;
  // An own accessor, as in an object literal, but one getter for every context: a literal's
  // own getter makes each context a dictionary-mode object (about a microsecond to build).
  Object.defineProperty(context, "signal", SIGNAL);
  const k = keyOf(target.key);
  // CancelTask and shutdown reach the newest turn's entry: it aborts the turns it joined too.
  const beside = core.running.get(k);
  const both =
    beside === undefined
      ? abort
      : {
          abort(): void {
            abort.abort();
            beside.abort.abort();
          },
        };
  const running: Running = { abort: both, updater, context };
  core.running.set(k, running);
  core.turns.set(k, (core.turns.get(k) ?? 0) + 1);
  const run = async (): Promise<void> => {
    try {
      await core.executor.execute(context, updater);
      await updater.flush();
      if (!updater.started) updater.first.resolve({ kind: "failed", error: new A2aError("InvalidAgentResponse", "the agent finished without answering") });
    } catch (e) {
      const error = e instanceof A2aError ? e : new A2aError("Internal", e instanceof Error ? e.message : String(e));
      if (!updater.started) updater.first.resolve({ kind: "failed", error });
      else await updater.fail(updater.textMessage(`agent failed: ${error.message}`)).catch(() => undefined);
    } finally {
      // Another turn on the task still runs: the task stays registered (its lease renewed,
      // CancelTask reaching the newest turn) and keeps its lease.
      const left = (core.turns.get(k) ?? 1) - 1;
      if (left > 0) core.turns.set(k, left);
      else {
        core.turns.delete(k);
        core.running.delete(k);
        // A turn that ends with its task still SUBMITTED or WORKING leaves it for later
        // messages: not a lost turn, so its lease goes. At shutdown it stays, to expire:
        // the next start's sweep ends the turn the shutdown interrupted.
        if (!core.shutdown.signal.aborted) await core.tasks.store.releaseLease(target.key, core.replica).catch(() => false);
      }
      updater.turnEnd.resolve(null);
    }
  };
  void run();
}

/** Where a request context keeps its `LazyAbort`. */
const ABORT = Symbol("abort");

/** The `signal` member of every request context. */
const SIGNAL: PropertyDescriptor = {
  get(this: { [ABORT]: LazyAbort }): AbortSignal {
    return this[ABORT].signal;
  },
  enumerable: true,
  configurable: true,
};

/** An `AbortController` made on first use: most turns are neither canceled nor asked
 * for their signal. */
export class LazyAbort {
  private controller: AbortController | null = null;

  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  abort(): void {
    (this.controller ??= new AbortController()).abort();
  }
}

/** The text parts of a message, joined. */
export function textOf(message: Message): string {
  let out = "";
  for (const p of message.parts) if (p.text !== undefined) out += p.text;
  return out;
}
