/**
 * Reading the rule rows of the method table (`rules.ts`): whether a capability gate is
 * open, how it is described, the refusal it answers with, the first params item a
 * value gate refuses, and what a session's opening answer announces for the session
 * gates. They follow the Rust SDK's `rules.rs`, so every SDK answers the
 * same way. Capability and params arguments are parsed JSON.
 */

import { encodeString, RawJson } from "../codec/values.js";
import { ErrorCode, invalidParamsError, type ErrorObject } from "../jsonrpc/error.js";
import type { Gate, MethodInfo, SessionGate, ValueGate } from "./rules.js";

type Json = unknown;

function isObject(x: Json): x is Record<string, Json> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function paramText(params: Json, member: string): string | null {
  const value = isObject(params) ? params[member] : undefined;
  return typeof value === "string" ? value : null;
}

function chooser(segment: string): string | null {
  return segment.startsWith("{") && segment.endsWith("}") ? segment.slice(1, -1) : null;
}

function advertised(init: Json, path: readonly string[]): boolean {
  let node = init;
  for (const key of path) {
    if (!isObject(node) || !Object.prototype.hasOwnProperty.call(node, key)) return false;
    node = node[key];
  }
  return node === true || isObject(node);
}

/** Whether the capability is advertised in `init` (the handling side's `initialize`
 * message). A `{name}` member that is missing or not a string leaves the gate open:
 * the params are invalid anyway, and their validation says so. */
export function gateOpen(gate: Gate, init: Json, params: Json = null): boolean {
  let node = init;
  for (const segment of gate.path) {
    let key = segment;
    const member = chooser(segment);
    if (member !== null) {
      const chosen = paramText(params, member);
      if (chosen === null) return true;
      key = chosen;
    }
    if (!isObject(node) || !Object.prototype.hasOwnProperty.call(node, key)) return false;
    node = node[key];
  }
  if (gate.test === "non-empty") return Array.isArray(node) && node.length > 0;
  return node === true || isObject(node);
}

/** Whether a params member chooses the capability (a `{name}` segment). */
export function gateChooses(gate: Gate): boolean {
  return gate.path.some((s) => s.startsWith("{"));
}

/** The capability as a dotted path, e.g. `agentCapabilities.loadSession`. */
export function describeGate(gate: Gate, params: Json = null): string {
  return gate.path
    .map((segment) => {
      const member = chooser(segment);
      if (member === null) return segment;
      return paramText(params, member) ?? `<${member}>`;
    })
    .join(".");
}

/** The answer to a request that arrives although the capability was not advertised. */
export function refusalError(gate: Gate, method: string, params: Json = null): ErrorObject {
  const capability = describeGate(gate, params);
  const wanted = gate.test === "advertised" ? `\`${capability}\`` : `a non-empty \`${capability}\``;
  const member = gate.path.map(chooser).find((m) => m !== null) ?? null;
  if (member !== null && gate.refusal === ErrorCode.INVALID_PARAMS) {
    const value = paramText(params, member) ?? "";
    const error = invalidParamsError(`$.params.${member}`, `a ${member} this side advertised`, value);
    error.message = `invalid params: ${member} \`${value}\` needs ${wanted}, which this side did not advertise`;
    return error;
  }
  const data = `{"method":${encodeString(method)},"capability":${encodeString(capability)}}`;
  const message = `method not found: \`${method}\` needs ${wanted}, which this side did not advertise`;
  return { code: gate.refusal, message, data: new RawJson(data) };
}

/** An item a `ValueGate` refuses. */
export class Refused {
  constructor(
    /** Its JSON path, e.g. `$.params.prompt[2]`. */
    readonly path: string,
    /** Its tag (`""` when it has none). */
    readonly tag: string,
    /** The capability it needs, dotted; `null` for a tag the schema does not list. */
    readonly capability: string | null,
  ) {}

  get reason(): string {
    const shown = this.tag === "" ? "(untagged)" : this.tag;
    if (this.capability !== null) return `\`${shown}\` needs \`${this.capability}\`, which this side did not advertise`;
    return `\`${shown}\` is not a kind this side can have advertised`;
  }

  /** The -32602 answer, naming the item's path. */
  error(accepted: readonly string[]): ErrorObject {
    const expected = `one of the advertised kinds (${accepted.join(", ")})`;
    const error = invalidParamsError(this.path, expected, this.tag === "" ? "(untagged)" : this.tag);
    error.message = `invalid params: ${this.path}: ${this.reason}`;
    return error;
  }
}

/** The first item of the params list this gate refuses, given the handling side's `initialize` message. */
export function refusedBy(gate: ValueGate, init: Json, params: Json): Refused | null {
  const items = isObject(params) ? params[gate.member] : undefined;
  if (!Array.isArray(items)) return null;
  for (let index = 0; index < items.length; index++) {
    const item: Json = items[index];
    const raw = isObject(item) ? item[gate.tag] : undefined;
    const tag = typeof raw === "string" ? raw : "";
    if (gate.baseline.includes(tag)) continue;
    const path = Object.prototype.hasOwnProperty.call(gate.gated, tag) ? gate.gated[tag] : undefined;
    if (path !== undefined && advertised(init, path)) continue;
    return new Refused(`$.params.${gate.member}[${index}]`, tag, path === undefined ? null : path.join("."));
  }
  return null;
}

/** The tags this gate accepts given the handling side's `initialize` message. */
export function acceptedBy(gate: ValueGate, init: Json): string[] {
  return [...gate.baseline, ...Object.entries(gate.gated).filter(([, p]) => advertised(init, p)).map(([t]) => t)];
}

/** The first params item a value gate of `row` refuses. */
export function refusedValue(row: MethodInfo, init: Json, params: Json): Refused | null {
  for (const gate of row.values) {
    const refused = refusedBy(gate, init, params);
    if (refused !== null) return refused;
  }
  return null;
}

/** For each request that creates or opens a session, the members its answer may announce
 * (the session gates of `methods` that list it); rows of one side only. */
export function openingMembers(methods: Iterable<MethodInfo>): Map<string, string[]> {
  const members = new Map<string, string[]>();
  for (const row of methods) {
    const gate = row.sessionGate;
    if (gate === null) continue;
    for (const opener of gate.openedBy) {
      const listed = members.get(opener) ?? [];
      if (!listed.includes(gate.member)) listed.push(gate.member);
      members.set(opener, listed);
    }
  }
  return members;
}

/** Which of `members` an opening answer announces: those holding an object in `result`
 * (the answer, parsed). */
export function announcedBy(members: readonly string[], result: Json): Set<string> {
  return new Set(isObject(result) ? members.filter((m) => isObject(result[m])) : []);
}

/** The -32602 answer to `method` naming `session`, whose opening answer did not announce
 * the gate's member. */
export function sessionGateRefusal(gate: SessionGate, method: string, session: string): ErrorObject {
  const error = invalidParamsError("$.params.sessionId", `a session whose opening answer announced \`${gate.member}\``, session);
  error.message = `invalid params: \`${method}\` needs \`${gate.member}\`, which the answer that opened session \`${session}\` did not announce`;
  return error;
}
