// `agentproto/sync`: the sync pipe channel. MessagePack `[type, name, payload]`
// tuples over a child's stdio, wire-compatible with the TypeScript 7 API server
// (`tsc --api` of npm `typescript@7.0.2` and `typescript@7.1.0-beta`) and with
// the Rust crate `agentproto-sync`; a synchronous client and server in pure JS
// (blocking reads and writes on file descriptors, no native addon, POSIX), a
// lazy reader of the binary source-file format `getSourceFile` returns (both
// servers' versions), and a typed layer over the methods the two servers name
// differently (`tsc.ts`).

export {
  AstError,
  type AstErrorDetail,
  type Format,
  FORMAT_V5,
  FORMAT_V9,
  FORMATS,
  KIND_NODE_LIST,
  type Kinds,
  MIN_HEADER_SIZE,
  Node,
  NODE_SIZE,
  NodeList,
  SourceFile,
  SyntaxKind,
} from "./ast.js";
export { type Callback, type ClientOptions, SyncClient } from "./client.js";
export {
  CallbackError,
  CallError,
  ChannelBrokenError,
  ChannelClosedError,
  ChannelIoError,
  ChildExitedError,
  EndedDuringCallError,
  type ExitStatus,
  HandlerError,
  JsonParamsError,
  JsonResultError,
  ProtocolError,
  type ProtocolErrorDetail,
  ServerError,
  SpawnError,
  SyncChannelError,
} from "./errors.js";
export {
  type ByteSink,
  type ByteSource,
  DEFAULT_LIMITS,
  encode,
  FdSink,
  FdSource,
  type Field,
  type Frame,
  FrameError,
  type FrameErrorDetail,
  FrameReader,
  FrameWriter,
  type Limits,
  MessageType,
  messageTypeName,
} from "./frame.js";
export { Killer, running, type SharedKiller } from "./process.js";
export { type Handler, Peer, Server } from "./server.js";
export * as tsc from "./tsc.js";
