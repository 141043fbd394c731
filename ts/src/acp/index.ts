/** What every ACP surface shares: the receive path, the surface codec and the shapes of
 * the method and rule tables (`agentproto/acp`). A surface's own types and receivers are
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
export type { Gate, InitMessage, MethodInfo, SessionRule, SurfaceRules, ValueGate } from "./rules.js";
export { Surface, type SurfaceView } from "./surface.js";
