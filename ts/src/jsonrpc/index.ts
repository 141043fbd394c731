/** The JSON-RPC 2.0 core, protocol-agnostic: ids, error objects, the envelope, NDJSON
 * framing and the connection (`agentproto/jsonrpc`). */

export { ChildController, onAbort, settledBefore } from "./cancellation.js";
export { Connection } from "./connection.js";
export { encodeErrorObject, ErrorCode, errorWithPath, invalidParamsDecoded, invalidParamsError, validationError, type ErrorObject } from "./error.js";
export { DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, OVERSIZE_PREFIX, Oversize, scanPrefix, splitLines, type Frame, type Shape } from "./frame.js";
export { RequestContext, type Handler, type NotificationContext } from "./handler.js";
export { idJson, idKey, type RequestId } from "./id.js";
export {
  CallAborted,
  CallError,
  CallTimeout,
  ConnectionClosed,
  InvalidResponse,
  RequestError,
  requestCancelled,
  ResponseTooLarge,
  RpcError,
  TransportError,
} from "./local-error.js";
export { DEFAULT_PIPE_CAPACITY, duplex, pipe, PipeReader, PipeWriter, type End } from "./memory.js";
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
export {
  DEFAULT_CANCEL,
  logHandlerFailure,
  type CancelNotification,
  type ConnectionEvent,
  type ConnectionOptions,
  type HandlerFailure,
  type Observer,
  type OnError,
} from "./options.js";
export { Peer, type CallOptions, type ResultHook } from "./peer.js";
export { stdioStreams } from "./stdio.js";
export {
  fromNodeReadable,
  fromWebReadable,
  SinkClosed,
  toNodeWritable,
  toSink,
  toSource,
  toWebWritable,
  type ByteSink,
  type ByteSource,
  type Input,
  type Output,
} from "./transport.js";
