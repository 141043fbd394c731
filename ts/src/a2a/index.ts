/**
 * `agentproto/a2a`: A2A 1.0 for TypeScript, generated from the pinned `a2a.proto` — the
 * message types, their ProtoJSON validators and canonical encoders, the operation and
 * error tables — and the bindings' pure request and answer decoding (JSON-RPC and
 * HTTP+JSON), and the `fetch` client on them. No `node:` module: it runs in browsers; the
 * server is `agentproto/a2a/server`.
 */

export * from "../generated/a2a/v1.js";
export { DECODERS, ENCODERS, type TypeOf, type Types } from "../generated/a2a/v1.codec.js";
export {
  A2aError,
  AnswerFailure,
  DOMAIN,
  ERROR_INFO_TYPE,
  ERROR_KINDS,
  ERROR_ROWS,
  kindFromCode,
  kindFromHttpStatus,
  kindFromReason,
  peerKind,
  render,
  type ErrorInfo,
  type ErrorKind,
  type ErrorRow,
  type ErrorTable,
  type JsonRpcErrorObject,
  type PeerError,
  type RestErrorBody,
} from "./errors.js";
export { A2A_JSON, ANSWER_WRAPPING, checkDepth, checkVersion, contentTypeOk, MAX_REQUEST_DEPTH, type Binding, type Headers, type VersionOptions } from "./http.js";
export { decodeRequest, decodeResult, encodeRequest, encodeResult, isOperation } from "./operations.js";
export { decodeJsonRpcRequest, jsonRpcErrorBody, jsonRpcResultBody, type JsonRpcCall, type JsonRpcHttpRequest, type JsonRpcRefusal } from "./jsonrpc.js";
export { decodeRestRequest, findRoute, matchTemplate, restErrorBody, type RestCall, type RestHttpRequest, type RestOptions, type RestRefusal } from "./rest.js";
export { readJsonRpcAnswer, readRestAnswer, readRestStreamEvent, type Answer, type CallId } from "./answers.js";
export { SseReader, type SseEvent } from "./sse.js";
export { base64Decode, base64Encode, timestampText } from "./protojson.js";
export { A2aCallError, A2aClient, A2aTransportError, clientFromCard, resolveCard, restRequest, type CallOptions, type ClientBinding, type ClientOptions, type StreamEvent, type StreamOptions } from "./client.js";
