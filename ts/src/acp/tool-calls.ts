/**
 * A client-side store of tool calls that tolerates the sequences real agents send (the
 * twin of the Rust SDK's `tool_calls.rs`).
 *
 * The agent reports tool calls through `session/update`: a `tool_call` update creates
 * one and `tool_call_update` patches it. In ACP v1 a patch replaces every field it
 * carries, `null` clears a field, and an absent field stays as it was. Agents do not
 * always keep to that order: they update calls never announced, announce a call twice,
 * move a status backwards. `ToolCallStore` accepts all of it and keeps one
 * `ToolCallState` per (session id, tool call id), in first-seen order:
 *
 * - a `tool_call` for an unknown id creates the call (`created`);
 * - a `tool_call` for a known id merges into it: every field it carries replaces the
 *   old value (`repeated`, or `announced` when the call was known only from updates);
 * - a `tool_call_update` for a known id patches it (`updated`);
 * - a `tool_call_update` for an unknown id creates the call from what it carries, with
 *   an empty title until one is sent, and sets `createdByUpdate` (`created-from-update`).
 *
 * Status changes are applied as sent; `Change.statusRegressed` says one went backwards.
 * A permission request's `toolCall` is an update too (`applyToolCallUpdate`). ACP v1 has
 * no `cancelled` status: `markCancelled` flags the unfinished calls of a cancelled
 * session. The store grows with every new id: call `removeSession` when a session ends.
 */

import type { RawJson } from "../codec/values.js";
import type { SessionNotification, SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation, ToolCallUpdate } from "../generated/acp/v1.js";

/** What the client knows about one tool call. */
export class ToolCallState {
  /** Empty while the call is known only from updates that carried none. */
  title = "";
  name: string | null = null;
  kind = "other";
  status = "pending";
  content: ToolCallContent[] = [];
  locations: ToolCallLocation[] = [];
  /** Verbatim; a JSON `null` clears it. */
  rawInput: RawJson | null = null;
  rawOutput: RawJson | null = null;
  /** The `_meta` of the last message that carried one. */
  meta: RawJson | null = null;
  /** The first message seen for this id was a `tool_call_update`; stays set. */
  createdByUpdate = false;
  /** How many `tool_call` messages were applied (more than one is a repeat). */
  toolCalls = 0;
  /** How many `tool_call_update` messages were applied. */
  updates = 0;
  /** The client cancelled the turn while this call was unfinished (`markCancelled`). */
  cancelled = false;

  constructor(readonly toolCallId: string) {}

  get isFinished(): boolean {
    return this.status === "completed" || this.status === "failed";
  }

  /** @internal */
  upsert(call: ToolCall): void {
    this.toolCalls++;
    this.title = call.title;
    if (call.name !== undefined) this.name = call.name;
    if (call.kind !== undefined) this.kind = call.kind;
    if (call.status !== undefined) this.status = call.status;
    if (call.content !== undefined) this.content = [...call.content];
    if (call.locations !== undefined) this.locations = [...call.locations];
    this.rawInput = replaceRaw(this.rawInput, call.rawInput);
    this.rawOutput = replaceRaw(this.rawOutput, call.rawOutput);
    if (call._meta !== undefined) this.meta = call._meta;
  }

  /** @internal */
  patch(update: ToolCallUpdate): void {
    this.updates++;
    this.title = patchOr(this.title, update.title, "");
    if (update.name !== undefined) this.name = update.name;
    this.kind = patchOr(this.kind, update.kind, "other");
    this.status = patchOr(this.status, update.status, "pending");
    this.content = [...patchOr(this.content, update.content, [])];
    this.locations = [...patchOr(this.locations, update.locations, [])];
    this.rawInput = replaceRaw(this.rawInput, update.rawInput);
    this.rawOutput = replaceRaw(this.rawOutput, update.rawOutput);
    if (update._meta !== undefined) this.meta = update._meta;
  }
}

/** A value replaces, `null` resets to the default, absent keeps. */
function patchOr<T>(slot: T, value: T | null | undefined, fallback: T): T {
  if (value === undefined) return slot;
  return value === null ? fallback : value;
}

/** A raw value replaces; the JSON `null` clears. */
function replaceRaw(slot: RawJson | null, value: RawJson | undefined): RawJson | null {
  if (value === undefined) return slot;
  return value.text.trim() === "null" ? null : value;
}

/** What an applied message did. */
export type ChangeKind = "created" | "repeated" | "announced" | "updated" | "created-from-update";

const RANK: Record<string, number> = { pending: 0, in_progress: 1, completed: 2, failed: 2 };

/** The effect of one applied message, with the call's state after it. */
export class Change {
  /** The call's status after the message (the state object changes with later messages). */
  readonly status: string;

