/**
 * agentproto: a validating SDK for the Agent Client Protocol.
 *
 * This entry point holds what every surface shares; the generated types, method tables
 * and receivers of each ACP surface are in `agentproto/acp/v1` (stable),
 * `agentproto/acp/v1-unstable`, `agentproto/acp/v2` and `agentproto/acp/v2-unstable`.
 */

export * from "./acp/index.js";
export * from "./codec/index.js";
export * from "./jsonrpc/index.js";
