/**
 * agentproto: a fast, validating SDK for the Agent Client Protocol (ACP).
 *
 * This root entry point holds what a newcomer reaches for first: the stable surface as
 * `v1` (types, `Agent`/`Client` interfaces, `serveAgentStdio`, `spawnAgent`,
 * `connectPair`, the builders and `Sessions`), the local errors a call can fail with,
 * and the ready-made client helpers. Everything else lives on its own subpath:
 * `agentproto/acp/v1` (the same as `v1` here), `agentproto/acp/v1-unstable`,
 * `agentproto/acp/v2`, `agentproto/acp/v2-unstable`, `agentproto/acp/<surface>/codec`
 * (messages only, no connection), `agentproto/acp` (what every surface shares),
 * `agentproto/jsonrpc`, `agentproto/codec` and `agentproto/sync`.
 */

export * as v1 from "./acp/v1.js";
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
} from "./acp/errors.js";
export type { AcpEvent, AcpObserver, AcpOptions, HandlerFailure, OnError } from "./acp/options.js";
export { FsRoots } from "./acp/fs.js";
export { ToolCallStore } from "./acp/tool-calls.js";
export { TerminalHandle } from "./acp/terminal-handle.js";
export { Terminals } from "./acp/terminals.js";
export { RequestError, type ErrorObject } from "./jsonrpc/index.js";
export { DecodeError } from "./codec/errors.js";
export { DECODE_ERROR_KINDS, type DecodeErrorKind } from "./codec/kind.js";
export { VERSION } from "./version.js";
