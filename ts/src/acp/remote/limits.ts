/** The limits of a remote ACP server, and what they bound. */

/** How much one server holds.
 *
 * Memory per ACP connection is bounded by `maxQueuedBytes` twice (messages received and
 * not read yet by the connection; messages written and not sent yet, over all its
 * streams) plus the bodies being received (`maxBodyBytes` each) plus the connection's
 * own queues (`AcpOptions.connection`); per server, by `maxConnections` times that. A
 * connection over its outgoing bound stops its agent's sends (the agent's calls wait);
 * one over its incoming bound holds the POST or stops reading the WebSocket: nothing is
 * dropped. Every member is optional; times are in milliseconds. */
export interface ServerLimits {
  /** ACP connections at once; an `initialize` POST beyond it is refused 503, a WebSocket
   * upgrade 503 before the handshake. Default 1024. */
  maxConnections?: number;
  /** The largest POST body (refused 413 before it is buffered: by its `Content-Length`,
   * or as soon as a chunked body grows past it) and the largest WebSocket message (the
   * socket is closed with 1009, checked on each frame's header). Default 16 MiB. */
  maxBodyBytes?: number;
  /** Bytes one connection queues in each direction before it waits. Default 4 MiB. */
  maxQueuedBytes?: number;
  /** A Streamable HTTP connection with no stream open and no request for this long is
   * ended, as by DELETE. A WebSocket connection ends with its socket. Default 60 s. */
  idleTimeout?: number;
  /** Silence after which an SSE stream gets a comment line. Default 15 s. */
  keepaliveInterval?: number;
  /** How long the `initialize` POST waits for the agent's answer (then 504). Default 30 s. */
  initializeTimeout?: number;
  /** How long a connection's output may stay over its bound (a stream nobody reads, a
   * WebSocket peer that does not read) before the connection is ended. Default 60 s. */
  stallTimeout?: number;
  /** How long a client may take to send a request's headers (slow headers are cut off
   * with 408). Default 30 s. */
  headersTimeout?: number;
}

/** `ServerLimits` with every default filled in. */
export type ResolvedLimits = Required<ServerLimits>;

/** The limits with their defaults. */
export function resolveLimits(limits: ServerLimits = {}): ResolvedLimits {
  return {
    maxConnections: limits.maxConnections ?? 1024,
    maxBodyBytes: limits.maxBodyBytes ?? 16 * 1024 * 1024,
    maxQueuedBytes: limits.maxQueuedBytes ?? 4 * 1024 * 1024,
    idleTimeout: limits.idleTimeout ?? 60_000,
    keepaliveInterval: limits.keepaliveInterval ?? 15_000,
    initializeTimeout: limits.initializeTimeout ?? 30_000,
    stallTimeout: limits.stallTimeout ?? 60_000,
    headersTimeout: limits.headersTimeout ?? 30_000,
  };
}