  constructor(
    readonly kind: ChangeKind,
    /** The status before the message (`null` when the call is new). */
    readonly previousStatus: string | null,
    readonly state: ToolCallState,
  ) {
    this.status = state.status;
  }

  /** Whether the call did not exist before (a UI adds a row). */
  get isNew(): boolean {
    return this.kind === "created" || this.kind === "created-from-update";
  }

  /** Whether the message broke the intended order (`tool_call` once, then updates). */
  get isOutOfOrder(): boolean {
    return this.kind === "repeated" || this.kind === "announced" || this.kind === "created-from-update";
  }

  /** Whether the status changed (a new call counts as changed). */
  get statusChanged(): boolean {
    return this.previousStatus !== this.status;
  }

  /** Whether the status moved backwards: to an earlier step of `pending → in_progress →
   * completed | failed`, or from one final status to the other. */
  get statusRegressed(): boolean {
    if (this.previousStatus === null) return false;
    const before = RANK[this.previousStatus] ?? 0;
    const after = RANK[this.status] ?? 0;
    return after < before || (before === 2 && this.previousStatus !== this.status);
  }
}

/** Tool calls keyed by (session id, tool call id), each session in first-seen order. */
export class ToolCallStore {
  // Maps keep insertion order: first-seen order comes for free.
  private readonly bySession = new Map<string, Map<string, ToolCallState>>();

  /** Applies a `session/update`; updates other than tool calls give `null`. */
  apply(notification: SessionNotification): Change | null {
    return this.applyUpdate(notification.sessionId, notification.update);
  }

  applyUpdate(sessionId: string, update: SessionUpdate): Change | null {
    if (!("sessionUpdate" in update)) return null; // an unknown variant
    if (update.sessionUpdate === "tool_call") return this.applyToolCall(sessionId, update);
    if (update.sessionUpdate === "tool_call_update") return this.applyToolCallUpdate(sessionId, update);
    return null;
  }

  /** Applies a `tool_call`: creates the call, or merges it into the known one. */
  applyToolCall(sessionId: string, call: ToolCall): Change {
    const [state, created] = this.entry(sessionId, call.toolCallId);
    const previous = created ? null : state.status;
    const kind: ChangeKind = created ? "created" : state.toolCalls === 0 ? "announced" : "repeated";
    state.upsert(call);
    return new Change(kind, previous, state);
  }

  /** Applies a `tool_call_update` (from `session/update`, or the `toolCall` of a
   * permission request): patches the known call, or creates one. */
  applyToolCallUpdate(sessionId: string, update: ToolCallUpdate): Change {
    const [state, created] = this.entry(sessionId, update.toolCallId);
    const previous = created ? null : state.status;
    if (created) state.createdByUpdate = true;
    state.patch(update);
    return new Change(created ? "created-from-update" : "updated", previous, state);
  }

  private entry(sessionId: string, toolCallId: string): [ToolCallState, boolean] {
    let calls = this.bySession.get(sessionId);
    if (calls === undefined) {
      calls = new Map();
      this.bySession.set(sessionId, calls);
    }
    const known = calls.get(toolCallId);
    if (known !== undefined) return [known, false];
    const state = new ToolCallState(toolCallId);
    calls.set(toolCallId, state);
    return [state, true];
  }

  get(sessionId: string, toolCallId: string): ToolCallState | undefined {
    return this.bySession.get(sessionId)?.get(toolCallId);
  }

  /** The calls of a session, in the order they were first seen. */
  calls(sessionId: string): ToolCallState[] {
    return [...(this.bySession.get(sessionId)?.values() ?? [])];
  }

  /** The ids of the sessions that have calls. */
  sessions(): string[] {
    return [...this.bySession.keys()];
  }

  /** Flags every unfinished call of the session as cancelled; returns how many were newly flagged. */
  markCancelled(sessionId: string): number {
    let marked = 0;
    for (const state of this.bySession.get(sessionId)?.values() ?? []) {
      if (!state.isFinished && !state.cancelled) {
        state.cancelled = true;
        marked++;
      }
    }
    return marked;
  }

  remove(sessionId: string, toolCallId: string): ToolCallState | undefined {
    const calls = this.bySession.get(sessionId);
    if (calls === undefined) return undefined;
    const state = calls.get(toolCallId);
    calls.delete(toolCallId);
    if (calls.size === 0) this.bySession.delete(sessionId);
    return state;
  }

  /** Forgets a session; returns its calls in first-seen order. */
  removeSession(sessionId: string): ToolCallState[] {
    const calls = this.calls(sessionId);
    this.bySession.delete(sessionId);
    return calls;
  }

  get size(): number {
    let n = 0;
    for (const calls of this.bySession.values()) n += calls.size;
    return n;
  }
}
