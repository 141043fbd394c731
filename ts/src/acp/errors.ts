/**
 * `AcpError`, how a typed call or notification failed: the classes are generated from the
 * `[[local_errors]]` table of rules/acp.toml (`generated/acp/errors.ts`), the same kinds,
 * texts and handler answers as every other SDK's. `InvalidHandlerResult` is a local bug of
 * this side's handler, not a failure of a call.
 */

import type { DecodeError } from "../codec/errors.js";

export {
  AcpError,
  Cancelled,
  CapabilityNotAdvertised,
  ConnectionFailed,
  InvalidParams,
  InvalidResult,
  NotAnnounced,
  NotInitialized,
  PeerError,
  UnsupportedVersion,
} from "../generated/acp/errors.js";

/** A handler returned a value its method's result type does not allow (a member
 * missing, a value of the wrong type, an unknown enum value). Not an `AcpError`: it is
 * a local bug, reported to the developer (`AcpOptions.onError`), while the peer gets
 * a plain -32603 without these details. */
export class InvalidHandlerResult extends Error {
  constructor(
    readonly method: string,
    /** Where in the result (`$.result...`) and what. */
    readonly error: DecodeError,
  ) {
    super(`the \`${method}\` handler returned an invalid result: ${error.detail} at ${error.path}`);
    this.name = "InvalidHandlerResult";
  }
}
