/** The JSON-RPC 2.0 core, protocol-agnostic: ids, error objects, the envelope and NDJSON
 * framing (`agentproto/jsonrpc`). */

export { encodeErrorObject, ErrorCode, errorWithPath, invalidParamsError, validationError, type ErrorObject } from "./error.js";
export { DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, OVERSIZE_PREFIX, Oversize, scanPrefix, splitLines, type Frame, type Shape } from "./frame.js";
export { idJson, idKey, type RequestId } from "./id.js";
export {
  decodeMessage,
  encodeMessage,
  encodeNotification,
  encodeRequest,
  encodeResponse,
  EnvelopeError,
  type DecodeOptions,
  type EnvelopeErrorKind,
  type Message,
  type Notification,
  type Request,
  type Response,
} from "./message.js";
