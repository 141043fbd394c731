/**
 * SendMessage and SendStreamingMessage, in named steps: the task the message goes to
 * (`target`), the turn's start (`openTurn`, `startTurn`), and the answer: a direct
 * message, the task when the turn ends (blocking) or at once (`returnImmediately`), or
 * the stream of the turn's events until the one that ends it.
 */

import { A2aError } from "../errors.js";
import type { Message, SendMessageRequest, Task } from "../../generated/a2a/v1.js";
import { keyOf, prefixed, type A2aCore, type Answer, type CallContext } from "./core.js";
import { TaskUpdater, type RequestContext } from "./executor.js";
import { isTerminal, type PushConfigRecord, type TaskKey } from "./store.js";
import { follow } from "./stream.js";
import { eventEndsTurn, now, storeFailure, terminalError, taskNotFound, view, type Known } from "./tasks.js";

interface Target {
  readonly key: TaskKey;
  readonly contextId: string;
  /** The task before this message, when the message continues one. */
  readonly existing: Known | null;
}

/** One send, the steps in order. */
export async function send(core: A2aCore, cx: CallContext, req: SendMessageRequest, streaming: boolean): Promise<Answer> {
  const config = req.configuration ?? {};
  const target = await findTarget(core, cx, req.message);
  const message: Message = { ...req.message, taskId: target.key.id, contextId: target.contextId };
  const push = config.taskPushNotificationConfig === undefined ? null : await inlinePush(core, cx, config.taskPushNotificationConfig, target.key.id);
  const pushRecord = push === null ? [] : [{ task: target.key, id: push.id as string, config: push }];
  // An existing task gets the config now; a new one with its creation (so that its first
  // events are pushed too).
  if (target.existing !== null && push !== null) await core.tasks.store.putPushConfig(pushRecord[0] as PushConfigRecord).catch((e: unknown) => Promise.reject(storeFailure(e)));
  const [updater, before] = await openTurn(core, target, message, pushRecord);
  const done = startTurn(core, cx, target, message, req, updater);
  const first = await updater.first.promise;
  if (first.kind === "failed") throw first.error;
  const history = config.historyLength;
  if (streaming) {
    if (first.kind === "message") return { kind: "stream", open: prefixed({ kind: "event", seq: null, event: { message: first.message } }, async function* () {}) };
    const start = before === null ? null : ({ kind: "event", seq: null, event: { task: view(before, history) } } as const);
    return { kind: "stream", open: prefixed(start, (signal) => follow(core.tasks, target.key, first.seq - 1, signal, eventEndsTurn)) };
  }
  if (first.kind === "message") return { kind: "value", value: { message: first.message } };
  const blocking = !(config.returnImmediately === true || core.options.returnImmediatelyByDefault === true);
  if (blocking) {
    // The executor says when the turn ends, with the task as it left it; the executor's
    // return counts too (then the task is read back).
    const ended = await Promise.race([updater.turnEnd.promise, done.then(() => null)]);
    if (ended !== null) return { kind: "value", value: { task: view(ended, history) } };
  }
  const rec = await core.tasks.read(target.key);
  return { kind: "value", value: { task: view(rec.task, history) } };
}

/** The existing task a message names (live, in the message's context), or new task and
 * context ids. A task whose turn is still running takes the message too, as the Rust
 * server does: it is recorded in the history and starts a turn of its own beside the
 * running one (their commits are ordered by the task's version). */
async function findTarget(core: A2aCore, cx: CallContext, message: Message): Promise<Target> {
  if (!message.taskId) {
    return { key: core.key(cx, crypto.randomUUID()), contextId: message.contextId ? message.contextId : crypto.randomUUID(), existing: null };
  }
  const key = core.key(cx, message.taskId);
  const rec = await core.tasks.store.getTask(key).catch((e: unknown) => Promise.reject(storeFailure(e)));
  if (rec === null) throw taskNotFound(message.taskId);
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

/** What the turn starts from: a new task, created by the executor's first update, or the
 * follow-up message recorded on the existing one (and the task as that left it). */
async function openTurn(core: A2aCore, target: Target, message: Message, configs: readonly PushConfigRecord[]): Promise<[TaskUpdater, Task | null]> {
  if (target.existing === null) {
    const task: Task = { id: target.key.id, contextId: target.contextId, status: { state: "TASK_STATE_SUBMITTED", timestamp: now() }, history: [message] };
    return [new TaskUpdater(core.tasks, target.key, target.contextId, { create: task, known: null, configs }, core.replica, core.recovery.leaseMs), null];
  }
  if (isTerminal(target.existing.task.status.state)) throw terminalError(target.key.id);
  const [known] = await core.tasks.apply(target.key, [{ kind: "history", message }], target.existing);
  return [new TaskUpdater(core.tasks, target.key, target.contextId, { create: null, known }, core.replica, core.recovery.leaseMs), known.task];
}

/** The executor's run, registered as the task's running turn; resolves when it ends. */
function startTurn(core: A2aCore, cx: CallContext, target: Target, message: Message, req: SendMessageRequest, updater: TaskUpdater): Promise<void> {
  const abort = new LazyAbort();
  if (core.shutdown.signal.aborted) abort.abort();
  const context: RequestContext = {
    message,
    task: target.existing?.task,
    taskId: target.key.id,
    contextId: target.contextId,
    tenant: cx.tenant,
    principal: cx.principal,
    metadata: req.metadata,
    get signal() {
      return abort.signal;
    },
    text: () => textOf(message),
  };
  const k = keyOf(target.key);
  // CancelTask and shutdown reach the newest turn's entry: it aborts the turns it joined too.
  const beside = core.running.get(k);
  const both = {
    abort(): void {
      abort.abort();
      beside?.abort.abort();
    },
  };
  const running = { abort: beside === undefined ? abort : both, updater, context };
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
    }
  };
  return run();
}

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
