/**
 * What the generated rule code returns, and its one rendering.
 *
 * Each surface's roles module (`src/generated/acp/<surface>.roles.ts`) evaluates the
 * protocol rules of `rules/acp.toml` as code over typed values: `<handler>Rules`, one
 * `MethodChecks` per method, gathered in `CHECKS`. A check that fails returns a
 * `Refusal`, a value naming what was missing; this module turns it into the -32601 /
 * -32602 answer to an incoming request (`refusalError`) or into the local error of a
 * call this side refuses to send (`refusalFailure`). The wording lives here only.
 */

import { encodeString, RawJson } from "../codec/values.js";
import { ErrorCode, invalidParamsError, type ErrorObject } from "../jsonrpc/error.js";
import { CapabilityNotAdvertised, NotAnnounced, type AcpError } from "./errors.js";

/** The method needs a capability the handling side did not advertise (answered -32601). */
export interface CapabilityNotAdvertisedRefusal {
  readonly kind: "CapabilityNotAdvertised";
  /** Dotted, from the handling side's `initialize` message: `agentCapabilities.loadSession`. */
  readonly capability: string;
  /** `advertised`: `true` or an object was needed; `non-empty`: a list with an item. */
  readonly test: "advertised" | "non-empty";
}

/** A params member chose a capability the handling side did not advertise (-32602 at
 * `$.params.<member>`): an elicitation `mode`. */
export interface ChoiceNotAdvertisedRefusal {
  readonly kind: "ChoiceNotAdvertised";
  readonly member: string;
  /** The member's value, e.g. `url`. */
  readonly value: string;
  readonly capability: string;
}

/** An item of a params list is of a kind the handling side did not advertise (-32602 at the item). */
export interface ValueNotAdvertisedRefusal {
  readonly kind: "ValueNotAdvertised";
  /** The item's JSON path, e.g. `$.params.prompt[2]`. */
  readonly path: string;
  /** Its tag (`""` for the variant without one). */
  readonly tag: string;
  /** The capability it needs, dotted; `null` for a kind the schema does not list. */
  readonly capability: string | null;
  /** The kinds the handling side accepts. */
  readonly accepted: readonly string[];
}

/** The answer that opened the session did not announce the member the request needs
 * (-32602 at `$.params.sessionId`). */
export interface NotAnnouncedRefusal {
  readonly kind: "NotAnnounced";
  readonly member: string;
  readonly session: string;
}

export type Refusal = CapabilityNotAdvertisedRefusal | ChoiceNotAdvertisedRefusal | ValueNotAdvertisedRefusal | NotAnnouncedRefusal;

/** Both sides' decoded `initialize` messages, as the runtime holds them. */
export interface HandshakeView {
  readonly client: unknown;
  readonly agent: unknown;
}

/**
 * One method's rules as generated code (`<handler>Rules` in a roles module). `P` and `R`
 * are its params and result types, `H` the surface's `Handshake`. Members a method has
 * no rule for are absent.
 */
export interface MethodChecks<P = unknown, R = unknown, H = HandshakeView> {
  /** The session the message names (its `sessionId`). */
  session?(params: P): string;
  /** The session a successful answer created (the result's `sessionId`). */
  created?(result: R): string;
  /** The capability gate and the value gates against the handling side's `initialize` message. */
  refusal?(params: P, handshake: H): Refusal | null;
  /** The kinds the value gates accept. */
  accepted?(handshake: H): string[];
  /** The session-gate members an opening answer announces (e.g. `modes`). */
  announced?(result: R): string[];
  /** The member the answer that opened the request's session must have announced. */
  readonly needs?: string;
}

function wanted(refusal: CapabilityNotAdvertisedRefusal | ChoiceNotAdvertisedRefusal): string {
  const test = refusal.kind === "CapabilityNotAdvertised" ? refusal.test : "advertised";
  return test === "advertised" ? `\`${refusal.capability}\`` : `a non-empty \`${refusal.capability}\``;
}

/** The answer to an incoming `method` request that `refusal` turns away. */
export function refusalError(method: string, refusal: Refusal): ErrorObject {
  switch (refusal.kind) {
    case "CapabilityNotAdvertised": {
      const data = `{"method":${encodeString(method)},"capability":${encodeString(refusal.capability)}}`;
      const message = `method not found: \`${method}\` needs ${wanted(refusal)}, which this side did not advertise`;
      return { code: ErrorCode.METHOD_NOT_FOUND, message, data: new RawJson(data) };
    }
    case "ChoiceNotAdvertised": {
      const { member, value } = refusal;
      const error = invalidParamsError(`$.params.${member}`, `a ${member} this side advertised`, value);
      error.message = `invalid params: ${member} \`${value}\` needs ${wanted(refusal)}, which this side did not advertise`;
      return error;
    }
    case "ValueNotAdvertised": {
      const shown = refusal.tag === "" ? "(untagged)" : refusal.tag;
      const expected = `one of the advertised kinds (${refusal.accepted.join(", ")})`;
      const error = invalidParamsError(refusal.path, expected, shown);
      const reason =
        refusal.capability !== null
          ? `\`${shown}\` needs \`${refusal.capability}\`, which this side did not advertise`
          : `\`${shown}\` is not a kind this side can have advertised`;
      error.message = `invalid params: ${refusal.path}: ${reason}`;
      return error;
    }
    case "NotAnnounced": {
      const { member, session } = refusal;
      const error = invalidParamsError("$.params.sessionId", `a session whose opening answer announced \`${member}\``, session);
      error.message = `invalid params: \`${method}\` needs \`${member}\`, which the answer that opened session \`${session}\` did not announce`;
      return error;
    }
  }
}

/** The local error of an outgoing `method` call that `refusal` stops before it is sent;
 * `null` for an item of a kind the schema does not list (the params' validation says so). */
export function refusalFailure(method: string, refusal: Refusal): AcpError | null {
  switch (refusal.kind) {
    case "CapabilityNotAdvertised":
    case "ChoiceNotAdvertised":
      return new CapabilityNotAdvertised(method, refusal.capability);
    case "ValueNotAdvertised":
      return refusal.capability === null ? null : new CapabilityNotAdvertised(method, refusal.capability);
    case "NotAnnounced":
      return new NotAnnounced(method, refusal.session, refusal.member);
  }
}
