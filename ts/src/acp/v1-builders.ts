/**
 * Builders for the content and updates an ACP v1 agent sends most: each returns a plain
 * value of the generated type, so it is checked like any other (`AcpOptions.strict`).
 * `text("hi")` is a text content block; `agentMessageChunk("hi")` the update that
 * streams it; `toolCall`, `toolCallUpdate`, `plan` and `resourceLink` fill in the
 * discriminating tags. Exported from `agentproto/acp/v1`.
 */

import { RawJson } from "../codec/values.js";
import type * as T from "../generated/acp/v1.js";

/** Content given as text (one text block) or as a block. */
export type ContentInput = string | T.ContentBlock;

/** A text content block. */
export function text(value: string, extra: Omit<T.TextContent, "text"> = {}): T.ContentBlock {
  return { type: "text", ...extra, text: value };
}

/** A resource link content block: `uri` and the `name` shown for it (the uri's last segment by default). */
export function resourceLink(uri: string, extra: Partial<Omit<T.ResourceLink, "uri">> = {}): T.ContentBlock {
  const name = extra.name ?? (uri.replace(/\/+$/, "").split("/").pop() || uri);
  return { type: "resource_link", ...extra, uri, name };
}

/** A content block from text or a block. */
export function content(value: ContentInput): T.ContentBlock {
  return typeof value === "string" ? text(value) : value;
}

/** A prompt's blocks from text, a block or a list of blocks. */
export function promptBlocks(value: ContentInput | readonly T.ContentBlock[]): T.ContentBlock[] {
  return Array.isArray(value) ? [...(value as readonly T.ContentBlock[])] : [content(value as ContentInput)];
}

type Chunk<K extends string> = { sessionUpdate: K } & T.ContentChunk;

/** A chunk of the agent's reply (`agent_message_chunk`). */
export function agentMessageChunk(value: ContentInput, extra: Omit<T.ContentChunk, "content"> = {}): Chunk<"agent_message_chunk"> {
  return { sessionUpdate: "agent_message_chunk", ...extra, content: content(value) };
}

/** A chunk of the user's message, as replayed by `session/load` (`user_message_chunk`). */
export function userMessageChunk(value: ContentInput, extra: Omit<T.ContentChunk, "content"> = {}): Chunk<"user_message_chunk"> {
  return { sessionUpdate: "user_message_chunk", ...extra, content: content(value) };
}

/** A chunk of the agent's reasoning (`agent_thought_chunk`). */
export function agentThoughtChunk(value: ContentInput, extra: Omit<T.ContentChunk, "content"> = {}): Chunk<"agent_thought_chunk"> {
  return { sessionUpdate: "agent_thought_chunk", ...extra, content: content(value) };
}

/** The members of a tool call a builder takes; `rawInput` and `rawOutput` may be any JSON-able value. */
type ToolFields<B> = Omit<B, "toolCallId" | "rawInput" | "rawOutput"> & { rawInput?: unknown; rawOutput?: unknown };

function rawMembers(fields: { rawInput?: unknown; rawOutput?: unknown }): { rawInput?: RawJson; rawOutput?: RawJson } {
  const out: { rawInput?: RawJson; rawOutput?: RawJson } = {};
  if (fields.rawInput !== undefined) out.rawInput = asRaw(fields.rawInput);
  if (fields.rawOutput !== undefined) out.rawOutput = asRaw(fields.rawOutput);
  return out;
}

function asRaw(value: unknown): RawJson {
  return value instanceof RawJson ? value : RawJson.from(value);
}

/** A new tool call (`tool_call`): its id, title, and optionally kind, status, content, locations, raw input. */
export function toolCall(toolCallId: string, title: string, fields: Omit<ToolFields<T.ToolCall>, "title"> = {}): { sessionUpdate: "tool_call" } & T.ToolCall {
  const { rawInput, rawOutput, ...rest } = fields;
  return { sessionUpdate: "tool_call", ...rest, ...rawMembers({ rawInput, rawOutput }), toolCallId, title };
}

/** A change to a tool call (`tool_call_update`): only the members given change. */
export function toolCallUpdate(toolCallId: string, fields: ToolFields<T.ToolCallUpdate> = {}): { sessionUpdate: "tool_call_update" } & T.ToolCallUpdate {
  const { rawInput, rawOutput, ...rest } = fields;
  return { sessionUpdate: "tool_call_update", ...rest, ...rawMembers({ rawInput, rawOutput }), toolCallId };
}

/** Tool call content that shows content blocks (`{type: "content"}`). */
export function toolContent(value: ContentInput): T.ToolCallContent {
  return { type: "content", content: content(value) };
}

/** A plan entry given as text (priority `medium`, status `pending`) or in full. */
export type PlanEntryInput = string | (Pick<T.PlanEntry, "content"> & Partial<T.PlanEntry>);

/** The agent's plan (`plan`), replacing the previous one whole. */
export function plan(entries: readonly PlanEntryInput[]): { sessionUpdate: "plan" } & T.Plan {
  return {
    sessionUpdate: "plan",
    entries: entries.map((e) => (typeof e === "string" ? { content: e, priority: "medium", status: "pending" } : { priority: "medium", status: "pending", ...e })),
  };
}
