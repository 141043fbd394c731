/** What every ACP surface shares: the receive path, the surface codec, the shapes of
 * the method and rule tables, the role runtime (errors, options, contexts, spawned
 * agents), `FsRoots`, `ToolCallStore`, and the terminals of ACP v1 (`Terminals` for a
 * client, `TerminalHandle` for an agent) (`agentproto/acp`). A surface's own types, roles and receivers are
 * in `agentproto/acp/v1`, `agentproto/acp/v1-unstable`, `agentproto/acp/v2` and
 * `agentproto/acp/v2-unstable`. */

export {
  classify,
  invalidParams,
  Receiver,
  type CallFailed,
  type ExtMessage,
  type Finding,
  type Ignored,
  type Incoming,
  type IncomingError,
  type IncomingNotification,
  type IncomingRequest,
  type IncomingResponse,
  type Pending,
  type ReceiverOptions,
  type Reply,
} from "./receive.js";
export type { Gate, InitMessage, MethodInfo, SessionGate, SessionRule, SurfaceRules, ValueGate } from "./rules.js";
export { Surface, type SurfaceView } from "./surface.js";
export { ClientConnectionBase } from "./agent.js";
export { AgentConnectionBase } from "./client.js";
export { Context } from "./context.js";
export type { Negotiated, RoleSurface } from "./endpoint.js";
export {
  AcpError,
  Cancelled,
  CapabilityNotAdvertised,
  ConnectionFailed,
  InvalidHandlerResult,
  InvalidParams,
  InvalidResult,
  NotAnnounced,
  NotInitialized,
  PeerError,
  UnsupportedVersion,
} from "./errors.js";
export { FsError, FsRoots, RootError, sliceLines } from "./fs.js";
export {
  refusalError,
  refusalFailure,
  type CapabilityNotAdvertisedRefusal,
  type ChoiceNotAdvertisedRefusal,
  type HandshakeView,
  type MethodChecks,
  type NotAnnouncedRefusal,
  type Refusal,
  type ValueNotAdvertisedRefusal,
} from "./refusal.js";
export type { AcpEvent, AcpObserver, AcpOptions, HandlerFailure, OnError } from "./options.js";
export { AgentProcess, type SpawnOptions } from "./process.js";
export { Change, ToolCallState, ToolCallStore, type ChangeKind } from "./tool-calls.js";
export { TerminalHandle } from "./terminal-handle.js";
export { OutputBuffer } from "./terminal-output.js";
export {
  CWD_PATH,
  DEFAULT_MAX_OUTPUT_LIMIT,
  DEFAULT_OUTPUT_LIMIT,
  DRAIN_GRACE,
  Terminals,
  type TerminalHandlers,
  type TerminalsOptions,
} from "./terminals.js";
