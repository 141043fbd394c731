/**
 * The shapes of the generated method table and protocol-rule rows.
 *
 * Each generated surface module (`agentproto/acp/v1`, ...) holds `METHODS`, one
 * `MethodInfo` per method with its rules (capability `Gate`, `ValueGate`s,
 * `SessionRule`, `SessionGate`, baseline handler, `null` result), and `RULES`, the
 * surface's lifecycle method names and where each side's capabilities sit. They come from `rules/acp.toml`
 * through the code generator's model; nothing here is written per method.
 *
 * The rows are a data view of the rules (for tools and documentation). The runtime does
 * not interpret the gates' paths or tags: it runs the same rules as generated code over
 * typed values (`CHECKS` of each roles module, see `refusal.ts`).
 */

/** Which `initialize` message a gate reads: the client's params or the agent's result. */
export type InitMessage = "initialize.params" | "initialize.result";

/** A capability the handling side must have advertised before the request may be sent.
 * `path` walks the handling side's `initialize` message; a segment written `{name}`
 * stands for the value of the request's top-level `name` member. */
export interface Gate {
  readonly where: InitMessage;
  readonly path: readonly string[];
  /** `advertised`: `true` or an object; `non-empty`: a list with an item. */
  readonly test: "advertised" | "non-empty";
  /** The answer to a request that arrives anyway: -32601, or -32602 at the member that chose the capability. */
  readonly refusal: number;
}

/** Items of a params list that need a capability per variant (prompt content blocks,
 * MCP server kinds). A tag in `baseline` is always allowed, one in `gated` needs the
 * capability at its path, any other is refused; `""` names the variant without a tag. */
export interface ValueGate {
  readonly member: string;
  readonly union: string;
  readonly tag: string;
  readonly where: InitMessage;
  readonly baseline: readonly string[];
  readonly gated: { readonly [tag: string]: readonly string[] };
}

/** How a successful call changes the sessions a connection knows. */
export interface SessionRule {
  /** `created`: by the result's `sessionId`; `opened`, `removed`: the params' `sessionId`. */
  readonly effect: "created" | "opened" | "removed" | null;
  /** The request may name a session this connection never saw. */
  readonly unseenOk: boolean;
}

/** A session-scoped request served only for a session whose opening answer announced
 * `member` (v1's `session/set_mode` needs `modes`): the latest answer to one of
 * `openedBy` for that session held an object there (absent and `null` announce
 * nothing). A request naming a session whose answer did not is refused -32602 at
 * `$.params.sessionId`; one naming a session this side saw no opening answer for is left
 * to the other checks. */
export interface SessionGate {
  readonly member: string;
  readonly openedBy: readonly string[];
}

/** One row of a surface's method table. */
export interface MethodInfo {
  /** The wire name (`session/prompt`). */
  readonly name: string;
  readonly kind: "request" | "notification";
  /** Who handles it: `agent`, `client`, `protocol` (either side) or `proxy`. */
  readonly side: string;
  /** The schema name of the params type. */
  readonly params: string;
  /** The schema name of the result type (requests only). */
  readonly result: string | null;
  readonly stability: "stable" | "unstable" | "draft";
  /** The handler's and typed call's name (`newSession`). */
  readonly handler: string;
  /** A baseline handler: every implementation of `side` must provide it. */
  readonly required: boolean;
  /** A `null` result reads as the (all-optional) result object. */
  readonly nullResult: boolean;
  readonly gate: Gate | null;
  readonly values: readonly ValueGate[];
  readonly session: SessionRule | null;
  /** What the answer that opened the named session must have announced. */
  readonly sessionGate: SessionGate | null;
}

/** The lifecycle method names of a surface and where each side's `initialize` message
 * holds its capabilities. */
export interface SurfaceRules {
  readonly agentCapabilities: string;
  readonly clientCapabilities: string;
  readonly initialize: string;
  readonly cancelRequest: string;
  readonly sessionCancel: string;
  /** The request whose response ends a prompt turn (`null` in v2). */
  readonly promptTurn: string | null;
  /** Whether a request id may be `null` (v1, as JSON-RPC allows; not v2). */
  readonly nullRequestId: boolean;
}

/** Rule 10: a `null` result reads as `{}` for a method whose result may be empty
 * (`nullResult`); for any other method it stays `null`, a wrong type. */
export function readsAsEmpty(info: MethodInfo, text: string | null): boolean {
  return info.nullResult && text === "null";
}
